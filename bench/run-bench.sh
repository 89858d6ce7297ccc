#!/bin/sh
# All of perfloop bench's side-by-side benchmarks (make bench).
set -eu
BUILD=$(dirname "${1:-build/perfloop}")
sh "$(dirname "$0")/overhead.sh" "$BUILD"
sh "$(dirname "$0")/trust.sh" "$BUILD" 20
sh "$(dirname "$0")/trust.sh" "$BUILD" 20 --precision 1
sh "$(dirname "$0")/profile.sh" "$BUILD"
sh "$(dirname "$0")/scan.sh" "$BUILD"
sh "$(dirname "$0")/scan-profile.sh" "$BUILD"
