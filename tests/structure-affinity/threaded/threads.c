/* hotcold.c's work split over four threads: each thread makes its own array of N / 4 structures
 * (one heap data object, four instances), writes all four fields once and reads the hot pair 9
 * times; the main thread frees the arrays after joining them (made by one thread, freed by
 * another).  Every thread's accesses count, whatever the interleaving: hot1 and hot2 cost 10N
 * each, cold1 and cold2 N each, the same answers as hotcold.c's: size 16 from strides (each
 * thread's walk is its own stream's last access), affinities hot1-hot2 = cold1-cold2 = 1,
 * hot-cold 2/11, split into {hot1, hot2} and {cold1, cold2}.  The joins are ordering points: the
 * backend takes every array's accesses before its free, whatever the interleaving. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N        1000
#define NTHREADS 4

struct rec {
	int hot1, hot2, cold1, cold2;
};

static struct rec *tables[NTHREADS];
static long sums[NTHREADS];

static __attribute__((noinline)) struct rec *make(void)
{
	return malloc(N / NTHREADS * sizeof(struct rec));   /* MARK:table */
}

static void *worker(void *arg)
{
	int k = (int)(long)arg;
	struct rec *t = make();
	long s = 0;

	for (int i = 0; i < N / NTHREADS; i++) {        /* MARK:all */
		t[i].hot1 = i;
		t[i].hot2 = 2 * i;
		t[i].cold1 = 3 * i;
		t[i].cold2 = i + k;
	}
	for (int r = 0; r < 9; r++)
		for (int i = 0; i < N / NTHREADS; i++)   /* MARK:hot */
			s += (t[i].hot1 + t[i].hot2) ^ r;
	tables[k] = t;
	sums[k] = s;
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];
	long s = 0;
	for (long k = 0; k < NTHREADS; k++)
		pthread_create(&t[k], NULL, worker, (void *)k);
	for (int k = 0; k < NTHREADS; k++)
		pthread_join(t[k], NULL);
	for (int k = 0; k < NTHREADS; k++) {
		s += sums[k];
		free(tables[k]);
	}
	printf("%ld\n", s);
	return 0;
}
