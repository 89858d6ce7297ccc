#!/bin/sh
# The safety property of checkpoint/revert, on 1000 random repositories and
# changes (seeded; PERFLOOP_PROPERTY_SEED picks another seed).
. "$(dirname "$0")/lib.sh"
set -e
command -v git >/dev/null 2>&1 || skip "git is not installed"
python3 "$PERFLOOP_SRC/tests/cli/checkpoint_property.py" "$PERFLOOP" "$T" \
	"${PERFLOOP_PROPERTY_SEED:-20261202}" "${PERFLOOP_PROPERTY_CASES:-1000}"
