#!/usr/bin/env bash
# The HTML report in a real browser (issue 24): programs/every.c, profiled with every module,
# `mnemo report --html`, then headless Chromium loads the page:
#   - the DOM it dumps holds a <section class="module" data-module="M"> for every module of the
#     profile; the source view's rows of every.c lines known to run (MARK: comments) with their
#     text and a count; an SVG drawing each picture (dep-graph, heatmap, field-layout,
#     shape-graph, lifetime-cdf, offset-plot, lifetime-hist, stride-hist); no script error shown
#     and nothing injected (domcheck.py);
#   - the console stays silent: no uncaught exception, no CSP violation, no message at all;
#   - a 1280x900 screenshot is not blank: at least 50 colours, 1% of pixels not background
#     (pngstat.py).
# Usage: browser.sh BUILD_DIR SOURCE_DIR (SOURCE_DIR: tests/report).  Exit 77: no Chromium.
set -euo pipefail
bin=$1/bin src=$2
work=$(mktemp -d /tmp/mnemo-report-browser.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$src/lib.sh"
need_browser
unset MNEMO_WORKERS MNEMO_OUTPUT MNEMO_MODULES
MODULES=dependence,object-relative,rds-shape,structure-affinity,value-pattern,null,shadow-cost,alloc-sizes

cd "$work"
cp "$src/programs/every.c" .
"$bin/mnemo-cc" -m "$MODULES" -O1 -g every.c -o every
[ "$(./every)" = "every: 56093548" ] || fail "every: unexpected output"
[ -s every.mnemo.yaml ] || fail "every wrote no profile"
"$bin/mnemo" report --html every.html every.mnemo.yaml || fail "mnemo report --html: exit $?"
[ -s every.html ] || fail "mnemo report --html wrote no every.html"

# The modules the profile holds (keys under modules:, "null" quoted in YAML): all of them.
profiled=$(sed -n '/^modules:/,$s/^  "\{0,1\}\([a-z-]*\)"\{0,1\}:$/\1/p' every.mnemo.yaml)
[ "$(echo $profiled | tr ' ' ,)" = "$MODULES" ] ||
	fail "profile's modules: $(echo $profiled), expected ${MODULES//,/ }"

every_args every.c $profiled
check_page every.html "${args[@]}"
# Interactions: the same page with tests/report/clicks.js after its own script, which clicks a line
# (its sites' rows), every tab, a next page, a header (sorting), "show more", a site link (back to
# its source line) and logs CHECK lines.
python3 - "$src/clicks.js" every.html clicks.html <<'PY'
import sys
js = open(sys.argv[1]).read()
page = open(sys.argv[2], encoding="utf-8").read()
end = page.rindex("</body>")
open(sys.argv[3], "w", encoding="utf-8").write(page[:end] + "<script>" + js + "</script>" + page[end:])
PY
dump clicks.html clicks.dom
grep -q 'CHECK done' clicks.dom.log || fail "clicks.js did not finish: $(grep CHECK clicks.dom.log)"
! grep 'CHECK FAIL' clicks.dom.log || fail "interactions failed (above)"
[ "$(grep -c 'CHECK ok' clicks.dom.log)" -ge 10 ] || fail "too few interactions checked: $(grep CHECK clicks.dom.log)"
echo "interactions: $(grep -c 'CHECK ok' clicks.dom.log) checked"
echo "report browser: every module's section, source lines with counts, every picture, a quiet console, a screenshot"
