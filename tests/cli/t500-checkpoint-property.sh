#!/bin/sh
# The safety property of checkpoint/revert, on 1000 random repositories and
# changes (seeded; PERFLOOP_PROPERTY_SEED picks another seed): the first
# half of the cases here, the second in t500b, so that the two run side by
# side (one test of 1000 took 12 minutes of a CI run and once passed its
# 15-minute limit on a loaded machine).
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
n=${PERFLOOP_PROPERTY_CASES:-1000}
python3 "$PERFLOOP_SRC/tests/cli/checkpoint_property.py" "$PERFLOOP" "$T" \
	"${PERFLOOP_PROPERTY_SEED:-20261202}" $((n / 2)) 0
