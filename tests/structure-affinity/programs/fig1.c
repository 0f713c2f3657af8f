/* The paper's Figure 1 (StructSlim): an array of structures of four ints, loops using fields a and
 * c, other loops using b and d (each pair written by one loop and read by another, four rounds:
 * 8000 accesses per field).  Size 16, fields at 0, 4, 8 and 12; {a, c} and {b, d} always go
 * together and never with each other: split into {0, 8} and {4, 12}. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000

struct type {
	int a, b, c, d;
};

static __attribute__((noinline)) int run(int argc, char **argv)
{
	struct type *arr = malloc(N * sizeof(*arr));   /* MARK:arr */
	long s1 = 0, s2 = 0;

	if (!arr)
		return 1;
	for (int r = 0; r < 4; r++) {
		for (int i = 0; i < N; i++) {                /* MARK:loop_ac */
			arr[i].a = i + argc;
			arr[i].c = 2 * i;
		}
		for (int i = 0; i < N; i++) {                /* MARK:loop_bd */
			arr[i].b = i;
			arr[i].d = i ^ argc;
		}
		for (int i = 0; i < N; i++)
			s1 += arr[i].a + arr[i].c;
		for (int i = 0; i < N; i++)
			s2 += arr[i].b * arr[i].d;
	}
	printf("%ld %ld\n", s1, s2);
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
