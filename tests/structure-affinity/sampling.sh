#!/usr/bin/env bash
# Sampling mode (MNEMO_AFFINITY_SAMPLE=1000: one load or store in about 1000 sent, by the
# frontend's countdown) gives the advice of the full mode, on every test program (programs/, -O1,
# the whole workload repeated 300 times: REPEAT, their first argument) and every bench program
# (-O2, at the inputs below: a few million accesses, so a few thousand samples).
# Both modes run with MNEMO_AFFINITY_TOP=10; every structure with at least 5% of the cost in the
# full mode must be in the sampled profile with the same advice.  (Below 5%, a structure's rank
# among near-equal ones is chance under sampling; a field below 1% of its structure's cost is
# rare and in no advice: modules/structure-affinity/README.md.)  The sampled profile must say
# sample_period: 1000 and hold about a thousandth of the full mode's accesses.
# Usage: sampling.sh BUILD_DIR PROGRAMS_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 programs=$2 bench=$3
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-affinity-sampling.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Bench inputs: bigger than bench/programs/small_inputs.sh's, so that a sample has enough points.
medium_args() {
	case $1 in
	aos) echo "20000 30" ;;
	bintree) echo "16 4" ;;
	graph) echo "20000 10" ;;
	hashtable) echo "600000" ;;
	histogram) echo "200000 10" ;;
	linkedlist) echo "20000" ;;
	matmul) echo "120" ;;
	stencil) echo "256 30" ;;
	*) return 1 ;;
	esac
}

# structures FILE: "site_N share advice", one line a structure of the profile.
structures() {
	awk '/^      site_[0-9]+:/ { s = $1 } /^        share:/ { sh = $2 }
	     /^        advice:/ { sub(/^ *advice: */, ""); print s, sh, $0 }' "$1"
}
# advice FILE [MIN_SHARE]: "site_N advice" of the structures with at least MIN_SHARE, sorted.
advice() {
	structures "$1" | awk -v min="${2:-0}" '$2 >= min { s = $1; $1 = ""; $2 = ""; sub(/^ +/, ""); print s, $0 }' | sort
}
total() { grep -o "totals: {accesses: [0-9]*" "$1" | grep -o "[0-9]*$"; }

# check NAME EXE ARGS...
check() {
	local name=$1 exe=$2 full=$work/$1.full.yaml sampled=$work/$1.sampled.yaml missing n a b
	shift 2
	MNEMO_AFFINITY_TOP=10 MNEMO_OUTPUT=$full "$exe" "$@" >/dev/null || fail "$name: exit status $?"
	MNEMO_AFFINITY_TOP=10 MNEMO_AFFINITY_SAMPLE=1000 MNEMO_OUTPUT=$sampled "$exe" "$@" >/dev/null ||
		fail "$name sampled: exit status $?"
	grep -q "sample_period: 1000$" "$sampled" || fail "$name: the sampled profile has no sample_period: 1000"
	a=$(total "$full") b=$(total "$sampled")
	[ "$b" -ge $((a / 2000)) ] && [ "$b" -le $((a / 500)) ] ||
		fail "$name: $b accesses sampled of $a: expected about $((a / 1000))"
	n=$(advice "$full" 0.05 | wc -l)
	[ "$n" -ge 1 ] || fail "$name: no structure with 5% of the cost"
	missing=$(comm -23 <(advice "$full" 0.05) <(advice "$sampled"))
	[ -z "$missing" ] || fail "$name: the sampled mode advises otherwise (full: $missing; sampled: $(advice "$sampled" | tr '\n' ';'))"
	echo "$name: $n hot structures, the same advice; $b of $a accesses sampled"
}

n=0
for src in "$programs"/*.c "$programs"/*.cpp; do
	name=$(basename "${src%.*}")
	cc=$bin/mnemo-cc
	[[ $src == *.cpp ]] && cc=$bin/mnemo-c++
	"$cc" -m structure-affinity -O1 -g "$src" -o "$work/$name"
	check "$name" "$work/$name" 300
	n=$((n + 1))
done
for src in "$bench"/*.c; do
	name=$(basename "$src" .c)
	args=$(medium_args "$name") || fail "bench program $name has no input in sampling.sh: add one"
	"$bin/mnemo-cc" -m structure-affinity -O2 -I"$bench" "$src" -o "$work/$name"
	# shellcheck disable=SC2086  # ARGS are words on purpose
	check "$name" "$work/$name" $args
	n=$((n + 1))
done
echo "PASS: sampling one access in 1000 gives the full mode's advice on all $n programs"
