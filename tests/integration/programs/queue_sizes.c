/*
 * Millions of loads and stores whose profile is the same on every run: global arrays only (no heap
 * or stack address is ever a value), indexes and values computed from the loop counters.  Enough
 * events to go around a ring of 16 MiB buffers: the profile must not depend on MNEMO_QUEUE_MB.
 */
#include <stdio.h>

enum { N = 4096, ROUNDS = 800 };

static long a[N], b[N];

int main(void)
{
	long sum = 0;

	for (int r = 0; r < ROUNDS; r++) {
#pragma clang loop unroll(disable) vectorize(disable)
		for (int i = 0; i < N; i++) {
			a[i] = (long)i * 3 + r;                  /* MARK:store_a */
			sum += b[(i * 7) % N] + a[(i * 13) % N]; /* MARK:loads */
			b[i] = sum & 0xff;                       /* MARK:store_b */
		}
	}
	printf("%ld\n", sum);
	return 0;
}
