#!/usr/bin/env bash
# Mnemo bench harness: every bench program natively and under each module, side by side, in one run.
#
#   bench/run.sh [BUILD_DIR] [--quick] [--no-breakdown | --breakdown-only] [-m MODULES]
#                [-p PROGRAMS] [-P PEERS] [-r REPEATS] [-j WORKERS] [--no-threads | --threads-only]
#
# Inputs: bench/programs/small_inputs.sh (bench_args: about 0.3 s natively, SQLite 1 s).
# --quick: small inputs, one repetition, no sqlite: the whole harness as a smoke run (CI-sized).
# --no-breakdown: leave out the dependence module's breakdown (PROMPT's Table 8; see below).
# --breakdown-only: the natives and the breakdown alone (no table, peers or scaling).
# --no-threads: leave out the two-thread section (see below); --threads-only: that section alone.
#
# Prints one table: program, native seconds, then per module: seconds, slowdown, events, events per
# second, backend peak RSS; a geomean row; and, when the modules include null (the default, every
# module, does), the "frontend cost" line: the geomean slowdown under null against its target, and
# PASS or FAIL; and then, with null, the share of each program's accesses that arrived as loop
# summaries, and each module's backend CPU time per event (beside null's).  Each program's output
# under every module is checked to be byte-identical to its native output (a difference fails the
# run).  Profiled times are the best of REPEATS runs
# (default 1); native times, cheap and noisier in relative terms, the best of at least 3.  -j sets
# the backend's worker threads (MNEMO_WORKERS; default 1).
#
# -P PEERS (comma-separated; default dhat,memprof, those available; -P none for none) adds other
# memory profilers to the same table, each with seconds and slowdown (events and RSS '-'), output
# checked the same way: dhat, Valgrind's DHAT (valgrind --tool=dhat, profile to /dev/null) on the
# program built natively with -O2 -gdwarf-4 (Valgrind 3.19 cannot read DWARF 5); memprof, LLVM's
# MemProf (clang -O2 -fmemory-profile, default options, its profile written into a scratch
# directory).  With DHAT in the run, each module gets a line "<module> below DHAT's geomean:
# PASS/FAIL" (issue: every module's geomean below DHAT's on the same run).
#
# The programs: bench/programs/*.c, and sqlite, SQLite 3.53.2 from the npm registry's
# better-sqlite3 (bench/sqlite/fetch.sh: `npm pack`, cached in BUILD_DIR/bench-cache, never
# committed) driven by bench/sqlite/driver.c (200,000 orders through the C API, about 1 s).
#
# structure-affinity gets a second column, affinity/1000: the same binary run with
# MNEMO_AFFINITY_SAMPLE=1000 (its sampling mode).  With the five profiling modules all chosen (the
# default), a column all-five: one binary built for the five, one backend process for all of
# them; and five/per-module, the same binary with one backend process per module.
# Columns with a speed target in their issue get a line "<column> speed: ... (target <= N)".
#
# With object-relative among the modules, a section at the small inputs follows: its derived
# profiles against exact ones, and its lossless mode (time and grammar sizes); see below.  With
# dependence among the modules, the breakdown (PROMPT's Table 8), and last, without --quick,
# the scaling of every column on hashtable at 1x, 4x and 16x the events; then, without --quick,
# two threads (issue 22): zstd, Zstandard 1.5.7 from the npm registry's zstd-napi (bench/zstd/
# fetch.sh, cached in BUILD_DIR/bench-cache, never committed) driven by bench/zstd/driver.c,
# compressing 16 MiB with 1 thread and with 2 compression threads, each module's slowdown at both
# and the check ratio_2 <= 1.5 x ratio_1; then, without --quick, the link time of Lua instrumented
# against its plain LTO link (bench/linktime.sh); and the harness's time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$root/build
modules=
programs="bintree linkedlist hashtable graph aos stencil matmul histogram sqlite"
default_programs=$programs
repeats=1
peers=default
quick=0
breakdown=1
threads_bench=1
frontend_target=3     # geomean slowdown under the null module (issue: loop summaries)
frontend_array_target=1.5   # ... and on each array program, whose loops summaries describe
frontend_array_programs="aos stencil matmul"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--no-breakdown) breakdown=0; shift ;;
	--breakdown-only) breakdown=2; shift ;;
	--no-threads) threads_bench=0; shift ;;
	--threads-only) threads_bench=2; shift ;;
	-m) modules=$2; shift 2 ;;
	-p) programs=${2//,/ }; shift 2 ;;
	-P) peers=$2; shift 2 ;;
	-r) repeats=$2; shift 2 ;;
	-j) export MNEMO_WORKERS=$2; shift 2 ;;
	-h|--help) sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench/run.sh: unknown option '$1'" >&2; exit 2 ;;
	*) build=$(cd "$1" && pwd); shift ;;
	esac
done
bin=$build/bin
[ -x "$bin/mnemo-cc" ] || { echo "bench/run.sh: $bin/mnemo-cc not found: build first (./quickstart.sh build)" >&2; exit 2; }
if [ -z "$modules" ]; then
	modules=$(ls "$build/share/mnemo/modules" | tr '\n' ' ')
fi
modules=${modules//,/ }
# --quick: every program at its small input (bench/programs/small_inputs.sh), natively once, and
# without sqlite, whose build alone takes minutes: a smoke run of the whole harness in about two
# minutes, for CI.  Its slowdowns are of runs of milliseconds: startup, not throughput.
source "$here/programs/small_inputs.sh"
if [ $quick = 1 ]; then
	[ "$programs" != "$default_programs" ] || programs=${programs/ sqlite/}
	repeats=1
fi
# The table's columns: one per module, and for a module with a sampling mode one more, the same
# binary run with its sampling variable (structure-affinity: one access in 1000).
cols=
declare -A col_mod col_env
for m in $modules; do
	cols+=" $m" col_mod[$m]=$m col_env[$m]=
	if [ "$m" = structure-affinity ]; then
		c=affinity/1000
		cols+=" $c" col_mod[$c]=$m col_env[$c]=MNEMO_AFFINITY_SAMPLE=1000
	fi
done
# all-five: one binary built for the five profiling modules, one backend process hosting them
# all (the default layout), each record decoded once; five/per-module: the same binary with
# MNEMO_BACKENDS=per-module, one backend process per module, each decoding every record.  Their
# RSS column is the sum of their backends' peaks.
five="dependence value-pattern object-relative rds-shape structure-affinity"
all_there=1
for m in $five; do [[ " $modules " == *" $m "* ]] || all_there=0; done
if [ $all_there = 1 ]; then
	f=${five// /,}
	cols+=" all-five" col_mod[all-five]=$f col_env[all-five]=
	cols+=" five/per-module" col_mod[five/per-module]=$f col_env[five/per-module]=MNEMO_BACKENDS=per-module
fi
work=$(mktemp -d /tmp/mnemo-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# sqlite: SQLite's amalgamation, fetched once into the build tree (bench/sqlite/fetch.sh), with
# the driver bench/sqlite/driver.c.  Left out with a note when it cannot be fetched and was not
# asked for by name.
if [[ " $programs " == *" sqlite "* ]]; then
	sqlite_dir=$build/bench-cache/sqlite
	if ! "$here/sqlite/fetch.sh" "$sqlite_dir" >/dev/null; then
		[ "$programs" = "$default_programs" ] || exit 1
		echo "bench/run.sh: SQLite not available: the suite runs without it" >&2
		programs=${programs/ sqlite/}
	fi
fi
# prog_src P, prog_flags P: the bench program's source and the compiler flags it needs.
prog_src() {
	case $1 in
	sqlite) echo "$here/sqlite/driver.c" ;;
	zstd) echo "$here/zstd/driver.c" ;;
	*) echo "$here/programs/$1.c" ;;
	esac
}
# prog_lib P: the library sources a program is built with besides prog_src (cbuild's key).
prog_lib() {
	case $1 in
	sqlite) echo "$sqlite_dir/sqlite3.c" ;;
	zstd) echo "$zstd_srcs" ;;
	esac
}
prog_flags() {
	if [ "$1" = sqlite ]; then
		echo "-I$sqlite_dir -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -lm"
	fi
}

# The peers: other memory profilers, each asked for by name; a default one not installed is
# skipped with a note on stderr, one asked for explicitly and missing too (its column left out).
case $peers in default) peers="dhat memprof" ;; none) peers= ;; esac
peers=${peers//,/ }
have_peers=
for q in $peers; do
	case $q in
	dhat)
		if command -v valgrind >/dev/null; then have_peers+=" dhat"
		else echo "bench/run.sh: valgrind not installed: no DHAT column (apt-get install valgrind)" >&2; fi ;;
	memprof)
		echo 'int main(void) { return 0; }' >"$work/memprof-probe.c"
		if clang-19 -O2 -fmemory-profile -o "$work/memprof-probe" "$work/memprof-probe.c" 2>/dev/null; then
			have_peers+=" memprof"
		else echo "bench/run.sh: clang-19 -fmemory-profile does not link (libclang-rt-19-dev): no MemProf column" >&2; fi ;;
	*) echo "bench/run.sh: unknown peer '$q' (peers: dhat, memprof)" >&2; exit 2 ;;
	esac
done
peers=$have_peers
# --breakdown-only: natives and the breakdown, no table (nor what hangs on its columns).
if [ "$breakdown" = 2 ]; then
	cols= peers= modules=dependence
fi
# --threads-only: the two-thread section alone, over the modules.
if [ "$threads_bench" = 2 ]; then
	cols= peers= programs= breakdown=0
fi

# Builds are cached across runs in BUILD_DIR/bench-cache/bin, by a key of everything that makes
# the binary: the compiler, every part of this Mnemo build that goes into a program (mnemo-cc,
# the pass, the runtime, the specializer, the event specs), the command, and the program's
# sources.  SQLite's instrumented builds are what this saves: its link, the whole amalgamation
# instrumented and optimized at once, takes one to two minutes per module.
# Only the current Mnemo build's binaries are kept.
toolkey=$( { clang-19 --version; cat "$bin/mnemo-cc" "$bin/mnemo-specialize" "$build/lib/mnemo/mnemo-pass.so" \
	"$build/lib/mnemo/libmnemo-rt.a" "$build/lib/mnemo/libmnemo-heap.a"
	find "$build/share/mnemo" -name '*.yaml' | sort | xargs cat; } | sha1sum | cut -c1-40)
cache=$build/bench-cache/bin/$toolkey
find "$build/bench-cache/bin" -mindepth 1 -maxdepth 1 ! -name "$toolkey" -exec rm -rf {} + 2>/dev/null || true
mkdir -p "$cache"
declare -A srckey
# cbuild P OUT CMD...: makes OUT, a build of program P, with CMD, or copies it from the cache.
# The instrumented links read $work/P.o, compiled here on the first link that needs it.
cbuild() {
	local p=$1 out=$2 key
	shift 2
	[ -n "${srckey[$p]:-}" ] ||
		srckey[$p]=$(cat "$(prog_src "$p")" $(prog_lib "$p") | sha1sum | cut -c1-40)
	key=$(printf '%s\n' "$toolkey" "${srckey[$p]}" "${@//$work/W}" | sha1sum | cut -c1-40)
	if [ -x "$cache/$key" ]; then
		cp "$cache/$key" "$out"
		return
	fi
	if [[ " $* " == *" $work/$p.o "* ]] && [ ! -f "$work/$p.o" ]; then
		# shellcheck disable=SC2046  # FLAGS are words on purpose
		"$bin/mnemo-cc" -O2 -c -o "$work/$p.o" "$(prog_src "$p")" $(prog_flags "$p" | sed 's/ -lm//')
	fi
	"$@"
	cp "$out" "$cache/$key.tmp" && mv "$cache/$key.tmp" "$cache/$key"
}
now() { date +%s.%N; }
started=$(now)
# judge CONDITION: PASS or FAIL as bc finds CONDITION; with --quick, whose runs last milliseconds
# and measure startup, no verdict.
judge() {
	if [ $quick = 1 ]; then echo "not judged (--quick)"
	elif [ "$(echo "$1" | bc -l)" = 1 ]; then echo PASS
	else echo FAIL; fi
}
# best_time N CMD...: runs CMD N times with stdout to $work/out, prints the best wall seconds.
best_time() {
	local best= t0 t1 t n=$1
	shift
	for _ in $(seq "$n"); do
		t0=$(now)
		"$@" >"$work/out"
		t1=$(now)
		t=$(echo "$t1 - $t0" | bc -l)
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
	done
	printf '%.3f' "$best"
}
# min_into ARRAY KEY T: ARRAY[KEY] becomes T if it is unset or larger.
min_into() {
	local -n arr=$1
	if [ -z "${arr[$2]:-}" ] || [ "$(echo "$3 < ${arr[$2]}" | bc -l)" = 1 ]; then arr[$2]=$3; fi
}
field() { grep -o "$1: [0-9.]*" "$2" | head -n 1 | awk '{print $2}'; }

printf '%-11s %8s %8s' program native rss_MiB
for m in $cols $peers; do printf ' | %-14s %7s %8s %11s %10s %8s' "$m" seconds slowdown events events/s rss_MiB; done
printf '\n'
declare -A logsum native_rss backend_rss slowdown
n=0
for p in $programs; do
	src=$(prog_src "$p") flags=$(prog_flags "$p")
	# shellcheck disable=SC2086  # FLAGS are words on purpose
	cbuild "$p" "$work/$p.native" clang-19 -O2 -o "$work/$p.native" "$src" $flags
	if [ $quick = 1 ]; then
		args=$(small_args "$p") || { echo "bench/run.sh: $p has no small input" >&2; exit 1; }
	else
		args=$(bench_args "$p") || { echo "bench/run.sh: $p has no bench input" >&2; exit 1; }
	fi
	# shellcheck disable=SC2086  # ARGS are words on purpose
	native=$(best_time $((quick ? 1 : repeats > 3 ? repeats : 3)) "$work/$p.native" $args)
	cp "$work/out" "$work/$p.expected"
	# The program's peak resident memory: what shadow memory is measured against.
	# shellcheck disable=SC2086
	/usr/bin/time -f %M -o "$work/$p.rss" "$work/$p.native" $args >/dev/null
	native_rss[$p]=$(tail -n 1 "$work/$p.rss")
	printf '%-11s %8s %8.1f' "$p" "$native" "$(echo "${native_rss[$p]} / 1024" | bc -l)"
	# Compiled once (the pass marks functions; which events it instruments is decided at the
	# link), when a link needs it (cbuild), and linked once per module.
	for m in $cols; do
		exe=$work/$p.${col_mod[$m]//,/+}
		# shellcheck disable=SC2086
		[ -x "$exe" ] || cbuild "$p" "$exe" "$bin/mnemo-cc" -m "${col_mod[$m]}" -O2 -o "$exe" "$work/$p.o" $flags
		prof=$work/$p.${m//\//-}.mnemo.yaml
		# shellcheck disable=SC2086  # the column's environment: none, or one VAR=value
		secs=$(MNEMO_OUTPUT=$prof best_time "$repeats" env ${col_env[$m]} "$exe" $args)
		if ! cmp -s "$work/out" "$work/$p.expected"; then
			echo; echo "bench/run.sh: $p under $m printed something else than natively" >&2
			diff "$work/$p.expected" "$work/out" | head >&2
			exit 1
		fi
		events=$(field events "$prof")
		rss=$(grep -o "peak_rss_kib: [0-9]*" "$prof" | awk '{ t += $2 } END { print t + 0 }')
		backend_rss[$p.$m]=${rss:-0}
		slow=$(echo "$secs / $native" | bc -l)
		slowdown[$p.$m]=$slow
		logsum[$m]=$(echo "${logsum[$m]:-0} + l($slow)" | bc -l)
		printf ' | %-14s %7s %7.2fx %11s %10.3g %8.1f' "" "$secs" "$slow" "$events" \
			"$(echo "$events / $secs" | bc -l)" "$(echo "${rss:-0} / 1024" | bc -l)"
	done
	for q in $peers; do
		case $q in
		dhat)
			# shellcheck disable=SC2086
			cbuild "$p" "$work/$p.dhat" clang-19 -O2 -gdwarf-4 -o "$work/$p.dhat" "$src" $flags
			# shellcheck disable=SC2086
			secs=$(best_time "$repeats" valgrind --tool=dhat --dhat-out-file=/dev/null \
				--log-file="$work/$p.dhat.log" "$work/$p.dhat" $args) ;;
		memprof)
			# shellcheck disable=SC2086
			cbuild "$p" "$work/$p.memprof" clang-19 -O2 -fmemory-profile -o "$work/$p.memprof" "$src" $flags
			# shellcheck disable=SC2086
			secs=$(MEMPROF_OPTIONS=log_path=$work/$p.memprofraw best_time "$repeats" \
				env -C "$work" "$work/$p.memprof" $args)
			rm -f "$work/$p.memprofraw"* ;;
		esac
		if ! cmp -s "$work/out" "$work/$p.expected"; then
			echo; echo "bench/run.sh: $p under $q printed something else than natively" >&2
			diff "$work/$p.expected" "$work/out" | head >&2
			exit 1
		fi
		slow=$(echo "$secs / $native" | bc -l)
		logsum[$q]=$(echo "${logsum[$q]:-0} + l($slow)" | bc -l)
		printf ' | %-14s %7s %7.2fx %11s %10s %8s' "" "$secs" "$slow" - - -
	done
	printf '\n'
	n=$((n + 1))
done
printf '%-11s %8s %8s' geomean "" ""
for m in $cols $peers; do
	printf ' | %-14s %7s %7.2fx %11s %10s %8s' "" "" "$(echo "e(${logsum[$m]} / $n)" | bc -l)" "" "" ""
done
printf '\n'
# The frontend cost (issue "Queue at the throughput limit"): under null, which decodes and discards
# a dependence profiler's events, the slowdown is what instrumentation, callbacks, queue and decode
# cost before any analysis.
if [ -n "${logsum[null]:-}" ]; then
	fc=$(echo "e(${logsum[null]} / $n)" | bc -l)
	printf 'frontend cost: %.2fx geomean slowdown under null (target <= %.1fx): %s\n' "$fc" \
		"$frontend_target" "$(judge "$fc <= $frontend_target")"
	for p in $frontend_array_programs; do
		[ -n "${slowdown[$p.null]:-}" ] || continue
		printf 'frontend cost on %s: %.2fx under null (target <= %.1fx): %s\n' "$p" \
			"${slowdown[$p.null]}" "$frontend_array_target" \
			"$(judge "${slowdown[$p.null]} <= $frontend_array_target")"
	done
fi
# Loop summaries (pass/README.md, "Loop summaries"): a qualifying loop sends one summary per
# invocation instead of a record per access.  Their share, per program, from the null column's
# profile: its section's load and store counts are every access (null counts a summary's accesses
# too), the header's summarized_accesses those that arrived as summaries.
if [[ " $cols " == *" null "* ]]; then
	echo "loop summaries: accesses that arrived as summaries (the null column's profile)"
	printf '  %-11s %13s %13s %7s\n' program accesses summarized share
	tacc=0 tsum=0
	for p in $programs; do
		prof=$work/$p.null.mnemo.yaml
		acc=$(sed -n '/^modules:/,$s/^ *\(load\|store\): \([0-9]*\)$/\2/p' "$prof" |
			awk '{ t += $1 } END { printf "%.0f\n", t }')   # %g past 2^31 in mawk
		sacc=$(field summarized_accesses "$prof")
		sacc=${sacc:-0}
		tacc=$((tacc + acc)) tsum=$((tsum + sacc))
		printf '  %-11s %13d %13d %6.1f%%\n' "$p" "$acc" "$sacc" \
			"$(echo "100 * $sacc / ($acc + ($acc == 0))" | bc -l)"
	done
	printf '  %-11s %13d %13d %6.1f%%\n' all "$tacc" "$tsum" \
		"$(echo "100 * $tsum / ($tacc + ($tacc == 0))" | bc -l)"
fi
# Per-event cost (issue "Dependence at SD3 speed"): each column's backend CPU time (every backend
# of its profile) over the events of the program's stream as a build without summaries would send
# them, which null's section counts (summaries expanded): what a module pays per event, beside
# null's, which only decodes.  The last run's profile of each column.
if [[ " $cols " == *" null "* ]]; then
	echo "per-event cost: backend CPU nanoseconds per event (null's counts, summaries expanded)"
	printf '  %-11s %13s' program events
	for m in $cols; do printf ' %10s' "$m"; done
	printf '\n'
	for p in $programs; do
		ev=$(sed -n '/^modules:/,$p' "$work/$p.null.mnemo.yaml" |
			awk '$1 ~ /^[a-z_]+:$/ && $2 ~ /^[0-9]+$/ { t += $2 } END { printf "%.0f\n", t }')
		printf '  %-11s %13d' "$p" "$ev"
		for m in $cols; do
			cpu=$(grep -o "cpu_seconds: [0-9.]*" "$work/$p.${m//\//-}.mnemo.yaml" |
				awk '{ t += $2 } END { print t + 0 }')
			printf ' %10.2f' "$(echo "1000000000 * $cpu / ($ev + ($ev == 0))" | bc -l)"
		done
		printf '\n'
	done
fi
# Shadow memory alone (issue "Backend components"): the shadow-cost module writes ratio bytes of
# shadow per program byte it sees accessed; its backend's peak RSS above null's (the same backend,
# queue and decoder without shadow) is what shadow memory cost, against ratio times the program's
# own peak RSS plus a constant for page rounding and the tag table.
if [ -n "${logsum[shadow-cost]:-}" ] && [ -n "${logsum[null]:-}" ]; then
	shadow_const_kib=4096
	printf 'shadow memory (shadow-cost backend RSS - null backend RSS, budget ratio x program RSS + %d MiB):\n' \
		$((shadow_const_kib / 1024))
	verdict=$(judge 1)
	for p in $programs; do
		prof=$work/$p.shadow-cost.mnemo.yaml
		ratio=$(echo "$(field meta_bytes "$prof") / $(field granule_bytes "$prof")" | bc -l)
		cost=$((backend_rss[$p.shadow-cost] - backend_rss[$p.null]))
		budget=$(echo "$ratio * ${native_rss[$p]} + $shadow_const_kib" | bc -l)
		ok=$(judge "$cost <= $budget")
		[ "$ok" != FAIL ] || verdict=FAIL
		printf '  %-11s program %8.1f MiB  shadow %8.1f MiB  ratio %s  budget %8.1f MiB  %s\n' "$p" \
			"$(echo "${native_rss[$p]} / 1024" | bc -l)" "$(echo "$cost / 1024" | bc -l)" \
			"$(printf '%g' "$ratio")" "$(echo "$budget / 1024" | bc -l)" "$ok"
	done
	echo "shadow memory within budget: $verdict"
fi
# The modules' own targets (their issues): geomean slowdown, and backend peak RSS against the
# program's (a budget of factor x program RSS + constant MiB).
declare -A slow_target=([dependence]=10 [rds-shape]=6 [object-relative]=8 [value-pattern]=5
	[structure-affinity]=5 [affinity/1000]=1.5 [all-five]=15)
declare -A mem_factor=([dependence]=2) mem_const_mib=([dependence]=256)
for m in $cols; do
	if [ -n "${slow_target[$m]:-}" ]; then
		g=$(echo "e(${logsum[$m]} / $n)" | bc -l)
		printf '%s speed: %.2fx geomean slowdown (target <= %sx): %s\n' "$m" "$g" "${slow_target[$m]}" \
			"$(judge "$g <= ${slow_target[$m]}")"
	fi
	if [ -n "${mem_factor[$m]:-}" ]; then
		verdict=$(judge 1) worst=
		for p in $programs; do
			budget=$(echo "${mem_factor[$m]} * ${native_rss[$p]} + ${mem_const_mib[$m]} * 1024" | bc -l)
			if [ $quick = 0 ] && [ "$(echo "${backend_rss[$p.$m]} > $budget" | bc -l)" = 1 ]; then
				verdict=FAIL worst="$worst $p"
			fi
		done
		printf '%s memory: backend peak RSS <= %s x program RSS + %s MiB on every program: %s%s\n' \
			"$m" "${mem_factor[$m]}" "${mem_const_mib[$m]}" "$verdict" "${worst:+ (over:$worst)}"
	fi
done
# One backend for all five (issue "One decode for many modules"): on every program, all-five
# within 1.3x the slowest of the five single-module columns, and its backend's peak RSS within the
# sum of theirs.
if [[ " $cols " == *" all-five "* ]]; then
	verdict=$(judge 1) mverdict=$(judge 1) worst= mworst=
	echo "all-five against the slowest single module (target <= 1.3x), and its backend RSS against the five's sum:"
	for p in $programs; do
		slowest=0 slowest_m= rsum=0
		for m in $five; do
			if [ "$(echo "${slowdown[$p.$m]} > $slowest" | bc -l)" = 1 ]; then
				slowest=${slowdown[$p.$m]} slowest_m=$m
			fi
			rsum=$((rsum + backend_rss[$p.$m]))
		done
		r=$(echo "${slowdown[$p.all-five]} / $slowest" | bc -l)
		ok=$(judge "$r <= 1.3")
		[ "$ok" != FAIL ] || verdict=FAIL worst="$worst $p"
		mok=$(judge "${backend_rss[$p.all-five]} <= $rsum")
		[ "$mok" != FAIL ] || mverdict=FAIL mworst="$mworst $p"
		printf '  %-11s all-five %7.2fx  slowest %7.2fx (%s)  ratio %5.2f %s  rss %7.1f MiB, five %7.1f MiB %s\n' \
			"$p" "${slowdown[$p.all-five]}" "$slowest" "$slowest_m" "$r" "$ok" \
			"$(echo "${backend_rss[$p.all-five]} / 1024" | bc -l)" "$(echo "$rsum / 1024" | bc -l)" "$mok"
	done
	echo "all-five within 1.3x the slowest single module on every program: $verdict${worst:+ (over:$worst)}"
	echo "all-five memory: backend peak RSS <= the five single-module backends' sum on every program: $mverdict${mworst:+ (over:$mworst)}"
fi
# Against the peers (issue: every module's geomean below DHAT's on the same run).
if [ -n "${logsum[dhat]:-}" ]; then
	dg=$(echo "e(${logsum[dhat]} / $n)" | bc -l)
	for m in $cols; do
		g=$(echo "e(${logsum[$m]} / $n)" | bc -l)
		printf "%s below DHAT's geomean: %s (%.2fx against %.2fx)\n" "$m" \
			"$(judge "$g < $dg")" "$g" "$dg"
	done
fi
# The breakdown (issue "Overhead budget"; PROMPT's Table 8): the dependence module with PROMPT's
# optimizations added one at a time, then ours, every program at its breakdown input
# (small_inputs.sh: a quarter of the table's work; small inputs with --quick).  The rows, each the
# one before plus:
#   baseline            no specialization (mnemo-cc --mnemo-no-specialize: every catalogue event
#                       with every argument), the Lamport queue (--mnemo-queue=lamport: each
#                       record published as written, ordinary stores), one worker, the plain map
#                       (mnemo-backend-plain, bench/maps/rows_plain.c: one malloc'd node per row)
#   + specialization    only the dependence module's events and arguments
#   + queue             ping-pong buffers written with streaming stores (PROMPT 5.2)
#   + data parallelism  MNEMO_WORKERS=2 (sharded by address)
#   + reduction maps    mnemo-backend: the row map of backend/map.h (open addressing, reductions
#                       in place, the memo of recent rows)
#   + loop summaries    one record per summarized access and loop invocation instead of one per
#                       access (pass/README.md): the table's dependence build
# Every row before the last is built with --mnemo-no-summarize, so that it measures what it did
# before summaries existed.  Each row: every program's slowdown and the geomean, and what the step
# bought over the row before (PROMPT's "improvement": before / after - 1).  Every row's output
# must be the native one; rows 2-5's dependence sections are compared with the baseline's and
# differences counted; the last row's with the row before's: summaries change the cost, never the
# profile, so a difference fails the harness, except in SQLite's (counted: see below).  The events
# line: PROMPT's Table 9 (the events specialization removed), and the events summaries removed.
if [ "$breakdown" != 0 ] && [[ " $modules " == *" dependence "* ]]; then
	brow=(baseline "+ specialization" "+ queue" "+ data parallelism" "+ reduction maps"
		"+ loop summaries")
	bexe=(nospec lamport nosum nosum nosum default)
	plainbe="MNEMO_BACKEND=$bin/mnemo-backend-plain"
	[ -x "$bin/mnemo-backend-plain" ] ||
		{ echo "bench/run.sh: $bin/mnemo-backend-plain not built (bench/maps)" >&2; exit 1; }
	benv=("MNEMO_WORKERS=1 $plainbe" "MNEMO_WORKERS=1 $plainbe" "MNEMO_WORKERS=1 $plainbe"
		"MNEMO_WORKERS=2 $plainbe" "MNEMO_WORKERS=2" "MNEMO_WORKERS=2")
	# The switches are in the build commands, hence in cbuild's cache keys.
	declare -A bflags=(
		[nospec]="--mnemo-no-specialize --mnemo-queue=lamport --mnemo-no-summarize"
		[lamport]="--mnemo-queue=lamport --mnemo-no-summarize"
		[nosum]=--mnemo-no-summarize)
	echo "breakdown (PROMPT Table 8): the dependence module, one optimization added per row, at the breakdown inputs"
	printf '  %-20s' row
	for p in $programs; do printf ' %10s' "$p"; done
	printf ' | %8s %11s\n' geomean improvement
	declare -A bslow bsum bev
	bdiff= bfail=
	last=$((${#brow[@]} - 1))
	for p in $programs; do
		src=$(prog_src "$p") flags=$(prog_flags "$p")
		if [ $quick = 1 ]; then args=$(small_args "$p"); else args=$(breakdown_args "$p"); fi ||
			{ echo "bench/run.sh: $p has no breakdown input" >&2; exit 1; }
		# shellcheck disable=SC2086
		nat=$(best_time 3 "$work/$p.native" $args)
		cp "$work/out" "$work/$p.bd.expected"
		for k in nospec lamport nosum; do
			# shellcheck disable=SC2086
			cbuild "$p" "$work/$p.dep-$k" "$bin/mnemo-cc" -m dependence ${bflags[$k]} -O2 -o "$work/$p.dep-$k" "$work/$p.o" $flags
		done
		# shellcheck disable=SC2086
		[ -x "$work/$p.dependence" ] ||
			cbuild "$p" "$work/$p.dependence" "$bin/mnemo-cc" -m dependence -O2 -o "$work/$p.dependence" "$work/$p.o" $flags
		ln -sf "$work/$p.dependence" "$work/$p.dep-default"   # the table's dependence column's
		for i in "${!brow[@]}"; do
			prof=$work/$p.bd$i.mnemo.yaml
			# shellcheck disable=SC2086
			secs=$(MNEMO_OUTPUT=$prof best_time "$repeats" env ${benv[$i]} \
				"$work/$p.dep-${bexe[$i]}" $args)
			if ! cmp -s "$work/out" "$work/$p.bd.expected"; then
				echo "bench/run.sh: $p under breakdown row '${brow[$i]}' printed something else than natively" >&2
				exit 1
			fi
			sed -n '/^modules:/,$p' "$prof" >"$work/$p.bd$i.section"
			bev[$p.$i]=$(field events "$prof")
			bslow[$p.$i]=$(echo "$secs / $nat" | bc -l)
			bsum[$i]=$(echo "${bsum[$i]:-0} + l(${bslow[$p.$i]})" | bc -l)
		done
		# Rows' dependence sections against the first's: the switches change the cost, not the
		# profile, but a program whose runs differ (SQLite seeds its PRNG from /dev/urandom; the
		# baseline's heap interposer moves allocations) differs in dependences through reused
		# memory: counted, not failed.
		for ((i = 1; i < last; i++)); do
			d=$(diff "$work/$p.bd0.section" "$work/$p.bd$i.section" | grep -c '^[<>]' || true)
			[ "$d" = 0 ] || bdiff+=" $p row $((i + 1)) ($d lines)"
		done
		# The summaries row against the row before: the same settings, built without
		# --mnemo-no-summarize.  SQLite's differ, in dependences through reused stack memory
		# (count-1 rows between unrelated functions, mostly loop 0): its runs differ as above,
		# and summaries change the frame sizes of functions with summarized loops (136 of
		# SQLite's), which moves every frame below them.  Its accesses do not change: its
		# object-relative lossless streams, stack objects included, are identical with and
		# without summaries (--reproducible, 200 orders; 2026-11-25).
		before=$work/$p.bd$((last - 1)).section after=$work/$p.bd$last.section
		d=$(diff "$before" "$after" | grep -c '^[<>]' || true)
		if [ "$d" != 0 ] && [ "$p" = sqlite ]; then
			bdiff+=" $p row $((last + 1)) against row $last ($d lines)"
		elif [ "$d" != 0 ]; then
			echo "bench/run.sh: $p: its dependence section with loop summaries (>) differs" \
				"from the one without" >&2
			{ diff "$before" "$after" || true; } | head -20 >&2
			bfail+=" $p"
		fi
	done
	evsum=0 evsum_s=0
	for p in $programs; do
		evsum=$(echo "$evsum + l(${bev[$p.1]} / ${bev[$p.0]})" | bc -l)
		evsum_s=$(echo "$evsum_s + l(${bev[$p.$last]} / ${bev[$p.$((last - 1))]})" | bc -l)
	done
	prev=
	for i in "${!brow[@]}"; do
		printf '  %-20s' "${brow[$i]}"
		for p in $programs; do printf ' %9.2fx' "${bslow[$p.$i]}"; done
		g=$(echo "e(${bsum[$i]} / $n)" | bc -l)
		if [ -n "$prev" ]; then imp=$(printf '%+.0f%%' "$(echo "100 * ($prev / $g - 1)" | bc -l)"); else imp=-; fi
		printf ' | %7.2fx %11s\n' "$g" "$imp"
		prev=$g
	done
	printf 'breakdown: specialization removed %.1f%% of the events (geomean; PROMPT Table 9, dependence: 17.19%%), loop summaries %.1f%% of the rest; every row printed what native did, and the same dependence section as the baseline%s\n' \
		"$(echo "100 * (1 - e($evsum / $n))" | bc -l)" \
		"$(echo "100 * (1 - e($evsum_s / $n))" | bc -l)" \
		"${bdiff:+ except:$bdiff}"
	if [ -n "$bfail" ]; then
		echo "breakdown: FAIL: loop summaries changed the dependence section of:$bfail" >&2
		exit 1
	fi
fi
# object-relative beyond its speed (its issue), at the small inputs (bench/programs/
# small_inputs.sh), where a whole event stream can be recorded and a lossless grammar built:
#  - its derived profiles (`mnemo derive`) against exact ones over one recording of the program
#    (objrel-derived-check, tests/object-relative): dependence pairs whose frequency is exactly
#    right / within 0.10, and strongly strided instructions identified with their stride (LEAP:
#    75% within 10%, 88% identified);
#  - the lossless mode (MNEMO_OBJREL_LOSSLESS=1): its time beside the LMAD mode's and native, and
#    the four grammars' size over the raw-address grammar's (WHOMP: 22% smaller on average).
#    At full inputs its grammars outgrow memory (hashtable: 4 GiB within 30 s), hence here.
if [[ " $modules " == *" object-relative "* ]] && [ "$threads_bench" != 2 ]; then
	# shellcheck source=record.sh
	source "$here/record.sh"
	checker=$bin/objrel-derived-check
	specs=$root/tests/object-relative/spec
	echo "object-relative at small inputs: derived profiles against exact ones (MNEMO_OBJREL_STACK=1), lossless mode"
	printf '  %-11s %5s %6s %9s | %7s %10s %5s | %8s %8s %8s %9s %10s\n' program pairs exact within10 \
		strided identified extra native_s lmad_s lossl_s lossl/lmad size_ratio
	tp=0 te=0 tw=0 ts=0 ti=0 tx=0 lsum=0 rsum=0 nsum=0 msum=0 ln=0 wsum=0 wn=0 isum=0 in_=0
	pct() { if [ "$2" -gt 0 ]; then echo "scale=1; 100 * $1 / $2" | bc; else echo -; fi; }
	for p in $programs; do
		args=$(small_args "$p") || { echo "bench/run.sh: $p has no small input" >&2; exit 1; }
		build_for_spec "$build" "$specs" objrel-sized "$(prog_src "$p")" "$work/$p.objrel-sized" \
			"$(prog_flags "$p")"
		# shellcheck disable=SC2086  # ARGS are words on purpose
		record_run "$build" "$work/$p.objrel-sized" "$work/$p.rec" 1000000000 $args 2>/dev/null
		line=$("$checker" --stack "$work/$p.rec")
		rm -f "$work/$p.rec"
		[[ $line =~ ^pairs\ ([0-9]+)\ exact\ ([0-9]+).*within10\ ([0-9]+).*strided\ ([0-9]+)\ identified\ ([0-9]+).*extra\ ([0-9]+) ]] ||
			{ echo "bench/run.sh: $checker: unexpected output: $line" >&2; exit 1; }
		pp=${BASH_REMATCH[1]} pe=${BASH_REMATCH[2]} pw=${BASH_REMATCH[3]}
		ps=${BASH_REMATCH[4]} pi=${BASH_REMATCH[5]} px=${BASH_REMATCH[6]}
		tp=$((tp + pp)) te=$((te + pe)) tw=$((tw + pw)) ts=$((ts + ps)) ti=$((ti + pi)) tx=$((tx + px))
		# The paper averages per program: the mean of the shares, beside the pooled one.
		[ "$pp" -gt 0 ] && wsum=$(echo "$wsum + $pw / $pp" | bc -l) wn=$((wn + 1))
		[ "$ps" -gt 0 ] && isum=$(echo "$isum + $pi / $ps" | bc -l) in_=$((in_ + 1))
		# shellcheck disable=SC2086
		nat=$(best_time 3 "$work/$p.native" $args)
		cp "$work/out" "$work/$p.small.expected"
		# shellcheck disable=SC2086
		lm=$(MNEMO_OUTPUT=$work/$p.small.yaml best_time "$repeats" "$work/$p.object-relative" $args)
		# shellcheck disable=SC2086
		ll=$(MNEMO_OBJREL_LOSSLESS=1 MNEMO_OUTPUT=$work/$p.lossless.yaml best_time "$repeats" \
			"$work/$p.object-relative" $args)
		cmp -s "$work/out" "$work/$p.small.expected" ||
			{ echo "bench/run.sh: $p (small) in lossless mode printed something else than natively" >&2; exit 1; }
		ratio=$(field size_ratio "$work/$p.lossless.yaml")
		lsum=$(echo "$lsum + l($ll / $lm)" | bc -l)
		nsum=$(echo "$nsum + l($ll / $nat)" | bc -l)
		msum=$(echo "$msum + l($lm / $nat)" | bc -l)
		rsum=$(echo "$rsum + l($ratio)" | bc -l)
		ln=$((ln + 1))
		printf '  %-11s %5d %5s%% %8s%% | %7d %9s%% %5d | %8s %8s %8s %8.2fx %10.3f\n' "$p" "$pp" \
			"$(pct "$pe" "$pp")" "$(pct "$pw" "$pp")" "$ps" "$(pct "$pi" "$ps")" "$px" "$nat" "$lm" \
			"$ll" "$(echo "$ll / $lm" | bc -l)" "$ratio"
	done
	printf '  %-11s %5d %5s%% %8s%% | %7d %9s%% %5d | %8s %8s %8s %8.2fx %10.3f\n' all "$tp" \
		"$(pct "$te" "$tp")" "$(pct "$tw" "$tp")" "$ts" "$(pct "$ti" "$ts")" "$tx" "" "" "" \
		"$(echo "e($lsum / $ln)" | bc -l)" "$(echo "e($rsum / $ln)" | bc -l)"
	printf 'object-relative derived: %s%% of dependence pairs within 10%% (LEAP: 75%%), %s%% of strongly strided instructions identified (LEAP: 88%%); per program, on average: %.1f%% and %.1f%%\n' \
		"$(pct "$tw" "$tp")" "$(pct "$ti" "$ts")" "$(echo "100 * $wsum / ($wn + ($wn == 0))" | bc -l)" \
		"$(echo "100 * $isum / ($in_ + ($in_ == 0))" | bc -l)"
	printf 'object-relative lossless at small inputs: %.2fx native, %.2fx the LMAD mode (itself %.2fx native there); grammar size ratio %.3f (geomeans; WHOMP: 0.78)\n' \
		"$(echo "e($nsum / $ln)" | bc -l)" "$(echo "e($lsum / $ln)" | bc -l)" \
		"$(echo "e($msum / $ln)" | bc -l)" "$(echo "e($rsum / $ln)" | bc -l)"
fi
# Scaling (issue "Overhead budget"): hashtable at 1x, 4x and 16x its events (0.5, 2 and 8 million
# operations; 8 million is its bench input) under every column: the slowdown and the backend
# peak RSS must grow slower than the events (here: less than 16 times from 1x to 16x).
if [ $quick = 0 ] && [ -n "$cols" ] && [[ " $programs " == *" hashtable "* ]]; then
	sizes="500000 2000000 8000000"
	echo "scaling: hashtable at 1x, 4x, 16x the events (operations: ${sizes// /, }): slowdown, backend peak RSS MiB"
	for m in $cols; do
		exe=$work/hashtable.${col_mod[$m]//,/+}
		line= first_s= first_r= s= r=
		for k in $sizes; do
			nat=$(best_time 3 "$work/hashtable.native" "$k")
			prof=$work/scaling.mnemo.yaml
			# shellcheck disable=SC2086
			t=$(MNEMO_OUTPUT=$prof best_time "$repeats" env ${col_env[$m]} "$exe" "$k")
			s=$(echo "$t / $nat" | bc -l)
			r=$(grep -o "peak_rss_kib: [0-9]*" "$prof" | awk '{ t += $2 } END { print t + 0 }')
			first_s=${first_s:-$s} first_r=${first_r:-$r}
			line+=$(printf '  %7.2fx %7.1f' "$s" "$(echo "$r / 1024" | bc -l)")
		done
		gs=$(echo "$s / $first_s" | bc -l) gr=$(echo "$r / $first_r" | bc -l)
		printf '  %-18s%s   16x events: slowdown x%.2f, RSS x%.2f: %s\n' "$m" "$line" "$gs" "$gr" \
			"$(judge "$gs < 16 && $gr < 16")"
	done
fi
# Two threads (issue 22: "a two-thread program's profiling costs no more than its single-threaded
# version's ratio to native, plus 50%"): zstd compressing 16 MiB of text-like input (its driver's
# g mode) at level 3, with 1 thread (nbWorkers 0: the single-threaded version) and with 2
# compression threads (jobs of 512 KiB), natively and under each module: ratio_1 and ratio_2,
# each the profiled time over the native time of the same configuration, and PASS when
# ratio_2 <= 1.5 x ratio_1.  The complete column is the 2-thread profile's complete: a module that
# leaves other threads' events out (complete: false) is cheap at 2 threads for that reason.  Both
# outputs (sizes and hash of the compressed stream) must be the native ones.  Objects compiled once
# by mnemo-cc -c, linked per module (the link instruments), cached by cbuild.
zstd_flags="-O2 -DZSTD_MULTITHREAD -DZSTD_DISABLE_ASM -pthread"
# zstd_link MODULE OUT: the instrumented driver for MODULE, from objects compiled on first use.
zstd_link() {
	local f
	if [ ! -d "$work/zstd-o" ]; then
		mkdir -p "$work/zstd-o"
		for f in $(prog_src zstd) $zstd_srcs; do
			# shellcheck disable=SC2086  # FLAGS are words on purpose
			"$bin/mnemo-cc" $zstd_flags -I"$zstd_dir/lib" -c -o "$work/zstd-o/$(basename "$f" .c).o" "$f"
		done
	fi
	# shellcheck disable=SC2086
	"$bin/mnemo-cc" -m "$1" $zstd_flags -o "$2" "$work"/zstd-o/*.o
}
if [ $quick = 0 ] && [ "$breakdown" != 2 ] && [ "$threads_bench" != 0 ] && [ -n "$modules" ]; then
	zstd_dir=$build/bench-cache/zstd
	if ! "$here/zstd/fetch.sh" "$zstd_dir" >/dev/null; then
		echo "bench/run.sh: zstd not available (bench/zstd/fetch.sh): no two-thread section" >&2
	else
		zstd_srcs=$(ls "$zstd_dir"/lib/common/*.c "$zstd_dir"/lib/compress/*.c "$zstd_dir"/lib/decompress/*.c)
		# shellcheck disable=SC2086
		cbuild zstd "$work/zstd.native" clang-19 $zstd_flags -I"$zstd_dir/lib" -o "$work/zstd.native" \
			"$(prog_src zstd)" $zstd_srcs
		"$work/zstd.native" g 16777216 "$work/zstd.in" >/dev/null
		# Each time the best of its runs, the runs of 1 and 2 threads taken in turn, so that
		# both see the machine alike (a shared VM's speed drifts over minutes).
		declare -A zn
		for _ in $(seq $((repeats > 5 ? repeats : 5))); do
			for t in 1 2; do
				min_into zn $t "$(best_time 1 "$work/zstd.native" c $t "$work/zstd.in" /dev/null)"
				cp "$work/out" "$work/zstd.expected$t"
			done
		done
		echo "two threads: zstd compressing 16 MiB, 1 thread and 2 compression threads (native ${zn[1]} s and ${zn[2]} s)"
		printf '  %-19s %9s %8s %9s %8s %9s  %s\n' module seconds_1 ratio_1 seconds_2 ratio_2 complete \
			'ratio_2 <= 1.5 x ratio_1'
		verdict=$(judge 1)
		for m in $modules; do
			exe=$work/zstd.$m
			cbuild zstd "$exe" zstd_link "$m" "$exe"
			declare -A zs=() zr
			for _ in $(seq "$repeats"); do
				for t in 1 2; do
					prof=$work/zstd.$m.t$t.mnemo.yaml
					min_into zs $t "$(MNEMO_OUTPUT=$prof best_time 1 "$exe" c $t "$work/zstd.in" /dev/null)"
					if ! cmp -s "$work/out" "$work/zstd.expected$t"; then
						echo "bench/run.sh: zstd ($t threads) under $m printed something else than natively" >&2
						diff "$work/zstd.expected$t" "$work/out" | head >&2
						exit 1
					fi
				done
			done
			for t in 1 2; do zr[$t]=$(echo "${zs[$t]} / ${zn[$t]}" | bc -l); done
			ok=$(judge "${zr[2]} <= 1.5 * ${zr[1]}")
			[ "$ok" != FAIL ] || verdict=FAIL
			printf '  %-19s %9s %7.2fx %9s %7.2fx %9s  %s\n' "$m" "${zs[1]}" "${zr[1]}" "${zs[2]}" "${zr[2]}" \
				"$(sed -n 's/^complete: //p' "$work/zstd.$m.t2.mnemo.yaml")" "$ok"
		done
		echo "two threads: ratio_2 <= 1.5 x ratio_1 on every module: $verdict"
	fi
fi
# Link time (issue 23): Lua's instrumented link against its plain LTO link, once each (bench/
# linktime.sh, which fetches Lua; run it alone for the best of 3).  Not with --quick.
if [ $quick = 0 ] && [ "$breakdown" != 2 ] && [ "$threads_bench" != 2 ]; then
	"$here/linktime.sh" "$build" -r 1 || echo "bench/run.sh: bench/linktime.sh failed: no link time" >&2
fi
# The harness's own time (issue: under 20 minutes in full, under 3 with --quick), builds included.
elapsed=$(echo "$(now) - $started" | bc -l)
limit=$((quick ? 3 : 20))
printf 'harness: %d min %02d s (target < %d min): %s\n' "$(echo "$elapsed / 60" | bc)" \
	"$(echo "$elapsed % 60 / 1" | bc)" $limit \
	"$(if [ "$(echo "$elapsed < 60 * $limit" | bc)" = 1 ]; then echo PASS; else echo FAIL; fi)"
printf '(%s, %s cores, %s)\n' "$(date -u +%Y-%m-%d)" "$(nproc)" "$(uname -m)"
