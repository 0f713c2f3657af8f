/* An array of structures on the stack whose three fields are always used together: every loop
 * touches x, y and z of each element.  Size 24, fields 0, 8 and 16, every affinity 1: do not
 * split. */
#include <stdio.h>
#include <stdlib.h>

#define N 500

struct point {
	double x, y, z;
};

static __attribute__((noinline)) int run(int argc, char **argv)
{
	struct point pts[N];   /* MARK:pts */
	double s = 0;

	for (int i = 0; i < N; i++) {
		pts[i].x = i;
		pts[i].y = i * 0.5 + argc;
		pts[i].z = -i;
	}
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < N; i++)
			s += pts[i].x * pts[i].y + pts[i].z;
	printf("%g\n", s);
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
