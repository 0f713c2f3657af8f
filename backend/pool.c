/*
 * The thread pool (pool.h).  Two futex words carry a job: `gen`, bumped by the owner to start one,
 * on which idle threads sleep, and `pending`, the threads still running it, on which the owner
 * sleeps.  A sleeper announces itself in `sleepers` before it sleeps, so the side that changes a
 * word makes the futex system call only when someone may be asleep on it.  That is race-free
 * because both sides use sequentially consistent operations: either the waker sees the count, or
 * the sleeper's FUTEX_WAIT sees the word already changed and returns at once.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier.h"
#include "pool.h"

/* Spins before sleeping: with pause at ~40-140 cycles, ~20-60 us. */
#define SPINS 1000

struct mn_pool {
	unsigned n;
	pthread_t *threads;
	mn_pool_fn *fn;              /* the job; written before gen is bumped */
	void *arg;
	unsigned base;               /* fn sees index base + i: 0 from start, 1 from run */
	bool stop;                   /* the job is "exit" */
	uint32_t gen __attribute__((aligned(64)));   /* jobs started */
	uint32_t gen_sleepers;       /* threads asleep (or about to be) on gen */
	uint32_t pending __attribute__((aligned(64)));  /* threads still in the current job */
	uint32_t pending_sleepers;   /* 0 or 1: the owner asleep on pending */
};

struct start {
	struct mn_pool *p;
	unsigned index;
};

static void futex_wait(uint32_t *w, uint32_t v)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Waits until *w != v: spins, then sleeps, announcing itself in *sleepers. */
static void wait_change(uint32_t *w, uint32_t v, uint32_t *sleepers)
{
	for (unsigned i = 0; i < SPINS; i++) {
		if (mn_load_acquire(w) != v)
			return;
		mn_cpu_relax();
	}
	while (__atomic_load_n(w, __ATOMIC_SEQ_CST) == v) {
		__atomic_fetch_add(sleepers, 1, __ATOMIC_SEQ_CST);
		futex_wait(w, v);
		__atomic_fetch_sub(sleepers, 1, __ATOMIC_SEQ_CST);
	}
}

/* Wakes the sleepers on w after the caller changed it (with a seq_cst operation). */
static void wake_if_sleeping(uint32_t *w, uint32_t *sleepers)
{
	if (__atomic_load_n(sleepers, __ATOMIC_SEQ_CST))
		futex_wake(w);
}

static void *thread_main(void *v)
{
	struct mn_pool *p = ((struct start *)v)->p;
	unsigned index = ((struct start *)v)->index;
	uint32_t seen = 0;

	free(v);
	for (;;) {
		wait_change(&p->gen, seen, &p->gen_sleepers);
		/* Acquire (in wait_change) pairs with the seq_cst bump in start(): fn, arg, stop. */
		seen = mn_load_acquire(&p->gen);
		if (p->stop)
			return NULL;
		p->fn(p->arg, p->base + index);
		/* Publishes what fn wrote; pairs with the acquire load in mn_pool_wait(). */
		if (__atomic_sub_fetch(&p->pending, 1, __ATOMIC_SEQ_CST) == 0)
			wake_if_sleeping(&p->pending, &p->pending_sleepers);
	}
}

static void start(struct mn_pool *p, mn_pool_fn *fn, void *arg, unsigned base, bool stop)
{
	p->fn = fn;
	p->base = base;
	p->arg = arg;
	p->stop = stop;
	__atomic_store_n(&p->pending, p->n, __ATOMIC_RELAXED);
	/* Publishes fn, arg, stop and pending; pairs with the acquire load in thread_main(). */
	__atomic_add_fetch(&p->gen, 1, __ATOMIC_SEQ_CST);
	wake_if_sleeping(&p->gen, &p->gen_sleepers);
}

void mn_pool_start(struct mn_pool *p, mn_pool_fn *fn, void *arg)
{
	if (p->n)
		start(p, fn, arg, 0, false);
}

void mn_pool_wait(struct mn_pool *p)
{
	uint32_t left;

	while ((left = mn_load_acquire(&p->pending)) != 0)
		wait_change(&p->pending, left, &p->pending_sleepers);
}

void mn_pool_run(struct mn_pool *p, mn_pool_fn *fn, void *arg)
{
	if (p->n)
		start(p, fn, arg, 1, false);
	fn(arg, 0);
	mn_pool_wait(p);
}

int mn_pool_create(struct mn_pool **pp, unsigned nthreads)
{
	struct mn_pool *p;
	int err = 0;

	*pp = NULL;
	if (nthreads > MN_POOL_MAX)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->threads = calloc(nthreads ? nthreads : 1, sizeof(pthread_t)))) {
		free(p);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nthreads; i++) {
		struct start *s = malloc(sizeof(*s));

		if (!s) {
			err = -ENOMEM;
			break;
		}
		*s = (struct start){ p, i };
		err = -pthread_create(&p->threads[i], NULL, thread_main, s);
		if (err) {
			free(s);
			break;
		}
		p->n = i + 1;
	}
	if (err) {
		mn_pool_destroy(p);
		return err;
	}
	*pp = p;
	return 0;
}

void mn_pool_destroy(struct mn_pool *p)
{
	if (!p)
		return;
	mn_pool_wait(p);
	if (p->n)
		start(p, NULL, NULL, 0, true);
	for (unsigned i = 0; i < p->n; i++)
		pthread_join(p->threads[i], NULL);
	free(p->threads);
	free(p);
}

unsigned mn_pool_threads(const struct mn_pool *p)
{
	return p->n;
}
