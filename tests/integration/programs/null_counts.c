/*
 * Event counts known by construction, for the null module: main and work are the only functions
 * (2 entries, 2 exits), the loop in work is the only loop (1 invocation, 1000 iterations, 1 exit)
 * with one load and one store per iteration, and main allocates and frees two heap objects.
 */
#include <stdio.h>
#include <stdlib.h>

volatile int src = 7;
volatile int dst;
void *volatile keep;   /* the objects escape, so the allocations stay */

__attribute__((noinline)) static int work(int n)
{
	int s = 0;

#pragma clang loop unroll(disable) vectorize(disable)
	for (int i = 0; i < n; i++) {
		s += src;
		dst = s;
	}
	return s;
}

int main(void)
{
	keep = malloc(24);
	free(keep);
	keep = malloc(4096);
	free(keep);
	printf("%d\n", work(1000));
	return 0;
}
