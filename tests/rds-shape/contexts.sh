#!/usr/bin/env bash
# Allocation contexts (MNEMO_ALLOC_DEPTH) end to end, on contexts/wrap.c: an xmalloc wrapper called
# from three places.  Built for rds-shape and structure-affinity:
#   depth 3 (default): three contexts of the one malloc site, [list call, make_list call],
#     [tree call, insert call], [table call]; rds-shape: two types, the list's (10 nodes) and the
#     tree's (7), each one instance; structure-affinity: three heap data objects of that site,
#     10, 7 and 1 instances;
#   depth 2: the same three contexts with one caller each, the same two types;
#   depth 1: no context anywhere: one type of two instances (10 and 7 nodes), one data object of
#     18 instances, the by-site answer;
#   profiles byte-identical with -j 1, 2 and 4 (--reproducible); mnemo report reads them; mnemo
#     merge of one profile gives it back, of two adds;
#   built at -O2 too, the two types.
# Usage: contexts.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-alloc-contexts.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# has FILE TEXT: the profile holds the line TEXT (fixed string), else fail naming both.
has() { grep -qF -- "$2" "$1" || fail "$(basename "$1"): expected a line with '$2'"; }
# hasnt FILE TEXT: the profile's modules section never says TEXT.
hasnt() { ! sed -n '/^modules:/,$p' "$1" | grep -qF -- "$2" || fail "$(basename "$1"): unexpected '$2'"; }

cd "$work"
"$bin/mnemo-cc" -m rds-shape,structure-affinity -O1 -g "$src/wrap.c" -o wrap

run() {   # run DEPTH J OUT
	MNEMO_ALLOC_DEPTH=$1 "$bin/mnemo" run --reproducible -j "$2" -o "$3" -- ./wrap >/dev/null ||
		fail "mnemo run at depth $1 -j $2"
}
# site KIND FUNCTION [NAME]: the id of the one site of that kind in that function (calling NAME).
site() {
	awk -v k="kind: $1," -v f="function: $2," -v n="name: ${3:-}" '
		/^  [0-9]+: / && index($0, k) && index($0, f) && (n == "name: " || index($0, n "}")) {
			sub(/:$/, "", $1); print $1; c++ }
		END { if (c != 1) exit 1 }' p3.yaml || fail "site table: no single $1 site in $2 ${3:-}"
}

run 3 1 p3.yaml
a=$(site alloc xmalloc malloc)
l=$(site call make_list xmalloc) ml=$(site call main make_list)
t=$(site call insert xmalloc) mt=$(site call main insert)
x=$(site call main xmalloc)

# rds-shape: two types, list and tree, each an instance.
has p3.yaml "summary: {types: 2, instances: 2, nodes: 17,"
has p3.yaml "alloc_site: $a, context: [$l, $ml], sites: [[$a, $l, $ml]], instances: 1, nodes: 10,"
has p3.yaml "alloc_site: $a, context: [$t, $mt], sites: [[$a, $t, $mt]], instances: 1, nodes: 7,"
has p3.yaml "{src_site: $a, src_context: [$l, $ml], dst_site: $a, dst_context: [$l, $ml], stores: 9,"
# structure-affinity: three data objects of the one site.
has p3.yaml "{site: $a, context: [$x], kind: heap, instances: 1,"
has p3.yaml "{site: $a, context: [$l, $ml], kind: heap, instances: 10,"
has p3.yaml "{site: $a, context: [$t, $mt], kind: heap, instances: 7,"
has p3.yaml "site_${a}_${l}_${ml}:"

run 2 1 p2.yaml
has p2.yaml "alloc_site: $a, context: [$l], sites: [[$a, $l]], instances: 1, nodes: 10,"
has p2.yaml "alloc_site: $a, context: [$t], sites: [[$a, $t]], instances: 1, nodes: 7,"
has p2.yaml "{site: $a, context: [$x], kind: heap, instances: 1,"

run 1 1 p1.yaml
has p1.yaml "summary: {types: 1, instances: 2, nodes: 17,"
has p1.yaml "{type: 1, alloc_site: $a, sites: [$a], instances: 2, nodes: 17,"
has p1.yaml "{site: $a, kind: heap, instances: 18,"
hasnt p1.yaml "context"

for j in 2 4; do
	run 3 $j p3.j$j.yaml
	cmp -s p3.yaml p3.j$j.yaml || fail "depth 3: -j $j's profile differs from -j 1's"
done

"$bin/mnemo" report p3.yaml >report.txt || fail "mnemo report p3.yaml"
"$bin/mnemo" merge -o m3.yaml p3.yaml || fail "mnemo merge p3.yaml"
cmp -s <(sed -n '/^modules:/,$p' p3.yaml) <(sed -n '/^modules:/,$p' m3.yaml) ||
	fail "mnemo merge of one profile changed its modules"
"$bin/mnemo" merge -o m33.yaml p3.yaml p3.yaml || fail "mnemo merge p3.yaml p3.yaml"
has m33.yaml "alloc_site: $a, context: [$l, $ml], sites: [[$a, $l, $ml]], instances: 2, nodes: 20,"
# -O2: the optimizer must keep the context around every call (abi.h: LLVM takes malloc for
# glibc's, which reads no program memory).
"$bin/mnemo-cc" -m rds-shape,structure-affinity -O2 -g "$src/wrap.c" -o wrap
run 3 1 o2.yaml
has o2.yaml "summary: {types: 2, instances: 2, nodes: 17,"
# Site 0 (strdup, in the C library) keeps no context inside a call that has one; report reads it.
"$bin/mnemo-cc" -m structure-affinity -O1 -g "$src/lib_alloc.c" -o lib_alloc
MNEMO_ALLOC_DEPTH=3 "$bin/mnemo" run --reproducible -o lib.yaml -- ./lib_alloc >/dev/null ||
	fail "mnemo run lib_alloc"
fcall=$(awk '/^  [0-9]+: / && /kind: call, function: main,/ && /name: f}/ { sub(/:$/, "", $1); print $1 }' lib.yaml)
[ -n "$fcall" ] || fail "lib.yaml: no call site of f in main"
has lib.yaml "context: [$fcall], kind: heap, instances: 1, bytes: 8,"
hasnt lib.yaml "{site: 0, context:"
"$bin/mnemo" report lib.yaml >/dev/null || fail "mnemo report lib.yaml"
echo "PASS: allocation contexts ($a <- $l <- $ml, $a <- $t <- $mt, $a <- $x)"
