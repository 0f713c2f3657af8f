; mnemo-use on IR with a hand-written profile (the lines "; PROFILE:" below, no `binary:`, so
; sites match by location: no debug information, so by kind and order within @f): the metadata
; of pass/README.md "Metadata", the entry count and PGOMemOPSizeOpt's size-16 case.
; RUN: sed -n 's/^; PROFILE: \{0,1\}//p' %s >%t.yaml
; RUN: %opt -passes=mnemo-use -mnemo-use=%t.yaml -mnemo-instrument-all -S %s 2>%t.err \
; RUN:   | FileCheck %s
; RUN: FileCheck %s --check-prefix=MATCH <%t.err
; MATCH: mnemo-use: {{.*}}.yaml: 6 of 6 sites matched (by location)
; MATCH-NOT: warning
;
; A section that does not match its schema is left out, with the place and the field; the
; others are used:
; RUN: sed 's/iterations: 1000}/iterations: many}/' %t.yaml >%t.bad.yaml
; RUN: %opt -passes=mnemo-use -mnemo-use=%t.bad.yaml -mnemo-instrument-all -S %s 2>%t.err \
; RUN:   | FileCheck %s --check-prefix=BADSEC
; RUN: FileCheck %s --check-prefix=BADSECERR <%t.err
; BADSECERR: mnemo-use: error: {{.*}}.bad.yaml:{{[0-9]+}}:{{[0-9]+}}: field 'iterations': expected {{.*}}'many' (the dependence section is not used)
; BADSEC: load i32, ptr @g, align 4, !mnemo.site !{{[0-9]+}}, !mnemo.constant
; BADSEC-NOT: mnemo.loop
;
; A profile that cannot be read: one error naming it, and the module unchanged.
; RUN: %opt -passes=mnemo-use -mnemo-use=%t.none.yaml -mnemo-instrument-all -S %s 2>%t.err \
; RUN:   | FileCheck %s --check-prefix=NONE
; RUN: FileCheck %s --check-prefix=NONEERR <%t.err
; NONEERR: mnemo-use: error: {{.*}}none.yaml{{.*}} (building without the profile)
; NONE-NOT: mnemo.

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@g = global i32 7
@arr = global [1000 x i32] zeroinitializer

; Ids (pass/README.md "Site ids"): 1 @f, 2 the loop, 3 the load, 4 the store, 5 and 6 the
; memcpy's source load and destination store, 7 malloc; the globals 8, 9.
; CHECK: define void @f(ptr %d, ptr %s, i64 %n) !prof ![[ENTRY:[0-9]+]] {
; CHECK: load i32, ptr @g, align 4, !mnemo.site ![[S3:[0-9]+]], !mnemo.constant ![[CONST:[0-9]+]], !mnemo.stride ![[STRIDE0:[0-9]+]]
; CHECK: store i32 %v, ptr %p, align 4, !mnemo.site ![[S4:[0-9]+]], !mnemo.stride ![[STRIDE4:[0-9]+]]
; CHECK: br i1 %c, label %loop, label %exit, !llvm.loop ![[LOOP:[0-9]+]]
; CHECK: switch i64 %n, label %MemOP.Default [
; CHECK-NEXT: i64 16, label %MemOP.Case.16
; CHECK: MemOP.Case.16:
; CHECK-NEXT: call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 16, i1 false)
; CHECK: call ptr @malloc(i64 16), !mnemo.site ![[S7:[0-9]+]], !mnemo.rds ![[RDS:[0-9]+]]
; CHECK-DAG: ![[ENTRY]] = !{!"function_entry_count", i64 2000}
; CHECK-DAG: ![[S3]] = !{i32 3}
; CHECK-DAG: ![[CONST]] = !{i64 7, i64 1000}
; CHECK-DAG: ![[STRIDE0]] = !{i64 0, double 1.000000e+00, i64 1000}
; CHECK-DAG: ![[S4]] = !{i32 4}
; CHECK-DAG: ![[STRIDE4]] = !{i64 4, double {{.*}}, i64 1000}
; CHECK-DAG: ![[LOOP]] = distinct !{![[LOOP]], ![[LOOPRUNS:[0-9]+]], ![[LOOPDEP:[0-9]+]]}
; CHECK-DAG: ![[LOOPRUNS]] = !{!"mnemo.loop", i32 2, i64 1, i64 1000}
; CHECK-DAG: ![[LOOPDEP]] = !{!"mnemo.dependence", i64 0, i64 0}
; CHECK-DAG: ![[S7]] = !{i32 7}
; CHECK-DAG: ![[RDS]] = !{i64 1, i1 true, i64 1, i64 10, i64 50, i64 1}
define void @f(ptr %d, ptr %s, i64 %n) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %v = load i32, ptr @g
  %p = getelementptr [1000 x i32], ptr @arr, i64 0, i64 %i
  store i32 %v, ptr %p
  %i1 = add i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit

exit:
  call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 %n, i1 false)
  %m = call ptr @malloc(i64 16)
  ret void
}

declare ptr @malloc(i64)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

; PROFILE: format: mnemo-profile/1
; PROFILE: program: {argv: [t]}
; PROFILE: complete: true
; PROFILE: sites:
; PROFILE:   1: {kind: function, function: f, file: "", line: 0, column: 0}
; PROFILE:   2: {kind: loop, function: f, file: "", line: 0, column: 0}
; PROFILE:   3: {kind: load, function: f, file: "", line: 0, column: 0, loop: 2}
; PROFILE:   4: {kind: store, function: f, file: "", line: 0, column: 0, loop: 2}
; PROFILE:   6: {kind: store, function: f, file: "", line: 0, column: 0, name: memcpy}
; PROFILE:   7: {kind: alloc, function: f, file: "", line: 0, column: 0, name: malloc}
; PROFILE: modules:
; PROFILE:   dependence:
; PROFILE:     loops:
; PROFILE:     - {loop: 2, invocations: 1, iterations: 1000}
; PROFILE:     dependences: []
; PROFILE:   value-pattern:
; PROFILE:     entries:
; PROFILE:     - {site: 3, access: load, executions: 1000, constant: true, value: 7, distinct: 1, distinct_capped: false, stride: 0, stride_fraction: 1.0, strongly_strided: true}
; PROFILE:     - {site: 4, access: store, executions: 1000, constant: false, distinct: 16, distinct_capped: true, stride: 4, stride_fraction: 0.999, strongly_strided: true}
; PROFILE:     functions:
; PROFILE:     - {site: 1, entries: 2000}
; PROFILE:     memops:
; PROFILE:     - {site: 6, op: memcpy, executions: 2000, sizes: [{size: 16, count: 1900}, {size: 8, count: 100}], other: 0}
; PROFILE:   rds-shape:
; PROFILE:     types:
; PROFILE:     - {type: 1, alloc_site: 7, sites: [7], instances: 1, nodes: 10, traversals: 50, avg_stability_factor: 1.0, max_stability_factor: 1}
