; Site ids and the whole output are a function of the input only: two runs
; over the same module give the same bytes.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all -S %s -o %t.1.ll
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all -S %s -o %t.2.ll
; RUN: diff %t.1.ll %t.2.ll
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all %s -o %t.1.bc
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all %s -o %t.2.bc
; RUN: cmp %t.1.bc %t.2.bc
; RUN: %sitetable < %t.1.ll | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@g = global [8 x i64] zeroinitializer

; CHECK:      header=mnemo-sites/3
; CHECK-NEXT: 1|function|walk||0|0||0
; CHECK-NEXT: 2|stack|walk||0|0|buf|64
; CHECK-NEXT: 3|loop|walk||0|0||0
; CHECK-NEXT: 4|load|walk||0|0|ptr|0
; CHECK-NEXT: 5|pointer|walk||0|0||0
; CHECK-NEXT: 6|store|walk||0|0||0
; CHECK-NEXT: 7|alloc|walk||0|0|malloc|0
; CHECK-NEXT: 8|function|main||0|0||0
; CHECK-NEXT: 9|global|||0|0|g|64
; CHECK-NEXT: count=9 abi=7

define ptr @walk(ptr %head) nounwind {
entry:
  %buf = alloca [8 x i64]
  br label %loop
loop:
  %n = phi ptr [ %head, %entry ], [ %next, %loop ]
  %next = load ptr, ptr %n
  store i64 1, ptr %buf
  %done = icmp eq ptr %next, null
  br i1 %done, label %exit, label %loop
exit:
  %m = call ptr @malloc(i64 8)
  ret ptr %m
}

define i32 @main() nounwind {
  ret i32 0
}

declare ptr @malloc(i64) nounwind
