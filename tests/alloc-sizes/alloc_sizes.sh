#!/usr/bin/env bash
# alloc-sizes (modules/alloc-sizes/, README's "Writing a module") end to end: programs/sizes.c,
# whose allocations are known by construction, built for the module alone; its rows, largest
# bytes first; `mnemo merge` of two runs doubles every count and sum and keeps min, max and mean.
# Usage: alloc_sizes.sh BUILD_DIR PROGRAMS_DIR
set -euo pipefail
bin=$1/bin programs=$2
work=$(mktemp -d /tmp/mnemo-alloc-sizes-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset MNEMO_WORKERS MNEMO_OUTPUT MNEMO_MODULES

"$bin/mnemo-cc" -m alloc-sizes -O1 -g "$programs/sizes.c" -o "$work/sizes"
for r in 1 2; do
	"$bin/mnemo" run --reproducible -o "$work/run$r.yaml" "$work/sizes" || fail "run $r: exit $?"
done
"$bin/mnemo" merge -o "$work/merged.yaml" "$work/run1.yaml" "$work/run2.yaml" || fail "merge: exit $?"

# The section's rows without their site ids (the pass numbers sites), in the order written.
rows() {
	sed -n '/^  alloc-sizes:$/,/^  [a-z]/p' "$1" | grep '^    - {site: ' | sed 's/site: [0-9]*, //'
}
expect() {   # FILE K: the rows with every count and sum times K
	local k=$2 got want
	got=$(rows "$1")
	want="    - {count: $((5 * k)), bytes: $((5040 * k)), min: 1000, max: 1016, mean: 1008.0, log2: {512: $((5 * k))}}
    - {count: $k, bytes: $((4096 * k)), min: 4096, max: 4096, mean: 4096.0, log2: {4096: $k}}
    - {count: $((10 * k)), bytes: $((240 * k)), min: 24, max: 24, mean: 24.0, log2: {16: $((10 * k))}}
    - {count: $k, bytes: $((100 * k)), min: 100, max: 100, mean: 100.0, log2: {64: $k}}"
	[ "$got" = "$want" ] || fail "$1: rows
$got
expected
$want"
}
expect "$work/run1.yaml" 1
expect "$work/run2.yaml" 1
expect "$work/merged.yaml" 2
grep -q '^complete: true' "$work/merged.yaml" || fail "merged profile incomplete"
echo "alloc-sizes: rows as constructed, merge doubles them"
