#!/bin/sh
# Under `mnemo run` the backends are descendants that it waits for (tools/run.c, wait_backends()):
# what runs mnemo run (here rusage-run, as `time` would) sees a peak RSS at least the backend's
# own (the profile's backend peak_rss_kib, far above the program's: descendants.c), and once
# mnemo run has returned no backend process is left, running or zombie.  The program's end still
# passes through: exit 0 and 3, death by SIGSEGV and SIGTERM it sends itself, SIGTERM sent to
# mnemo run (passed on to the program) and ^C to the process group.  The backend runs under a name
# of its own (a link named mb-<pid>, MNEMO_BACKEND) so that /proc tells it from any other.
#
#   run_descendants.sh BINDIR SOURCE_DIR RUSAGE_RUN
set -u
bin=$1 src=$2 rusage=$3
work=$(mktemp -d /tmp/mnemo-run-descendants.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

"$bin/mnemo-cc" -m dependence -O1 -g "$src/tests/tools/descendants.c" -o descendants 2>build.err ||
	{ echo "FAIL build: $(cat build.err)"; exit 1; }
name=mb-$$
ln -s "$bin/mnemo-backend" "$name"
export MNEMO_BACKEND="$work/$name"

# Processes called $name, with their state: none may be left once mnemo run has returned.
leftover() {
	for f in /proc/[0-9]*/stat; do
		read -r line <"$f" 2>/dev/null || continue
		case $line in
		*"($name) "*) echo "${line%% (*} $(echo "${line##*) }" | cut -d' ' -f1)" ;;
		esac
	done
}

# check LABEL WANT [-k SIG:MS:HOW] ARGS...: runs mnemo run -o p.yaml -- ./descendants ARGS under
# rusage-run; WANT is how it must end ("exited 3", "signaled 11").
check() {
	label=$1 want=$2
	shift 2
	kill_opt=
	if [ "$1" = -k ]; then kill_opt="-k $2"; shift 2; fi
	rm -f p.yaml
	# shellcheck disable=SC2086
	"$rusage" $kill_opt -- "$bin/mnemo" run -o p.yaml -- ./descendants "$@" >out 2>err
	got=$(grep '^maxrss_kib ' out)
	left=$(leftover)
	case $got in
	*" $want") ok "$label: mnemo run ends as the program did ($want)" ;;
	*) bad "$label: expected '$want', got '$got'; stderr: $(cat err)" ;;
	esac
	grep -q '^read [0-9]* MiB: 0$' out && ok "$label: the program's output" ||
		bad "$label: output $(cat out)"
	[ -z "$left" ] && ok "$label: no backend left after mnemo run returned" ||
		bad "$label: left after mnemo run returned (pid state): $left"
	if grep -q '^format: mnemo-profile/1' p.yaml 2>/dev/null; then
		ok "$label: profile written before mnemo run returned"
	else
		bad "$label: no profile when mnemo run returned; stderr: $(cat err)"
		return
	fi
	peak=$(sed -n 's/^  dependence: {.*peak_rss_kib: \([0-9]*\).*/\1/p' p.yaml)
	rss=$(echo "$got" | cut -d' ' -f2)
	if [ -z "$peak" ]; then
		bad "$label: no backend peak_rss_kib in the profile"
	elif [ "$rss" -ge "$peak" ]; then
		ok "$label: mnemo run's caller sees $rss KiB, the backend's peak is $peak KiB"
	else
		bad "$label: mnemo run's caller sees $rss KiB, less than the backend's $peak KiB"
	fi
}

# The program alone peaks far below its backend: the check above tells waited-for from not.
MNEMO_DISABLE=1 "$rusage" -- ./descendants 64 >native.out
echo "the program alone: $(grep "^maxrss_kib" native.out)"

check "exit 0" "exited 0" 64
check "exit 3" "exited 3" 64 exit3
check "SIGSEGV" "signaled 11" 64 segv
check "SIGTERM from itself" "signaled 15" 64 term
check "SIGTERM to mnemo run" "signaled 15" -k 15:2000:pid 64 sleep
check "^C to the process group" "signaled 2" -k 2:2000:group 64 sleep

exit $failed
