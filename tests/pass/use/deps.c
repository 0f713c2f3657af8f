/* Two loops with known dependences (tests/pass/use): the first carries one (h[k[i]] is read and
 * written again four iterations later), the second carries none (c[i] from a[i] and b[i]).  The
 * trip counts come from the command line, so that the compiler can neither unroll the loops nor
 * forward the histogram's stores to its loads. */
#include <stdio.h>
#include <stdlib.h>

#define N 4096

int k[N];
long h[16], a[N], b[N], c[N];   /* 8-byte elements: dependence tracks 8-byte words */

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;

	if (n > N)
		n = N;
	for (int i = 0; i < n; i++) {
		k[i] = i % 4;
		a[i] = i;
		b[i] = 2 * i;
	}
	for (int i = 0; i < n; i++)
		h[k[i]] += 1;                   /* CARRIED */
	for (int i = 0; i < n; i++)
		c[i] = a[i] + b[i];             /* NOT CARRIED */
	printf("%ld %ld\n", h[1], c[n - 1]);
	return 0;
}
