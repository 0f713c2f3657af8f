; With debug information every inserted call carries a location: the
; instrumented instruction's, the scope line for function entry, else line 0
; in the function's subprogram.  Inlining callbacks that have debug
; information of their own (as the LTO pipeline does after the pass) must
; keep the module valid; opt verifies it after the pipeline.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all -S %s \
; RUN:   | FileCheck %s
; RUN: %opt -passes='mnemo-instrument,always-inline,verify' \
; RUN:   -mnemo-instrument-all -disable-output %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK-LABEL: define i32 @f(
; CHECK-NEXT: call void @__mnemo_func_entry(i32 {{[0-9]+}}){{.*}}, !dbg [[ENTRY:![0-9]+]]
; CHECK-NEXT: %v = load i32, ptr %p, align 4, !dbg [[LOAD:![0-9]+]]
; CHECK:      call void @__mnemo_load({{.*}}){{.*}}, !dbg [[LOAD]]
; CHECK:      call void @__mnemo_store({{.*}}){{.*}}, !dbg [[ZERO:![0-9]+]]
; CHECK-NEXT: store i32 %v, ptr %q
; CHECK:      call void @__mnemo_func_exit({{.*}}){{.*}}, !dbg [[RET:![0-9]+]]
; CHECK-NEXT: ret i32 %v, !dbg [[RET]]
; CHECK-DAG: [[ENTRY]] = !DILocation(line: 10, scope: [[SP:![0-9]+]])
; CHECK-DAG: [[LOAD]] = !DILocation(line: 11, column: 5, scope: [[SP]])
; CHECK-DAG: [[ZERO]] = !DILocation(line: 0, scope: [[SP]])
; CHECK-DAG: [[RET]] = !DILocation(line: 12, column: 3, scope: [[SP]])
define i32 @f(ptr %p, ptr %q) nounwind !dbg !5 {
  %v = load i32, ptr %p, align 4, !dbg !8
  store i32 %v, ptr %q
  ret i32 %v, !dbg !9
}

; Callbacks as the specializer writes them, compiled with -g.
define void @__mnemo_func_entry(i32 %s) alwaysinline nounwind !dbg !20 {
  ret void, !dbg !21
}
define void @__mnemo_func_exit(i32 %s) alwaysinline nounwind !dbg !22 {
  ret void, !dbg !23
}
define void @__mnemo_load(i32 %s, ptr %a, i64 %v, i32 %n) alwaysinline nounwind !dbg !24 {
  ret void, !dbg !25
}
define void @__mnemo_store(i32 %s, ptr %a, i64 %v, i32 %n) alwaysinline nounwind !dbg !26 {
  ret void, !dbg !27
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: FullDebug)
!1 = !DIFile(filename: "f.c", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 10, type: !6, scopeLine: 10, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !{null})
!8 = !DILocation(line: 11, column: 5, scope: !5)
!9 = !DILocation(line: 12, column: 3, scope: !5)
!10 = !DIFile(filename: "callbacks.c", directory: "/build")
!20 = distinct !DISubprogram(name: "__mnemo_func_entry", scope: !10, file: !10, line: 1, type: !6, scopeLine: 1, spFlags: DISPFlagDefinition, unit: !0)
!21 = !DILocation(line: 1, scope: !20)
!22 = distinct !DISubprogram(name: "__mnemo_func_exit", scope: !10, file: !10, line: 2, type: !6, scopeLine: 2, spFlags: DISPFlagDefinition, unit: !0)
!23 = !DILocation(line: 2, scope: !22)
!24 = distinct !DISubprogram(name: "__mnemo_load", scope: !10, file: !10, line: 3, type: !6, scopeLine: 3, spFlags: DISPFlagDefinition, unit: !0)
!25 = !DILocation(line: 3, scope: !24)
!26 = distinct !DISubprogram(name: "__mnemo_store", scope: !10, file: !10, line: 4, type: !6, scopeLine: 4, spFlags: DISPFlagDefinition, unit: !0)
!27 = !DILocation(line: 4, scope: !26)
