#!/usr/bin/env bash
# The Lamport queue end to end (`mnemo-cc --mnemo-queue=lamport`, the overhead breakdown's
# conventional queue): histogram and linkedlist, built for the dependence module and for the null
# module with each queue, print what they print natively and give the same profile byte for byte
# (--reproducible, the same argv: same dependences, same null counts, complete).  A program built
# for two modules with the Lamport queue (one consumer only) runs unprofiled, its output unchanged,
# and says why in one line.
# Usage: lamport_e2e.sh BUILD_DIR BENCH_PROGRAMS_DIR
set -euo pipefail
build=$1 programs=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-lamport-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

source "$programs/small_inputs.sh"   # small_args NAME

for p in histogram linkedlist; do
	args=$(small_args "$p")
	for m in dependence null; do
		for q in pingpong lamport; do
			d=$work/$m.$q
			mkdir -p "$d"
			"$bin/mnemo-cc" -m "$m" --mnemo-queue=$q -O2 -g -I"$programs" \
				"$programs/$p.c" -o "$d/$p"
		done
		# The switch took: only the Lamport build defines the marker (a test that compared
		# two ping-pong runs would pass whatever the queue did).
		# (grep reads all of nm's output: with -q, pipefail would see nm's SIGPIPE.)
		nm "$work/$m.lamport/$p" | grep ' R __mnemo_queue_lamport$' >/dev/null ||
			fail "$p -m $m --mnemo-queue=lamport: no __mnemo_queue_lamport defined"
		if nm "$work/$m.pingpong/$p" | grep ' R __mnemo_queue_lamport$' >/dev/null; then
			fail "$p -m $m: __mnemo_queue_lamport defined without --mnemo-queue=lamport"
		fi
		[ -f "$work/$p.native" ] ||
			MNEMO_DISABLE=1 "$work/$m.pingpong/$p" $args >"$work/$p.native"
		for q in pingpong lamport; do
			# Run as ./NAME in its own directory: the same argv, so profiles compare whole.
			(cd "$work/$m.$q" && "$bin/mnemo" run --reproducible -o "$p.yaml" "./$p" $args \
				>"$p.out") || fail "$p -m $m, $q queue: exit status $?"
			cmp -s "$work/$p.native" "$work/$m.$q/$p.out" ||
				fail "$p -m $m, $q queue: the program's output changed"
			grep -q '^complete: true' "$work/$m.$q/$p.yaml" ||
				fail "$p -m $m, $q queue: profile incomplete"
		done
		a=$work/$m.pingpong/$p.yaml b=$work/$m.lamport/$p.yaml
		if ! cmp -s "$a" "$b"; then
			diff "$a" "$b" | head -20 >&2
			fail "$p -m $m: the profile with the Lamport queue differs from the ping-pong one"
		fi
		grep -q '^modules:' "$a" || fail "$p -m $m: no modules: section in $a"
		echo "$p ($args) -m $m: ping-pong and Lamport profiles identical ($(wc -c <"$a") bytes)"
	done
done

# Two modules in one backend (one consumer): profiled, each section as with the ping-pong queue.
# One backend per module (two consumers): refused, the program runs unprofiled, output unchanged.
d=$work/two
mkdir -p "$d"
"$bin/mnemo-cc" -m dependence,null --mnemo-queue=lamport -O2 -g -I"$programs" \
	"$programs/histogram.c" -o "$d/histogram"
"$bin/mnemo-cc" -m dependence,null -O2 -g -I"$programs" "$programs/histogram.c" -o "$d/histogram.pp"
args=$(small_args histogram)
(cd "$d" && "$bin/mnemo" run --reproducible -o l.yaml ./histogram $args >l.out) ||
	fail "two modules in one backend, Lamport queue: exit status $?"
(cd "$d" && "$bin/mnemo" run --reproducible -o p.yaml ./histogram.pp $args >p.out) ||
	fail "two modules in one backend, ping-pong queue: exit status $?"
cmp -s "$work/histogram.native" "$d/l.out" || fail "two modules, Lamport queue: the output changed"
cmp -s <(sed -n '/^modules:/,$p' "$d/l.yaml") <(sed -n '/^modules:/,$p' "$d/p.yaml") ||
	fail "two modules in one backend: the Lamport queue's sections differ from the ping-pong queue's"
grep -q '^complete: true' "$d/l.yaml" || fail "two modules, Lamport queue: profile incomplete"
echo "two modules in one backend, Lamport queue: sections identical to the ping-pong queue's"
(cd "$d" && MNEMO_BACKENDS=per-module "$bin/mnemo" run -o h.yaml ./histogram $args >h.out 2>h.err) ||
	fail "two backends, Lamport queue: exit status $?"
cmp -s "$work/histogram.native" "$d/h.out" || fail "two backends, Lamport queue: the output changed"
grep -q 'Lamport queue.*takes one backend, not 2.*; running unprofiled' "$d/h.err" ||
	fail "two backends, Lamport queue: expected the one-line refusal, got: $(cat "$d/h.err")"
[ ! -e "$d/h.yaml" ] || fail "two backends, Lamport queue: expected no profile, got $d/h.yaml"
echo "two backends, Lamport queue: refused ($(cat "$d/h.err"))"
echo "PASS"
