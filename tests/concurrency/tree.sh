#!/bin/sh
# Every image of a process tree leaves a profile of its own (issue 22, fork and exec), named as
# runtime.c's "Sessions of a process tree" says: the first image's path as given, fork children
# and processes the program starts at <name>.<pid>.<ext>, a later image of one process at
# <name>.<pid>.<image>.<ext>.  tree.c's modes say what each image stores (value-pattern's store
# executions): each profile must hold its own image's count, be complete, and say how the image
# ended; the program's output is the native build's (pids aside); no backend outlives its image.
#
#   tree.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-tree.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
unset MNEMO_OUTPUT MNEMO_MODULES MNEMO_DISABLE MNEMO_REPRODUCIBLE MNEMO_WORKERS MNEMO_EXEC_OF
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

"$bin/mnemo-cc" -m value-pattern -O1 -g "$src/tests/concurrency/tree.c" -o tree \
	2>build.err || { echo "FAIL build: $(cat build.err)"; exit 1; }
clang-19 -O1 "$src/tests/concurrency/tree.c" -o tree-native ||
	{ echo "FAIL native build"; exit 1; }

# run MODE [mnemo run -o FILE]: in a fresh folder m.MODE, verbose (for the backends' pids).
run() {
	mode=$1
	shift
	rm -rf "m.$mode" && mkdir "m.$mode" && cd "m.$mode" || exit 2
	if [ $# -gt 0 ]; then
		MNEMO_VERBOSE=1 "$bin/mnemo" run "$@" -- ../tree "$mode" >out 2>err
	else
		MNEMO_VERBOSE=1 ../tree "$mode" >out 2>err
	fi
	status=$?
	../tree-native "$mode" >native 2>/dev/null
	[ "$status" -eq 0 ] || bad "$mode: exit status $status; $(grep -v '^mnemo: ' err)"
	sed 's/ [0-9]* / PID /' out >out.s
	sed 's/ [0-9]* / PID /' native >native.s
	cmp -s out.s native.s && ok "$mode: output as native" ||
		bad "$mode: output '$(cat out)', native '$(cat native)'"
	backends_gone
	cd ..
}

# Every backend the run started (verbose lines) exits within 5 s of the program.
backends_gone() {
	pids=$(sed -n 's/^mnemo: backend .*: pid \([0-9]*\)$/\1/p' err)
	n=0
	for p in $pids; do
		t=0
		while kill -0 "$p" 2>/dev/null && [ "$t" -lt 50 ]; do sleep 0.1; t=$((t + 1)); done
		kill -0 "$p" 2>/dev/null && bad "$mode: backend $p still running 5 s after the program"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] && ok "$mode: $n backends, none outlived its image" ||
		bad "$mode: no backend reported"
}

# check FILE WHAT PID K ENDING: FILE is image WHAT's profile: its store ran K times, it is
# complete, and it ended with ENDING ("exit_status: 0" or "exec: true").
check() {
	f=$1 what=$2 pid=$3 k=$4 ending=$5
	if [ ! -f "$f" ]; then
		bad "$mode: $what (pid $pid): no profile $f; have $(ls)"
		return
	fi
	grep -q "^program: {.* pid: $pid," "$f" || bad "$mode: $f: not pid $pid's: $(grep '^program:' "$f")"
	grep -q "^program: {.*$ending" "$f" || bad "$mode: $f: expected $ending: $(grep '^program:' "$f")"
	grep -qx 'complete: true' "$f" || bad "$mode: $f: $(grep -E '^(complete|incomplete_reason):' "$f")"
	grep -q "access: store, executions: $k," "$f" && ok "$mode: $what $pid: $f, $k stores, $ending" ||
		bad "$mode: $f: no store of $k executions: $(grep 'access: store' "$f")"
}

pid_of() { sed -n "s/^$1 \([0-9]*\) .*/\1/p" "m.$mode/out" | sed -n "${2:-1}p"; }

run fork
for c in 1 2 3 4; do
	check "m.fork/tree.$(pid_of child $c).mnemo.yaml" child "$(pid_of child $c)" $((1000 * c)) \
		"exit_status: 0"
done
check m.fork/tree.mnemo.yaml parent "$(pid_of parent)" 777 "exit_status: 0"
grep -q "parent_pid: $(pid_of parent), image: 1," "m.fork/tree.$(pid_of child 1).mnemo.yaml" &&
	ok "fork: a child's profile names its parent" || bad "fork: no parent_pid in the child's"
[ "$(ls m.fork/*.yaml | wc -l)" -eq 5 ] && ok "fork: five profiles" || bad "fork: $(ls m.fork)"

run exec
p=$(pid_of first)
check m.exec/tree.mnemo.yaml first "$p" 500 "exec: true, exit_status: null"
check "m.exec/tree.$p.mnemo.yaml" second "$p" 300 "exit_status: 0"
grep -q 'argv: \[../tree, second\]' "m.exec/tree.$p.mnemo.yaml" &&
	ok "exec: the second profile names its own image" || bad "exec: second image's argv"

run forkexec -o "$work/m.forkexec/p.yaml"
p=$(pid_of second)
check m.forkexec/p.yaml parent "$(pid_of parent)" 777 "exit_status: 0"
# The fork child made an event before its exec (argv[0]) or none: its profile, or not.
if [ -f "m.forkexec/p.$p.2.yaml" ]; then
	grep -q '^program: {.*image: 1, exec: true' "m.forkexec/p.$p.yaml" &&
		ok "forkexec: the fork child's own profile ends in exec" ||
		bad "forkexec: p.$p.yaml: $(grep '^program:' "m.forkexec/p.$p.yaml")"
	check "m.forkexec/p.$p.2.yaml" second "$p" 300 "exit_status: 0"
else
	check "m.forkexec/p.$p.yaml" second "$p" 300 "exit_status: 0"
fi

run system
check m.system/tree.mnemo.yaml parent "$(pid_of parent)" 777 "exit_status: 0"
check "m.system/tree.$(pid_of second).mnemo.yaml" second "$(pid_of second)" 300 "exit_status: 0"

run churn
check m.churn/tree.mnemo.yaml parent "$(pid_of parent)" 777 "exit_status: 0"
n=$(ls m.churn | grep -c '^tree\.[0-9]*\.mnemo\.yaml$')
[ "$n" -eq 20 ] && ok "churn: 20 children, a profile each" || bad "churn: $n child profiles"
left=$(ls -A m.* | grep -v -e '\.yaml$' -e '^out' -e '^err$' -e '^native' -e '^m\.' -e '^$')
[ -z "$left" ] && ok "no temporary file left" || bad "left behind: $(echo $left)"

[ "$failed" -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit "$failed"
