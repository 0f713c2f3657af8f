#!/bin/sh
# Threads of a program (issue 22, per-thread streams): every thread's events reach value-pattern,
# each in its thread's order, and the profile is complete with the known counts of threads.c, as
# it is for alloc-sizes (sums); too few lanes (MNEMO_THREADS=1) say how many events were dropped;
# 10,000 short threads
# leak nothing: no fd, no shared memory object (memfd or /dev/shm) in the process or after it,
# no backend left running, and the backend's memory bounded (10,000 threads cost about what
# 1,000 do).  Output is the native build's throughout.
#
#   threads.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-threads.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
unset MNEMO_OUTPUT MNEMO_MODULES MNEMO_DISABLE MNEMO_REPRODUCIBLE MNEMO_WORKERS MNEMO_THREADS
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

for m in value-pattern alloc-sizes; do
	"$bin/mnemo-cc" -m $m -O1 -g "$src/tests/threads/threads.c" -o threads-$m \
		2>build.err || { echo "FAIL build -m $m: $(cat build.err)"; exit 1; }
done
clang-19 -O1 "$src/tests/threads/threads.c" -o threads-native ||
	{ echo "FAIL native build"; exit 1; }

# run NAME PROGRAM MODE [VAR=VALUE...]: the profile NAME.yaml; output compared with native.
# MODE is words (churn N).
run() {
	name=$1 prog=$2 mode=$3
	shift 3
	# shellcheck disable=SC2086  # MODE is words on purpose
	env MNEMO_OUTPUT="$name.yaml" "$@" "./$prog" $mode >"$name.out" 2>"$name.err"
	status=$?
	# shellcheck disable=SC2086
	./threads-native $mode >"$name.native" 2>/dev/null
	[ "$status" -eq 0 ] || bad "$name: exit status $status: $(cat "$name.err")"
	cmp -s "$name.out" "$name.native" && ok "$name: output as native ($(cat "$name.out"))" ||
		bad "$name: output '$(cat "$name.out")', native '$(cat "$name.native")'"
	[ -f "$name.yaml" ] || bad "$name: no profile; stderr: $(cat "$name.err")"
}

complete() {
	grep -qx 'complete: true' "$1.yaml" && ok "$1: complete" ||
		bad "$1: $(grep -E '^(complete|incomplete_reason):' "$1.yaml")"
}

# stores NAME K: some store site of the profile ran exactly K times.
stores() {
	grep -q "access: store, executions: $2," "$1.yaml" && ok "$1: a store of $2 executions" ||
		bad "$1: no store of $2 executions: $(grep 'access: store' "$1.yaml")"
}

# (b) Four threads: each thread's array (4 x 1000 stores) and the counter under the mutex
# (4 x 250), as the serial twin counts them.
run pool threads-value-pattern pool
complete pool
stores pool 4000
stores pool 1000
grep -q '^threads:' pool.yaml && grep -q '^  count: 5$' pool.yaml &&
	ok "pool: threads: 5 listed" || bad "pool: threads: $(sed -n '/^threads:/,/^sites:/p' pool.yaml)"
run serial threads-value-pattern serial
complete serial
stores serial 4000
stores serial 1000
grep -q '^threads:' serial.yaml && bad "serial: a threads: listing for one thread" ||
	ok "serial: no threads: listing"
# Every per-site count of the serial twin is one of the pool's too (which has the threads' own
# function besides).
sect() { sed -n '/^  value-pattern:/,$p' "$1.yaml" | grep -o 'executions: [0-9]*' | sort; }
sect pool >pool.exec
sect serial >serial.exec
[ -z "$(comm -23 serial.exec pool.exec)" ] && ok "pool: the serial twin's per-site executions" ||
	bad "pool: executions not in the serial twin's: $(comm -23 serial.exec pool.exec | tr '\n' ' ')"

# (d) Every module in the tree takes every thread: alloc-sizes too (sums, mn_thread_sums), complete.
run sums threads-alloc-sizes pool
complete sums

# Fewer lanes than threads alive at once: 3 of the 4 are dropped, and the profile says so.
run lanes threads-value-pattern pool MNEMO_THREADS=1
grep -q '^incomplete_reason: .*events from threads beyond the 1 lanes were dropped (MNEMO_THREADS)' lanes.yaml &&
	ok "lanes: MNEMO_THREADS=1 drops 3 threads, said" ||
	bad "lanes: $(grep -E '^(complete|incomplete_reason):' lanes.yaml)"

# (c) Churn: 10,000 threads, every one's stores counted; nothing left behind: no fd (the program
# counts its own, in its output), no shared memory object (the program's memfd and /dev/shm fds
# and mappings before and after its threads, on stderr; /dev/shm after it), no backend alive
# after it; the backend's memory bounded: at 10,000 threads within 128 bytes a thread (plus
# 512 KiB of allocator noise) of its memory at 1,000, which a per-thread leak of a lane, a
# buffer or a module's per-thread state would exceed.
ls /dev/shm >shm.before 2>/dev/null
run churn threads-value-pattern churn
complete churn
stores churn 100000
grep -q '^  count: 10001$' churn.yaml && grep -q '^  more: 9937$' churn.yaml &&
	ok "churn: 10001 threads, 64 listed" || bad "churn: $(sed -n '/^threads:/,/^  list:/p' churn.yaml)"
shm=$(grep '^shared memory:' churn.err)
set -- $(echo "$shm" | grep -o '[0-9]*')
[ $# -eq 4 ] && [ "$2" -le "$1" ] && [ "$4" -le "$3" ] &&
	ok "churn: no shared memory object left in the process ($shm)" ||
	bad "churn: shared memory objects left in the process: '${shm:-no line}'"
ls /dev/shm >shm.after 2>/dev/null
[ -z "$(comm -13 shm.before shm.after | grep -i mnemo)" ] && ok "churn: nothing of Mnemo's in /dev/shm" ||
	bad "churn: left in /dev/shm: $(comm -13 shm.before shm.after | grep -i mnemo | tr '\n' ' ')"
# A backend still running in this directory (its working directory is the program's) after the
# profile was written has outlived its program; it gets 5 s to exit.
backends() {
	for p in $(pgrep -x mnemo-backend); do
		[ "$(readlink "/proc/$p/cwd" 2>/dev/null)" != "$work" ] || echo "$p"
	done
}
i=0
while [ -n "$(backends)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -z "$(backends)" ] && ok "churn: no backend left running" ||
	bad "churn: backends still running 5 s after the program: $(backends | tr '\n' ' ')"
run churn1k threads-value-pattern "churn 1000"
rss=$(sed -n 's/.*peak_rss_kib: \([0-9]*\).*/\1/p' churn.yaml | head -1)
rss1k=$(sed -n 's/.*peak_rss_kib: \([0-9]*\).*/\1/p' churn1k.yaml | head -1)
limit=$((${rss1k:-0} + 9000 * 128 / 1024 + 512))
[ -n "$rss" ] && [ -n "$rss1k" ] && [ "$rss" -le "$limit" ] &&
	ok "churn: backend peak RSS $rss KiB at 10,000 threads, $rss1k KiB at 1,000 (limit $limit KiB)" ||
	bad "churn: backend peak RSS ${rss:-?} KiB at 10,000 threads, ${rss1k:-?} KiB at 1,000: over $limit KiB, memory grows with the threads"
exit $failed
