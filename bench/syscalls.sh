#!/bin/sh
# perfloop profile --syscalls beside strace -c, in one run: a small-read-
# heavy program (dd copying 200000 one-byte blocks to /dev/null) alone,
# under `perfloop profile --syscalls` (the whole job: tracepoints, reading
# them, the tables) and under `strace -c -f`; `perfloop bench` medians and
# the ratio of each to the program alone. Then the worst case of the
# stacks of the slowest calls: a program that leaves its CPU at every call
# (two processes passing a byte back and forth through pipes 20000 times),
# where each switch copies 8 KiB of stack.
# usage: sh bench/syscalls.sh BUILD [RUNS]
set -eu
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${2:-5}
PL=$BUILD/perfloop
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
head -c 200000 /dev/zero >in
DD="dd if=$W/in of=/dev/null bs=1 status=none"
"$PL" bench --quiet --runs "$RUNS" --batch 1 --contention keep -o b.json \
	"$DD" "$PL profile --syscalls --format none -- $DD" "strace -c -f -o /dev/null $DD" >/dev/null
report() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
base = d["benchmarks"][0]["stats"]["wall_s"]["p50"]
for b in d["benchmarks"]:
    m = b["stats"]["wall_s"]["p50"]
    print("  %-60.60s median %8.3f s  %6.2fx" % (b["command"], m, m / base))
PY
}
report b.json
cat >pingpong.c <<'C'
#include <unistd.h>
int main(void)
{
	int a[2], b[2];
	char c = 'x';
	if (pipe(a) || pipe(b))
		return 1;
	if (fork() == 0) {
		for (int i = 0; i < 20000; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (int i = 0; i < 20000; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	return 0;
}
C
cc -O2 -o pingpong pingpong.c
PP=$W/pingpong
"$PL" bench --quiet --runs "$RUNS" --batch 1 --contention keep -o p.json \
	"$PP" "$PL profile --syscalls --format none -- $PP" "strace -c -f -o /dev/null $PP" >/dev/null
report p.json
