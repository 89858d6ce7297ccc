/* Every folder's door header (src/<folder>/<folder>_door.h), all in one
 * translation unit: each compiles on its own terms and no two folders
 * declare one name two ways. The layering itself is scripts/check-layers'
 * (tests/cli/t004-layers.sh). */
#include "testutil.h"

#include "util_door.h"
#include "os_door.h"
#include "profile_door.h"
#include "python_door.h"
#include "native_door.h"
#include "memory_door.h"
#include "syscalls_door.h"
#include "measure_door.h"
#include "scan_door.h"
#include "decide_door.h"
#include "report_door.h"
#include "loop_door.h"

/* one function of each folder, reached through its door */
static void test_doors_open(void **state)
{
	(void)state;
	assert_non_null(pl_severity_name(PL_SEV_HIGH));         /* profile */
	assert_null(pl_relpath_check("a/b.c", 0));              /* util */
	assert_non_null(pl_relpath_check("../x", 0));
	assert_true(pl_metric_is_algorithmic("data_reuse"));    /* decide */
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_doors_open)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
