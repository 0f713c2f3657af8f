#!/bin/sh
# Profiles written to a target that is not a regular file stay that kind of file: a FIFO (as
# /dev/null is a device) is written in place, not replaced by a renamed temporary file, and a
# symbolic link keeps pointing where it did while the file it names gets the profile.  Both
# writers: the backend (`mnemo run -o`, MNEMO_OUTPUT) and `mnemo merge -o`.
#
#   special_outputs.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-special-outputs.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }
is_profile() { head -n 1 "$1" 2>/dev/null | grep -qx 'format: mnemo-profile/1'; }

"$bin/mnemo-cc" -m null -O1 -g "$src/examples/demo.c" -o demo 2>build.err || {
	echo "FAIL build: $(cat build.err)"; exit 1; }

# mnemo run -o FIFO: the reader gets the profile, the FIFO stays a FIFO, no warning.
mkfifo run.fifo
timeout 20 cat run.fifo >run.got &   # bounded: a writer that replaces the FIFO never opens it
"$bin/mnemo" run -o run.fifo -- ./demo >/dev/null 2>run.err
status=$?
wait
[ "$status" -eq 0 ] && ok "run -o FIFO: exit 0" || bad "run -o FIFO: exit $status"
[ -p run.fifo ] && ok "run -o FIFO: still a FIFO" || bad "run -o FIFO: replaced: $(ls -l run.fifo)"
is_profile run.got && ok "run -o FIFO: the reader got a profile" || bad "run -o FIFO: got $(head -c 80 run.got)"
grep -q 'no profile' run.err && bad "run -o FIFO: warned: $(cat run.err)" || ok "run -o FIFO: no warning"

# MNEMO_OUTPUT through a symbolic link to an existing profile: the link stays, its file is new.
echo old >target.yaml
ln -s target.yaml link.yaml
MNEMO_OUTPUT=link.yaml ./demo >/dev/null 2>env.err
[ -L link.yaml ] && ok "MNEMO_OUTPUT=link: still a link" || bad "MNEMO_OUTPUT=link: replaced: $(ls -l link.yaml)"
is_profile target.yaml && ok "MNEMO_OUTPUT=link: the file it names has the profile" ||
	bad "MNEMO_OUTPUT=link: target has $(head -c 80 target.yaml)"

# mnemo merge -o FIFO and -o link, against -o - (the same bytes).
"$bin/mnemo" merge -o - target.yaml >want.yaml 2>merge.err || bad "merge -o -: $(cat merge.err)"
mkfifo merge.fifo
timeout 20 cat merge.fifo >merge.got &
"$bin/mnemo" merge -o merge.fifo target.yaml 2>merge.err
status=$?
wait
[ "$status" -eq 0 ] && ok "merge -o FIFO: exit 0" || bad "merge -o FIFO: exit $status: $(cat merge.err)"
[ -p merge.fifo ] && ok "merge -o FIFO: still a FIFO" || bad "merge -o FIFO: replaced: $(ls -l merge.fifo)"
cmp -s merge.got want.yaml && ok "merge -o FIFO: the reader got the merged profile" ||
	bad "merge -o FIFO: got $(head -c 80 merge.got)"
cp target.yaml other.yaml
ln -s other.yaml mlink.yaml
"$bin/mnemo" merge -o mlink.yaml target.yaml 2>merge.err || bad "merge -o link: $(cat merge.err)"
[ -L mlink.yaml ] && ok "merge -o link: still a link" || bad "merge -o link: replaced: $(ls -l mlink.yaml)"
cmp -s other.yaml want.yaml && ok "merge -o link: the file it names has the merged profile" ||
	bad "merge -o link: other.yaml differs"
leftover=$(ls -A | grep '^\.' || true)
[ -z "$leftover" ] && ok "no temporary file left" || bad "left behind: $leftover"

[ "$failed" -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit "$failed"
