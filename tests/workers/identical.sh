#!/usr/bin/env bash
# Data parallelism must not change a profile: every bench program, built for every module in the
# build tree (one backend hosts them all), runs with -j 1, -j 2 and -j 4, the threads sharing whole
# modules and then (MNEMO_SPLIT=shard) shares of every module that shards, and --reproducible
# (no pid, times or resources in the profile), and the five profiles must be identical byte for
# byte.  Inputs are small versions of
# the bench's (bench/programs/small_inputs.sh); a bench program without an entry there
# fails the test rather than being skipped.
# Usage: identical.sh BUILD_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 programs=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-workers-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

source "$programs/small_inputs.sh"   # small_args NAME

modules=$(ls "$build/share/mnemo/modules" | paste -sd, -)
[ -n "$modules" ] || fail "no modules in $build/share/mnemo/modules"
echo "modules: $modules"
n=0
for src in "$programs"/*.c; do
	p=$(basename "$src" .c)
	args=$(small_args "$p") || fail "bench program $p has no small input in bench/programs/small_inputs.sh: add one"
	"$bin/mnemo-cc" -m "$modules" -O2 -g -I"$programs" "$src" -o "$work/$p"
	"$work/$p" $args >"$work/$p.native"
	# -j 2s, 4s: the threads share the modules by shard (MNEMO_SPLIT=shard), not whole modules;
	# MNEMO_PAD keeps the program's environment, and so its stack, the same size in every run.
	for j in 1m 2m 4m 2s 4s; do
		split=module pad=x
		[[ $j != *s ]] || split=shard pad=xx
		MNEMO_SPLIT=$split MNEMO_PAD=$pad "$bin/mnemo" run --reproducible -j ${j%?} \
			-o "$work/$p.$j.yaml" "$work/$p" $args >"$work/$p.$j.out" || fail "$p -j $j: exit status $?"
		cmp -s "$work/$p.native" "$work/$p.$j.out" || fail "$p -j $j: the program's output changed"
		grep -q '^complete: true' "$work/$p.$j.yaml" || fail "$p -j $j: profile incomplete"
	done
	for j in 2m 4m 2s 4s; do
		if ! cmp -s "$work/$p.1m.yaml" "$work/$p.$j.yaml"; then
			{ diff "$work/$p.1m.yaml" "$work/$p.$j.yaml" || true; } | head -20 >&2
			fail "$p: the profile with -j $j differs from -j 1"
		fi
	done
	echo "$p ($args): -j 1, 2, 4, and 2, 4 split by shard identical ($(wc -c <"$work/$p.1m.yaml") bytes)"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no bench programs in $programs"
echo "PASS: $n programs, modules $modules"
