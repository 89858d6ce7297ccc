#!/bin/sh
# The second half of t500's cases (see there).
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
n=${PERFLOOP_PROPERTY_CASES:-1000}
python3 "$PERFLOOP_SRC/tests/cli/checkpoint_property.py" "$PERFLOOP" "$T" \
	"${PERFLOOP_PROPERTY_SEED:-20261202}" "$n" $((n / 2))
