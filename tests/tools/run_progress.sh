#!/bin/sh
# `mnemo run --progress` (tools/run.c, "--progress"): on a terminal (a pty from script(1)) the
# status line comes once a second, rewritten in place, and is erased before mnemo run exits: what
# mnemo run writes to the terminal is exactly "\r ESC[K status" repeated, then "\r ESC[K", nothing
# else.  The program's stdout and exit status are what they are without --progress.  Without a
# terminal nothing is written at all (-v says why).  With one backend per module and the second
# one held back before it attaches, the lag shown is that backend's (the worst), a full queue,
# not the first backend's, which keeps up.  SIGTERM sent to mnemo run while the line is up still
# reaches the program, mnemo run dies of it too, and the line is erased.
#
#   run_progress.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-run-progress.XXXXXX)
# go releases a held backend, should the test stop half way.
trap 'touch "$work/go"; sleep 0.2; rm -rf "$work"' EXIT
cd "$work" || exit 2
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

command -v script >/dev/null ||
	{ echo "FAIL no script(1) to give mnemo run a terminal (Debian: bsdutils)"; exit 1; }
"$bin/mnemo-cc" -m null,shadow-cost -O1 -g "$src/tests/tools/progress.c" -o progress \
	2>build.err || { echo "FAIL build: $(cat build.err)"; exit 1; }
printf 'progress: start\nprogress: done\n' >expected.out
# script(1) runs its command with $SHELL: the same shell wherever the test runs.
export TERM=xterm SHELL=/bin/sh

# on_tty TTYFILE CMD: runs CMD (sh) on a pty, everything it writes to the terminal in TTYFILE;
# returns its exit status.
on_tty() {
	script -qfec "$2" /dev/null </dev/null >"$1"
}

# Whether file $1, control characters shown (\r as |, ESC as ~), is status lines erased at the end.
only_status_lines() {
	tr '\r\033' '|~' <"$1" | grep -Eq '^(\|~\[Kmnemo: [^|~]*)+\|~\[K$' &&
		[ "$(wc -l <"$1")" -eq 0 ]
}
shown() { tr '\r\033' '|~' <"$1"; }
# wait_for TEXT FILE: until FILE holds TEXT, for at most 10 s.
wait_for() {
	local i=0
	while [ $i -lt 100 ] && ! grep -q "$1" "$2" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
}

# ---- On a terminal: lines of events, erased at the end; the program's stdout and status as is.
on_tty a.tty "'$bin/mnemo' run --progress -o a.yaml -- ./progress 2200 >a.out"
rc=$?
[ "$rc" -eq 3 ] && ok "terminal: exit status 3 passed through" ||
	bad "terminal: exit status $rc, expected 3; terminal: $(shown a.tty)"
cmp -s a.out expected.out && ok "terminal: the program's stdout unchanged" ||
	bad "terminal: the program's stdout: $(cat a.out)"
if grep -q 'mnemo: 0:0[1-9]  [0-9.]*[kMG]* events, [0-9.]*[kMG]*/s  backend lag: ' a.tty; then
	ok "terminal: a status line with events, events/s and the backend's lag"
else
	bad "terminal: no status line; terminal: $(shown a.tty)"
fi
grep -q 'mnemo: 0:0[1-9]  [1-9][0-9.]*[kMG]* events' a.tty &&
	ok "terminal: events counted while the program runs" ||
	bad "terminal: no event counted; terminal: $(shown a.tty)"
only_status_lines a.tty && ok "terminal: only status lines, erased at the end" ||
	bad "terminal: not only status lines erased at the end: $(shown a.tty)"
grep -q '^complete: true' a.yaml && ok "terminal: complete profile" ||
	bad "terminal: no complete profile"

# ---- Without a terminal: nothing on stderr; -v says why.
"$bin/mnemo" run --progress -o b.yaml -- ./progress 1300 >b.out 2>b.err
rc=$?
[ "$rc" -eq 3 ] && cmp -s b.out expected.out && ok "no terminal: exit status and stdout" ||
	bad "no terminal: exit status $rc, stdout $(cat b.out)"
[ ! -s b.err ] && ok "no terminal: nothing on stderr" ||
	bad "no terminal: stderr holds $(shown b.err)"
"$bin/mnemo" run -v --progress -o b.yaml -- ./progress 100 >b.out 2>b.err
grep -q '^mnemo: --progress: stderr is not a terminal: no status line$' b.err &&
	ok "no terminal, -v: says why there is no status line" ||
	bad "no terminal, -v: $(cat b.err)"

# ---- One backend a module, the second held until the line shows its lag: a full queue (4 of
# 1 MiB), though the first backend has read everything.  MNEMO_BACKEND holds index 1.
cat >hold <<EOF
#!/bin/sh
case " \$* " in *" --index 1 "*) while [ ! -e "$work/go" ]; do sleep 0.05; done ;; esac
exec "$bin/mnemo-backend" "\$@"
EOF
chmod +x hold
MNEMO_BACKEND=$work/hold MNEMO_BACKENDS=per-module \
	on_tty c.tty "'$bin/mnemo' run --progress --queue-mb 1 -o c.yaml -- ./progress 500 >c.out" &
job=$!
wait_for 'full)' c.tty
touch go
wait $job
rc=$?
grep -q 'backend lag: 4\.0 MiB (4 buffers, full)' c.tty &&
	ok "two backends: the lag shown is the held one's, a full queue" ||
	bad "two backends: no full queue shown: $(shown c.tty)"
[ "$rc" -eq 3 ] && cmp -s c.out expected.out && only_status_lines c.tty &&
	ok "two backends: exit status, stdout, status lines erased" ||
	bad "two backends: exit status $rc, stdout $(cat c.out), terminal $(shown c.tty)"
grep -q '^complete: true' c.yaml && ok "two backends: complete profile" ||
	bad "two backends: no complete profile"

# ---- SIGTERM to mnemo run while the line is up.
# The shell's own stderr goes to /dev/null: it may say "Terminated" of the job it waited for.
on_tty d.tty "exec 3>&2 2>/dev/null;
	'$bin/mnemo' run --progress -o d.yaml -- ./progress 20000 >d.out 2>&3 3>&- & echo \$! >pid;
	wait \$!; echo \$? >rc" &
job=$!
wait_for 'events' d.tty
[ -s pid ] && kill -TERM "$(cat pid)"
wait $job
[ "$(cat rc 2>/dev/null)" = 143 ] && ok "SIGTERM: mnemo run died of it, as the program did" ||
	bad "SIGTERM: mnemo run's status $(cat rc 2>/dev/null), expected 143"
printf 'progress: start\n' | cmp -s - d.out && only_status_lines d.tty &&
	ok "SIGTERM: stdout, status lines erased" ||
	bad "SIGTERM: stdout $(cat d.out), terminal $(shown d.tty)"

exit $failed
