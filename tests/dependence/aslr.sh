#!/usr/bin/env bash
# Stable profiles whatever the address layout (README rule 1): programs/structs.c, whose stack
# arrays of 24-byte structures are copied whole, run under mnemo run --reproducible with the
# address randomization of the system (runs without PAD) and with its stack moved by PAD bytes
# (0, 8, 16, 24: one of three consecutive ones puts a page boundary inside a copy of every
# structure that straddles it), also with -j 2: every profile must be byte-identical to the first.
# Usage: aslr.sh BUILD_DIR PROGRAMS_DIR
set -euo pipefail
build=$1 programs=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-dep-aslr.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null || echo 0)" != 0 ] ||
	echo "note: address randomization is off here; only PAD moves the stack"
"$bin/mnemo-cc" -m dependence -O2 -g "$programs/structs.c" -o "$work/structs"
first=
for run in r1 r2 r3 p0 p8 p16 p24 j2; do
	args=(--reproducible -o "$work/$run.yaml")
	[ "$run" = j2 ] && args+=(-j 2)
	pad=
	case $run in p*) pad=${run#p} ;; esac
	PAD=$pad "$bin/mnemo" run "${args[@]}" "$work/structs" >/dev/null ||
		fail "$run: mnemo run failed"
	grep -q 'clipped: 0,' "$work/$run.yaml" || fail "$run: $(grep -o 'lost: .*' "$work/$run.yaml")"
	if [ -z "$first" ]; then
		first=$run
	elif ! cmp -s "$work/$first.yaml" "$work/$run.yaml"; then
		diff "$work/$first.yaml" "$work/$run.yaml" | head -20
		fail "the profile of run $run differs from run $first's"
	fi
done
echo "8 runs, one profile"
