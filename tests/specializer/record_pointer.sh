#!/usr/bin/env bash
# mnemo-record (bench/queue/record.c) on a wire with the pointer flag: pointer_list.c built for
# rds-shape with --mnemo-no-specialize, whose stand-in module takes every access beside rds-shape's
# pointer ones, so that __mnemo_load_ptr and __mnemo_store_ptr send codes 0x81 and 0x82 (checked
# first in the callbacks mnemo-specialize writes for that build, or the test would prove nothing).
# The recorder must frame those as loads and stores and record every event: one that took the
# low byte alone for the code would stop at the first pointer access and report its buffer cut
# short by a corrupt record.
# Usage: record_pointer.sh BUILD_DIR SOURCE_DIR RECORDER
set -euo pipefail
build=$1 src=$2 recorder=$3
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-recptr-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin/mnemo-specialize" --catalogue "$src/events.yaml" --modules-dir "$src/modules" \
	--modules rds-shape --all-events -o "$work/spec" >/dev/null ||
	fail "mnemo-specialize --modules rds-shape --all-events: exit status $?"
grep -q '^	\.flags = MN_WIRE_POINTER,$' "$work/spec/callbacks.c" ||
	fail "rds-shape --all-events: expected the pointer flag in __mnemo_wire"

"$bin/mnemo-cc" -m rds-shape --mnemo-no-specialize -O1 "$src/tests/specializer/pointer_list.c" \
	-o "$work/list" || fail "pointer_list.c: build failed"
n=1000
MNEMO_BACKEND=$recorder MNEMO_RECORD_FILE=$work/list.rec MNEMO_RECORD_EVENTS=1000000000 \
	MNEMO_OUTPUT=$work/list.yaml "$work/list" $n >"$work/out" 2>"$work/err" ||
	fail "pointer_list: exit status $?: $(cat "$work/err")"
[ "$(cat "$work/out")" = $((n * (n - 1) / 2)) ] ||
	fail "pointer_list: expected $((n * (n - 1) / 2)), got $(cat "$work/out")"
line=$(grep '^mnemo-record: recorded ' "$work/err") ||
	fail "expected mnemo-record's report, got: $(cat "$work/err")"
case $line in
*"cut short"*) fail "expected no corrupt record, got: $line" ;;
esac
# "recorded R of E events (...)": every event, and at least the n allocations, frees, and the
# loads and stores of `v` and `next` (6n).
read -r recorded events < <(sed -n 's/^mnemo-record: recorded \([0-9]*\) of \([0-9]*\) events.*/\1 \2/p' <<<"$line")
[ "$recorded" = "$events" ] && [ "$recorded" -ge $((6 * n)) ] ||
	fail "expected every event recorded, at least $((6 * n)), got: $line"
# The recording frames by code alone (recording.h has no flags): every code one its nwords[] gives
# a length, the pointer accesses' among the loads and stores (2n of each: `v` and `next`).
nwords=$(od -An -v -tu1 -j32 -N32 "$work/list.rec" | tr -s ' \n' '  ')
od -An -v -tx8 -w8 -j576 "$work/list.rec" | awk -v lens="$nwords" -v n=$n '
	function digit(c) { return index("0123456789abcdef", c) - 1 }
	function hex(s) { return digit(substr(s, 1, 1)) * 16 + digit(substr(s, 2, 1)) }
	BEGIN { split(lens, len, " ") }
	skip > 0 { skip--; next }
	{
		code = hex(substr($1, 15, 2))
		if (code >= 32 || !len[code + 1]) {
			print "FAIL: code " code " in the recording"
			bad = 1
			exit 1
		}
		count[code]++
		skip = len[code + 1] - 1
	}
	END { if (!bad && (count[1] < 2 * n || count[2] < 2 * n)) {
		print "FAIL: expected at least " 2 * n " loads and stores recorded, got " \
		      count[1] + 0 " and " count[2] + 0; exit 1 } }' >&2 ||
	fail "the recording does not frame by its codes"
echo "PASS: $line"
