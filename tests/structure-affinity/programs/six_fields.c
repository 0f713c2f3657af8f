/* A structure of six ints (24 bytes) in an array, walked by three loops that touch disjoint groups
 * of its fields: {a, d}, {b, e, f} and {c}, each field written once per element per round, two
 * rounds of 1200 elements (2400 accesses a field).  Size 24, fields 0, 4, 8, 12, 16, 20 (a to f);
 * every affinity within a group 1, across groups 0: split into {a, d}, {b, e, f} and {c}.
 *
 * Built with -DUNROLL=k, every loop is unrolled k times by `#pragma clang loop unroll_count(k)`
 * (N a multiple of 2, 3 and 4: no remainder loop), so every instruction strides k elements: the
 * inferred size is 24k, a multiple of the declared 24, and the module folds it back (`source:
 * folded`): the same size 24, the same six fields each named once, the same advice. */
#include <stdio.h>
#include <stdlib.h>

#define N 1200

#ifdef UNROLL
#define DO_PRAGMA(x) _Pragma(#x)
#define PRAGMA(x) DO_PRAGMA(x)
#define LOOP PRAGMA(clang loop unroll_count(UNROLL))
#else
#define LOOP
#endif

struct six {
	int a, b, c, d, e, f;
};

static __attribute__((noinline)) int run(int argc, char **argv)
{
	struct six *arr = malloc(N * sizeof(*arr));   /* MARK:arr */

	if (!arr)
		return 1;
	for (int r = 0; r < 2; r++) {
		LOOP
		for (int i = 0; i < N; i++) {                /* MARK:loop_ad */
			arr[i].a = i + argc;
			arr[i].d = 3 * i;
		}
		LOOP
		for (int i = 0; i < N; i++) {                /* MARK:loop_bef */
			arr[i].b = i ^ r;
			arr[i].e = i + 7;
			arr[i].f = 5 * i + argc;
		}
		LOOP
		for (int i = 0; i < N; i++)                  /* MARK:loop_c */
			arr[i].c = i - r;
		/* The array is otherwise dead: keep every store to it, read nothing back. */
		__asm__ volatile("" : : "r"(arr) : "memory");
	}
	printf("%d\n", N * argc);
	free(arr);
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
