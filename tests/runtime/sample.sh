#!/usr/bin/env bash
# Sampling of loads and stores end to end (specializer/spec.h `sample:`): a program making
# 1,000,000 loads, built for the null module with `sample: MNEMO_TEST_SAMPLE` added to its spec,
# sends about 1000 load events with MNEMO_TEST_SAMPLE=1000 and all of them with the variable unset
# or 1, while loop events are never sampled; a bad value (0, negative, not a number, too large)
# gives one line on stderr naming the variable and the value and profiles every access; built for
# null and value-pattern (which needs every access), N = 1000 is ignored with one line naming
# value-pattern.  A wrapper backend records the variable as the backends see it: the N in effect.
# Usage: sample.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-sample-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc=${CLANG:-clang-19}
fail() { echo "FAIL: $*" >&2; exit 1; }

# The test's modules: null, sampled by MNEMO_TEST_SAMPLE, and the tree's value-pattern.
mkdir -p "$work/modules/null" "$work/modules/value-pattern"
sed 's/^events:$/sample: MNEMO_TEST_SAMPLE\nevents:/' "$build/share/mnemo/modules/null/events.yaml" \
	>"$work/modules/null/events.yaml"
grep -q '^sample: MNEMO_TEST_SAMPLE$' "$work/modules/null/events.yaml" || fail "could not add sample: to null's spec"
cp "$build/share/mnemo/modules/value-pattern/events.yaml" "$work/modules/value-pattern/"

# build MODULES EXE: the by-hand flow of README, with the test's module specs.
build() {
	local out=$work/spec-$2
	"$bin/mnemo-specialize" --catalogue "$build/share/mnemo/events.yaml" --modules-dir "$work/modules" \
		--modules "$1" --backend "$bin/mnemo-backend" -o "$out" >"$out.heap"
	"$cc" -O2 -flto -I"$build/include/mnemo" -c "$out/callbacks.c" -o "$out/callbacks.o"
	"$cc" -O2 -flto -fpass-plugin="$build/lib/mnemo/mnemo-pass.so" -c "$src/sample_loads.c" -o "$out/prog.o"
	local heap=
	grep -qx 'heap=1' "$out.heap" && heap=$build/lib/mnemo/libmnemo-heap.a
	"$cc" -O2 -flto -fuse-ld=lld -Wl,--load-pass-plugin="$build/lib/mnemo/mnemo-pass.so" "$out/prog.o" \
		"$out/callbacks.o" -Wl,--whole-archive "$build/lib/mnemo/libmnemo-rt.a" $heap \
		-Wl,--no-whole-archive -lpthread -ldl -o "$work/$2"
}
build null sampled
build null,value-pattern mixed
grep -q 'sample_countdown' "$work/spec-sampled/callbacks.c" || fail "null with sample: has no countdown"
if grep -q 'sample_countdown' "$work/spec-mixed/callbacks.c"; then fail "null,value-pattern counts down"; fi

# The backend as the runtime starts it, recording MNEMO_TEST_SAMPLE (or "unset") first.
cat >"$work/backend" <<EOS
#!/bin/sh
echo "\${MNEMO_TEST_SAMPLE-unset}" >>"$work/backend.env"
exec "$bin/mnemo-backend" "\$@"
EOS
chmod +x "$work/backend"

# run EXE [VALUE]: runs with MNEMO_TEST_SAMPLE=VALUE (unset without one); leaves stderr in
# $work/err, the backends' view of the variable in $seen, the null module's counts in $loads, $iters.
run() {
	local exe=$1
	rm -f "$work/backend.env" "$work/p.yaml"
	if [ $# -gt 1 ]; then
		MNEMO_TEST_SAMPLE=$2 MNEMO_BACKEND=$work/backend MNEMO_OUTPUT=$work/p.yaml "$work/$exe" \
			>"$work/out" 2>"$work/err" || fail "$exe ($2): exit $?: $(cat "$work/err")"
	else
		(unset MNEMO_TEST_SAMPLE; MNEMO_BACKEND=$work/backend MNEMO_OUTPUT=$work/p.yaml "$work/$exe" \
			>"$work/out" 2>"$work/err") || fail "$exe: exit $?: $(cat "$work/err")"
	fi
	[ "$(cat "$work/out")" = 3000000 ] || fail "$exe ${2-}: expected output 3000000, got $(cat "$work/out")"
	seen=$(sort -u "$work/backend.env" | tr '\n' ' ')
	seen=${seen% }
	loads=$(sed -n '/^  "null":/,$p' "$work/p.yaml" | awk '$1 == "load:" { print $2; exit }')
	iters=$(sed -n '/^  "null":/,$p' "$work/p.yaml" | awk '$1 == "loop_iter:" { print $2; exit }')
	[ -n "$loads" ] && [ -n "$iters" ] || fail "$exe ${2-}: no null counts in the profile"
	[ "$iters" = 1000000 ] || fail "$exe ${2-}: expected 1000000 loop_iter events (never sampled), got $iters"
}

# expect_all EXE WHAT: every load was sent.
expect_all() {
	[ "$loads" -ge 1000000 ] && [ "$loads" -le 1000010 ] ||
		fail "$1: expected every load sent (1000000..1000010), got $loads"
}

# One in N.
run sampled 1000
[ "$loads" -ge 700 ] && [ "$loads" -le 1300 ] || fail "sampled, N=1000: expected 700..1300 loads, got $loads"
[ ! -s "$work/err" ] || fail "sampled, N=1000: expected nothing on stderr, got: $(cat "$work/err")"
[ "$seen" = 1000 ] || fail "sampled, N=1000: the backend saw MNEMO_TEST_SAMPLE=$seen, expected 1000"
echo "N=1000: $loads load events of 1000000, loop_iter $iters"

# Every access: unset, and 1.
run sampled
expect_all "sampled, unset"
[ ! -s "$work/err" ] || fail "sampled, unset: expected nothing on stderr, got: $(cat "$work/err")"
[ "$seen" = 1 ] || fail "sampled, unset: the backend saw MNEMO_TEST_SAMPLE=$seen, expected 1"
run sampled 1
expect_all "sampled, N=1"
echo "unset and N=1: $loads load events"

# Bad values: one line naming the variable and the value, then every access.
for bad in 0 -3 abc 99999999999 1000000001; do
	run sampled "$bad"
	expect_all "sampled, MNEMO_TEST_SAMPLE=$bad"
	[ "$(wc -l <"$work/err")" -eq 1 ] || fail "MNEMO_TEST_SAMPLE=$bad: expected one line on stderr, got: $(cat "$work/err")"
	grep -qF "mnemo: MNEMO_TEST_SAMPLE: '$bad' is not a sampling period" "$work/err" ||
		fail "MNEMO_TEST_SAMPLE=$bad: expected the variable and value named, got: $(cat "$work/err")"
	[ "$seen" = 1 ] || fail "MNEMO_TEST_SAMPLE=$bad: the backend saw $seen, expected 1"
done
echo "bad values: one line each, every access: $(cat "$work/err")"

# A module needing every access: N ignored, with one line naming it.
run mixed 1000
expect_all "null,value-pattern, N=1000"
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "null,value-pattern: expected one line on stderr, got: $(cat "$work/err")"
grep -qF "mnemo: MNEMO_TEST_SAMPLE=1000 ignored: this program was also built for module value-pattern, which needs every load and store" "$work/err" ||
	fail "null,value-pattern: expected the ignored line naming value-pattern, got: $(cat "$work/err")"
[ "$seen" = 1 ] || fail "null,value-pattern: the backends saw MNEMO_TEST_SAMPLE=$seen, expected 1"
echo "null,value-pattern, N=1000: every access: $(cat "$work/err")"
run mixed
[ ! -s "$work/err" ] || fail "null,value-pattern, unset: expected nothing on stderr, got: $(cat "$work/err")"
echo "1 passed, 0 failed"
