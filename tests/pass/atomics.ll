; atomicrmw and cmpxchg: a load event (the old value) and then a store event
; (the value written), both after the instruction; a cmpxchg stores only on
; success.  A loaded pointer is also a pointer creation.  With release or
; acquire ordering, __mnemo_release and __mnemo_acquire come after both events.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK-LABEL: define i32 @rmw_add(
; CHECK:      %old = atomicrmw add ptr %p, i32 %v seq_cst
; CHECK-NEXT: [[Z:%.*]] = zext i32 %old to i64
; CHECK-NEXT: call void @__mnemo_load(i32 2, ptr %p, i64 [[Z]], i32 4)
; CHECK-NEXT: [[NEW:%.*]] = add i32 %old, %v
; CHECK-NEXT: [[Z:%.*]] = zext i32 [[NEW]] to i64
; CHECK-NEXT: call void @__mnemo_store(i32 3, ptr %p, i64 [[Z]], i32 4)
; CHECK-NEXT: call void @__mnemo_release(ptr %p)
; CHECK-NEXT: call void @__mnemo_acquire(ptr %p)
; CHECK-NEXT: ret i32 %old
define i32 @rmw_add(ptr %p, i32 %v) {
  %old = atomicrmw add ptr %p, i32 %v seq_cst
  ret i32 %old
}

; CHECK-LABEL: define i64 @rmw_xchg(
; CHECK:      %old = atomicrmw xchg ptr %p, i64 %v acquire
; CHECK-NEXT: call void @__mnemo_load(i32 5, ptr %p, i64 %old, i32 8)
; CHECK-NEXT: call void @__mnemo_store(i32 6, ptr %p, i64 %v, i32 8)
; CHECK-NEXT: call void @__mnemo_acquire(ptr %p)
define i64 @rmw_xchg(ptr %p, i64 %v) {
  %old = atomicrmw xchg ptr %p, i64 %v acquire
  ret i64 %old
}

; CHECK-LABEL: define ptr @rmw_ptr(
; CHECK:      %old = atomicrmw xchg ptr %p, ptr %q seq_cst
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr %old to i64
; CHECK-NEXT: call void @__mnemo_load_ptr(i32 8, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: call void @__mnemo_pointer_create(i32 10, ptr %old, i32 1)
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr %q to i64
; CHECK-NEXT: call void @__mnemo_store_ptr(i32 9, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: call void @__mnemo_release(ptr %p)
; CHECK-NEXT: call void @__mnemo_acquire(ptr %p)
define ptr @rmw_ptr(ptr %p, ptr %q) {
  %old = atomicrmw xchg ptr %p, ptr %q seq_cst
  ret ptr %old
}

; CHECK-LABEL: define float @rmw_fadd(
; CHECK:      %old = atomicrmw fadd ptr %p, float %v monotonic
; CHECK:      call void @__mnemo_load(i32 12, ptr %p, i64 {{%.*}}, i32 4)
; CHECK-NEXT: [[NEW:%.*]] = fadd float %old, %v
; CHECK-NEXT: [[B:%.*]] = bitcast float [[NEW]] to i32
; CHECK-NEXT: [[Z:%.*]] = zext i32 [[B]] to i64
; CHECK-NEXT: call void @__mnemo_store(i32 13, ptr %p, i64 [[Z]], i32 4)
define float @rmw_fadd(ptr %p, float %v) {
  %old = atomicrmw fadd ptr %p, float %v monotonic
  ret float %old
}

; CHECK-LABEL: define i1 @cas(
; CHECK:      %r = cmpxchg ptr %p, i32 %e, i32 %n seq_cst seq_cst
; CHECK-NEXT: [[OLD:%.*]] = extractvalue { i32, i1 } %r, 0
; CHECK-NEXT: [[Z:%.*]] = zext i32 [[OLD]] to i64
; CHECK-NEXT: call void @__mnemo_load(i32 15, ptr %p, i64 [[Z]], i32 4)
; CHECK-NEXT: [[OK:%.*]] = extractvalue { i32, i1 } %r, 1
; CHECK-NEXT: br i1 [[OK]], label %[[THEN:.*]], label %[[TAIL:.*]]
; CHECK:      [[THEN]]:
; CHECK-NEXT: [[Z:%.*]] = zext i32 %n to i64
; CHECK-NEXT: call void @__mnemo_store(i32 16, ptr %p, i64 [[Z]], i32 4)
; CHECK-NEXT: br label %[[TAIL]]
; CHECK:      [[TAIL]]:
; CHECK-NEXT: call void @__mnemo_release(ptr %p)
; CHECK-NEXT: call void @__mnemo_acquire(ptr %p)
; CHECK-NEXT: %ok = extractvalue { i32, i1 } %r, 1
define i1 @cas(ptr %p, i32 %e, i32 %n) {
  %r = cmpxchg ptr %p, i32 %e, i32 %n seq_cst seq_cst
  %ok = extractvalue { i32, i1 } %r, 1
  ret i1 %ok
}
