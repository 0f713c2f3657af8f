; Loops, after LoopSimplify: __mnemo_loop_invoke at the end of the preheader,
; __mnemo_loop_iter at the top of the header, __mnemo_loop_exit at the top of
; each dedicated exit block (not landing pads).  A loop's id is assigned when
; its header is reached in block order.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-instrument-memory=false \
; RUN:   -S %s | FileCheck %s
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all -S %s | %sitetable \
; RUN:   | FileCheck --check-prefix=TABLE %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK-LABEL: define void @simple(
; CHECK:      entry:
; CHECK-NEXT: call void @__mnemo_loop_invoke(i32 2)
; CHECK-NEXT: br label %loop
; CHECK:      loop:
; CHECK-NEXT: %i = phi i64
; CHECK-NEXT: call void @__mnemo_loop_iter(i32 2)
; CHECK:      exit:
; CHECK-NEXT: call void @__mnemo_loop_exit(i32 2)
; CHECK-NEXT: ret void
define void @simple(i64 %n) nounwind !dbg !5 {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @work(i64 %i)
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop, !llvm.loop !20
exit:
  ret void
}

; Two ways in and a shared exit: LoopSimplify adds a preheader and a
; dedicated exit block.
; CHECK-LABEL: define void @no_preheader(
; CHECK:      loop.preheader:
; CHECK:      call void @__mnemo_loop_invoke(i32 4)
; CHECK-NEXT: br label %loop
; CHECK:      loop:
; CHECK-NEXT: %i = phi i64
; CHECK-NEXT: call void @__mnemo_loop_iter(i32 4)
; CHECK:      [[EXIT:.*]]:
; CHECK-NEXT: call void @__mnemo_loop_exit(i32 4)
; CHECK-NEXT: br label %exit
; CHECK:      exit:
; CHECK-NEXT: ret void
define void @no_preheader(i1 %c, i64 %n) nounwind {
entry:
  br i1 %c, label %a, label %b
a:
  br i1 %c, label %loop, label %exit
b:
  br label %loop
loop:
  %i = phi i64 [ 0, %a ], [ 1, %b ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; Nested loops, and an exit out of both: the inner loop's exit comes first.
; CHECK-LABEL: define void @nested(
; CHECK:      entry:
; CHECK-NEXT: call void @__mnemo_loop_invoke(i32 6)
; CHECK:      outer:
; CHECK-NEXT: %i = phi
; CHECK-NEXT: call void @__mnemo_loop_iter(i32 6)
; CHECK-NEXT: call void @__mnemo_loop_invoke(i32 7)
; CHECK-NEXT: br label %inner
; CHECK:      inner:
; CHECK-NEXT: %j = phi
; CHECK-NEXT: call void @__mnemo_loop_iter(i32 7)
; CHECK:      latch:
; CHECK-NEXT: call void @__mnemo_loop_exit(i32 7)
; CHECK:      exit.loopexit:
; CHECK-NEXT: call void @__mnemo_loop_exit(i32 7)
; CHECK-NEXT: call void @__mnemo_loop_exit(i32 6)
; CHECK-NEXT: br label %exit
; CHECK:      exit.loopexit1:
; CHECK-NEXT: call void @__mnemo_loop_exit(i32 6)
; CHECK-NEXT: br label %exit
define void @nested(i64 %n) nounwind {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j.next, %inner.body ]
  %stop = call i1 @test(i64 %j)
  br i1 %stop, label %exit, label %inner.body
inner.body:
  %j.next = add i64 %j, 1
  %jdone = icmp eq i64 %j.next, %n
  br i1 %jdone, label %latch, label %inner
latch:
  %i.next = add i64 %i, 1
  %idone = icmp eq i64 %i.next, %n
  br i1 %idone, label %exit, label %outer
exit:
  ret void
}

; A loop left by an exception: no loop exit in the landing pad (the function
; exit closes it).
; CHECK-LABEL: define void @eh_exit(
; CHECK:      loop:
; CHECK-NEXT: call void @__mnemo_loop_iter(i32 9)
; CHECK:      lpad:
; CHECK-NEXT: landingpad
; CHECK-NEXT:   cleanup
; CHECK-NOT:  __mnemo_loop_exit
; CHECK:      resume
define void @eh_exit() personality ptr @__gxx_personality_v0 {
entry:
  br label %loop
loop:
  invoke void @may_throw()
          to label %loop unwind label %lpad
lpad:
  %lp = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %lp
}

; Ids in block order: function, then loops as their headers come, with the
; instructions in between; loop sites are at the loop's start location.
; TABLE:      1|function|simple|loops.c|1|0||0
; TABLE-NEXT: 2|loop|simple|loops.c|2|3||0
; TABLE-NEXT: 3|function|no_preheader||0|0||0
; TABLE-NEXT: 4|loop|no_preheader||0|0||0
; TABLE-NEXT: 5|function|nested||0|0||0
; TABLE-NEXT: 6|loop|nested||0|0||0
; TABLE-NEXT: 7|loop|nested||0|0||0
; TABLE-NEXT: 8|function|eh_exit||0|0||0
; TABLE-NEXT: 9|loop|eh_exit||0|0||0
; TABLE-NEXT: count=9 abi=7

declare void @work(i64) nounwind
declare i1 @test(i64) nounwind
declare void @may_throw()
declare i32 @__gxx_personality_v0(...)

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: FullDebug)
!1 = !DIFile(filename: "loops.c", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "simple", scope: !1, file: !1, line: 1, type: !6, scopeLine: 1, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !{null})
!20 = distinct !{!20, !21, !22}
!21 = !DILocation(line: 2, column: 3, scope: !5)
!22 = !DILocation(line: 4, column: 1, scope: !5)
