#!/usr/bin/env bash
# Every user-controlled string is escaped in the HTML report (issue 24): programs/escape.cpp,
# copied to a file named `<script>alert(1)<img src=x onerror=alert(1)>.cpp`, whose comments hold
# <script>alert(1)</script> and <img src=x onerror=alert(1)>, whose template function is
# instantiated as walk<script>, built as `<script>prog`; profiled with the default modules and
# written as HTML.  The file as written and the DOM Chromium builds from it hold only the
# skeleton's two <script> elements, no <img> or other injected element, no on* attribute
# (domcheck.py); the console stays silent (no alert, no error); and every one of those strings is
# shown as text (escaped in the dump: &lt;script&gt;), not dropped.
# Usage: escaping.sh BUILD_DIR SOURCE_DIR (tests/report).  Exit 77: no Chromium.
set -euo pipefail
bin=$1/bin src=$2
work=$(mktemp -d /tmp/mnemo-report-escaping.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$src/lib.sh"
need_browser
unset MNEMO_WORKERS MNEMO_OUTPUT MNEMO_MODULES

cd "$work"
file='<script>alert(1)<img src=x onerror=alert(1)>.cpp'
cp "$src/programs/escape.cpp" "$file"
"$bin/mnemo-c++" -O1 -g "$file" -o '<script>prog'
[ "$(./'<script>prog')" = "escape: 4950" ] || fail "<script>prog: unexpected output"
profile='<script>prog.mnemo.yaml'
[ -s "$profile" ] || fail "<script>prog wrote no profile"
# What the site table records is what the page must show: check the premise.
grep -qF "file: $file," "$profile" || fail "$profile: no site in $file"
grep -qF "function: 'long walk<script>(script const*, int)'" "$profile" ||
	fail "$profile: no site in function walk<script>"
! grep -qF "walk<script>" "$file" || fail "$file names walk<script>: the page could show it from there"

"$bin/mnemo" report --html page.html "$profile" || fail "mnemo report --html: exit $?"
[ -s page.html ] || fail "mnemo report --html wrote no page.html"
check_escaped page.html "$file" 'walk<script>' '<script>prog' \
	'<script>alert(1)</script> <img src=x onerror=alert(1)>' '<script>alert(2)</script>'
echo "report escaping: file, function, program and comment shown as text, nothing injected"
