#!/usr/bin/env bash
# LEAP's derived profiles end to end.
#  1. `mnemo derive` on programs/derive.c (built with mnemo-cc -m object-relative -O1): the
#     dependence frequencies and strides its comment gives by construction, found by the source
#     lines marked MARK:<name>; with MNEMO_OBJREL_STACK=1 the stack array's pair too, without it
#     not (its accesses unattributed).
#  2. objrel-derived-check on a recording of the same program: every LMAD captures everything
#     there, so the derived profile must equal the exact one on every pair and every instruction.
#  3. Bad input: a profile without the section, and one with a broken LMAD row, give one clear
#     message naming the file (and line) and exit status 1.
# Usage: derived.sh BUILD_DIR CHECKER PROGRAMS_DIR SPECS_DIR RECORD_SH
set -euo pipefail
build=$1 checker=$2 programs=$3 specs=$4
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-objrel-derived.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
src=$programs/derive.c
# shellcheck source=../../bench/record.sh
source "$5"

line() { grep -n "MARK:$1\b" "$src" | cut -d: -f1; }
# pair STORE LOAD FREQUENCY FILE: the row of that pair in `mnemo derive` output FILE has FREQUENCY.
pair() {
	local row
	row=$(grep "store_at: \"[^\"]*derive.c:$(line "$1")\", load_at: \"[^\"]*derive.c:$(line "$2")\"" "$4") ||
		fail "no pair ($1, $2) in mnemo derive output: $(cat "$4")"
	[[ $row == *"frequency: $3,"* ]] || fail "pair ($1, $2): expected frequency $3, got: $row"
}

"$bin/mnemo-cc" -m object-relative -O1 -g "$src" -o "$work/derive"
for stack in 1 0; do
	out=$work/derive.$stack
	MNEMO_OBJREL_STACK=$stack MNEMO_OUTPUT=$out.yaml "$work/derive" >/dev/null
	"$bin/mnemo" derive "$out.yaml" >"$out.txt" || fail "mnemo derive exit status $?"
	pair a_store a_load 1 "$out.txt"
	pair b_low b_load 0.5 "$out.txt"
	pair b_high b_load 0.5 "$out.txt"
	pair c_again c_load 1 "$out.txt"
	! grep -q "derive.c:$(line c_first)\", load_at" "$out.txt" ||
		fail "c_first has a pair, but c_again overwrote all it wrote"
	npairs=$((4 + stack))
	[ "$(grep -c '^- {store:' "$out.txt")" = $npairs ] ||
		fail "MNEMO_OBJREL_STACK=$stack: expected $npairs pairs: $(cat "$out.txt")"
	sweeps="a_store b_low b_high c_first c_again a_load b_load c_load"
	if [ $stack = 1 ]; then
		pair s_store s_load 1 "$out.txt"
		sweeps+=" s_store s_load"
	fi
	for s in $sweeps; do
		grep "at: \"[^\"]*derive.c:$(line "$s")\"}" "$out.txt" | grep -q "stride: 8, .*strong: true" ||
			fail "$s: expected stride 8, strongly strided: $(grep "derive.c:$(line "$s")\"}" "$out.txt")"
	done
done

build_for_spec "$build" "$specs" objrel-sized "$src" "$work/derive.rec.x"
record_run "$build" "$work/derive.rec.x" "$work/derive.rec" 1000000000 2>/dev/null
got=$("$checker" --stack "$work/derive.rec")
echo "derive.c against exact: $got"
[[ $got =~ ^pairs\ ([0-9]+)\ exact\ ([0-9]+).*strided\ ([0-9]+)\ identified\ ([0-9]+).*extra\ 0$ ]] ||
	fail "unexpected checker output: $got"
[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[3]}" = "${BASH_REMATCH[4]}" ] &&
	[ "${BASH_REMATCH[1]}" -ge 5 ] && [ "${BASH_REMATCH[3]}" -ge 10 ] ||
	fail "derived profile differs from the exact one on a program the LMADs capture whole: $got"

# Bad input.
if "$bin/mnemo" derive "$work/derive.0.yaml" --module value-pattern 2>"$work/err"; then
	fail "mnemo derive accepted a profile without the section"
fi
grep -q "derive.0.yaml: no 'value-pattern' section" "$work/err" || fail "unclear error: $(cat "$work/err")"
sed '0,/ count: /s/ count: [0-9]*/ count: many/' "$work/derive.0.yaml" >"$work/bad.yaml"
if "$bin/mnemo" derive "$work/bad.yaml" 2>"$work/err"; then
	fail "mnemo derive accepted an LMAD without a count"
fi
grep -q "bad.yaml:[0-9]*:[0-9]*: field 'count': expected an unsigned integer, found 'many'" "$work/err" ||
	fail "unclear error: $(cat "$work/err")"
echo "PASS: mnemo derive gives the known frequencies and strides, and equals the exact profile"
