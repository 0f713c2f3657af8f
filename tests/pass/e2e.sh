#!/bin/sh
# End-to-end test of the pass: the compile/link split of docs/internals.md.
#
#   e2e.sh PLUGIN LLVM_BINDIR ABI_INCLUDE_DIR WORK_DIR MODE
#
# MODE is c-O2, c-O0 or cxx.  The program (e2e/main.c + e2e/lib.c, or
# e2e/eh.cpp) is compiled to LTO bitcode with -fpass-plugin (functions
# marked); the stand-in callbacks (e2e/stubs.c) to bitcode without the
# plugin; the checker (e2e/check.c) natively.  lld links them with
# --load-pass-plugin (instrumented during LTO).  The test passes if the
# bitcode carries the mark, the binary runs, prints what the uninstrumented
# program prints, passes the checker, and has __mnemo_site_table.
set -eu
if [ $# -ne 5 ]; then
	echo "usage: $0 PLUGIN LLVM_BINDIR ABI_INCLUDE_DIR WORK_DIR MODE" >&2
	exit 2
fi
plugin=$1 bindir=$2 abi=$3 work=$4 mode=$5
src=$(cd "$(dirname "$0")/e2e" && pwd)
cc="$bindir/clang"
cxx="$bindir/clang++"
opt=-O2
case $mode in
c-O2) ;;
c-O0) opt=-O0 ;;
cxx) ;;
*)
	echo "e2e: unknown mode $mode" >&2
	exit 2
	;;
esac
if [ ! -f "$plugin" ]; then
	echo "e2e: plugin $plugin not built" >&2
	exit 2
fi
rm -rf "$work"
mkdir -p "$work"
cd "$work"

step() {
	echo "+ $*" >&2
	"$@"
}

if [ "$mode" = cxx ]; then
	step "$cxx" $opt -g -flto -fpass-plugin="$plugin" -c "$src/eh.cpp" -o eh.o
	objs="eh.o"
	link=$cxx
	step "$cxx" $opt "$src/eh.cpp" -o reference
else
	step "$cc" $opt -g -flto -fpass-plugin="$plugin" -c "$src/main.c" -o main.o
	step "$cc" $opt -g -flto -fpass-plugin="$plugin" -c "$src/lib.c" -o lib.o
	objs="main.o lib.o"
	link=$cc
	step "$cc" $opt "$src/main.c" "$src/lib.c" -o reference
fi
step "$cc" $opt -g -flto -I"$abi" -c "$src/stubs.c" -o stubs.o
step "$cc" $opt -g -I"$abi" -c "$src/check.c" -o check.o

# Compile time marks every definition and nothing else.
for o in $objs; do
	if ! "$bindir/llvm-dis" "$o" -o - | grep -q '"mnemo-instrument"'; then
		echo "e2e: $o: no function marked \"mnemo-instrument\"" >&2
		exit 1
	fi
	if "$bindir/llvm-dis" "$o" -o - | grep -q '__mnemo_func_entry'; then
		echo "e2e: $o: instrumented at compile time" >&2
		exit 1
	fi
done
if "$bindir/llvm-dis" stubs.o -o - | grep -q '"mnemo-instrument"'; then
	echo "e2e: stubs.o marked without the plugin" >&2
	exit 1
fi

step "$link" $opt -flto -fuse-ld=lld -Wl,--load-pass-plugin="$plugin" \
	$objs stubs.o check.o -o prog

step ./reference 37 >expected.txt
step ./prog 37 >got.txt
if ! cmp -s expected.txt got.txt; then
	echo "e2e: the instrumented program printed something else:" >&2
	diff expected.txt got.txt >&2 || true
	exit 1
fi
if ! "$bindir/llvm-nm" prog | grep -q ' __mnemo_site_table$'; then
	echo "e2e: prog has no __mnemo_site_table symbol" >&2
	exit 1
fi
echo "e2e $mode: ok"
