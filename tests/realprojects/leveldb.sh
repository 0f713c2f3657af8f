#!/bin/sh
# A C++ project: LevelDB 1.20 as npm leveldown@6.1.1 vendors it (deps/leveldb/leveldb-1.20: the
# upstream tree with its Makefile, which archives with `$(AR) -rs`, and its own test harness).  The
# tarball drops build_detect_platform's executable bit, which the Makefile needs; the test restores
# it, as a user would.
#
# Built with `make CC=clang-19 CXX=clang++-19` and with `make CC=mnemo-cc CXX=mnemo-c++` (the
# default modules; each test program is one LTO link of the whole library, about 30 s): the
# static library and two of LevelDB's own test programs, c_test (a database
# opened, written, compacted, iterated, snapshotted and repaired through the C API; compiled by CC)
# and memenv_test (linked against the archives libmemenv.a and libleveldb.a), run in both trees:
# same output, same status; the instrumented runs' profiles name allocation sites in LevelDB's
# sources.  (`make check` would link and run 26 programs, db_test alone a minute natively.)
# Usage: leveldb.sh BUILD_DIR SOURCE_DIR
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rp_init leveldb "${1:?usage: leveldb.sh BUILD_DIR SOURCE_DIR}"

tgz=$(rp_fetch leveldown@6.1.1 0f0e480fa88fd807abf94c33cb7e40966ea4b5ce) || exit $?
tar xzf "$tgz" -C "$work" package/deps/leveldb/leveldb-1.20 ||
	{ echo "FAIL: cannot unpack LevelDB from $tgz"; exit 1; }
chmod +x "$work/package/deps/leveldb/leveldb-1.20/build_detect_platform"
cp -r "$work/package/deps/leveldb/leveldb-1.20" "$work/native"
cp -r "$work/package/deps/leveldb/leveldb-1.20" "$work/mnemo"

tests="c_test memenv_test"
targets="out-static/libleveldb.a"
for t in $tests; do targets="$targets out-static/$t"; done
# shellcheck disable=SC2086  # $targets: several
make -C "$work/native" -j2 CC=clang-19 CXX=clang++-19 $targets >"$work/native.log" 2>&1 ||
	rp_die "native build" "$work/native.log"
# shellcheck disable=SC2086  # $targets: several
if make -C "$work/mnemo" -j2 CC=mnemo-cc CXX=mnemo-c++ $targets \
	>"$work/mnemo.log" 2>&1; then
	rp_ok "make CC=mnemo-cc CXX=mnemo-c++"
else
	rp_die "make CC=mnemo-cc CXX=mnemo-c++" "$work/mnemo.log"
fi
rp_clean_log "make CC=mnemo-cc CXX=mnemo-c++: no archiver or linker complaint" "$work/mnemo.log"

src_re='(arena|cache|c|db_impl|memtable|table_builder|block_builder|write_batch|version_set|env_posix|memenv|testharness|filter_policy|bloom|status)\.(cc|h)'
for t in $tests; do
	rp_compare "$t" "$work/native" "$work/mnemo" "out-static/$t"
	set -- "$work/mnemo/profiles/$t-"*.mnemo.yaml
	rp_check_profile "$t: profile" "$1" "$src_re"
done
rp_report "mnemo report (c_test)" "$(ls "$work/mnemo/profiles/c_test-"*.mnemo.yaml)" "$src_re"
rp_finish
