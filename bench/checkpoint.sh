#!/bin/sh
# checkpoint and revert on a large real tree: /usr/include, /usr/share/doc
# and Debian's python3 dist-packages copied into a repository (about 28k
# files, 300 MB), committed. Times a first checkpoint, a second one (the
# stat cache), and a revert of a three-path change; ROUNDS rounds, medians.
# Give several perfloop binaries to compare them (e.g. an older build).
#
# usage: bench/checkpoint.sh ROUNDS PERFLOOP [PERFLOOP...]
set -eu
ROUNDS=$1
shift
R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT
mkdir -p "$R/a" "$R/b"
cp -r /usr/include /usr/share/doc /usr/lib/python3/dist-packages "$R/a/" 2>/dev/null || true
cp -r /usr/include /usr/share/doc "$R/b/" 2>/dev/null || true
cd "$R"
git init -q
git -c user.email=b@b -c user.name=b add -A >/dev/null 2>&1
git -c user.email=b@b -c user.name=b commit -qm base
echo "$(git ls-files | wc -l) tracked files"
t() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
for pl in "$@"; do
	first="" again="" rev=""
	for r in $(seq "$ROUNDS"); do
		rm -rf .perfloop
		first="$first $(t "$pl" checkpoint)"
		again="$again $(t "$pl" checkpoint)"
		echo x >>a/include/stdio.h
		echo new >a/new.txt
		rm b/include/zlib.h
		rev="$rev $(t "$pl" revert)"
		rm -f a/new.txt
		git checkout -q -- . && git reset -q
	done
	med() { echo "$@" | tr ' ' '\n' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
	echo "$pl: checkpoint $(med $first) s, again $(med $again) s, revert $(med $rev) s (medians of $ROUNDS)"
done
