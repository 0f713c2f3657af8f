/* Two different structures in one loop: struct a3 (three ints, 12 bytes) and struct b3 (three
 * doubles, 24 bytes).  The first loop touches a3.a, a3.c, b3.x and b3.z; the second a3.b and b3.y.
 * Each structure on its own: a3 size 12, split into {0, 8} and {4}; b3 size 24, split into
 * {0, 16} and {8}.  Nothing else touches them, so every affinity is 1 or 0. */
#include <stdio.h>
#include <stdlib.h>

#define N 800

struct a3 {
	int a, b, c;
};

struct b3 {
	double x, y, z;
};

static __attribute__((noinline)) int run(int argc, char **argv)
{
	struct a3 *pa = malloc(N * sizeof(*pa));   /* MARK:pa */
	struct b3 *pb = malloc(N * sizeof(*pb));   /* MARK:pb */
	double s = 0;

	if (!pa || !pb)
		return 1;
	for (int i = 0; i < N; i++) {
		pa[i].a = i;
		pa[i].c = i + argc;
		pb[i].x = i * 0.5;
		pb[i].z = i - argc;
		s += pb[i].z;
	}
	for (int i = 0; i < N; i++) {
		pa[i].b = 2 * i;
		pb[i].y = pa[i].b + 1.0;
		s += pb[i].y;
	}
	/* The arrays are otherwise dead once summed: keep every store to them. */
	__asm__ volatile("" : : "r"(pa), "r"(pb) : "memory");
	printf("%g\n", s);
	free(pa);
	free(pb);
	return 0;
}

/* REPEAT (argument 1, default 1): the whole workload that many times, so that the sampling test
 * (sampling.sh) has enough accesses to sample; the profile's shape does not change with it. */
int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 1, rc = 0;

	for (int k = 0; k < reps && !rc; k++)
		rc = run(1, argv);
	return rc;
}
