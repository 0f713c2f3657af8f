#!/usr/bin/env bash
# Proves link-time specialization on the final binary: built for value-pattern, a function with a
# loop, a call and an allocation but no kept memory access has one queue write (movnti: its function
# entry, which value-pattern counts) and no call to any __mnemo_ entry point, and the binary
# interposes no malloc; built for a module set that uses function, loop and heap events, the same
# function has queue writes and the binary interposes malloc; built for rds-shape (`accesses:
# pointer`), a function with only integer loads and stores has no queue write and no __mnemo_ call,
# and one that stores a pointer has a queue write; built for dependence, whose modules take no
# allocation context, the binary has no call site and no __mnemo_ctx_* call.
# Usage: specialization.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
bin=$build/bin
work=$(mktemp -d /tmp/mnemo-spec-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
objdump=${OBJDUMP:-llvm-objdump-19}
fail() { echo "FAIL: $*" >&2; exit 1; }

# body FUNCTION BINARY: the disassembly of one function.
body() { "$objdump" -d --no-show-raw-insn --disassemble-symbols="$1" "$2"; }

# 1. value-pattern alone (loads, stores and function entries: no loop or heap event).
"$bin/mnemo-cc" -m value-pattern -O2 -g "$src/programs/spec_probe.c" -o "$work/vp"
# One record, its function entry: two queue writes, as the wire's records are all 16 bytes (its
# longest, `value`, has two words; specializer/spec.h).
n=$(body loop_only "$work/vp" | grep -c movnti || true)
[ "$n" -eq 2 ] || fail "value-pattern build: loop_only has $n queue writes, expected 2 (its function entry's 16-byte record)"
calls=$(body loop_only "$work/vp" | grep -c '__mnemo_' || true)
[ "$calls" -eq 0 ] || fail "value-pattern build: loop_only calls __mnemo_* $calls times, expected 0"
n=$(body store_only "$work/vp" | grep -c movnti || true)
[ "$n" -gt 0 ] || fail "value-pattern build: store_only has no queue write, expected the store event"
if nm "$work/vp" | grep -w 'T malloc' >/dev/null; then fail "value-pattern build interposes malloc; it uses no heap event"; fi
echo "value-pattern: loop_only 2 queue writes (function entry), store_only writes, no malloc interposition"

# 2. rds-shape alone: loads and stores of pointer values only (accesses: pointer).
"$bin/mnemo-cc" -m rds-shape -O2 -g "$src/programs/spec_probe.c" -o "$work/rds"
ints=$(body ints_only "$work/rds")
grep -q '<ints_only>:' <<<"$ints" || fail "rds-shape build: no function ints_only"
n=$(grep -c movnti <<<"$ints" || true)
[ "$n" -eq 0 ] || fail "rds-shape build: ints_only has $n queue writes, expected 0 (integer accesses only)"
calls=$(grep -c '__mnemo_' <<<"$ints" || true)
[ "$calls" -eq 0 ] || fail "rds-shape build: ints_only calls __mnemo_* $calls times, expected 0"
n=$(body ptr_store "$work/rds" | grep -c movnti || true)
[ "$n" -gt 0 ] || fail "rds-shape build: ptr_store has no queue write, expected the pointer store event"
MNEMO_OUTPUT="$work/rds.mnemo.yaml" "$work/rds" >/dev/null 2>"$work/rds.err" || fail "rds-shape build: the probe failed: $(cat "$work/rds.err")"
echo "rds-shape: ints_only 0 queue writes, ptr_store writes"

# 2b. Allocation contexts (abi.h, __mnemo_ctx_enter): only a build whose modules take heap_alloc's
# context has call sites and their enter/leave calls (wrap.c: main calls an xmalloc wrapper).
wrap=$src/../rds-shape/contexts/wrap.c
"$bin/mnemo-cc" -m rds-shape -O2 -g "$wrap" -o "$work/wrap-rds"
"$bin/mnemo-cc" -m dependence -O2 -g "$wrap" -o "$work/wrap-dep"
n=$(strings -a "$work/wrap-rds" | grep -c "^call	main	" || true)
[ "$n" -gt 0 ] || fail "rds-shape build of wrap.c: no call site of main in the site table"
n=$(strings -a "$work/wrap-dep" | grep -c "^call	" || true)
[ "$n" -eq 0 ] || fail "dependence build of wrap.c: $n call sites in the site table, expected none"
calls=$(body main "$work/wrap-dep" | grep -c '__mnemo_ctx' || true)
[ "$calls" -eq 0 ] || fail "dependence build of wrap.c: main calls __mnemo_ctx_* $calls times"
echo "allocation contexts: call sites for rds-shape, none for dependence"

# 3. every event (the by-hand flow of README, with a test-only module spec).
"$bin/mnemo-specialize" --catalogue "$build/share/mnemo/events.yaml" --modules-dir "$src/modules" \
	--modules all-events --backend "$bin/mnemo-backend" -o "$work/spec" >"$work/heap"
grep -qx 'heap=1' "$work/heap" || fail "all-events spec: specializer said $(cat "$work/heap"), expected heap=1"
clang-19 -O2 -flto -I"$build/include/mnemo" -c "$work/spec/callbacks.c" -o "$work/callbacks.o"
clang-19 -O2 -g -flto -fpass-plugin="$build/lib/mnemo/mnemo-pass.so" -c "$src/programs/spec_probe.c" -o "$work/probe.o"
clang-19 -O2 -flto -fuse-ld=lld -Wl,--load-pass-plugin="$build/lib/mnemo/mnemo-pass.so" "$work/probe.o" \
	"$work/callbacks.o" -Wl,--whole-archive "$build/lib/mnemo/libmnemo-rt.a" "$build/lib/mnemo/libmnemo-heap.a" \
	-Wl,--no-whole-archive -lpthread -ldl -o "$work/all"
n=$(body loop_only "$work/all" | grep -c movnti || true)
[ "$n" -gt 0 ] || fail "all-events build: loop_only has no queue write, expected function and loop events"
nm "$work/all" | grep -w 'T malloc' >/dev/null || fail "all-events build does not interpose malloc"
echo "all-events: loop_only has $n queue writes, malloc interposed"
echo "1 passed, 0 failed"
