#!/bin/sh
# The workers limit (options.def MN_OPTION_RANGE(MNEMO_WORKERS, ...)): every module that shards
# writes its profile at the maximum; above it the program runs unprofiled, its output and status
# unchanged, and one line says why, naming the limit; `mnemo run -j` above it is a usage error
# naming the limit, before the program runs.
#
#   workers_limit.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-workers-limit.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }
is_profile() { head -n 1 "$1" 2>/dev/null | grep -qx 'format: mnemo-profile/1'; }

max=$(sed -n 's/^MN_OPTION_RANGE(MNEMO_WORKERS, *1, *\([0-9]*\),.*/\1/p' "$src/runtime/options.def")
[ -n "$max" ] || { echo "FAIL: no MNEMO_WORKERS range in options.def"; exit 1; }
over=$((max + 1))
sharded=$(grep -l '^shard: *\(address\|site\)' "$bin"/../share/mnemo/modules/*/events.yaml |
	sed 's|.*/modules/\([^/]*\)/events.yaml|\1|' | tr '\n' ' ')
[ -n "$sharded" ] || { echo "FAIL: no installed module shards"; exit 1; }

# Every module that shards: the program is built for all of them (not only the default set).
"$bin/mnemo-cc" -m "$(echo "$sharded" | sed 's/ *$//; s/ /,/g')" -O1 -g "$src/examples/demo.c" -o demo \
	2>build.err || {
	echo "FAIL build: $(cat build.err)"; exit 1; }
MNEMO_DISABLE=1 ./demo >native.out 2>native.err
native=$?
[ -s native.out ] || { echo "FAIL: the native run printed nothing"; exit 1; }

# At the maximum, every module that shards starts that many workers and writes its profile.
for m in $sharded; do
	rm -f p.yaml
	MNEMO_MODULES=$m MNEMO_WORKERS=$max MNEMO_OUTPUT=p.yaml ./demo >out 2>err
	status=$?
	if [ "$status" -eq "$native" ] && cmp -s out native.out && [ ! -s err ] && is_profile p.yaml &&
		grep -qx 'complete: true' p.yaml; then
		ok "MNEMO_WORKERS=$max, $m: complete profile, output unchanged"
	else
		bad "MNEMO_WORKERS=$max, $m: exit $status, profile: $(head -c 40 p.yaml 2>/dev/null), stderr: $(cat err)"
	fi
done

# Above it, in the environment: unprofiled, same output and status, one line naming the limit.
for n in $over 1000; do
	rm -f p.yaml
	MNEMO_WORKERS=$n MNEMO_OUTPUT=p.yaml ./demo >out 2>err
	status=$?
	want="mnemo: MNEMO_WORKERS: '$n' is out of range (1..$max: "
	[ "$status" -eq "$native" ] && cmp -s out native.out &&
		ok "MNEMO_WORKERS=$n: output and exit status unchanged" ||
		bad "MNEMO_WORKERS=$n: exit $status (native $native), output $(cat out)"
	[ "$(wc -l <err)" -eq 1 ] && grep -qF "$want" err && grep -q 'running unprofiled$' err &&
		ok "MNEMO_WORKERS=$n: one line naming the limit" ||
		bad "MNEMO_WORKERS=$n: stderr: $(cat err)"
	[ ! -e p.yaml ] && ok "MNEMO_WORKERS=$n: no profile" || bad "MNEMO_WORKERS=$n: a profile"
done

# mnemo run -j above it: refused before the program runs, naming the limit.
for n in $over 1000; do
	rm -f p.yaml
	"$bin/mnemo" run -o p.yaml -j $n -- ./demo >out 2>err
	status=$?
	[ "$status" -eq 2 ] && [ ! -s out ] && [ ! -e p.yaml ] &&
		ok "mnemo run -j $n: usage error, the program did not run" ||
		bad "mnemo run -j $n: exit $status, stdout $(cat out)"
	grep -qF "mnemo: -j: at most $max (" err && grep -qF "got '$n'" err &&
		ok "mnemo run -j $n: names the limit" || bad "mnemo run -j $n: stderr: $(cat err)"
done
# ... and at it, a profile.
rm -f p.yaml
"$bin/mnemo" run -o p.yaml -j "$max" -- ./demo >out 2>err
status=$?
[ "$status" -eq "$native" ] && cmp -s out native.out && is_profile p.yaml &&
	ok "mnemo run -j $max: profile written" || bad "mnemo run -j $max: exit $status: $(cat err)"

exit $failed
