#!/bin/bash
# Floating-point values in value-pattern's profile and report, known by construction
# (programs/floats.c): a constant double 0.1, a constant float 0.75, a double taking -2.5 and
# 1e300, an integer 42.  The pass names the double loads `double` and the float load `float` in
# the site table; the profile keeps every value's bits as the program sent them (so merging and
# every reader see what they saw before); `mnemo report` and the HTML page print the values of
# double and float sites as numbers, the integer's as it is.
#
#   floats.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-vp-floats.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

cp "$src/tests/value-pattern/programs/floats.c" . || exit 2
"$bin/mnemo-cc" -m value-pattern -O1 -g floats.c -o floats 2>build.err ||
	{ echo "FAIL build: $(cat build.err)"; exit 1; }
MNEMO_OUTPUT=p.yaml ./floats >out.txt 2>run.err || { echo "FAIL run: $(cat run.err)"; exit 1; }
grep -qx 'complete: true' p.yaml || { echo "FAIL: no complete profile: $(cat run.err)"; exit 1; }

# site MARK: the id of the load on the line marked MARK, from the profile's sites table.
site() {
	local line
	line=$(grep -n "/\* $1 \*/" floats.c | cut -d: -f1)
	sed -n "s/^  \([0-9]*\): {kind: load, function: main, file: floats.c, line: $line, .*/\1/p" p.yaml
}
d=$(site DOUBLE) f=$(site FLOAT) w=$(site FEW) i=$(site INTEGER)
[ -n "$d" ] && [ -n "$f" ] && [ -n "$w" ] && [ -n "$i" ] ||
	{ echo "FAIL: no load site on a marked line: '$d' '$f' '$w' '$i'"; exit 1; }
named() {
	grep -q "^  $1: {kind: load, .*name: $2[,}]" p.yaml && ok "site table: $3's load is named $2" ||
		bad "site table: site $1 is not named $2: $(grep "^  $1: " p.yaml)"
}
named "$d" double "the double"
named "$f" float "the float"
named "$w" double "the few-valued double"
grep -q "^  $i: {kind: load, .*name: " p.yaml && bad "site table: the integer's load has a name" ||
	ok "site table: the integer's load has no name"

# The profile: bits, as sent (0.1, 0.75f, 1e300 and -2.5 as IEEE 754 words).
entry() { grep "^    - {site: $1, " p.yaml; }
expect_entry() {
	case $(entry "$1") in
	*"$2"*) ok "profile: $3" ;;
	*) bad "profile: expected '$2' in: $(entry "$1")" ;;
	esac
}
expect_entry "$d" "constant: true, value: 4591870180066957722, " "the double's bits"
expect_entry "$f" "constant: true, value: 1061158912, " "the float's bits"
expect_entry "$w" "values: [9094988921128908188, 13836183955189006336]" "the two doubles' bits"
expect_entry "$i" "constant: true, value: 42, " "the integer"

"$bin/mnemo" report p.yaml >report.out 2>report.err || bad "report: $(cat report.err)"
# The row under the site's own line (sites get lines of their own in this wide table).
row() {
	local line
	line=$(grep -n "/\* $1 \*/" floats.c | cut -d: -f1)
	grep -A1 "^  floats.c:$line:" report.out | tail -1
}
expect_row() {
	echo "$(row "$1")" | grep -Eq -- "$2" && ok "report: $3" ||
		bad "report: expected /$2/ in: $(row "$1")"
}
expect_row DOUBLE '^ +load +100 +yes +0\.1 +1 ' "the double's value 0.1"
expect_row FLOAT '^ +load +100 +yes +0\.75 +1 ' "the float's value 0.75"
expect_row FEW '^ +load +100 +no +- +2 +no .*\[1e\+300, -2' "the two doubles' values (the cell cut to fit)"
expect_row INTEGER '^ +load +100 +yes +42 +1 ' "the integer's value 42"

# The page: the same numbers in the value-pattern tab (headless Chromium, when installed).
if command -v chromium >/dev/null; then
	"$bin/mnemo" report --html p.html p.yaml 2>html.err || bad "report --html: $(cat html.err)"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$work/chrome" --virtual-time-budget=5000 --dump-dom \
		"file://$work/p.html" >p.dom 2>/dev/null || bad "chromium --dump-dom: exit $?"
	for want in '>0.1<' '>0.75<' '>1e+300, -2.5<' '>42<'; do
		grep -qF -- "$want" p.dom && ok "page: $want" || bad "page: no $want in the DOM"
	done
	grep -qF '>4591870180066957722<' p.dom && bad "page: the double's bits shown as a number" ||
		ok "page: no bits shown"
else
	echo "skip page: no chromium"
fi
exit $failed
