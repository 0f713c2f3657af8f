# What the report tests share (sourced): failing, prerequisites, and headless Chromium.
# The caller sets `work` (a scratch directory it removes).

fail() { echo "FAIL: $*" >&2; exit 1; }

# need_browser: Chromium and python3, or exit 77 (ctest's SKIP_RETURN_CODE) saying what is missing.
need_browser() {
	local c
	for c in chromium python3; do
		command -v "$c" >/dev/null || {
			echo "SKIP: $c is not installed (Debian: apt-get install chromium fonts-dejavu-core python3)" >&2
			exit 77
		}
	done
}

# chrome ARGS... PAGE: headless Chromium on a local file, scripts given 5 s of virtual time to run.
# No sandbox (CI runs as root, where Chromium refuses it), a fresh profile each time.  A page that
# opens a dialog (alert(), as injected markup would) blocks headless Chromium for good: killed
# after 60 s, exit 124.
chrome() {
	local page=${*: -1}
	local dir
	dir=$(mktemp -d "$work/chrome.XXXXXX")
	set -- "${@:1:$#-1}"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$dir" --virtual-time-budget=5000 "$@" "file://$(realpath "$page")"
}

# dump PAGE OUT: the DOM after the page's scripts ran, in OUT; the console log in OUT.log.
dump() {
	local rc=0
	chrome --enable-logging=stderr --v=0 --dump-dom "$1" >"$2" 2>"$2.log" || rc=$?
	[ $rc -ne 124 ] || fail "chromium --dump-dom $1: no answer in 60 s: did the page open a" \
		"dialog (alert() from injected markup blocks headless Chromium)?"
	[ $rc -eq 0 ] || fail "chromium --dump-dom $1: exit $rc ($(tail -3 "$2.log"))"
	[ -s "$2" ] || fail "chromium --dump-dom $1: no DOM ($(tail -3 "$2.log"))"
}

# quiet_console LOG: no error in the page's console.  Chromium logs every console message of a
# page (log, warn, error alike), uncaught exceptions ("Uncaught ...") and Content Security Policy
# violations as INFO:CONSOLE lines: no level tells an error from chatter, so a message fails when
# it reads like an error (uncaught, error, exception, failed, refused, violates, Content Security
# Policy, warning); the others are printed and pass (the page logs how long it took to build).
quiet_console() {
	local msgs bad
	msgs=$(grep -E ':CONSOLE[:(]' "$1" || true)
	bad=$(echo "$msgs" | grep -Ei 'uncaught|error|exception|failed|refused|violates|content security policy|warn' || true)
	[ -z "$bad" ] || fail "the page wrote errors to the console:
$bad"
	[ -z "$msgs" ] || echo "console (not errors): $msgs"
}

# shoot PAGE PNG [W,H]: a screenshot of the page after its scripts ran.
shoot() {
	rm -f "$2"
	chrome --window-size="${3:-1280,900}" --screenshot="$(realpath -m "$2")" "$1" >/dev/null 2>&1 ||
		fail "chromium --screenshot $1: exit $?"
	[ -s "$2" ] || fail "chromium --screenshot $1: no PNG written"
}

# The pictures the page draws, as the classes of their SVGs (a stand-in page draws them too).
PICTURES="dep-graph heatmap field-layout shape-graph lifetime-cdf offset-plot lifetime-hist stride-hist"

# every_args SOURCE MODULE...: sets the array `args` to domcheck.py's checks of the report of
# programs/every.c: each module's section, each picture, and the rows of the lines marked
# MARK:carried, independent, hot and walk (loop bodies that run) with their text and a count.
every_args() {
	local source=$1 n m p
	shift
	args=()
	for m in "$@"; do args+=(--module "$m"); done
	for p in $PICTURES; do args+=(--svg "$p"); done
	for m in carried independent hot walk; do
		n=$(grep -n "MARK:$m \*/" "$source" | cut -d: -f1)
		[ -n "$n" ] || fail "$source: no MARK:$m"
		args+=(--line "$n:$(sed -n "${n}p" "$source" | sed 's|/\*.*||')")
	done
}

# check_page PAGE DOMCHECK-OPTIONS...: Chromium loads PAGE; its DOM passes domcheck.py with those
# options, its console stays silent, its screenshot is not blank (50 colours, 1% foreground).
check_page() {
	local page=$1
	shift
	dump "$page" "$page.dom"
	python3 "$src/domcheck.py" "$@" "$page.dom" || fail "$page: its DOM (above)"
	quiet_console "$page.dom.log"
	shoot "$page" "$page.png" 1280,900
	python3 "$src/pngstat.py" --min-colours 50 --min-foreground 0.01 "$page.png" >/dev/null ||
		fail "$page: its screenshot (above)"
}

# check_escaped PAGE TEXT...: PAGE as written and the DOM Chromium builds from it hold nothing
# injected (domcheck.py), each TEXT is shown as text, the dump holds an escaped <script>
# (&lt;script&gt;), and the console stays silent (no alert, no error).
check_escaped() {
	local page=$1 t texts=()
	shift
	for t in "$@"; do texts+=(--text "$t"); done
	python3 "$src/domcheck.py" "$page" || fail "$page as written (above)"
	dump "$page" "$page.dom"
	python3 "$src/domcheck.py" "${texts[@]}" "$page.dom" || fail "$page: its DOM (above)"
	grep -qF '&lt;script&gt;' "$page.dom" || fail "$page: no &lt;script&gt; in its DOM"
	quiet_console "$page.dom.log"
}

