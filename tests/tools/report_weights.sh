#!/bin/sh
# `mnemo report` lists every table by the weight its module's schema declares (struct
# mn_schema.weight), largest first.  weights.yaml, written by hand, has in each module's tables
# rows in id order whose weights are in another order; the report must print them by weight
# (object-relative's groups by accesses, structure-affinity's objects by cost, ...), and must
# guess no table's order.  The modules whose sections have no table (null, shadow-cost) print
# none.  Then a real profile of every module: no table of it guesses its order either.
#
#   report_weights.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-report-weights.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

"$bin/mnemo" report --top 0 "$src/tests/tools/weights.yaml" >report.out 2>report.err ||
	{ echo "FAIL: report refused weights.yaml: $(cat report.err)"; exit 1; }

# rows MODULE TABLE: the first word of each row of table TABLE in module MODULE's section, in the
# order printed (a site prints as w.c:<10 * id>:1, on a line of its own when the row is too wide).
rows() {
	awk -v mod="Module $1" -v title="$2" '
		$0 == mod { m = 1; next }
		/^Module / { m = 0 }
		m && !t && index($0, "  " title ": ") == 1 { t = 1; next }
		t == 1 && /^ *-+( +-+)*$/ { t = 2; next }
		t == 2 && (/^$/ || /^ *\.\.\./) { exit }
		t == 2 && $1 ~ /^(w\.c:|[0-9]|site$)/ { printf "%s%s", n++ ? " " : "", $1 }
		END { print "" }' report.out
}

# expect MODULE TABLE WORDS
expect() {
	got=$(rows "$1" "$2")
	if [ "$got" = "$3" ]; then
		ok "$1 $2: by weight: $got"
	else
		bad "$1 $2: expected rows '$3', got '$got'"
	fi
}

expect alloc-sizes sites 'w.c:30:1 w.c:90:1 w.c:20:1'
expect dependence loops 'w.c:80:1 w.c:50:1'
expect dependence dependences 'w.c:80:1 w.c:50:1 site'
expect object-relative groups '3 9 2'
expect object-relative instructions 'w.c:60:1 w.c:70:1 w.c:40:1'
expect rds-shape static_shape_graph 'w.c:90:1 w.c:20:1'
expect structure-affinity objects 'w.c:30:1 w.c:90:1 w.c:20:1'
expect structure-affinity other_streams '3 9 2'
expect value-pattern entries 'w.c:60:1 w.c:70:1 w.c:40:1'

# value-pattern's addresses in hex (a pointer's one value, and a list of them), its integers not.
vp=$(awk '$0 == "Module value-pattern" { m = 1 } m' report.out)
for want in '0x55fabad691f0' '[0x1000, 0x55faba'; do
	case $vp in
	*"$want"*) ok "value-pattern: an address prints as $want" ;;
	*) bad "value-pattern: no '$want' in: $vp" ;;
	esac
done
case $vp in
*94535364809200*|*'[4096'*) bad "value-pattern: an address printed in decimal: $vp" ;;
*) ok "value-pattern: no address in decimal" ;;
esac
echo "$vp" | grep -A1 'w.c:40:1' | tail -1 | grep -Eq '^ +load +1 +yes +5 ' &&
	ok "value-pattern: the integer 5 stays decimal" || bad "value-pattern: site 4's row: $vp"

# no_guess FILE WHAT: no table of FILE's report guesses its order, and each says its weight.
no_guess() {
	if grep -q '(no weight declared)' "$1"; then
		bad "$2: tables without a declared weight: $(grep '(no weight declared)' "$1" | tr -s ' ')"
	else
		ok "$2: every table's weight is declared"
	fi
	untitled=$(grep -E '^ *[a-z_]+: [0-9]+ rows?' "$1" | grep -v ', by ' | tr -s ' ')
	[ -z "$untitled" ] || bad "$2: tables not ordered: $untitled"
}
no_guess report.out weights.yaml
for m in null shadow-cost; do
	tables=$(awk -v mod="Module $m" '$0 == mod { m = 1; next } /^Module / { m = 0 }
		m && /^ *[a-z_]+: [0-9]+ rows?/' report.out)
	[ -z "$tables" ] && ok "$m: no table" || bad "$m: prints tables: $tables"
done

# A real profile of every module.
"$bin/mnemo-cc" -m value-pattern,dependence,object-relative,rds-shape,structure-affinity,alloc-sizes,null,shadow-cost \
	-O1 -g "$src/examples/demo.c" -o demo 2>build.err || { echo "FAIL build: $(cat build.err)"; exit 1; }
MNEMO_OUTPUT=p.yaml ./demo >/dev/null 2>run.err
grep -qx 'complete: true' p.yaml || { echo "FAIL: no complete profile: $(cat run.err)"; exit 1; }
"$bin/mnemo" report --top 0 p.yaml >demo.out 2>report.err || bad "demo: report: $(cat report.err)"
no_guess demo.out "demo (every module)"
exit $failed
