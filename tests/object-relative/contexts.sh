#!/usr/bin/env bash
# object-relative's groups by allocation context (MNEMO_ALLOC_DEPTH) end to end, on
# tests/rds-shape/contexts/wrap.c: one malloc in an xmalloc wrapper called from three places,
# making 10 list nodes (make_list), 7 tree nodes (insert) and one table (main).
#   depth 3 (default): three heap groups of the one malloc site, objects 10, 7 and 1, each
#     written `group: <site>, context: [callers]`, streams naming their context too;
#   depth 2: the same three with one caller each;
#   depth 1: one group of 18 objects and no context anywhere (the by-site profile);
#   profiles byte-identical with -j 1, 2 and 4 (--reproducible);
#   mnemo merge of one profile gives it back, of two adds (20 list nodes), in either order, and
#     of depth 3 and depth 2 profiles keeps both depths' contexts apart;
#   mnemo derive finds the same dependences and strides at depth 3 as at depth 1 (contexts only
#     split groups: every object is still an object of one group);
#   lossless mode: mnemo expand's group stream names the three contexts site_count + 1, + 2, + 3
#     in the groups table's order, each as often as its row's accesses, and at depth 1 the site.
# Usage: contexts.sh BUILD_DIR WRAP_C
set -euo pipefail
build=$1 wrap_c=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-objrel-contexts.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# has FILE TEXT: the profile holds a line with TEXT (fixed string), else fail naming both.
has() { grep -qF -- "$2" "$1" || fail "$(basename "$1"): expected a line with '$2'"; }
# count FILE TEXT: lines of FILE with TEXT.
count() { grep -cF -- "$2" "$1" || true; }
modules() { sed -n '/^modules:/,$p' "$1"; }

cd "$work"
"$bin/mnemo-cc" -m object-relative -O1 -g "$wrap_c" -o wrap

run() {   # run DEPTH J OUT [VAR=VALUE...]
	local depth=$1 j=$2 out=$3
	shift 3
	env MNEMO_ALLOC_DEPTH="$depth" "$@" "$bin/mnemo" run --reproducible -j "$j" -o "$out" \
		-- ./wrap >/dev/null || fail "mnemo run at depth $depth -j $j $*"
}
# site KIND FUNCTION NAME: the id of the one site of that kind in that function calling NAME.
site() {
	awk -v k="kind: $1," -v f="function: $2," -v n="name: $3}" '
		/^  [0-9]+: / && index($0, k) && index($0, f) && index($0, n) {
			sub(/:$/, "", $1); print $1; c++ }
		END { if (c != 1) exit 1 }' p3.yaml || fail "site table: no single $1 site in $2 $3"
}

run 3 1 p3.yaml
a=$(site alloc xmalloc malloc)
l=$(site call make_list xmalloc) ml=$(site call main make_list)
t=$(site call insert xmalloc) mt=$(site call main insert)
x=$(site call main xmalloc)

has p3.yaml "{group: $a, context: [$x], kind: heap, objects: 1,"
has p3.yaml "{group: $a, context: [$l, $ml], kind: heap, objects: 10,"
has p3.yaml "{group: $a, context: [$t, $mt], kind: heap, objects: 7,"
[ "$(count p3.yaml "{group: $a,")" = 3 ] || fail "p3.yaml: expected 3 groups of site $a"
# Streams name their group's context: the list's nodes are stored by make_list.
grep -A1 -F -- "- group: $a" p3.yaml | grep -qF "context: [$l, $ml]" ||
	fail "p3.yaml: no stream of group $a with context [$l, $ml]"

run 2 1 p2.yaml
has p2.yaml "{group: $a, context: [$x], kind: heap, objects: 1,"
has p2.yaml "{group: $a, context: [$l], kind: heap, objects: 10,"
has p2.yaml "{group: $a, context: [$t], kind: heap, objects: 7,"

run 1 1 p1.yaml
has p1.yaml "{group: $a, kind: heap, objects: 18,"
! modules p1.yaml | grep -qF context || fail "p1.yaml: a context at depth 1"

for j in 2 4; do
	run 3 $j p3.j$j.yaml
	cmp -s p3.yaml p3.j$j.yaml || fail "depth 3: -j $j's profile differs from -j 1's"
done

"$bin/mnemo" report p3.yaml >/dev/null || fail "mnemo report p3.yaml"
"$bin/mnemo" merge -o m3.yaml p3.yaml || fail "mnemo merge p3.yaml"
cmp -s <(modules p3.yaml) <(modules m3.yaml) || fail "mnemo merge of one profile changed it"
"$bin/mnemo" merge -o m33.yaml p3.yaml p3.yaml || fail "mnemo merge p3.yaml p3.yaml"
has m33.yaml "{group: $a, context: [$l, $ml], kind: heap, objects: 20,"
has m33.yaml "{group: $a, context: [$t, $mt], kind: heap, objects: 14,"
"$bin/mnemo" merge -o m332.yaml m33.yaml p2.yaml || fail "mnemo merge m33.yaml p2.yaml"
"$bin/mnemo" merge -o m323.yaml p2.yaml m33.yaml || fail "mnemo merge p2.yaml m33.yaml"
cmp -s <(modules m332.yaml) <(modules m323.yaml) || fail "mnemo merge: the order of inputs shows"
# Depth 2's [x] is depth 3's (main calls xmalloc itself): 5 groups, [x]'s objects added.
[ "$(count m332.yaml "{group: $a,")" = 5 ] || fail "m332.yaml: expected 5 groups of site $a"
has m332.yaml "{group: $a, context: [$x], kind: heap, objects: 3,"
has m332.yaml "{group: $a, context: [$l], kind: heap, objects: 10,"

"$bin/mnemo" derive p3.yaml >d3.txt || fail "mnemo derive p3.yaml"
"$bin/mnemo" derive p1.yaml >d1.txt || fail "mnemo derive p1.yaml"
cmp -s <(tail -n +2 d3.txt) <(tail -n +2 d1.txt) || fail "mnemo derive: depth 3 differs from 1"
grep -q '^- {store:' d3.txt || fail "mnemo derive p3.yaml: no dependence"

# Lossless: the group stream's numbers of the three contexts, as often as their rows' accesses.
run 3 1 l3.yaml MNEMO_OBJREL_LOSSLESS=1
run 1 1 l1.yaml MNEMO_OBJREL_LOSSLESS=1
n=$(sed -n 's/^binary: {site_count: \([0-9]*\),.*/\1/p' l3.yaml)
[ -n "$n" ] || fail "l3.yaml: no site_count"
"$bin/mnemo" expand --stream group l3.yaml >g3.txt || fail "mnemo expand l3.yaml"
"$bin/mnemo" expand --stream group l1.yaml >g1.txt || fail "mnemo expand l1.yaml"
k=1
for c in "[$x]" "[$l, $ml]" "[$t, $mt]"; do
	acc=$(grep -F "{group: $a, context: $c," l3.yaml | sed 's/.* accesses: \([0-9]*\),.*/\1/')
	[ "$(grep -cx "$((n + k))" g3.txt)" = "$acc" ] ||
		fail "expand l3.yaml: group $((n + k)) (context $c) not $acc times"
	k=$((k + 1))
done
! grep -qx "$a" g3.txt || fail "expand l3.yaml: site $a's own group at depth 3"
acc=$(grep -F "{group: $a, kind: heap," l1.yaml | sed 's/.* accesses: \([0-9]*\),.*/\1/')
[ "$(grep -cx "$a" g1.txt)" = "$acc" ] || fail "expand l1.yaml: group $a not $acc times"
echo "PASS: object-relative groups by context ($a <- $l <- $ml, $a <- $t <- $mt, $a <- $x)"
