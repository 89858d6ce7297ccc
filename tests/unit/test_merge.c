/* Unit tests for merge and ranks: which frames are a collective's (the
 * profile-side straggler rule counts them), the --rank-filter lists, and
 * pl_prof_merge adding one profile into another under a root frame. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "merge.h"
#include "ranks.h"

static void test_comm_frames(void **state)
{
	(void)state;
	const char *yes[][2] = {
	    {"all_reduce", "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"},
	    {"barrier", "torch/distributed/distributed_c10d.py"},
	    {"MPI_Allreduce", ""},
	    {"PMPI_Barrier", ""},
	    {"ompi_coll_tuned_allreduce_intra_dec_fixed", ""},
	    {"opal_progress", ""},
	    {"gloo::allreduce(gloo::AllreduceOptions&)", ""},
	    {"c10d::ProcessGroupGloo::AsyncWork::wait(std::chrono::duration<long, std::ratio<1l, "
	     "1000l> >)",
	     ""},
	    {"ncclKernel_AllReduce_RING_LL_Sum_float", ""},
	    {"c10d::Reducer::finalize_backward()", ""},
	};
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		if (pl_merge_comm_frame(yes[i][0], yes[i][1]) != 1)
			fail_msg("not a collective: %s", yes[i][0]);
	const char *no[][2] = {
	    {"forward", "model.py"},	{"MPIR_something", ""}, /* not MPI's API */
	    {"compute", "app.c"},	{"c10d::ProcessGroupGloo::ProcessGroupGloo", ""},
	    {"reduce", "functools.py"},
	};
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		if (pl_merge_comm_frame(no[i][0], no[i][1]))
			fail_msg("taken for a collective: %s", no[i][0]);
	assert_false(pl_merge_comm_frame(NULL, NULL));
	/* joining and leaving the group: no step's wait */
	assert_int_equal(
	    pl_merge_comm_frame("init_process_group", "torch/distributed/distributed_c10d.py"), -1);
	assert_int_equal(pl_merge_comm_frame("MPI_Init", ""), -1);
	assert_int_equal(pl_merge_comm_frame("PMPI_Finalize", ""), -1);
}

static void test_rank_filter(void **state)
{
	(void)state;
	struct pl_error err = {{0}};
	assert_int_equal(pl_rank_in("--rank-filter", "0", 0, &err), 1);
	assert_int_equal(pl_rank_in("--rank-filter", "0", 1, &err), 0);
	assert_int_equal(pl_rank_in("--rank-filter", "0,3", 3, &err), 1);
	assert_int_equal(pl_rank_in("--rank-filter", "1-4,8", 4, &err), 1);
	assert_int_equal(pl_rank_in("--rank-filter", "1-4,8", 5, &err), 0);
	assert_int_equal(pl_rank_in("--rank-filter", "1-4,8", 8, &err), 1);
	const char *bad[] = {"",   ",",	   "1,", ",1", "a",	"1-", "4-1",
			     "-1", "1,,2", "1 ", " 1", "1-2-3", "+1"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (pl_rank_in("--rank-filter", bad[i], 1, &err) != PL_EINPUT)
			fail_msg("accepted '%s'", bad[i]);
	assert_non_null(strstr(err.msg, "option '--rank-filter'"));
}

static void test_prof_merge(void **state)
{
	(void)state;
	struct pl_prof a = {0}, b = {0};
	long m = pl_prof_frame(&a, "main", "a.py", 1, 1, 0),
	     f = pl_prof_frame(&a, "f", "a.py", 5, 5, 0);
	uint32_t s1[] = {(uint32_t)m, (uint32_t)f}, s2[] = {(uint32_t)m};
	assert_int_equal(pl_prof_add(&a, s1, 2, 7), 0);
	assert_int_equal(pl_prof_add(&a, s2, 1, 3), 0);
	assert_int_equal(pl_prof_merge(&b, &a, NULL), 0);
	assert_int_equal(pl_prof_merge(&b, &a, NULL), 0);
	assert_int_equal(b.samples, 20);
	assert_int_equal(b.nstacks, 2); /* the same stacks, summed */
	assert_int_equal(pl_prof_merge(&b, &a, "rank 1"), 0);
	assert_int_equal(b.samples, 30);
	assert_int_equal(b.nstacks, 4);
	size_t under = 0;
	for (size_t k = 0; k < b.nstacks; k++) {
		const struct pl_prof_frame *root = &b.frames[b.ids[b.stacks[k].off]];
		if (strcmp(root->name, "rank 1") == 0) {
			assert_true(root->synthetic);
			under += b.stacks[k].count;
		}
	}
	assert_int_equal(under, 10);
	pl_prof_release(&a);
	pl_prof_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_comm_frames),
	    cmocka_unit_test(test_rank_filter),
	    cmocka_unit_test(test_prof_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
