; Loop summaries (README.md, "Loop summaries"): a loop whose every access runs
; once per iteration at an affine address, and that calls nothing, sends one
; record per access and one for the loop at each exit instead of its per-access
; events and loop_invoke/iter/exit.  Made from C at -O2 with -fno-unroll-loops
; -fno-vectorize -fno-slp-vectorize, metadata stripped.
; Plan (abi.h): loads, stores and their _ptr forms summarizable, pointer_create
; empty, loop events sent, on: 1|1<<2|1<<4|1<<6|1<<10|1<<31 = 2147484757.
; Prefix LOADS, the same with loads per access (a module takes their values).
; Prefix OFF, no plan in the module: nothing is summarized.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-summary-plan=2147484757 \
; RUN:   -S %s | FileCheck %s
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-summary-plan=2147484758 \
; RUN:   -S %s | FileCheck --check-prefix=LOADS %s
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -S %s | FileCheck --check-prefix=OFF %s
; Prefix CHECKED, every access checks its value (state 3, a module takes
; `value`): the loop is summarized with __mnemo_value at each access, and gets
; a copy without them, taken when __mnemo_value_done says so for every site.
; RUN: %opt -passes=mnemo-instrument,verify -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-summary-plan=2147484927 \
; RUN:   -S %s | FileCheck --check-prefix=CHECKED %s
; Prefix MIXED, the first plan with mixed loops on (bit 30): a loop whose other
; accesses are conditional, indirect or volatile summarizes its affine ones and
; sends the others with their iteration and rank.  Prefix MIXEDLOADS, the same
; with loads per access: a load that sends its value keeps its loop per access.
; RUN: %opt -passes=mnemo-instrument,verify -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-summary-plan=3221226581 \
; RUN:   -S %s | FileCheck --check-prefix=MIXED %s
; RUN: %opt -passes=mnemo-instrument,verify -mnemo-instrument-all \
; RUN:   -mnemo-instrument-functions=false -mnemo-summary-plan=3221226582 \
; RUN:   -S %s | FileCheck --check-prefix=MIXEDLOADS %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Plain affine loop: the per-access calls and the loop's events go; at the
; exit, one record per access in iteration order (start, step, size), then the
; loop's with the iterations counted from the header.  The guard's bypass of
; the loop sends nothing.
; CHECK-LABEL: define void @affine(
; CHECK:       for.cond.cleanup.loopexit:
; CHECK-NEXT:  call void @__mnemo_loop_summary_load(i32 3, ptr %x, i64 4, i32 4)
; CHECK-NEXT:  call void @__mnemo_loop_summary_load(i32 4, ptr %y, i64 4, i32 4)
; CHECK-NEXT:  call void @__mnemo_loop_summary_store(i32 5, ptr %y, i64 4, i32 4)
; CHECK-NEXT:  call void @__mnemo_loop_summary(i32 2, i32 3, i64 %mnemo.iter.next)
; CHECK-NEXT:  br label %for.cond.cleanup
; CHECK:       for.cond.cleanup:
; CHECK-NEXT:  ret void
; CHECK:       for.body:
; CHECK-NEXT:  %mnemo.iter = phi i64 [ 0, %for.body.preheader ], [ %mnemo.iter.next, %for.body ]
; CHECK:       %mnemo.iter.next = add nuw i64 %mnemo.iter, 1
; CHECK-NOT:   call void @__mnemo
; CHECK:       }
; LOADS-LABEL: define void @affine(
; LOADS:       call void @__mnemo_loop_iter(i32 2)
; LOADS:       call void @__mnemo_load(i32 3,
; LOADS-NOT:   @__mnemo_loop_summary
; LOADS:       }
; CHECKED-LABEL: define void @affine(
; CHECKED:       for.body.preheader:
; CHECKED-NEXT:  %[[D3:.*]] = call i32 @__mnemo_value_done(i32 3)
; CHECKED:       call i32 @__mnemo_value_done(i32 4)
; CHECKED:       call i32 @__mnemo_value_done(i32 5)
; CHECKED:       br i1 %{{.*}}, label %for.body.preheader.split.mnemo.fast, label %for.body.preheader.split
; CHECKED:       for.body.mnemo.fast:
; CHECKED-NOT:   call void @__mnemo
; CHECKED:       br i1 %exitcond.not.mnemo.fast, label %for.cond.cleanup.loopexit.mnemo.fast, label %for.body.mnemo.fast
; CHECKED:       for.cond.cleanup.loopexit:
; CHECKED-NEXT:  %[[N:.*]] = phi i64 [ %mnemo.iter.next.mnemo.fast, %for.cond.cleanup.loopexit.mnemo.fast ], [ %mnemo.iter.next, %for.cond.cleanup.loopexit.mnemo.checked ]
; CHECKED-NEXT:  call void @__mnemo_loop_summary_load(i32 3, ptr %x, i64 4, i32 4)
; CHECKED-NEXT:  call void @__mnemo_loop_summary_load(i32 4, ptr %y, i64 4, i32 4)
; CHECKED-NEXT:  call void @__mnemo_loop_summary_store(i32 5, ptr %y, i64 4, i32 4)
; CHECKED-NEXT:  call void @__mnemo_loop_summary(i32 2, i32 3, i64 %[[N]])
; CHECKED:       for.body:
; CHECKED-NOT:   call void @__mnemo_load
; CHECKED:       call void @__mnemo_value(i32 3, i64
; CHECKED:       call void @__mnemo_value(i32 4, i64
; CHECKED:       call void @__mnemo_value(i32 5, i64
; CHECKED-NEXT:  store float
; CHECKED-NOT:   call void @__mnemo
; CHECKED:       }
; OFF-LABEL:   define void @affine(
; OFF-NOT:     @__mnemo_loop_summary
; OFF:         }
define void @affine(i64 noundef %n, float noundef %a, ptr noalias nocapture noundef readonly %x, ptr noalias nocapture noundef %y) {
entry:
  %cmp8 = icmp sgt i64 %n, 0
  br i1 %cmp8, label %for.body, label %for.cond.cleanup

for.cond.cleanup:                                 ; preds = %for.body, %entry
  ret void

for.body:                                         ; preds = %entry, %for.body
  %i.09 = phi i64 [ %inc, %for.body ], [ 0, %entry ]
  %arrayidx = getelementptr inbounds float, ptr %x, i64 %i.09
  %0 = load float, ptr %arrayidx, align 4
  %arrayidx1 = getelementptr inbounds float, ptr %y, i64 %i.09
  %1 = load float, ptr %arrayidx1, align 4
  %2 = tail call float @llvm.fmuladd.f32(float %a, float %0, float %1)
  store float %2, ptr %arrayidx1, align 4
  %inc = add nuw nsw i64 %i.09, 1
  %exitcond.not = icmp eq i64 %inc, %n
  br i1 %exitcond.not, label %for.cond.cleanup, label %for.body
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fmuladd.f32(float, float, float)

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: readwrite) uwtable
; A nest: the inner loop is summarized, its start computed from the outer
; loop's induction variable before it; the outer loop keeps its events.
; CHECK-LABEL: define void @nest(
; CHECK:       call void @__mnemo_loop_invoke(i32 7)
; CHECK:       for.cond1.preheader:
; CHECK:       call void @__mnemo_loop_iter(i32 7)
; CHECK:       %[[ROW:.*]] = mul i64 %{{.*}}, %i.017
; CHECK:       %[[START:.*]] = getelementptr i8, ptr %a, i64 %[[ROW]]
; CHECK:       call void @__mnemo_loop_exit(i32 7)
; CHECK:       for.cond.cleanup3.loopexit:
; CHECK-NEXT:  call void @__mnemo_loop_summary_load(i32 9, ptr %[[START]], i64 8, i32 8)
; CHECK-NEXT:  call void @__mnemo_loop_summary_store(i32 10, ptr %[[START]], i64 8, i32 8)
; CHECK-NEXT:  call void @__mnemo_loop_summary(i32 8, i32 2, i64 %mnemo.iter.next)
; CHECK:       for.body4:
; CHECK-NOT:   call void @__mnemo
; CHECK:       }
define void @nest(i64 noundef %n, i64 noundef %m, ptr nocapture noundef %a) {
entry:
  %cmp16 = icmp sgt i64 %n, 0
  br i1 %cmp16, label %for.cond1.preheader.lr.ph, label %for.cond.cleanup

for.cond1.preheader.lr.ph:                        ; preds = %entry
  %cmp214 = icmp sgt i64 %m, 0
  br label %for.cond1.preheader

for.cond1.preheader:                              ; preds = %for.cond1.preheader.lr.ph, %for.cond.cleanup3
  %i.017 = phi i64 [ 0, %for.cond1.preheader.lr.ph ], [ %inc7, %for.cond.cleanup3 ]
  br i1 %cmp214, label %for.body4.lr.ph, label %for.cond.cleanup3

for.body4.lr.ph:                                  ; preds = %for.cond1.preheader
  %mul = mul nuw nsw i64 %i.017, %m
  %0 = getelementptr double, ptr %a, i64 %mul
  br label %for.body4

for.cond.cleanup:                                 ; preds = %for.cond.cleanup3, %entry
  ret void

for.cond.cleanup3:                                ; preds = %for.body4, %for.cond1.preheader
  %inc7 = add nuw nsw i64 %i.017, 1
  %exitcond18.not = icmp eq i64 %inc7, %n
  br i1 %exitcond18.not, label %for.cond.cleanup, label %for.cond1.preheader

for.body4:                                        ; preds = %for.body4.lr.ph, %for.body4
  %j.015 = phi i64 [ 0, %for.body4.lr.ph ], [ %inc, %for.body4 ]
  %arrayidx = getelementptr double, ptr %0, i64 %j.015
  %1 = load double, ptr %arrayidx, align 8
  %add5 = fadd double %1, 1.000000e+00
  store double %add5, ptr %arrayidx, align 8
  %inc = add nuw nsw i64 %j.015, 1
  %exitcond.not = icmp eq i64 %inc, %m
  br i1 %exitcond.not, label %for.cond.cleanup3, label %for.body4
}

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read) uwtable
; Left by break: the load runs before both ways out, so every iteration,
; the last included, has it.
; CHECK-LABEL: define i64 @search(
; CHECK:       for.end.loopexit:
; CHECK:       call void @__mnemo_loop_summary_load(i32 13, ptr %p, i64 8, i32 8)
; CHECK-NEXT:  call void @__mnemo_loop_summary(i32 12, i32 1, i64 %mnemo.iter.next)
; CHECK-NOT:   call void @__mnemo_load
; CHECK:       }
define i64 @search(i64 noundef %n, ptr nocapture noundef readonly %p, i64 noundef %key) {
entry:
  %cmp5 = icmp sgt i64 %n, 0
  br i1 %cmp5, label %for.body, label %for.end

for.body:                                         ; preds = %entry, %for.inc
  %i.06 = phi i64 [ %inc, %for.inc ], [ 0, %entry ]
  %arrayidx = getelementptr inbounds i64, ptr %p, i64 %i.06
  %0 = load i64, ptr %arrayidx, align 8
  %cmp1 = icmp eq i64 %0, %key
  br i1 %cmp1, label %for.end, label %for.inc

for.inc:                                          ; preds = %for.body
  %inc = add nuw nsw i64 %i.06, 1
  %exitcond.not = icmp eq i64 %inc, %n
  br i1 %exitcond.not, label %for.end, label %for.body

for.end:                                          ; preds = %for.inc, %for.body, %entry
  %i.0.lcssa = phi i64 [ 0, %entry ], [ %i.06, %for.body ], [ %n, %for.inc ]
  ret i64 %i.0.lcssa
}

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: read) uwtable
; Trip count unknown at entry: the iterations are counted as they run.
; CHECK-LABEL: define i64 @unknown_trips(
; CHECK:       while.end:
; CHECK-NEXT:  call void @__mnemo_loop_summary_load(i32 16, ptr %s, i64 1, i32 1)
; CHECK-NEXT:  call void @__mnemo_loop_summary(i32 15, i32 1, i64 %mnemo.iter.next)
define i64 @unknown_trips(ptr nocapture noundef readonly %s) {
entry:
  br label %while.cond

while.cond:                                       ; preds = %while.cond, %entry
  %i.0 = phi i64 [ 0, %entry ], [ %inc, %while.cond ]
  %arrayidx = getelementptr inbounds i8, ptr %s, i64 %i.0
  %0 = load i8, ptr %arrayidx, align 1
  %tobool.not = icmp eq i8 %0, 0
  %inc = add nuw nsw i64 %i.0, 1
  br i1 %tobool.not, label %while.end, label %while.cond

while.end:                                        ; preds = %while.cond
  ret i64 %i.0
}

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: write) uwtable
; A negative stride: the walk starts at p + 4n and steps -4.
; CHECK-LABEL: define void @negative(
; CHECK:       %[[BYTES:.*]] = shl i64 %n, 2
; CHECK-NEXT:  %[[END:.*]] = getelementptr i8, ptr %p, i64 %[[BYTES]]
; CHECK:       call void @__mnemo_loop_summary_store(i32 19, ptr %[[END]], i64 -4, i32 4)
; CHECK-NEXT:  call void @__mnemo_loop_summary(i32 18, i32 1, i64 %mnemo.iter.next)
define void @negative(i64 noundef %n, ptr nocapture noundef writeonly %p) {
entry:
  %cmp4 = icmp sgt i64 %n, 0
  br i1 %cmp4, label %for.body, label %for.cond.cleanup

for.cond.cleanup:                                 ; preds = %for.body, %entry
  ret void

for.body:                                         ; preds = %entry, %for.body
  %i.05 = phi i64 [ %dec, %for.body ], [ %n, %entry ]
  %conv = trunc i64 %i.05 to i32
  %arrayidx = getelementptr inbounds i32, ptr %p, i64 %i.05
  store i32 %conv, ptr %arrayidx, align 4
  %dec = add nsw i64 %i.05, -1
  %cmp = icmp ugt i64 %i.05, 1
  br i1 %cmp, label %for.body, label %for.cond.cleanup
}

; Function Attrs: nounwind uwtable
; A zero stride: the same address every iteration.
; CHECK-LABEL: define void @zero_stride(
; CHECK:       exit:
; CHECK-NEXT:  call void @__mnemo_loop_summary_load(i32 22, ptr %p, i64 0, i32 4)
; CHECK-NEXT:  call void @__mnemo_loop_summary_store(i32 23, ptr %q, i64 4, i32 4)
; CHECK-NEXT:  call void @__mnemo_loop_summary(i32 21, i32 2, i64 %mnemo.iter.next)
define void @zero_stride(i64 %n, ptr %p, ptr %q) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %v = load i32, ptr %p, align 4
  %a = getelementptr inbounds i32, ptr %q, i64 %i
  store i32 %v, ptr %a, align 4
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:
  ret void
}

; A volatile access keeps the loop per access.
; MIXED-LABEL: define void @vol(
; MIXED:       for.body.preheader:
; MIXED:       call void @__mnemo_loop_summary_store(i32 26, ptr %scevgep, i64 -4, i32 4)
; MIXED-NEXT:  call void @__mnemo_loop_summary_open(i32 25, i32 1)
; MIXED-NEXT:  br label %for.body
; MIXED:       for.cond.cleanup.loopexit:
; MIXED-NEXT:  call void @__mnemo_loop_summary_close(i32 25, i64 %mnemo.iter.next)
; MIXED:       for.body:
; MIXED-NEXT:  %mnemo.iter = phi i64 [ 0, %for.body.preheader ], [ %mnemo.iter.next, %for.body ]
; MIXED-NOT:   call void @__mnemo_loop_iter
; MIXED:       store i32 3, ptr %arrayidx
; MIXED-NEXT:  call void @__mnemo_mixed_store(i32 27, ptr %v, i32 4, i64 %mnemo.iter, i32 1)
; MIXED-NEXT:  store volatile i32 1, ptr %v
; MIXED:       }
; CHECK-LABEL: define void @vol(
; CHECK-NOT:   @__mnemo_loop_summary
; CHECK:       call void @__mnemo_loop_iter(i32 25)
; CHECK:       call void @__mnemo_store(i32 26,
; CHECK:       call void @__mnemo_store(i32 27,
define void @vol(i64 noundef %n, ptr nocapture noundef writeonly %p, ptr noundef %v) {
entry:
  %cmp3 = icmp sgt i64 %n, 0
  br i1 %cmp3, label %for.body, label %for.cond.cleanup

for.cond.cleanup:                                 ; preds = %for.body, %entry
  ret void

for.body:                                         ; preds = %entry, %for.body
  %i.04 = phi i64 [ %dec, %for.body ], [ %n, %entry ]
  %arrayidx = getelementptr inbounds i32, ptr %p, i64 %i.04
  store i32 3, ptr %arrayidx, align 4
  store volatile i32 1, ptr %v, align 4
  %dec = add nsw i64 %i.04, -1
  %cmp = icmp ugt i64 %i.04, 1
  br i1 %cmp, label %for.body, label %for.cond.cleanup
}

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: readwrite) uwtable
; A conditional access does not run in every iteration: per access.
; MIXED-LABEL: define void @cond(
; MIXED:       call void @__mnemo_loop_summary_load(i32 30, ptr %q, i64 4, i32 4)
; MIXED-NEXT:  call void @__mnemo_loop_summary_open(i32 29, i32 1)
; MIXED:       call void @__mnemo_loop_summary_close(i32 29, i64 %mnemo.iter.next)
; MIXED:       if.then:
; MIXED:       call void @__mnemo_mixed_store(i32 31, ptr %arrayidx1, i32 4, i64 %mnemo.iter, i32 1)
; MIXED-NOT:   call void @__mnemo
; MIXED:       }
; CHECK-LABEL: define void @cond(
; CHECK-NOT:   @__mnemo_loop_summary
; CHECK:       call void @__mnemo_loop_iter(i32 29)
; CHECK:       call void @__mnemo_load(i32 30,
; CHECK:       call void @__mnemo_store(i32 31,
define void @cond(i64 noundef %n, ptr nocapture noundef writeonly %p, ptr nocapture noundef readonly %q) {
entry:
  %cmp5 = icmp sgt i64 %n, 0
  br i1 %cmp5, label %for.body, label %for.cond.cleanup

for.cond.cleanup:                                 ; preds = %for.inc, %entry
  ret void

for.body:                                         ; preds = %entry, %for.inc
  %i.06 = phi i64 [ %inc, %for.inc ], [ 0, %entry ]
  %arrayidx = getelementptr inbounds i32, ptr %q, i64 %i.06
  %0 = load i32, ptr %arrayidx, align 4
  %tobool.not = icmp eq i32 %0, 0
  br i1 %tobool.not, label %for.inc, label %if.then

if.then:                                          ; preds = %for.body
  %arrayidx1 = getelementptr inbounds i32, ptr %p, i64 %i.06
  store i32 1, ptr %arrayidx1, align 4
  br label %for.inc

for.inc:                                          ; preds = %for.body, %if.then
  %inc = add nuw nsw i64 %i.06, 1
  %exitcond.not = icmp eq i64 %inc, %n
  br i1 %exitcond.not, label %for.cond.cleanup, label %for.body
}

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: readwrite) uwtable
; An indirect access (bins[d[i]]) is not affine: per access.
; MIXED-LABEL: define void @indirect(
; MIXED:       call void @__mnemo_loop_summary_load(i32 34, ptr %d, i64 1, i32 1)
; MIXED-NEXT:  call void @__mnemo_loop_summary_open(i32 33, i32 1)
; MIXED:       call void @__mnemo_loop_summary_close(i32 33, i64 %mnemo.iter.next)
; MIXED:       %1 = load i32, ptr %arrayidx1
; MIXED-NEXT:  call void @__mnemo_mixed_load(i32 35, ptr %arrayidx1, i32 4, i64 %mnemo.iter, i32 1)
; MIXED:       call void @__mnemo_mixed_store(i32 36, ptr %arrayidx1, i32 4, i64 %mnemo.iter, i32 1)
; MIXED-NEXT:  store i32 %inc, ptr %arrayidx1
; MIXED:       }
; MIXEDLOADS-LABEL: define void @indirect(
; MIXEDLOADS-NOT:   @__mnemo_loop_summary
; MIXEDLOADS-NOT:   @__mnemo_mixed
; MIXEDLOADS:       call void @__mnemo_loop_iter(i32 33)
; MIXEDLOADS:       call void @__mnemo_load(i32 34,
; MIXEDLOADS:       }
; CHECK-LABEL: define void @indirect(
; CHECK-NOT:   @__mnemo_loop_summary
; CHECK:       call void @__mnemo_loop_iter(i32 33)
; CHECK:       call void @__mnemo_load(i32 34,
; CHECK:       call void @__mnemo_load(i32 35,
; CHECK:       call void @__mnemo_store(i32 36,
define void @indirect(i64 noundef %n, ptr nocapture noundef %bins, ptr nocapture noundef readonly %d) {
entry:
  %cmp5 = icmp sgt i64 %n, 0
  br i1 %cmp5, label %for.body, label %for.cond.cleanup

for.cond.cleanup:                                 ; preds = %for.body, %entry
  ret void

for.body:                                         ; preds = %entry, %for.body
  %i.06 = phi i64 [ %inc2, %for.body ], [ 0, %entry ]
  %arrayidx = getelementptr inbounds i8, ptr %d, i64 %i.06
  %0 = load i8, ptr %arrayidx, align 1
  %idxprom = zext i8 %0 to i64
  %arrayidx1 = getelementptr inbounds i32, ptr %bins, i64 %idxprom
  %1 = load i32, ptr %arrayidx1, align 4
  %inc = add nsw i32 %1, 1
  store i32 %inc, ptr %arrayidx1, align 4
  %inc2 = add nuw nsw i64 %i.06, 1
  %exitcond.not = icmp eq i64 %inc2, %n
  br i1 %exitcond.not, label %for.cond.cleanup, label %for.body
}

; Function Attrs: nounwind uwtable
; A call in the body may make events of its own: per access.
; MIXED-LABEL: define void @call(
; MIXED-NOT:   @__mnemo_loop_summary
; MIXED-NOT:   @__mnemo_mixed
; MIXED:       call void @__mnemo_loop_iter(i32 38)
; MIXED:       }
; CHECK-LABEL: define void @call(
; CHECK-NOT:   @__mnemo_loop_summary
; CHECK:       call void @__mnemo_loop_iter(i32 38)
; CHECK:       call void @__mnemo_store(i32 39,
; CHECK:       call void @work(
define void @call(i64 noundef %n, ptr nocapture noundef writeonly %p) {
entry:
  %cmp4 = icmp sgt i64 %n, 0
  br i1 %cmp4, label %for.body, label %for.cond.cleanup

for.cond.cleanup:                                 ; preds = %for.body, %entry
  ret void

for.body:                                         ; preds = %entry, %for.body
  %i.05 = phi i64 [ %inc, %for.body ], [ 0, %entry ]
  %arrayidx = getelementptr inbounds i32, ptr %p, i64 %i.05
  store i32 0, ptr %arrayidx, align 4
  tail call void @work(i64 noundef %i.05)
  %inc = add nuw nsw i64 %i.05, 1
  %exitcond.not = icmp eq i64 %inc, %n
  br i1 %exitcond.not, label %for.cond.cleanup, label %for.body
}

declare void @work(i64 noundef)



; Function Attrs: nofree norecurse nosync nounwind memory(argmem: readwrite) uwtable
; A conditional load before the affine store: in a mixed loop, rank 0.
; MIXED-LABEL: define void @before(
; MIXED:       call void @__mnemo_loop_summary_store(i32 43, ptr %q, i64 4, i32 4)
; MIXED-NEXT:  call void @__mnemo_loop_summary_open(i32 41, i32 1)
; MIXED:       if.then:
; MIXED-NEXT:  %v = load i32, ptr %r
; MIXED-NEXT:  call void @__mnemo_mixed_load(i32 42, ptr %r, i32 4, i64 %mnemo.iter, i32 0)
; MIXED:       for.inc:
; MIXED-NEXT:  store i32 0, ptr %qi
; MIXED:       }
; CHECK-LABEL: define void @before(
; CHECK-NOT:   @__mnemo_loop_summary
; CHECK:       call void @__mnemo_loop_iter(i32 41)
; CHECK:       call void @__mnemo_load(i32 42,
; CHECK:       call void @__mnemo_store(i32 43,
define void @before(i64 noundef %n, ptr nocapture noundef writeonly %q, ptr nocapture noundef readonly %r) {
entry:
  %c0 = icmp sgt i64 %n, 0
  br i1 %c0, label %for.body, label %for.cond.cleanup

for.cond.cleanup:
  ret void

for.body:
  %i = phi i64 [ 0, %entry ], [ %inc, %for.inc ]
  %qi = getelementptr inbounds i32, ptr %q, i64 %i
  %t = and i64 %i, 1
  %odd = icmp ne i64 %t, 0
  br i1 %odd, label %if.then, label %for.inc

if.then:
  %v = load i32, ptr %r, align 4
  br label %for.inc

for.inc:
  store i32 0, ptr %qi, align 4
  %inc = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %inc, %n
  br i1 %done, label %for.cond.cleanup, label %for.body
}
