#!/usr/bin/env bash
# A module that cannot start does not take the others down in one backend: the five modules'
# binary runs under an address-space limit (ulimit -v) too small for a shadow memory, so
# dependence, object-relative, rds-shape and structure-affinity refuse to start (each reserves
# terabytes of address space for its shadow); value-pattern, which keeps none, runs.  The
# program's output is unchanged, the profile holds value-pattern's section and says, for each of
# the four, that it failed and why.
# Usage: hosted_failure.sh BUILD_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 programs=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-hosted-failure.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin/mnemo-cc" -m dependence,value-pattern,object-relative,rds-shape,structure-affinity -O2 -g \
	-I"$programs" "$programs/stencil.c" -o "$work/prog"
MNEMO_DISABLE=1 "$work/prog" 64 6 >"$work/native.out"
(ulimit -v 1000000 && cd "$work" && ./prog 64 6 >"$work/out" 2>"$work/err") ||
	fail "the program's exit status changed: $?"
cmp -s "$work/native.out" "$work/out" || fail "the program's output changed"
prof=$work/prog.mnemo.yaml
[ -f "$prof" ] || fail "no profile; stderr: $(cat "$work/err")"
grep -q '^complete: false' "$prof" || fail "the profile does not say it is incomplete"
for m in dependence object-relative rds-shape structure-affinity; do
	grep -q "^incomplete_reason: .*module $m failed: cannot start: Cannot allocate memory" "$prof" ||
		fail "the profile does not say why $m failed: $(grep incomplete_reason "$prof")"
	! grep -q "^  $m:$" "$prof" || fail "a section for $m, which failed"
done
sed -n '/^modules:/,$p' "$prof" | grep -q '^  value-pattern:$' || fail "no value-pattern section"
grep -q 'site: ' <(sed -n '/^  value-pattern:$/,$p' "$prof") || fail "value-pattern's section is empty"
echo "PASS: four modules failed to start, value-pattern's section written, the profile says why"
