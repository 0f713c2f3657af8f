; mnemo-use's verdict on each profiled loop (pass/README.md "Remarks"), from a hand-written
; dependence profile (the lines "; PROFILE:" below; matched by location: by kind and order within
; each function) and what each loop carries in registers: a loop is a parallelization candidate
; only if the profile shows no carried memory dependence and its header phis are induction
; variables and reductions LLVM recognizes.  Every loop ran 1000 iterations but @few's.
; RUN: sed -n 's/^; PROFILE: \{0,1\}//p' %s >%t.yaml
; RUN: %opt -passes=mnemo-use -mnemo-use=%t.yaml -mnemo-instrument-all \
; RUN:   -pass-remarks-analysis=mnemo -disable-output %s 2>&1 | FileCheck %s
;
; CHECK: mnemo-use: {{.*}}.yaml: 26 of 26 sites matched (by location)
; CHECK-NEXT: remark: <unknown>:0:0: loop carried no memory dependence in the profile (1000 iterations in 1 invocation): a parallelization candidate{{$}}
; CHECK-NEXT: remark: <unknown>:0:0: loop carried no memory dependence in the profile (1000 iterations in 1 invocation): a parallelization candidate with a reduction of s (+){{$}}
; CHECK-NEXT: remark: <unknown>:0:0: loop carried no memory dependence in the profile (1000 iterations in 1 invocation): a parallelization candidate with a reduction of fs (+){{$}}
; CHECK-NEXT: remark: <unknown>:0:0: loop carried no memory dependence in the profile (1000 iterations in 1 invocation): a parallelization candidate with a reduction of es (+, floating point: in another order it may round differently){{$}}
; CHECK-NEXT: remark: <unknown>:0:0: loop carried no memory dependence in the profile (1000 iterations in 1 invocation): a parallelization candidate with reductions of m (max), u (unsigned min) and any (any-of){{$}}
; CHECK-NEXT: remark: <unknown>:0:0: loop carried no memory dependence in the profile (1000 iterations in 1 invocation): a parallelization candidate; t, a floating-point induction variable, may round differently when computed from the iteration number{{$}}
; CHECK-NEXT: remark: <unknown>:0:0: loop carried no memory dependence in the profile (1000 iterations in 1 invocation), but it is not a parallelization candidate: it carries p from one iteration to the next in a register, neither an induction variable nor a reduction{{$}}
; CHECK-NEXT: remark: <unknown>:0:0: loop carried no memory dependence in the profile (1000 iterations in 1 invocation), but it is not a parallelization candidate: it carries fwd from one iteration to the next in a register, neither an induction variable nor a reduction{{$}}
; CHECK-NEXT: remark: <unknown>:0:0: loop carried no memory dependence in the profile (1000 iterations in 1 invocation), but it is not a parallelization candidate: it carries q, r and s2 from one iteration to the next in registers, neither induction variables nor reductions{{$}}
; CHECK-NEXT: remark: <unknown>:0:0: loop carried memory dependences in the profile (1000 iterations in 1 invocation; 700 at distances 1 to 4): not a parallelization candidate{{$}}
; CHECK-NEXT: remark: <unknown>:0:0: loop carried memory dependences in the profile (1000 iterations in 1 invocation; 998 at distance 2): not a parallelization candidate{{$}}
; @vectorized (vector phis: not judged) and @few (50 iterations) get none.
; CHECK-NOT: remark:

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@a = global [1000 x i64] zeroinitializer
@b = global [1000 x i64] zeroinitializer
@d = global [1000 x double] zeroinitializer

; a[i] = b[i] * 2
define void @indep() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %pb = getelementptr [1000 x i64], ptr @b, i64 0, i64 %i
  %v = load i64, ptr %pb
  %w = shl i64 %v, 1
  %pa = getelementptr [1000 x i64], ptr @a, i64 0, i64 %i
  store i64 %w, ptr %pa
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

; s += a[i]
define i64 @sum() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i64 [ 0, %entry ], [ %s1, %loop ]
  %pa = getelementptr [1000 x i64], ptr @a, i64 0, i64 %i
  %v = load i64, ptr %pa
  %s1 = add i64 %s, %v
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  ret i64 %s1
}

; fs += d[i] with reassociation allowed (-ffast-math)
define double @fsum_fast() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %fs = phi double [ 0.0, %entry ], [ %fs1, %loop ]
  %pd = getelementptr [1000 x double], ptr @d, i64 0, i64 %i
  %v = load double, ptr %pd
  %fs1 = fadd reassoc double %fs, %v
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  ret double %fs1
}

; es += d[i], IEEE (no reassociation)
define double @fsum_exact() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %es = phi double [ 0.0, %entry ], [ %es1, %loop ]
  %pd = getelementptr [1000 x double], ptr @d, i64 0, i64 %i
  %v = load double, ptr %pd
  %es1 = fadd double %es, %v
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  ret double %es1
}

; m = max(m, a[i]); u = min(u, b[i]) unsigned; any = a[i] > 5 ? 1 : any
define i64 @minmax() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %m = phi i64 [ 0, %entry ], [ %m1, %loop ]
  %u = phi i64 [ -1, %entry ], [ %u1, %loop ]
  %any = phi i64 [ 0, %entry ], [ %any1, %loop ]
  %pa = getelementptr [1000 x i64], ptr @a, i64 0, i64 %i
  %v = load i64, ptr %pa
  %m1 = call i64 @llvm.smax.i64(i64 %m, i64 %v)
  %pb = getelementptr [1000 x i64], ptr @b, i64 0, i64 %i
  %w = load i64, ptr %pb
  %u1 = call i64 @llvm.umin.i64(i64 %u, i64 %w)
  %big = icmp sgt i64 %v, 5
  %any1 = select i1 %big, i64 1, i64 %any
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  %r = add i64 %m1, %u1
  %r1 = add i64 %r, %any1
  ret i64 %r1
}

; d[i] = t; t += 0.5 (IEEE)
define void @fpind() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %t = phi double [ 0.0, %entry ], [ %t1, %loop ]
  %pd = getelementptr [1000 x double], ptr @d, i64 0, i64 %i
  store double %t, ptr %pd
  %t1 = fadd double %t, 5.000000e-01
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

; for (p = head; p; p = p->next) n++: the pointer chased is carried
define i64 @chase(ptr %head) {
entry:
  br label %loop
loop:
  %p = phi ptr [ %head, %entry ], [ %next, %loop ]
  %n = phi i64 [ 0, %entry ], [ %n1, %loop ]
  %next = load ptr, ptr %p
  %n1 = add i64 %n, 1
  %c = icmp ne ptr %next, null
  br i1 %c, label %loop, label %exit
exit:
  ret i64 %n1
}

; a[i] = a[i-1] * 3 + 1 after LoopLoadElimination: a[i-1] is the previous iteration's value
define void @forwarded() {
entry:
  %init = load i64, ptr @a
  br label %loop
loop:
  %i = phi i64 [ 1, %entry ], [ %i1, %loop ]
  %fwd = phi i64 [ %init, %entry ], [ %v, %loop ]
  %m = mul i64 %fwd, 3
  %v = add i64 %m, 1
  %pa = getelementptr [1000 x i64], ptr @a, i64 0, i64 %i
  store i64 %v, ptr %pa
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

; Three carried values: q = a[i] (a first-order recurrence), r = r * 3 + q, s2 = s2 + r (not a
; reduction: r depends on the carried q, and s2 feeds the store)
define void @two() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %q = phi i64 [ 0, %entry ], [ %v, %loop ]
  %r = phi i64 [ 1, %entry ], [ %r1, %loop ]
  %s2 = phi i64 [ 0, %entry ], [ %s3, %loop ]
  %pa = getelementptr [1000 x i64], ptr @a, i64 0, i64 %i
  %v = load i64, ptr %pa
  %r0 = mul i64 %r, 3
  %r1 = add i64 %r0, %q
  %s3 = add i64 %s2, %r1
  %pb = getelementptr [1000 x i64], ptr @b, i64 0, i64 %i
  store i64 %s3, ptr %pb
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

; a[h[i]] += 1 in the profile: carried at distances 1 to 4
define void @memdep() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %pb = getelementptr [1000 x i64], ptr @b, i64 0, i64 %i
  %k = load i64, ptr %pb
  %pa = getelementptr [1000 x i64], ptr @a, i64 0, i64 %k
  %v = load i64, ptr %pa
  %v1 = add i64 %v, 1
  store i64 %v1, ptr %pa
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

; a[i] = a[i-2] * 3 + 1: carried in memory at distance 2 (LoopLoadElimination forwards distance
; 1 only), and the loop carries nothing else: the memory dependence is the reason
define void @distance2() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 2, %entry ], [ %i1, %loop ]
  %i2 = add i64 %i, -2
  %pa2 = getelementptr [1000 x i64], ptr @a, i64 0, i64 %i2
  %v = load i64, ptr %pa2
  %m = mul i64 %v, 3
  %w = add i64 %m, 1
  %pa = getelementptr [1000 x i64], ptr @a, i64 0, i64 %i
  store i64 %w, ptr %pa
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

; A vectorized sum: its vector phis are not judged, so no verdict (never a wrong "candidate")
define i64 @vectorized() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %vs = phi <2 x i64> [ zeroinitializer, %entry ], [ %vs1, %loop ]
  %pa = getelementptr [1000 x i64], ptr @a, i64 0, i64 %i
  %v = load <2 x i64>, ptr %pa
  %vs1 = add <2 x i64> %vs, %v
  %i1 = add nuw nsw i64 %i, 2
  %c = icmp ult i64 %i1, 1000
  br i1 %c, label %loop, label %exit
exit:
  %r = call i64 @llvm.vector.reduce.add.v2i64(<2 x i64> %vs1)
  ret i64 %r
}

; Below -mnemo-use-remark-min (100 iterations): no remark
define void @few() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %pa = getelementptr [1000 x i64], ptr @a, i64 0, i64 %i
  store i64 %i, ptr %pa
  %i1 = add nuw nsw i64 %i, 1
  %c = icmp ult i64 %i1, 50
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

declare i64 @llvm.smax.i64(i64, i64)
declare i64 @llvm.umin.i64(i64, i64)
declare i64 @llvm.vector.reduce.add.v2i64(<2 x i64>)

; PROFILE: format: mnemo-profile/1
; PROFILE: program: {argv: [t]}
; PROFILE: complete: true
; PROFILE: sites:
; PROFILE:   1: {kind: function, function: indep, file: "", line: 0, column: 0}
; PROFILE:   2: {kind: loop, function: indep, file: "", line: 0, column: 0}
; PROFILE:   3: {kind: function, function: sum, file: "", line: 0, column: 0}
; PROFILE:   4: {kind: loop, function: sum, file: "", line: 0, column: 0}
; PROFILE:   5: {kind: function, function: fsum_fast, file: "", line: 0, column: 0}
; PROFILE:   6: {kind: loop, function: fsum_fast, file: "", line: 0, column: 0}
; PROFILE:   7: {kind: function, function: fsum_exact, file: "", line: 0, column: 0}
; PROFILE:   8: {kind: loop, function: fsum_exact, file: "", line: 0, column: 0}
; PROFILE:   9: {kind: function, function: minmax, file: "", line: 0, column: 0}
; PROFILE:   10: {kind: loop, function: minmax, file: "", line: 0, column: 0}
; PROFILE:   11: {kind: function, function: fpind, file: "", line: 0, column: 0}
; PROFILE:   12: {kind: loop, function: fpind, file: "", line: 0, column: 0}
; PROFILE:   13: {kind: function, function: chase, file: "", line: 0, column: 0}
; PROFILE:   14: {kind: loop, function: chase, file: "", line: 0, column: 0}
; PROFILE:   15: {kind: function, function: forwarded, file: "", line: 0, column: 0}
; PROFILE:   16: {kind: loop, function: forwarded, file: "", line: 0, column: 0}
; PROFILE:   17: {kind: function, function: two, file: "", line: 0, column: 0}
; PROFILE:   18: {kind: loop, function: two, file: "", line: 0, column: 0}
; PROFILE:   19: {kind: function, function: memdep, file: "", line: 0, column: 0}
; PROFILE:   20: {kind: loop, function: memdep, file: "", line: 0, column: 0}
; PROFILE:   21: {kind: function, function: distance2, file: "", line: 0, column: 0}
; PROFILE:   22: {kind: loop, function: distance2, file: "", line: 0, column: 0}
; PROFILE:   23: {kind: function, function: vectorized, file: "", line: 0, column: 0}
; PROFILE:   24: {kind: loop, function: vectorized, file: "", line: 0, column: 0}
; PROFILE:   25: {kind: function, function: few, file: "", line: 0, column: 0}
; PROFILE:   26: {kind: loop, function: few, file: "", line: 0, column: 0}
; PROFILE: modules:
; PROFILE:   dependence:
; PROFILE:     loops:
; PROFILE:     - {loop: 2, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 4, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 6, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 8, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 10, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 12, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 14, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 16, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 18, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 20, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 22, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 24, invocations: 1, iterations: 1000}
; PROFILE:     - {loop: 26, invocations: 1, iterations: 50}
; PROFILE:     dependences:
; PROFILE:     - {loop: 20, kind: raw, src: 0, dst: 0, carried: true, count: 600, min_distance: 1, max_distance: 4}
; PROFILE:     - {loop: 20, kind: war, src: 0, dst: 0, carried: true, count: 100, min_distance: 2, max_distance: 3}
; PROFILE:     - {loop: 20, kind: raw, src: 0, dst: 0, carried: false, count: 1000}
; PROFILE:     - {loop: 22, kind: raw, src: 0, dst: 0, carried: true, count: 998, min_distance: 2, max_distance: 2}
