#!/usr/bin/env bash
# Values as sets (runtime/abi.h, struct mn_value_set) must not change a profile: every bench
# program, built for value-pattern (which takes `value`) and for the five profiling modules, runs
# with --reproducible twice, the program checking each value against the published sets (the
# default) and sending every value (MNEMO_ALL_VALUES=1, the slow twin), and the two profiles must
# be identical byte for byte.  Small inputs (bench/programs/small_inputs.sh).
# Usage: value_sets.sh BUILD_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 programs=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-value-sets-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset MNEMO_ALL_VALUES MNEMO_WORKERS MNEMO_OUTPUT MNEMO_MODULES
source "$programs/small_inputs.sh"   # small_args NAME

n=0
for mods in value-pattern dependence,value-pattern,object-relative,rds-shape,structure-affinity; do
	for src in "$programs"/*.c; do
		p=$(basename "$src" .c)
		args=$(small_args "$p") || fail "bench program $p has no small input"
		"$bin/mnemo-cc" -m "$mods" -O2 -g -I"$programs" "$src" -o "$work/$p" -lm
		# The same environment size in both runs: argv's addresses are values too.
		MNEMO_ALL_VALUES=0 "$bin/mnemo" run --reproducible -o "$work/set1.yaml" "$work/$p" \
			$args >/dev/null ||
			fail "$p ($mods): exit status $?"
		MNEMO_ALL_VALUES=1 "$bin/mnemo" run --reproducible -o "$work/all1.yaml" "$work/$p" \
			$args >/dev/null || fail "$p ($mods), MNEMO_ALL_VALUES=1: exit status $?"
		grep -q '^complete: true' "$work/set1.yaml" || fail "$p ($mods): profile incomplete"
		cmp -s "$work/set1.yaml" "$work/all1.yaml" ||
			fail "$p ($mods): the profile differs with every value sent: $(diff "$work/set1.yaml" "$work/all1.yaml" | head -5)"
		n=$((n + 1))
	done
done
echo "$n pairs identical"
