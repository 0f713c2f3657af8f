/* Stack arrays of 24-byte structures, copied whole (16- and 8-byte accesses, or one of 24) and
 * updated field by field: where their page boundaries fall moves with the stack's randomized
 * address and with PAD (bytes taken off the stack first), and the dependence profile must not
 * (aslr.sh runs it with several of each and compares). */
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>

struct body {
	double x, v;
	long hits;
};

#define N 300

/* Each step: b[i] = a[i] moved, then a[i] = b[i - 1] (a shift, carried by the outer loop). */
__attribute__((noinline)) static double simulate(int steps)
{
	struct body a[N], b[N];
	double e = 0;

	for (int i = 0; i < N; i++)
		a[i] = (struct body){ i * 0.5, 1.0 / (i + 1), 0 };
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < N; i++) {
			b[i] = a[i];
			b[i].x += b[i].v;
			b[i].hits++;
		}
		a[0] = b[N - 1];
		for (int i = 1; i < N; i++)
			a[i] = b[i - 1];
	}
	for (int i = 0; i < N; i++)
		e += a[i].x * a[i].hits;
	return e;
}

int main(int argc, char **argv)
{
	const char *pad = getenv("PAD");
	volatile char *p = alloca(pad ? (size_t)atoi(pad) % 4096 + 1 : 1);

	p[0] = 0;
	printf("%.3f\n", simulate(argc > 1 ? atoi(argv[1]) : 20));
	return 0;
}
