#!/usr/bin/env bash
# `mnemo report --html OUT PROFILE...` on profiles it cannot read (issue 24): the same one-line
# error as the text report (`mnemo report PROFILE...`), naming the file and line at fault, exit 1,
# and no HTML left behind: no OUT, no temporary file beside it, and an OUT that existed before is
# left as it was.  Profiles broken by construction from a good one of programs/every.c:
#   count.yaml   a loop's iteration count made `lots` (the module's check rejects it);
#   syntax.yaml  the closing brace of that row removed (YAML itself fails);
#   missing.yaml does not exist;
#   good + count: one bad profile among several spoils the whole page.
# The good profile writes a whole page (<!DOCTYPE html> ... </html>) and nothing on stdout; an OUT
# in a directory that does not exist fails naming that directory.
# Usage: errors.sh BUILD_DIR SOURCE_DIR (tests/report).
set -euo pipefail
bin=$1/bin src=$2
work=$(mktemp -d /tmp/mnemo-report-errors.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$src/lib.sh"
unset MNEMO_WORKERS MNEMO_OUTPUT MNEMO_MODULES

cd "$work"
cp "$src/programs/every.c" .
"$bin/mnemo-cc" -m dependence,value-pattern -O1 -g every.c -o every
./every >/dev/null
mv every.mnemo.yaml good.yaml

"$bin/mnemo" report --html good.html good.yaml >out.txt || fail "good.yaml: exit $?"
[ ! -s out.txt ] || fail "mnemo report --html wrote on stdout: $(head -3 out.txt)"
head -c 15 good.html | grep -qx '<!DOCTYPE html>' || fail "good.html does not start with <!DOCTYPE html>"
[ "$(tail -c 8 good.html | tr -d '\n')" = '</html>' ] || fail "good.html does not end with </html>"

# The first row of the dependence loops table: its line number and the profile broken there.
n=$(grep -n '^    - {loop: [0-9]*, invocations: [0-9]*, iterations: [0-9]*}$' good.yaml | head -1 | cut -d: -f1)
[ -n "$n" ] || fail "good.yaml: no dependence loop row"
sed "${n}s/iterations: [0-9]*}/iterations: lots}/" good.yaml >count.yaml
sed "${n}s/}\$//" good.yaml >syntax.yaml

# fails NAME LINE PROFILE...: the text report of the profiles fails with one line on stderr, naming
# NAME (and :LINE: unless LINE is -); --html fails with that very line, exit 1, and leaves the
# directory as it was, including an existing page.
fails() {
	local name=$1 line=$2 want got rc
	shift 2
	rc=0
	"$bin/mnemo" report "$@" >/dev/null 2>want.txt || rc=$?
	[ $rc -eq 1 ] || fail "mnemo report $*: exit $rc, expected 1"
	want=$(cat want.txt)
	[ "$(wc -l <want.txt)" -eq 1 ] || fail "mnemo report $*: stderr is not one line: $want"
	grep -qF "$name" want.txt || fail "mnemo report $*: the error does not name $name: $want"
	[ "$line" = - ] || grep -qF "$name:$line:" want.txt ||
		fail "mnemo report $*: the error does not name line $line of $name: $want"
	rm -f want.txt
	local before
	before=$(ls -A)
	rc=0
	"$bin/mnemo" report --html page.html "$@" >/dev/null 2>got.txt || rc=$?
	got=$(cat got.txt)
	rm -f got.txt
	[ $rc -eq 1 ] || fail "mnemo report --html page.html $*: exit $rc, expected 1"
	[ "$got" = "$want" ] || fail "mnemo report --html page.html $*: stderr
$got
expected the text report's
$want"
	[ ! -e page.html ] || fail "mnemo report --html page.html $*: page.html left behind"
	[ "$(ls -A)" = "$before" ] ||
		fail "mnemo report --html page.html $*: files left behind: $(ls -A)"
	# An existing page stays as it was.
	cp good.html page.html
	cp good.html keep.html
	rc=0
	"$bin/mnemo" report --html page.html "$@" >/dev/null 2>/dev/null || rc=$?
	[ $rc -eq 1 ] || fail "mnemo report --html page.html $* (page.html existing): exit $rc"
	cmp -s page.html keep.html || fail "mnemo report --html page.html $*: changed the existing page.html"
	rm -f page.html keep.html
}
fails count.yaml "$n" count.yaml
fails syntax.yaml - syntax.yaml
fails missing.yaml - missing.yaml
fails count.yaml "$n" good.yaml count.yaml

rc=0
"$bin/mnemo" report --html "$work/no-such-dir/page.html" good.yaml 2>err.txt || rc=$?
[ $rc -eq 1 ] || fail "--html into a missing directory: exit $rc, expected 1"
grep -qF "$work/no-such-dir/" err.txt || fail "--html into a missing directory: the error does not" \
	"name it: $(cat err.txt)"

# A source that is a FIFO is refused with a notice, not waited on (no writer ever comes).
mv every.c every.c.txt
mkfifo every.c
rc=0
timeout 30 "$bin/mnemo" report --html fifo.html good.yaml 2>err.txt || rc=$?
[ $rc -ne 124 ] || fail "a FIFO as a source: mnemo report --html hung on it"
[ $rc -eq 0 ] || fail "a FIFO as a source: exit $rc: $(cat err.txt)"
grep -qF 'every.c is not a regular file: not included' fifo.html ||
	fail "a FIFO as a source: no notice in the page"
rm -f every.c fifo.html

# Ended while a page is written (a 60 MiB source takes a while to escape): mnemo dies of the
# signal, as it would have, with no temporary page left and an existing page as it was.  SIGTERM:
# a script's background job ignores SIGINT (^C at a terminal takes the same path).
{ yes 'static const char *s = "<&>"; /* 48 bytes a line, escaped as it is read */' || true; } |
	head -c 60000000 >every.c
cp good.html int.html
cp good.html keep.html
"$bin/mnemo" report --html int.html good.yaml 2>err.txt &
pid=$!
for _ in $(seq 1000); do
	compgen -G '.int.html.*' >/dev/null && break
	sleep 0.01
done
compgen -G '.int.html.*' >/dev/null || fail "SIGTERM: no temporary page appeared"
kill -TERM $pid
rc=0
wait $pid || rc=$?
[ $rc -ne 0 ] || fail "SIGTERM: the page was finished before the signal came (a bigger source?)"
[ $rc -eq 143 ] || fail "SIGTERM: exit $rc, expected 143 (killed by SIGTERM): $(cat err.txt)"
! compgen -G '.int.html.*' >/dev/null || fail "SIGTERM: temporary page left: $(ls -A)"
cmp -s int.html keep.html || fail "SIGTERM: the existing page changed"
rm -f every.c int.html keep.html
mv every.c.txt every.c
echo "report errors: the text report's one-line error, exit 1, no page left, an existing page kept;" \
	"a FIFO source refused, a page ended by a signal leaves nothing behind"
