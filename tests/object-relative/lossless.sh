#!/usr/bin/env bash
# The lossless mode of the object-relative module against a reference: every test program
# (programs/*.c) and every bench program at its small input (bench/programs/small_inputs.sh) is
# built for the module and run twice, once with mnemo-record in place of the backend (the whole event stream recorded,
# then translated by objrel-lossless-ref, lossless_ref.c) and once with MNEMO_OBJREL_LOSSLESS=1;
# `mnemo expand` of that profile must equal the reference line for line, and each --stream must
# be its column.  Also: a profile without lossless streams is refused with a clear error.  The two
# runs are separate processes, so the programs must be deterministic (their object-relative
# stream is; raw addresses are not compared).
# Usage: lossless.sh BUILD_DIR RECORDER REFERENCE TEST_PROGRAMS_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 recorder=$2 ref=$3 tests=$4 bench=$5
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-objrel-lossless.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

source "$bench/small_inputs.sh"

# check NAME SRC OPT ARGS...: builds, records, profiles, expands and compares.
check() {
	local name=$1 src=$2 opt=$3 w=$work/$1
	shift 3
	"$bin/mnemo-cc" -m object-relative "$opt" -g -I"$(dirname "$src")" "$src" -o "$w"
	MNEMO_BACKEND=$recorder MNEMO_RECORD_FILE=$w.rec MNEMO_RECORD_EVENTS=1000000000 \
		MNEMO_OUTPUT=$w.rec.yaml "$w" "$@" >/dev/null || fail "$name: recorded run: exit status $?"
	[ -s "$w.rec" ] || fail "$name: no recording made"
	"$ref" "$w.rec" >"$w.want" || fail "$name: reference"
	rm -f "$w.rec"
	MNEMO_OBJREL_LOSSLESS=1 MNEMO_OUTPUT=$w.yaml "$w" "$@" >/dev/null ||
		fail "$name: profiled run: exit status $?"
	"$bin/mnemo" expand "$w.yaml" >"$w.got" || fail "$name: mnemo expand"
	cmp -s "$w.want" "$w.got" || {
		diff "$w.want" "$w.got" | head -20 >&2
		fail "$name: mnemo expand differs from the reference ($(wc -l <"$w.want") lines expected, $(wc -l <"$w.got") got)"
	}
	local col=1
	for s in instruction group object offset; do
		"$bin/mnemo" expand --stream $s "$w.yaml" | cmp -s - <(cut -d' ' -f$col "$w.want") ||
			fail "$name: mnemo expand --stream $s is not column $col of the reference"
		col=$((col + 1))
	done
	local ratio
	ratio=$(sed -n 's/^ *size_ratio: //p' "$w.yaml")
	[ -n "$ratio" ] || fail "$name: no size_ratio"
	echo "$name: $(wc -l <"$w.want") accesses, object-relative / raw grammar size $ratio"
}

n=0
for src in "$tests"/*.c; do
	check "$(basename "$src" .c)" "$src" -O1
	n=$((n + 1))
done
for src in "$bench"/*.c; do
	p=$(basename "$src" .c)
	args=$(small_args "$p") || fail "bench program $p has no small input in bench/programs/small_inputs.sh: add one"
	# shellcheck disable=SC2086  # ARGS are words on purpose
	check "$p" "$src" -O2 $args
	n=$((n + 1))
done

# Without MNEMO_OBJREL_LOSSLESS: no lossless section, and expand says so.
MNEMO_OUTPUT=$work/plain.yaml "$work/fig3" >/dev/null
if "$bin/mnemo" expand "$work/plain.yaml" >/dev/null 2>"$work/err"; then
	fail "mnemo expand accepted a profile without lossless streams"
fi
grep -q "no lossless streams" "$work/err" || fail "unclear error: $(cat "$work/err")"
# A malformed stream length and completeness flag: the file, line, column and field.
sed '0,/ length: [0-9]*$/s// length: lots/' "$work/fig3.yaml" >"$work/bad-length.yaml"
if "$bin/mnemo" expand "$work/bad-length.yaml" >/dev/null 2>"$work/err"; then
	fail "mnemo expand accepted a stream without a length"
fi
grep -q "bad-length.yaml:[0-9]*:[0-9]*: field 'length': expected an unsigned integer, found 'lots' (lossless stream 'instruction')" \
	"$work/err" || fail "unclear error: $(cat "$work/err")"
sed '/^    lossless:/,/complete/ s/complete: true/complete: maybe/' "$work/fig3.yaml" >"$work/bad-complete.yaml"
if "$bin/mnemo" expand "$work/bad-complete.yaml" >/dev/null 2>"$work/err"; then
	fail "mnemo expand accepted 'complete: maybe'"
fi
grep -q "bad-complete.yaml:[0-9]*:[0-9]*: field 'complete': expected true or false" "$work/err" ||
	fail "unclear error: $(cat "$work/err")"
echo "PASS: mnemo expand equals the reference on all $n test and bench programs"
