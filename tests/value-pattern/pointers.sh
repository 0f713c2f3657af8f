#!/bin/sh
# Addresses in value-pattern's profile and report, known by construction (programs/pointers.c):
# the load marked POINTER reads a constant pointer, the address of target[1], which the program
# prints; the load marked INTEGER reads the constant 42.  The pass names the pointer's load site
# `ptr` (runtime/abi.h, the site table), the profile marks its entry `pointer: true` with its
# value as a number, and `mnemo report` prints that value in hex with `yes` under `pointer`;
# the integer's entry has no `pointer` and its value prints as 42.
#
#   pointers.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-vp-pointers.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

cp "$src/tests/value-pattern/programs/pointers.c" . || exit 2
"$bin/mnemo-cc" -m value-pattern -O1 -g pointers.c -o pointers 2>build.err ||
	{ echo "FAIL build: $(cat build.err)"; exit 1; }
MNEMO_OUTPUT=p.yaml ./pointers address >out.txt 2>run.err || { echo "FAIL run: $(cat run.err)"; exit 1; }
grep -qx 'complete: true' p.yaml || { echo "FAIL: no complete profile: $(cat run.err)"; exit 1; }
addr=$(cut -d' ' -f1 out.txt)
dec=$(printf '%d' "$addr")
case $addr in 0x*) ;; *) echo "FAIL: the program printed '$addr', not an address"; exit 1 ;; esac

# site LINE: the id of the load at line LINE of pointers.c, from the profile's sites table.
site() {
	sed -n "s/^  \([0-9]*\): {kind: load, function: main, file: pointers.c, line: $1, .*/\1/p" p.yaml
}
pline=$(grep -n 'POINTER' pointers.c | tail -1 | cut -d: -f1)
iline=$(grep -n 'INTEGER' pointers.c | tail -1 | cut -d: -f1)
psite=$(site "$pline") isite=$(site "$iline")
[ -n "$psite" ] && [ -n "$isite" ] || { echo "FAIL: no load site at lines $pline and $iline"; exit 1; }
grep -q "^  $psite: {kind: load, .*name: ptr" p.yaml && ok "site table: the pointer's load is named ptr" ||
	bad "site table: site $psite is not named ptr: $(grep "^  $psite: " p.yaml)"
grep -q "^  $isite: {kind: load, .*name: " p.yaml && bad "site table: the integer's load has a name" ||
	ok "site table: the integer's load has no name"

entry() { grep "^    - {site: $1, " p.yaml; }
case $(entry "$psite") in
*"constant: true, pointer: true, value: $dec, "*) ok "profile: pointer: true, value $dec ($addr)" ;;
*) bad "profile: expected 'constant: true, pointer: true, value: $dec' in: $(entry "$psite")" ;;
esac
case $(entry "$isite") in
*pointer*) bad "profile: the integer is marked a pointer: $(entry "$isite")" ;;
*"constant: true, value: 42, "*) ok "profile: the integer's value 42, not a pointer" ;;
*) bad "profile: expected 'constant: true, value: 42' in: $(entry "$isite")" ;;
esac

"$bin/mnemo" report p.yaml >report.out 2>report.err || bad "report: $(cat report.err)"
# The row under the site's own line (the table is too wide for sites on the row's line).
row() { grep -A1 "^  pointers.c:$1:" report.out | tail -1; }
echo "$(row "$pline")" | grep -Eq "^ +load +100 +yes +yes +$addr +1 " &&
	ok "report: the pointer's value in hex, pointer yes: $addr" ||
	bad "report: expected 'load 100 yes yes $addr 1' in: $(row "$pline")"
echo "$(row "$iline")" | grep -Eq '^ +load +100 +yes +- +42 +1 ' &&
	ok "report: the integer's value in decimal: 42" ||
	bad "report: expected 'load 100 yes - 42 1' in: $(row "$iline")"
exit $failed
