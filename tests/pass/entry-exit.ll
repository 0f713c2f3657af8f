; Function entry after the entry block's allocas; function exit on every way
; out: each ret, each resume, and unwinding through a call that may throw
; (EscapeEnumerator turns it into an invoke to a cleanup that exits and
; resumes).  Before a musttail call, not between it and its ret.
; RUN: %opt -passes=mnemo-instrument -mnemo-instrument-all \
; RUN:   -mnemo-instrument-stack=false -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; CHECK-LABEL: define i32 @two_returns(
; CHECK-NEXT: entry:
; CHECK-NEXT: %x = alloca i32
; CHECK-NEXT: call void @__mnemo_func_entry(i32 1)
; CHECK-NEXT: br i1 %c
; CHECK:      a:
; CHECK-NEXT: call void @__mnemo_func_exit(i32 1)
; CHECK-NEXT: ret i32 1
; CHECK:      b:
; CHECK-NEXT: call void @__mnemo_func_exit(i32 1)
; CHECK-NEXT: ret i32 2
; CHECK-NOT:  mnemo.cleanup
define i32 @two_returns(i1 %c) nounwind {
entry:
  %x = alloca i32
  br i1 %c, label %a, label %b
a:
  ret i32 1
b:
  ret i32 2
}

; An existing landing pad: exit before its resume; the call that may throw
; outside the invoke becomes an invoke to a new cleanup.
; CHECK-LABEL: define void @eh(
; CHECK:      call void @__mnemo_func_entry(i32 2)
; CHECK-NEXT: invoke void @may_throw()
; CHECK-NEXT:   to label %cont unwind label %lpad
; CHECK:      cont:
; CHECK-NEXT: invoke void @may_throw()
; CHECK-NEXT:   to label %[[NOEXC:.*]] unwind label %mnemo.cleanup
; CHECK:      [[NOEXC]]:
; CHECK-NEXT: call void @__mnemo_func_exit(i32 2)
; CHECK-NEXT: ret void
; CHECK:      lpad:
; CHECK-NEXT: %lp = landingpad { ptr, i32 }
; CHECK-NEXT:   cleanup
; CHECK-NEXT: call void @__mnemo_func_exit(i32 2)
; CHECK-NEXT: resume { ptr, i32 } %lp
; CHECK:      mnemo.cleanup:
; CHECK-NEXT: %cleanup.lpad = landingpad { ptr, i32 }
; CHECK-NEXT:   cleanup
; CHECK-NEXT: call void @__mnemo_func_exit(i32 2)
; CHECK-NEXT: resume { ptr, i32 } %cleanup.lpad
define void @eh() personality ptr @__gxx_personality_v0 {
entry:
  invoke void @may_throw()
          to label %cont unwind label %lpad
cont:
  call void @may_throw()
  ret void
lpad:
  %lp = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %lp
}

; A function without a personality gets the default one for its cleanup.
; CHECK-LABEL: define void @no_personality() personality ptr @__gcc_personality_v0
; CHECK:      invoke void @may_throw()
; CHECK-NEXT:   to label %{{.*}} unwind label %mnemo.cleanup
define void @no_personality() {
  call void @may_throw()
  ret void
}

; CHECK-LABEL: define ptr @tail(
; CHECK-NEXT: call void @__mnemo_func_entry(i32 4)
; CHECK-NEXT: call void @__mnemo_func_exit(i32 4)
; CHECK-NEXT: %r = musttail call ptr @tail(ptr %p)
; CHECK-NEXT: ret ptr %r
define ptr @tail(ptr %p) nounwind {
  %r = musttail call ptr @tail(ptr %p)
  ret ptr %r
}

; Functions that never return have no exit.
; CHECK-LABEL: define void @noreturn(
; CHECK-NEXT: call void @__mnemo_func_entry(i32 5)
; CHECK-NEXT: call void @abort()
; CHECK-NEXT: unreachable
define void @noreturn() nounwind {
  call void @abort() noreturn nounwind
  unreachable
}

declare void @may_throw()
declare void @abort()
declare i32 @__gxx_personality_v0(...)
