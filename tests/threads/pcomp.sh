#!/bin/sh
# A real threaded program (issue 22): Zstandard, a parallel compressor shipped as C source by the
# npm registry (zstd-napi's deps/zstd, fetched at test time by bench/zstd/fetch.sh into the build
# tree, never committed), driven by bench/zstd/driver.c.  It compresses 3 MiB of text-like input
# with two compression threads natively and under `mnemo run` (every module it was built for, and
# -m dependence alone); each compressed file is the native one byte for byte and decompresses to
# the input, and each profile says complete: true.  Skipped (77) when the sources cannot be
# fetched (npm missing or offline).
#
#   pcomp.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-pcomp.XXXXXX)
trap 'rm -rf "$work"' EXIT
unset MNEMO_OUTPUT MNEMO_MODULES MNEMO_DISABLE MNEMO_REPRODUCIBLE MNEMO_WORKERS MNEMO_THREADS
failed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

zdir=$("$src/bench/zstd/fetch.sh" "$bin/../bench-cache/zstd") ||
	{ echo "SKIP: zstd's sources not fetched (bench/zstd/fetch.sh; npm and the npm registry needed)"; exit 77; }
cd "$work" || exit 2
lib=$zdir/lib
flags="-O2 -DZSTD_MULTITHREAD -DZSTD_DISABLE_ASM -I$lib -pthread"
srcs="$src/bench/zstd/driver.c $(ls "$lib"/common/*.c "$lib"/compress/*.c "$lib"/decompress/*.c)"
# shellcheck disable=SC2086  # word lists on purpose
clang-19 $flags $srcs -o z-native 2>build.err || { echo "FAIL native build: $(cat build.err)"; exit 1; }
# shellcheck disable=SC2086
"$bin/mnemo-cc" -g $flags $srcs -o z-mnemo 2>build.err ||
	{ echo "FAIL mnemo-cc build: $(cat build.err)"; exit 1; }

./z-native g 3145728 input >/dev/null || { echo "FAIL: no input"; exit 1; }
./z-native c 2 input native.zst >native.out || { echo "FAIL: native compression"; exit 1; }

# profiled NAME [mnemo run OPTIONS]: compresses with 2 threads under mnemo run, then checks.
profiled() {
	name=$1
	shift
	"$bin/mnemo" run "$@" -o "$name.yaml" -- ./z-mnemo c 2 input "$name.zst" >"$name.out" 2>"$name.err" ||
		bad "$name: exit status $?: $(head -c 400 "$name.err")"
	cmp -s "$name.out" native.out && ok "$name: output as native ($(cat "$name.out"))" ||
		bad "$name: output '$(cat "$name.out")', native '$(cat native.out)'"
	cmp -s "$name.zst" native.zst && ok "$name: compressed file byte-identical to native" ||
		bad "$name: compressed file differs from native: $(cmp "$name.zst" native.zst 2>&1)"
	./z-native d "$name.zst" "$name.back" >/dev/null 2>&1 && cmp -s "$name.back" input &&
		ok "$name: decompresses to the input" || bad "$name: round trip failed"
	[ -f "$name.yaml" ] || { bad "$name: no profile: $(head -c 400 "$name.err")"; return; }
	grep -q '^  count: 3$' "$name.yaml" && ok "$name: 3 threads (main and two compression threads)" ||
		bad "$name: threads: $(sed -n '/^threads:/,/^  list:/p' "$name.yaml" | tr '\n' ' ')"
	grep -qx 'complete: true' "$name.yaml" && ok "$name: complete" ||
		bad "$name: $(grep -E '^(complete|incomplete_reason):' "$name.yaml")"
}
profiled all
profiled dependence -m dependence
exit $failed
