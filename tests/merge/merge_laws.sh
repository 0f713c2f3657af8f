#!/bin/sh
# The merge laws of issue 9, for every module of this build (mnemo-backend --list-modules, that
# is modules/modules.def): programs built with every module (mnemo-cc -m all of them) are run with
# three different inputs, one module at a time, under `mnemo run --reproducible`, and for each
# module's profiles p, q, r:
#   merge(p) == p                                  (byte for byte, for each of p, q and r)
#   merge(p, q) == merge(q, p)
#   merge(merge(p, q), r) == merge(p, merge(q, r))
#   the counts of merge(p, q) are the sums of p's and q's (merge-sums: null, shadow-cost,
#   dependence, value-pattern)
# Also dependence with MNEMO_DEP_CONTEXT=1 (contexts), and all modules in one profile.  A module
# without restore() fails ("cannot be merged"): every module must be mergeable.  Every failure
# says which module broke which law on which program; the summary lists them.
#
# Usage: merge_laws.sh BINDIR MERGE_SUMS SOURCE_DIR
set -u
bin=$1
sums=$2
src=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/mnemo-merge-laws.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

failures=0
failed=   # "module: law" lines

fail() {   # variant program what [detail]
	printf 'FAIL: module %s, program %s: %s\n' "$1" "$2" "$3"
	[ $# -gt 3 ] && [ -n "$4" ] && printf '%s\n' "$4" | sed -n '1,6s/^/    /p'
	failures=$((failures + 1))
	failed="$failed
  $1: $3"
}

# The programs and their three inputs: small, so that each run takes a fraction of a second.
programs="mixed linkedlist histogram bintree"
source_of() {
	case $1 in
	mixed) echo "$src/tests/merge/programs/mixed.c" ;;
	*) echo "$src/bench/programs/$1.c" ;;
	esac
}
input_of() {   # program 1|2|3
	case $1.$2 in
	mixed.1) echo "150 1" ;; mixed.2) echo "300 2" ;; mixed.3) echo "80 3" ;;
	linkedlist.1) echo "1500" ;; linkedlist.2) echo "800" ;; linkedlist.3) echo "2500" ;;
	histogram.1) echo "3000 2" ;; histogram.2) echo "2000 3" ;; histogram.3) echo "1000 4" ;;
	bintree.1) echo "8 2" ;; bintree.2) echo "6 3" ;; bintree.3) echo "7 1" ;;
	esac
}

# Every module, not mnemo-cc's default set (the five profiling modules).
every=$("$bin/mnemo-backend" --list-modules | awk '{ print $1 }' | paste -sd, -)
for p in $programs; do
	if ! "$bin/mnemo-cc" -m "$every" -O1 -g -o "$work/$p" "$(source_of "$p")" 2>"$work/cc.err"; then
		echo "FAIL: cannot build $p with every module:"
		cat "$work/cc.err"
		exit 1
	fi
done

modules=$("$bin/mnemo-backend" --list-modules | awk '{ print $1 }')
[ -n "$modules" ] || { echo "FAIL: mnemo-backend lists no module"; exit 1; }
# Variants: each module alone, dependence with contexts, and every module in one profile.
variants="$modules dependence+context all"

# merge OUT IN...: mnemo merge; on failure, the caller gets status 1 and its message in $work/err.
merge() {
	"$bin/mnemo" merge -o "$@" 2>"$work/err"
}

for v in $variants; do
	case $v in
	all) mods= ; env_v= ; sum_mod= ;;
	dependence+context) mods=dependence; env_v=MNEMO_DEP_CONTEXT=1; sum_mod=dependence ;;
	*) mods=$v; env_v= ; sum_mod=$v ;;
	esac
	for p in $programs; do
		d=$work/$v.$p
		mkdir -p "$d"
		ok=true
		for k in 1 2 3; do
			# shellcheck disable=SC2086 # the inputs are words
			if ! (cd "$d" && env $env_v "$bin/mnemo" run --reproducible \
				${mods:+-m "$mods"} -o "$d/$k.yaml" -- "$work/$p" \
				$(input_of "$p" "$k") >/dev/null 2>"$d/run.err"); then
				fail "$v" "$p" "the run with input $k failed" "$(cat "$d/run.err")"
				ok=false
			fi
		done
		$ok || continue

		# merge(p) == p, for each profile
		for k in 1 2 3; do
			if ! merge "$d/id$k.yaml" "$d/$k.yaml"; then
				fail "$v" "$p" "cannot be merged" "$(cat "$work/err")"
				ok=false
				break
			fi
			if ! cmp -s "$d/id$k.yaml" "$d/$k.yaml"; then
				fail "$v" "$p" "merge(p) != p" \
				     "$(diff "$d/$k.yaml" "$d/id$k.yaml" | head -6)"
				ok=false
				break
			fi
		done
		$ok || continue

		# merge(p, q) == merge(q, p)
		if ! merge "$d/12.yaml" "$d/1.yaml" "$d/2.yaml" ||
		   ! merge "$d/21.yaml" "$d/2.yaml" "$d/1.yaml" ||
		   ! merge "$d/23.yaml" "$d/2.yaml" "$d/3.yaml"; then
			fail "$v" "$p" "merge of two runs failed" "$(cat "$work/err")"
			continue
		fi
		cmp -s "$d/12.yaml" "$d/21.yaml" ||
			fail "$v" "$p" "merge(p, q) != merge(q, p)" \
			     "$(diff "$d/12.yaml" "$d/21.yaml" | head -6)"

		# merge(merge(p, q), r) == merge(p, merge(q, r))
		if ! merge "$d/12_3.yaml" "$d/12.yaml" "$d/3.yaml" ||
		   ! merge "$d/1_23.yaml" "$d/1.yaml" "$d/23.yaml"; then
			fail "$v" "$p" "merge of a merged profile failed" "$(cat "$work/err")"
			continue
		fi
		cmp -s "$d/12_3.yaml" "$d/1_23.yaml" ||
			fail "$v" "$p" "merge(merge(p, q), r) != merge(p, merge(q, r))" \
			     "$(diff "$d/12_3.yaml" "$d/1_23.yaml" | head -6)"

		# two runs with different inputs: the counts are the sums
		case $sum_mod in
		null|shadow-cost|dependence|value-pattern)
			"$sums" "$sum_mod" "$d/12.yaml" "$d/1.yaml" "$d/2.yaml" >"$d/sums.out" \
				2>"$work/err" ||
				fail "$v" "$p" "merge(p, q)'s counts are not the sums" \
				     "$(cat "$work/err")"
			;;
		esac
	done
done

echo "merge laws: $(echo "$variants" | wc -w) variants (each module alone, dependence with" \
     "contexts, all modules at once) x $(echo "$programs" | wc -w) programs x 3 inputs"
if [ "$failures" -ne 0 ]; then
	echo "FAILED ($failures), by module and law:$failed"
	exit 1
fi
echo "PASS: every module's profiles obey merge(p) == p, commutativity, associativity; counts add"
