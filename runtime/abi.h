/*
 * The one interface between the mnemo pass and the frontend runtime.
 *
 * The pass (pass/Instrument.cpp) inserts calls to the __mnemo_* entry points below and emits the
 * data symbols below; the runtime (runtime/) defines the entry points, specialized at link time
 * for the chosen modules (specializer/specialize.c), and checks __mnemo_pass_abi against
 * MNEMO_ABI_VERSION at start-up.  Change a signature here and you must bump MNEMO_ABI_VERSION and
 * change the constexpr block at the top of pass/Instrument.cpp in the same commit.
 *
 * Entry points return void and never fail the program: when profiling is off or broken they do
 * nothing.  Site ids are dense from 1 over the whole linked program; 0 means "no site".
 */
#ifndef MNEMO_ABI_H
#define MNEMO_ABI_H

#include <stdint.h>

/* 2: __mnemo_load_ptr, __mnemo_store_ptr; 3: loop summaries; 4: mixed loops; 5: __mnemo_value;
 * 7: allocation contexts (__mnemo_ctx_enter, __mnemo_ctx_leave) */
#define MNEMO_ABI_VERSION 7u

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Emitted by the pass in instrumented code -------------------------------------------- */

/*
 * Synchronizations the pass sees, defined by the runtime (threads.c), which sends them as
 * sync_acquire / sync_release at an ordering point once the program runs threads: after an atomic
 * read with acquire ordering (a load, atomicrmw or cmpxchg with acquire, acq_rel or seq_cst),
 * __mnemo_acquire(its address); before an atomic write with release ordering,
 * __mnemo_release(its address).  OpenMP, whose runtime synchronizes inside libomp: around a call
 * to __kmpc_fork_call or __kmpc_fork_teams, a release before and an acquire after; at the entry of
 * the outlined body such a call runs on every thread of the team, an acquire, and a release before
 * each of its returns; around __kmpc_barrier, a release before and an acquire after; all on
 * MNEMO_SYNC_OPENMP.  __kmpc_critical acquires, and __kmpc_end_critical releases, the critical
 * section's name.  Not fences (a fence orders through the atomics around it; not modelled).
 */
#define MNEMO_SYNC_OPENMP ((const void *)1)
void __mnemo_acquire(const void *object);
void __mnemo_release(const void *object);
/* Immediately before a call to pthread_create: its site (kind `thread`), which the runtime gives
 * the new thread's thread_start event.  Defined by the runtime; not an event itself. */
void __mnemo_thread_site(uint32_t site);

/*
 * After every load but those of a pointer (value = the loaded bits, zero-extended; low 64 bits of
 * wider types).
 */
void __mnemo_load(uint32_t site, const void *addr, uint64_t value, uint32_t size);
/* Before every store but those of a pointer (value = the stored bits, as for loads). */
void __mnemo_store(uint32_t site, const void *addr, uint64_t value, uint32_t size);
/*
 * The same two events for an access whose value has a (scalar) pointer type: the pass calls these
 * instead of __mnemo_load / __mnemo_store for loads, stores, atomic loads and stores, cmpxchg and
 * atomicrmw xchg of a pointer, and the plain ones for everything else (integers, floats, vectors,
 * aggregates, memcpy and memset).  Same arguments, same event (load or store), same record
 * layout: they exist so that a build whose modules all take `accesses: pointer` (spec.h) can leave
 * the plain ones empty, and LTO deletes every non-pointer access's call; and so that, built with
 * modules that take every access, their records carry the pointer flag (queue.h,
 * MN_WIRE_POINTER: code 0x81 or 0x82), and the backend gives the pointer-only modules these alone.
 */
void __mnemo_load_ptr(uint32_t site, const void *addr, uint64_t value, uint32_t size);
void __mnemo_store_ptr(uint32_t site, const void *addr, uint64_t value, uint32_t size);
/* After an instruction that makes a pointer: type 1 loaded, 2 returned by a call, 3 int-to-pointer. */
void __mnemo_pointer_create(uint32_t site, const void *addr, uint32_t type);
/*
 * Immediately before a call to an allocation or deallocation function (malloc, calloc, realloc,
 * free, aligned_alloc, posix_memalign, memalign, valloc, operator new/delete): tells the heap
 * interposer which site the next heap event of this thread belongs to.  Not an event itself.
 */
void __mnemo_heap_site(uint32_t site);
/*
 * Allocation contexts, only when the merged module's __mnemo_alloc_contexts is 1 (below): around
 * each call whose callee may allocate (an indirect call, or a call of a defined function that
 * calls an allocation function, an indirect call or such a function; not the allocation call
 * itself, whose site is its heap site), saved = __mnemo_ctx_enter(call site) just before it and
 * __mnemo_ctx_leave(saved) just after (for an invoke, at the start of its normal destination and
 * of its landing pad when that has no other predecessor).  Call sites have kind `call`.  The
 * callbacks keep, per thread, the two innermost call sites entered and not left: enter returns
 * them (innermost in the low 32 bits) and makes site the innermost, leave restores them.  Since
 * leave restores a value, not a count, a longjmp or exception past some leaves is repaired at the
 * next leave of an outer call.  Empty (enter returns 0) when no chosen module takes heap_alloc's
 * `context`.
 */
uint64_t __mnemo_ctx_enter(uint32_t site);
void __mnemo_ctx_leave(uint64_t saved);
/* A stack object's lifetime begins (alloca at entry, or llvm.lifetime.start) / ends. */
void __mnemo_stack_alloc(uint32_t site, const void *addr, uint64_t size);
void __mnemo_stack_free(uint32_t site, const void *addr);
/* Function entry (first instruction) and every exit path (ret, resume, unwinding cleanup). */
void __mnemo_func_entry(uint32_t site);
void __mnemo_func_exit(uint32_t site);
/* Loop invocation (end of preheader), iteration (top of header), exit (each dedicated exit block). */
void __mnemo_loop_invoke(uint32_t site);
void __mnemo_loop_iter(uint32_t site);
void __mnemo_loop_exit(uint32_t site);
/*
 * Loop summaries (pass/README.md): at each exit of a loop whose accesses it summarizes, the pass
 * calls, in place of those accesses' __mnemo_load / __mnemo_store (and _ptr) calls and of the
 * loop's events, __mnemo_loop_summary_load or _store once per summarized access, in the order
 * the accesses execute within an iteration, then __mnemo_loop_summary.  start: the access's
 * address in iteration 0; step: bytes it moves per iteration (signed); size: bytes accessed;
 * site: the access's, then the loop's; accesses: how many _load / _store calls precede, at most
 * 65535; iterations: header executions, >= 1.  The backend expands them into the events the loop
 * would have sent.  Only when __mnemo_summary_plan says summaries are on.  In a build that samples
 * loads and stores (`sample:`), only at N = 1: at N > 1 __mnemo_loop_summary sends, itself, the
 * loads and stores (and the loop events, when sent) the sampling countdown picks among the loop's
 * accesses, as the per-access calls would have, and no summary record.
 */
void __mnemo_loop_summary_load(uint32_t site, const void *start, int64_t step, uint32_t size);
void __mnemo_loop_summary_store(uint32_t site, const void *start, int64_t step, uint32_t size);
void __mnemo_loop_summary(uint32_t site, uint32_t accesses, uint64_t iterations);
/*
 * Mixed loops (pass/README.md): an innermost loop that would be summarized but for some accesses
 * that are not (not once per iteration, or not affine).  At the end of its preheader the pass
 * calls __mnemo_loop_summary_load / _store (site, start, step, size) once per summarized access,
 * in the order they execute within an iteration, then __mnemo_loop_summary_open (site: the
 * loop's; accesses: how many _load / _store calls precede, at most 65535).  In place of each
 * other access's __mnemo_load / __mnemo_store (and _ptr) call it calls __mnemo_mixed_load or
 * _store: site, addr and size as for a load or store; iteration: the iteration it runs in,
 * 0-based (header executions so far, minus 1); rank: how many of the loop's summarized accesses
 * execute before it within an iteration (0..256).  The loop's own events are not called.  At
 * each exit it calls __mnemo_loop_summary_close (site: the loop's; iterations: header
 * executions, >= 1).  The mixed records carry (rank, iteration) compactly (events.yaml,
 * loop_summary_at), and the backend interleaves them with the summarized accesses in program
 * order.  Only when __mnemo_summary_plan has MNEMO_PLAN_MIXED_ON (the four are empty without it),
 * and only for accesses whose entry point has plan state 1 or 3.  In a build that samples loads
 * and stores (`sample:`), the records go out only at N = 1: at N > 1 the loop's summarized
 * accesses stay with the thread from the open to the close.  When loop events are sent, each
 * mixed access, then the close, runs the sampling countdown over the summarized accesses before
 * it and over itself in program order, sending the loads and stores it picks and the loop events
 * as the per-access calls would have; without loop events each mixed access counts itself down
 * at once and the close runs the countdown over all the summarized ones (one in N, not the
 * per-access build's same ones, and the countdown stays in a register through the loop).  A
 * loop whose summarized accesses could not all be kept sends its __mnemo_loop_summary record
 * alone, which the backend counts lost.
 */
void __mnemo_loop_summary_open(uint32_t site, uint32_t accesses);
void __mnemo_mixed_load(uint32_t site, const void *addr, uint32_t size, uint64_t iteration,
			uint32_t rank);
void __mnemo_mixed_store(uint32_t site, const void *addr, uint32_t size, uint64_t iteration,
			 uint32_t rank);
void __mnemo_loop_summary_close(uint32_t site, uint64_t iterations);
/*
 * At a summarized or mixed access whose entry point has plan state 3 (value checked): the value
 * __mnemo_load / __mnemo_store (and _ptr) would have been given, which those check themselves
 * at every other access.  Sends the `value` event when the site's published set lacks it
 * (struct mn_value_set below).
 */
void __mnemo_value(uint32_t site, uint64_t value);
/*
 * In the preheader of a summarized loop with such accesses, once per checked site: nonzero when
 * the site's published set says no more of its values are needed (MN_VALUE_SET_ALL).  When every
 * one says so, the loop's copy without the __mnemo_value calls runs.
 */
uint32_t __mnemo_value_done(uint32_t site);

/* ---- Emitted by the pass as data and code in the linked program ---------------------------- */

/*
 * The site table: a text blob, one line per site id starting at id 1 (line k is id k), fields
 * separated by tabs, no tab or newline inside a field:
 *
 *   kind \t function \t file \t line \t column \t name \t type_size \t loop \t fields \t
 *   line_nearest \t inlined_into \t inlined_at \n
 *
 * kind: load, store, pointer, alloc, realloc, free, stack, global, function, loop, thread, call.
 * function: the demangled name of the enclosing function (for a function site, itself); for
 *           inlined code, the function the line belongs to (the location's subprogram), as
 *           llvm-symbolizer names it.
 * file, line, column: from debug info; "" and 0 without -g.  An instruction without a line (none,
 *           or line 0: merged locations) takes the nearest preceding located instruction's of
 *           its block, else the block's first located one, else the last located one of the
 *           nearest dominating block that has one (pass/README.md).
 * name: callee for heap and call sites ("" for an indirect call), variable name for globals
 *       and stack objects, type name from !heapallocsite where known; for loads and stores, the memory intrinsic's base name
 *       (memcpy, memmove, memset), or "ptr" when the value is a pointer (the accesses
 *       __mnemo_load_ptr and __mnemo_store_ptr report), "double" or "float" when it is one
 *       (its bits are sent); "" otherwise.
 * type_size: bytes of the allocated or declared type where known, else 0.
 * loop: loads and stores: the site of the innermost loop holding them in their function, else 0.
 * fields: allocation, stack and global sites whose (element) type is a struct: its layout,
 *         "Name/size:member@offset,...", else "" (pass/README.md says exactly).
 * line_nearest: 1 when line and column are the nearest located instruction's, else 0.
 * inlined_into: inlined code: the demangled enclosing function, which holds the instruction; ""
 *         when the code is not inlined.
 * inlined_at: inlined code: the inlining calls from the call of `function` outwards, each
 *         "file:line:column" (":column" left out when 0), joined by " < "; "" when not inlined.
 * The blob begins with the line "mnemo-sites/3\n" (not a site); the backend also reads version 2,
 * without the last three fields, and version 1, without the last five.
 */
extern const char __mnemo_site_table[];
extern const uint64_t __mnemo_site_table_size;  /* bytes in the blob, without a terminating NUL */
extern const uint32_t __mnemo_site_count;       /* highest site id */
extern const uint32_t __mnemo_pass_abi;         /* MNEMO_ABI_VERSION the pass was built with */
/* Calls __mnemo_global(site, address, size) once per global variable; the runtime calls it. */
void __mnemo_register_globals(void);

/* ---- Called by the runtime itself (defined, specialized, in the generated callbacks) -------- */

void __mnemo_global(uint32_t site, const void *addr, uint64_t size);
void __mnemo_heap_alloc(uint32_t site, const void *addr, uint64_t size);
void __mnemo_heap_realloc(uint32_t site, const void *old_addr, const void *addr, uint64_t size);
void __mnemo_heap_free(uint32_t site, const void *addr);
void __mnemo_sync_acquire(const void *object);
void __mnemo_sync_release(const void *object);
void __mnemo_thread_start(uint32_t creator, uint32_t site);
void __mnemo_thread_end(void);
void __mnemo_program_start(uint32_t pid);
void __mnemo_program_end(uint32_t pid, uint32_t status);

/*
 * Emitted by the specializer into the generated callbacks: which modules this binary was built
 * for ("value-pattern,dependence"), where its backend lives, and the wire format (queue/queue.h).
 */
extern const char __mnemo_modules[];
extern const char __mnemo_backend_path[];
struct mn_wire;                                 /* queue/queue.h */
extern const struct mn_wire __mnemo_wire;
extern const uint32_t __mnemo_heap_events;      /* 1 when libmnemo-heap.a must be linked */
/*
 * 1 when some chosen module takes heap_alloc's `context` (the allocation's two innermost callers,
 * __mnemo_ctx_enter above), else 0; `used`, so that the pass, which reads it from the merged LTO
 * module, adds call sites and their calls only then.  No symbol: 0.
 */
extern const uint32_t __mnemo_alloc_contexts;
/*
 * Defined by the runtime (libmnemo-rt.a), read by the generated __mnemo_heap_alloc: which of the
 * two callers heap_alloc's `context` keeps, from MNEMO_ALLOC_DEPTH (runtime/options.def): depth 3
 * all 64 bits, 2 the low 32 (the innermost caller), 1 none (the allocation site alone).
 */
extern uint64_t mn_alloc_context_mask;
/*
 * What the callbacks do with each kind of access, for the pass, which reads it from the merged
 * LTO module (`used`, so it is there) to choose the loops it summarizes; no symbol means
 * summaries off.  Entry point k has a 2-bit state at bits [2k, 2k + 1]:
 *
 *   k: 0 __mnemo_load, 1 __mnemo_store, 2 __mnemo_load_ptr, 3 __mnemo_store_ptr,
 *      4 __mnemo_pointer_create, 5 the loop events (loop_invoke, loop_iter, loop_exit)
 *   0: the body is empty: its accesses send nothing, stay out of summaries and block none
 *   1: it sends a record without `value`: may be summarized (k = 5: loop events are sent); with
 *      a sampling countdown too, which the summary entry points then run over the summarized
 *      accesses themselves (__mnemo_loop_summary above), and the mixed ones over a mixed loop's
 *      summarized and mixed accesses
 *   2: it must stay per access: it sends `value`, or is __mnemo_pointer_create with a body, or
 *      is a _ptr entry point on a wire with the pointer flag (its records carry the flag, which
 *      summaries and mixed loops do not)
 *   3: it sends a record without `value`, as 1, and checks the access's value against the
 *      site's published set (the `value` event, struct mn_value_set below): the pass calls
 *      __mnemo_value at such an access when it summarizes it or makes it mixed
 *
 * Bit 31: summaries on, and the __mnemo_loop_summary* entry points send their records.  Off with
 * mnemo-specialize --no-summarize or --all-events, or when no state is 1.
 * Bit 30: mixed loops on, and __mnemo_loop_summary_open, __mnemo_mixed_load, __mnemo_mixed_store
 * and __mnemo_loop_summary_close send their records (with a sampling countdown, at N = 1 only,
 * as above); else they are empty and the pass makes no loop mixed.  Set when bit 31 is, sampled
 * or not, unless the catalogue lacks the events of mixed loops.
 */
extern const uint32_t __mnemo_summary_plan;
#define MNEMO_PLAN_LOAD           0u
#define MNEMO_PLAN_STORE          1u
#define MNEMO_PLAN_LOAD_PTR       2u
#define MNEMO_PLAN_STORE_PTR      3u
#define MNEMO_PLAN_POINTER_CREATE 4u
#define MNEMO_PLAN_LOOP           5u
#define MNEMO_PLAN_EMPTY          0u
#define MNEMO_PLAN_SUMMARIZABLE   1u
#define MNEMO_PLAN_PER_ACCESS     2u
#define MNEMO_PLAN_VALUE_CHECKED  3u
#define MNEMO_PLAN_ON             (1u << 31)
#define MNEMO_PLAN_MIXED_ON       (1u << 30)
/* The state of entry point k in plan. */
#define MNEMO_PLAN_STATE(plan, k) (((plan) >> (2 * (k))) & 3u)
/*
 * Values as sets (events.yaml, `value`): the values of each load and store site that the module
 * taking them has seen, published by the backend (backend.h, mn_run_value_seen()) in the
 * session's shared memory, one slot per site id.  The access entry points, and __mnemo_value,
 * send a `value` record only when the site's slot lacks the value.  A slot is a small open-
 * addressed hash set: value v goes to the first free index from MN_VALUE_SET_HASH(v) on (linear
 * probing, modulo MN_VALUE_SET_MAX), and bit i of `used` says values[i] holds one, so a few-valued
 * site costs one or two compares.  The backend is the slot's only writer: it stores values[i],
 * then `used` with bit i, with release order; the program reads `used` with acquire order, then
 * the values.  The published set only grows and never holds a value the module has not seen, so
 * what the module learns is exactly what every value would have taught it.  used =
 * MN_VALUE_SET_ALL: the module needs no more of the site's values (value-pattern once a site has
 * more distinct values than it tracks).
 */
#define MN_VALUE_SET_MAX 16
#define MN_VALUE_SET_ALL UINT32_MAX
#define MN_VALUE_SET_HASH(v) ((uint32_t)(((uint64_t)(v) * UINT64_C(0x9e3779b97f4a7c15)) >> 60))
struct mn_value_set {
	uint32_t used;                      /* bit i: values[i] is published; or MN_VALUE_SET_ALL */
	uint32_t reserved;
	uint64_t values[MN_VALUE_SET_MAX];
};
/*
 * Defined by the generated callbacks when a chosen module takes `value`: the session's slots,
 * site ids 0..__mnemo_value_sites - 1, which the runtime points them at (NULL and 0 until then,
 * and when profiling is off: every value is then sent, and the queue drops it).
 */
extern struct mn_value_set *__mnemo_value_sets;
extern uint32_t __mnemo_value_sites;
/*
 * Sampling of loads and stores (spec.h, `sample:`): __mnemo_sample_var is the environment variable
 * that sets N ("" when no chosen module samples); __mnemo_sample_blocker is "" when the callbacks
 * count down, else the chosen module that needs every access (sampling is then off, and the
 * runtime says so when the variable asks for N > 1).
 */
extern const char __mnemo_sample_var[];
extern const char __mnemo_sample_blocker[];

/*
 * Defined by the heap interposer (libmnemo-heap.a): the site of this thread's next heap call, set
 * by __mnemo_heap_site() in the generated callbacks and taken (reset to 0) by the interposer.
 */
extern __thread uint32_t mn_heap_pending_site __attribute__((tls_model("initial-exec")));

/*
 * Defined by the runtime (libmnemo-rt.a), read by callbacks generated with a sampling countdown
 * (spec.h `sample:`) each time they send an access, and by their loop summary entry points at every
 * call (both 1: N = 1, summaries go to the backend): the next period is mn_sample_lo plus a uniform
 * draw in [0, mn_sample_span).  The runtime sets them from N at start, N - N/2 and 2 (N/2) + 1
 * (periods uniform in [N - N/2, N + N/2], mean N); until then, and for N = 1, both are 1: every
 * access.  The countdown itself is private to the generated callbacks.
 */
extern uint32_t mn_sample_lo, mn_sample_span;

#ifdef __cplusplus
}
#endif
#endif /* MNEMO_ABI_H */
