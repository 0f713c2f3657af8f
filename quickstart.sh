#!/usr/bin/env bash
# Mnemo quick start.  On a fresh Debian 12 machine, as root:
#
#   ./quickstart.sh demo    install what is missing, build, profile examples/demo.c, print the report
#                           and write it as a web page (build/demo.html)
#   ./quickstart.sh test    install what is missing, build, run the whole test suite (what CI runs)
#
# Also: `build` (install + build only), `deps` (install only), `bench` (run bench/run.sh).
# Environment: BUILD_DIR (default build), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")"
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
DEPS="clang-19 llvm-19-dev llvm-19-tools lld-19 libclang-rt-19-dev libnuma-dev libyaml-dev libcmocka-dev
      libck-dev libglib2.0-dev cmake make pkg-config bc time valgrind libomp-19-dev curl
      chromium fonts-dejavu-core python3 graphviz libgraphviz-dev"

say() { printf '\n== %s\n' "$*"; }

deps() {
	local missing=()
	for p in $DEPS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	say "installing ${missing[*]}"
	local sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
	deps
	say "building in $BUILD_DIR"
	cmake -S . -B "$BUILD_DIR" -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$BUILD_DIR" -j "$JOBS"
}

demo() {
	build
	say "profiling examples/demo.c with the default modules (the five profiling modules)"
	"$BUILD_DIR"/bin/mnemo-cc -O2 -g examples/demo.c -o "$BUILD_DIR"/demo
	(cd "$BUILD_DIR" && ./demo)
	"$BUILD_DIR"/bin/mnemo report "$BUILD_DIR"/demo.mnemo.yaml
	"$BUILD_DIR"/bin/mnemo report --html "$BUILD_DIR"/demo.html "$BUILD_DIR"/demo.mnemo.yaml
	say "the same profile as a web page: xdg-open $BUILD_DIR/demo.html (or file://$(realpath "$BUILD_DIR")/demo.html in a browser)"
}

tests() {
	build
	say "test suite"
	ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
	# The bench harness end to end at small inputs: every program's output under every module (and
	# the peers) identical to native; its timings judge nothing there.
	say "bench harness, --quick"
	bench/run.sh "$BUILD_DIR" --quick
	# Every C unit test once more under AddressSanitizer and UndefinedBehaviorSanitizer, and the
	# merge tests, which restore and fold every module's sections of real profiles.
	say "unit and merge tests under ASan + UBSan"
	cmake -S . -B "$BUILD_DIR-asan" -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
		-DCMAKE_BUILD_TYPE=Debug -DMNEMO_SANITIZE=ON >/dev/null
	cmake --build "$BUILD_DIR-asan" -j "$JOBS"
	ctest --test-dir "$BUILD_DIR-asan" --output-on-failure -j "$JOBS" -L 'unit|merge'
}

case "${1:-demo}" in
deps) deps ;;
build) build ;;
demo) demo ;;
test) tests ;;
bench) build; bench/run.sh "$BUILD_DIR" ;;
-h|--help|help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' ;;
*) echo "quickstart.sh: unknown command '$1' (demo, test, build, deps, bench)" >&2; exit 2 ;;
esac
