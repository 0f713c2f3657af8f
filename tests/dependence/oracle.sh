#!/usr/bin/env bash
# The dependence module against its reference (oracle.c) on real event streams: every known-answer
# program (programs/*.c) and every bench program at a small input is built for the dependence
# module, run with mnemo-record in place of the backend (the whole stream is recorded), and the
# recording replayed by dep-oracle: plain, with --context, and with a small clock limit so that
# the clock resets of README happen; bench programs also with the plain map of MNEMO_DEP_TABLE.
# Bench inputs come from bench/programs/small_inputs.sh.
# Usage: oracle.sh BUILD_DIR RECORDER ORACLE TEST_PROGRAMS_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 recorder=$2 oracle=$3 tests=$4 bench=$5
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-dep-oracle.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset MNEMO_DEP_TABLE   # the reduction table, but where a run asks for the plain map

# Every bench program's small input (a bench program without one fails the test).
source "$bench/small_inputs.sh"

# record NAME SRC OPT ARGS...: builds and records; the recording is $work/NAME.rec.
record() {
	local name=$1 src=$2 opt=$3
	shift 3
	"$bin/mnemo-cc" -m dependence "$opt" -g -I"$(dirname "$src")" "$src" -o "$work/$name"
	MNEMO_BACKEND=$recorder MNEMO_RECORD_FILE=$work/$name.rec MNEMO_RECORD_EVENTS=1000000000 \
		MNEMO_OUTPUT=$work/$name.mnemo.yaml "$work/$name" "$@" >/dev/null ||
		fail "$name: exit status $?"
	[ -s "$work/$name.rec" ] || fail "$name: no recording made"
}

n=0
for src in "$tests"/*.c; do
	p=$(basename "$src" .c)
	record "$p" "$src" -O1
	"$oracle" "$work/$p.rec" || fail "$p"
	"$oracle" "$work/$p.rec" --context || fail "$p --context"
	"$oracle" "$work/$p.rec" --clock-limit 50 || fail "$p --clock-limit 50"
	rm -f "$work/$p.rec"
	n=$((n + 1))
done
for src in "$bench"/*.c; do
	p=$(basename "$src" .c)
	args=$(small_args "$p") || fail "bench program $p has no small input in bench/programs/small_inputs.sh: add one"
	# shellcheck disable=SC2086  # ARGS are words on purpose
	record "$p" "$src" -O2 $args
	"$oracle" "$work/$p.rec" || fail "$p"
	"$oracle" "$work/$p.rec" --context || fail "$p --context"
	"$oracle" "$work/$p.rec" --clock-limit 10000 || fail "$p --clock-limit 10000"
	MNEMO_DEP_TABLE=plain "$oracle" "$work/$p.rec" --context || fail "$p plain map --context"
	rm -f "$work/$p.rec"
	n=$((n + 1))
done
echo "PASS: $n programs, the module with 1, 2 and 4 workers equals the reference"
