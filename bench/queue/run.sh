#!/usr/bin/env bash
# The queue benchmark, end to end (bench/queue/README.md):
#
#   bench/queue/run.sh [BUILD_DIR] [-p PROGRAM] [-a "ARGS"] [-e RECORD_EVENTS] [-- BENCH-QUEUE OPTS]
#
# 1. builds bench/programs/PROGRAM.c (default graph) for the bench-only `mix` module spec
#    (bench/queue/modules/mix), by the by-hand flow of README: mnemo-specialize, clang-19 -flto;
# 2. runs it with MNEMO_BACKEND=mnemo-record, which records the first RECORD_EVENTS events (default
#    10 million) as they crossed the queue;
# 3. runs bench-queue on the recording (default: 100 million events a row) and prints its tables.
#
# ARGS default to "10000 29" for graph: a graph 20 times smaller than bench/run.sh's and 29 searches
# instead of 55, so the whole run (building the graph, the breadth-first searches, freeing it) fits
# in 9.9 million events and the recording holds every phase of the program in about the proportions
# of the full-size run.  Everything but bench-queue's tables goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../record.sh
source "$here/../record.sh"
root=$(cd "$here/../.." && pwd)
build=$root/build
program=graph
args=
events=10000000
while [ $# -gt 0 ]; do
	case $1 in
	-p) program=$2; shift 2 ;;
	-a) args=$2; shift 2 ;;
	-e) events=$2; shift 2 ;;
	-h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	-*) echo "bench/queue/run.sh: unknown option '$1'" >&2; exit 2 ;;
	*) build=$(cd "$1" && pwd); shift ;;
	esac
done
if [ -z "$args" ] && [ "$program" = graph ]; then args="10000 29"; fi
bin=$build/bin
lib=$build/lib/mnemo
for f in "$bin/bench-queue" "$bin/mnemo-record" "$bin/mnemo-specialize" "$lib/mnemo-pass.so"; do
	[ -e "$f" ] || { echo "bench/queue/run.sh: $f not found: build first (cmake --build" \
		"$build; bench-queue needs the Debian package libck-dev)" >&2; exit 2; }
done
src=$root/bench/programs/$program.c
[ -f "$src" ] || { echo "bench/queue/run.sh: no bench program $src" >&2; exit 2; }
work=$(mktemp -d /tmp/mnemo-bench-queue.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "== building $program for the mix spec" >&2
build_for_spec "$build" "$here/modules" mix "$src" "$work/$program.mix"

echo "== recording $program $args (first $events events)" >&2
# shellcheck disable=SC2086  # ARGS are words on purpose
record_run "$build" "$work/$program.mix" "$work/$program.rec" "$events" $args ||
	{ echo "bench/queue/run.sh: no recording made" >&2; exit 1; }

echo "== bench-queue (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
"$bin/bench-queue" "$work/$program.rec" "$@"
