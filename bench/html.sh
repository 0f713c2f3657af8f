#!/usr/bin/env bash
# The HTML report of a large profile in a real browser (issue 24, "Large profiles stay usable"):
# SQLite's bench program (bench/sqlite/driver.c, the amalgamation fetched by bench/sqlite/fetch.sh)
# built with every module mnemo has, run, its profile written as HTML by `mnemo report --html`,
# and the page opened in headless Chromium (Debian's chromium).
#
#   bench/html.sh [BUILD_DIR] [--orders N] [--keep DIR]
#
# Prints the profile's size, the time `mnemo report --html` took, the page's size, and the time
# the page took to open: from navigation start to the end of its first rendering, as the page
# itself measures it (performance.now() when it has drawn, written to the <html> element's
# data-ready-ms), against the target of 3 s.  --orders: the driver's input (default 20000, the
# bench's small input: the profile's size is its sites' and loops', much the same at 200000, which
# takes ten times as long under every module); --keep DIR: leave the program, profile and page in
# DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(dirname "$here")/build
orders=20000
keep=
while [ $# -gt 0 ]; do
	case $1 in
	--orders) orders=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	-h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench/html.sh: unknown option '$1'" >&2; exit 2 ;;
	*) build=$(cd "$1" && pwd); shift ;;
	esac
done
mnemo=$build/bin/mnemo
[ -x "$mnemo" ] || { echo "bench/html.sh: $mnemo not found: build first" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "bench/html.sh: chromium not found (apt-get install chromium)" >&2; exit 2; }
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	work=$(cd "$keep" && pwd)
else
	work=$(mktemp -d /tmp/mnemo-html.XXXXXX)
	trap 'rm -rf "$work"' EXIT
fi
now() { date +%s.%N; }

sqlite_dir=$("$here/sqlite/fetch.sh" "$build/bench-cache/sqlite")
# Every module this mnemo has, as `mnemo --help` lists them.
modules=$("$mnemo" --help | sed -n '/^Modules:/,/^$/p' | grep -oE '^  [a-z][a-z-]+' | tr -d ' ' |
	paste -sd,)
echo "bench/html.sh: SQLite ($orders orders) with $modules"
"$build/bin/mnemo-cc" -O2 -g -m "$modules" -I"$sqlite_dir" -DSQLITE_THREADSAFE=0 \
	-DSQLITE_OMIT_LOAD_EXTENSION "$here/sqlite/driver.c" -lm -o "$work/sqlite"
(cd "$work" && ./sqlite "$orders" >/dev/null)

t0=$(now)
"$mnemo" report --html "$work/sqlite.html" "$work/sqlite.mnemo.yaml"
t1=$(now)
mib() { echo "scale=1; $(stat -c %s "$1") / 1048576" | bc; }
printf 'profile %s MiB; mnemo report --html: %.1f s; page %s MiB\n' "$(mib "$work/sqlite.mnemo.yaml")" \
	"$(echo "$t1 - $t0" | bc -l)" "$(mib "$work/sqlite.html")"

profile_dir=$(mktemp -d /tmp/mnemo-html-chromium.XXXXXX)
ready=$(timeout 120 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$profile_dir" \
	--window-size=1400,1000 --dump-dom "file://$work/sqlite.html" 2>/dev/null |
	grep -o 'data-ready-ms="[0-9.]*"' | head -1 | grep -oE '[0-9.]+' || true)
rm -rf "$profile_dir"
if [ -z "$ready" ]; then
	echo "opened in: no data-ready-ms on the page (it did not finish drawing): FAIL"
	exit 1
fi
printf 'opened in %.2f s (target < 3 s): %s\n' "$(echo "$ready / 1000" | bc -l)" \
	"$(if [ "$(echo "$ready < 3000" | bc -l)" = 1 ]; then echo PASS; else echo FAIL; fi)"
printf '(%s, %s cores, %s)\n' "$(date -u +%Y-%m-%d)" "$(nproc)" "$(uname -m)"
