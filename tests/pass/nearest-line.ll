; Every site has a line: an instruction without one (no location, or line 0,
; the line of a location merged from several) takes the location of the
; nearest preceding instruction of its block that has a line, else of the
; block's first one that has one, else of the last one of the nearest
; dominating block that has one, and its line_nearest column is 1.  With none
; of these the site stays at line 0, line_nearest 0.
; The site table's columns after the header:
; id|kind|function|file|line|column|name|type_size|loop|fields|line_nearest|inlined_into|inlined_at
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all -S %s | %sitetable \
; RUN:   | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK:      header=mnemo-sites/3
; CHECK-NEXT: 1|function|f|n.c|10|0||0|0||0||{{$}}
; Its own line.
; CHECK-NEXT: 2|load|f|n.c|11|5||0|0||0||{{$}}
; Line 0 (merged): the load before it.
; CHECK-NEXT: 3|load|f|n.c|11|5||0|0||1||{{$}}
; Line 0 after a line-0 instruction: still the located one before both.
; CHECK-NEXT: 4|store|f|n.c|11|5||0|0||1||{{$}}
; No location, first in its block: the block's first located instruction,
; which follows it.
; CHECK-NEXT: 5|load|f|n.c|14|3||0|0||1||{{$}}
; CHECK-NEXT: 6|store|f|n.c|14|3||0|0||0||{{$}}
; Line 0 in a join block with no line (code sunk into it): the last located
; instruction of its dominator, the entry block's branch.
; CHECK-NEXT: 7|load|f|n.c|12|3||0|0||1||{{$}}
; A function without any line: stays 0, and says nothing more.
; CHECK-NEXT: 8|function|g|n.c|20|0||0|0||0||{{$}}
; CHECK-NEXT: 9|load|g|n.c|0|0||0|0||0||{{$}}
; CHECK-NEXT: count=9
define i32 @f(ptr %p, ptr %q, i1 %c) !dbg !5 {
entry:
  %a = load i32, ptr %p, align 4, !dbg !8
  %b = load i32, ptr %q, align 4, !dbg !9
  store i32 %b, ptr %p, align 4, !dbg !9
  br i1 %c, label %then, label %exit, !dbg !10
then:
  %d = load i32, ptr %p, align 4
  store i32 %d, ptr %q, align 4, !dbg !11
  br label %exit
exit:
  %e = load i32, ptr %p, align 4, !dbg !9
  ret i32 %e, !dbg !9
}

define i32 @g(ptr %p) !dbg !20 {
  %v = load i32, ptr %p, align 4, !dbg !21
  ret i32 %v
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: FullDebug)
!1 = !DIFile(filename: "n.c", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 10, type: !6, scopeLine: 10, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !{null})
!8 = !DILocation(line: 11, column: 5, scope: !5)
!9 = !DILocation(line: 0, scope: !5)
!10 = !DILocation(line: 12, column: 3, scope: !5)
!11 = !DILocation(line: 14, column: 3, scope: !5)
!20 = distinct !DISubprogram(name: "g", scope: !1, file: !1, line: 20, type: !6, scopeLine: 20, spFlags: DISPFlagDefinition, unit: !0)
!21 = !DILocation(line: 0, scope: !20)
