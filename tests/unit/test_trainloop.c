/* Unit tests for trainloop: PyTorch's frames name the phases (the
 * outermost deciding), steps run from one batch wait to the next after a
 * backward or optimizer step, the last unfinished step is left out, and the
 * loop's thread is the one with data and compute. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "steps.h"
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

/* Steps whose fetch was never sampled (DataLoader workers: a queue's get
 * of well under a millisecond) are found from the loop's structure: the
 * optimizer's step ends one, and the loop's frame going back above the
 * update's line begins the next. A loop at lines 10 (fetch), 12 (forward),
 * 13 (backward, run 4 times in an inner loop at 11-13), 14 (update), 15
 * (a timer). */
static void test_steps_unseen_fetch(void **state)
{
	(void)state;
	struct pl_train t = {0};
	struct pl_train_where w = {.line = 10};
	assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_DATA, w, 0.001), 0);
	for (int s = 0; s < 6; s++) {
		/* the inner loop: forward, backward four times, the lines
		 * going back from 13 to 12 inside one step */
		for (int k = 0; k < 4; k++) {
			w = (struct pl_train_where){.update = 0, .line = 12};
			assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_FORWARD, w, 0.001), 0);
			w = (struct pl_train_where){.update = 0, .line = 13};
			assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_BACKWARD, w, 0.001), 0);
		}
		if (s % 2 == 0) { /* the update sampled: the next forward begins */
			w = (struct pl_train_where){.update = 1, .line = 14};
			assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_OPTIM, w, 0.001), 0);
		} else { /* not sampled, but the timer after it was */
			w = (struct pl_train_where){.update = 0, .line = 15};
			assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_OTHER, w, 0.001), 0);
		}
	}
	w = (struct pl_train_where){.update = 0, .line = 10};
	assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_DATA, w, 0.001), 0);
	const struct pl_train_thread *x = pl_train_loop_thread(&t);
	assert_non_null(x);
	assert_int_equal(x->nsteps, 6);
	assert_close(x->data[0], 0.001, 1e-12);
	for (size_t i = 1; i < 6; i++) /* the fetch unseen: no data time */
		assert_close(x->data[i], 0.0, 1e-12);
	for (size_t i = 0; i < 6; i++)
		assert_close(x->total[i], i == 0 ? 0.010 : 0.009, 1e-12);
	pl_train_release(&t);
	/* a zero_grad after the update (same step) begins nothing; the
	 * next forward does */
	w = (struct pl_train_where){.update = 0, .line = 10};
	assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_DATA, w, 0.001), 0);
	for (int s = 0; s < 3; s++) {
		w = (struct pl_train_where){.update = 0, .line = 12};
		assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_FORWARD, w, 0.001), 0);
		w = (struct pl_train_where){.update = 0, .line = 13};
		assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_BACKWARD, w, 0.001), 0);
		w = (struct pl_train_where){.update = 1, .line = 14};
		assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_OPTIM, w, 0.001), 0);
		w = (struct pl_train_where){.update = 0, .line = 15};
		assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_OPTIM, w, 0.001), 0);
	}
	w = (struct pl_train_where){.update = 0, .line = 10};
	assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_DATA, w, 0.001), 0);
	x = pl_train_loop_thread(&t);
	assert_non_null(x);
	assert_int_equal(x->nsteps, 3);
	pl_train_release(&t);
	/* neither the fetch nor the update sampled after the first step: a
	 * zero_grad at the top of the loop (line 11, above the forward at 12)
	 * begins each */
	w = (struct pl_train_where){.line = 10};
	assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_DATA, w, 0.001), 0);
	for (int s = 0; s < 5; s++) {
		w = (struct pl_train_where){.line = 11};
		assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_OPTIM, w, 0.001), 0);
		w = (struct pl_train_where){.line = 12};
		assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_FORWARD, w, 0.001), 0);
		w = (struct pl_train_where){.line = 13};
		assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_BACKWARD, w, 0.001), 0);
		if (s == 0) {
			w = (struct pl_train_where){.update = 1, .line = 14};
			assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_OPTIM, w, 0.001), 0);
		}
	}
	w = (struct pl_train_where){.line = 10};
	assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_DATA, w, 0.001), 0);
	x = pl_train_loop_thread(&t);
	assert_non_null(x);
	assert_int_equal(x->nsteps, 5);
	pl_train_release(&t);
	assert_true(pl_train_frame_update("SGD.step", T "optim/sgd.py"));
	assert_false(pl_train_frame_update("Optimizer.zero_grad", T "optim/optimizer.py"));
	assert_false(pl_train_frame_update("Module._call_impl", T "nn/modules/module.py"));
}

/* DataLoader workers: their loading time is counted apart and they are
 * never the loop; the iterator's kind is kept from the loop's fetches. */
static void test_workers(void **state)
{
	(void)state;
	struct pl_train t = {0};
	assert_int_equal(pl_train_frame_worker("_worker_loop", T "utils/data/_utils/worker.py"),
			 PL_TRAIN_WORKER_LOOP);
	assert_int_equal(pl_train_frame_worker("_MapDatasetFetcher.fetch",
					       T "utils/data/_utils/fetch.py"),
			 PL_TRAIN_WORKER_FETCH);
	assert_int_equal(pl_train_frame_loader("_MultiProcessingDataLoaderIter._next_data",
					       T "utils/data/dataloader.py"),
			 PL_TRAIN_LOADER_WORKERS);
	assert_int_equal(pl_train_frame_loader("_SingleProcessDataLoaderIter._next_data",
					       T "utils/data/dataloader.py"),
			 PL_TRAIN_LOADER_SINGLE);
	struct pl_train_where loading = {.worker = PL_TRAIN_WORKER_LOOP | PL_TRAIN_WORKER_FETCH},
			      waiting = {.worker = PL_TRAIN_WORKER_LOOP};
	for (int i = 0; i < 10; i++) {
		assert_int_equal(pl_train_add_at(&t, 7, 7, PL_TRAIN_OTHER, loading, 0.003), 0);
		assert_int_equal(pl_train_add_at(&t, 8, 8, PL_TRAIN_OTHER, loading, 0.002), 0);
		assert_int_equal(pl_train_add_at(&t, 8, 8, PL_TRAIN_OTHER, waiting, 0.001), 0);
	}
	struct pl_train_where fetch = {.loader = PL_TRAIN_LOADER_WORKERS};
	assert_int_equal(pl_train_add_at(&t, 1, 1, PL_TRAIN_DATA, fetch, 0.001), 0);
	assert_int_equal(t.nworkers, 2);
	assert_close(t.worker_load_s, 0.05, 1e-12);
	assert_int_equal(t.loader, PL_TRAIN_LOADER_WORKERS);
	assert_int_equal(t.n, 1); /* only the loop's thread */
	pl_train_release(&t);
	assert_int_equal(pl_steps_workers_needed(0.010, 0.004), 3);
	assert_int_equal(pl_steps_workers_needed(0.004, 0.004), 1);
	assert_int_equal(pl_steps_workers_needed(0.0, 0.004), 1);
}

/* The data-loading advice from what the profile measured of the loader:
 * no workers: how many keep up; workers too few: how many; enough yet
 * waiting: not "num_workers > 0" again. */
static const char *advice(struct pl_findings *f, int workers, double load_s)
{
	static const double data[] = {0.010, 0.010, 0.010, 0.010, 0.010, 0.010},
			    total[] = {0.014, 0.014, 0.014, 0.014, 0.014, 0.014};
	struct pl_steps s;
	memset(&s, 0, sizeof s);
	assert_int_equal(pl_steps_compute(&s, data, total, 6, 0), PL_OK);
	pl_steps_set_loader(&s, workers, load_s, 8);
	pl_findings_release(f);
	assert_int_equal(pl_steps_findings(&s, "train.py", f), 1);
	return f->v[0].suggested_action;
}

static void test_loader_advice(void **state)
{
	(void)state;
	struct pl_findings f = {0};
	/* the main process loads 10 ms a batch, the step computes 4 ms */
	const char *a = advice(&f, 0, 0);
	assert_non_null(strstr(a, "num_workers=3"));
	/* two workers, 60 ms of loading over 6 batches: 10 ms each: 3 */
	a = advice(&f, 2, 0.060);
	assert_non_null(strstr(a, "num_workers=3 keeps up"));
	assert_non_null(strstr(a, "already set"));
	/* four workers are enough, and still it waits */
	a = advice(&f, 4, 0.060);
	assert_null(strstr(a, "num_workers="));
	assert_non_null(strstr(a, "still the step waits"));
	/* workers in use but not followed */
	a = advice(&f, -1, 0);
	assert_non_null(strstr(a, "--subprocesses"));
	pl_findings_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_phases),
	    cmocka_unit_test(test_steps),
	    cmocka_unit_test(test_steps_unseen_fetch),
	    cmocka_unit_test(test_workers),
	    cmocka_unit_test(test_loader_advice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
