#!/usr/bin/env bash
# The reduction-maps benchmark, end to end (bench/maps/README.md):
#
#   bench/maps/run.sh [BUILD_DIR] [-p PROGRAM] [-a "ARGS"] [-e RECORD_EVENTS] [-- BENCH-MAPS OPTS]
#
# 1. builds bench/programs/PROGRAM.c (default graph) for the bench-only `deps` module spec
#    (bench/maps/modules/deps: loads and stores, site and address), by the by-hand flow of README:
#    mnemo-specialize, clang-19 -flto;
# 2. runs it with MNEMO_BACKEND=mnemo-record, which records the first RECORD_EVENTS loads and
#    stores (default 15 million) as they crossed the queue;
# 3. runs bench-maps on the recording: every row counts the same 10 million dependences (store
#    site, load site) found in it, and it prints one table.
#
# ARGS default to the program's own (graph: 200000 nodes, 55 searches; the first 15 million loads
# and stores, building the graph and the first searches, hold 11.9 million dependences).
# Everything but bench-maps' table goes to stderr.
# MNEMO_KEEP_RECORDING=FILE keeps a copy of the recording there (to rerun bench-maps on it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../record.sh
source "$here/../record.sh"
root=$(cd "$here/../.." && pwd)
build=$root/build
program=graph
args=
events=15000000
while [ $# -gt 0 ]; do
	case $1 in
	-p) program=$2; shift 2 ;;
	-a) args=$2; shift 2 ;;
	-e) events=$2; shift 2 ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	-*) echo "bench/maps/run.sh: unknown option '$1'" >&2; exit 2 ;;
	*) build=$(cd "$1" && pwd); shift ;;
	esac
done
bin=$build/bin
lib=$build/lib/mnemo
for f in "$bin/bench-maps" "$bin/mnemo-record" "$bin/mnemo-specialize" "$lib/mnemo-pass.so" \
	"$lib/libmnemo-rt.a"; do
	[ -e "$f" ] || { echo "bench/maps/run.sh: $f not found: build first (cmake --build" \
		"$build; bench-maps needs libglib2.0-dev, mnemo-record libck-dev)" >&2; exit 2; }
done
src=$root/bench/programs/$program.c
[ -f "$src" ] || { echo "bench/maps/run.sh: no bench program $src" >&2; exit 2; }
work=$(mktemp -d /tmp/mnemo-bench-maps.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "== building $program for the deps spec" >&2
build_for_spec "$build" "$here/modules" deps "$src" "$work/$program.deps"

echo "== recording $program $args (first $events loads and stores)" >&2
# shellcheck disable=SC2086  # ARGS are words on purpose
record_run "$build" "$work/$program.deps" "$work/$program.rec" "$events" $args ||
	{ echo "bench/maps/run.sh: no recording made" >&2; exit 1; }

echo "== bench-maps (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
[ -z "${MNEMO_KEEP_RECORDING:-}" ] || cp "$work/$program.rec" "$MNEMO_KEEP_RECORDING"
"$bin/bench-maps" "$work/$program.rec" "$@"
