#!/usr/bin/env bash
# Fetches SQLite's amalgamation for the bench: deps/sqlite3/sqlite3.{c,h} of the npm registry's
# better-sqlite3 package, by `npm pack` (never committed: the bench builds it at bench time).
#
#   bench/sqlite/fetch.sh DIR     # leaves DIR/sqlite3.c and DIR/sqlite3.h; prints DIR
#
# The version is pinned and sqlite3.c's SHA-256 checked, so that every run measures the same
# program; a DIR that already holds the right file is reused without the network.
set -euo pipefail
version=12.11.1      # better-sqlite3 12.11.1 ships SQLite 3.53.2
sha256=60d2f39a3726cd6b9021da6f4e868608d66fbb6528a9f513dc8ffcc640493422
dir=$1
mkdir -p "$dir"
ok() { [ -f "$dir/sqlite3.c" ] && [ -f "$dir/sqlite3.h" ] &&
	[ "$(sha256sum "$dir/sqlite3.c" | cut -d' ' -f1)" = "$sha256" ]; }
if ! ok; then
	command -v npm >/dev/null || { echo "bench/sqlite/fetch.sh: npm not found (apt-get install npm)" >&2; exit 1; }
	tmp=$(mktemp -d /tmp/mnemo-sqlite.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && npm pack --silent "better-sqlite3@$version" >/dev/null) ||
		{ echo "bench/sqlite/fetch.sh: npm pack better-sqlite3@$version failed" >&2; exit 1; }
	tar -xzf "$tmp"/better-sqlite3-*.tgz -C "$tmp" package/deps/sqlite3/sqlite3.c package/deps/sqlite3/sqlite3.h
	mv "$tmp/package/deps/sqlite3/sqlite3.c" "$tmp/package/deps/sqlite3/sqlite3.h" "$dir/"
	ok || { echo "bench/sqlite/fetch.sh: $dir/sqlite3.c: SHA-256 $(sha256sum "$dir/sqlite3.c" | cut -d' ' -f1), expected $sha256" >&2; exit 1; }
fi
echo "$dir"
