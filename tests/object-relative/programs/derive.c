/* Known answers for `mnemo derive` (LEAP's derived profiles, Wu et al. 4.2): stores and loads over
 * three global arrays and one stack array, each loop a plain sweep of 8-byte elements.  Every load
 * reads a location whose last write is known by construction:
 *   a: written once by a_store, read by a_load: (a_store, a_load) 100 of 100;
 *   b: its low half written by b_low, its high half by b_high: 50 of 100 each;
 *   c: written by c_first, then all again by c_again: (c_again, c_load) 100 of 100, c_first none;
 *   s: a stack array, written by s_store and read by s_load: 64 of 64, with MNEMO_OBJREL_STACK=1
 *      only (else its accesses are unattributed and give no pair).
 * Every sweep has stride 8 in all but its first access: strongly strided.  volatile keeps each
 * access in memory and each loop as written. */
#include <stdint.h>
#include <stdio.h>

#define N 100

static volatile int64_t a[N], b[N], c[N];

static __attribute__((noinline)) int64_t stack_sum(int k)
{
	volatile int64_t s[64];   /* MARK:s */
	int64_t t = 0;

	for (int i = 0; i < 64; i++)
		s[i] = i * k;     /* MARK:s_store */
	for (int i = 0; i < 64; i++)
		t += s[i];        /* MARK:s_load */
	return t;
}

int main(int argc, char **argv)
{
	int64_t sum = 0;

	for (int i = 0; i < N; i++)
		a[i] = i + argc;          /* MARK:a_store */
	for (int i = 0; i < N / 2; i++)
		b[i] = i;                 /* MARK:b_low */
	for (int i = N / 2; i < N; i++)
		b[i] = -i;                /* MARK:b_high */
	for (int i = 0; i < N; i++)
		c[i] = i + 7;             /* MARK:c_first */
	for (int i = 0; i < N; i++)
		c[i] = i * argc;          /* MARK:c_again */
	for (int i = 0; i < N; i++)
		sum += a[i];              /* MARK:a_load */
	for (int i = 0; i < N; i++)
		sum += b[i];              /* MARK:b_load */
	for (int i = 0; i < N; i++)
		sum += c[i];              /* MARK:c_load */
	sum += stack_sum(argc);
	printf("%lld\n", (long long)sum);
	return 0;
}
