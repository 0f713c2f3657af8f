; Inlined code is named as llvm-symbolizer names it: `function` is the
; function the line belongs to (the location's subprogram, its linkage name
; demangled), `inlined_into` the function holding the instruction and
; `inlined_at` the inlining calls from the one of `function` outwards.  One
; line of Node::MarkInUse() inlined into two functions, twice into one of
; them and once through a helper gives four rows that differ in their last two
; columns; a line-0 access takes the nearest line and its naming with it.
; id|kind|function|file|line|column|name|type_size|loop|fields|line_nearest|inlined_into|inlined_at
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all -S %s | %sitetable \
; RUN:   | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK:      header=mnemo-sites/3
; CHECK-NEXT: 1|function|Doc::DeleteNode(Node*)|x.cpp|39|0||0|0||0||{{$}}
; CHECK-NEXT: 2|load|Node::MarkInUse()|x.h|5|7||0|0||0|Doc::DeleteNode(Node*)|x.cpp:40:3{{$}}
; CHECK-NEXT: 3|load|Node::MarkInUse()|x.h|5|7||0|0||1|Doc::DeleteNode(Node*)|x.cpp:40:3{{$}}
; CHECK-NEXT: 4|store|Doc::DeleteNode(Node*)|x.cpp|41|3||0|0||0||{{$}}
; CHECK-NEXT: 5|function|Doc::ParseDeep(Node*)|x.cpp|59|0||0|0||0||{{$}}
; CHECK-NEXT: 6|load|Node::MarkInUse()|x.h|5|7||0|0||0|Doc::ParseDeep(Node*)|x.cpp:60:3{{$}}
; CHECK-NEXT: 7|load|Node::MarkInUse()|x.h|5|7||0|0||0|Doc::ParseDeep(Node*)|x.cpp:62{{$}}
; CHECK-NEXT: 8|load|Node::MarkInUse()|x.h|5|7||0|0||0|Doc::ParseDeep(Node*)|x.h:8:5 < x.cpp:64:3{{$}}
; A C function (no linkage name) inlined: its name.
; CHECK-NEXT: 9|load|helper|x.h|9|3||0|0||0|Doc::ParseDeep(Node*)|x.cpp:64:3{{$}}
; CHECK-NEXT: count=9
define void @_ZN3Doc10DeleteNodeEP4Node(ptr %n) !dbg !20 {
  %v = load i32, ptr %n, align 4, !dbg !30
  %z = load i32, ptr %n, align 4, !dbg !36
  store i32 1, ptr %n, align 4, !dbg !32
  ret void
}

define void @_ZN3Doc9ParseDeepEP4Node(ptr %n) !dbg !21 {
  %v = load i32, ptr %n, align 4, !dbg !33
  %w = load i32, ptr %n, align 4, !dbg !34
  %x = load i32, ptr %n, align 4, !dbg !35
  %y = load i32, ptr %n, align 4, !dbg !40
  ret void
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1, emissionKind: FullDebug)
!1 = !DIFile(filename: "x.cpp", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 7, !"Dwarf Version", i32 5}
!4 = !DIFile(filename: "x.h", directory: "/src")
!6 = !DISubroutineType(types: !{null})
!10 = distinct !DISubprogram(name: "MarkInUse", linkageName: "_ZN4Node9MarkInUseEv", scope: !4, file: !4, line: 4, type: !6, scopeLine: 4, spFlags: DISPFlagDefinition, unit: !0)
!11 = distinct !DISubprogram(name: "helper", scope: !4, file: !4, line: 7, type: !6, scopeLine: 7, spFlags: DISPFlagDefinition, unit: !0)
!20 = distinct !DISubprogram(name: "DeleteNode", linkageName: "_ZN3Doc10DeleteNodeEP4Node", scope: !1, file: !1, line: 39, type: !6, scopeLine: 39, spFlags: DISPFlagDefinition, unit: !0)
!21 = distinct !DISubprogram(name: "ParseDeep", linkageName: "_ZN3Doc9ParseDeepEP4Node", scope: !1, file: !1, line: 59, type: !6, scopeLine: 59, spFlags: DISPFlagDefinition, unit: !0)
; MarkInUse's line 5 inlined into DeleteNode at 40:3
!30 = !DILocation(line: 5, column: 7, scope: !10, inlinedAt: !31)
!31 = distinct !DILocation(line: 40, column: 3, scope: !20)
!32 = !DILocation(line: 41, column: 3, scope: !20)
; a merged location (line 0) after it
!36 = !DILocation(line: 0, scope: !20)
; ... into ParseDeep at 60:3 and at 62 (no column)
!33 = !DILocation(line: 5, column: 7, scope: !10, inlinedAt: !37)
!37 = distinct !DILocation(line: 60, column: 3, scope: !21)
!34 = !DILocation(line: 5, column: 7, scope: !10, inlinedAt: !38)
!38 = distinct !DILocation(line: 62, scope: !21)
; ... into helper at 8:5, itself inlined into ParseDeep at 64:3
!35 = !DILocation(line: 5, column: 7, scope: !10, inlinedAt: !39)
!39 = distinct !DILocation(line: 8, column: 5, scope: !11, inlinedAt: !41)
!41 = distinct !DILocation(line: 64, column: 3, scope: !21)
!40 = !DILocation(line: 9, column: 3, scope: !11, inlinedAt: !41)
