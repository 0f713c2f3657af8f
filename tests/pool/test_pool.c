/*
 * The thread pool: each job calls every index exactly once, whatever fn wrote is visible to the
 * owner when the wait returns, jobs do not overlap, and an idle pool sleeps (its threads use no
 * CPU while nothing is started).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pool.h"

#define MAXT 9

struct job {
	uint64_t gen;                 /* the job's number, written into every slot */
	uint64_t slot[MAXT + 1];      /* slot[index] = gen * 1000 + index, by that index only */
	unsigned calls[MAXT + 1];
	unsigned running;             /* shares inside fn right now */
	unsigned overlap;             /* a share saw a slot of an older job after start */
};

static void job_fn(void *arg, unsigned index)
{
	struct job *j = arg;

	__atomic_fetch_add(&j->running, 1, __ATOMIC_RELAXED);
	/* Plain stores: the pool's wait must make them visible. */
	j->slot[index] = j->gen * 1000 + index;
	j->calls[index]++;
	__atomic_fetch_sub(&j->running, 1, __ATOMIC_RELAXED);
}

static void check_jobs(unsigned nthreads, bool run)
{
	struct mn_pool *p;
	struct job j;
	unsigned shares = run ? nthreads + 1 : nthreads;

	assert_int_equal(mn_pool_create(&p, nthreads), 0);
	assert_int_equal(mn_pool_threads(p), nthreads);
	memset(&j, 0, sizeof(j));
	for (uint64_t g = 1; g <= 3000; g++) {
		j.gen = g;
		if (run) {
			mn_pool_run(p, job_fn, &j);
		} else {
			mn_pool_start(p, job_fn, &j);
			mn_pool_wait(p);
		}
		assert_int_equal(j.running, 0);
		for (unsigned i = 0; i < shares; i++)
			if (j.slot[i] != g * 1000 + i)
				fail_msg("threads %u job %lu index %u: expected %lu, got %lu", nthreads,
					 (unsigned long)g, i, (unsigned long)(g * 1000 + i),
					 (unsigned long)j.slot[i]);
		for (unsigned i = shares; i <= MAXT; i++)
			assert_int_equal(j.slot[i], 0);
	}
	for (unsigned i = 0; i < shares; i++)
		assert_int_equal(j.calls[i], 3000);
	mn_pool_destroy(p);
}

static void test_start_wait(void **state)
{
	for (unsigned n = 0; n <= 4; n++)
		check_jobs(n, false);
	check_jobs(MAXT, false);
}

static void test_run(void **state)
{
	for (unsigned n = 0; n <= 4; n++)
		check_jobs(n, true);
	check_jobs(MAXT - 1, true);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Four idle threads over 300 ms: a spinning pool would burn ~1.2 s of CPU; a sleeping one none. */
static void test_idle_sleeps(void **state)
{
	struct mn_pool *p;
	struct job j = { .gen = 1 };
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	double before;

	assert_int_equal(mn_pool_create(&p, 4), 0);
	mn_pool_run(p, job_fn, &j);
	before = cpu_seconds();
	nanosleep(&ts, NULL);
	double used = cpu_seconds() - before;
	if (used > 0.05)
		fail_msg("idle pool used %.3f s of CPU in 0.3 s; expected ~0", used);
	mn_pool_destroy(p);
}

static void test_bad_size(void **state)
{
	struct mn_pool *p = (struct mn_pool *)1;

	assert_int_equal(mn_pool_create(&p, MN_POOL_MAX + 1), -22);
	assert_null(p);
	mn_pool_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_wait),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_idle_sleeps),
		cmocka_unit_test(test_bad_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
