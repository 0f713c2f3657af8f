/*
 * For tests/runtime/sample.sh: argv[1] loads (default 1,000,000) in one loop, one per iteration,
 * and one store after it.  Prints the sum, which must not change when the loads are sampled.
 */
#include <stdio.h>
#include <stdlib.h>

volatile int src = 3;
volatile long dst;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, s = 0;

#pragma clang loop unroll(disable) vectorize(disable)
	for (long i = 0; i < n; i++)
		s += src;
	dst = s;
	printf("%ld\n", s);
	return 0;
}
