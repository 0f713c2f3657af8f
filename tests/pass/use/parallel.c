/* Parallelization verdicts (tests/pass/use/use.sh parallel): each loop below ran 1000 times or so,
 * and the V: comment on its line names the verdict expected.  The dependence profile sees memory
 * only: y[i-1] reaches y[i] through a register (LLVM's LoopLoadElimination forwards the store of
 * one iteration to the load of the next, distance 1 only), so the profile shows nothing carried and
 * the verdict rests on the loop's header phis; x[i-2] stays in memory and the profile carries it. */
#include <stdio.h>

#define N 1000

long x[N], y[N], a[N], b[N];   /* 8-byte elements: dependence tracks 8-byte words */

int main(void)
{
	long sum = 0;
	int i;

	for (i = 0; i < N; i++) b[i] = i;
	x[0] = 1;
	x[1] = 2;
	y[0] = 1;
	for (i = 2; i < N; i++) x[i] = x[i-2] * 3 + 1;   /* V: memory */
	for (i = 1; i < N; i++) y[i] = y[i-1] * 3 + 1;   /* V: register */
	for (i = 0; i < N; i++) a[i] = b[i] * 2;         /* V: candidate */
	for (i = 0; i < N; i++) sum += a[i];             /* V: reduction */
	printf("%ld %ld %ld\n", x[N - 1], y[N - 1], sum);
	return 0;
}
