#!/bin/sh
# Lua 5.3.5 (npm lua-src@5.3.5: Lua's own source tree, its Makefiles included, whose src/Makefile
# sets `AR= ar rcu` and `RANLIB= ranlib`) built as its README says, `make linux`, once with
# CC=clang-19 and once with CC=mnemo-cc and nothing else: the default module set, GNU ar and
# ranlib.  Lua's own `make test` (lua -v), then the scripts beside this file (strings, tables,
# closures, coroutines, the collector, string.format, math; one that fails on purpose), run by both
# interpreters: same output, same exit status.  Each instrumented run's profile is complete and
# names sites in Lua's sources.
# Usage: lua.sh BUILD_DIR SOURCE_DIR
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rp_init lua "${1:?usage: lua.sh BUILD_DIR SOURCE_DIR}"

tgz=$(rp_fetch lua-src@5.3.5 3ae7df9eca87ebe906d091648fda1c1ad1922b1e) || exit $?
for d in native mnemo; do
	mkdir -p "$work/$d"
	tar xzf "$tgz" -C "$work/$d" --strip-components=1 || { echo "FAIL: cannot unpack $tgz"; exit 1; }
done

make -C "$work/native" -j2 linux CC=clang-19 >"$work/native.log" 2>&1 || rp_die "native build" "$work/native.log"
if make -C "$work/mnemo" -j2 linux CC=mnemo-cc >"$work/mnemo.log" 2>&1; then
	rp_ok "make linux CC=mnemo-cc"
else
	rp_die "make linux CC=mnemo-cc" "$work/mnemo.log"
fi
rp_clean_log "make linux CC=mnemo-cc: no archiver or linker complaint" "$work/mnemo.log"

rp_compare make-test "$work/native" "$work/mnemo" 'make test'
# The profile of a build without -m: its backend runs the default modules, those whose spec says
# `default: true` (no measurement module).
defaults=$(mnemo-specialize --catalogue "$rp_build/share/mnemo/events.yaml" \
	--modules-dir "$rp_build/share/mnemo/modules" --defaults | tr , +)
src_re='lvm\.c|ltable\.c|lgc\.c|lstring\.c|lapi\.c|ldo\.c|lparser\.c|llex\.c'
for script in "$here"/lua/*.lua; do
	t=$(basename "$script" .lua)
	[ "$t" = exit ] && rp_want_status=1 || rp_want_status=0
	rp_compare "$t.lua" "$work/native" "$work/mnemo" "src/lua '$script'"
	set -- "$work/mnemo/profiles/$t.lua-"*.mnemo.yaml
	rp_check_profile "$t.lua: profile" "$1" "$src_re"
done
if [ -n "$defaults" ] && grep -qx "  $defaults: {.*" "$1"; then
	rp_ok "the default modules ran: $defaults"
else
	rp_bad "the default modules ran" "expected '$defaults'; $1's backend: $(sed -n '/^backend:/{n;p}' "$1")"
fi
rp_report "mnemo report (tables.lua)" "$(ls "$work/mnemo/profiles/tables.lua-"*.mnemo.yaml)" "$src_re"
rp_finish
