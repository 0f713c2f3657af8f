/*
 * The heap interposer (libmnemo-heap.a): malloc, calloc, realloc, free, the aligned allocators and
 * every C++ operator new and delete, defined in the profiled program itself so that they preempt
 * glibc's and libstdc++'s for the program and for every shared library it loads.  Linked
 * whole-archive, and only when some chosen module uses heap events (the specializer says heap=1).
 *
 * Each call does the real work through glibc's exported __libc_* allocator, then, only if that
 * succeeded, emits one event through the generated callbacks: __mnemo_heap_alloc(site, p, size),
 * __mnemo_heap_realloc(site, old, new, size) or __mnemo_heap_free(site, p) (never for free(NULL)).
 * The site is the one the instrumented call site announced with __mnemo_heap_site() just before
 * the call (mn_heap_pending_site), taken and reset to 0 on entry, so an allocation made inside
 * uninstrumented code (a library's strdup, the loader) gets site 0.  realloc(NULL, n) is reported
 * as an allocation and realloc(p, 0), which glibc treats as free(p), as a free.
 *
 * No event while mn_rt_quiet is set on this thread (the runtime's own allocations).  Events before
 * the runtime started producing, and from threads other than the main thread, reach the queue's
 * slow path, which counts and drops them.
 *
 * malloc_usable_size, malloc_trim, mallinfo and friends are not interposed: the memory is glibc's,
 * so glibc's answers are right.  This file is native code (never seen by the pass), built with
 * -fexceptions so that a std::bad_alloc thrown by the libstdc++ fallback unwinds through it, and
 * -fno-builtin so that the compiler does not turn these definitions into calls of themselves.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "abi.h"
#include "runtime_internal.h"

#define MN_VISIBLE __attribute__((visibility("default")))

/* glibc's allocator under its exported internal names (GLIBC_2.2.5): never interposed. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

/* Weak: the program links even if its callbacks were generated without heap events. */
#pragma weak __mnemo_heap_alloc
#pragma weak __mnemo_heap_realloc
#pragma weak __mnemo_heap_free

/*
 * This thread's next heap site, stored by the generated __mnemo_heap_site() just before an
 * instrumented heap call.  Default visibility, as the callbacks (LTO bitcode) refer to it by name.
 */
MN_VISIBLE __thread uint32_t mn_heap_pending_site __attribute__((tls_model("initial-exec")));

/* The site this call belongs to; 0 for an allocation no instrumented call announced. */
static inline uint32_t take_site(void)
{
	uint32_t site = mn_heap_pending_site;

	mn_heap_pending_site = 0;
	return site;
}

static inline void emit_alloc(uint32_t site, const void *p, size_t size)
{
	if (!mn_rt_quiet && __mnemo_heap_alloc)
		__mnemo_heap_alloc(site, p, size);
}

static inline void emit_realloc(uint32_t site, const void *old, const void *p, size_t size)
{
	if (!mn_rt_quiet && __mnemo_heap_realloc)
		__mnemo_heap_realloc(site, old, p, size);
}

static inline void emit_free(uint32_t site, const void *p)
{
	if (p && !mn_rt_quiet && __mnemo_heap_free)
		__mnemo_heap_free(site, p);
}

/* ---- C allocator ----------------------------------------------------------------------------- */

MN_VISIBLE void *malloc(size_t size)
{
	uint32_t site = take_site();
	void *p = __libc_malloc(size);

	if (p)
		emit_alloc(site, p, size);
	return p;
}

MN_VISIBLE void *calloc(size_t nmemb, size_t size)
{
	uint32_t site = take_site();
	void *p = __libc_calloc(nmemb, size);

	/* Success means nmemb * size did not overflow. */
	if (p)
		emit_alloc(site, p, nmemb * size);
	return p;
}

MN_VISIBLE void *realloc(void *old, size_t size)
{
	uint32_t site = take_site();
	void *p = __libc_realloc(old, size);

	if (!old) {
		if (p)
			emit_alloc(site, p, size);
	} else if (p) {
		emit_realloc(site, old, p, size);
	} else if (!size) {
		emit_free(site, old);	/* glibc freed it and returned NULL */
	}
	/* else: failed, and old is untouched */
	return p;
}

MN_VISIBLE void free(void *p)
{
	uint32_t site = take_site();

	__libc_free(p);
	emit_free(site, p);
}

MN_VISIBLE void *memalign(size_t align, size_t size)
{
	uint32_t site = take_site();
	void *p = __libc_memalign(align, size);

	if (p)
		emit_alloc(site, p, size);
	return p;
}

/* In glibc 2.36 aligned_alloc is memalign (no stricter check of align). */
MN_VISIBLE void *aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

/* glibc's checks and results, errno included: EINVAL for a bad alignment, ENOMEM on failure. */
MN_VISIBLE int posix_memalign(void **out, size_t align, size_t size)
{
	uint32_t site = take_site();
	void *p;

	if (align % sizeof(void *) || (align / sizeof(void *)) & (align / sizeof(void *) - 1) ||
	    !align)
		return EINVAL;
	p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	emit_alloc(site, p, size);
	return 0;
}

MN_VISIBLE void *valloc(size_t size)
{
	uint32_t site = take_site();
	void *p = __libc_valloc(size);

	if (p)
		emit_alloc(site, p, size);
	return p;
}

MN_VISIBLE void *pvalloc(size_t size)
{
	uint32_t site = take_site();
	void *p = __libc_pvalloc(size);

	if (p)
		emit_alloc(site, p, size);
	return p;
}

/* ---- C++ operator new and delete ------------------------------------------------------------- */

/*
 * When glibc has no memory, operator new must do what libstdc++'s does: call the new-handler in a
 * loop, then throw std::bad_alloc (or return NULL, for the nothrow forms).  Rather than reimplement
 * that in C, call libstdc++'s own operator, found with dlsym(RTLD_NEXT) on this rare path (quiet:
 * dlsym's own allocations are the runtime's).  The site goes back into mn_heap_pending_site first,
 * so that the allocation libstdc++ retries through our malloc (or aligned_alloc) emits the one
 * event, with the right site, if it succeeds; the caller emits none.  If it throws, bad_alloc
 * unwinds through these frames (hence -fexceptions), and the exception object's allocation and
 * free are ordinary events.  Without libstdc++ in the process there is no one to throw: abort, as
 * an uncaught bad_alloc would.
 */
static void *real_operator(const char *name, void **cache)
{
	void *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!fn) {
		mn_rt_quiet++;
		fn = dlsym(RTLD_NEXT, name);
		mn_rt_quiet--;
		if (!fn)
			abort();
		/* Any thread may race here; they all store the same pointer. */
		__atomic_store_n(cache, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/* align_val_t is an enum class over size_t; nothrow_t is passed by reference. */
typedef void *new_fn(size_t);
typedef void *new_nothrow_fn(size_t, const void *);
typedef void *new_aligned_fn(size_t, size_t);
typedef void *new_aligned_nothrow_fn(size_t, size_t, const void *);

static __attribute__((noinline, cold)) void *fallback_new(const char *name, void **cache,
							  uint32_t site, size_t size)
{
	new_fn *real = (new_fn *)real_operator(name, cache);

	mn_heap_pending_site = site;
	return real(size);
}

static __attribute__((noinline, cold)) void *
fallback_new_nothrow(const char *name, void **cache, uint32_t site, size_t size, const void *tag)
{
	new_nothrow_fn *real = (new_nothrow_fn *)real_operator(name, cache);

	mn_heap_pending_site = site;
	return real(size, tag);
}

static __attribute__((noinline, cold)) void *
fallback_new_aligned(const char *name, void **cache, uint32_t site, size_t size, size_t align)
{
	new_aligned_fn *real = (new_aligned_fn *)real_operator(name, cache);

	mn_heap_pending_site = site;
	return real(size, align);
}

static __attribute__((noinline, cold)) void *
fallback_new_aligned_nothrow(const char *name, void **cache, uint32_t site, size_t size,
			     size_t align, const void *tag)
{
	new_aligned_nothrow_fn *real = (new_aligned_nothrow_fn *)real_operator(name, cache);

	mn_heap_pending_site = site;
	return real(size, align, tag);
}

/* One throwing and one nothrow operator new, plain and aligned, for `new` and `new[]`. */
#define DEFINE_NEW(sym)                                                                            \
	MN_VISIBLE void *sym(size_t size)                                                          \
	{                                                                                          \
		static void *real;                                                                 \
		uint32_t site = take_site();                                                       \
		void *p = __libc_malloc(size);                                                     \
                                                                                                   \
		if (__builtin_expect(!p, 0))                                                       \
			return fallback_new(#sym, &real, site, size);                              \
		emit_alloc(site, p, size);                                                         \
		return p;                                                                          \
	}

#define DEFINE_NEW_NOTHROW(sym)                                                                    \
	MN_VISIBLE void *sym(size_t size, const void *tag)                                         \
	{                                                                                          \
		static void *real;                                                                 \
		uint32_t site = take_site();                                                       \
		void *p = __libc_malloc(size);                                                     \
                                                                                                   \
		if (__builtin_expect(!p, 0))                                                       \
			return fallback_new_nothrow(#sym, &real, site, size, tag);                 \
		emit_alloc(site, p, size);                                                         \
		return p;                                                                          \
	}

#define DEFINE_NEW_ALIGNED(sym)                                                                    \
	MN_VISIBLE void *sym(size_t size, size_t align)                                            \
	{                                                                                          \
		static void *real;                                                                 \
		uint32_t site = take_site();                                                       \
		void *p = __libc_memalign(align, size);                                            \
                                                                                                   \
		if (__builtin_expect(!p, 0))                                                       \
			return fallback_new_aligned(#sym, &real, site, size, align);               \
		emit_alloc(site, p, size);                                                         \
		return p;                                                                          \
	}

#define DEFINE_NEW_ALIGNED_NOTHROW(sym)                                                            \
	MN_VISIBLE void *sym(size_t size, size_t align, const void *tag)                           \
	{                                                                                          \
		static void *real;                                                                 \
		uint32_t site = take_site();                                                       \
		void *p = __libc_memalign(align, size);                                            \
                                                                                                   \
		if (__builtin_expect(!p, 0))                                                       \
			return fallback_new_aligned_nothrow(#sym, &real, site, size, align, tag);  \
		emit_alloc(site, p, size);                                                         \
		return p;                                                                          \
	}

DEFINE_NEW(_Znwm)                                          /* new(size_t) */
DEFINE_NEW(_Znam)                                          /* new[](size_t) */
DEFINE_NEW_NOTHROW(_ZnwmRKSt9nothrow_t)                    /* new(size_t, nothrow_t) */
DEFINE_NEW_NOTHROW(_ZnamRKSt9nothrow_t)                    /* new[](size_t, nothrow_t) */
DEFINE_NEW_ALIGNED(_ZnwmSt11align_val_t)                   /* new(size_t, align_val_t) */
DEFINE_NEW_ALIGNED(_ZnamSt11align_val_t)                   /* new[](size_t, align_val_t) */
DEFINE_NEW_ALIGNED_NOTHROW(_ZnwmSt11align_val_tRKSt9nothrow_t)
DEFINE_NEW_ALIGNED_NOTHROW(_ZnamSt11align_val_tRKSt9nothrow_t)

/*
 * Every operator delete: the size and alignment arguments only restate what glibc knows, and
 * libstdc++'s aligned delete is free() as well.
 */
#define DEFINE_DELETE(sym, ...)                                                                    \
	MN_VISIBLE void sym(void *p, ##__VA_ARGS__)                                                \
	{                                                                                          \
		uint32_t site = take_site();                                                       \
		__libc_free(p);                                                                    \
		emit_free(site, p);                                                                \
	}

DEFINE_DELETE(_ZdlPv)                                                  /* delete(void *) */
DEFINE_DELETE(_ZdaPv)                                                  /* delete[](void *) */
DEFINE_DELETE(_ZdlPvm, size_t size)                                    /* sized */
DEFINE_DELETE(_ZdaPvm, size_t size)
DEFINE_DELETE(_ZdlPvSt11align_val_t, size_t align)                     /* aligned */
DEFINE_DELETE(_ZdaPvSt11align_val_t, size_t align)
DEFINE_DELETE(_ZdlPvmSt11align_val_t, size_t size, size_t align)       /* sized, aligned */
DEFINE_DELETE(_ZdaPvmSt11align_val_t, size_t size, size_t align)
DEFINE_DELETE(_ZdlPvRKSt9nothrow_t, const void *tag)                   /* nothrow */
DEFINE_DELETE(_ZdaPvRKSt9nothrow_t, const void *tag)
DEFINE_DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, size_t align, const void *tag)
DEFINE_DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, size_t align, const void *tag)
