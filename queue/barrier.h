/*
 * Every memory-ordering primitive Mnemo uses, in one place (STYLE rule 5).
 *
 * These are the C11 memory model's operations, spelled with the GCC/Clang __atomic builtins rather
 * than <stdatomic.h> so that they apply to the plain fixed-width fields of the shared-memory layout
 * (queue_internal.h, runtime/session.h: a file format has no _Atomic types) and so that the
 * header also compiles as C++.  The operand must be a naturally aligned 1, 2, 4 or 8 byte integer
 * or pointer; on x86-64 every one of them is lock-free, which matters because the other side is
 * another process.
 *
 * Every call site says what it orders and what it pairs with, e.g.
 *
 *	// Drain the streaming stores to this buffer before any consumer can see it;
 *	// pairs with the acquire load of hdr->stream in mn_queue_pop().
 *	mn_stream_fence();
 *	mn_fetch_add_release(&hdr->stream, 2);
 *
 * The x86-64 mapping, for readers of the generated code: acquire loads and release stores are plain
 * movs (TSO gives them for free), read-modify-writes are lock-prefixed (full barriers), a seq_cst
 * fence is mfence, the stream fence is sfence, and the signal fence and the signal-ordered accesses
 * emit nothing beyond the access itself.
 */
#ifndef MNEMO_BARRIER_H
#define MNEMO_BARRIER_H

/* ---- Loads and stores ---------------------------------------------------------------------------- */

/* No ordering: a counter, or a field ordered by a later release / earlier acquire on another word. */
#define mn_load_relaxed(p)        __atomic_load_n((p), __ATOMIC_RELAXED)
#define mn_store_relaxed(p, v)    __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* Later loads and stores of this thread stay after it; pairs with a release on the same word. */
#define mn_load_acquire(p)        __atomic_load_n((p), __ATOMIC_ACQUIRE)
/* Earlier loads and stores of this thread stay before it; pairs with an acquire on the same word. */
#define mn_store_release(p, v)    __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* ---- Read-modify-write ------------------------------------------------------------------------- */

#define mn_fetch_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define mn_fetch_add_release(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELEASE)
#define mn_fetch_sub_relaxed(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_RELAXED)
#define mn_fetch_or_release(p, v)  __atomic_fetch_or((p), (v), __ATOMIC_RELEASE)
/* Acquire and release: a release sequence of these (one per reader) hands the last one every
 * earlier reader's accesses. */
#define mn_fetch_and_acq_rel(p, v) __atomic_fetch_and((p), (v), __ATOMIC_ACQ_REL)
#define mn_exchange_acquire(p, v)  __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
/* Strong compare-and-swap; *expected is updated on failure. */
#define mn_cas_acq_rel(p, expected, desired)                                                       \
	__atomic_compare_exchange_n((p), (expected), (desired), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)

/* ---- Fences ------------------------------------------------------------------------------------ */

/*
 * Full fence (mfence).  Used in pairs for the "store my flag, then load yours" handshake before a
 * futex sleep (store buffering): with a seq_cst fence between the store and the load on both sides,
 * at least one side sees the other's store, so a waker never misses a sleeper.
 */
#define mn_fence_seq_cst()        __atomic_thread_fence(__ATOMIC_SEQ_CST)

/*
 * Compiler-only barrier: orders this thread's accesses as seen by a signal handler running on the
 * same thread.  Emits no instruction, but pins every load and store of the code around it (values
 * are reloaded after it, nothing moves across it): for cold paths.
 */
#define mn_signal_fence()         __atomic_signal_fence(__ATOMIC_SEQ_CST)

/*
 * Signal-ordered accesses, for hot paths: a plain load or store (volatile) that the compiler emits
 * exactly where it is written, neither cached in a register, merged nor moved across another
 * signal-ordered access or a streaming store (mn_stream_store64() in queue.h), so a signal handler
 * on the same thread sees these accesses in program order (Clang and GCC keep volatile accesses and
 * asm volatile statements in order).  Unlike mn_signal_fence(), the other loads and stores around
 * them stay free to move.  No ordering at all for other threads.
 */
#define mn_load_signal(p)         (*(__typeof__(*(p)) volatile *)(p))
#define mn_store_signal(p, v)     (*(__typeof__(*(p)) volatile *)(p) = (v))

/*
 * Streaming-store fence (sfence).  x86 non-temporal stores (movnti, see mn_stream_store64() in
 * queue.h) are weakly ordered: neither a release store nor a lock-prefixed instruction is
 * documented to drain them for other processors, so the producer issues this before publishing a
 * buffer.  Elsewhere, where stream stores are plain stores, a release fence does the job.
 */
#if defined(__x86_64__) || defined(__i386__)
#define mn_stream_fence()         __builtin_ia32_sfence()
#else
#define mn_stream_fence()         __atomic_thread_fence(__ATOMIC_RELEASE)
#endif

/* Spin-wait hint (pause): frees the pipeline for the sibling hyperthread; no ordering. */
#if defined(__x86_64__) || defined(__i386__)
#define mn_cpu_relax()            __builtin_ia32_pause()
#elif defined(__aarch64__)
#define mn_cpu_relax()            __asm__ __volatile__("yield" ::: "memory")
#else
#define mn_cpu_relax()            __atomic_signal_fence(__ATOMIC_SEQ_CST)
#endif

#endif /* MNEMO_BARRIER_H */
