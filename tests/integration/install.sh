#!/usr/bin/env bash
# `cmake --install` puts every tool, library, header and spec under a prefix, and the installed tools
# work from there: a program built with the installed mnemo-cc profiles itself and the installed
# mnemo reports it, and nothing they run or embed points into the build tree.
# Usage: install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$2
work=$(mktemp -d /tmp/mnemo-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/prefix" >/dev/null
P=$work/prefix
for f in bin/mnemo bin/mnemo-cc bin/mnemo-c++ bin/mnemo-backend bin/mnemo-specialize \
	lib/mnemo/mnemo-pass.so lib/mnemo/libmnemo-rt.a lib/mnemo/libmnemo-heap.a lib/mnemo/libmnemo-unit.a \
	include/mnemo/abi.h include/mnemo/queue.h include/mnemo/profile.h include/mnemo/module.h \
	share/mnemo/events.yaml share/mnemo/modules/value-pattern/events.yaml; do
	[ -e "$P/$f" ] || fail "not installed: $f"
done
cd "$work"
"$P/bin/mnemo-cc" --mnemo-verbose -O2 -g "$src/programs/const_load.c" -o prog 2>cmds
if grep -q "$build" cmds; then fail "installed mnemo-cc ran something from the build tree: $(grep "$build" cmds | head -1)"; fi
# Debug info may name the directories things were compiled in; what the program uses may not.
llvm-objcopy-19 --strip-debug prog prog.nodebug
if strings prog.nodebug | grep -q "$build"; then
	fail "the program embeds a build-tree path: $(strings prog.nodebug | grep "$build" | head -1)"
fi
./prog >out
[ -s prog.mnemo.yaml ] || fail "no profile written"
"$P/bin/mnemo" report prog.mnemo.yaml >report
grep -q 'const_load.c' report || fail "report names no site in const_load.c"

# libmnemo-profile from the prefix, as a client builds it: pkg-config, shared and static.
export PKG_CONFIG_PATH=$P/lib/pkgconfig
cc "$src/../../examples/constant_loads.c" $(pkg-config --cflags --libs mnemo-profile) \
	-Wl,-rpath,"$P/lib" -o constant_loads || fail "constant_loads does not build with pkg-config"
cc "$src/../../examples/constant_loads.c" $(pkg-config --cflags mnemo-profile) \
	"$P/lib/libmnemo-profile.a" $(pkg-config --libs-only-l yaml-0.1 2>/dev/null || echo -lyaml) \
	-o constant_loads.static || fail "constant_loads does not link libmnemo-profile.a"
for exe in ./constant_loads ./constant_loads.static; do
	$exe prog.mnemo.yaml >consts || fail "$exe failed: $(cat consts)"
	grep -q "const_load.c:.*main: 42 (1000 executions)" consts ||
		fail "$exe did not list the constant load of 42: $(cat consts)"
done
printf 'format: mnemo-profile/1\ncomplete: true\nmodules:\n  value-pattern: {entries: [{site: x}]}\n' >bad.yaml
if ./constant_loads bad.yaml 2>msg; then fail "a bad row was accepted"; fi
grep -q "bad.yaml:4:.*field 'site': expected" msg || fail "unexpected message: $(cat msg)"
echo "1 passed, 0 failed"
