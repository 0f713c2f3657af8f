#!/usr/bin/env bash
# The dependence module against its reference (oracle.c) on real event streams: every known-answer
# program (programs/*.c) and every bench program at a small input is built for the dependence
# module twice, with loop summaries (the default) and with --mnemo-no-summarize, each run with
# mnemo-record in place of the backend (the whole stream is recorded), and the recording replayed
# by dep-oracle: plain, with --context, and with a small clock limit so that the clock resets of
# README happen; bench programs also with the plain map of MNEMO_DEP_TABLE; and with summaries
# nested as signal handlers would nest them.  The builds without summaries must send none; the
# builds with them must summarize some accesses, test and bench programs alike, so that the
# expansion is tested at all (programs/affine.c is there for it); and the reference's answer must
# be the same on both builds' streams.
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

# record NAME SRC OPT SUMMARIZE ARGS...: builds (SUMMARIZE "on", or "off" for
# --mnemo-no-summarize) and records; the recording is $work/NAME.rec.
record() {
	local name=$1 src=$2 opt=$3 flags=()
	[ "$4" = off ] && flags=(--mnemo-no-summarize)
	shift 4
	"$bin/mnemo-cc" -m dependence "${flags[@]}" "$opt" -g -I"$(dirname "$src")" "$src" \
		-o "$work/$name"
	MNEMO_BACKEND=$recorder MNEMO_RECORD_FILE=$work/$name.rec MNEMO_RECORD_EVENTS=1000000000 \
		MNEMO_OUTPUT=$work/$name.mnemo.yaml "$work/$name" "$@" >/dev/null ||
		fail "$name: exit status $?"
	[ -s "$work/$name.rec" ] || fail "$name: no recording made"
}

# oracle NAME SUMMARIZE ARGS...: dep-oracle on $work/NAME.rec with ARGS (and --no-summaries
# when SUMMARIZE is off); sets accesses and summaries to the counts of summarized accesses and
# summaries it reports.
oracle() {
	local name=$1 s=$2 out
	shift 2
	[ "$s" = off ] && set -- "$@" --no-summaries
	out=$("$oracle" "$work/$name.rec" "$@") || { echo "$out"; fail "$name summaries $s $*"; }
	echo "$out"
	accesses=$(sed -n 's/.* events, \([0-9]*\) summarized accesses in .*/\1/p' <<<"$out")
	summaries=$(sed -n 's/.* summarized accesses in \([0-9]*\) summaries, .*/\1/p' <<<"$out")
	if [ -z "$accesses" ] || [ -z "$summaries" ]; then
		fail "$name: no count of summarized accesses in: $out"
	fi
}

# replays NAME SUMMARIZE CLOCK_LIMIT [plain]: every replay of one recording; with summaries and at
# least two of them, also with the summaries nested (dep-oracle --nest), as a signal handler
# running a summarized loop would nest them.  Adds the summarized accesses to `summarized`.  The
# build without summaries (run second) of a program whose build with them summarized nothing sends
# the same events: it is replayed once (same_on_off compares the answers), not again in every mode.
summarized=0
on_summaries=0
replays() {
	local p=$1 s=$2
	oracle "$p" "$s" --save "$work/$p.$s.ref"
	summarized=$((summarized + accesses))
	if [ "$s" = off ] && [ "$on_summaries" = 0 ]; then
		rm -f "$work/$p.rec"
		return
	fi
	[ "$s" = on ] && on_summaries=$summaries
	[ "$summaries" -ge 2 ] && oracle "$p" "$s" --nest
	oracle "$p" "$s" --context
	oracle "$p" "$s" --clock-limit "$3"
	[ "${4:-}" = plain ] && MNEMO_DEP_TABLE=plain oracle "$p" "$s" --context
	rm -f "$work/$p.rec"
}

# same_on_off NAME: the reference's answer on the stream with summaries (expanded) is its answer
# on the stream without (the programs are deterministic, and summaries keep every site id).
same_on_off() {
	cmp -s "$work/$1.on.ref" "$work/$1.off.ref" || {
		diff "$work/$1.off.ref" "$work/$1.on.ref" | head -20 >&2 || true   # (diff exits 1 here)
		fail "$1: the reference's answer differs with loop summaries (>) and without (<)"
	}
}

n=0
for src in "$tests"/*.c; do
	p=$(basename "$src" .c)
	for s in on off; do
		record "$p" "$src" -O1 $s
		replays "$p" $s 50
	done
	same_on_off "$p"
	n=$((n + 1))
done
[ "$summarized" -gt 0 ] || fail "no test program summarized any access: the expansion went untested"
tests_summarized=$summarized
for src in "$bench"/*.c; do
	p=$(basename "$src" .c)
	args=$(small_args "$p") || fail "bench program $p has no small input in bench/programs/small_inputs.sh: add one"
	for s in on off; do
		# shellcheck disable=SC2086  # ARGS are words on purpose
		record "$p" "$src" -O2 $s $args
		replays "$p" $s 10000 plain
	done
	same_on_off "$p"
	n=$((n + 1))
done
[ "$summarized" -gt "$tests_summarized" ] ||
	fail "no bench program summarized any access: the expansion went untested"
echo "PASS: $n programs with loop summaries ($summarized accesses summarized) and without, the module with 1, 2 and 4 workers equals the reference"
