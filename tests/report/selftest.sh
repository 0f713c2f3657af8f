#!/usr/bin/env bash
# The checkers of browser.sh and escaping.sh can fail: fake.py writes a stand-in for the report of
# programs/every.c (the skeleton, the DOM built by script); the sound one passes check_page, and
# each fault fails it with its own message (every stand-in logs its build time, as the report
# does, which is no error):
#   svg (no heatmap), module (no value-pattern section), count (an empty count cell), error (an
#   uncaught exception: div.mnemo-error), console (console.error), warning (console.warn), csp
#   (a CSP violation), img (an injected <img onerror>), script (a third <script>), blank (a page
#   that draws nothing); and for escaping.sh's checks, innerhtml and rawjson (see below).
# Usage: selftest.sh SOURCE_DIR (tests/report).  Exit 77: no Chromium.
set -euo pipefail
src=$1
work=$(mktemp -d /tmp/mnemo-report-selftest.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$src/lib.sh"
need_browser
MODULES=dependence,object-relative,rds-shape,structure-affinity,value-pattern,null,shadow-cost,alloc-sizes
cd "$work"
cp "$src/programs/every.c" .
every_args every.c ${MODULES//,/ }

fake() { python3 "$src/fake.py" every.c "$MODULES" "$(echo $PICTURES | tr ' ' ,)" "$@"; }
fake sound.html
(check_page sound.html "${args[@]}") || fail "the sound stand-in fails the checks (above)"

# breaks FAULT TEXT: the stand-in with FAULT fails check_page, saying TEXT.
breaks() {
	fake "$1.html" --break "$1"
	if (check_page "$1.html" "${args[@]}") 2>"$1.err"; then
		fail "fault $1: the checks pass"
	fi
	grep -qF -- "$2" "$1.err" || fail "fault $1: no '$2' in the failure:
$(cat "$1.err")"
}
breaks svg 'no <svg class="heatmap">'
breaks module 'no <section class="module" data-module="value-pattern">'
breaks count "count cell [''], expected a number > 0"
breaks error 'the page reports a script error'
breaks console '"TypeError: something went wrong"'
breaks warning '"Warning: every.c looks odd"'
breaks csp 'violates the following Content Security Policy directive'
breaks img 'injected element <img'
breaks script '3 <script> elements'
breaks blank 'no <section class="source">'
# A blank page fails the screenshot alone too.
fake blank.html --break blank
shoot blank.html blank.png
if python3 "$src/pngstat.py" --min-colours 50 --min-foreground 0.01 blank.png >/dev/null 2>blank.err; then
	fail "the blank page's screenshot passes"
fi
grep -qF 'a blank page?' blank.err || fail "blank screenshot: $(cat blank.err)"

# Escaping: a stand-in showing programs/escape.cpp under a name with <script> and <img> in it
# passes check_escaped; one that sets source lines as innerHTML, or leaves <, > and & raw in its
# JSON (the comment's </script> then ends the data early), fails it.  alert() becomes
# console.log(): a dialog would block Chromium until the 60 s timeout.
evil='<script>console.log(1)<img src=x onerror=console.log(1)>.cpp'
sed 's/alert(/console.log(/g' "$src/programs/escape.cpp" >"$evil"
texts=("$evil" '<script>console.log(1)</script> <img src=x onerror=console.log(1)>'
	'<script>console.log(2)</script>')
python3 "$src/fake.py" "$evil" dependence dep-graph escaped.html
(check_escaped escaped.html "${texts[@]}") || fail "the sound escaping stand-in fails (above)"
for fault in innerhtml rawjson; do
	python3 "$src/fake.py" "$evil" dependence dep-graph "$fault.html" --break "$fault"
	if (check_escaped "$fault.html" "${texts[@]}") 2>"$fault.err"; then
		fail "fault $fault: the escaping checks pass"
	fi
	grep -qF 'injected element <img' "$fault.err" || fail "fault $fault: no injected <img> found:
$(cat "$fault.err")"
done
echo "report checkers: the sound stand-ins pass, each of 13 faults fails"
