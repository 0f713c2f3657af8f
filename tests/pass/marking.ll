; Which functions are instrumented.  mnemo-mark (the compile-time half) tags
; every definition with "mnemo-instrument"; mnemo-instrument (the link-time
; half) instruments only tagged definitions, never the profiler's own
; functions; a module without a tagged function is left unchanged (no site
; table); an instrumented module is never instrumented twice.
;
; RUN: %opt -passes=mnemo-mark -S %s | FileCheck --check-prefix=MARK %s
; RUN: %opt -passes=mnemo-mark,mnemo-instrument -S %s \
; RUN:   | FileCheck --check-prefix=BOTH %s
; RUN: %opt -passes=mnemo-instrument -S %s | FileCheck --check-prefix=NONE %s
; RUN: %opt -passes=mnemo-mark,mnemo-instrument -S %s -o %t.once.ll
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all -S %t.once.ll \
; RUN:   -o %t.twice.ll
; RUN: diff <(sed 1d %t.once.ll) <(sed 1d %t.twice.ll)

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; MARK: define i32 @user(ptr %p) #[[ATTR:[0-9]+]]
; MARK: define void @__mnemo_load(i32 %site, ptr %a, i64 %v, i32 %s) #[[ATTR]]
; MARK: declare void @external()
; MARK: attributes #[[ATTR]] = { nounwind "mnemo-instrument" }

; BOTH-LABEL: define i32 @user(
; BOTH-NEXT: call void @__mnemo_func_entry(i32 1)
; BOTH-NEXT: %v = load i32, ptr %p
; BOTH:      call void @__mnemo_load(i32 2, ptr %p,
; BOTH-LABEL: define void @__mnemo_load(
; BOTH-NEXT: ret void
; BOTH: @__mnemo_register_globals()

; NONE-NOT: __mnemo_func_entry
; NONE-NOT: __mnemo_site_table
; NONE-NOT: __mnemo_register_globals

define i32 @user(ptr %p) nounwind {
  %v = load i32, ptr %p
  ret i32 %v
}

; A callback defined in the same module (as after the LTO merge).
define void @__mnemo_load(i32 %site, ptr %a, i64 %v, i32 %s) nounwind {
  ret void
}

declare void @external()
