/*
 * Threads and their synchronizations (issue 22), defined here with default visibility as the exec
 * family is (exec.c): the program's calls and its shared libraries' calls (libstdc++'s std::mutex,
 * libomp's threads) bind here; glibc's own internal ones do not.
 *
 * pthread_create starts the new thread in trampoline(), whose first event is thread_start with
 * its creator's number, and whose last, when the start routine returns or calls pthread_exit, is
 * thread_end.  Both are the framework's events, sent whatever the modules (events.yaml).
 *
 * Each synchronization is an ordering point once the program has created a thread: a release
 * sends sync_release(object) right before the call that releases, an acquire sync_acquire(object)
 * right after the call that acquired, and either then calls mn_queue_order(), which publishes the
 * thread's buffer with the next ticket.  The backend reads such buffers in ticket order, so every
 * module sees what one thread did before a release before what another did after the matching
 * acquire: allocations before frees, stores before the loads they feed, whichever threads.  The
 * sync events themselves reach only the modules that list them (dependence keeps vector clocks).
 * The objects: the mutex, the condition variable (a signal releases it, a returning wait acquires
 * it), the barrier; a thread's start is an acquire of the block its creator released it with, and
 * a join an acquire of what the thread released as it ended (keyed by its pthread_t).
 *
 * Before the first pthread_create (and in a program that never calls it) these wrappers only call
 * glibc's: one thread needs no order.  glibc's are found with dlsym(RTLD_NEXT) on first use, not
 * at start-up, so that a program that never calls them runs with the memory layout it had before
 * (dlsym allocates); dlsym takes glibc's internal locks, never these.
 *
 * Atomics with acquire or release ordering, and OpenMP's fork, join, barriers and critical
 * sections, come from the pass (__mnemo_acquire, __mnemo_release: abi.h).  Not intercepted (the
 * profile's order may then lack their edges; README, limitations): read-write locks, spin locks,
 * semaphores, C11 <threads.h> (glibc implements it over these calls, but internally), futexes,
 * fences, and atomics in code the pass did not see.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "abi.h"
#include "queue.h"
#include "runtime_internal.h"

#define MN_VISIBLE __attribute__((visibility("default")))

/* Weak: a program whose callbacks were generated from an older catalogue lacks them. */
#pragma weak __mnemo_sync_acquire
#pragma weak __mnemo_sync_release
#pragma weak __mnemo_thread_start
#pragma weak __mnemo_thread_end

extern void *__libc_malloc(size_t size);
extern void __libc_free(void *p);

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int join_fn(pthread_t, void **);
typedef void exit_fn(void *) __attribute__((noreturn));
typedef int mutex_fn(pthread_mutex_t *);
typedef int timedlock_fn(pthread_mutex_t *, const struct timespec *);
typedef int condwait_fn(pthread_cond_t *, pthread_mutex_t *);
typedef int condtimed_fn(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int cond_fn(pthread_cond_t *);
typedef int barrier_fn(pthread_barrier_t *);

static struct {
	create_fn *create;
	join_fn *join;
	exit_fn *exit;
	mutex_fn *lock, *trylock, *unlock;
	timedlock_fn *timedlock;
	condwait_fn *cond_wait;
	condtimed_fn *cond_timedwait;
	cond_fn *cond_signal, *cond_broadcast;
	barrier_fn *barrier_wait;
} libc;

/* Set by the first pthread_create: from then on synchronizations are ordering points. */
static bool threaded;

/* glibc's name, found once (a lookup racing with another is harmless: both find the same). */
static void *real(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

#define REAL(field, name) ((__typeof__(libc.field))real((void **)&libc.field, name))


void mn_rt_threads_fork_child(void)
{
	threaded = false;   /* the child has one thread, and a session of its own */
}

static inline bool ordering(void)
{
	return __atomic_load_n(&threaded, __ATOMIC_RELAXED) && !mn_rt_quiet;
}

static void release(const void *object)
{
	if (!ordering())
		return;
	if (__mnemo_sync_release)
		__mnemo_sync_release(object);
	mn_queue_order();
}

static void acquire(const void *object)
{
	if (!ordering())
		return;
	if (__mnemo_sync_acquire)
		__mnemo_sync_acquire(object);
	mn_queue_order();
}

/* A returning wait: the condition variable and its mutex, at one ordering point. */
static void acquire_wait(const void *cond, const void *mutex)
{
	if (!ordering())
		return;
	if (__mnemo_sync_acquire) {
		__mnemo_sync_acquire(cond);
		__mnemo_sync_acquire(mutex);
	}
	mn_queue_order();
}

/* The pass's, for atomics and OpenMP (abi.h). */
MN_VISIBLE void __mnemo_acquire(const void *object)
{
	acquire(object);
}

MN_VISIBLE void __mnemo_release(const void *object)
{
	release(object);
}

/* ---- Threads --------------------------------------------------------------------------------- */

/* What pthread_create hands the new thread: released by the creator, acquired by the thread. */
struct start {
	void *(*fn)(void *);
	void *arg;
	uint32_t creator;
	uint32_t site;
	uint32_t number;   /* the thread's, in creation order (mn_queue_reserve_thread()) */
};

/* The site of this thread's next pthread_create call (abi.h, __mnemo_thread_site). */
static __thread uint32_t pending_site __attribute__((tls_model("initial-exec")));

MN_VISIBLE void __mnemo_thread_site(uint32_t site)
{
	pending_site = site;
}

/* The thread's end: its join key released, then its last event. */
static void thread_ends(void)
{
	release((const void *)(uintptr_t)pthread_self());
	if (__mnemo_thread_end && ordering())
		__mnemo_thread_end();
}

static void *trampoline(void *arg)
{
	struct start st = *(struct start *)arg;
	void *ret;

	mn_queue_number_thread(st.number);
	if (__mnemo_thread_start && ordering())
		__mnemo_thread_start(st.creator, st.site);
	acquire(arg);
	__libc_free(arg);
	ret = st.fn(st.arg);
	thread_ends();
	return ret;
}

MN_VISIBLE int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			      void *arg)
{
	create_fn *create = REAL(create, "pthread_create");
	uint32_t site = pending_site;
	struct start *st;
	int r;

	pending_site = 0;   /* a call from code the pass did not see has none */
	if (!create)
		return EAGAIN;   /* NEVER: glibc has it */
	st = __libc_malloc(sizeof(*st));
	if (!st)
		return create(t, attr, fn, arg);   /* unprofiled order, but the program runs */
	*st = (struct start){ fn, arg, mn_queue_self(), site, 0 };
	__atomic_store_n(&threaded, true, __ATOMIC_RELAXED);
	if (!mn_rt_quiet)
		st->number = mn_queue_reserve_thread();
	release(st);
	r = create(t, attr, trampoline, st);
	if (r)
		__libc_free(st);
	return r;
}

MN_VISIBLE int pthread_join(pthread_t t, void **ret)
{
	int r = REAL(join, "pthread_join")(t, ret);

	if (!r)
		acquire((const void *)(uintptr_t)t);
	return r;
}

MN_VISIBLE void pthread_exit(void *ret)
{
	thread_ends();
	REAL(exit, "pthread_exit")(ret);
}

/* ---- Mutexes --------------------------------------------------------------------------------- */

MN_VISIBLE int pthread_mutex_lock(pthread_mutex_t *m)
{
	int r = REAL(lock, "pthread_mutex_lock")(m);

	if (!r)
		acquire(m);
	return r;
}

MN_VISIBLE int pthread_mutex_trylock(pthread_mutex_t *m)
{
	int r = REAL(trylock, "pthread_mutex_trylock")(m);

	if (!r)
		acquire(m);
	return r;
}

MN_VISIBLE int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	int r = REAL(timedlock, "pthread_mutex_timedlock")(m, abstime);

	if (!r)
		acquire(m);
	return r;
}

MN_VISIBLE int pthread_mutex_unlock(pthread_mutex_t *m)
{
	release(m);
	return REAL(unlock, "pthread_mutex_unlock")(m);
}

/* ---- Condition variables and barriers -------------------------------------------------------- */

MN_VISIBLE int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	int r;

	release(m);
	r = REAL(cond_wait, "pthread_cond_wait")(c, m);
	acquire_wait(c, m);   /* the mutex is held again, whatever r says */
	return r;
}

MN_VISIBLE int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				      const struct timespec *abstime)
{
	int r;

	release(m);
	r = REAL(cond_timedwait, "pthread_cond_timedwait")(c, m, abstime);
	acquire_wait(c, m);
	return r;
}

MN_VISIBLE int pthread_cond_signal(pthread_cond_t *c)
{
	release(c);
	return REAL(cond_signal, "pthread_cond_signal")(c);
}

MN_VISIBLE int pthread_cond_broadcast(pthread_cond_t *c)
{
	release(c);
	return REAL(cond_broadcast, "pthread_cond_broadcast")(c);
}

MN_VISIBLE int pthread_barrier_wait(pthread_barrier_t *b)
{
	int r;

	release(b);
	r = REAL(barrier_wait, "pthread_barrier_wait")(b);
	acquire(b);
	return r;
}
