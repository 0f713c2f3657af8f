#!/usr/bin/env bash
# The quick-start demo, profiled as README says (mnemo-cc -O2 -g examples/demo.c, default modules),
# lists each source access once: one value-pattern row per (line, column), the loops' iteration
# counts are the source's (256 and 100000 iterations, not a vectorized or unrolled fraction), and
# every stride is a whole element of its array.  Before the compile step kept loops as written,
# the demo's accesses came out twice (unrolled by two) with doubled strides.
#
#   demo.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d /tmp/mnemo-demo-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$build/bin/mnemo-cc" -O2 -g "$src/examples/demo.c" -o "$work/demo"
(cd "$work" && ./demo >/dev/null)
"$build/bin/mnemo" report --module value-pattern "$work/demo.mnemo.yaml" >"$work/vp.txt"
"$build/bin/mnemo" report --module dependence "$work/demo.mnemo.yaml" >"$work/dep.txt"

# Site rows: "  examples/demo.c:LINE:COL main" (the path as the compiler recorded it).
grep -o 'demo\.c:[0-9]*:[0-9]*' "$work/vp.txt" | sort >"$work/sites"
[ -s "$work/sites" ] || fail "no value-pattern rows for demo.c"
dups=$(uniq -d "$work/sites")
[ -z "$dups" ] || fail "accesses listed more than once: $(echo $dups)"
n=$(wc -l <"$work/sites")
[ "$n" -eq 7 ] || fail "expected the demo's 7 accesses, found $n: $(echo $(cat "$work/sites"))"

# Strides: the source's, a whole element: 8 (long), 24 (struct point), 4 (unsigned), 28 (7 x 4).
grep -A1 'demo\.c:27:14' "$work/vp.txt" | tail -1 | grep -q '{8: 99999}' ||
	fail "samples[i] store: expected stride 8 in every execution: $(grep -A1 'demo\.c:27:14' "$work/vp.txt")"
grep -A1 'demo\.c:28:15' "$work/vp.txt" | tail -1 | grep -q '{24: 99999}' ||
	fail "points[i].y store: expected stride 24: $(grep -A1 'demo\.c:28:15' "$work/vp.txt")"

grep -A1 'demo\.c:25:12' "$work/vp.txt" | tail -1 | grep -q '{4: 255}' ||
	fail "table[i] store: expected stride 4 in 256 executions: $(grep -A1 'demo\.c:25:12' "$work/vp.txt")"

# Loops: 256 and 100000 iterations, as written.
for it in 256 100000; do
	grep -Eq "demo\.c:[0-9]+:[0-9]+ main +1 +$it\$" "$work/dep.txt" ||
		fail "no loop of $it iterations in the dependence section: $(grep 'demo\.c' "$work/dep.txt" | head -3)"
done
echo "PASS: the demo lists its $n accesses once each, source strides and iteration counts"
