#!/bin/sh
# On a full filesystem, the line that says no profile was written also says why ("No space left
# on device"), without MNEMO_VERBOSE, for the bare program and for `mnemo run -o`; the program's
# output and exit status are unchanged and no temporary file is left there.  With the space
# freed, the same run writes its profile (the set-up is sound).
#
# The full filesystem is a 64 KiB tmpfs mounted in a mount namespace of the test's own, gone when
# the test ends: `unshare -m` as root, `unshare -rm` (a user namespace) otherwise.  Where neither
# can mount (a container without CAP_SYS_ADMIN, user namespaces off), the test says so and is
# skipped (exit 77).
#
#   full_disk.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2

if [ "${MNEMO_TEST_FULL_DISK_NS-}" != 1 ]; then
	command -v unshare >/dev/null 2>&1 ||
		{ echo "SKIP: no unshare(1) to mount a small tmpfs"; exit 77; }
	work=$(mktemp -d /tmp/mnemo-full-disk.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	"$bin/mnemo-cc" -m null,value-pattern -O1 -g "$src/tests/concurrency/count.c" \
		-o "$work/count" 2>"$work/build.err" ||
		{ echo "FAIL build: $(cat "$work/build.err")"; exit 1; }
	mkdir "$work/full"
	if [ "$(id -u)" -eq 0 ]; then ns=-m; else ns=-rm; fi
	if ! unshare $ns true 2>"$work/unshare.err"; then
		echo "SKIP: cannot make a mount namespace (unshare $ns): $(cat "$work/unshare.err")"
		exit 77
	fi
	MNEMO_TEST_FULL_DISK_NS=1 unshare $ns sh "$0" "$bin" "$src" "$work"
	exit $?
fi

# In the mount namespace.
work=$3
cd "$work" || exit 2
unset MNEMO_OUTPUT MNEMO_MODULES MNEMO_VERBOSE MNEMO_DISABLE MNEMO_REPRODUCIBLE
if ! mount -t tmpfs -o size=64k mnemo-full-disk full 2>mount.err; then
	echo "SKIP: cannot mount a small tmpfs here: $(cat mount.err)"
	exit 77
fi
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }
profile=$work/full/count.mnemo.yaml
enospc=$(dd if=/dev/zero of=full/fill bs=4k 2>&1 >/dev/null)
case $enospc in
*"No space left on device"*) ok "the tmpfs is full" ;;
*) bad "could not fill the tmpfs: $enospc"; exit 1 ;;
esac

# check WHAT: the run's stdout (out), stderr (err) and exit status ($status).
check() {
	[ "$status" -eq 0 ] && [ "$(cat out)" = 1000 ] &&
		ok "$1: output and exit status unchanged" ||
		bad "$1: exit status $status, printed '$(cat out)'"
	# The sections or the profile itself may be what does not fit: either line names the cause.
	said="^mnemo: (no profile written to|cannot write profile) '$profile'"
	if grep -E "$said" err | grep -q ': No space left on device'; then
		ok "$1: the line saying no profile was written says why"
	else
		bad "$1: no line says the profile was not written for lack of space: $(cat err)"
	fi
	left=$(ls -A full | grep -vx fill)
	[ -z "$left" ] && ok "$1: no temporary file left" || bad "$1: left behind: $(echo $left)"
}

MNEMO_OUTPUT=$profile ./count 1000 >out 2>err
status=$?
check "MNEMO_OUTPUT on a full filesystem"

"$bin/mnemo" run -o "$profile" -- ./count 1000 >out 2>err
status=$?
check "mnemo run -o on a full filesystem"

rm -f full/fill
MNEMO_OUTPUT=$profile ./count 1000 >out 2>err
status=$?
[ "$status" -eq 0 ] && [ ! -s err ] && grep -qx 'complete: true' "$profile" &&
	ok "with room again, the profile is written" ||
	bad "with room again: exit status $status, stderr: $(cat err)"

umount full
[ "$failed" -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit "$failed"
