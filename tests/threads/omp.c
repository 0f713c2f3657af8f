/*
 * An OpenMP program with known answers (tests/threads/omp.sh): one `parallel for` over an array
 * of N ints, its store run exactly N times in all over however many threads OMP_NUM_THREADS
 * gives it (schedule(static, CHUNK): every thread gets chunks, the main thread too); then a
 * serial sum on the main thread, N loads.  Prints the sum, the same for any number of threads.
 *
 * The `for` of the parallel loop is on the line marked PARALLEL-FOR, which omp.sh looks up: the
 * store's loop site in the profile must be that line, whichever thread ran the iteration.
 */
#include <stdio.h>

#define N     100000
#define CHUNK 1000

static int a[N];

int main(void)
{
	long s = 0;

#pragma omp parallel for schedule(static, CHUNK)
	for (int i = 0; i < N; i++)   /* PARALLEL-FOR */
		a[i] = 3 * i + 1;
	for (int i = 0; i < N; i++)
		s += a[i];
	printf("omp: sum %ld\n", s);
	return 0;
}
