#!/usr/bin/env bash
# The --use build against a plain LTO build: is a program rebuilt with its profile applied as
# fast as the same program built by `clang-19 -O2 -flto`?  mnemo-cc compiles with
# -fno-unroll-loops -fno-vectorize -fno-slp-vectorize (loops reach the pass as written, and the
# --use build keeps the profiling build's site ids), and counts on the LTO link to unroll and
# vectorize afterwards; this measures that it does.
#
#   bench/use_speed.sh [BUILD_DIR] [-r REPEATS] [-p PROGRAMS]
#
# Per bench program (bench/programs/*.c): a profile from a run at its small input (modules
# dependence and value-pattern, what mnemo-use takes most from), the --use rebuild with it, and
# the plain LTO build; both run at the bench input, alternately, REPEATS times (default 5), best
# of each.  Prints both times, their ratio, and a verdict: within 5% (the noise of this machine
# for runs of about 0.3 s), geomean included.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$root/build
repeats=5
programs=
while [ $# -gt 0 ]; do
	case $1 in
	-r) repeats=$2; shift 2 ;;
	-p) programs=${2//,/ }; shift 2 ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "use_speed.sh: unknown option '$1'" >&2; exit 2 ;;
	*) build=$1; shift ;;
	esac
done
bin=$build/bin
[ -x "$bin/mnemo-cc" ] || { echo "use_speed.sh: no $bin/mnemo-cc: build first" >&2; exit 2; }
source "$here/programs/small_inputs.sh"
[ -n "$programs" ] || programs=$(cd "$here/programs" && ls *.c | sed 's/\.c$//' | tr '\n' ' ')
work=$(mktemp -d /tmp/mnemo-use-speed.XXXXXX)
trap 'rm -rf "$work"' EXIT

best() {   # best NAME ARGS...: the fastest of REPEATS runs, seconds (wall), output kept in NAME.out
	local t b=
	for _ in $(seq "$repeats"); do
		/usr/bin/time -f %e -o "$work/time" "$@" >"$work/out" 2>/dev/null
		t=$(tail -1 "$work/time")
		b=$(echo "${b:-$t} $t" | awk '{print ($2 < $1) ? $2 : $1}')
	done
	echo "$b"
}

printf '%-12s %9s %9s %8s\n' program "lto (s)" "use (s)" "use/lto"
logs=0 n=0 worst=0
for p in $programs; do
	src=$here/programs/$p.c
	cflags=(-O2 -g -I"$here/programs")
	clang-19 "${cflags[@]}" -flto -fuse-ld=lld "$src" -o "$work/$p.lto" -lm
	"$bin/mnemo-cc" -m dependence,value-pattern "${cflags[@]}" "$src" -o "$work/$p.prof" -lm
	(cd "$work" && MNEMO_OUTPUT="$work/$p.yaml" "./$p.prof" $(small_args "$p") >/dev/null)
	"$bin/mnemo-cc" --use "$work/$p.yaml" "${cflags[@]}" "$src" -o "$work/$p.use" -lm \
		2>"$work/$p.use.log"
	args=$(bench_args "$p")
	lto=1e9 use=1e9
	for _ in 1 2; do   # alternated, so that a slow spell of the machine hits both
		lto=$(echo "$lto $(best "$work/$p.lto" $args)" | awk '{print ($2 < $1) ? $2 : $1}')
		use=$(echo "$use $(best "$work/$p.use" $args)" | awk '{print ($2 < $1) ? $2 : $1}')
	done
	r=$(echo "$use $lto" | awk '{printf "%.3f", $1 / $2}')
	printf '%-12s %9.3f %9.3f %7.3fx\n' "$p" "$lto" "$use" "$r"
	logs=$(echo "$logs $r" | awk '{print $1 + log($2)}')
	n=$((n + 1))
done
g=$(echo "$logs $n" | awk '{printf "%.3f", exp($1 / $2)}')
verdict=$(echo "$g" | awk '{print ($1 + 0 > 0 && $1 <= 1.05) ? "PASS" : "FAIL"}')
printf '%-12s %9s %9s %7sx\n' geomean - - "$g"
echo "--use build as fast as clang-19 -O2 -flto (geomean within 5%): $verdict"
echo "($(date +%F), $(nproc) cores, $(uname -m))"
