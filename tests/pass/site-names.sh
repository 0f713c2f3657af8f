#!/bin/sh
# The site table's names end to end, through the profile and `mnemo report` (names/prog.c):
# inlined code is named by the function its line belongs to and where it was inlined, so the four
# copies of mark_in_use()'s line read apart; a load whose location is merged (line 0) gets the
# line of the instruction before it and says so.  Lines are found by the markers in prog.c.
# mnemo-use still maps every site of the profile onto a rebuild whose lines all moved down by
# one, inlined copies included (by their lines relative to the function they are inlined into).
#
#   site-names.sh BINDIR WORKDIR
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 BINDIR WORKDIR" >&2
	exit 2
fi
bindir=$1 work=$2
src=$(cd "$(dirname "$0")/names" && pwd)/prog.c
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
cp "$src" prog.c

failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() {
	failed=1
	printf 'FAIL %s\n' "$1"
}
# has NAME FILE TEXT: passes when FILE holds the line TEXT (fixed string).
has() {
	if grep -qF -- "$3" "$2"; then ok "$1"; else
		bad "$1: no line with '$3' in $2"
	fi
}
line() { grep -n -- "/\* @$1 \*/" prog.c | cut -d: -f1; }

"$bindir/mnemo-cc" -m value-pattern -O2 -g prog.c -o prog 2>build.err ||
	{ bad "build: $(cat build.err)"; exit 1; }
clang-19 -O2 prog.c -o native 2>/dev/null || cc -O2 prog.c -o native || exit 2
MNEMO_OUTPUT=p.yaml ./prog >prog.out 2>run.err || bad "run: $(cat run.err)"
./native >native.out
cmp -s prog.out native.out && ok "output as native" || bad "output differs from native"
grep -qx 'complete: true' p.yaml || { bad "no complete profile: $(cat run.err)"; exit 1; }
"$bindir/mnemo" report p.yaml >report.txt 2>report.err || bad "report: $(cat report.err)"

mark=$(line mark)
for at in delete:delete_node insert:insert_end_child parse1:parse_deep parse2:parse_deep; do
	fn=${at#*:}
	call="prog.c:$(line "${at%%:*}"):"
	# The load of n->used: column of `+=` is not checked, the rest is.
	has "profile: the load at $call in $fn" p.yaml \
		"kind: load, function: mark_in_use, file: prog.c, line: $mark, column:"
	grep -F "kind: load, function: mark_in_use, file: prog.c, line: $mark," p.yaml |
		grep -F "inlined_into: $fn, inlined_at: '$call" >/dev/null &&
		ok "profile: inlined_into $fn, inlined_at $call" ||
		bad "profile: no load row of mark_in_use inlined into $fn at $call"
	grep -F "prog.c:$mark:" report.txt | grep -F "mark_in_use, inlined into $fn at $call" \
		>/dev/null && ok "report: mark_in_use, inlined into $fn at $call" ||
		bad "report: no 'mark_in_use, inlined into $fn at $call' on a prog.c:$mark row"
done
n=$(grep -F "kind: load, function: mark_in_use," p.yaml | sed 's/^ *[0-9]*: //' | sort -u | wc -l)
[ "$n" -eq 4 ] && ok "four distinct rows for the four copies" || bad "$n distinct rows, expected 4"
# Each copy has a load row and a store row in value-pattern's table: pairs, none more.
n2=$(grep "mark_in_use, inlined into" report.txt | sort | uniq -c | awk '$1 != 2' | wc -l)
[ "$n2" -eq 0 ] && ok "report: each copy's label names one load and one store" ||
	bad "report: labels shared by other than one load and one store: $n2"

if_line=$(line if)
has "profile: pick's merged load at the line of its if, line_nearest" p.yaml \
	"kind: load, function: pick, file: prog.c, line: $if_line, column: 6, line_nearest: true"
has "report: (nearest line)" report.txt "prog.c:$if_line:6 (nearest line) pick"
if grep -q "line: 0," p.yaml; then bad "a site of line 0 in the profile"; else
	ok "no site of line 0"
fi
mkdir -p moved && { echo "/* one line more */"; cat prog.c; } >moved/prog.c
(cd moved && "$bindir/mnemo-cc" --use ../p.yaml -O2 -g prog.c -o prog 2>use.err) ||
	bad "rebuild with --use: $(cat moved/use.err)"
grep -q 'mnemo-use: .*p.yaml: \([0-9][0-9]*\) of \1 sites matched (by location)' moved/use.err &&
	ok "mnemo-use: every site matched by location after the lines moved" ||
	bad "mnemo-use after the lines moved: $(cat moved/use.err)"
[ "$failed" -eq 0 ] && echo "site-names: all passed"
exit "$failed"
