/*
 * For tests/runtime/sample_summaries.sh: loops the pass makes mixed (pass/README.md), over global
 * arrays of argv[1] elements (default 100,000), argv[2] rounds (default 10).  Each round runs a
 * histogram, bins[d[i]]++ (d[i] summarized, the load and store of the bin mixed); a loop with a
 * conditional access, c[idx[i]] where a[i] > 5 (a[i] and b[i] summarized); and a loop with mixed
 * accesses at different ranks among its summarized ones, c[idx[i]] += p[i].x then
 * p[i].z = c[idx[i] * 7 % 4096].  Every other loop calls a function, which the pass keeps per
 * access, so that every access summarized is a mixed loop's: 6 per element and round.
 *
 * With argv[3] = 1, a signal handler runs a mixed loop of its own in the middle of the
 * histogram of round 1: bins are read-only then, the first store to one faults, and the SIGSEGV
 * handler makes them writable and runs a histogram of its own (1,000 elements, 1,000 more
 * accesses summarized).  The store faults after its callback, at the same point of every build,
 * so that the handler's events come at the same place in the stream whatever the
 * instrumentation.  Prints a sum, which must not change with sampling or summaries.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAX 1000000
#define CS 4096

unsigned char d[MAX], hd[1000];
int a[MAX], b[MAX], c[CS], idx[MAX];
long bins[512] __attribute__((aligned(4096))), hbins[256];
struct pair {
	long x;
	long z;
} p[MAX];

static unsigned seed = 1;

/* Not inlined: a loop that calls it is not summarized. */
static __attribute__((noinline)) unsigned draw(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

/* The same, for the loops that sum up. */
static __attribute__((noinline)) long sum_up(long s)
{
	seed++;
	return s;
}

/* The first store to the read-only bins: a histogram of its own, a mixed loop, then on. */
static void on_segv(int sig)
{
	(void)sig;
	mprotect(bins, sizeof(bins), PROT_READ | PROT_WRITE);
	for (int j = 0; j < 1000; j++)
		hbins[hd[j]]++;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, rounds = argc > 2 ? atol(argv[2]) : 10, s = 0;
	int segv = argc > 3 && atoi(argv[3]) == 1;

	if (n < 1 || n > MAX || rounds < 1)
		return 2;
	for (long i = 0; i < n; i++) {
		d[i] = (unsigned char)draw();
		a[i] = (int)(draw() % 11);
		idx[i] = (int)(draw() % CS);
		p[i].x = draw() % 5;
	}
	for (int j = 0; j < 1000; j++)
		hd[j] = (unsigned char)draw();
	if (segv) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_segv;
		if (sigaction(SIGSEGV, &sa, NULL))
			return 3;
	}
	for (long r = 0; r < rounds; r++) {
		if (segv && r == 1 && mprotect(bins, sizeof(bins), PROT_READ))
			return 4;
		for (long i = 0; i < n; i++)
			bins[d[i]]++;
		for (long i = 0; i < n; i++) {
			if (a[i] > 5)
				s += c[idx[i]];
			b[i] = a[i] + (int)r;
		}
		for (long i = 0; i < n; i++) {
			c[idx[i]] += (int)p[i].x;
			p[i].z = c[idx[i] * 7 % CS];
		}
	}
	for (int k = 0; k < 256; k++)
		s = sum_up(s + bins[k] * (k + 1) + hbins[k]);
	for (long i = 0; i < n; i += 1000)
		s = sum_up(s + b[i] + p[i].z);
	printf("%ld\n", s);
	return 0;
}
