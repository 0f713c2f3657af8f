#!/bin/sh
# README's CMake recipe on a tiny CMake project (cmake/ beside this file: a C static library, a C++
# program using it, a ctest test): configured with -DCMAKE_C_COMPILER=mnemo-cc
# -DCMAKE_CXX_COMPILER=mnemo-c++ and nothing else (CMake's own archiver, the default module set),
# built, its test run by ctest; the program prints what the native build's prints, and its profile
# names sites in both the C library and the C++ program.
# Usage: cmake.sh BUILD_DIR SOURCE_DIR
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rp_init cmake "${1:?usage: cmake.sh BUILD_DIR SOURCE_DIR}"
command -v cmake >/dev/null 2>&1 || { echo "SKIPPED: cmake is not installed"; exit 77; }

cmake -S "$here/cmake" -B "$work/native" -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
	>"$work/native.log" 2>&1 && cmake --build "$work/native" >>"$work/native.log" 2>&1 ||
	rp_die "native build" "$work/native.log"
if cmake -S "$here/cmake" -B "$work/mnemo" -DCMAKE_C_COMPILER=mnemo-cc -DCMAKE_CXX_COMPILER=mnemo-c++ \
	>"$work/mnemo.log" 2>&1 && cmake --build "$work/mnemo" >>"$work/mnemo.log" 2>&1; then
	rp_ok "cmake -DCMAKE_C_COMPILER=mnemo-cc -DCMAKE_CXX_COMPILER=mnemo-c++, cmake --build"
else
	rp_die "cmake -DCMAKE_C_COMPILER=mnemo-cc -DCMAKE_CXX_COMPILER=mnemo-c++, cmake --build" "$work/mnemo.log"
fi
rp_clean_log "cmake --build: no archiver or linker complaint" "$work/mnemo.log"
if (cd "$work/mnemo" && ctest --output-on-failure) >"$work/ctest.log" 2>&1; then
	rp_ok "ctest in the instrumented build"
else
	rp_bad "ctest in the instrumented build" "$(tail -n 5 "$work/ctest.log")"
fi
rp_compare wordfreq "$work/native" "$work/mnemo" ./wordfreq
set -- "$work/mnemo/profiles/wordfreq-"*.mnemo.yaml
rp_check_profile "wordfreq: profile, C library" "$1" 'ring\.c'
rp_check_profile "wordfreq: profile, C++ program" "$1" 'wordfreq\.cpp'
rp_report "mnemo report (wordfreq)" "$1" 'ring\.c|wordfreq\.cpp'
rp_finish
