#!/usr/bin/env bash
# Loop summaries and mixed loops in sampled builds (specializer/specialize.c,
# put_summary_sampling(), put_mixed_sampling()): each program built with summaries and as a
# per-access twin (--no-summarize), run with the sampling period N unset (every access) and
# N = 100, profiles written with --reproducible.  sample_summaries.c: 4.3 million accesses, all in
# loops the pass summarizes; sample_mixed.c: 6 million summarized accesses, all in loops the pass
# makes mixed (a histogram, a conditional access, mixed accesses at several ranks), and, run with
# its third argument 1, a SIGSEGV handler that runs a mixed loop of its own in the middle of the
# histogram's.
#   - null with `sample: MNEMO_TEST_SAMPLE` added to its spec (it takes loop events: the sampled
#     summaries walk every iteration), built by hand as README shows: the plan says loads, stores
#     and loop events summarizable, mixed loops on (0xc0000455; the twin 0x00000455); at N = 1
#     the summarized build sends summaries (summarized_accesses > 4,000,000, and for
#     sample_mixed.c exactly its mixed loops' 6,000,000) and null's counts are the twin's; at
#     N = 100 null's loads and stores are about a hundredth of N = 1's (within 10%), loop events
#     are not sampled, and the counts are the twin's again: the countdown picks the same accesses;
#   - structure-affinity (sampled by MNEMO_AFFINITY_SAMPLE, no loop events: the sampled summaries
#     jump from sample to sample), built with mnemo-cc and mnemo-cc --mnemo-no-summarize: at N = 1
#     and at N = 100 the structure-affinity sections agree byte for byte; at N = 100 it counts
#     about a hundredth of the accesses, none outside the arrays (unattributed_accesses: 0), and
#     every stream of sample_summaries.c's has its stride and first offset at whole elements
#     plus its field's offset: the sampled addresses are the loops' own; sample_mixed.c's
#     sections agree at N = 1, and at N = 100 have the twin's streams, about a hundredth of the
#     accesses each build, none outside the arrays (without loop events a mixed loop's
#     summarized accesses are walked at its close: one in N, not the twin's same ones);
#   - with the handler, both modules' sections are the twin's at N = 1 (the handler's loop nests
#     in the histogram's); at N = 100 the profile is complete, null's loop events are the twin's
#     and the loads and stores about a hundredth.  Not byte for byte there: the twin keeps the
#     countdown in a register through its loop, so the handler's accesses do not count in the
#     loop's countdown, where in the mixed build they do.
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

# by_hand DIR PROGRAM [SPECIALIZE_OPTION]: the by-hand flow of README for null, $src/PROGRAM.c
# into DIR/PROGRAM.  The same compile flags as mnemo-cc, so that loops stay as the pass
# summarizes them.
by_hand() {
	local out=$1 prog=$2 lib=$build/lib/mnemo heap=
	local flags=(-O2 -flto -fno-unroll-loops -fno-vectorize -fno-slp-vectorize)
	shift 2
	"$bin/mnemo-specialize" --catalogue "$build/share/mnemo/events.yaml" --modules-dir "$mods" \
		--modules null --backend "$bin/mnemo-backend" -o "$out" "$@" >"$out/heap"
	"$cc" "${flags[@]}" -I"$build/include/mnemo" -c "$out/callbacks.c" -o "$out/callbacks.o"
	"$cc" "${flags[@]}" -fpass-plugin="$lib/mnemo-pass.so" -c "$src/$prog.c" -o "$out/$prog.o"
	grep -qx 'heap=1' "$out/heap" && heap=$lib/libmnemo-heap.a
	"$cc" -O2 -flto -fuse-ld=lld -Wl,--load-pass-plugin="$lib/mnemo-pass.so" "$out/$prog.o" \
		"$out/callbacks.o" -Wl,--whole-archive "$lib/libmnemo-rt.a" $heap \
		-Wl,--no-whole-archive -lpthread -ldl -o "$out/$prog"
}

# profile EXE VAR N OUT NATIVE [ARG...]: runs EXE ARG... with VAR=N (unset when N is empty) under
# mnemo run --reproducible; its output must be NATIVE's.
profile() {
	local exe=$1 var=$2 n=$3 out=$4 native=$5 set=()
	shift 5
	[ -z "$n" ] || set=("$var=$n")
	env "${set[@]}" "$bin/mnemo" run --reproducible -o "$out" "$exe" "$@" >"$out.out" ||
		fail "$exe $* ($var=$n): exit status $?"
	cmp -s "$native" "$out.out" || fail "$exe $* ($var=$n): output differs from native"
	grep -q '^complete: true' "$out" ||
		fail "$exe $* ($var=$n): incomplete: $(grep incomplete "$out")"
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
# summarized WHAT PROFILE_WITH PROFILE_WITHOUT [EXACTLY]: over 4,000,000 accesses summarized (or
# exactly EXACTLY), and none.
summarized() {
	if [ -n "${4:-}" ]; then
		[ "$(summarized_of "$2")" = "$4" ] ||
			fail "$1: expected $4 accesses summarized, got $(summarized_of "$2")"
	else
		[ "$(summarized_of "$2")" -gt 4000000 ] || fail "$1: expected over 4000000" \
			"accesses summarized, got $(summarized_of "$2")"
	fi
	[ "$(summarized_of "$3")" = 0 ] || fail "$1: the per-access twin summarized accesses"
}
# loop_events_all WHAT GOT WANT: null's loop events in profile GOT are WANT's, every one.
loop_events_all() {
	local e got want
	for e in loop_invoke loop_iter loop_exit; do
		got=$(null_count "$2" $e) want=$(null_count "$3" $e)
		[ "$got" = "$want" ] || fail "$1: $e $got, expected every one: $want"
	done
}
# about_100th WHAT GOT ALL: GOT is ALL / 100 within 10%.
about_100th() {
	within "$2" $(($3 / 100)) || fail "$1: $2 accesses of $3, expected about $(($3 / 100))"
}

"$cc" -O2 "$src/sample_summaries.c" -o "$work/native"
"$work/native" >"$work/native.out"
"$cc" -O2 "$src/sample_mixed.c" -o "$work/native-mixed"
"$work/native-mixed" >"$work/mixed.out"
"$work/native-mixed" 100000 10 1 >"$work/handler.out"
cmp -s "$work/mixed.out" "$work/handler.out" && fail "sample_mixed.c: the handler changed nothing"

# ---- null, sampled, with loop events ----
for p in sample_summaries sample_mixed; do
	by_hand "$sum" $p
	by_hand "$off" $p --no-summarize
done
[ "$(plan_of "$sum/callbacks.c")" = 0xc0000455 ] ||
	fail "null sampled: expected plan 0xc0000455, got $(plan_of "$sum/callbacks.c")"
[ "$(plan_of "$off/callbacks.c")" = 0x00000455 ] ||
	fail "null sampled, --no-summarize: expected plan 0x00000455, got $(plan_of "$off/callbacks.c")"
grep -q 'sample_countdown' "$sum/callbacks.c" || fail "null with sample: has no countdown"
grep -q 'mixed_walk(f, iteration + 1, to);' "$sum/callbacks.c" ||
	fail "null with sample: no walk in its mixed entry points"
for v in "$sum" "$off"; do
	profile "$v/sample_summaries" MNEMO_TEST_SAMPLE "" "$v/null.1.yaml" "$work/native.out"
	profile "$v/sample_summaries" MNEMO_TEST_SAMPLE 100 "$v/null.100.yaml" "$work/native.out"
	profile "$v/sample_mixed" MNEMO_TEST_SAMPLE "" "$v/mixed.1.yaml" "$work/mixed.out"
	profile "$v/sample_mixed" MNEMO_TEST_SAMPLE 100 "$v/mixed.100.yaml" "$work/mixed.out"
	profile "$v/sample_mixed" MNEMO_TEST_SAMPLE "" "$v/handler.1.yaml" "$work/handler.out" \
		100000 10 1
	profile "$v/sample_mixed" MNEMO_TEST_SAMPLE 100 "$v/handler.100.yaml" "$work/handler.out" \
		100000 10 1
done
summarized "null, N = 1" "$sum/null.1.yaml" "$off/null.1.yaml"
same "$sum/null.1.yaml" "$off/null.1.yaml" "null, N = 1"
all=$(accesses "$off/null.1.yaml") sampled=$(accesses "$sum/null.100.yaml")
about_100th "null, N = 100" "$sampled" "$all"
loop_events_all "null, N = 100" "$sum/null.100.yaml" "$off/null.1.yaml"
same "$sum/null.100.yaml" "$off/null.100.yaml" "null, N = 100"
echo "null sampled: plan 0xc0000455; N = 1: $all loads and stores, as the twin's; N = 100:" \
	"$sampled, loop_iter $(null_count "$sum/null.100.yaml" loop_iter), as the twin's"

summarized "null, mixed loops, N = 1" "$sum/mixed.1.yaml" "$off/mixed.1.yaml" 6000000
same "$sum/mixed.1.yaml" "$off/mixed.1.yaml" "null, mixed loops, N = 1"
[ "$(summarized_of "$sum/mixed.100.yaml")" = 0 ] ||
	fail "null, mixed loops, N = 100: expected no summary records, got $(summarized_of \
		"$sum/mixed.100.yaml") accesses summarized"
all=$(accesses "$off/mixed.1.yaml") sampled=$(accesses "$sum/mixed.100.yaml")
about_100th "null, mixed loops, N = 100" "$sampled" "$all"
said="N = 1: $all loads and stores, 6000000 summarized, as the twin's; N = 100: $sampled, as the"
loop_events_all "null, mixed loops, N = 100" "$sum/mixed.100.yaml" "$off/mixed.1.yaml"
same "$sum/mixed.100.yaml" "$off/mixed.100.yaml" "null, mixed loops, N = 100"
summarized "null, handler, N = 1" "$sum/handler.1.yaml" "$off/handler.1.yaml" 6001000
same "$sum/handler.1.yaml" "$off/handler.1.yaml" "null, handler, N = 1"
all=$(accesses "$off/handler.1.yaml") sampled=$(accesses "$sum/handler.100.yaml")
about_100th "null, handler, N = 100" "$sampled" "$all"
loop_events_all "null, handler, N = 100" "$sum/handler.100.yaml" "$off/handler.100.yaml"
echo "null sampled, mixed loops: $said twin's; with a handler's loop in one: as the twin's at" \
	"N = 1, every loop event at N = 100"

# ---- structure-affinity: mnemo-cc, and its per-access twin ----
for p in sample_summaries sample_mixed; do
	"$bin/mnemo-cc" -m structure-affinity -O2 -g "$src/$p.c" -o "$sum/sa-$p"
	"$bin/mnemo-cc" -m structure-affinity --mnemo-no-summarize -O2 -g "$src/$p.c" \
		-o "$off/sa-$p"
done
for v in "$sum" "$off"; do
	profile "$v/sa-sample_summaries" MNEMO_AFFINITY_SAMPLE "" "$v/sa.1.yaml" "$work/native.out"
	profile "$v/sa-sample_summaries" MNEMO_AFFINITY_SAMPLE 100 "$v/sa.100.yaml" \
		"$work/native.out"
	profile "$v/sa-sample_mixed" MNEMO_AFFINITY_SAMPLE "" "$v/sam.1.yaml" "$work/mixed.out"
	profile "$v/sa-sample_mixed" MNEMO_AFFINITY_SAMPLE 100 "$v/sam.100.yaml" "$work/mixed.out"
	profile "$v/sa-sample_mixed" MNEMO_AFFINITY_SAMPLE "" "$v/sah.1.yaml" "$work/handler.out" \
		100000 10 1
	profile "$v/sa-sample_mixed" MNEMO_AFFINITY_SAMPLE 100 "$v/sah.100.yaml" \
		"$work/handler.out" 100000 10 1
done
summarized "structure-affinity, N = 1" "$sum/sa.1.yaml" "$off/sa.1.yaml"
same "$sum/sa.1.yaml" "$off/sa.1.yaml" "structure-affinity, N = 1"
total() { grep -o "totals: {accesses: [0-9]*" "$1" | grep -o "[0-9]*$"; }
all=$(total "$sum/sa.1.yaml") sampled=$(total "$sum/sa.100.yaml")
about_100th "structure-affinity, N = 100" "$sampled" "$all"
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

summarized "structure-affinity, mixed loops, N = 1" "$sum/sam.1.yaml" "$off/sam.1.yaml" 6000000
same "$sum/sam.1.yaml" "$off/sam.1.yaml" "structure-affinity, mixed loops, N = 1"
all=$(total "$sum/sam.1.yaml") sampled=$(total "$sum/sam.100.yaml")
about_100th "structure-affinity, mixed loops, N = 100" "$sampled" "$all"
grep -q 'unattributed_accesses: 0,' "$sum/sam.100.yaml" ||
	fail "structure-affinity, mixed loops, N = 100: sampled accesses outside the arrays:" \
		"$(grep -o 'unattributed_accesses: [0-9]*' "$sum/sam.100.yaml")"
# The same streams as the twin's, each about as often: one in N of a stream's accesses, but not
# the same ones (without loop events a mixed loop's summarized accesses are walked at its close).
streams() {
	section "$1" | sed -n 's/.*{loop: \([0-9]*\), site: \([0-9]*\), .*field: \([0-9]*\),.*/\1 \2 \3/p' |
		sort -u
}
[ "$(streams "$sum/sam.100.yaml" | wc -l)" -ge 3 ] ||
	fail "structure-affinity, mixed loops, N = 100: expected 3 or more streams, got" \
		"$(streams "$sum/sam.100.yaml" | wc -l)"
cmp -s <(streams "$sum/sam.100.yaml") <(streams "$off/sam.100.yaml") ||
	fail "structure-affinity, mixed loops, N = 100: streams differ from the twin's:" \
		"$(diff <(streams "$sum/sam.100.yaml") <(streams "$off/sam.100.yaml") | head -5)"
about_100th "structure-affinity, mixed loops, N = 100, the twin" "$(total "$off/sam.100.yaml")" "$all"
summarized "structure-affinity, handler, N = 1" "$sum/sah.1.yaml" "$off/sah.1.yaml" 6001000
same "$sum/sah.1.yaml" "$off/sah.1.yaml" "structure-affinity, handler, N = 1"
about_100th "structure-affinity, handler, N = 100" "$(total "$sum/sah.100.yaml")" \
	"$(total "$sum/sah.1.yaml")"
echo "structure-affinity, mixed loops: N = 1: $all accesses, sections identical; N = 100:" \
	"$sampled accesses, in the twin's streams; with a handler's loop in one: identical at N = 1"
echo "1 passed, 0 failed"
