/*
 * Threads with known answers for dependence (README, "Threads"; tests/dependence/test_known.c):
 * NTHREADS threads each fill a private array in one loop and carry a chain along it in another,
 * then add to a shared counter ADDS times, under a mutex, or with no lock at all when the first
 * argument is "race" (the race is the point: the counter's final value may then be short).
 *
 * Known answers, summed over the threads: the fill loop NTHREADS invocations of FILL iterations;
 * the chain loop NTHREADS x (FILL - 1) iterations, a[i] = a[i - 1] + 1 a carried raw at distance 1
 * in iterations 2 .. FILL - 1 (NTHREADS x (FILL - 2)), and a waw from the fill loop's stores
 * (under loop 0: that invocation is over) NTHREADS x (FILL - 1).  The counter: every load after
 * the first finds a store (NTHREADS x ADDS - 1 raws in all), its own thread's (the add loop's
 * carried raw) or another's (a cross-thread raw), ordered by the mutex or unordered in a race.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NTHREADS 4
#define FILL     1000
#define ADDS     200

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int locked = 1;
static volatile long counter;   /* a load and a store every time */
static long arrays[NTHREADS][FILL];   /* long: no word of two threads */

static void *worker(void *arg)
{
	int k = (int)(long)arg;
	volatile long *a = arrays[k];   /* a[i - 1] read from memory, not kept in a register */

	for (int i = 0; i < FILL; i++)         /* MARK:fill */
		a[i] = i * k;                  /* MARK:fill_store */
	for (int i = 1; i < FILL; i++)         /* MARK:chain */
		a[i] = a[i - 1] + 1;           /* MARK:chain_body */
	for (int i = 0; i < ADDS; i++) {       /* MARK:add */
		if (locked)
			pthread_mutex_lock(&mu);
		counter += 1;                  /* MARK:count */
		if (locked)
			pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	long sum = 0;

	locked = !(argc > 1 && !strcmp(argv[1], "race"));
	for (long k = 0; k < NTHREADS; k++)
		pthread_create(&t[k], NULL, worker, (void *)k);
	for (int k = 0; k < NTHREADS; k++)
		pthread_join(t[k], NULL);
	for (int k = 0; k < NTHREADS; k++)
		sum += arrays[k][FILL - 1];
	printf("%ld %ld\n", locked ? counter : 0, sum);
	return 0;
}
