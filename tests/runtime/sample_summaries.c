/*
 * For tests/runtime/sample_summaries.sh: loops the pass summarizes (every access affine, once per
 * iteration, no call), over global arrays of argv[1] elements (default 100,000), argv[2] rounds
 * (default 10).  Each round makes 4 accesses per element: the int load a[i] and store b[i], and
 * the loads of two fields of the 16-byte structure c[i].  Prints a sum, which must not change
 * with sampling or summaries.
 */
#include <stdio.h>
#include <stdlib.h>

#define MAX 1000000

struct pair {
	long x;
	long z;
};

int a[MAX], b[MAX];
struct pair c[MAX];

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, rounds = argc > 2 ? atol(argv[2]) : 10, s = 0;

	if (n < 1 || n > MAX || rounds < 1)
		return 2;
	for (long i = 0; i < n; i++) {
		a[i] = (int)(i % 7);
		c[i].x = i % 5;
		c[i].z = i % 3;
	}
	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < n; i++)
			b[i] = a[i] * 3 + (int)r;
		for (long i = 0; i < n; i++)
			s += c[i].x + c[i].z;
	}
	for (long i = 0; i < n; i += 1000)
		s += b[i];
	printf("%ld\n", s);
	return 0;
}
