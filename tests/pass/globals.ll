; Globals: __mnemo_register_globals calls __mnemo_global(site, &g, size) for
; every global variable defined in the module, in module order, with ids
; after every function's; not for declarations, thread-locals, llvm.* and
; llvm.metadata globals, other address spaces, or the profiler's own symbols.
; A declaration of a symbol the pass defines (a reference from another file)
; is replaced by the definition.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all -S %s \
; RUN:   | FileCheck %s
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all -S %s | %sitetable \
; RUN:   | FileCheck --check-prefix=TABLE %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@counter = internal global i32 0
@table = global [100 x i16] zeroinitializer
@.str = private unnamed_addr constant [6 x i8] c"hello\00"
@_ZN2ns5stateE = global { i64, ptr } zeroinitializer
@extern_decl = external global i32
@tls = thread_local global i32 0
@gs = addrspace(256) global i32 0
@__mnemo_modules = constant [1 x i8] zeroinitializer
@mn_state = global i32 0
@meta = private constant i32 0, section "llvm.metadata"
@llvm.compiler.used = appending global [1 x ptr] [ptr @meta], section "llvm.metadata"
@__mnemo_site_count = external constant i32

; CHECK: @__mnemo_globals_table = private constant [4 x { i32, ptr, i64 }] [{ i32, ptr, i64 } { i32 2, ptr @counter, i64 4 }, { i32, ptr, i64 } { i32 3, ptr @table, i64 200 }, { i32, ptr, i64 } { i32 4, ptr @.str, i64 6 }, { i32, ptr, i64 } { i32 5, ptr @_ZN2ns5stateE, i64 16 }]
; CHECK: @__mnemo_site_table = constant [[[#LEN:]] x i8] c"mnemo-sites/3\0A
; CHECK: @__mnemo_site_table_size = constant i64 [[#LEN-1]], align 8
; CHECK: @__mnemo_site_count = constant i32 5, align 4
; CHECK: @__mnemo_pass_abi = constant i32 7, align 4
; CHECK: @llvm.used = appending global [5 x ptr] [ptr @__mnemo_site_table, ptr @__mnemo_site_table_size, ptr @__mnemo_site_count, ptr @__mnemo_pass_abi, ptr @__mnemo_register_globals], section "llvm.metadata"

; The reference to the declaration now reads the definition (and, as an
; access to a profiler symbol, is not instrumented).
; CHECK-LABEL: define i32 @f()
; CHECK-NEXT: call void @__mnemo_func_entry(i32 1)
; CHECK-NEXT: %n = load i32, ptr @__mnemo_site_count
; CHECK-NEXT: call void @__mnemo_func_exit(i32 1)
define i32 @f() nounwind {
  %n = load i32, ptr @__mnemo_site_count
  ret i32 %n
}

; The calls' arguments are rows of a table, walked by a loop: LTO inlines
; __mnemo_global's body once, not once per global.
; CHECK-LABEL: define void @__mnemo_register_globals()
; CHECK-NEXT: entry:
; CHECK-NEXT: br label %row
; CHECK: row:
; CHECK-NEXT: %[[I:[0-9]+]] = phi i64 [ 0, %entry ], [ %[[NEXT:[0-9]+]], %row ]
; CHECK-NEXT: %[[P0:[0-9]+]] = getelementptr inbounds [4 x { i32, ptr, i64 }], ptr @__mnemo_globals_table, i64 0, i64 %[[I]], i32 0
; CHECK-NEXT: %[[SITE:[0-9]+]] = load i32, ptr %[[P0]]
; CHECK-NEXT: %[[P1:[0-9]+]] = getelementptr inbounds [4 x { i32, ptr, i64 }], ptr @__mnemo_globals_table, i64 0, i64 %[[I]], i32 1
; CHECK-NEXT: %[[G:[0-9]+]] = load ptr, ptr %[[P1]]
; CHECK-NEXT: %[[P2:[0-9]+]] = getelementptr inbounds [4 x { i32, ptr, i64 }], ptr @__mnemo_globals_table, i64 0, i64 %[[I]], i32 2
; CHECK-NEXT: %[[SIZE:[0-9]+]] = load i64, ptr %[[P2]]
; CHECK-NEXT: call void @__mnemo_global(i32 %[[SITE]], ptr %[[G]], i64 %[[SIZE]])
; CHECK-NEXT: %[[NEXT]] = add i64 %[[I]], 1
; CHECK-NEXT: %[[END:[0-9]+]] = icmp eq i64 %[[NEXT]], 4
; CHECK-NEXT: br i1 %[[END]], label %done, label %row
; CHECK: done:
; CHECK-NEXT: ret void

; TABLE:      header=mnemo-sites/3
; TABLE-NEXT: 1|function|f||0|0||0
; TABLE-NEXT: 2|global|||0|0|counter|4
; TABLE-NEXT: 3|global|||0|0|table|200
; TABLE-NEXT: 4|global|||0|0|.str|6
; TABLE-NEXT: 5|global|||0|0|ns::state|16
; TABLE-NEXT: count=5 abi=7
