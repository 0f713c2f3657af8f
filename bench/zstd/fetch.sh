#!/usr/bin/env bash
# Fetches Zstandard's library sources for the bench and tests/threads: deps/zstd/lib of the npm
# registry's zstd-napi package (zstd 1.5.7, BSD), by `npm pack` or curl; never committed, built at bench
# or test time with the driver bench/zstd/driver.c.  Its compression thread pool
# (lib/compress/zstdmt_compress.c, lib/common/pool.c) makes it the parallel compressor of issue 22.
#
#   bench/zstd/fetch.sh DIR     # leaves DIR/lib (zstd.h, common/, compress/, decompress/); prints DIR
#
# The package's version is pinned and its tarball's SHA-256 checked, so that every run builds the
# same program; a DIR that already holds it (DIR/.ok) is reused without the network.
set -euo pipefail
version=0.0.13      # zstd-napi 0.0.13 ships zstd 1.5.7
sha256=5b76defc67c808989c5f3920e14f662d6318b84b8d53ac3e94b99463d8d65e76
dir=$1
mkdir -p "$dir"
if [ "$(cat "$dir/.ok" 2>/dev/null)" != "$sha256" ] || [ ! -f "$dir/lib/zstd.h" ]; then
	tmp=$(mktemp -d /tmp/mnemo-zstd.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	# The registry's tarball, with npm when there is one, else straight from its URL (curl): the
	# SHA-256 below makes either the same bytes.
	if command -v npm >/dev/null; then
		(cd "$tmp" && npm pack --silent "zstd-napi@$version" >/dev/null)
	else
		curl -fsSL -o "$tmp/zstd-napi-$version.tgz" \
			"https://registry.npmjs.org/zstd-napi/-/zstd-napi-$version.tgz"
	fi || { echo "bench/zstd/fetch.sh: cannot fetch zstd-napi@$version from the npm registry" >&2; exit 1; }
	got=$(sha256sum "$tmp"/zstd-napi-*.tgz | cut -d' ' -f1)
	[ "$got" = "$sha256" ] ||
		{ echo "bench/zstd/fetch.sh: zstd-napi-$version.tgz: SHA-256 $got, expected $sha256" >&2; exit 1; }
	tar -xzf "$tmp"/zstd-napi-*.tgz -C "$tmp" package/deps/zstd/lib
	rm -rf "$dir/lib"
	mv "$tmp/package/deps/zstd/lib" "$dir/lib"
	echo "$sha256" >"$dir/.ok"
fi
echo "$dir"
