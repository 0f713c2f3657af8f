#!/bin/sh
# OpenMP (issue 22): omp.c built with `mnemo-cc -fopenmp` (Debian's libomp for clang 19) and run
# with OMP_NUM_THREADS=2 and 4.  Its output is the native build's; the profile is complete and
# lists the threads; the parallel loop's store is counted exactly over all threads (N executions,
# as the main thread's serial loop's load); and that store's loop site is the source loop: the
# file and line of omp.c's `for` (marked PARALLEL-FOR), whichever thread ran the iterations.
#
#   omp.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
c=$src/tests/threads/omp.c
work=$(mktemp -d /tmp/mnemo-omp.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
unset MNEMO_OUTPUT MNEMO_MODULES MNEMO_DISABLE MNEMO_REPRODUCIBLE MNEMO_WORKERS MNEMO_THREADS
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }
n=100000
for_line=$(grep -n 'PARALLEL-FOR \*/' "$c" | cut -d: -f1)

clang-19 -O1 -fopenmp "$c" -o omp-native 2>build.err ||
	{ echo "FAIL native build with -fopenmp (libomp-19-dev installed?): $(cat build.err)"; exit 1; }
# vp: the counts; vd: the same with dependence, whose loops put the loop sites in the site table
# (a value-pattern profile lists the sites of its entries only).
"$bin/mnemo-cc" -m value-pattern -O1 -g -fopenmp "$c" -o omp-vp 2>build.err ||
	{ echo "FAIL mnemo-cc -fopenmp: $(cat build.err)"; exit 1; }
"$bin/mnemo-cc" -m value-pattern,dependence -O1 -g -fopenmp "$c" -o omp-vd 2>build.err ||
	{ echo "FAIL mnemo-cc -m value-pattern,dependence -fopenmp: $(cat build.err)"; exit 1; }

# site_field PROFILE SITE FIELD: FIELD of site SITE in PROFILE's site table.
site_field() {
	sed -n "s/^  $2: {.*[{ ]$3: \([^,}]*\).*/\1/p" "$1"
}

for t in 2 4; do
	name=t$t
	OMP_NUM_THREADS=$t ./omp-native >$name.native
	OMP_NUM_THREADS=$t MNEMO_OUTPUT=$name.yaml ./omp-vp >$name.out 2>$name.err ||
		bad "$name: exit status $?: $(cat $name.err)"
	cmp -s $name.out $name.native && ok "$name: output as native ($(cat $name.out))" ||
		bad "$name: output '$(cat $name.out)', native '$(cat $name.native)'"
	[ -f $name.yaml ] || { bad "$name: no profile: $(cat $name.err)"; continue; }
	grep -qx 'complete: true' $name.yaml && ok "$name: complete" ||
		bad "$name: $(grep -E '^(complete|incomplete_reason):' $name.yaml)"
	grep -q "^  count: $t\$" $name.yaml && ok "$name: $t threads listed" ||
		bad "$name: threads: $(sed -n '/^threads:/,/^  list:/p' $name.yaml)"
	# The parallel loop's store: N executions in all, at omp.c's store line in the outlined body.
	stores=$(grep -c "access: store, executions: $n," $name.yaml)
	[ "$stores" -eq 1 ] && ok "$name: the parallel loop's store ran $n times over all threads" ||
		bad "$name: $stores stores of $n executions: $(grep 'access: store' $name.yaml | cut -c1-80)"
	grep -q "access: load, executions: $n," $name.yaml && ok "$name: the serial sum's load ran $n times" ||
		bad "$name: no load of $n executions"

	# The store's loop site is the `for` of the parallel loop.
	OMP_NUM_THREADS=$t MNEMO_OUTPUT=$name.d.yaml ./omp-vd >$name.d.out 2>$name.err
	cmp -s $name.d.out $name.native || bad "$name (with dependence): output '$(cat $name.d.out)'"
	site=$(sed -n "s/.*{site: \([0-9]*\), access: store, executions: $n,.*/\1/p" $name.d.yaml)
	loop=$(site_field $name.d.yaml "${site:-x}" loop)
	where="$(site_field $name.d.yaml "${loop:-x}" file):$(site_field $name.d.yaml "${loop:-x}" line)"
	case $where in */tests/threads/omp.c:$for_line) true ;; *) false ;; esac &&
		ok "$name: the store's loop site $loop is the source loop, omp.c:$for_line" ||
		bad "$name: the store (site ${site:-?}) has loop site ${loop:-?} at ${where}, not omp.c:$for_line (the for)"
	# The team's stores reach the serial sum's loads across threads, every one ordered by the
	# fork and join (the pass's __mnemo_release/__mnemo_acquire around them).
	cross=$(grep -E "^    - \{kind: raw, src: ${site:-x}, dst: [0-9]+, loop: [0-9]+, count: [0-9]+," $name.d.yaml)
	case $cross in
	*"unordered: 0}"*) ok "$name: workers' stores to the serial loads, cross-thread, all ordered ($(echo "$cross" | sed 's/.*count: //'))" ;;
	'') [ "$t" -gt 1 ] && bad "$name: no cross-thread raw from the store (site ${site:-?})" ;;
	*) bad "$name: cross-thread raw from the store not all ordered: $cross" ;;
	esac
done
exit $failed
