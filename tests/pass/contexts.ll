; Allocation contexts (runtime/abi.h, __mnemo_ctx_enter): with call sites on,
; each call whose callee may allocate (a defined function that calls malloc,
; an indirect call, or calls such a function, transitively) is wrapped in
; enter(site) / leave(saved), its site of kind `call` numbered after every
; other site; not the heap call itself, a call of a function that cannot
; allocate, nor a direct self-recursive call.  Off (the default without
; __mnemo_alloc_contexts): nothing of it.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-instrument-memory=false \
; RUN:   -mnemo-instrument-pointers=false -mnemo-alloc-contexts=1 -S %s | FileCheck %s
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-instrument-memory=false \
; RUN:   -mnemo-instrument-pointers=false -mnemo-alloc-contexts=1 -S %s | %sitetable \
; RUN:   | FileCheck --check-prefix=TABLE %s
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-instrument-memory=false \
; RUN:   -mnemo-instrument-pointers=false -S %s | FileCheck --check-prefix=OFF %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK-LABEL: define ptr @xmalloc(
; CHECK-NEXT: call void @__mnemo_heap_site(i32 2)
; CHECK-NEXT: %p = call ptr @malloc(i64 %n)
; CHECK-NOT: __mnemo_ctx
; CHECK: ret ptr %p
define ptr @xmalloc(i64 %n) {
  %p = call ptr @malloc(i64 %n)
  ret ptr %p
}

; CHECK-LABEL: define i64 @pure(
; CHECK-NOT: __mnemo_ctx
; CHECK: ret i64
define i64 @pure(i64 %x) {
  %y = mul i64 %x, 3
  ret i64 %y
}

; Direct recursion: only the call of xmalloc is wrapped.
; CHECK-LABEL: define ptr @build(
; CHECK: [[S:%.*]] = call i64 @__mnemo_ctx_enter(i32 6)
; CHECK-NEXT: %n = call ptr @xmalloc(i64 16)
; CHECK-NEXT: call void @__mnemo_ctx_leave(i64 [[S]])
; CHECK-NOT: __mnemo_ctx
; CHECK: %r = call ptr @build(i32 %d1)
; CHECK-NOT: __mnemo_ctx
; CHECK: ret ptr
define ptr @build(i32 %d) {
entry:
  %n = call ptr @xmalloc(i64 16)
  %z = icmp eq i32 %d, 0
  br i1 %z, label %done, label %more
more:
  %d1 = sub i32 %d, 1
  %r = call ptr @build(i32 %d1)
  store ptr %r, ptr %n
  br label %done
done:
  ret ptr %n
}

; CHECK-LABEL: define void @user(
; CHECK: [[A:%.*]] = call i64 @__mnemo_ctx_enter(i32 7)
; CHECK-NEXT: %t = call ptr @build(i32 3)
; CHECK-NEXT: call void @__mnemo_ctx_leave(i64 [[A]])
; CHECK-NEXT: %q = call i64 @pure(i64 1)
; CHECK-NEXT: [[B:%.*]] = call i64 @__mnemo_ctx_enter(i32 8)
; CHECK-NEXT: call void %fp()
; CHECK-NEXT: call void @__mnemo_ctx_leave(i64 [[B]])
; CHECK-NEXT: ret void
define void @user(ptr %fp) {
  %t = call ptr @build(i32 3)
  %q = call i64 @pure(i64 1)
  call void %fp()
  ret void
}

declare ptr @malloc(i64)

; TABLE: 6|call|build||0|0|xmalloc|0
; TABLE-NEXT: 7|call|user||0|0|build|0
; TABLE-NEXT: 8|call|user||0|0||0
; TABLE-NEXT: count=8 abi=7

; OFF-NOT: call i64 @__mnemo_ctx_enter
; OFF-NOT: call void @__mnemo_ctx_leave
; OFF-NOT: \0Acall\09
