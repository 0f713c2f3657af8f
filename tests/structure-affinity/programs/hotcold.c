/* A global array of structures with a hot pair of fields and a cold pair: one loop writes all four
 * fields once (N accesses each); another, run 9 times, reads only the hot pair.  Costs: hot1 and
 * hot2 10N each, cold1 and cold2 N each.  Affinities (Eq. 7): hot1-hot2 (20N)/(20N) = 1,
 * cold1-cold2 (2N)/(2N) = 1, hot-cold (N + N)/(10N + N) = 2/11: split into {0, 4} and {8, 12}. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000

struct rec {
	int hot1, hot2, cold1, cold2;
};

struct rec table[N];   /* MARK:table */

static __attribute__((noinline)) int run(int argc, char **argv)
{
	long s = 0;

	for (int i = 0; i < N; i++) {        /* MARK:all */
		table[i].hot1 = i;
		table[i].hot2 = 2 * i;
		table[i].cold1 = 3 * i;
		table[i].cold2 = i + argc;
	}
	for (int r = 0; r < 9; r++)
		for (int i = 0; i < N; i++)   /* MARK:hot */
			s += (table[i].hot1 + table[i].hot2) ^ r;
	printf("%ld\n", s);
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
