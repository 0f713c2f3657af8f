#!/usr/bin/env bash
# The module's row map (backend/map.h, struct mn_rows) against its slow, obviously correct twin,
# the plain chained map of bench/maps/rows_plain.c (the backend mnemo-backend-plain), on real event
# streams: every bench program at its small input, built once for the dependence module, runs with
# mnemo-backend and with mnemo-backend-plain, each with 1 and 2 workers, and with
# MNEMO_DEP_CONTEXT=1 once each; the profiles' `modules:` sections must be identical byte for byte
# (--reproducible).
# Usage: tables.sh BUILD_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 programs=$2
bin=$build/bin
plain=$bin/mnemo-backend-plain
[ -x "$plain" ] || { echo "FAIL: $plain not built (bench/maps)" >&2; exit 1; }
work=$(mktemp -d /tmp/mnemo-dep-tables.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset MNEMO_BACKEND MNEMO_DEP_CONTEXT MNEMO_DEP_LOOP MNEMO_DEP_CLOCK_LIMIT MNEMO_WORKERS

source "$programs/small_inputs.sh"   # small_args NAME

# profile NAME TAG ENV...: runs $work/NAME with its small input and the environment ENV; the
# `modules:` section goes to $work/NAME.TAG.mod, stderr to $work/NAME.TAG.err.
profile() {
	local p=$1 tag=$2
	shift 2
	# shellcheck disable=SC2086  # args are words on purpose
	env "$@" "$bin/mnemo" run --reproducible -o "$work/$p.$tag.yaml" "$work/$p" $args \
		>"$work/$p.$tag.out" 2>"$work/$p.$tag.err" || fail "$p $tag: exit status $?"
	grep -q '^complete: true' "$work/$p.$tag.yaml" || fail "$p $tag: profile incomplete"
	sed -n '/^modules:/,$p' "$work/$p.$tag.yaml" >"$work/$p.$tag.mod"
	grep -q '^  dependence:' "$work/$p.$tag.mod" || fail "$p $tag: no dependence section"
}

same() {   # same NAME TAG1 TAG2
	if ! cmp -s "$work/$1.$2.mod" "$work/$1.$3.mod"; then
		{ diff "$work/$1.$2.mod" "$work/$1.$3.mod" || true; } | head -20 >&2
		fail "$1: $3 differs from $2"
	fi
}

n=0
for src in "$programs"/*.c; do
	p=$(basename "$src" .c)
	args=$(small_args "$p") || fail "bench program $p has no small input in bench/programs/small_inputs.sh: add one"
	"$bin/mnemo-cc" -m dependence -O2 -g -I"$programs" "$src" -o "$work/$p"
	profile "$p" red1 MNEMO_WORKERS=1
	profile "$p" plain1 MNEMO_WORKERS=1 MNEMO_BACKEND="$plain"
	profile "$p" red2 MNEMO_WORKERS=2
	profile "$p" plain2 MNEMO_WORKERS=2 MNEMO_BACKEND="$plain"
	profile "$p" redctx MNEMO_WORKERS=2 MNEMO_DEP_CONTEXT=1
	profile "$p" plainctx MNEMO_WORKERS=2 MNEMO_DEP_CONTEXT=1 MNEMO_BACKEND="$plain"
	for tag in plain1 red2 plain2; do
		same "$p" red1 "$tag"
	done
	same "$p" redctx plainctx
	grep -q 'context: true' "$work/$p.redctx.mod" || fail "$p: MNEMO_DEP_CONTEXT=1 had no effect"
	rows=$(grep -c '{loop: .*, kind: ' "$work/$p.red1.mod" || true)
	[ "$rows" -gt 0 ] || fail "$p: no dependence rows: nothing compared"
	echo "$p ($args): plain = reduction, 1 and 2 workers, with and without contexts ($rows rows)"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no bench programs in $programs"

echo "PASS: $n programs, plain = reduction"
