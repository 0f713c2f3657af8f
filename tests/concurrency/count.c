/*
 * The input is in the counts: `count K` runs one loop of K iterations, each storing to a heap
 * array, and prints K.  Built for null and value-pattern, its profile says K three ways that
 * come from three places: the header's argv (the runtime), null's loop_iter (one backend's
 * section) and the executions of value-pattern's store (another backend's section).
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long k = argc > 1 ? atol(argv[1]) : 1;
	long *a = malloc(64 * sizeof(*a));

	if (!a || k < 1)
		return 2;
#pragma clang loop unroll(disable) vectorize(disable)
	for (long i = 0; i < k; i++)
		a[i % 64] = i;                   /* one store per iteration */
	printf("%ld\n", a[(k - 1) % 64] + 1);   /* k: the last store is read */
	free(a);
	return 0;
}
