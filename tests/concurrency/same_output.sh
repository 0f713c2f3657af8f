#!/bin/sh
# Concurrent runs never mix: 20 runs of one program start at once, each with its own input K and
# all with one profile path (as the default `count.mnemo.yaml`, MNEMO_OUTPUT and `mnemo run -o`
# name it).  Every run writes its own temporary files and renames its whole profile into place,
# so the file left behind is exactly one run's complete profile: its header's argv, null's
# loop_iter and store counts (one backend's section), value-pattern's store executions (another
# backend's section) and each backend's event count all say the same K.  Every run either wrote
# its profile or said in one line why not; on this healthy filesystem none has a reason not to.
# No temporary file is left in the folder.
#
#   same_output.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
runs=20
work=$(mktemp -d /tmp/mnemo-same-output.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
unset MNEMO_OUTPUT MNEMO_MODULES MNEMO_VERBOSE MNEMO_DISABLE MNEMO_REPRODUCIBLE MNEMO_WORKERS
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

"$bin/mnemo-cc" -m null,value-pattern -O1 -g "$src/tests/concurrency/count.c" -o count \
	2>build.err || { echo "FAIL build: $(cat build.err)"; exit 1; }
mkdir out
profile=$work/out/count.mnemo.yaml

# The start gate: every run blocks reading one line of the FIFO, held open here so that no
# reader can miss the lines; one write releases all of them at once.
mkfifo gate
exec 3<>gate
i=1
while [ "$i" -le "$runs" ]; do
	k=$((20000 + 137 * i))
	case $((i % 3)) in
	0) (cd out && read -r _ <../gate && exec ../count "$k") ;;
	1) (read -r _ <gate && MNEMO_OUTPUT=$profile exec ./count "$k") ;;
	*) (read -r _ <gate && exec "$bin/mnemo" run -o "$profile" -- ./count "$k") ;;
	esac >"run$i.out" 2>"run$i.err" &
	echo "$!" >"run$i.pid"
	i=$((i + 1))
done
sleep 0.2
lines=
i=1
while [ "$i" -le "$runs" ]; do lines="$lines
"; i=$((i + 1)); done
printf '%s' "$lines" >&3
exec 3>&-

# Each run: the program's own behaviour unchanged, and at most one line on stderr.
wrote=0 oneline=0
i=1
while [ "$i" -le "$runs" ]; do
	k=$((20000 + 137 * i))
	wait "$(cat "run$i.pid")"
	status=$?
	[ "$status" -eq 0 ] || bad "run $i (K=$k): exit status $status"
	[ "$(cat "run$i.out")" = "$k" ] || bad "run $i (K=$k): printed '$(cat "run$i.out")'"
	n=$(wc -l <"run$i.err")
	if [ "$n" -eq 0 ] && [ ! -s "run$i.err" ]; then
		wrote=$((wrote + 1))
	elif [ "$n" -le 1 ]; then
		oneline=$((oneline + 1))
		printf 'run %d (K=%d) wrote no profile: %s\n' "$i" "$k" "$(cat "run$i.err")"
	else
		bad "run $i (K=$k): $n lines on stderr, expected none or one: $(cat "run$i.err")"
	fi
	i=$((i + 1))
done
[ $((wrote + oneline)) -eq "$runs" ] &&
	ok "every run wrote its profile or said in one line why not" ||
	bad "$((runs - wrote - oneline)) of $runs runs said more than one line"
[ "$wrote" -eq "$runs" ] && ok "all $runs runs wrote their profile" ||
	bad "$wrote of $runs runs wrote their profile"

# The profile left behind: one run's, whole and self-consistent.
if [ ! -f "$profile" ]; then
	bad "no profile at $profile"
else
	k=$(sed -n 's/^program: {argv: \[[^],]*, "\([0-9]*\)"\].*/\1/p' "$profile")
	i=$(( ${k:-0} > 20000 && (${k:-0} - 20000) % 137 == 0 ? (${k:-0} - 20000) / 137 : 0 ))
	if [ "$i" -ge 1 ] && [ "$i" -le "$runs" ]; then
		ok "the header's argv is run $i's (K=$k)"
	else
		bad "the header's argv names no run: '$(grep '^program:' "$profile")'"
		k=-1
	fi
	grep -qx 'complete: true' "$profile" && ok "complete: true" ||
		bad "not complete: $(grep -E '^(complete|incomplete_reason):' "$profile")"
	grep -q '^program: {.* exit_status: 0,' "$profile" && ok "exit_status: 0" ||
		bad "exit status: $(grep '^program:' "$profile")"
	iters=$(awk '/^modules:/ { m = 1 } m && /^  "null":/ { n = 1 }
		n && $1 == "loop_iter:" { print $2; exit }' "$profile")
	stores=$(awk '/^modules:/ { m = 1 } m && /^  "null":/ { n = 1 }
		n && $1 == "store:" { print $2; exit }' "$profile")
	execs=$(sed -n 's/^    - {site: [0-9]*, access: store, executions: \([0-9]*\),.*/\1/p' \
		"$profile")
	[ "$iters" = "$k" ] && [ "$stores" = "$k" ] &&
		ok "null's section: $k iterations and stores" ||
		bad "null's section: loop_iter '$iters', store '$stores', expected $k"
	[ "$execs" = "$k" ] && ok "value-pattern's section: the store ran $k times" ||
		bad "value-pattern's section: store executions '$execs', expected $k"
	events=$(sed -n 's/^program: {.* events: \([0-9]*\),.*/\1/p' "$profile")
	# One backend hosts both modules: its entry under backend: names them joined by '+'.
	ev_backend=$(sed -n 's/^  [^ ]*: {events: \([0-9]*\),.*/\1/p' "$profile")
	[ -n "$events" ] && [ "$ev_backend" = "$events" ] &&
		ok "the header and the backend saw $events events" ||
		bad "events: header '$events', backend '$ev_backend'"
fi

left=$(ls -A out | grep -vx 'count.mnemo.yaml')
[ -z "$left" ] && ok "no temporary file left" || bad "left behind: $(echo $left)"

[ "$failed" -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit "$failed"
