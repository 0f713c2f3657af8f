#!/bin/sh
# zlib 1.2.11 with its shared library: npm optipng-bin@9.0.0 ships OptiPNG's source tarball
# (vendor/source/optipng.tar.gz), which holds zlib's whole tree in src/zlib: configure, Makefile.in,
# zlib.map, test/example.c and test/minigzip.c.  OptiPNG's one change that matters here, a block at
# the head of zlib.h that defines NO_GZCOMPRESS and NO_GZIP (README.optipng.txt), is removed first:
# with it minigzip cannot compress and zlib's own `make test` fails natively.
#
# Built as zlib's README says, `./configure && make`, with CC=clang-19 and with CC=mnemo-cc (the
# default modules; zlib's `make` makes seven programs and the library).  configure's
# shared-library probe links a test object with -shared and the full zlib.map, and falls back to a
# static-only build without a word in make's output, so the test checks that the instrumented
# build made libz.so.1.2.11-optipng.
# zlib's own `make test` (example and minigzip, static, shared through LD_LIBRARY_PATH, and 64-bit)
# runs in both trees: same output, same status.  The shared example's profile names sites of the
# library's unit in zlib's sources; a native example loading the instrumented library runs as with
# the native one and writes no profile.
# Usage: zlib.sh BUILD_DIR SOURCE_DIR
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rp_init zlib "${1:?usage: zlib.sh BUILD_DIR SOURCE_DIR}"

tgz=$(rp_fetch optipng-bin@9.0.0 4a27b6c265003ece4ab5b852424c06269fc7e817) || exit $?
tar xzf "$tgz" -C "$work" package/vendor/source/optipng.tar.gz &&
	tar xzf "$work/package/vendor/source/optipng.tar.gz" -C "$work" optipng-0.7.7/src/zlib ||
	{ echo "FAIL: cannot unpack zlib from $tgz"; exit 1; }
zsrc=$work/optipng-0.7.7/src/zlib
sed -i '1,/^#endif \/\* OPTIPNG_CONFIG_ZLIB \*\//d' "$zsrc/zlib.h"
if grep -q 'NO_GZCOMPRESS$' "$zsrc/zlib.h"; then echo "FAIL: OptiPNG's block is still in zlib.h"; exit 1; fi
cp -r "$zsrc" "$work/native"
cp -r "$zsrc" "$work/mnemo"

(cd "$work/native" && CC=clang-19 ./configure && make -j2) >"$work/native.log" 2>&1 ||
	rp_die "native build" "$work/native.log"
if (cd "$work/mnemo" && CC=mnemo-cc ./configure) >"$work/mnemo.log" 2>&1; then
	rp_ok "CC=mnemo-cc ./configure"
else
	rp_die "CC=mnemo-cc ./configure" "$work/mnemo.log"
fi
if grep -q '^Building shared library libz.so' "$work/mnemo.log"; then
	rp_ok "configure's shared-library probe passes"
else
	rp_bad "configure's shared-library probe passes" "configure says:" \
		"$(grep -A1 'shared library support' "$work/mnemo.log" | tail -n 1)" \
		"configure.log: $(grep -m1 'error' "$work/mnemo/configure.log")"
fi
(cd "$work/mnemo" && make -j2) >>"$work/mnemo.log" 2>&1 || rp_die "make (CC=mnemo-cc)" "$work/mnemo.log"
rp_clean_log "make (CC=mnemo-cc): no archiver or linker complaint" "$work/mnemo.log"
if [ -f "$work/mnemo/libz.so.1.2.11-optipng" ] && [ -x "$work/mnemo/examplesh" ]; then
	rp_ok "the shared library and examplesh were built"
else
	rp_bad "the shared library and examplesh were built" "no libz.so.1.2.11-optipng or examplesh in $work/mnemo"
fi

# `make test` after `make`: nothing left to build, so make prints the suite's output alone.
rp_compare "make test" "$work/native" "$work/mnemo" 'make -s test'

zre='adler32\.c|crc32\.c|deflate\.c|inflate\.c|inffast\.c|inftrees\.c|trees\.c|zutil\.c|compress\.c|uncompr\.c|gz[a-z]*\.c'
rp_compare examplesh "$work/native" "$work/mnemo" 'LD_LIBRARY_PATH=. ./examplesh'
set -- "$work/mnemo/profiles/examplesh-"*.mnemo.yaml
rp_check_profile "examplesh: profile" "$1" "$zre"
if [ -s "$1" ]; then
	n=$(grep -E "file: \"?([^\",]*/)?($zre)\"?,.*unit: libz\.so" "$1" | grep -c . || true)
	if [ "$n" -gt 0 ] && grep -A1 '^units:' "$1" | grep -q 'name: libz.so'; then
		rp_ok "examplesh: $n sites of the unit libz.so in zlib's sources"
	else
		rp_bad "examplesh: sites of the unit libz.so" "$1: $n sites of the library unit;" \
			"units: $(grep -A1 '^units:' "$1" | tail -n 1)"
	fi
fi
rp_report "mnemo report (examplesh)" "$(ls "$work/mnemo/profiles/examplesh-"*.mnemo.yaml)" "$zre"

# A native program with the instrumented library: unprofiled and silent.
mkdir -p "$work/plain"
(cd "$work/native" && LD_LIBRARY_PATH=. ./examplesh) >"$work/plain.want" 2>&1
(cd "$work/plain" && LD_LIBRARY_PATH="$work/mnemo" "$work/native/examplesh") >"$work/plain.got" 2>&1
st=$?
# example writes foo.gz where it runs; nothing else may appear.
if [ "$st" -eq 0 ] && cmp -s "$work/plain.want" "$work/plain.got" && [ "$(ls "$work/plain")" = foo.gz ]; then
	rp_ok "native examplesh with the instrumented libz.so: same output, no profile"
else
	rp_bad "native examplesh with the instrumented libz.so" "status $st; files: $(ls "$work/plain" | tr '\n' ' ')" \
		"$(diff "$work/plain.want" "$work/plain.got" | head -n 5)"
fi
rp_finish
