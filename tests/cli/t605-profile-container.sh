#!/bin/sh
# perfloop profile reads a program whose files it cannot see by their path:
# Debian's python3 run in a private mount namespace, chrooted into a bind
# mount of / that exists only there (as in a container). /proc/PID/maps
# names /MNT/usr/bin/python3.11, which is an empty directory outside the
# namespace and inside the chroot alike: only /proc/PID/map_files opens
# it. (3.13+ would also be found by the scan for the debug offsets cookie,
# so this uses 3.11, which has none.) Needs root and unshare.
. "$PERFLOOP_SRC/tests/cli/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (mount namespaces, /proc/PID/map_files)"
command -v unshare >/dev/null || skip "no unshare"
py=/usr/bin/python3
"$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null || skip "no Debian CPython 3.11"
mnt=$T/mnt
mkdir -p "$mnt"
unshare --mount --propagation private sh -c "mount --rbind / '$mnt' && exec chroot '$mnt' $py -c '
def serve():
    while True: sum(range(100))
serve()'" 2>"$T/ns.err" &
ns=$!
victim=$(wait_mapped 'def serve' "$mnt/usr/bin/python3")
[ -n "$victim" ] || { kill $ns 2>/dev/null; skip "cannot start a program in a mount namespace: $(cat "$T/ns.err")"; }
[ ! -e "$mnt/usr/bin/python3" ] || fail "the namespace's mount is visible here: the test proves nothing"
run "$PERFLOOP" profile -p "$victim" -d 0.5 -r 500 --format folded -o ns
kill "$victim" 2>/dev/null || true
wait $ns 2>/dev/null || true
expect_rc 0
grep -q "CPython 3.11" out || fail "no version: $(cat out)"
grep -Eq '^<module> \(<string>:[0-9]+\);serve \(<string>:[0-9]+\) [0-9]+$' ns.folded ||
	fail "stacks: $(head -3 ns.folded)"
echo "read a program in another mount namespace"
