#!/usr/bin/env bash
# One backend for many modules must not change a module's profile: every bench program, built
# for the five profiling modules together and for each alone, runs with --reproducible, and each
# module's section of the five's profile must be byte-identical to the section of its own
# profile.  The five's binary runs three ways: one backend on one thread, one backend on two
# threads (modules dealt to threads by cost), and one backend process per module; each is held
# to the modules built alone.  Every binary sits at the same path length and runs from a folder
# of the same name length with an environment of the same size, so the program's stack is laid
# out alike.  Inputs are bench/programs/small_inputs.sh's.
#
# value-pattern reports values as loaded, pointers included, and the strides between accesses
# that may lie in different mappings.  Its binary built alone is smaller, so its heap (which
# starts where the binary ends, address randomization off) and its globals lie elsewhere, and
# such numbers differ.  So its section is held byte for byte to the five's binary run with
# value-pattern alone (MNEMO_MODULES: the same binary, the same layout), and to its own build's
# with every address-sized number (13 digits or more: above 2^40) masked.
# Usage: hosted.sh BUILD_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 programs=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-hosted-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

source "$programs/small_inputs.sh"   # small_args NAME
five="dependence value-pattern object-relative rds-shape structure-affinity"

# section MODULE PROFILE: the module's section under `modules:`, its key line to the next key.
section() {
	awk -v m="$1" '
		/^modules:/ { in_mods = 1; next }
		in_mods && /^[^ ]/ { in_mods = 0 }
		in_mods && /^  [^ ]/ { key = $0; sub(/^  /, "", key); sub(/:.*/, "", key)
			gsub(/["'\'']/, "", key); on = (key == m) }
		in_mods && on { print }' "$2"
}

# addresses_masked: stdin with every number of 13 digits or more (not a float's digits) as ADDR.
addresses_masked() { perl -pe 's/(?<![.\d])-?\d{13,}(?![.\de])/ADDR/g'; }

# same A B WHY: fails with WHY and the first lines of the difference unless A and B are equal.
same() {
	if ! cmp -s "$1" "$2"; then
		{ diff "$1" "$2" || true; } | head -20 >&2
		fail "$3"
	fi
}

# run "VAR=value ..." DIR NAME ARGS...: DIR/prog under `mnemo run --reproducible` with those
# variables set, and MNEMO_PAD to bring them to the same size in every run; profile
# DIR/NAME.yaml; the output must be the native one.
run() {
	local vars=$1 dir=$2 name=$3 pad
	shift 3
	pad=$(printf '%*s' $((120 - ${#vars})) '' | tr ' ' x)
	# shellcheck disable=SC2086  # VARS are words on purpose
	(cd "$dir" && env $vars MNEMO_PAD="$pad" "$bin/mnemo" run --reproducible -o "$name.yaml" \
		./prog "$@" >"$name.out") || fail "$dir/prog $name: exit status $?"
	cmp -s "$work/native.out" "$dir/$name.out" || fail "$dir/prog $name: the program's output changed"
	grep -q '^complete: true' "$dir/$name.yaml" || fail "$dir/prog $name: profile incomplete"
}

n=0
for src in "$programs"/*.c; do
	p=$(basename "$src" .c)
	args=$(small_args "$p") || fail "bench program $p has no small input in bench/programs/small_inputs.sh"
	i=0
	for m in five $five; do
		d=$work/d$i
		mkdir -p "$d"
		if [ $m = five ]; then mods=${five// /,}; else mods=$m; fi
		"$bin/mnemo-cc" -m "$mods" -O2 -g -I"$programs" "$src" -o "$d/prog"
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	MNEMO_DISABLE=1 "$work/d0/prog" $args >"$work/native.out"
	i=1
	for m in $five; do
		# shellcheck disable=SC2086
		run "MNEMO_WORKERS=1 MNEMO_BACKENDS=one MNEMO_MODULES=" "$work/d$i" al $args
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	{
		run "MNEMO_WORKERS=1 MNEMO_BACKENDS=one MNEMO_MODULES=value-pattern" "$work/d0" vp $args
		run "MNEMO_WORKERS=1 MNEMO_BACKENDS=one MNEMO_MODULES=" "$work/d0" o1 $args
		run "MNEMO_WORKERS=2 MNEMO_BACKENDS=one MNEMO_MODULES=" "$work/d0" o2 $args
		run "MNEMO_WORKERS=1 MNEMO_BACKENDS=per-module MNEMO_MODULES=" "$work/d0" pm $args
	}
	i=1
	for m in $five; do
		ref=$work/d$i/al.yaml
		if [ "$m" = value-pattern ]; then
			ref=$work/d0/vp.yaml
			section "$m" "$work/d$i/al.yaml" | addresses_masked >"$work/alone.masked"
		fi
		section "$m" "$ref" >"$work/alone.sec"
		[ -s "$work/alone.sec" ] || fail "$p: no $m section in its own profile"
		for layout in o1 o2 pm; do
			section "$m" "$work/d0/$layout.yaml" >"$work/five.sec"
			same "$work/alone.sec" "$work/five.sec" "$p: the $m section of the five's profile ($layout) differs from $m's own"
			[ "$m" != value-pattern ] || same "$work/alone.masked" <(addresses_masked <"$work/five.sec") \
				"$p: the $m section of the five's profile ($layout), addresses masked, differs from $m's build alone"
		done
		i=$((i + 1))
	done
	echo "$p ($args): each of the five sections identical alone and together (one backend on 1 and 2 threads, one per module)"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no bench programs in $programs"
echo "PASS: $n programs"
