#!/usr/bin/env bash
# The program's view of its own signals is unchanged under Mnemo (issue 18, item 3): programs that
# read back their dispositions and alternate stack, install handlers for the signals the runtime
# flushes on, or ignore signals, are built natively and with mnemo-cc (null module); each pair must
# print the same and end the same way (exit status or death signal), and a profiled run that dies
# of a signal still writes its profile, marked incomplete with that signal, like a program without
# a handler of its own.
# Usage: signals.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-signals-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc=${CLANG:-clang-19}
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }

for p in dispositions fatal ignore threads; do
	flags="-O2 -g -pthread -Wno-deprecated-declarations"
	"$cc" $flags "$src/$p.c" -o "$work/$p.native"
	"$bin/mnemo-cc" -m null $flags "$src/$p.c" -o "$work/$p"
done

# run EXE ARGS...: sets $out (stdout), $err, $end ("exit N" or "signal N").
run() {
	local rc=0
	"$@" >"$work/out" 2>"$work/err" || rc=$?
	out=$(cat "$work/out") err=$(cat "$work/err")
	if [ "$rc" -gt 128 ]; then end="signal $((rc - 128))"; else end="exit $rc"; fi
}

# same NAME ARGS...: the native and the profiled build print the same and end the same way;
# leaves the profiled run's $end and its profile in $work/p.yaml.
same() {
	name=$1; shift
	local nout nend
	run "$work/$name.native" "$@"
	nout=$out nend=$end mode=$*
	rm -f "$work/p.yaml"
	MNEMO_OUTPUT=$work/p.yaml run "$work/$name" "$@"
	if [ "$out" != "$nout" ]; then
		fail "$name $*: output differs from native:"
		diff <(echo "$nout") <(echo "$out") >&2 || true
	fi
	[ "$end" = "$nend" ] || fail "$name $*: expected $nend (native), got $end; stderr: $err"
}

# profiled_death SIG: the profile of the last profiled run says it died of SIG, incomplete.
profiled_death() {
	local sig=$1 y=$work/p.yaml
	if [ ! -f "$y" ]; then
		fail "$name $mode: no profile written after signal $sig; stderr: $err"
		return
	fi
	grep -q "signal: $sig," "$y" ||
		fail "$name $mode: profile does not record signal $sig: $(grep '^program:' "$y")"
	grep -q '^complete: false' "$y" ||
		fail "$name $mode: profile of a run killed by $sig is not marked incomplete"
	grep -q '^incomplete_reason: the program was killed by signal' "$y" ||
		fail "$name $mode: unexpected $(grep '^incomplete_reason' "$y")"
}

same dispositions
same dispositions set
grep -q 'h1' "$work/out" || fail "dispositions set printed no handler: $out"

same fatal plain;     [ "$end" = "signal 11" ] || fail "plain: $end"; profiled_death 11
same fatal segv;      [ "$end" = "signal 11" ] || fail "segv: $end"; profiled_death 11
same fatal overflow;  [ "$end" = "signal 11" ] || fail "overflow: $end"; profiled_death 11
same fatal abort;     [ "$end" = "signal 6" ] || fail "abort: $end"; profiled_death 6
same fatal abort-return; [ "$end" = "signal 6" ] || fail "abort-return: $end"; profiled_death 6
same fatal resethand; [ "$end" = "signal 10" ] || fail "resethand: $end"; profiled_death 10

same ignore; [ "$end" = "exit 0" ] || fail "ignore: $end"
grep -q '^complete: true' "$work/p.yaml" || fail "ignore: profile not complete"

same threads; [ "$end" = "exit 0" ] || fail "threads: $end"
grep -q 'SIGUSR1 8000, SIGUSR2 8000, bad 0' "$work/out" || fail "threads: $out"

[ "$failed" = 0 ] && echo "signals: all passed"
exit "$failed"
