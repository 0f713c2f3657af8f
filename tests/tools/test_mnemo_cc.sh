#!/bin/sh
# mnemo-cc / mnemo-c++ against a fake prefix, so the wrapper is tested on its own:
#  1. with a fake clang that logs its arguments: modes, quoting, the specializer's call and
#     result, the link line, clean-up, errors;
#  2. with the real clang-19 and lld, a no-op pass plugin and a stand-in runtime: an ordinary
#     Makefile project (CC=mnemo-cc with GNU ar rc and ranlib, and with AR=llvm-ar-19), -O0, C++,
#     paths with spaces.
# Usage: test_mnemo_cc.sh path/to/tools/mnemo-cc.  Prints "N passed, N failed"; exit 1 on failure.
set -u

src=${1:?usage: test_mnemo_cc.sh path/to/mnemo-cc}
work=$(mktemp -d "${TMPDIR:-/tmp}/mnemo-test-cc.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

ok() {
	passed=$((passed + 1))
	printf 'ok   %s\n' "$1"
}
bad() {
	failed=$((failed + 1))
	printf 'FAIL %s\n' "$1"
	shift
	for line in "$@"; do
		printf '     %s\n' "$line"
	done
}
# check NAME: passes when the command after it succeeds.
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name" "command: $*"; fi
}
has() { grep -qxF -- "$2" "$1"; }      # file has the exact line
contains() { grep -qF -- "$2" "$1"; }  # file has the text somewhere

# ---- The fake prefix ----
P=$work/prefix
mkdir -p "$P/bin" "$P/lib/mnemo" "$P/include/mnemo" "$P/share/mnemo/modules/value-pattern" \
	"$P/share/mnemo/modules/dependence"
cp "$src" "$P/bin/mnemo-cc"
cp "$src" "$P/bin/mnemo-c++"
chmod +x "$P/bin/mnemo-cc" "$P/bin/mnemo-c++"
: >"$P/share/mnemo/events.yaml"
echo 'module: value-pattern' >"$P/share/mnemo/modules/value-pattern/events.yaml"
echo 'module: dependence' >"$P/share/mnemo/modules/dependence/events.yaml"
: >"$P/lib/mnemo/mnemo-pass.so"
: >"$P/lib/mnemo/libmnemo-rt.a"
: >"$P/lib/mnemo/libmnemo-heap.a"

# The specializer stand-in: logs its arguments, writes OUTDIR/callbacks.c, prints $FAKE_HEAP;
# with --defaults, logs them in $LOG.defaults and prints $FAKE_DEFAULTS (exit $FAKE_DEFAULTS_FAIL).
cat >"$P/bin/mnemo-specialize" <<'EOF'
#!/bin/sh
for a in "$@"; do
	[ "$a" = --defaults ] || continue
	printf '%s\n' "$@" >"$LOG.defaults"
	[ "${FAKE_DEFAULTS_FAIL:-0}" = 0 ] || { echo "mnemo-specialize: x/events.yaml: bad" >&2; exit 1; }
	printf '%s\n' "${FAKE_DEFAULTS-dependence,value-pattern}"
	exit 0
done
printf '%s\n' "$@" >"$LOG.spec"
out=
while [ $# -gt 0 ]; do
	[ "$1" = -o ] && out=$2
	shift
done
[ "${FAKE_SPEC_FAIL:-0}" = 0 ] || { echo "mnemo-specialize: unknown module 'x'" >&2; exit 3; }
printf 'int mnemo_callbacks_stub;\n' >"$out/callbacks.c"
echo "heap=${FAKE_HEAP:-0}"
EOF
chmod +x "$P/bin/mnemo-specialize"

# The clang stand-in: logs each call's arguments, one a line, then "--".
cat >"$work/fakeclang" <<'EOF'
#!/bin/sh
{ printf '%s\n' "$@"; echo --; } >>"$LOG"
exit 0
EOF
chmod +x "$work/fakeclang"

export LOG="$work/log"
cc="$P/bin/mnemo-cc"
fake() {
	rm -f "$LOG" "$LOG.spec" "$LOG.defaults"
	MNEMO_CLANG="$work/fakeclang" MNEMO_CLANGXX="$work/fakeclang" "$@"
}

# ---- 1. Fake clang ----
"$cc" --help >"$work/help" 2>&1
check "mnemo-cc --help: own usage" has "$work/help" \
	"Usage: mnemo-cc [MNEMO OPTIONS] [CLANG OPTIONS] FILES..."
check "mnemo-cc --help: -m" contains "$work/help" "-m MODULES, --mnemo-modules=MODULES"
check "mnemo-cc --help: default modules" contains "$work/help" "dependence,value-pattern"
check "mnemo-cc --help: where the default set comes from" contains "$work/help" "default: true"
check "mnemo-cc --help: no llvm-ar needed" sh -c "! grep -q 'llvm-ar' '$work/help'"
check "mnemo-cc --help: line tables" contains "$work/help" "-gline-tables-only"
check "mnemo-cc --help: clang options" contains "$work/help" "Other options go to clang-19"
"$P/bin/mnemo-c++" --mnemo-help >"$work/help" 2>&1
check "mnemo-c++ --help names clang++-19" contains "$work/help" "Other options go to clang++-19"

fake "$cc" -O0 -c "dir with space/a.c" -o "a b.o" "-DX=1 2"
check "compile: -flto first" has "$LOG" "-flto"
check "compile: fat LTO objects" has "$LOG" "-ffat-lto-objects"
check "compile: the plugin" has "$LOG" "-fpass-plugin=$P/lib/mnemo/mnemo-pass.so"
check "compile: args kept whole" has "$LOG" "dir with space/a.c"
check "compile: -D kept whole" has "$LOG" "-DX=1 2"
check "compile: one clang call" test "$(grep -c -- '^--$' "$LOG")" = 1
check "compile: no specializer" test ! -e "$LOG.spec"

fake "$cc" -E a.c
check "-E: no plugin" test "$(cat "$LOG")" = "$(printf -- '-E\na.c\n--')"
fake "$cc" -MM a.c
check "-MM: no plugin" test "$(cat "$LOG")" = "$(printf -- '-MM\na.c\n--')"
fake "$cc" -c a.c -MF -E
check "an option's value is not an option (-MF -E)" has "$LOG" \
	"-fpass-plugin=$P/lib/mnemo/mnemo-pass.so"
fake "$cc" -MD -c a.c
check "-MD -c: plugin" has "$LOG" "-fpass-plugin=$P/lib/mnemo/mnemo-pass.so"
fake "$cc" -v
check "-v alone: plain" test "$(cat "$LOG")" = "$(printf -- '-v\n--')"
fake "$cc" --version
check "--version: plain" test "$(cat "$LOG")" = "$(printf -- '--version\n--')"

fake "$cc" -m value-pattern a.o "lib b.a" -o prog -lm
check "link: specializer modules" has "$LOG.spec" "value-pattern"
check "link: specializer catalogue" has "$LOG.spec" "$P/share/mnemo/events.yaml"
check "link: specializer modules dir" has "$LOG.spec" "$P/share/mnemo/modules"
check "link: specializer backend" has "$LOG.spec" "$P/bin/mnemo-backend"
check "link: two clang calls" test "$(grep -c -- '^--$' "$LOG")" = 2
tmpdir=$(sed -n 's|^\(.*\)/callbacks\.c$|\1|p' "$LOG" | head -n 1)
check "link: callbacks compiled" has "$LOG" "$tmpdir/callbacks.c"
check "link: callbacks include dir" has "$LOG" "-I$P/include/mnemo"
check "link: temp dir removed" test -n "$tmpdir" -a ! -e "$tmpdir"
sed '1,/^--$/d' "$LOG" >"$work/link"
# The program exports what shared libraries built with mnemo -shared interpose (runtime/unit.h).
exports=
for sym in mn_q_cur mn_q_end mn_q_base mn_q_busy mn_queue_push_slow mn_queue_push_nested \
	mn_heap_pending_site __mnemo_value_sets __mnemo_value_sites mn_sample_lo mn_sample_span \
	mn_alloc_context_mask __mnemo_unit_register; do
	exports="$exports -Wl,--export-dynamic-symbol=$sym"
done
# shellcheck disable=SC2086  # $exports: one argument each
expected=$(printf '%s\n' -flto -fuse-ld=lld "-fpass-plugin=$P/lib/mnemo/mnemo-pass.so" \
	"-Wl,--load-pass-plugin=$P/lib/mnemo/mnemo-pass.so" -Wl,--fat-lto-objects \
	-Wl,--lto-partitions=2 a.o "lib b.a" -o prog -lm \
	"$tmpdir/callbacks.o" -Wl,--whole-archive "$P/lib/mnemo/libmnemo-rt.a" \
	-Wl,--no-whole-archive -lpthread -ldl $exports --)
if [ "$(cat "$work/link")" = "$expected" ]; then ok "link: command line"; else
	bad "link: command line" "expected: $(echo "$expected" | tr '\n' ' ')" \
		"got:      $(tr '\n' ' ' <"$work/link")"
fi
# -shared: a linked unit (runtime/unit.h): unit callbacks compiled -fPIC, libmnemo-unit.a and
# no runtime, the stand-ins kept exported, version scripts as GNU ld takes them.
: >"$P/lib/mnemo/libmnemo-unit.a"
FAKE_HEAP=1 fake "$cc" -m value-pattern -shared a.o -Wl,--version-script,v.map -o liba.so
check "-shared: specializer --unit" has "$LOG.spec" "--unit"
check "-shared: callbacks -fPIC" has "$LOG" "-fPIC"
sed '1,/^--$/d' "$LOG" >"$work/link"
check "-shared: unit archive" has "$work/link" "$P/lib/mnemo/libmnemo-unit.a"
check "-shared: no runtime" test -z "$(grep -e libmnemo-rt -e libmnemo-heap "$work/link")"
check "-shared: --undefined-version" has "$work/link" "-Wl,--undefined-version"
check "-shared: the stand-ins' version script" test -n "$(grep -e '-Wl,--version-script=.*unit.map' "$work/link")"
check "-shared: the user's version script" has "$work/link" "-Wl,--version-script,v.map"
rm -f "$P/lib/mnemo/libmnemo-unit.a"
FAKE_HEAP=1 fake "$cc" --mnemo-modules=dependence a.o -o prog
check "link heap=1: heap library" has "$LOG" "$P/lib/mnemo/libmnemo-heap.a"
check "--mnemo-modules=" has "$LOG.spec" "dependence"
check "link with -m: no default set asked" test ! -e "$LOG.defaults"
fake "$cc" a.o -o prog
check "link without -m: the specializer's default set" has "$LOG.defaults" --defaults
check "link without -m: defaults from the modules dir" has "$LOG.defaults" \
	"$P/share/mnemo/modules"
check "link without -m: specialized for the default set" has "$LOG.spec" \
	"dependence,value-pattern"
FAKE_DEFAULTS_FAIL=1 fake "$cc" a.o -o prog 2>"$work/err"
check "default set unreadable: the specializer's status" test $? = 1
check "default set unreadable: its message" contains "$work/err" "x/events.yaml: bad"
check "default set unreadable: no link" test ! -e "$LOG"
FAKE_DEFAULTS= fake "$cc" a.o -o prog 2>"$work/err"
check "no default module: exit 2" test $? = 2
check "no default module: message" contains "$work/err" "choose some with -m"

# Debug info: line tables unless the user gives a -g option of their own (-g0 too), on every step
# that compiles; a link of objects compiles nothing.
fake "$cc" -O2 -c a.c
check "no -g: line tables" has "$LOG" -gline-tables-only
for g in -g -g0 -ggdb3 -gdwarf-4 -gline-directives-only; do
	fake "$cc" -O2 "$g" -c a.c
	check "$g: no line tables added" sh -c "! grep -q -- '-gline-tables-only' '$LOG'"
done
fake "$cc" -O2 -o -gx -c a.c
check "an option's value is no -g option (-o -gx)" has "$LOG" -gline-tables-only
fake "$cc" -O2 main.c util.o -o prog
check "link with a source: line tables" has "$LOG" -gline-tables-only
fake "$cc" -O2 a.o -o prog
check "link of objects: no line tables" sh -c "! grep -q -- '-gline-tables-only' '$LOG'"

FAKE_SPEC_FAIL=1 fake "$cc" a.o -o prog 2>"$work/err"
status=$?
check "specializer failure: its status" test "$status" = 3
check "specializer failure: its message" contains "$work/err" "unknown module 'x'"
check "specializer failure: no link" test ! -e "$LOG"

fake "$cc" -flto=thin -c a.c 2>"$work/err"
check "-flto=thin refused" test $? = 2
check "-flto=thin message" contains "$work/err" "needs full LTO"
fake "$cc" -m 2>"$work/err"
check "-m without a value" contains "$work/err" "mnemo-cc: -m needs"

fake "$cc" --mnemo-verbose -c "a b.c" "it's.c" 2>"$work/err"
check "--mnemo-verbose quotes" contains "$work/err" "-c 'a b.c' 'it'\\''s.c'"

# Loop summaries (pass/README.md "Loop summaries"): every step that compiles keeps loops as
# written for the pass, the three flags after the user's options (a later -O2 would turn the
# vectorizers back on); a link of objects compiles nothing and gets none (the link line above);
# --mnemo-no-summarize reaches the specializer alone.
loops=$(printf '%s\n' -fno-unroll-loops -fno-vectorize -fno-slp-vectorize)
# last_call: the arguments of the last clang call in $LOG, one a line, without its "--".
last_call() { sed '$d' "$LOG" | tac | sed '/^--$/,$d' | tac; }
fake "$cc" -O2 -c a.c -o a.o
expected=$(printf '%s\n' -flto -ffat-lto-objects "-fpass-plugin=$P/lib/mnemo/mnemo-pass.so" \
	-gline-tables-only -O2 -c a.c -o a.o "$loops" --)
if [ "$(cat "$LOG")" = "$expected" ]; then ok "compile: loop flags after the user's"; else
	bad "compile: loop flags after the user's" "expected: $(echo "$expected" | tr '\n' ' ')" \
		"got:      $(tr '\n' ' ' <"$LOG")"
fi
fake "$cc" -O3 -S a.c
check "-S: loop flags last" test "$(last_call | tail -n 3)" = "$loops"
fake "$cc" -O2 main.c util.o -o prog
check "link with a source: two clang calls" test "$(grep -c -- '^--$' "$LOG")" = 2
check "link with a source: loop flags after the user's" test \
	"$(last_call | sed -n '/^prog$/,$p' | sed -n '2,4p')" = "$loops"
check "link with a source: callbacks.c without them" sh -c \
	"sed '/^--\$/,\$d' '$LOG' | grep -c -- '^-fno-' | grep -qx 0"
fake "$cc" -O2 a.o -o prog
check "link of objects: no loop flags" sh -c "! grep -q -- '^-fno-' '$LOG'"
check "link: summaries by default" sh -c "! grep -q -- '--no-summarize' '$LOG.spec'"
fake "$cc" --mnemo-no-summarize -m dependence a.o -o prog
check "--mnemo-no-summarize: mnemo-specialize --no-summarize" has "$LOG.spec" --no-summarize
check "--mnemo-no-summarize: not passed to clang" sh -c "! grep -q -- 'summarize' '$LOG'"
fake "$cc" -O2 -c a.c -o a.o
cp "$LOG" "$work/log.summarize"
fake "$cc" --mnemo-no-summarize -O2 -c a.c -o a.o
check "--mnemo-no-summarize: compile unchanged (same site ids)" cmp -s "$LOG" "$work/log.summarize"
check "--mnemo-no-summarize: compile runs no specializer" test ! -e "$LOG.spec"
"$cc" --help >"$work/help" 2>&1
check "--help: --mnemo-no-summarize" contains "$work/help" "--mnemo-no-summarize"
check "--help: the loop flags" contains "$work/help" \
	"-fno-unroll-loops -fno-vectorize -fno-slp-vectorize"

# --use PROFILE: an ordinary build with the profile applied: the plugin at compile (-fplugin too,
# for -mllvm) and link, the profile's absolute path, no specializer, no runtime.
"$cc" --help >"$work/help" 2>&1
check "--help: --use" contains "$work/help" "--use PROFILE, --use=PROFILE"
mkdir -p "$work/prof dir"
echo 'format: mnemo-profile/1' >"$work/prof dir/p.yaml"
(cd "$work/prof dir" && fake "$cc" --use p.yaml -O2 -c a.c -o a.o)
check "--use compile: one clang call" test "$(grep -c -- '^--$' "$LOG")" = 1
check "--use compile: -fplugin" has "$LOG" "-fplugin=$P/lib/mnemo/mnemo-pass.so"
check "--use compile: -fpass-plugin" has "$LOG" "-fpass-plugin=$P/lib/mnemo/mnemo-pass.so"
check "--use compile: -mllvm" has "$LOG" "-mllvm"
check "--use compile: absolute profile path" has "$LOG" "-mnemo-use=$work/prof dir/p.yaml"
check "--use compile: args kept" has "$LOG" "a.c"
check "--use compile: fat LTO objects" has "$LOG" "-ffat-lto-objects"
check "--use compile: line tables, as the profiling build" has "$LOG" "-gline-tables-only"
check "--use compile: loop flags last (site ids as profiled)" test "$(last_call | tail -n 3)" = \
	"$loops"
fake "$cc" "--use=$work/prof dir/p.yaml" -m value-pattern a.o -o prog -lm
expected=$(printf '%s
' -flto -fuse-ld=lld "-Wl,--load-pass-plugin=$P/lib/mnemo/mnemo-pass.so" \
	-Wl,--fat-lto-objects a.o -o prog -lm --)
if [ "$(cat "$LOG")" = "$expected" ]; then ok "--use link: command line"; else
	bad "--use link: command line" "expected: $(echo "$expected" | tr '\n' ' ')" \
		"got:      $(tr '\n' ' ' <"$LOG")"
fi
check "--use link: no specializer" test ! -e "$LOG.spec"
fake "$cc" --use "$work/prof dir/p.yaml" main.c util.o -o prog
check "--use compile and link: -mnemo-use" has "$LOG" "-mnemo-use=$work/prof dir/p.yaml"
check "--use compile and link: lld plugin" has "$LOG" \
	"-Wl,--load-pass-plugin=$P/lib/mnemo/mnemo-pass.so"
check "--use compile and link: no runtime" sh -c "! grep -q libmnemo-rt '$LOG'"
check "--use compile and link: loop flags after the user's" test \
	"$(last_call | sed -n '/^prog$/,$p' | sed -n '2,4p')" = "$loops"
fake "$cc" --use "$work/none.yaml" -c a.c 2>"$work/err"
check "--use missing profile: exit 2" test $? = 2
check "--use missing profile: message" contains "$work/err" "--use: $work/none.yaml: no such file"
check "--use missing profile: nothing compiled" test ! -e "$LOG"
fake "$cc" --use "$work/prof dir" -c a.c 2>"$work/err"
check "--use a folder: exit 2" test $? = 2
check "--use a folder: message" contains "$work/err" "not a readable file"
fake "$cc" --use 2>"$work/err"
check "--use without a value" contains "$work/err" "--use needs a profile"

mv "$P/lib/mnemo/mnemo-pass.so" "$P/lib/mnemo/x.so"
fake "$cc" -c a.c 2>"$work/err"
check "missing plugin: exit 2" test $? = 2
check "missing plugin: message" contains "$work/err" "mnemo-pass.so not found"
mv "$P/lib/mnemo/x.so" "$P/lib/mnemo/mnemo-pass.so"

# ---- 2. Real clang-19 and lld, no-op plugin ----
if ! command -v clang-19 >/dev/null || ! command -v llvm-config-19 >/dev/null ||
	! command -v llvm-ar-19 >/dev/null || ! command -v make >/dev/null ||
	! command -v ar >/dev/null || ! command -v ranlib >/dev/null; then
	echo "skipping the real-clang part: clang-19, llvm-config-19, llvm-ar-19, make, ar or" \
		"ranlib missing"
else
	cat >"$work/noop.cpp" <<'EOF'
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
extern "C" LLVM_ATTRIBUTE_WEAK llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "mnemo-test-noop", "0", [](llvm::PassBuilder &) {}};
}
EOF
	# shellcheck disable=SC2046
	clang++-19 -shared -fPIC $(llvm-config-19 --cxxflags) "$work/noop.cpp" \
		-o "$P/lib/mnemo/mnemo-pass.so" 2>"$work/err"
	check "no-op plugin builds" test $? = 0
	printf 'int mnemo_rt_stub(void) { return 0; }\n' >"$work/rt.c"
	printf 'int mnemo_heap_stub(void) { return 0; }\n' >"$work/heap.c"
	clang-19 -c "$work/rt.c" -o "$work/rt.o" && clang-19 -c "$work/heap.c" -o "$work/heap.o" &&
		rm -f "$P/lib/mnemo/libmnemo-rt.a" "$P/lib/mnemo/libmnemo-heap.a" &&
		llvm-ar-19 rc "$P/lib/mnemo/libmnemo-rt.a" "$work/rt.o" &&
		llvm-ar-19 rc "$P/lib/mnemo/libmnemo-heap.a" "$work/heap.o"

	proj="$work/a project"
	mkdir -p "$proj"
	cat >"$proj/Makefile" <<'EOF'
CFLAGS = -O2 -g
prog: main.o libutil.a
	$(CC) $(CFLAGS) -o $@ main.o libutil.a
libutil.a: util.o
	$(AR) rcs $@ util.o
EOF
	printf 'int twice(int x) { return 2 * x; }\n' >"$proj/util.c"
	printf 'int twice(int);\nint main(int c, char **v) { (void)v; return twice(c) + 1; }\n' \
		>"$proj/main.c"
	(cd "$proj" && make -s CC="$cc" AR=llvm-ar-19) >"$work/make.log" 2>&1
	check "make CC=mnemo-cc AR=llvm-ar-19" test $? = 0
	check "objects are fat: ELF with the bitcode in .llvm.lto" sh -c \
		"head -c 4 '$proj/util.o' | od -An -c | grep -q 'E   L   F' &&
		llvm-readelf-19 -S '$proj/util.o' | grep -q '[.]llvm[.]lto'"
	"$proj/prog" a b
	check "the program runs" test $? = 7

	# Lua's way: AR carries its flags, ranlib indexes, GNU binutils (no LLVM plugin needed).
	gproj="$work/gnu ar"
	mkdir -p "$gproj"
	cp "$proj/util.c" "$proj/main.c" "$gproj/"
	cat >"$gproj/Makefile" <<'EOF'
CFLAGS = -O2
AR = ar rc
RANLIB = ranlib
prog: main.o libutil.a
	$(CC) $(CFLAGS) -o $@ main.o libutil.a
libutil.a: util.o
	$(AR) $@ util.o
	$(RANLIB) $@
EOF
	(cd "$gproj" && make -s CC="$cc") >"$work/gnu.log" 2>&1
	check "make CC=mnemo-cc with AR = ar rc, RANLIB = ranlib" test $? = 0
	check "GNU ar: no LTO plugin noise" sh -c "! grep -q 'LTO module' '$work/gnu.log'"
	check "GNU ar: the archive is indexed" sh -c "nm -s '$gproj/libutil.a' | grep -q 'twice in'"
	"$gproj/prog" a b
	check "the GNU ar program runs" test $? = 7

	(cd "$proj" && "$cc" -O0 -g -c util.c -o util0.o && "$cc" -O0 main.c util0.o -o prog0) \
		>"$work/o0.log" 2>&1
	check "-O0 compile and link" test $? = 0
	"$proj/prog0"
	check "the -O0 program runs" test $? = 3

	printf '#include <vector>\nint main() { std::vector<int> v(3); return (int)v.size(); }\n' \
		>"$proj/main.cpp"
	(cd "$proj" && FAKE_HEAP=1 "$P/bin/mnemo-c++" -O2 main.cpp -o prog++) >"$work/cxx.log" 2>&1
	check "mnemo-c++ compiles and links C++" test $? = 0
	"$proj/prog++"
	check "the C++ program runs" test $? = 3
	[ "$failed" = 0 ] || cat "$work/make.log" "$work/gnu.log" "$work/o0.log" "$work/cxx.log"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
