#!/usr/bin/env bash
# The baseline of PROMPT's Table 8 end to end: `mnemo-cc --mnemo-no-specialize` sends every event
# of the catalogue with every argument, and the backend must decode them all and drop those its
# module has no handler for.  bench/programs histogram.c and bintree.c, at their small inputs
# (bench/programs/small_inputs.sh), built with mnemo-cc from the build tree:
#   - for -m dependence, specialized (with loop summaries and without, --mnemo-no-summarize), not
#     specialized, and not specialized with the Lamport queue (row 1 of the breakdown): the
#     program's stdout is the native build's, the profiles' `modules:` sections are byte-identical
#     (--reproducible: no pid, times or resources), and the header's events count is larger
#     without specialization;
#   - for -m null: the same, and the counts say where the extra events went: specialized without
#     summaries, null has a handler for every event decoded (its counts add up to the header's
#     events; with summaries the backend expands records, so they need not); not specialized, the
#     header counts more events than null's handlers saw, and null's counts are unchanged (the
#     rest were decoded and dropped).
# Usage: no_specialize.sh BUILD_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 programs=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-nospec-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

source "$programs/small_inputs.sh"   # small_args NAME
cc=${MNEMO_CLANG:-clang-19}

# The header's count of events decoded: `program: {..., events: N[, summarized_accesses: M]}`.
events() {
	sed -n 's/^program: {.*, events: \([0-9][0-9]*\)[,}].*$/\1/p' "$1"
}
# The profile from `modules:` on: what the modules wrote.
modules_section() {
	sed -n '/^modules:/,$p' "$1"
}
# The sum of null's counts.
null_total() {
	modules_section "$1" | awk '/^      [a-z_]+: [0-9]+$/ { s += $2 } END { print s + 0 }'
}

for p in histogram bintree; do
	args=$(small_args "$p") || fail "bench program $p has no small input"
	"$cc" -O2 -I"$programs" "$programs/$p.c" -o "$work/$p.native" -lm
	# shellcheck disable=SC2086  # $args: the program's arguments, split
	"$work/$p.native" $args >"$work/$p.native.out"
	for m in dependence null; do
		builds="spec spec-nosum nospec"
		[ "$m" = dependence ] && builds="spec spec-nosum nospec nospec-lamport"
		for b in $builds; do
			case $b in
			spec) opts=() ;;
			spec-nosum) opts=(--mnemo-no-summarize) ;;
			nospec) opts=(--mnemo-no-specialize) ;;
			nospec-lamport) opts=(--mnemo-no-specialize --mnemo-queue=lamport) ;;
			esac
			# The same path for every build: argv[0] and so the stack's layout stay the same.
			mkdir -p "$work/$b"
			exe=$work/$b/$p
			"$bin/mnemo-cc" -m "$m" "${opts[@]}" -O2 -g -I"$programs" "$programs/$p.c" \
				-o "$exe" || fail "$p -m $m ${opts[*]}: build failed"
			prof=$work/$p.$m.$b.yaml
			# shellcheck disable=SC2086
			"$bin/mnemo" run --reproducible -o "$prof" "$exe" $args >"$exe.out" ||
				fail "$p -m $m ${opts[*]}: exit status $?"
			cmp -s "$work/$p.native.out" "$exe.out" ||
				fail "$p -m $m ${opts[*]}: the program's output differs from the native build's"
			grep -q '^complete: true' "$prof" || fail "$p -m $m ${opts[*]}: profile incomplete"
			[ -n "$(events "$prof")" ] || fail "$p -m $m ${opts[*]}: no events count in the header"
		done
		spec=$work/$p.$m.spec.yaml
		for b in $builds; do
			[ "$b" = spec ] && continue
			other=$work/$p.$m.$b.yaml
			if ! cmp -s <(modules_section "$spec") <(modules_section "$other"); then
				diff <(modules_section "$spec") <(modules_section "$other") | head -20 >&2
				fail "$p -m $m: the modules: section differs between spec and $b"
			fi
			[ "$b" = spec-nosum ] && continue   # as many events when nothing was summarized
			[ "$(events "$other")" -gt "$(events "$spec")" ] ||
				fail "$p -m $m: $b decoded $(events "$other") events, not more than spec's $(events "$spec")"
		done
		if [ "$m" = null ]; then
			nosum=$work/$p.null.spec-nosum.yaml
			[ "$(null_total "$nosum")" = "$(events "$nosum")" ] ||
				fail "$p -m null: spec-nosum: counts add up to $(null_total "$nosum"), header says $(events "$nosum")"
			[ "$(null_total "$work/$p.null.nospec.yaml")" -lt "$(events "$work/$p.null.nospec.yaml")" ] ||
				fail "$p -m null: nospec: no event beyond those null has handlers for"
		fi
		echo "$p ($args) -m $m: modules: identical; events: $(for b in $builds; do
			printf '%s %s  ' "$b" "$(events "$work/$p.$m.$b.yaml")"; done)"
	done
done
echo "PASS"
