#!/bin/sh
# The mnemo-use pass end to end, on the small programs of this folder (answers known by
# construction): build with mnemo-cc for profiling, run, rebuild with the profile.
#
#   use.sh MODE BINDIR PLUGIN LLVM_BINDIR WORKDIR
#
# MODE: roundtrip  unchanged rebuild: every site matches, by id; after an edit that adds lines to
#                  helper() only: every site of the other functions matches, by location
#       memcpy     value-pattern's memcpy sizes drive PGOMemOPSizeOpt: MemOP.Case.16 in the
#                  optimized IR with the profile, not without
#       query      mnemo-use-print (a pass of the plugin asking the analysis) agrees with the
#                  dependence profile: one loop carries a dependence, one does not
#       remarks    -Rpass-analysis=mnemo and -fsave-optimization-record, compiled with and
#                  without LTO: one remark of each kind at its line
#       parallel   the verdict on each loop of parallel.c, with and without LTO: a candidate only
#                  with no carried memory dependence in the profile and nothing but induction
#                  variables and reductions carried in registers; otherwise the reason
set -u
if [ $# -ne 5 ]; then
	echo "usage: $0 MODE BINDIR PLUGIN LLVM_BINDIR WORKDIR" >&2
	exit 2
fi
mode=$1 bindir=$2 plugin=$3 llvm=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
cc=$bindir/mnemo-cc
PATH="$llvm:$PATH"
export PATH
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2

failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() {
	failed=1
	printf 'FAIL %s\n' "$1"
}
# check NAME COMMAND...: passes when the command succeeds.
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}
# Stops the test: a step everything after depends on failed.
must() {
	name=$1
	shift
	if "$@"; then ok "$name"; else
		bad "$name"
		for f in *.err; do
			[ -s "$f" ] && sed "s/^/     $f: /" "$f"
		done
		exit 1
	fi
}
# The line of FILE holding TEXT (the first).
line_of() { grep -n -F -- "$2" "$1" | head -n 1 | cut -d: -f1; }

profile() { # profile SOURCE NAME MODULES OPT
	must "$2: profiling build" "$cc" -m "$3" "$4" -g "$1" -o "$2" 2>"$2.build.err"
	must "$2: profiled run" sh -c "./$2 >$2.out 2>$2.run.err"
	must "$2: profile written" test -s "$2.mnemo.yaml"
}

case $mode in
roundtrip)
	cp "$here/roundtrip.c" rt.c
	profile rt.c rt value-pattern,dependence -O2
	must "unchanged: rebuild with --use" "$cc" --use rt.mnemo.yaml -O2 -g rt.c -o rt.use \
		2>rt.use.err
	check "unchanged: every site matched, by id" \
		grep -q 'mnemo-use: .*rt.mnemo.yaml: \([0-9][0-9]*\) of \1 sites matched (by id)' rt.use.err
	check "unchanged: no warning" sh -c "! grep -q warning rt.use.err"
	check "unchanged: same output" sh -c "./rt.use | cmp -s - rt.out"

	# Three more lines in helper(): every function after it moves down by three lines.
	awk '/EDIT/ { print "\tx = x * 3 + 1;"; print "\tx ^= 5;"; print "\tx += 7;"; next }
		{ print }' "$here/roundtrip.c" >rt.c
	must "edited: rebuild with --use" "$cc" --use rt.mnemo.yaml -O2 -g rt.c -o rt.edit \
		-Wl,--save-temps 2>rt.edit.err
	check "edited: matched by location" grep -q 'sites matched (by location)' rt.edit.err
	# Every site that did not match: the merged module carries the profile's path.
	opt -load-pass-plugin="$plugin" -passes=mnemo-use -mnemo-use-verbose -disable-output \
		rt.edit.0.0.preopt.bc 2>rt.verbose.err
	grep 'did not match' rt.verbose.err | grep -o ' in [^ ]* at ' | sort | uniq -c >rt.unmatched
	check "edited: some of helper()'s sites did not match" grep -q ' in helper at ' rt.unmatched
	check "edited: every site of the other functions matched" \
		sh -c "! grep -v ' in helper at ' rt.unmatched"
	n=$(grep -c '^  [0-9]*: {kind: [a-z]*, function: \(main\|fill\|sum_pairs\),' rt.mnemo.yaml)
	check "edited: the profile has sites in the unchanged functions ($n)" test "$n" -gt 5
	;;

memcpy)
	cp "$here/memcpy.c" mc.c
	profile mc.c mc value-pattern -O2
	check "profile: memcpy of 16 bytes, 5000 times" grep -q \
		'{site: [0-9]*, op: memcpy, executions: 5000, sizes: \[{size: 16, count: 5000}\], other: 0}' \
		mc.mnemo.yaml
	check "profile: copy() entered 5000 times" grep -q '{site: [0-9]*, entries: 5000}' \
		mc.mnemo.yaml
	must "rebuild with --use" "$cc" --use mc.mnemo.yaml -O2 -g mc.c -o mc.use \
		-Wl,--save-temps 2>mc.use.err
	must "optimized IR" llvm-dis mc.use.0.5.precodegen.bc -o mc.use.ll
	check "with the profile: MemOP.Case.16" grep -q '^MemOP\.Case\.16:' mc.use.ll
	check "with the profile: the switch on the length" grep -q 'icmp eq i64 %[0-9]*, 16' mc.use.ll
	check "with the profile: same output" sh -c "./mc.use | cmp -s - mc.out"
	# The same LTO build without a profile.
	must "build without the profile" clang-19 -O2 -g -flto -fuse-ld=lld mc.c -o mc.plain \
		-Wl,--save-temps 2>mc.plain.err
	must "optimized IR without the profile" llvm-dis mc.plain.0.5.precodegen.bc -o mc.plain.ll
	check "without the profile: no MemOP.Case.16" sh -c "! grep -q MemOP mc.plain.ll"
	;;

query)
	cp "$here/deps.c" deps.c
	profile deps.c deps dependence -O2
	must "rebuild with --use" "$cc" --use deps.mnemo.yaml -O2 -g deps.c -o deps.use \
		-Wl,--save-temps 2>deps.use.err
	must "mnemo-use-print" sh -c "opt -load-pass-plugin='$plugin' -passes=mnemo-use-print \
		-disable-output deps.use.0.0.preopt.bc >deps.print 2>deps.print.err"
	body1=$(line_of deps.c '/* CARRIED */')
	body2=$(line_of deps.c '/* NOT CARRIED */')
	l1=$((body1 - 1)) l2=$((body2 - 1))
	check "every site matched, by id" grep -q '^profile .*: \([0-9][0-9]*\) of \1 sites matched by id' \
		deps.print
	check "loop at line $l1: ran $((1000)) iterations' worth, carried" \
		grep -q "^loop main .*deps.c:$l1: invocations 1 iterations [1-9][0-9]* carried yes" deps.print
	check "loop at line $l2: ran, carried nothing" \
		grep -q "^loop main .*deps.c:$l2: invocations 1 iterations [1-9][0-9]* carried no" deps.print
	check "loop at line $l2: never carried" sh -c "! grep -q '^loop main .*deps.c:$l2: .*carried yes' deps.print"
	check "pair at line $body1: the store reaches the load of a later iteration" \
		grep -q "^  store .*deps.c:$body1:[0-9]* -> load .*deps.c:$body1:[0-9]*: carried [1-9]" deps.print
	check "no pair at line $body2 is carried" \
		sh -c "! grep -q '^  .*deps.c:$body2:.* -> .*: carried' deps.print"
	# The printed counts are the profile's: the sum of carried rows of the loop sites at a line.
	for l in $l1 $l2; do
		printed=$(grep "^loop main .*deps.c:$l: " deps.print |
			sed -n 's/.* carried [a-z]* (\([0-9]*\)).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
		sites=$(sed -n "s/^  \([0-9]*\): {kind: loop, function: main, file: [^,]*deps.c, line: $l,.*/\1/p" \
			deps.mnemo.yaml | tr '\n' ' ')
		inprofile=$(awk -v sites=" $sites" '
			/^    - {loop: / {
				l = $0; sub(/.*{loop: /, "", l); sub(/,.*/, "", l)
				c = $0; sub(/.*count: /, "", c); sub(/[,}].*/, "", c)
				if (index(sites, " " l " ") && $0 ~ /carried: true/) s += c
			}
			END { print s + 0 }' deps.mnemo.yaml)
		check "line $l: carried count $printed is the profile's ($inprofile)" \
			test "$printed" = "$inprofile"
	done
	;;

remarks)
	cp "$here/remarks.c" rem.c
	profile rem.c rem dependence,value-pattern,rds-shape,structure-affinity -O1
	# Without LTO: the pass runs at the end of the optimizer, remarks go to clang's diagnostics
	# and to the optimization record.
	must "compile with -mllvm -mnemo-use" clang-19 -O1 -g -fplugin="$plugin" \
		-fpass-plugin="$plugin" -mllvm -mnemo-use=rem.mnemo.yaml -Rpass-analysis=mnemo \
		-fsave-optimization-record -foptimization-record-file=rem.opt.yaml -c rem.c -o rem.o \
		2>rem.remarks.err
	# "Name Line" of every remark of pass mnemo in a record.
	records() {
		awk '/^--- / { if (pass == "mnemo") print name, line; pass = ""; name = ""; line = "" }
			/^Pass: / { pass = $2 }
			/^Name: / { name = $2 }
			/^DebugLoc:/ { l = $0; sub(/.*Line: /, "", l); sub(/,.*/, "", l); line = l }
			END { if (pass == "mnemo") print name, line }' "$1"
	}
	records rem.opt.yaml >rem.records
	lto_line=$(line_of rem.c 'R: NoCarriedDependence')
	for rk in RDSRoot NoCarriedDependence CarriedValue ConstantLoad StronglyStrided; do
		l=$(line_of rem.c "$rk")
		check "-Rpass-analysis=mnemo: $rk at line $l" \
			grep -q "rem.c:$l:[0-9]*: remark: .*\[-Rpass-analysis=mnemo\]" rem.remarks.err
		check "optimization record: $rk at line $l" grep -qx "$rk $l" rem.records
	done
	l=$(line_of rem.c 'R: CarriedValue')
	check "-Rpass-analysis=mnemo: the pointer chased at line $l is carried in a register" \
		grep -q "rem.c:$l:[0-9]*: remark: loop carried no memory dependence in the profile (.*), but it is not a parallelization candidate: it carries p from one iteration to the next in a register" \
		rem.remarks.err
	check "-Rpass-analysis=mnemo: the RDS root is stable" \
		grep -q "root of recursive data structure type 1 .*: stable" rem.remarks.err
	check "-Rpass-analysis=mnemo: constant load of 3" grep -q "load always read 3 in the profile" \
		rem.remarks.err
	check "-Rpass-analysis=mnemo: structure splitting advice" \
		grep -q "structure rec (global table): split into {hot1, hot2} and {cold1, cold2}" \
		rem.remarks.err
	check "optimization record: StructureSplitting" grep -q "^StructureSplitting " rem.records
	# LTO (mnemo-cc --use): the link applies the profile; lld takes -pass-remarks-analysis as an
	# -mllvm option, and clang gives lld the record's name (PROGRAM.opt.ld.yaml).
	# (lld prints remarks on stdout.)
	must "mnemo-cc --use with remarks" "$cc" --use rem.mnemo.yaml -O1 -g rem.c -o rem.use \
		-fsave-optimization-record -Wl,-mllvm,-pass-remarks-analysis=mnemo >rem.lto.err 2>&1
	check "LTO: remark on stderr" grep -q "rem.c:$lto_line:[0-9]*: loop carried no memory dependence" \
		rem.lto.err
	records rem.use.opt.ld.yaml >rem.lto.records
	check "LTO: optimization record" grep -qx "NoCarriedDependence $lto_line" rem.lto.records
	;;

parallel)
	cp "$here/parallel.c" par.c
	profile par.c par dependence -O2
	# LTO (mnemo-cc --use; lld prints the remarks on stdout), and without LTO with the loop flags
	# mnemo-cc gives every compile.
	must "mnemo-cc --use with remarks" sh -c "'$cc' --use par.mnemo.yaml -O2 -g par.c -o par.use \
		-Wl,-mllvm,-pass-remarks-analysis=mnemo >par.lto.err 2>&1"
	must "compile with -mllvm -mnemo-use" clang-19 -O2 -g -fno-unroll-loops -fno-vectorize \
		-fno-slp-vectorize -fplugin="$plugin" -fpass-plugin="$plugin" \
		-mllvm -mnemo-use=par.mnemo.yaml -Rpass-analysis=mnemo -c par.c -o par.o 2>par.remarks.err
	# verdict HOW TEXT: the loop marked "V: HOW" has the remark TEXT (grep -E), with LTO and without.
	verdict() {
		l=$(line_of par.c "V: $1")
		check "LTO: $1 at line $l" grep -Eq "^par\.c:$l:[0-9]+: ($2)\$" par.lto.err
		check "no LTO: $1 at line $l" \
			grep -Eq "^par\.c:$l:[0-9]+: remark: ($2) \[-Rpass-analysis=mnemo\]\$" par.remarks.err
	}
	runs='\((999|1000) iterations in 1 invocation\)'
	# x[i-2]: LLVM 19 leaves it in memory, and the profile carries it at distance 2; forwarded by
	# an optimizer, it would be carried in a register, the other reason this accepts.
	verdict memory "loop carried memory dependences in the profile \(998 iterations in 1 invocation; 996 at distance 2\): not a parallelization candidate|loop carried no memory dependence in the profile $runs, but it is not a parallelization candidate: it carries .* from one iteration to the next in a register, neither an induction variable nor a reduction"
	verdict register "loop carried no memory dependence in the profile $runs, but it is not a parallelization candidate: it carries the value at line $(line_of par.c 'V: register'), column [0-9]+ from one iteration to the next in a register, neither an induction variable nor a reduction"
	verdict candidate "loop carried no memory dependence in the profile $runs: a parallelization candidate"
	verdict reduction "loop carried no memory dependence in the profile $runs: a parallelization candidate with a reduction of sum \(\+\)"
	check "same output" sh -c "./par.use | cmp -s - par.out"
	;;

*)
	echo "use.sh: unknown mode '$mode'" >&2
	exit 2
	;;
esac
exit "$failed"
