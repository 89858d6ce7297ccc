/* Unit tests for trainloop: PyTorch's frames name the phases (the
 * outermost deciding), steps run from one batch wait to the next after a
 * backward or optimizer step, the last unfinished step is left out, and the
 * loop's thread is the one with data and compute. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "trainloop.h"

#define T "/usr/lib/python3/dist-packages/torch/"

static void test_frame_phases(void **state)
{
	(void)state;
	assert_int_equal(pl_train_frame_phase("_BaseDataLoaderIter.__next__",
					      T "utils/data/dataloader.py"),
			 PL_TRAIN_DATA);
	assert_int_equal(pl_train_frame_phase("Module._call_impl", T "nn/modules/module.py"),
			 PL_TRAIN_FORWARD);
	assert_int_equal(pl_train_frame_phase("Tensor.backward", T "_tensor.py"),
			 PL_TRAIN_BACKWARD);
	assert_int_equal(pl_train_frame_phase("backward", T "autograd/__init__.py"),
			 PL_TRAIN_BACKWARD);
	assert_int_equal(pl_train_frame_phase("SGD.step", T "optim/sgd.py"), PL_TRAIN_OPTIM);
	assert_int_equal(pl_train_frame_phase("Optimizer.zero_grad", T "optim/optimizer.py"),
			 PL_TRAIN_OPTIM);
	/* names alone are not enough: the user's own step() or a file that only
	 * ends like PyTorch's */
	assert_int_equal(pl_train_frame_phase("step", "/home/u/train.py"), PL_TRAIN_OTHER);
	assert_int_equal(pl_train_frame_phase("__next__", "/home/u/mytorch/utils/data/dataloader.py"),
			 PL_TRAIN_OTHER);
	assert_int_equal(pl_train_frame_phase(NULL, NULL), PL_TRAIN_OTHER);
	/* the outermost frame that names a phase decides: a forward run while
	 * loading a batch is loading */
	const char *names[] = {"<module>", "main", "_BaseDataLoaderIter.__next__",
			       "Module._call_impl"};
	const char *files[] = {"train.py", "train.py", T "utils/data/dataloader.py",
			       T "nn/modules/module.py"};
	assert_int_equal(pl_train_classify(names, files, 4), PL_TRAIN_DATA);
	assert_int_equal(pl_train_classify(names + 3, files + 3, 1), PL_TRAIN_FORWARD);
	assert_int_equal(pl_train_classify(names, files, 2), PL_TRAIN_OTHER);
}

static void test_steps(void **state)
{
	(void)state;
	struct pl_train t = {0};
	/* before the first batch: no step */
	assert_int_equal(pl_train_add(&t, 1, 1, PL_TRAIN_OTHER, 0.5), 0);
	/* three steps: 3 data, 2 forward, 1 backward, 1 optim, 1 other */
	static const enum pl_train_phase step[] = {
	    PL_TRAIN_DATA,     PL_TRAIN_DATA,  PL_TRAIN_DATA,  PL_TRAIN_FORWARD,
	    PL_TRAIN_FORWARD,  PL_TRAIN_BACKWARD, PL_TRAIN_OPTIM, PL_TRAIN_OTHER};
	for (int s = 0; s < 3; s++)
		for (size_t i = 0; i < sizeof(step) / sizeof(step[0]); i++)
			assert_int_equal(pl_train_add(&t, 1, 1, step[i], 0.01), 0);
	/* a fourth begins: the third ends */
	assert_int_equal(pl_train_add(&t, 1, 1, PL_TRAIN_DATA, 0.01), 0);
	/* another thread that only waits: not the loop */
	assert_int_equal(pl_train_add(&t, 1, 2, PL_TRAIN_DATA, 5.0), 0);
	const struct pl_train_thread *x = pl_train_loop_thread(&t);
	assert_non_null(x);
	assert_int_equal(x->tid, 1);
	assert_int_equal(x->nsteps, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_close(x->data[i], 0.03, 1e-12);
		assert_close(x->total[i], 0.08, 1e-12);
	}
	assert_close(x->t[PL_TRAIN_OTHER], 0.5 + 0.03, 1e-12);
	assert_close(x->t[PL_TRAIN_DATA], 0.10, 1e-12);
	pl_train_release(&t);
	/* data without compute is not a training loop */
	assert_int_equal(pl_train_add(&t, 1, 1, PL_TRAIN_DATA, 1.0), 0);
	assert_null(pl_train_loop_thread(&t));
	pl_train_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_phases),
	    cmocka_unit_test(test_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
