#!/usr/bin/env bash
# Shared libraries built with mnemo-cc -shared (runtime/unit.h), known answers by construction
# (shared/): the library sums 64 longs in a loop (64 executions of one load site) and allocates
# them (one heap object of 512 bytes).
#  1. zlib's configure probe: -shared with a version script that names functions the test does
#     not define links.
#  2. An instrumented program linked against the library (DT_NEEDED, version script with
#     `local: *`): one profile with the sites of both units, disjoint id ranges, the library's
#     sites naming it, its load and allocation in the modules' sections; mnemo report labels them,
#     mnemo merge keeps them.
#  3. The same library under a plain clang program: same output, exit 0, nothing on stderr, no
#     profile.
#  4. dlopen after the session started: the program is profiled, the library is not and the
#     profile says so; a plain program's dlopen is silent.
#  5. A library built for other modules than the program: refused and said, the program profiled.
#  6. -Bsymbolic-functions: profiled; -Bsymbolic: refused and said.
#  7. The default module set, library and program: profiled.
# Usage: shared_lib.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2/shared
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-shared-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mods=value-pattern,object-relative
cd "$work"

# 1. The probe.
"$bin/mnemo-cc" -m $mods -fPIC -c "$src/probe.c" -o probe.o
"$bin/mnemo-cc" -m $mods -shared -Wl,-soname,libprobe.so.1,--version-script,"$src/libshared.map" \
	probe.o -o libprobe.so || fail "the zlib-style probe (-shared, version script) fails"
echo "probe: links"

# 2. Instrumented library and program.
"$bin/mnemo-cc" -m $mods -O2 -g -fPIC -c "$src/libshared.c" -o libshared.o
"$bin/mnemo-cc" -m $mods -shared -Wl,--version-script,"$src/libshared.map" libshared.o \
	-o libshared.so
nm -D --defined-only libshared.so | grep -q ' lib_sum@@SHARED_1.0$' ||
	fail "libshared.so does not export lib_sum@@SHARED_1.0"
if nm -D --defined-only libshared.so | grep -q '__mnemo_site_table\|__mnemo_load'; then
	fail "libshared.so exports its site table or callbacks"
fi
"$bin/mnemo-cc" -m $mods -O2 -g "$src/main.c" -L. -lshared -Wl,-rpath,"$work" -o prog
MNEMO_OUTPUT=$work/prog.yaml ./prog >prog.out 2>prog.err || fail "prog exited $?"
[ "$(cat prog.out)" = "sum 4032 own 3" ] || fail "prog printed '$(cat prog.out)'"
[ ! -s prog.err ] || fail "prog wrote on stderr: $(cat prog.err)"
p=prog.yaml
grep -qx 'complete: true' $p || fail "profile not complete: $(grep incomplete $p || true)"
count=$(sed -n 's/^binary: {site_count: \([0-9]*\),.*/\1/p' $p)
unit=$(grep -A1 '^units:' $p | tail -n 1 || true)
re='^- \{name: libshared\.so, path: [^,]*libshared\.so, first: ([0-9]+), last: ([0-9]+)\}$'
[[ $unit =~ $re ]] ||
	fail "units: says '$unit'"
first=${BASH_REMATCH[1]} last=${BASH_REMATCH[2]}
[ "$first" -eq $((count + 1)) ] || fail "library ids start at $first, program has $count sites"
# Every site: the library's (its functions) in [first, last] with unit:, the program's below.
while read -r id rest; do
	id=${id%:}
	case $rest in
	*'function: lib_'*|*'function: twice'*)
		[ "$id" -ge "$first" ] && [ "$id" -le "$last" ] ||
			fail "library site $id outside [$first, $last]"
		[[ $rest == *'unit: libshared.so}' ]] || fail "library site $id names no unit: $rest"
		# its loop field, a site id too, rebased with it
		if [[ $rest =~ loop:\ ([0-9]+) ]]; then
			[ "${BASH_REMATCH[1]}" -ge "$first" ] && [ "${BASH_REMATCH[1]}" -le "$last" ] ||
				fail "library site $id: loop ${BASH_REMATCH[1]} not rebased"
		fi ;;
	*'function: main'*)
		[ "$id" -le "$count" ] || fail "program site $id above $count"
		[[ $rest != *unit:* ]] || fail "program site $id names a unit: $rest" ;;
	esac
done < <(sed -n '/^sites:/,/^modules:/p' $p | grep -E '^  [0-9]+:')
# site_id KIND FUNCTION: the id of the site of that kind in that function.
site_id() { sed -n "s/^  \([0-9]*\): {kind: $1, function: $2,.*/\1/p" $p; }
load=$(site_id load lib_sum)
alloc=$(site_id alloc lib_alloc)
[ -n "$load" ] && [ -n "$alloc" ] || fail "no load site in lib_sum or alloc site in lib_alloc"
grep -qE "^    - \{site: $load, access: load, executions: 64," $p ||
	fail "value-pattern: the library's load $load not 64 executions"
grep -qE "^    - \{group: $alloc, kind: heap, objects: 1, bytes: 512," $p ||
	fail "object-relative: the library's allocation $alloc not one object of 512 bytes"
"$bin/mnemo" report $p >report.txt || fail "mnemo report failed"
grep -q '\[libshared.so\] .*libshared.c:[0-9:]* lib_sum' report.txt ||
	fail "mnemo report does not label the library's sites with their unit"
"$bin/mnemo" merge -o merged.yaml $p && cmp -s merged.yaml $p ||
	fail "mnemo merge of the one profile is not the profile (units:, unit:)"
echo "instrumented program: library sites $first..$last named, load 64, allocation 512 bytes"

# 3. A plain program.
clang-19 -O2 "$src/main.c" -L. -lshared -Wl,-rpath,"$work" -o plain
MNEMO_OUTPUT=$work/plain.yaml ./plain >plain.out 2>plain.err || fail "plain exited $?"
cmp -s plain.out prog.out || fail "plain printed '$(cat plain.out)'"
[ ! -s plain.err ] || fail "plain wrote on stderr: $(cat plain.err)"
[ ! -e plain.yaml ] && [ ! -e plain.mnemo.yaml ] || fail "plain wrote a profile"
echo "plain program: silent"

# 4. dlopen.
"$bin/mnemo-cc" -m $mods -O2 -g "$src/dlmain.c" -ldl -o dlprog
MNEMO_OUTPUT=$work/dl.yaml ./dlprog "$work/libshared.so" >dl.out 2>dl.err || fail "dlprog exited $?"
[ "$(cat dl.out)" = "sum 4032" ] || fail "dlprog printed '$(cat dl.out)'"
[ ! -s dl.err ] || fail "dlprog wrote on stderr: $(cat dl.err)"
grep -qx 'complete: false' dl.yaml || fail "dlopen: profile says complete"
grep -q "^incomplete_reason: .*library libshared.so not profiled: loaded after" dl.yaml ||
	fail "dlopen: the profile does not name the library: $(grep incomplete dl.yaml || true)"
if grep -q 'function: lib_' dl.yaml; then fail "dlopen: library sites in the profile"; fi
clang-19 -O2 "$src/dlmain.c" -ldl -o dlplain
MNEMO_OUTPUT=$work/dlplain.yaml ./dlplain "$work/libshared.so" >dlplain.out 2>dlplain.err
[ "$(cat dlplain.out)" = "sum 4032" ] && [ ! -s dlplain.err ] && [ ! -e dlplain.yaml ] ||
	fail "plain dlopen not silent"
echo "dlopen: refused and said; plain dlopen silent"

# 5. Other modules.
"$bin/mnemo-cc" -m dependence -shared -Wl,--version-script,"$src/libshared.map" libshared.o \
	-o libshared.so
MNEMO_OUTPUT=$work/other.yaml ./prog >other.out 2>other.err || fail "prog (other modules) exited $?"
cmp -s other.out prog.out && [ ! -s other.err ] || fail "prog (other modules): output changed"
grep -qE '^- \{name: libshared.so, path: [^,]*, profiled: false, why: built for other modules' \
	other.yaml || fail "other modules: units: says $(grep -A1 '^units:' other.yaml || true)"
grep -q "^incomplete_reason: .*library libshared.so not profiled" other.yaml ||
	fail "other modules: not in incomplete_reason"
echo "other modules: refused and said"

# 6. -Bsymbolic-functions: still profiled; -Bsymbolic (DF_SYMBOLIC: the library's own stand-ins
#    win at run time): refused and said.
"$bin/mnemo-cc" -m $mods -shared -Wl,-Bsymbolic-functions \
	-Wl,--version-script,"$src/libshared.map" libshared.o -o libshared.so
MNEMO_OUTPUT=$work/bf.yaml ./prog >bf.out 2>&1 || fail "prog (-Bsymbolic-functions) exited $?"
grep -qx 'complete: true' bf.yaml && grep -q 'unit: libshared.so}' bf.yaml ||
	fail "-Bsymbolic-functions: library not profiled"
"$bin/mnemo-cc" -m $mods -shared -Wl,-Bsymbolic -Wl,--version-script,"$src/libshared.map" \
	libshared.o -o libshared.so
MNEMO_OUTPUT=$work/bs.yaml ./prog >bs.out 2>bs.err || fail "prog (-Bsymbolic) exited $?"
cmp -s bs.out prog.out && [ ! -s bs.err ] || fail "prog (-Bsymbolic): output changed"
grep -q "^incomplete_reason: .*library libshared.so not profiled: .*-Bsymbolic" bs.yaml ||
	fail "-Bsymbolic: not refused and said"
echo "-Bsymbolic-functions profiled, -Bsymbolic refused and said"

# 7. The default module set.
"$bin/mnemo-cc" -O2 -g -fPIC -c "$src/libshared.c" -o libshared.o
"$bin/mnemo-cc" -shared -Wl,--version-script,"$src/libshared.map" libshared.o -o libshared.so
"$bin/mnemo-cc" -O2 -g "$src/main.c" -L. -lshared -Wl,-rpath,"$work" -o progdef
MNEMO_OUTPUT=$work/def.yaml ./progdef >def.out 2>def.err || fail "progdef exited $?"
cmp -s def.out prog.out && [ ! -s def.err ] || fail "progdef: output changed"
grep -qx 'complete: true' def.yaml && grep -q 'unit: libshared.so}' def.yaml ||
	fail "default modules: library not profiled"
echo "default modules: profiled"
echo "1 passed, 0 failed"
