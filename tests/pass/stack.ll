; Stack objects.  Without lifetime markers: allocated after the entry
; block's allocas (after __mnemo_func_entry) and freed, in reverse order,
; before every exit.  With markers: allocated after llvm.lifetime.start and
; freed before llvm.lifetime.end.  Dynamic allocas: allocated right after the
; alloca and freed through a slot, at the stackrestore that releases them and
; at every exit, only if still live.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-memory=false -S %s | FileCheck %s
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-memory=false -S %s | %sitetable \
; RUN:   | FileCheck --check-prefix=TABLE %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK-LABEL: define i32 @no_markers(
; CHECK-NEXT: entry:
; CHECK-NEXT: %a = alloca i32
; CHECK-NEXT: %b = alloca [10 x i64]
; CHECK-NEXT: call void @__mnemo_func_entry(i32 1)
; CHECK-NEXT: call void @__mnemo_stack_alloc(i32 2, ptr %a, i64 4)
; CHECK-NEXT: call void @__mnemo_stack_alloc(i32 3, ptr %b, i64 80)
; CHECK-NEXT: call void @use(ptr %a, ptr %b)
; CHECK:      early:
; CHECK-NEXT: call void @__mnemo_stack_free(i32 3, ptr %b)
; CHECK-NEXT: call void @__mnemo_stack_free(i32 2, ptr %a)
; CHECK-NEXT: call void @__mnemo_func_exit(i32 1)
; CHECK-NEXT: ret i32 0
; CHECK:      late:
; CHECK-NEXT: call void @__mnemo_stack_free(i32 3, ptr %b)
; CHECK-NEXT: call void @__mnemo_stack_free(i32 2, ptr %a)
; CHECK-NEXT: call void @__mnemo_func_exit(i32 1)
; CHECK-NEXT: ret i32 1
; TABLE: 2|stack|no_markers||0|0|a|4
; TABLE: 3|stack|no_markers||0|0|b|80
define i32 @no_markers(i1 %c) {
entry:
  %a = alloca i32
  %b = alloca [10 x i64]
  call void @use(ptr %a, ptr %b)
  br i1 %c, label %early, label %late
early:
  ret i32 0
late:
  ret i32 1
}

; CHECK-LABEL: define void @markers(
; CHECK:      call void @llvm.lifetime.start.p0(i64 16, ptr %x)
; CHECK-NEXT: call void @__mnemo_stack_alloc(i32 5, ptr %x, i64 16)
; CHECK-NEXT: call void @use(ptr %x, ptr %x)
; CHECK-NEXT: call void @__mnemo_stack_free(i32 5, ptr %x)
; CHECK-NEXT: call void @llvm.lifetime.end.p0(i64 16, ptr %x)
; CHECK-NEXT: call void @__mnemo_func_exit(i32 4)
; CHECK-NEXT: ret void
; TABLE: 5|stack|markers|m.c|3|7|x|16
define void @markers() !dbg !5 {
  %x = alloca [4 x i32], !dbg !8
    #dbg_declare(ptr %x, !9, !DIExpression(), !8)
  call void @llvm.lifetime.start.p0(i64 16, ptr %x), !dbg !8
  call void @use(ptr %x, ptr %x), !dbg !8
  call void @llvm.lifetime.end.p0(i64 16, ptr %x), !dbg !8
  ret void, !dbg !8
}

; A VLA: the object dies at the stackrestore, or at the exit if the restore
; was not reached.
; CHECK-LABEL: define void @vla(
; CHECK:      %mnemo.slot = alloca ptr
; CHECK-NEXT: call void @__mnemo_func_entry(i32 6)
; CHECK-NEXT: store ptr null, ptr %mnemo.slot
; CHECK:      %v = alloca i32, i64 %n
; CHECK-NEXT: [[SIZE:%.*]] = mul i64 %n, 4
; CHECK-NEXT: call void @__mnemo_stack_alloc(i32 7, ptr %v, i64 [[SIZE]])
; CHECK-NEXT: store ptr %v, ptr %mnemo.slot
; CHECK-NEXT: call void @use(ptr %v, ptr %v)
; CHECK-NEXT: call void @mnemo.stack_free_slot(i32 7, ptr %mnemo.slot)
; CHECK-NEXT: call void @llvm.stackrestore.p0(ptr %sp)
; CHECK:      exit:
; CHECK-NEXT: call void @mnemo.stack_free_slot(i32 7, ptr %mnemo.slot)
; CHECK-NEXT: call void @__mnemo_func_exit(i32 6)
; CHECK-NEXT: ret void
; TABLE: 7|stack|vla||0|0|v|0
define void @vla(i64 %n, i1 %c) {
entry:
  br i1 %c, label %body, label %exit
body:
  %sp = call ptr @llvm.stacksave.p0()
  %v = alloca i32, i64 %n
  call void @use(ptr %v, ptr %v)
  call void @llvm.stackrestore.p0(ptr %sp)
  br label %exit
exit:
  ret void
}

; The helper frees through the slot only if the object is live.
; CHECK-LABEL: define internal void @mnemo.stack_free_slot(i32 %0, ptr %1)
; CHECK:      [[OBJ:%.*]] = load ptr, ptr %1
; CHECK-NEXT: [[LIVE:%.*]] = icmp ne ptr [[OBJ]], null
; CHECK-NEXT: br i1 [[LIVE]], label %live, label %done
; CHECK:      live:
; CHECK-NEXT: store ptr null, ptr %1
; CHECK-NEXT: call void @__mnemo_stack_free(i32 %0, ptr [[OBJ]])

declare void @use(ptr, ptr) nounwind
declare void @llvm.lifetime.start.p0(i64, ptr)
declare void @llvm.lifetime.end.p0(i64, ptr)
declare ptr @llvm.stacksave.p0()
declare void @llvm.stackrestore.p0(ptr)

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: FullDebug)
!1 = !DIFile(filename: "m.c", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "markers", scope: !1, file: !1, line: 2, type: !6, scopeLine: 2, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !{null})
!8 = !DILocation(line: 3, column: 7, scope: !5)
!9 = !DILocalVariable(name: "x", scope: !5, file: !1, line: 3, type: !10)
!10 = !DICompositeType(tag: DW_TAG_array_type, baseType: !11, size: 128, elements: !{})
!11 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
