; Heap calls: __mnemo_heap_site(site) immediately before each call the heap
; interposer sees; site kinds alloc, realloc, free; name = the demangled
; callee, with ":Type" and the type's size from !heapallocsite.  Pointer
; creation: after calls returning a pointer that are not heap calls (type 2)
; and after inttoptr (type 3).
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -S %s | FileCheck %s
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -S %s | %sitetable \
; RUN:   | FileCheck --check-prefix=TABLE %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%Node = type { i32, ptr }

; CHECK-LABEL: define void @c_heap(
; CHECK-NEXT: call void @__mnemo_heap_site(i32 2)
; CHECK-NEXT: %a = call ptr @malloc(i64 16)
; CHECK-NEXT: call void @__mnemo_heap_site(i32 3)
; CHECK-NEXT: %b = call ptr @calloc(i64 4, i64 8)
; CHECK-NEXT: call void @__mnemo_heap_site(i32 4)
; CHECK-NEXT: %c = call ptr @realloc(ptr %a, i64 64)
; CHECK-NEXT: call void @__mnemo_heap_site(i32 5)
; CHECK-NEXT: %r = call i32 @posix_memalign(ptr %out, i64 64, i64 128)
; CHECK-NEXT: call void @__mnemo_heap_site(i32 6)
; CHECK-NEXT: call void @free(ptr %c)
; CHECK-NEXT: call void @__mnemo_heap_site(i32 7)
; CHECK-NEXT: %d = call ptr @aligned_alloc(i64 64, i64 64)
; CHECK-NEXT: ret void
; TABLE: 1|function|c_heap||0|0||0
; TABLE: 2|alloc|c_heap||0|0|malloc|0
; TABLE: 3|alloc|c_heap||0|0|calloc|0
; TABLE: 4|realloc|c_heap||0|0|realloc|0
; TABLE: 5|alloc|c_heap||0|0|posix_memalign|0
; TABLE: 6|free|c_heap||0|0|free|0
; TABLE: 7|alloc|c_heap||0|0|aligned_alloc|0
define void @c_heap(ptr %out) {
  %a = call ptr @malloc(i64 16)
  %b = call ptr @calloc(i64 4, i64 8)
  %c = call ptr @realloc(ptr %a, i64 64)
  %r = call i32 @posix_memalign(ptr %out, i64 64, i64 128)
  call void @free(ptr %c)
  %d = call ptr @aligned_alloc(i64 64, i64 64)
  ret void
}

; operator new and delete, with the type clang records for new-expressions;
; placement new is not an allocation (but returns a pointer).
; CHECK-LABEL: define void @cxx_heap(
; CHECK-NEXT: call void @__mnemo_heap_site(i32 9)
; CHECK-NEXT: %n = call ptr @_Znwm(i64 16), !heapallocsite
; CHECK-NEXT: call void @__mnemo_heap_site(i32 10)
; CHECK-NEXT: %a = call ptr @_ZnamSt11align_val_t(i64 256, i64 64)
; CHECK-NEXT: %p = call ptr @_ZnwmPv(i64 16, ptr %n)
; CHECK-NEXT: call void @__mnemo_pointer_create(i32 11, ptr %p, i32 2)
; CHECK-NEXT: call void @__mnemo_heap_site(i32 12)
; CHECK-NEXT: call void @_ZdlPvm(ptr %n, i64 16)
; CHECK-NEXT: call void @__mnemo_heap_site(i32 13)
; CHECK-NEXT: call void @_ZdaPvSt11align_val_t(ptr %a, i64 64)
; TABLE: 9|alloc|cxx_heap||0|0|operator new(unsigned long):Node|16
; TABLE: 10|alloc|cxx_heap||0|0|operator new[](unsigned long, std::align_val_t)|0
; TABLE: 11|pointer|cxx_heap||0|0||0
; TABLE: 12|free|cxx_heap||0|0|operator delete(void*, unsigned long)|0
; TABLE: 13|free|cxx_heap||0|0|operator delete[](void*, std::align_val_t)|0
define void @cxx_heap() {
  %n = call ptr @_Znwm(i64 16), !heapallocsite !10
  %a = call ptr @_ZnamSt11align_val_t(i64 256, i64 64)
  %p = call ptr @_ZnwmPv(i64 16, ptr %n)
  call void @_ZdlPvm(ptr %n, i64 16)
  call void @_ZdaPvSt11align_val_t(ptr %a, i64 64)
  ret void
}

; An invoked allocation: the site goes before the invoke.  An invoke that
; returns a pointer: the event goes on the normal edge, which gets a block of
; its own when its destination has other predecessors.
; CHECK-LABEL: define ptr @invokes(
; CHECK:      call void @__mnemo_heap_site(i32 15)
; CHECK-NEXT: %n = invoke ptr @_Znwm(i64 8)
; CHECK-NEXT:    to label %got unwind label %lpad
; CHECK:      %q = invoke ptr @get()
; CHECK-NEXT:    to label %[[EDGE:.*]] unwind label %lpad
; CHECK:      [[EDGE]]:
; CHECK-NEXT: call void @__mnemo_pointer_create(i32 16, ptr %q, i32 2)
; CHECK-NEXT: br label %join
define ptr @invokes(i1 %c) personality ptr @__gxx_personality_v0 {
entry:
  %n = invoke ptr @_Znwm(i64 8)
          to label %got unwind label %lpad
got:
  br i1 %c, label %join, label %call
call:
  %q = invoke ptr @get()
          to label %join unwind label %lpad
join:
  %r = phi ptr [ %n, %got ], [ %q, %call ]
  ret ptr %r
lpad:
  %lp = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %lp
}

; CHECK-LABEL: define ptr @from_int(
; CHECK-NEXT: %p = inttoptr i64 %i to ptr
; CHECK-NEXT: call void @__mnemo_pointer_create(i32 18, ptr %p, i32 3)
; CHECK-NEXT: %q = call ptr @get()
; CHECK-NEXT: call void @__mnemo_pointer_create(i32 19, ptr %q, i32 2)
; CHECK-NEXT: %t = musttail call ptr @tail(i64 %i)
; CHECK-NEXT: ret ptr %t
define ptr @from_int(i64 %i) {
  %p = inttoptr i64 %i to ptr
  %q = call ptr @get()
  %t = musttail call ptr @tail(i64 %i)
  ret ptr %t
}

; Calls to the profiler's entry points and intrinsics are never sites.
; CHECK-LABEL: define ptr @not_sites(
; CHECK-NEXT: %m = call ptr @__mnemo_user()
; CHECK-NEXT: %s = call ptr @llvm.stacksave.p0()
; CHECK-NEXT: ret ptr %m
; TABLE: 20|function|not_sites||0|0||0
; TABLE-NEXT: count=20 abi=7
define ptr @not_sites() {
  %m = call ptr @__mnemo_user()
  %s = call ptr @llvm.stacksave.p0()
  ret ptr %m
}

declare ptr @malloc(i64)
declare ptr @calloc(i64, i64)
declare ptr @realloc(ptr, i64)
declare i32 @posix_memalign(ptr, i64, i64)
declare void @free(ptr)
declare ptr @aligned_alloc(i64, i64)
declare ptr @_Znwm(i64)
declare ptr @_ZnamSt11align_val_t(i64, i64)
declare ptr @_ZnwmPv(i64, ptr)
declare void @_ZdlPvm(ptr, i64)
declare void @_ZdaPvSt11align_val_t(ptr, i64)
declare ptr @get()
declare ptr @tail(i64)
declare ptr @__mnemo_user()
declare ptr @llvm.stacksave.p0()
declare i32 @__gxx_personality_v0(...)

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1, emissionKind: FullDebug)
!1 = !DIFile(filename: "heap.cpp", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 7, !"Dwarf Version", i32 5}
!10 = !DICompositeType(tag: DW_TAG_structure_type, name: "Node", file: !1, line: 1, size: 128, elements: !{})
