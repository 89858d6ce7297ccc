#!/bin/sh
# Run every fuzz target: first the regression inputs of tests/fuzz/crashes/
# TARGET/ (each once: what once crashed must not), then SECONDS of fuzzing
# from a copy of tests/fuzz/corpus/TARGET and BUILD/fuzz-seeds/TARGET (the
# corpus in git is not grown by a run), FUZZ_JOBS targets at once (default:
# the number of cores). Prints one line per target: executions, corpus,
# outcome; exits 1 after any crash, leak or timeout, with the input
# libFuzzer saved under tests/fuzz/crashes/TARGET/.
# Usage: sh tests/fuzz/run.sh BUILD/fuzz SECONDS
set -u
BIN=$(cd "$1" && pwd) # each target runs in a scratch directory
SECONDS_EACH=$2
SRC=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
LSAN0=${LSAN_OPTIONS:-}
# targets fuzzed at once: one a core (each libFuzzer process is single
# threaded), so CI fuzzes 2 x longer in the same minutes on 2 cores
PAR=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
status=0

# leaks inside Debian's libraries, not ours: tests/fuzz/lsan-TARGET.supp
# (each with its reason)
lsan_for() {
	LSAN_OPTIONS=$LSAN0
	[ -f "$SRC/lsan-$1.supp" ] && LSAN_OPTIONS="suppressions=$SRC/lsan-$1.supp${LSAN0:+:$LSAN0}"
	export LSAN_OPTIONS
}

fuzz_one() { # TARGET SHORT: fuzz it, its exit status into $W/SHORT.rc
	lsan_for "$2"
	(cd "$W/run-$2" && "$1" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 "$W/corpus-$2" >"$W/$2.log" 2>&1)
	echo $? >"$W/$2.rc"
}

# what once crashed must not: every target's regression inputs, first
for t in "$BIN"/fuzz_*; do
	short=${t##*/fuzz_}
	lsan_for "$short"
	if [ -d "$SRC/crashes/$short" ] && [ -n "$(ls "$SRC/crashes/$short")" ]; then
		"$t" -runs=0 "$SRC/crashes/$short"/* >"$W/$short.regress" 2>&1 || {
			echo "fuzz: $short: a regression input fails again:" >&2
			tail -30 "$W/$short.regress" >&2
			exit 1
		}
	fi
done

running=0
for t in "$BIN"/fuzz_*; do
	short=${t##*/fuzz_}
	mkdir -p "$W/corpus-$short"
	cp "$SRC/corpus/$short"/* "$W/corpus-$short"/ 2>/dev/null
	# seeds the build made (the ELF target's binaries: BUILD/fuzz-seeds)
	cp "$BIN/../fuzz-seeds/$short"/* "$W/corpus-$short"/ 2>/dev/null
	mkdir -p "$W/run-$short" # its own: a crash file is this target's
	fuzz_one "$t" "$short" &
	running=$((running + 1))
	if [ "$running" -ge "$PAR" ]; then
		wait
		running=0
	fi
done
wait

for t in "$BIN"/fuzz_*; do
	short=${t##*/fuzz_}
	rc=$(cat "$W/$short.rc" 2>/dev/null || echo 1)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$W/$short.log" | tail -1)
	echo "fuzz: $short: ${runs:-?} executions in ${SECONDS_EACH} s, corpus $(ls "$W/corpus-$short" | wc -l) inputs, exit $rc"
	if [ "$rc" -ne 0 ]; then
		grep -A30 "ERROR\|runtime error\|deadly signal\|timeout" "$W/$short.log" | head -40 >&2
		mkdir -p "$SRC/crashes/$short"
		for f in "$W/run-$short"/crash-* "$W/run-$short"/leak-* "$W/run-$short"/timeout-* \
			"$W/run-$short"/oom-*; do
			[ -f "$f" ] && cp "$f" "$SRC/crashes/$short/" &&
				echo "fuzz: saved $SRC/crashes/$short/$(basename "$f")" >&2
		done
		status=1
	fi
done
exit $status
