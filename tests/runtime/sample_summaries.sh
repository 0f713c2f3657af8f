#!/usr/bin/env bash
# Loop summaries in sampled builds (frontend-lib/specialize.c, put_summary_sampling()): the loops of
# sample_summaries.c (4.3 million accesses, all in loops the pass summarizes) built with summaries
# and as a per-access twin (--no-summarize), run with the sampling period N unset (every access)
# and N = 100, profiles written with --reproducible:
#   - null with `sample: MNEMO_TEST_SAMPLE` added to its spec (it takes loop events: the sampled
#     summaries walk every iteration), built by hand as README shows: the plan says loads, stores
#     and loop events summarizable (0x80000455; the twin 0x00000455); at N = 1 the summarized
#     build sends summaries (summarized_accesses > 0) and null's counts are the twin's; at N = 100
#     null's loads and stores are about a hundredth of N = 1's (within 10%), loop events are not
#     sampled, and the counts are the twin's again: the countdown picks the same accesses;
#   - structure-affinity (sampled by MNEMO_AFFINITY_SAMPLE, no loop events: the sampled summaries
#     jump from sample to sample), built with mnemo-cc and mnemo-cc --mnemo-no-summarize: at N = 1
#     and at N = 100 the structure-affinity sections agree byte for byte; at N = 100 it counts
#     about a hundredth of the accesses, none outside the arrays (unattributed_accesses: 0), and
#     every stream's stride and first offset are whole elements plus its field's offset: the
#     sampled addresses are the loops' own.
# Usage: sample_summaries.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-sample-summaries-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc=${CLANG:-clang-19}
fail() { echo "FAIL: $*" >&2; exit 1; }
unset MNEMO_TEST_SAMPLE MNEMO_AFFINITY_SAMPLE MNEMO_OUTPUT MNEMO_WORKERS

mods=$work/modules sum=$work/sum off=$work/off
mkdir -p "$mods/null" "$sum" "$off"
sed 's/^events:$/sample: MNEMO_TEST_SAMPLE\nevents:/' "$build/share/mnemo/modules/null/events.yaml" \
	>"$mods/null/events.yaml"
grep -q '^sample: MNEMO_TEST_SAMPLE$' "$mods/null/events.yaml" || fail "could not add sample: to null"

# by_hand DIR [SPECIALIZE_OPTION]: the by-hand flow of README for null, into DIR/prog.  The same
# compile flags as mnemo-cc, so that loops stay as the pass summarizes them.
by_hand() {
	local out=$1 lib=$build/lib/mnemo heap=
	local flags=(-O2 -flto -fno-unroll-loops -fno-vectorize -fno-slp-vectorize)
	shift
	"$bin/mnemo-specialize" --catalogue "$build/share/mnemo/events.yaml" --modules-dir "$mods" \
		--modules null --backend "$bin/mnemo-backend" -o "$out" "$@" >"$out/heap"
	"$cc" "${flags[@]}" -I"$build/include/mnemo" -c "$out/callbacks.c" -o "$out/callbacks.o"
	"$cc" "${flags[@]}" -fpass-plugin="$lib/mnemo-pass.so" -c "$src/sample_summaries.c" \
		-o "$out/prog.o"
	grep -qx 'heap=1' "$out/heap" && heap=$lib/libmnemo-heap.a
	"$cc" -O2 -flto -fuse-ld=lld -Wl,--load-pass-plugin="$lib/mnemo-pass.so" "$out/prog.o" \
		"$out/callbacks.o" -Wl,--whole-archive "$lib/libmnemo-rt.a" $heap \
		-Wl,--no-whole-archive -lpthread -ldl -o "$out/prog"
}

# profile EXE VAR N OUT: runs EXE with VAR=N (unset when N is empty) under mnemo run --reproducible.
profile() {
	local exe=$1 var=$2 n=$3 out=$4 set=()
	[ -z "$n" ] || set=("$var=$n")
	env "${set[@]}" "$bin/mnemo" run --reproducible -o "$out" "$exe" >"$out.out" ||
		fail "$exe ($var=$n): exit status $?"
	cmp -s "$work/native.out" "$out.out" || fail "$exe ($var=$n): output differs from native"
	grep -q '^complete: true' "$out" || fail "$exe ($var=$n): incomplete: $(grep incomplete "$out")"
}
summarized_of() { sed -n 's/^program: .*summarized_accesses: \([0-9]*\).*/\1/p' "$1"; }
section() { sed -n '/^modules:/,$p' "$1"; }
# same A B WHAT: the modules: sections of profiles A and B are identical.
same() {
	if ! cmp -s <(section "$1") <(section "$2"); then
		diff <(section "$1") <(section "$2") | head -20 >&2
		fail "$3: the modules: sections differ (< summarized, > per access)"
	fi
}
null_count() { section "$1" | awk -v e="$2" '$1 == e ":" { print $2; exit }'; }
accesses() { echo $(( $(null_count "$1" load) + $(null_count "$1" store) )); }
plan_of() {
	sed -n 's/^__attribute__((used)) const uint32_t __mnemo_summary_plan = \(0x[0-9a-f]*\);$/\1/p' \
		"$1"
}
# within GOT WANT: GOT is WANT within 10%.
within() { [ "$(( $1 * 10 ))" -ge "$(( $2 * 9 ))" ] && [ "$(( $1 * 10 ))" -le "$(( $2 * 11 ))" ]; }
# summarized WHAT PROFILE_WITH PROFILE_WITHOUT: over 4,000,000 accesses summarized, and none.
summarized() {
	[ "$(summarized_of "$2")" -gt 4000000 ] ||
		fail "$1: expected over 4000000 accesses summarized, got $(summarized_of "$2")"
	[ "$(summarized_of "$3")" = 0 ] || fail "$1: the per-access twin summarized accesses"
}

"$cc" -O2 "$src/sample_summaries.c" -o "$work/native"
"$work/native" >"$work/native.out"

# ---- null, sampled, with loop events ----
by_hand "$sum"
by_hand "$off" --no-summarize
[ "$(plan_of "$sum/callbacks.c")" = 0x80000455 ] ||
	fail "null sampled: expected plan 0x80000455, got $(plan_of "$sum/callbacks.c")"
[ "$(plan_of "$off/callbacks.c")" = 0x00000455 ] ||
	fail "null sampled, --no-summarize: expected plan 0x00000455, got $(plan_of "$off/callbacks.c")"
grep -q 'sample_countdown' "$sum/callbacks.c" || fail "null with sample: has no countdown"
for v in "$sum" "$off"; do
	profile "$v/prog" MNEMO_TEST_SAMPLE "" "$v/null.1.yaml"
	profile "$v/prog" MNEMO_TEST_SAMPLE 100 "$v/null.100.yaml"
done
summarized "null, N = 1" "$sum/null.1.yaml" "$off/null.1.yaml"
same "$sum/null.1.yaml" "$off/null.1.yaml" "null, N = 1"
all=$(accesses "$off/null.1.yaml") sampled=$(accesses "$sum/null.100.yaml")
within "$sampled" $((all / 100)) ||
	fail "null, N = 100: $sampled loads and stores of $all, expected about $((all / 100))"
for e in loop_invoke loop_iter loop_exit; do
	got=$(null_count "$sum/null.100.yaml" $e) want=$(null_count "$off/null.1.yaml" $e)
	[ "$got" = "$want" ] || fail "null, N = 100: $e $got, expected every one: $want"
done
same "$sum/null.100.yaml" "$off/null.100.yaml" "null, N = 100"
echo "null sampled: plan 0x80000455; N = 1: $all loads and stores, as the twin's; N = 100:" \
	"$sampled, loop_iter $(null_count "$sum/null.100.yaml" loop_iter), as the twin's"

# ---- structure-affinity: mnemo-cc, and its per-access twin ----
"$bin/mnemo-cc" -m structure-affinity -O2 -g "$src/sample_summaries.c" -o "$sum/affinity"
"$bin/mnemo-cc" -m structure-affinity --mnemo-no-summarize -O2 -g "$src/sample_summaries.c" \
	-o "$off/affinity"
for v in "$sum" "$off"; do
	profile "$v/affinity" MNEMO_AFFINITY_SAMPLE "" "$v/sa.1.yaml"
	profile "$v/affinity" MNEMO_AFFINITY_SAMPLE 100 "$v/sa.100.yaml"
done
summarized "structure-affinity, N = 1" "$sum/sa.1.yaml" "$off/sa.1.yaml"
same "$sum/sa.1.yaml" "$off/sa.1.yaml" "structure-affinity, N = 1"
total() { grep -o "totals: {accesses: [0-9]*" "$1" | grep -o "[0-9]*$"; }
all=$(total "$sum/sa.1.yaml") sampled=$(total "$sum/sa.100.yaml")
within "$sampled" $((all / 100)) ||
	fail "structure-affinity, N = 100: $sampled accesses of $all, expected about $((all / 100))"
grep -q 'sample_period: 100$' "$sum/sa.100.yaml" || fail "structure-affinity, N = 100: no sample_period"
grep -q 'unattributed_accesses: 0,' "$sum/sa.100.yaml" ||
	fail "structure-affinity, N = 100: sampled accesses outside the arrays:" \
		"$(grep -o 'unattributed_accesses: [0-9]*' "$sum/sa.100.yaml")"
# Every stream: stride (null for one access) a multiple of the structure's size, first offset
# its field's offset plus whole elements.  Prints the bad ones, then how many streams there are.
bad=$(section "$sum/sa.100.yaml" | awk '
	/^        size: / { used = $0; sub(/.*used: /, "", used); sub(/,.*/, "", used) }
	/^        - \{loop: .*stride:/ {
		f = $0; sub(/.*field: /, "", f); sub(/,.*/, "", f)
		s = $0; sub(/.*stride: /, "", s); sub(/,.*/, "", s)
		o = $0; sub(/.*offset: /, "", o); sub(/,.*/, "", o)
		n++
		if ((s != "null" && s % used) || o % used != f) print
	}
	END { print n + 0 }')
# 7 loads and stores in loops; the last loop, 100 accesses, may go unsampled.
[ "$bad" -ge 6 ] 2>/dev/null ||
	fail "structure-affinity, N = 100: expected 6 or more streams at whole elements, got: $bad"
same "$sum/sa.100.yaml" "$off/sa.100.yaml" "structure-affinity, N = 100"
echo "structure-affinity: N = 1: $all accesses, sections identical; N = 100: $sampled accesses," \
	"every one in its array at whole elements, sections identical"
echo "1 passed, 0 failed"
