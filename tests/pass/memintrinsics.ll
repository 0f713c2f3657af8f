; memcpy/memmove: a load event for the source and a store event for the
; destination, each with its own site, value 0, size the length saturated at
; 2^24-1.  memset: a store event whose value is the fill byte.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -S %s | FileCheck %s
; The site table names the load and store sites of a memory intrinsic after
; its base operation (value-pattern's memops table tells them apart so):
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -S %s | %sitetable \
; RUN:   | FileCheck %s --check-prefix=TABLE
; TABLE:      2|load|copy_const||0|0|memcpy|0|0|
; TABLE-NEXT: 3|store|copy_const||0|0|memcpy|0|0|
; TABLE-NEXT: 4|load|copy_const||0|0|memmove|0|0|
; TABLE-NEXT: 5|store|copy_const||0|0|memmove|0|0|
; TABLE-NEXT: 6|function|copy_var||0|0||0|0|
; TABLE-NEXT: 7|load|copy_var||0|0|memcpy|0|0|
; TABLE-NEXT: 8|store|copy_var||0|0|memcpy|0|0|
; TABLE-NEXT: 9|load|copy_var||0|0|memcpy|0|0|
; TABLE-NEXT: 10|store|copy_var||0|0|memcpy|0|0|
; TABLE-NEXT: 11|function|fill||0|0||0|0|
; TABLE-NEXT: 12|store|fill||0|0|memset|0|0|
; TABLE-NEXT: 13|store|fill||0|0|memset|0|0|
; TABLE-NEXT: 14|function|atomic||0|0||0|0|
; TABLE-NEXT: 15|load|atomic||0|0|memcpy|0|0|
; TABLE-NEXT: 16|store|atomic||0|0|memcpy|0|0|
; TABLE-NEXT: 17|load|atomic||0|0|memmove|0|0|
; TABLE-NEXT: 18|store|atomic||0|0|memmove|0|0|
; TABLE-NEXT: 19|store|atomic||0|0|memset|0|0|
; TABLE-NEXT: count=19

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK-LABEL: define void @copy_const(
; CHECK-NEXT: call void @__mnemo_load(i32 2, ptr %s, i64 0, i32 64)
; CHECK-NEXT: call void @__mnemo_store(i32 3, ptr %d, i64 0, i32 64)
; CHECK-NEXT: call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 64, i1 false)
; CHECK-NEXT: call void @__mnemo_load(i32 4, ptr %s, i64 0, i32 16777215)
; CHECK-NEXT: call void @__mnemo_store(i32 5, ptr %d, i64 0, i32 16777215)
; CHECK-NEXT: call void @llvm.memmove.p0.p0.i64(ptr %d, ptr %s, i64 100000000, i1 false)
define void @copy_const(ptr %d, ptr %s) {
  call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 64, i1 false)
  call void @llvm.memmove.p0.p0.i64(ptr %d, ptr %s, i64 100000000, i1 false)
  ret void
}

; CHECK-LABEL: define void @copy_var(
; CHECK-NEXT: [[BIG:%.*]] = icmp ugt i64 %n, 16777215
; CHECK-NEXT: [[SAT:%.*]] = select i1 [[BIG]], i64 16777215, i64 %n
; CHECK-NEXT: [[LEN:%.*]] = trunc i64 [[SAT]] to i32
; CHECK-NEXT: call void @__mnemo_load(i32 7, ptr %s, i64 0, i32 [[LEN]])
; CHECK-NEXT: call void @__mnemo_store(i32 8, ptr %d, i64 0, i32 [[LEN]])
; CHECK-NEXT: call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 %n, i1 false)
; CHECK-NEXT: [[N64:%.*]] = zext i32 %m to i64
; CHECK-NEXT: [[BIG:%.*]] = icmp ugt i64 [[N64]], 16777215
; CHECK-NEXT: [[SAT:%.*]] = select i1 [[BIG]], i64 16777215, i64 [[N64]]
; CHECK-NEXT: [[LEN:%.*]] = trunc i64 [[SAT]] to i32
; CHECK-NEXT: call void @__mnemo_load(i32 9, ptr %s, i64 0, i32 [[LEN]])
; CHECK-NEXT: call void @__mnemo_store(i32 10, ptr %d, i64 0, i32 [[LEN]])
; CHECK-NEXT: call void @llvm.memcpy.inline.p0.p0.i32(
define void @copy_var(ptr %d, ptr %s, i64 %n, i32 %m) {
  call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 %n, i1 false)
  call void @llvm.memcpy.inline.p0.p0.i32(ptr %d, ptr %s, i32 %m, i1 false)
  ret void
}

; CHECK-LABEL: define void @fill(
; CHECK-NEXT: [[V:%.*]] = zext i8 %c to i64
; CHECK-NEXT: call void @__mnemo_store(i32 12, ptr %d, i64 [[V]], i32 32)
; CHECK-NEXT: call void @llvm.memset.p0.i64(ptr %d, i8 %c, i64 32, i1 false)
; CHECK:      select i1 {{%.*}}, i64 16777215, i64 %n
; CHECK:      call void @__mnemo_store(i32 13, ptr %d, i64 255, i32 {{%.*}})
; CHECK-NEXT: call void @llvm.memset.p0.i64(ptr %d, i8 -1, i64 %n, i1 true)
define void @fill(ptr %d, i8 %c, i64 %n) {
  call void @llvm.memset.p0.i64(ptr %d, i8 %c, i64 32, i1 false)
  call void @llvm.memset.p0.i64(ptr %d, i8 -1, i64 %n, i1 true)
  ret void
}

; The element-atomic forms, named after their base operation too.
define void @atomic(ptr %d, ptr %s, i64 %n) {
  call void @llvm.memcpy.element.unordered.atomic.p0.p0.i64(ptr align 4 %d, ptr align 4 %s, i64 %n, i32 4)
  call void @llvm.memmove.element.unordered.atomic.p0.p0.i64(ptr align 4 %d, ptr align 4 %s, i64 %n, i32 4)
  call void @llvm.memset.element.unordered.atomic.p0.i64(ptr align 4 %d, i8 0, i64 %n, i32 4)
  ret void
}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memcpy.element.unordered.atomic.p0.p0.i64(ptr, ptr, i64, i32)
declare void @llvm.memmove.element.unordered.atomic.p0.p0.i64(ptr, ptr, i64, i32)
declare void @llvm.memset.element.unordered.atomic.p0.i64(ptr, i8, i64, i32)
declare void @llvm.memcpy.inline.p0.p0.i32(ptr, ptr, i32, i1)
declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
