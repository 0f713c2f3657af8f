; Loads and stores whose value is a (scalar) pointer call __mnemo_load_ptr and
; __mnemo_store_ptr; every other access calls __mnemo_load and __mnemo_store
; (abi.h), so that a build whose modules all declare `accesses: pointer` can
; leave the plain ones empty.  Atomic loads and stores, atomicrmw xchg and
; cmpxchg of a pointer take the _ptr ones for both their events; integers,
; floats, vectors (of pointers too) and memory intrinsics the plain ones.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-instrument-pointers=false \
; RUN:   -S %s | FileCheck %s
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-instrument-pointers=false \
; RUN:   -S %s | FileCheck --check-prefix=PLAIN %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK-LABEL: define void @ptr_access(
; CHECK:      %l = load ptr, ptr %p
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr %l to i64
; CHECK-NEXT: call void @__mnemo_load_ptr(i32 2, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr %l to i64
; CHECK-NEXT: call void @__mnemo_store_ptr(i32 3, ptr %q, i64 [[I]], i32 8)
; CHECK-NEXT: store ptr %l, ptr %q
; CHECK-NEXT: call void @__mnemo_store_ptr(i32 4, ptr %q, i64 0, i32 8)
; CHECK-NEXT: store ptr null, ptr %q
define void @ptr_access(ptr %p, ptr %q) {
  %l = load ptr, ptr %p
  store ptr %l, ptr %q
  store ptr null, ptr %q
  ret void
}

; CHECK-LABEL: define void @scalars(
; CHECK:      %i = load i64, ptr %p
; CHECK-NEXT: call void @__mnemo_load(i32 6, ptr %p, i64 %i, i32 8)
; CHECK-NEXT: %d = load double, ptr %p
; CHECK-NEXT: [[B:%.*]] = bitcast double %d to i64
; CHECK-NEXT: call void @__mnemo_load(i32 7, ptr %p, i64 [[B]], i32 8)
; CHECK-NEXT: call void @__mnemo_store(i32 8, ptr %p, i64 %i, i32 8)
; CHECK-NEXT: store i64 %i, ptr %p
; CHECK-NEXT: [[B:%.*]] = bitcast double %d to i64
; CHECK-NEXT: call void @__mnemo_store(i32 9, ptr %p, i64 [[B]], i32 8)
; CHECK-NEXT: store double %d, ptr %p
define void @scalars(ptr %p) {
  %i = load i64, ptr %p
  %d = load double, ptr %p
  store i64 %i, ptr %p
  store double %d, ptr %p
  ret void
}

; CHECK-LABEL: define void @atomics(
; CHECK:      %a = load atomic ptr, ptr %p acquire
; CHECK-NEXT: call void @__mnemo_acquire(ptr %p)
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr %a to i64
; CHECK-NEXT: call void @__mnemo_load_ptr(i32 11, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr %q to i64
; CHECK-NEXT: call void @__mnemo_store_ptr(i32 12, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: call void @__mnemo_release(ptr %p)
; CHECK-NEXT: store atomic ptr %q, ptr %p release
; CHECK-NEXT: %x = atomicrmw xchg ptr %p, ptr %q seq_cst
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr %x to i64
; CHECK-NEXT: call void @__mnemo_load_ptr(i32 13, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr %q to i64
; CHECK-NEXT: call void @__mnemo_store_ptr(i32 14, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: call void @__mnemo_release(ptr %p)
; CHECK-NEXT: call void @__mnemo_acquire(ptr %p)
; CHECK-NEXT: %c = cmpxchg ptr %p, ptr %e, ptr %q seq_cst seq_cst
; CHECK-NEXT: [[OLD:%.*]] = extractvalue { ptr, i1 } %c, 0
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr [[OLD]] to i64
; CHECK-NEXT: call void @__mnemo_load_ptr(i32 15, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: [[OK:%.*]] = extractvalue { ptr, i1 } %c, 1
; CHECK-NEXT: br i1 [[OK]], label %[[THEN:.*]], label %[[TAIL:.*]]
; CHECK:      [[THEN]]:
; CHECK-NEXT: [[I:%.*]] = ptrtoint ptr %q to i64
; CHECK-NEXT: call void @__mnemo_store_ptr(i32 16, ptr %p, i64 [[I]], i32 8)
; CHECK-NEXT: br label %[[TAIL]]
; CHECK:      [[TAIL]]:
; CHECK-NEXT: call void @__mnemo_release(ptr %p)
; CHECK-NEXT: call void @__mnemo_acquire(ptr %p)
; CHECK-NEXT: %n = atomicrmw xchg ptr %p, i64 7 monotonic
; CHECK-NEXT: call void @__mnemo_load(i32 17, ptr %p, i64 %n, i32 8)
; CHECK-NEXT: call void @__mnemo_store(i32 18, ptr %p, i64 7, i32 8)
define void @atomics(ptr %p, ptr %q, ptr %e) {
  %a = load atomic ptr, ptr %p acquire, align 8
  store atomic ptr %q, ptr %p release, align 8
  %x = atomicrmw xchg ptr %p, ptr %q seq_cst
  %c = cmpxchg ptr %p, ptr %e, ptr %q seq_cst seq_cst
  %n = atomicrmw xchg ptr %p, i64 7 monotonic
  ret void
}

; A vector of pointers, a memcpy of pointers and a memset: the plain ones.
; CHECK-LABEL: define void @not_scalar_pointers(
; CHECK:      %v = load <2 x ptr>, ptr %p
; CHECK:      call void @__mnemo_load(i32 20, ptr %p, i64 {{%.*}}, i32 16)
; CHECK:      call void @__mnemo_store(i32 21, ptr %q, i64 {{%.*}}, i32 16)
; CHECK-NEXT: store <2 x ptr> %v, ptr %q
; CHECK-NEXT: call void @__mnemo_load(i32 22, ptr %p, i64 0, i32 16)
; CHECK-NEXT: call void @__mnemo_store(i32 23, ptr %q, i64 0, i32 16)
; CHECK-NEXT: call void @llvm.memcpy
; CHECK-NEXT: call void @__mnemo_store(i32 24, ptr %q, i64 0, i32 8)
; CHECK-NEXT: call void @llvm.memset
define void @not_scalar_pointers(ptr %p, ptr %q) {
  %v = load <2 x ptr>, ptr %p
  store <2 x ptr> %v, ptr %q
  call void @llvm.memcpy.p0.p0.i64(ptr %q, ptr %p, i64 16, i1 false)
  call void @llvm.memset.p0.i64(ptr %q, i8 0, i64 8, i1 false)
  ret void
}

; The plain entry points are never called for a scalar pointer, and the _ptr
; ones only for those.
; PLAIN-LABEL: define void @ptr_access(
; PLAIN-NOT:   call void @__mnemo_load(
; PLAIN-NOT:   call void @__mnemo_store(
; PLAIN-LABEL: define void @scalars(
; PLAIN-NOT:   _ptr(
; PLAIN-LABEL: define void @atomics(
; PLAIN-LABEL: define void @not_scalar_pointers(
; PLAIN-NOT:   _ptr(
; PLAIN:       declare void @__mnemo_load_ptr(i32, ptr, i64, i32)
; PLAIN:       declare void @__mnemo_store_ptr(i32, ptr, i64, i32)

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
