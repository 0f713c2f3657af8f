#!/usr/bin/env bash
# Where the page finds the sources: the site table's file names.  A source compiled by an absolute
# path from another folder (/tmp/x/src/p.c in /tmp/x/build: clang splits the path at the folders
# the two share, "src/p.c" in "/tmp/x") is named by its whole path, for every kind of site: loads
# and stores, functions, globals, a function's static variable, a string literal.  A source
# compiled by a relative path is named as given (relative to the compile folder).  The page written
# from a third folder then holds the first program's source, and gives the second a notice that
# --source-dir answers.
# Usage: sources.sh BUILD_DIR SOURCE_DIR (tests/report).
set -euo pipefail
bin=$1/bin src=$2
work=$(mktemp -d /tmp/mnemo-report-sources.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$src/lib.sh"
unset MNEMO_WORKERS MNEMO_OUTPUT MNEMO_MODULES
mkdir -p "$work/src" "$work/build" "$work/elsewhere"
cat >"$work/src/p.c" <<'C'
#include <stdio.h>
int table[64];
int main(void)
{
	static int seen[64];
	for (int i = 0; i < 64; i++) {
		table[i] = i * 3;
		seen[i] = table[i] + 1;
	}
	printf("p: %d\n", seen[63]);
	return 0;
}
C
# files P: the distinct file names of P's sites.
files() { sed -n 's/^  [0-9]*: {.* file: \([^,]*\),.*/\1/p' "$1" | grep -vx '""' | sort -u | tr '\n' ' '; }

(cd "$work/build" && "$bin/mnemo-cc" -m value-pattern,object-relative -O1 -g "$work/src/p.c" -o p && ./p >/dev/null)
got=$(files "$work/build/p.mnemo.yaml")
[ "$got" = "$work/src/p.c " ] || fail "absolute path from another folder: site files '$got'," \
	"expected only $work/src/p.c"
for g in table main.seen .str; do
	grep -q "kind: global, .*file: $work/src/p.c, .*name: $g," "$work/build/p.mnemo.yaml" ||
		fail "the global $g is not named by its whole file: $(grep "name: $g," "$work/build/p.mnemo.yaml")"
done
(cd "$work/src" && "$bin/mnemo-cc" -m value-pattern,object-relative -O1 -g p.c -o p && ./p >/dev/null)
got=$(files "$work/src/p.mnemo.yaml")
[ "$got" = 'p.c ' ] || fail "relative path: site files '$got', expected p.c"

cd "$work/elsewhere"
"$bin/mnemo" report --html abs.html "$work/build/p.mnemo.yaml"
"$bin/mnemo" report --html rel.html "$work/src/p.mnemo.yaml"
"$bin/mnemo" report --html dir.html --source-dir "$work/src" "$work/src/p.mnemo.yaml"
# source PAGE FILE: FILE's entry in PAGE's data: "lines N" or "missing: why".
source() {
	python3 - "$1" "$2" <<'PY'
import json, sys
page = open(sys.argv[1], encoding="utf-8").read()
tag = '<script type="application/json" id="mnemo-data">'
a = page.index(tag) + len(tag)
s = json.loads(page[a:page.index("</script>", a)])["sources"].get(sys.argv[2])
print("none" if s is None else "lines %d" % len(s["lines"]) if "lines" in s else "missing: " + s["missing"])
PY
}
[ "$(source abs.html "$work/src/p.c")" = "lines 12" ] || fail "abs.html: $(source abs.html "$work/src/p.c")"
case $(source rel.html p.c) in missing:*) ;; *) fail "rel.html: $(source rel.html p.c), expected a notice" ;; esac
[ "$(source dir.html p.c)" = "lines 12" ] || fail "dir.html (--source-dir): $(source dir.html p.c)"
echo "report sources: whole paths where clang split them, relative ones as given, found or noticed"
