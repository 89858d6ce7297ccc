#!/bin/sh
# Each command's page under docs/ shows exactly its --help in "## Synopsis".
. "$(dirname "$0")/lib.sh"
set -e
for cmd in bench profile scan select verify report checkpoint revert baseline try status history system steps; do
	page=$PERFLOOP_SRC/docs/$cmd.md
	[ -f "$page" ] || fail "no $page"
	awk '/^## Synopsis/{s=1; next} s && /^```/{if (f) exit; f=1; next} s && f' "$page" >doc.txt
	"$PERFLOOP" "$cmd" --help >help.txt
	diff -u help.txt doc.txt || fail "docs/$cmd.md synopsis differs from 'perfloop $cmd --help'"
done
echo ok
