#!/bin/sh
# `mnemo report --html` (tools/html/): the page and its data, without a browser (tests/report/
# loads pages in one).  A program with a loop-carried dependence and a linked list, built with
# every module:
#   - its page parses: the skeleton, the styles and script verbatim, the data as JSON with every
#     module, each table's weight, the source's lines, a laid-out graph of the carried loop and
#     of the list's shape;
#   - strings that would inject markup (a function name, the program's argv, a source comment,
#     invalid UTF-8, U+2028) appear only escaped: the raw file holds exactly the skeleton's tags;
#   - a refused profile (a bad value, broken YAML, one bad profile of two, a missing --module)
#     gets the text report's message and exit status, and leaves no page, nor a temporary file,
#     and an existing page as it was;
#   - a source that does not open gets a notice, and --source-dir finds it (by its base name too);
#   - YAML aliases are written once, big integers and NaN as strings;
#   - usage errors name the option or the file.
#
#   report_html.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-report-html.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

# data PAGE: the page's data block, parsed and printed back as JSON into PAGE.json; the page must
# be UTF-8 and hold exactly one data block.  Fails with a message otherwise.
data() {
	python3 - "$1" <<'EOF'
import json, sys
page = open(sys.argv[1], encoding="utf-8", errors="strict").read()
head = '<script type="application/json" id="mnemo-data">'
if page.count(head) != 1:
    sys.exit("%d data blocks" % page.count(head))
start = page.index(head) + len(head)
json.dump(json.loads(page[start:page.index("</script>", start)]), open(sys.argv[1] + ".json", "w"))
EOF
}

# q JSON EXPR: EXPR evaluated with d the data of JSON, printed.
q() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$1" "$2"
}

# expect WHAT JSON EXPR WANT
expect() {
	got=$(q "$2" "$3" 2>&1)
	[ "$got" = "$4" ] && ok "$1" || bad "$1: $3: expected '$4', got '$got'"
}

# ---- The program: a[i] = a[i - 1] + 1 carried at distance 1, and a list walked -------------------
mkdir srcdir
{
	printf '/* An HTML test: </script><script>alert(1)</script> and <!-- stay text; '
	printf 'bad UTF-8 \377 and a line separator \342\200\250 too. */\n'
	# An overlong '/', a UTF-16 surrogate, a 4-byte character, a cut one.
	printf '/* \300\257 \355\240\200 \360\237\230\200 \342\202 */\n'
	cat <<'EOF'
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

struct node {
	struct node *next;
	long value;
};

long a[1000];

static long walk(struct node *head)
{
	long sum = 0;

	for (struct node *p = head; p; p = p->next)
		sum += p->value;
	return sum;
}

int main(void)
{
	struct node *head = NULL;

	for (int i = 1; i < 200; i++)
		V(a[i]) = V(a[i - 1]) + 1; /* carried */
	for (int i = 0; i < 50; i++) {
		struct node *e = malloc(sizeof(*e));

		e->value = i;
		e->next = head;
		head = e;
	}
	printf("%ld %ld\n", V(a[199]), walk(head));
	return 0;
}
EOF
} >srcdir/prog.c
modules=alloc-sizes,dependence,null,object-relative,rds-shape,shadow-cost,structure-affinity,value-pattern
(cd srcdir && "$bin/mnemo-cc" -m "$modules" -O1 -g prog.c -o ../prog) 2>build.err ||
	{ echo "FAIL build: $(cat build.err)"; exit 1; }
MNEMO_OUTPUT=p.yaml ./prog >/dev/null 2>run.err
grep -qx 'complete: true' p.yaml || { echo "FAIL: no complete profile: $(cat run.err)"; exit 1; }

# ---- (a) the page of a real profile ------------------------------------------------------------
# Written from srcdir, where the site table's relative path opens.
(cd srcdir && "$bin/mnemo" report --html ../p.html ../p.yaml) >out 2>err
status=$?
[ $status -eq 0 ] && [ ! -s out ] && [ ! -s err ] && ok "page written, nothing printed" ||
	bad "page: exit $status, stdout '$(cat out)', stderr '$(cat err)'"
data p.html && ok "the data block parses as JSON" || bad "the data block does not parse"
python3 - p.html "$src/tools/html/report.css" "$src/tools/html/report.js" <<'EOF' &&
import sys
page, css, js = (open(f, encoding="utf-8").read() for f in sys.argv[1:])
assert page.startswith("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
assert "content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\"" in page
assert "<style>\n" + css + "\n</style>" in page, "styles"
assert "<script>\n" + js + "\n</script></body></html>\n" in page, "script"
assert '<div id="mnemo-app"><noscript>' in page
EOF
	ok "skeleton, styles and script verbatim" || bad "skeleton, styles or script differ"
j=p.html.json
expect "format" $j 'd["format"]' mnemo-html/1
expect "modules in profile order" $j '",".join(m["name"] for m in d["profiles"][0]["modules"])' \
	"$modules"
expect "every section in root" $j '",".join(d["profiles"][0]["root"]["modules"])' "$modules"
expect "complete" $j '[d["profiles"][0][k] for k in ("complete", "incomplete_reason", "unchecked")]' \
	'[True, None, []]'
expect "weights: dependence" $j 'd["profiles"][0]["modules"][1]["weights"]' \
	"{'loops': 'iterations', 'dependences': 'count'}"
expect "weights: a table in rows" $j \
	'd["profiles"][0]["modules"][3]["weights"]["instructions/[]/streams"]' accesses
expect "site ids are keys" $j '[s["kind"] for s in d["profiles"][0]["root"]["sites"].values()][:1]' \
	"['unknown']"
carried=$(grep -n 'carried \*/' srcdir/prog.c | cut -d: -f1)
expect "source lines" $j "d['sources']['prog.c']['lines'][$carried - 1]" \
	"$(sed -n "${carried}p" srcdir/prog.c)"
expect "source path" $j "d['sources']['prog.c']['path']" prog.c
# The carried loop's graph: its store and load, one raw edge at distance 1, a spline of 1 + 3k
# points inside the drawing, an arrowhead and a label.
expect "dependence graph" $j '[(len(g["nodes"]), [(e["kind"], e["label"].split(" ")[:2], len(e["points"]) % 6 == 2, e["arrow"] is not None, "lx" in e, all(0 <= v <= max(g["width"], g["height"]) + 1 for v in e["points"])) for e in g["edges"]]) for g in d["profiles"][0]["graphs"]["dependence"].values() if "edges" in g and any("d=1" in e["label"] for e in g["edges"])]' \
	"[(2, [('raw', ['raw', 'd=1'], True, True, True, True)])]"
expect "no graph for loop 0" $j '"0" in d["profiles"][0]["graphs"]["dependence"]' False
expect "shape graph" $j '[(len(g["nodes"]), [(e["kind"], e["label"]) for e in g["edges"]]) for g in d["profiles"][0]["graphs"]["rds-shape"].values()]' \
	"[(1, [('backward', 'next: 49 stores, 49 backward')])]"

# ---- (b) escaping ----------------------------------------------------------------------------
evil='</script><img src=x onerror=alert(1)>'
sed -e "s|function: main|function: '$evil'|" \
	-e "s|argv: \[./prog\]|argv: ['./prog</title><script>alert(2)</script>']|" p.yaml >evil.yaml
(cd srcdir && "$bin/mnemo" report --html ../evil.html ../evil.yaml) 2>err ||
	bad "escaping: page refused: $(cat err)"
data evil.html && ok "escaping: the page is UTF-8 and its data parses" || bad "escaping: data"
expect "escaping: the name reads back" evil.html.json \
	'sum(s["function"] == "'"$evil"'" for s in d["profiles"][0]["root"]["sites"].values()) > 0' True
expect "escaping: bad UTF-8 and U+2028 in a source" evil.html.json \
	'[c in d["sources"]["prog.c"]["lines"][0] for c in ("\ufffd", "\u2028", "</script><script>")]' \
	'[True, True, True]'
expect "escaping: invalid UTF-8 byte by byte" evil.html.json \
	'd["sources"]["prog.c"]["lines"][1] == "/* \ufffd\ufffd \ufffd\ufffd\ufffd \U0001f600 \ufffd\ufffd */"' True
tags=$(grep -o -i -e '<script' -e '</script' -e '<img' -e '<title' -e '</title' -e '<!--' evil.html |
	tr '\n' ' ')
[ "$tags" = "<title </title <script </script <script </script " ] &&
	ok "escaping: the raw page holds the skeleton's tags only" ||
	bad "escaping: tags in the raw page: $tags"
LC_ALL=C grep -q "$(printf '\342\200\250')" evil.html &&
	bad "escaping: a raw U+2028 in the page" || ok "escaping: no raw U+2028"
grep -q 'Mnemo report: ./prog&lt;/title&gt;&lt;script&gt;alert(2)' evil.html &&
	ok "escaping: the title" || bad "escaping: title: $(grep -o '<title>.*' evil.html)"

# ---- (c) refused profiles: the text report's message, no page ----------------------------------
# refused NAME PROFILE...: report and report --html agree on stderr and exit 1; no page appears,
# an existing one stays, no temporary file is left.
refused() {
	name=$1
	shift
	rm -f page.html .page.html.*
	"$bin/mnemo" report "$@" >/dev/null 2>text.err
	text_status=$?
	"$bin/mnemo" report --html page.html "$@" >out 2>html.err
	html_status=$?
	if [ $text_status -ne 1 ] || [ $html_status -ne 1 ]; then
		bad "$name: report exits $text_status, report --html $html_status: $(cat html.err)"
	elif ! cmp -s text.err html.err; then
		bad "$name: report says '$(cat text.err)', report --html '$(cat html.err)'"
	elif [ -e page.html ] || [ -s out ]; then
		bad "$name: a page or output was left"
	else
		ok "$name: '$(head -c 100 html.err)', no page"
	fi
	echo 'an old page' >page.html
	"$bin/mnemo" report --html page.html "$@" 2>/dev/null
	[ "$(cat page.html)" = 'an old page' ] || bad "$name: the existing page was changed"
	[ -z "$(ls -A | grep '^\.page\.html')" ] || bad "$name: temporary file left: $(ls -A)"
}
line=$(awk '/^  value-pattern:$/{m=1} m && /executions: [0-9]/{print NR; exit}' p.yaml)
sed "${line}s/executions: [0-9]*/executions: -5/" p.yaml >bad.yaml
refused "a bad value" bad.yaml
head -c 2000 p.yaml >broken.yaml
printf '\n  - [unclosed\n' >>broken.yaml
refused "broken YAML" broken.yaml
refused "one bad profile of two" p.yaml bad.yaml
refused "a missing --module" --module nosuch p.yaml

# ---- (d) sources: missing, then found by --source-dir -----------------------------------------
"$bin/mnemo" report --html here.html p.yaml 2>err || bad "sources: page refused: $(cat err)"
data here.html
expect "a missing source gets a notice" here.html.json 'd["sources"]["prog.c"]' \
	"{'missing': 'cannot open prog.c: No such file or directory'}"
"$bin/mnemo" report --html dirs.html --source-dir nowhere --source-dir "$work/srcdir" p.yaml 2>err ||
	bad "--source-dir: page refused: $(cat err)"
data dirs.html
expect "--source-dir finds it" dirs.html.json \
	"d['sources']['prog.c']['path'] + ' ' + d['sources']['prog.c']['lines'][$carried - 1]" \
	"$work/srcdir/prog.c $(sed -n "${carried}p" srcdir/prog.c)"
sed 's|file: prog.c|file: /build/x/prog.c|' p.yaml >moved.yaml
"$bin/mnemo" report --html moved.html --source-dir nowhere --source-dir srcdir moved.yaml 2>err ||
	bad "--source-dir: page refused: $(cat err)"
data moved.html
expect "--source-dir: by the path's last components" moved.html.json \
	"d['sources']['/build/x/prog.c'].get('path')" srcdir/prog.c
"$bin/mnemo" report --html gone.html --source-dir nowhere moved.yaml 2>err
data gone.html
expect "the notice names the folders" gone.html.json "d['sources']['/build/x/prog.c']" \
	"{'missing': 'cannot open /build/x/prog.c: No such file or directory (also looked in nowhere)'}"

# Too big, or not a file: a notice, without reading it.
sed 's|file: prog.c|file: huge.c|' p.yaml >huge.yaml
truncate -s 65M huge.c
sed 's|file: prog.c|file: srcdir|' p.yaml >dir.yaml
"$bin/mnemo" report --html huge.html huge.yaml 2>err && "$bin/mnemo" report --html dir.html dir.yaml 2>>err ||
	bad "sources: page refused: $(cat err)"
data huge.html
data dir.html
expect "a source over 64 MiB gets a notice" huge.html.json "d['sources']['huge.c']" \
	"{'missing': 'huge.c is larger than 64 MiB: not included'}"
expect "a folder gets a notice" dir.html.json "d['sources']['srcdir']" \
	"{'missing': 'srcdir is not a regular file: not included'}"
rm -f huge.c

# ---- Graph limits: 80 edges a loop, 200 loops -------------------------------------------------
# Loop 1 has 81 rows (9 stores x 9 loads); loops 2..204 one row each, fewer iterations the higher
# their id: the 200 with the most iterations are drawn, loop 1 and the last three are not.
awk 'BEGIN {
	print "format: mnemo-profile/1\nprogram: {argv: [./limits], exit_status: 0}\ncomplete: true\nsites:"
	for (l = 1; l <= 204; l++) print "  " l ": {kind: loop, function: f, file: l.c, line: " l ", column: 1}"
	for (s = 1000; s < 1018; s++)
		print "  " s ": {kind: " (s < 1009 ? "store" : "load") ", function: f, file: l.c, line: " s ", column: 1}"
	print "modules:\n  dependence:\n    granularity: 8\n    context: false\n    loops:"
	for (l = 1; l <= 204; l++) print "    - {loop: " l ", invocations: 1, iterations: " 1000 - l "}"
	print "    dependences:"
	for (s = 1000; s < 1009; s++)
		for (d = 1009; d < 1018; d++)
			print "    - {loop: 1, kind: raw, src: " s ", dst: " d ", carried: false, count: 1}"
	for (l = 2; l <= 204; l++)
		print "    - {loop: " l ", kind: raw, src: 1000, dst: 1009, carried: false, count: 1}"
	print "    lost: {aliases: 0, nomem: 0, clipped: 0, clock_resets: 0}"
}' >limits.yaml
"$bin/mnemo" report --html limits.html limits.yaml 2>err || bad "limits: page refused: $(cat err)"
data limits.html
expect "limits: 80 edges a loop, 200 loops" limits.html.json \
	'[(k, v["skipped"]) for k, v in d["profiles"][0]["graphs"]["dependence"].items() if "skipped" in v] + [sum("nodes" in v for v in d["profiles"][0]["graphs"]["dependence"].values())]' \
	"[('1', '81 dependences: more than 80 to draw; the table lists them'), ('202', 'only the 200 loops with the most iterations are drawn'), ('203', 'only the 200 loops with the most iterations are drawn'), ('204', 'only the 200 loops with the most iterations are drawn'), 200]"

# ---- --module, aliases, numbers JavaScript cannot hold -----------------------------------------
"$bin/mnemo" report --html one.html --module dependence p.yaml 2>err || bad "--module: $(cat err)"
data one.html
expect "--module: one section" one.html.json \
	'([m["name"] for m in d["profiles"][0]["modules"]], list(d["profiles"][0]["root"]["modules"]), list(d["profiles"][0]["graphs"]))' \
	"(['dependence'], ['dependence'], ['dependence'])"
{
	sed -n '1,/^modules:/p' p.yaml | sed '$d'
	echo 'extra: &e [1, 2, 3]'
	echo 'again: *e'
	echo 'numbers: [18446744073709551615, -9007199254740993, 9007199254740992, .nan, -.inf, "12", 0.1, infinity]'
	# Ten aliases of ten aliases, seven deep: 10^7 items (50 MB) if each were written out.
	echo 'b0: &b0 [x, x, x, x, x, x, x, x, x, x]'
	for k in 1 2 3 4 5 6 7; do
		echo "b$k: &b$k [*b$((k - 1)), *b$((k - 1)), *b$((k - 1)), *b$((k - 1)), *b$((k - 1)), *b$((k - 1)), *b$((k - 1)), *b$((k - 1)), *b$((k - 1)), *b$((k - 1))]"
	done
	sed -n '/^modules:/,$p' p.yaml
} >alias.yaml
"$bin/mnemo" report --html alias.html alias.yaml 2>err || bad "aliases: page refused: $(cat err)"
data alias.html
expect "aliases: written once" alias.html.json \
	'[d["profiles"][0]["root"][k][:2] if d["profiles"][0]["root"][k] else None for k in ("extra", "again", "b0", "b1", "b7")]' \
	"[[1, 2], None, ['x', 'x'], [None, None], [None, None]]"
[ "$(wc -c <alias.html)" -lt $(($(wc -c <p.html) + 10000)) ] && ok "aliases: the page stays small" ||
	bad "aliases: the page grew to $(wc -c <alias.html) bytes"
expect "numbers" alias.html.json 'd["profiles"][0]["root"]["numbers"]' \
	"['18446744073709551615', '-9007199254740993', 9007199254740992, 'nan', '-inf', '12', 0.1, 'infinity']"

# ---- usage ----------------------------------------------------------------------------------
# usage NAME STATUS MESSAGE ARGS...
usage() {
	name=$1 want_status=$2 want=$3
	shift 3
	"$bin/mnemo" report "$@" >/dev/null 2>err
	status=$?
	[ $status -eq "$want_status" ] && grep -qF "$want" err && ok "$name" ||
		bad "$name: exit $status, '$(cat err)', expected $want_status and '$want'"
}
usage "empty --html" 2 "mnemo: --html: empty file name" --html '' p.yaml
usage "--html naming a profile" 2 "mnemo: --html p.yaml: a profile's name" --html p.yaml evil.yaml
grep -q '^format: mnemo-profile/1' p.yaml || bad "--html naming a profile: the profile was replaced"
usage "--top with --html" 2 "mnemo: --top is for the text report" --top 5 --html x.html p.yaml
usage "--source-dir alone" 2 "mnemo: --source-dir is for the HTML page" --source-dir d p.yaml
usage "a folder that does not exist" 1 \
	"mnemo: cannot write $work/none/x.html: No such file or directory" \
	--html "$work/none/x.html" p.yaml

[ $failed -eq 0 ] && echo "all passed"
exit $failed
