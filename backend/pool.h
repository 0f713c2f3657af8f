/*
 * A fixed pool of worker threads for fork-join jobs: the backend's data-parallel workers run one
 * job per popped queue buffer (every worker decodes the same buffer), and the reduction maps
 * (map.h) reduce a full insert buffer on it while the module goes on filling the other one
 * (PROMPT 5.3, Figure 5).
 *
 * A job is a function called once on each pool thread with the thread's index.  mn_pool_start()
 * hands it over and returns at once; mn_pool_wait() returns when every thread has finished it.
 * mn_pool_run() is the synchronous form in which the calling thread takes part as index 0.
 *
 * Waiting, on either side, spins for a bounded time (about 50 us) and then sleeps on a futex: on a
 * two-core machine the pool shares the cores with the profiled program and the other backends, and
 * an idle pool must cost nothing.  One job at a time: a pool is driven by one thread (its owner),
 * which must wait for a job before it starts the next.  Everything fn wrote is visible to the owner
 * when mn_pool_wait() or mn_pool_run() returns.
 */
#ifndef MNEMO_POOL_H
#define MNEMO_POOL_H

#ifdef __cplusplus
extern "C" {
#endif

struct mn_pool;

typedef void mn_pool_fn(void *arg, unsigned index);

/*
 * Starts nthreads threads (0 is allowed: then mn_pool_run() runs only the caller's share and
 * mn_pool_start() runs nothing).  Returns 0, -EINVAL for more than MN_POOL_MAX threads, or -errno
 * from pthread_create (no thread is left running then).
 */
#define MN_POOL_MAX 256
int mn_pool_create(struct mn_pool **pp, unsigned nthreads);
/* Waits for a job in flight, stops the threads and frees the pool.  NULL is a no-op. */
void mn_pool_destroy(struct mn_pool *p);
/* The number of pool threads. */
unsigned mn_pool_threads(const struct mn_pool *p);

/* Calls fn(arg, i) on pool thread i, for i in [0, threads), and returns without waiting. */
void mn_pool_start(struct mn_pool *p, mn_pool_fn *fn, void *arg);
/* Returns once every thread has returned from the job started last (at once if none). */
void mn_pool_wait(struct mn_pool *p);
/*
 * Calls fn(arg, 0) on the calling thread and fn(arg, 1 + i) on pool thread i, and returns when all
 * have returned: threads + 1 shares in all.
 */
void mn_pool_run(struct mn_pool *p, mn_pool_fn *fn, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* MNEMO_POOL_H */
