#!/usr/bin/env bash
# Regenerates docs/report.png, the README's picture of the HTML report: examples/demo.c built and
# run as `./quickstart.sh demo` does (mnemo-cc -O2 -g, the default modules), its profile written
# with `mnemo report --html`, the page as headless Chromium shows it at load in a 1280x800 window.
# The PNG is checked not to be blank (tests/report/pngstat.py) before it replaces the old one.
# Usage: docs/screenshot.sh [BUILD_DIR]   (default build, as quickstart.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-$root/build}")
bin=$build/bin
die() { echo "screenshot.sh: $*" >&2; exit 1; }

[ -x "$bin/mnemo" ] && [ -x "$bin/mnemo-cc" ] ||
	die "no mnemo in $bin: build first (./quickstart.sh build, or cmake --build $build)"
"$bin/mnemo" report --help 2>&1 | grep -q -- '--html' || die "$bin/mnemo report has no --html"
for c in chromium python3; do
	command -v "$c" >/dev/null || die "$c is not installed (Debian: apt-get install chromium fonts-dejavu-core python3)"
done
work=$(mktemp -d /tmp/mnemo-screenshot.XXXXXX)
trap 'rm -rf "$work"' EXIT
unset MNEMO_WORKERS MNEMO_OUTPUT MNEMO_MODULES

# As quickstart.sh demo: compiled from the repository's root, run in another directory.  A link to
# examples/ beside the profile lets the page name demo.mnemo.yaml and examples/demo.c, no path of
# this machine.
(cd "$root" && "$bin/mnemo-cc" -O2 -g examples/demo.c -o "$work/demo") || die "mnemo-cc failed"
(cd "$work" && ./demo >/dev/null) || die "demo failed"
ln -s "$root/examples" "$work/examples"
(cd "$work" && "$bin/mnemo" report --html report.html demo.mnemo.yaml) ||
	die "mnemo report --html failed"

timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
	--force-device-scale-factor=1 --user-data-dir="$work/chrome" --virtual-time-budget=5000 \
	--window-size=1280,800 --screenshot="$work/report.png" "file://$work/report.html" \
	>/dev/null 2>&1 || die "chromium failed (exit $?)"
[ -s "$work/report.png" ] || die "chromium wrote no screenshot"
python3 "$root/tests/report/pngstat.py" --min-colours 50 --min-foreground 0.01 "$work/report.png" ||
	die "the screenshot looks blank: docs/report.png left as it was"
cp "$work/report.png" "$root/docs/report.png"
echo "wrote $root/docs/report.png"
