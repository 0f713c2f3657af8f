#!/usr/bin/env bash
# Loop summaries must not change a profile (pass/README.md, "Loop summaries"): every program is
# built twice for the same modules, with summaries and with `mnemo-cc --mnemo-no-summarize`, run
# with --reproducible, and the `modules:` part of the two profiles must be identical byte for
# byte.  The program's output and exit status must be those of the native build, and a profile
# complete without summaries must be complete with them (no summary lost).  Only the header may
# differ (the record counts, `summarized_accesses`).
#
#   identity.sh BUILD_DIR SOURCE_DIR [bench|tests|all]
#
# bench: every bench program (small inputs, bench/programs/small_inputs.sh) for every module alone
# and for the five profiling modules together.  tests: every test program (tests/*/programs/, no
# arguments) for the four modules that take no loaded values (dependence, object-relative,
# structure-affinity, null) together, and for the five together (value-pattern's loops are
# summarized with each access's value checked against the published set).  The test fails unless some
# accesses did arrive as summaries, so that it cannot pass by summarizing nothing.
#
# Left out: exit_paths (tests/integration), which prints its children's pids, different on every
# run, and leaves them sleeping for 30 s (test_e2e.c kills them; here nothing would).  segv and
# abort stay: their loop ends before the crash, and both builds' profiles must agree.
#
# Addresses are in profiles (value-pattern's values are often pointers), so the two builds must
# lay the program out alike although their code differs (summaries add code at loop exits):
#  - both run from paths of the same length in the same environment (argv[0] and the environment
#    are on the stack);
#  - both are linked with every segment at a 2 MiB boundary (-z separate-loadable-segments), so
#    that globals, vtables and the heap (brk starts after .bss) have the same addresses in both.
# Code addresses still differ: a program that loads them (cxx's virtual calls load vtable slots)
# is compared without value-pattern, the one module that records loaded values.
set -euo pipefail
build=$1 src=$2 what=${3:-all}
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-summaries-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
failed=0
bad() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }
unset MNEMO_WORKERS MNEMO_DEP_TABLE MNEMO_DEP_CONTEXT MNEMO_AFFINITY_SAMPLE MNEMO_OUTPUT
source "$src/bench/programs/small_inputs.sh"   # small_args NAME

five=dependence,value-pattern,object-relative,rds-shape,structure-affinity
novalue=dependence,object-relative,structure-affinity,null
summarized=0 pairs=0
mkdir "$work/sum" "$work/off"   # with summaries, without: names of the same length

# The value of `summarized_accesses:` in a profile's program: line (0 when absent).
summarized_of() {
	sed -n 's/^program: .*summarized_accesses: \([0-9]*\).*/\1/p' "$1" | grep . || echo 0
}

# check NAME SOURCE MODULES ARGS...: both builds, both runs, compared.  A difference is reported
# and counted, and the next comparison goes on: one run names every pair that differs.
check() {
	local name=$1 source=$2 mods=$3
	shift 3
	local tag=$name.${mods//,/+} cc=$bin/mnemo-cc v st n
	# shellcheck disable=SC2054  # the commas are the linker's
	local flags=(-O2 -g -I"$src/bench/programs" -lm -lpthread
		-Wl,-z,separate-loadable-segments -Wl,-z,max-page-size=0x200000)
	[[ $source != *.cpp ]] || cc=$bin/mnemo-c++
	"$cc" -m "$mods" "$source" -o "$work/sum/$tag" "${flags[@]}"
	"$cc" -m "$mods" --mnemo-no-summarize "$source" -o "$work/off/$tag" "${flags[@]}"
	pairs=$((pairs + 1))
	for v in sum off; do
		st=0
		# (the subshell's stderr: bash's note when the program dies of a signal)
		(cd "$work/$v" && timeout 60 "$bin/mnemo" run --reproducible -o "$work/$v/$tag.yaml" \
			"./$tag" "$@" >"$work/$v/$tag.out" 2>"$work/$v/$tag.err") 2>/dev/null || st=$?
		rm -f "$work/$v/$tag"   # 2 MiB and more each, sparse or not
		echo "$st" >>"$work/$v/$tag.out"
		if ! cmp -s "$work/$name.native" "$work/$v/$tag.out"; then
			{ diff "$work/$name.native" "$work/$v/$tag.out" || true; } | head -10 >&2
			bad "$name -m $mods ($v): output or exit status differs from native (<)"
			return
		fi
		sed -n '/^modules:/,$p' "$work/$v/$tag.yaml" >"$work/$v/$tag.sections"
		[ -s "$work/$v/$tag.sections" ] || { bad "$name -m $mods ($v): no modules: section"; return; }
	done
	if ! cmp -s "$work/off/$tag.sections" "$work/sum/$tag.sections"; then
		{ diff "$work/off/$tag.sections" "$work/sum/$tag.sections" || true; } | head -20 >&2
		bad "$name -m $mods: sections differ with summaries (> lines) and without (<)"
		return
	fi
	if grep -q '^complete: true' "$work/off/$tag.yaml" &&
		! grep -q '^complete: true' "$work/sum/$tag.yaml"; then
		grep '^incomplete_reason' "$work/sum/$tag.yaml" >&2 || true
		bad "$name -m $mods: the profile is incomplete with summaries, complete without"
		return
	fi
	n=$(summarized_of "$work/sum/$tag.yaml")
	[ "$(summarized_of "$work/off/$tag.yaml")" = 0 ] ||
		{ bad "$name -m $mods: the --mnemo-no-summarize build still summarized"; return; }
	summarized=$((summarized + n))
	printf '  %-24s %-58s identical, %s accesses as summaries\n' "$name" "$mods" "$n"
}

native() {   # native NAME SOURCE ARGS...: the reference output and exit status
	local name=$1 source=$2 st=0 c=clang-19
	shift 2
	[[ $source != *.cpp ]] || c=clang++-19
	$c -O2 -I"$src/bench/programs" "$source" -o "$work/$name.bin" -lm -lpthread
	(cd "$work" && timeout 60 "./$name.bin" "$@" >"$work/$name.native" 2>/dev/null) 2>/dev/null ||
		st=$?
	echo "$st" >>"$work/$name.native"
}

if [ "$what" = bench ] || [ "$what" = all ]; then
	echo "bench programs, each module alone and the five together:"
	for source in "$src"/bench/programs/*.c; do
		name=$(basename "$source" .c)
		args=$(small_args "$name") || fail "bench program $name has no small input"
		# shellcheck disable=SC2086  # $args: the program's arguments, split
		native "$name" "$source" $args
		for mods in dependence value-pattern object-relative rds-shape structure-affinity null \
			"$five"; do
			# shellcheck disable=SC2086
			check "$name" "$source" "$mods" $args
		done
	done
fi
if [ "$what" = tests ] || [ "$what" = all ]; then
	echo "test programs, the modules without values together and the five together:"
	for source in "$src"/tests/*/programs/*.c "$src"/tests/*/programs/*.cpp; do
		name=$(basename "${source%.*}")
		case $name in
		exit_paths) continue ;;   # see above: pids in its output, children left behind
		esac
		# Named after its folder too: list.c and inputs.c are in two each.
		name=$(basename "$(dirname "$(dirname "$source")")").$name
		native "$name" "$source"
		sets=("$novalue" "$five")
		[ "$name" != integration.cxx ] || sets=("$novalue" "${five/value-pattern,/}")   # see above
		for mods in "${sets[@]}"; do
			check "$name" "$source" "$mods"
		done
	done
fi
[ "$failed" = 0 ] || fail "$failed of $pairs comparisons failed (above)"
[ "$summarized" -gt 0 ] || fail "no access arrived as a summary in $pairs comparisons"
echo "PASS: $pairs comparisons identical; $summarized accesses arrived as summaries"
