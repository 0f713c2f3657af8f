#!/usr/bin/env bash
# The instrumented link against a plain LTO link of the same program (issue 23, "Link time"):
# Lua 5.3.5's interpreter, from the npm registry's lua-src (`npm pack`, else curl; fetched into a
# temporary folder, SHA-256 checked, never committed).
#
#   bench/linktime.sh [BUILD_DIR] [-r REPEATS]
#
# Compiles Lua's sources twice with the flags of its makefile (`make posix`: -O2 -DLUA_COMPAT_5_2
# -DLUA_USE_POSIX): plain LTO objects with clang-19 -O2 -flto, and Mnemo's with mnemo-cc -O2 -c
# (fat LTO objects with line tables, what `make CC=mnemo-cc` makes).  Then times, in turn,
# REPEATS times each (default 3), the two links of the interpreter:
#   plain:  clang-19 -O2 -flto -fuse-ld=lld -o lua PLAIN_OBJECTS -lm
#   mnemo:  mnemo-cc -O2 -o lua MNEMO_OBJECTS -lm       (the default modules)
# and prints the best wall time of each, their CPU time (user + system, of the same run), and the
# ratio of the wall times against the target of 2x.  Both interpreters must run a script alike.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(dirname "$here")/build
repeats=3
while [ $# -gt 0 ]; do
	case $1 in
	-r) repeats=$2; shift 2 ;;
	-h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench/linktime.sh: unknown option '$1'" >&2; exit 2 ;;
	*) build=$(cd "$1" && pwd); shift ;;
	esac
done
cc=$build/bin/mnemo-cc
[ -x "$cc" ] || { echo "bench/linktime.sh: $cc not found: build first" >&2; exit 2; }
version=5.3.5
sha256=0190b7ed390f92b1c88a65332098ae62a701fa6797189d35e416275acbc6528b   # lua-src-5.3.5.tgz
work=$(mktemp -d /tmp/mnemo-linktime.XXXXXX)
trap 'rm -rf "$work"' EXIT

# ---- Lua's sources ----
tgz=$work/lua-src-$version.tgz
if command -v npm >/dev/null &&
	(cd "$work" && npm pack --silent "lua-src@$version" >/dev/null 2>&1); then
	:
elif command -v curl >/dev/null; then
	curl -fsSL -o "$tgz" "https://registry.npmjs.org/lua-src/-/lua-src-$version.tgz" ||
		{ echo "bench/linktime.sh: cannot fetch lua-src@$version (npm pack, curl)" >&2; exit 1; }
else
	echo "bench/linktime.sh: neither npm nor curl to fetch lua-src@$version" >&2
	exit 1
fi
got=$(sha256sum "$tgz" | cut -d' ' -f1)
[ "$got" = "$sha256" ] ||
	{ echo "bench/linktime.sh: $tgz: SHA-256 $got, expected $sha256" >&2; exit 1; }
tar -xzf "$tgz" -C "$work"
src=$work/package/src
# The interpreter: every source but the compiler's main (luac.c).
srcs=$(printf '%s\n' "$src"/*.c | grep -v '/luac\.c$')
flags="-O2 -DLUA_COMPAT_5_2 -DLUA_USE_POSIX"

# ---- Objects, two at a time ----
mkdir -p "$work/plain" "$work/mnemo"
# compile_all DIR COMPILER...: every source into DIR/<name>.o.
compile_all() {
	local dir=$1 f
	shift
	for f in $srcs; do
		# shellcheck disable=SC2086  # $flags: words on purpose
		"$@" $flags -c -o "$dir/$(basename "$f" .c).o" "$f" 2>>"$work/compile.log" &
		[ "$(jobs -r | wc -l)" -lt 2 ] || wait -n
	done
	wait
}
compile_all "$work/plain" clang-19 -flto
compile_all "$work/mnemo" "$cc"
for f in $srcs; do
	b=$(basename "$f" .c).o
	if [ ! -f "$work/plain/$b" ] || [ ! -f "$work/mnemo/$b" ]; then
		echo "bench/linktime.sh: $b did not compile:" >&2
		cat "$work/compile.log" >&2
		exit 1
	fi
done

# ---- The links, in turn ----
# timed NAME CMD...: runs CMD; appends "NAME WALL CPU" (seconds) to $work/times.
timed() {
	local name=$1 t
	shift
	t=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>"$work/link.err"; } 2>&1 ) ||
		{ echo "bench/linktime.sh: $name link failed:" >&2; cat "$work/link.err" >&2; exit 1; }
	echo "$name $t" | awk '{ printf "%s %.2f %.2f\n", $1, $2, $3 + $4 }' >>"$work/times"
}
: >"$work/times"
for _ in $(seq "$repeats"); do
	timed plain clang-19 -O2 -flto -fuse-ld=lld -o "$work/lua.plain" "$work"/plain/*.o -lm
	timed mnemo "$cc" -O2 -o "$work/lua.mnemo" "$work"/mnemo/*.o -lm
done
printf 'local t = {} for i = 1, 100 do t[i] = i * i end print(#t, t[100])\n' >"$work/t.lua"
"$work/lua.plain" "$work/t.lua" >"$work/out.plain"
(cd "$work" && ./lua.mnemo t.lua >out.mnemo)
cmp -s "$work/out.plain" "$work/out.mnemo" ||
	{ echo "bench/linktime.sh: the two interpreters print different things" >&2; exit 1; }

# best NAME: "WALL CPU" of NAME's run with the least wall time.
best() { awk -v n="$1" '$1 == n' "$work/times" | sort -k2,2n | head -n 1 | cut -d' ' -f2-; }
read -r pw pc <<<"$(best plain)"
read -r mw mc <<<"$(best mnemo)"
ratio=$(echo "$mw / $pw" | bc -l)
verdict=FAIL
[ "$(echo "$ratio <= 2" | bc)" = 0 ] || verdict=PASS
echo "link time: Lua $version's interpreter ($(echo "$srcs" | wc -l) objects)," \
	"best of $repeats, in turn"
printf '  %-40s %7.2f s wall %7.2f s cpu\n' "plain: clang-19 -O2 -flto -fuse-ld=lld" "$pw" "$pc"
printf '  %-40s %7.2f s wall %7.2f s cpu\n' "mnemo: mnemo-cc -O2 (default modules)" "$mw" "$mc"
printf '  ratio: %.2fx wall, %.2fx cpu (target <= 2x wall): %s\n' "$ratio" \
	"$(echo "$mc / $pc" | bc -l)" "$verdict"
