; The site table's mnemo-sites/2 columns.  `loop`: each load and store gets
; the site of the innermost loop holding it in its function, also when its
; block comes before the loop's header in layout (the id is set after the
; walk), 0 outside every loop.  `fields`: the layout of the structure a heap
; site (operator new's !heapallocsite, or the pointer variable a C malloc is
; assigned to), a stack object or a global declares, through typedefs,
; qualifiers and arrays; bitfields at their storage unit; an anonymous
; structure named by its typedef; nothing for a char *, a scalar, a
; fragment of a variable or a global with an expression.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all -S %s | %sitetable \
; RUN:   | FileCheck %s
; Without loop sites (-mnemo-instrument-loops=0) every loop column is 0.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-loops=false -S %s | %sitetable \
; RUN:   | FileCheck --check-prefix=NOLOOPS %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK:      header=mnemo-sites/3

; Nested loops: the outer loop's load names the outer loop, the inner one's
; the inner loop; the load after both is in none.
; CHECK-NEXT: 1|function|nested|s.c|10|0||0|0|
; CHECK-NEXT: 2|loop|nested|s.c|12|0||0|0|
; CHECK-NEXT: 3|load|nested|s.c|13|0||0|2|
; CHECK-NEXT: 4|loop|nested|s.c|14|0||0|0|
; CHECK-NEXT: 5|load|nested|s.c|15|0||0|4|
; CHECK-NEXT: 6|store|nested|s.c|15|0||0|4|
; CHECK-NEXT: 7|load|nested|s.c|17|0||0|0|
; NOLOOPS:      header=mnemo-sites/3
; NOLOOPS-NEXT: 1|function|nested|s.c|10|0||0|0|
; NOLOOPS-NEXT: 2|load|nested|s.c|13|0||0|0|
; NOLOOPS-NEXT: 3|load|nested|s.c|15|0||0|0|
define i32 @nested(ptr %p, i64 %n, i64 %m) !dbg !10 {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i.next, %outer.latch ]
  %a = getelementptr inbounds [4 x i32], ptr %p, i64 %i
  %va = load i32, ptr %a, !dbg !13
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j.next, %inner ]
  %b = getelementptr inbounds [4 x i32], ptr %p, i64 %j, i64 1
  %vb = load i32, ptr %b, !dbg !15
  store i32 %va, ptr %b, !dbg !15
  %j.next = add i64 %j, 1
  %jd = icmp eq i64 %j.next, %m
  br i1 %jd, label %outer.latch, label %inner, !llvm.loop !14
outer.latch:
  %i.next = add i64 %i, 1
  %id = icmp eq i64 %i.next, %n
  br i1 %id, label %exit, label %outer, !llvm.loop !12
exit:
  %v = load i32, ptr %p, !dbg !17
  ret i32 %v
}

; The body block comes before the header in layout: its load gets its id
; first, and its loop column once the header has given the loop its id.
; CHECK-NEXT: 8|function|body_first||0|0||0|0|
; CHECK-NEXT: 9|load|body_first||0|0||0|10|
; CHECK-NEXT: 10|loop|body_first||0|0||0|0|
define i32 @body_first(ptr %p, i64 %n) {
entry:
  br label %header
body:
  %x = load i32, ptr %p
  %s.next = add i32 %s, %x
  %i.next = add i64 %i, 1
  br label %header
header:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %s = phi i32 [ 0, %entry ], [ %s.next, %body ]
  %done = icmp eq i64 %i, %n
  br i1 %done, label %exit, label %body
exit:
  ret i32 %s
}

; C++ new with !heapallocsite: the type's layout.  C malloc: the layout of
; the structure the variable it is assigned to points to (a void * too is
; fine); a char * gives none, and so does a pointer to another structure.
; A stack structure, a stack array of them, and a piece of one (SROA) that
; is no longer the whole variable.
; CHECK-NEXT: 11|function|locals|s.c|20|0||0|0|
; CHECK-NEXT: 12|stack|locals|s.c|21|0|loc|16|0|S/16:a@0,b@4,c@8,d@12
; CHECK-NEXT: 13|stack|locals|s.c|22|0|arr|64|0|S/16:a@0,b@4,c@8,d@12
; CHECK-NEXT: 14|stack|locals|s.c|23|0|part|8|0||0||{{$}}
; CHECK-NEXT: 15|alloc|locals|s.c|24|0|operator new(unsigned long):S_t|16|0|S/16:a@0,b@4,c@8,d@12
; CHECK-NEXT: 16|alloc|locals|s.c|25|0|malloc|0|0|S/16:a@0,b@4,c@8,d@12
; CHECK-NEXT: 17|alloc|locals|s.c|26|0|malloc|0|0||0||{{$}}
; CHECK-NEXT: 18|alloc|locals|s.c|27|0|malloc|0|0||0||{{$}}
; CHECK-NEXT: 19|free|locals|s.c|28|0|free|0|0||0||{{$}}
define void @locals() !dbg !20 {
entry:
  %loc = alloca [4 x i32], align 4
  %arr = alloca [4 x [4 x i32]], align 4
  %part = alloca [2 x i32], align 4
    #dbg_declare(ptr %loc, !21, !DIExpression(), !30)
    #dbg_declare(ptr %arr, !22, !DIExpression(), !31)
    #dbg_declare(ptr %part, !23, !DIExpression(DW_OP_LLVM_fragment, 0, 64), !32)
  %n = call ptr @_Znwm(i64 16), !dbg !33, !heapallocsite !50
  %m = call ptr @malloc(i64 160), !dbg !34
    #dbg_value(ptr %m, !24, !DIExpression(), !34)
    #dbg_value(ptr %m, !25, !DIExpression(), !34)
  %c = call ptr @malloc(i64 64), !dbg !35
    #dbg_value(ptr %c, !26, !DIExpression(), !35)
  %t = call ptr @malloc(i64 64), !dbg !36
    #dbg_value(ptr %t, !25, !DIExpression(), !36)
    #dbg_value(ptr %t, !27, !DIExpression(), !36)
  call void @free(ptr %c), !dbg !37
  call void @use(ptr %loc, ptr %arr, ptr %part, ptr %n, ptr %m, ptr %t)
  ret void
}

; At -O0 the variable lives in an alloca: a malloc stored into it takes the
; variable's type.  The pointer variable itself is no structure.  The store
; of the pointer is named `ptr`: its value is an address (runtime/abi.h).
; CHECK-NEXT: 20|function|o0|s.c|30|0||0|0|
; CHECK-NEXT: 21|stack|o0|s.c|31|0|q|8|0||0||{{$}}
; CHECK-NEXT: 22|alloc|o0|s.c|31|0|malloc|0|0|S/16:a@0,b@4,c@8,d@12
; CHECK-NEXT: 23|store|o0|s.c|31|0|ptr|0|0||0||{{$}}
define void @o0() !dbg !80 {
entry:
  %q = alloca ptr, align 8
    #dbg_declare(ptr %q, !81, !DIExpression(), !82)
  %m = call ptr @malloc(i64 16), !dbg !82
  store ptr %m, ptr %q, !dbg !82
  ret void
}

; Globals: an array of a typedef'd anonymous structure (bitfields, a nested
; structure: one field), a const array of S, a scalar, and a global that is
; a piece of its variable (an expression).
; CHECK-NEXT: 24|global||s.c|4|0|table|80|0|T/40:x@0,y@8,f1@16,f2@16,in@20
; CHECK-NEXT: 25|global||s.c|5|0|cs|32|0|S/16:a@0,b@4,c@8,d@12
; CHECK-NEXT: 26|global||s.c|6|0|count|4|0||0||{{$}}
; CHECK-NEXT: 27|global||s.c|7|0|piece|4|0||0||{{$}}
; CHECK-NEXT: count=27 abi=7
@table = global [2 x { i8, i64, i32, [4 x i32] }] zeroinitializer, !dbg !60
@cs = constant [2 x [4 x i32]] zeroinitializer, !dbg !62
@count = global i32 0, !dbg !64
@piece = global i32 0, !dbg !66

declare ptr @_Znwm(i64)
declare ptr @malloc(i64)
declare void @free(ptr)
declare void @use(ptr, ptr, ptr, ptr, ptr, ptr)

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!1, !2}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !3, emissionKind: FullDebug, globals: !68)
!1 = !{i32 2, !"Debug Info Version", i32 3}
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !DIFile(filename: "s.c", directory: "/t")
!4 = !DISubroutineType(types: !{})

!10 = distinct !DISubprogram(name: "nested", scope: !3, file: !3, line: 10, type: !4, unit: !0, spFlags: DISPFlagDefinition)
!11 = distinct !DILexicalBlock(scope: !10, file: !3, line: 11)
!12 = distinct !{!12, !DILocation(line: 12, scope: !11)}
!13 = !DILocation(line: 13, scope: !11)
!14 = distinct !{!14, !DILocation(line: 14, scope: !11)}
!15 = !DILocation(line: 15, scope: !11)
!17 = !DILocation(line: 17, scope: !10)

!20 = distinct !DISubprogram(name: "locals", scope: !3, file: !3, line: 20, type: !4, unit: !0, spFlags: DISPFlagDefinition)
!21 = !DILocalVariable(name: "loc", scope: !20, file: !3, line: 21, type: !40)
!22 = !DILocalVariable(name: "arr", scope: !20, file: !3, line: 22, type: !47)
!23 = !DILocalVariable(name: "part", scope: !20, file: !3, line: 23, type: !40)
!24 = !DILocalVariable(name: "raw", scope: !20, file: !3, line: 25, type: !52)
!25 = !DILocalVariable(name: "sp", scope: !20, file: !3, line: 25, type: !51)
!26 = !DILocalVariable(name: "buf", scope: !20, file: !3, line: 26, type: !53)
!27 = !DILocalVariable(name: "tp", scope: !20, file: !3, line: 27, type: !54)
!30 = !DILocation(line: 21, scope: !20)
!31 = !DILocation(line: 22, scope: !20)
!32 = !DILocation(line: 23, scope: !20)
!33 = !DILocation(line: 24, scope: !20)
!34 = !DILocation(line: 25, scope: !20)
!35 = !DILocation(line: 26, scope: !20)
!36 = !DILocation(line: 27, scope: !20)
!37 = !DILocation(line: 28, scope: !20)

; struct S { int a, b, c, d; }, S[4], const S, S *, void *, char *, T *
!40 = distinct !DICompositeType(tag: DW_TAG_structure_type, name: "S", file: !3, line: 2, size: 128, elements: !41)
!41 = !{!42, !43, !44, !45}
!42 = !DIDerivedType(tag: DW_TAG_member, name: "a", scope: !40, file: !3, line: 2, baseType: !46, size: 32)
!43 = !DIDerivedType(tag: DW_TAG_member, name: "b", scope: !40, file: !3, line: 2, baseType: !46, size: 32, offset: 32)
!44 = !DIDerivedType(tag: DW_TAG_member, name: "c", scope: !40, file: !3, line: 2, baseType: !46, size: 32, offset: 64)
!45 = !DIDerivedType(tag: DW_TAG_member, name: "d", scope: !40, file: !3, line: 2, baseType: !46, size: 32, offset: 96)
!46 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!47 = !DICompositeType(tag: DW_TAG_array_type, baseType: !40, size: 512, elements: !{!48})
!48 = !DISubrange(count: 4)
!49 = !DIDerivedType(tag: DW_TAG_const_type, baseType: !40)
!50 = !DIDerivedType(tag: DW_TAG_typedef, name: "S_t", file: !3, line: 3, baseType: !40)
!51 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !50, size: 64)
!52 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: null, size: 64)
!53 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !55, size: 64)
!54 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !57, size: 64)
!55 = !DIBasicType(name: "char", size: 8, encoding: DW_ATE_signed_char)

; typedef struct { char x; long y; unsigned f1 : 3, f2 : 5; S in; } T
!56 = distinct !DICompositeType(tag: DW_TAG_structure_type, file: !3, line: 3, size: 320, elements: !{!70, !71, !72, !73, !74})
!57 = !DIDerivedType(tag: DW_TAG_typedef, name: "T", file: !3, line: 3, baseType: !56)
!58 = !DICompositeType(tag: DW_TAG_array_type, baseType: !57, size: 640, elements: !{!59})
!59 = !DISubrange(count: 2)
!70 = !DIDerivedType(tag: DW_TAG_member, name: "x", scope: !56, file: !3, line: 3, baseType: !55, size: 8)
!71 = !DIDerivedType(tag: DW_TAG_member, name: "y", scope: !56, file: !3, line: 3, baseType: !75, size: 64, offset: 64)
!72 = !DIDerivedType(tag: DW_TAG_member, name: "f1", scope: !56, file: !3, line: 3, baseType: !76, size: 3, offset: 128, flags: DIFlagBitField, extraData: i64 128)
!73 = !DIDerivedType(tag: DW_TAG_member, name: "f2", scope: !56, file: !3, line: 3, baseType: !76, size: 5, offset: 131, flags: DIFlagBitField, extraData: i64 128)
!74 = !DIDerivedType(tag: DW_TAG_member, name: "in", scope: !56, file: !3, line: 3, baseType: !40, size: 128, offset: 160)
!75 = !DIBasicType(name: "long", size: 64, encoding: DW_ATE_signed)
!76 = !DIBasicType(name: "unsigned int", size: 32, encoding: DW_ATE_unsigned)

!60 = !DIGlobalVariableExpression(var: !61, expr: !DIExpression())
!61 = distinct !DIGlobalVariable(name: "table", scope: !0, file: !3, line: 4, type: !58, isLocal: false, isDefinition: true)
!62 = !DIGlobalVariableExpression(var: !63, expr: !DIExpression())
!63 = distinct !DIGlobalVariable(name: "cs", scope: !0, file: !3, line: 5, type: !77, isLocal: false, isDefinition: true)
!77 = !DICompositeType(tag: DW_TAG_array_type, baseType: !49, size: 256, elements: !{!59})
!64 = !DIGlobalVariableExpression(var: !65, expr: !DIExpression())
!65 = distinct !DIGlobalVariable(name: "count", scope: !0, file: !3, line: 6, type: !46, isLocal: false, isDefinition: true)
!66 = !DIGlobalVariableExpression(var: !67, expr: !DIExpression(DW_OP_LLVM_fragment, 0, 32))
!67 = distinct !DIGlobalVariable(name: "piece", scope: !0, file: !3, line: 7, type: !40, isLocal: false, isDefinition: true)
!68 = !{!60, !62, !64, !66}

!80 = distinct !DISubprogram(name: "o0", scope: !3, file: !3, line: 30, type: !4, unit: !0, spFlags: DISPFlagDefinition)
!81 = !DILocalVariable(name: "q", scope: !80, file: !3, line: 31, type: !51)
!82 = !DILocation(line: 31, scope: !80)
