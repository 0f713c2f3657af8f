#!/usr/bin/env bash
# The lossless mode of the object-relative module against a reference: every test program
# (programs/*.c) and every bench program at its small input (bench/programs/small_inputs.sh) is
# built for the module twice, with loop summaries (the default) and with --mnemo-no-summarize,
# and each build run twice, once with mnemo-record in place of the backend (the whole event
# stream recorded, then translated by objrel-lossless-ref, lossless_ref.c, which expands the
# summaries itself) and once with MNEMO_OBJREL_LOSSLESS=1; `mnemo expand` of that profile must
# equal the reference line for line, each --stream must be its column, and the profile's
# summarized_accesses the reference's count (0 without summaries; more than 0 for some test
# program and some bench program with them).  The reference's stream must be the same for both
# builds.  Also: a profile without lossless streams is refused with a clear error.  The runs are
# separate processes, so the programs must be deterministic (their object-relative stream is;
# raw addresses are not compared).
# Usage: lossless.sh BUILD_DIR RECORDER REFERENCE TEST_PROGRAMS_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 recorder=$2 ref=$3 tests=$4 bench=$5
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-objrel-lossless.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

source "$bench/small_inputs.sh"

# check NAME SRC OPT SUMMARIZE ARGS...: builds (SUMMARIZE "on", or "off" for
# --mnemo-no-summarize), records, profiles, expands and compares; the reference's stream is left
# in $work/NAME.SUMMARIZE.want, and its summarized accesses added to summarized[SUMMARIZE].
declare -A summarized=([on]=0 [off]=0)
check() {
	local name=$1 src=$2 opt=$3 sm=$4 w=$work/$1.$4 flags=() sum s
	[ "$sm" = off ] && flags=(--mnemo-no-summarize)
	shift 4
	"$bin/mnemo-cc" -m object-relative "${flags[@]}" "$opt" -g -I"$(dirname "$src")" "$src" \
		-o "$w"
	MNEMO_BACKEND=$recorder MNEMO_RECORD_FILE=$w.rec MNEMO_RECORD_EVENTS=1000000000 \
		MNEMO_OUTPUT=$w.rec.yaml "$w" "$@" >/dev/null || fail "$name: recorded run: exit status $?"
	[ -s "$w.rec" ] || fail "$name: no recording made"
	"$ref" "$w.rec" >"$w.want" 2>"$w.ref.err" || fail "$name: reference: $(cat "$w.ref.err")"
	rm -f "$w.rec"
	MNEMO_OBJREL_LOSSLESS=1 MNEMO_OUTPUT=$w.yaml "$w" "$@" >/dev/null ||
		fail "$name: profiled run: exit status $?"
	"$bin/mnemo" expand "$w.yaml" >"$w.got" || fail "$name: mnemo expand"
	cmp -s "$w.want" "$w.got" || {
		diff "$w.want" "$w.got" | head -20 >&2 || true   # (diff exits 1 here)
		fail "$name (summaries $sm): mnemo expand differs from the reference ($(wc -l <"$w.want") lines expected, $(wc -l <"$w.got") got)"
	}
	sum=$(sed -n 's/^summarized: \([0-9]*\)$/\1/p' "$w.ref.err")
	[ -n "$sum" ] || fail "$name: the reference gave no count of summarized accesses"
	grep -Eq "^program: \{.*[{ ]summarized_accesses: ${sum}[,}]" "$w.yaml" ||
		fail "$name (summaries $sm): the profile's summarized_accesses is not the reference's $sum: $(grep '^program:' "$w.yaml")"
	[ "$sm" = on ] || [ "$sum" = 0 ] || fail "$name: $sum accesses summarized with --mnemo-no-summarize"
	summarized[$sm]=$((summarized[$sm] + sum))
	local col=1
	for s in instruction group object offset; do
		"$bin/mnemo" expand --stream $s "$w.yaml" | cmp -s - <(cut -d' ' -f$col "$w.want") ||
			fail "$name: mnemo expand --stream $s is not column $col of the reference"
		col=$((col + 1))
	done
	local ratio
	ratio=$(sed -n 's/^ *size_ratio: //p' "$w.yaml")
	[ -n "$ratio" ] || fail "$name: no size_ratio"
	echo "$name (summaries $sm): $(wc -l <"$w.want") accesses ($sum summarized), object-relative / raw grammar size $ratio"
}

# both NAME SRC OPT ARGS...: check with summaries and without; the reference's streams agree.
both() {
	local name=$1 src=$2 opt=$3
	shift 3
	check "$name" "$src" "$opt" on "$@"
	check "$name" "$src" "$opt" off "$@"
	cmp -s "$work/$name.on.want" "$work/$name.off.want" || {
		diff "$work/$name.off.want" "$work/$name.on.want" | head -20 >&2 || true   # (diff exits 1 here)
		fail "$name: the reference's stream differs with loop summaries (>) and without (<)"
	}
}

n=0
for src in "$tests"/*.c; do
	both "$(basename "$src" .c)" "$src" -O1
	n=$((n + 1))
done
[ "${summarized[on]}" -gt 0 ] || fail "no test program summarized any access: the expansion went untested"
tests_summarized=${summarized[on]}
for src in "$bench"/*.c; do
	p=$(basename "$src" .c)
	args=$(small_args "$p") || fail "bench program $p has no small input in bench/programs/small_inputs.sh: add one"
	# shellcheck disable=SC2086  # ARGS are words on purpose
	both "$p" "$src" -O2 $args
	n=$((n + 1))
done
[ "${summarized[on]}" -gt "$tests_summarized" ] ||
	fail "no bench program summarized any access: the expansion went untested"

# Without MNEMO_OBJREL_LOSSLESS: no lossless section, and expand says so.
MNEMO_OUTPUT=$work/plain.yaml "$work/fig3.on" >/dev/null
if "$bin/mnemo" expand "$work/plain.yaml" >/dev/null 2>"$work/err"; then
	fail "mnemo expand accepted a profile without lossless streams"
fi
grep -q "no lossless streams" "$work/err" || fail "unclear error: $(cat "$work/err")"
# A malformed stream length and completeness flag: the file, line, column and field.
sed '0,/ length: [0-9]*$/s// length: lots/' "$work/fig3.on.yaml" >"$work/bad-length.yaml"
if "$bin/mnemo" expand "$work/bad-length.yaml" >/dev/null 2>"$work/err"; then
	fail "mnemo expand accepted a stream without a length"
fi
grep -q "bad-length.yaml:[0-9]*:[0-9]*: field 'length': expected an unsigned integer, found 'lots' (lossless stream 'instruction')" \
	"$work/err" || fail "unclear error: $(cat "$work/err")"
sed '/^    lossless:/,/complete/ s/complete: true/complete: maybe/' "$work/fig3.on.yaml" >"$work/bad-complete.yaml"
if "$bin/mnemo" expand "$work/bad-complete.yaml" >/dev/null 2>"$work/err"; then
	fail "mnemo expand accepted 'complete: maybe'"
fi
grep -q "bad-complete.yaml:[0-9]*:[0-9]*: field 'complete': expected true or false" "$work/err" ||
	fail "unclear error: $(cat "$work/err")"
echo "PASS: mnemo expand equals the reference on all $n test and bench programs, with loop summaries (${summarized[on]} accesses summarized) and without"
