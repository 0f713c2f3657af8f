; Loads and stores of every kind: an event after each load, before each store,
; with the value's bits zero-extended or truncated to 64 and the store size.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-instrument-stack=false -S %s \
; RUN:   | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@__mnemo_private = global i32 0

; CHECK-LABEL: define i32 @scalar(
; CHECK:      %v = load i32, ptr %p
; CHECK-NEXT: [[Z:%.*]] = zext i32 %v to i64
; CHECK-NEXT: call void @__mnemo_load(i32 2, ptr %p, i64 [[Z]], i32 4)
; CHECK:      [[S:%.*]] = zext i8 %b to i64
; CHECK-NEXT: call void @__mnemo_store(i32 3, ptr %q, i64 [[S]], i32 1)
; CHECK-NEXT: store i8 %b, ptr %q
; CHECK:      call void @__mnemo_store(i32 4, ptr %q, i64 1, i32 1)
; CHECK-NEXT: store i1 true, ptr %q
define i32 @scalar(ptr %p, ptr %q, i8 %b) {
  %v = load i32, ptr %p
  store i8 %b, ptr %q
  store i1 true, ptr %q
  ret i32 %v
}

; Floating point values are passed as their bits.
; CHECK-LABEL: define void @floats(
; CHECK:      %f = load float, ptr %p
; CHECK-NEXT: [[B:%.*]] = bitcast float %f to i32
; CHECK-NEXT: [[Z:%.*]] = zext i32 [[B]] to i64
; CHECK-NEXT: call void @__mnemo_load(i32 6, ptr %p, i64 [[Z]], i32 4)
; CHECK:      [[B:%.*]] = bitcast double %d to i64
; CHECK-NEXT: call void @__mnemo_store(i32 7, ptr %p, i64 [[B]], i32 8)
; CHECK-NEXT: store double %d
; CHECK:      %x = load x86_fp80, ptr %p
; CHECK-NEXT: [[B:%.*]] = bitcast x86_fp80 %x to i80
; CHECK-NEXT: [[T:%.*]] = trunc i80 [[B]] to i64
; CHECK-NEXT: call void @__mnemo_load(i32 8, ptr %p, i64 [[T]], i32 10)
define void @floats(ptr %p, double %d) {
  %f = load float, ptr %p
  store double %d, ptr %p
  %x = load x86_fp80, ptr %p
  ret void
}

; Vectors and wide integers: the low 64 bits.
; CHECK-LABEL: define void @wide(
; CHECK:      %v = load <4 x i32>, ptr %p
; CHECK-NEXT: [[B:%.*]] = bitcast <4 x i32> %v to i128
; CHECK-NEXT: [[T:%.*]] = trunc i128 [[B]] to i64
; CHECK-NEXT: call void @__mnemo_load(i32 10, ptr %p, i64 [[T]], i32 16)
; CHECK:      [[B:%.*]] = bitcast <2 x float> %w to i64
; CHECK-NEXT: call void @__mnemo_store(i32 11, ptr %p, i64 [[B]], i32 8)
; CHECK:      %i = load i128, ptr %p
; CHECK-NEXT: [[T:%.*]] = trunc i128 %i to i64
; CHECK-NEXT: call void @__mnemo_load(i32 12, ptr %p, i64 [[T]], i32 16)
; CHECK:      %m = load <4 x i1>, ptr %p
; CHECK-NEXT: [[B:%.*]] = bitcast <4 x i1> %m to i4
; CHECK-NEXT: [[Z:%.*]] = zext i4 [[B]] to i64
; CHECK-NEXT: call void @__mnemo_load(i32 13, ptr %p, i64 [[Z]], i32 1)
; CHECK:      %vp = load <2 x ptr>, ptr %p
; CHECK-NEXT: [[I:%.*]] = ptrtoint <2 x ptr> %vp to <2 x i64>
; CHECK-NEXT: [[B:%.*]] = bitcast <2 x i64> [[I]] to i128
; CHECK-NEXT: [[T:%.*]] = trunc i128 [[B]] to i64
; CHECK-NEXT: call void @__mnemo_load(i32 14, ptr %p, i64 [[T]], i32 16)
define void @wide(ptr %p, <2 x float> %w) {
  %v = load <4 x i32>, ptr %p
  store <2 x float> %w, ptr %p
  %i = load i128, ptr %p
  %m = load <4 x i1>, ptr %p
  %vp = load <2 x ptr>, ptr %p
  ret void
}

; A loaded pointer is a load and a pointer creation (type 1), two sites.  Loads
; and stores of a pointer value call the _ptr entry points (pointer.ll).
; CHECK-LABEL: define ptr @pointer(
; CHECK:      %l = load ptr, ptr %p
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr %l to i64
; CHECK-NEXT: call void @__mnemo_load_ptr(i32 16, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: call void @__mnemo_pointer_create(i32 17, ptr %l, i32 1)
; CHECK:      [[I:%.*]] = ptrtoint ptr %l to i64
; CHECK-NEXT: call void @__mnemo_store_ptr(i32 18, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: store ptr %l, ptr %p
define ptr @pointer(ptr %p) {
  %l = load ptr, ptr %p
  store ptr %l, ptr %p
  ret ptr %l
}

; Aggregates: value 0, full size.  Volatile and atomic accesses as any other.
; CHECK-LABEL: define void @other(
; CHECK:      %s = load { i32, i64 }, ptr %p
; CHECK-NEXT: call void @__mnemo_load(i32 20, ptr %p, i64 0, i32 16)
; CHECK:      %v = load volatile i16, ptr %p
; CHECK-NEXT: [[Z:%.*]] = zext i16 %v to i64
; CHECK-NEXT: call void @__mnemo_load(i32 21, ptr %p, i64 [[Z]], i32 2)
; CHECK:      call void @__mnemo_store(i32 22, ptr %p, i64 7, i32 8)
; CHECK-NEXT: call void @__mnemo_release(ptr %p)
; CHECK-NEXT: store atomic i64 7, ptr %p seq_cst
; CHECK:      %a = load atomic i32, ptr %p acquire
; CHECK-NEXT: call void @__mnemo_acquire(ptr %p)
; CHECK-NEXT: [[Z:%.*]] = zext i32 %a to i64
; CHECK-NEXT: call void @__mnemo_load(i32 23, ptr %p, i64 [[Z]], i32 4)
define void @other(ptr %p) {
  %s = load { i32, i64 }, ptr %p
  %v = load volatile i16, ptr %p
  store atomic i64 7, ptr %p seq_cst, align 8
  %a = load atomic i32, ptr %p acquire, align 4
  ret void
}

; Not instrumented: other address spaces, the profiler's own globals.  A
; loaded pointer into another address space is a load, not a pointer creation.
; CHECK-LABEL: define void @skipped(
; CHECK-NEXT:  %a = load i32, ptr addrspace(256) %gs
; CHECK-NEXT:  store i32 %a, ptr @__mnemo_private
; CHECK-NEXT:  %f = load ptr addrspace(257), ptr %p
; CHECK-NEXT:  [[I:%.*]] = ptrtoint ptr addrspace(257) %f to i64
; CHECK-NEXT:  call void @__mnemo_load_ptr(i32 {{[0-9]+}}, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT:  ret void
define void @skipped(ptr addrspace(256) %gs, ptr %p) {
  %a = load i32, ptr addrspace(256) %gs
  store i32 %a, ptr @__mnemo_private
  %f = load ptr addrspace(257), ptr %p
  ret void
}
