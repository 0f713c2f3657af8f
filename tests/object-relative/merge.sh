#!/usr/bin/env bash
# Merging object-relative profiles (modules/object-relative/README.md "Merging") end to end.
#  1. emit(restore(p)) == p byte for byte on fig3, derive.c (with and without stack objects)
#     and three runs of inputs.c with different inputs (merge_check roundtrip).
#  2. On the three runs: merge commutative and associative byte for byte, in every order and
#     through merged profiles read back; merged counts the sums (merge_check laws).
#  3. Refused with file:line:col and the field: a lossless section, a malformed count, a lifetime
#     histogram that disagrees with its maximum, a stream of a run the section does not list.
#  4. `mnemo derive` of the merged profile: every pair's conflicts and the loads' executions are
#     the sums of the runs' (each run's stores feed its own loads only).
#  5. `mnemo merge`, when the tree has it: the same bytes as merge_check, and refusing profiles
#     of different lmad_limit.
# Usage: merge.sh BUILD_DIR CHECKER PROGRAMS_DIR
set -euo pipefail
export LC_ALL=C   # sort and join agree on the order
build=$1 check=$2 programs=$3
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-objrel-merge.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"

for p in fig3 derive inputs; do
	"$bin/mnemo-cc" -m object-relative -O1 -g "$programs/$p.c" -o "$p"
done
MNEMO_OUTPUT=fig3.yaml ./fig3 >/dev/null
MNEMO_OUTPUT=derive.0.yaml ./derive >/dev/null
MNEMO_OBJREL_STACK=1 MNEMO_OUTPUT=derive.1.yaml ./derive >/dev/null
i=0
for input in "10 1" "50 2" "200 3"; do
	# shellcheck disable=SC2086
	MNEMO_OUTPUT=in$i.yaml ./inputs $input >/dev/null
	i=$((i + 1))
done
grep -q "full: true" in2.yaml || fail "inputs 200 filled no stream: the cap is not exercised"

"$check" roundtrip fig3.yaml derive.0.yaml derive.1.yaml in0.yaml in1.yaml in2.yaml
"$check" laws in0.yaml in1.yaml in2.yaml merged.yaml

# refuse FILE REGEX: restore(FILE) fails with a message matching REGEX.
refuse() {
	local out
	out=$("$check" refuse "$1" "$1") || fail "restore accepted $1, or said: $out"
	[[ $out =~ $2 ]] || fail "$1: unclear message: $out"
	echo "$out"
}
MNEMO_OBJREL_LOSSLESS=1 MNEMO_OUTPUT=fig3.ll.yaml ./fig3 >/dev/null
refuse fig3.ll.yaml \
	"fig3.ll.yaml:[0-9]+:[0-9]+: field 'lossless': the lossless streams of a run cannot be merged"
sed '0,/, count: [0-9]*/s//, count: many/' in0.yaml >bad-count.yaml
refuse bad-count.yaml \
	"bad-count.yaml:[0-9]+:[0-9]+: field 'count': expected an unsigned integer, found 'many'"
sed '0,/lifetime_max: [0-9]*/s//lifetime_max: 100000/' in0.yaml >bad-life.yaml
refuse bad-life.yaml "bad-life.yaml:[0-9]+:[0-9]+: field 'lifetime_log2': "
sed '0,/        run: 1$/s//        run: 7/' merged.yaml >bad-run.yaml
refuse bad-run.yaml "bad-run.yaml:[0-9]+:[0-9]+: field 'run': 7 is not a run of 'runs'"

# mnemo derive: per pair, the sums of conflicts and load executions over the runs; observed
# executions too where the pair shows in every run.
for f in in0 in1 in2 merged; do
	"$bin/mnemo" derive "$f.yaml" | grep '^- {store:' >"$f.deps" || true
done
[ -s merged.deps ] || fail "mnemo derive found no pair in the merged profile"
fields='{ for (i = 1; i <= NF; i++) {
		split($i, kv, ": "); gsub(/[{},]/, "", kv[2]); v[kv[1]] = kv[2] } }'
sums=$(cat in0.deps in1.deps in2.deps | sed 's/- {//; s/}$//' | awk -F', ' "$fields"'
	{ k = v["store"] " " v["load"]; c[k] += v["conflicts"]; o[k] += v["observed"];
	  a[k] += v["load_accesses"]; n[k]++ }
	END { for (k in c)
		print k, c[k], (n[k] == 3 ? o[k] : "-"), (n[k] == 3 ? a[k] : "-") }' | sort)
got=$(sed 's/- {//; s/}$//' merged.deps | awk -F', ' "$fields"'
	{ print v["store"], v["load"], v["conflicts"], v["observed"], v["load_accesses"] }' | sort)
cmp=$(join -j1 <(echo "$sums" | awk '{ print $1 "/" $2, $3, $4, $5 }') \
	<(echo "$got" | awk '{ print $1 "/" $2, $3, $4, $5 }'))
[ "$(echo "$sums" | wc -l)" = "$(echo "$got" | wc -l)" ] &&
	[ "$(echo "$cmp" | wc -l)" = "$(echo "$got" | wc -l)" ] ||
	fail "mnemo derive: the merged profile's pairs are not the runs' together:
$sums
---
$got"
echo "$cmp" | awk '$2 != $5 || ($3 != "-" && ($3 != $6 || $4 != $7)) { bad = 1; print "FAIL:", $0 }
	END { exit bad }' >&2 ||
	fail "mnemo derive of the merged profile is not the sum of the runs'"
echo "ok mnemo derive of the merged profile: $(echo "$got" | wc -l) pairs, the runs' sums"

if [ -x "$bin/mnemo" ] && "$bin/mnemo" merge --help >/dev/null 2>&1; then
	"$bin/mnemo" merge -o m.yaml in2.yaml in0.yaml in1.yaml || fail "mnemo merge failed"
	diff <(sed -n '/^modules:/,$p' m.yaml) <(sed -n '/^modules:/,$p' merged.yaml) >/dev/null ||
		fail "mnemo merge gives another section than merge_check"
	MNEMO_OBJREL_LMADS=5 MNEMO_OUTPUT=in0.l5.yaml ./inputs 10 1 >/dev/null
	if "$bin/mnemo" merge -o m5.yaml in0.yaml in0.l5.yaml 2>err; then
		fail "mnemo merge merged profiles of lmad_limit 30 and 5"
	fi
	grep -q "lmad_limit" err || fail "mnemo merge: unclear message: $(cat err)"
	echo "ok mnemo merge: the same section; refuses different lmad_limit: $(cat err)"
else
	echo "mnemo merge not in this build: skipped"
fi
echo "PASS: object-relative profiles merge as README \"Merging\" says"
