/* Inputs that change which fields are used together, for the merge tests (test_merge.c): a global
 * array of struct rec {int a, b, c, d} (16 bytes); AC passes of a loop reading a and c, BD passes
 * of a loop reading b and d, ALL passes of a loop writing all four; N = 1000 elements.  Field a
 * costs (AC + ALL) N, c the same, b and d (BD + ALL) N.  Affinities (Eq. 7): A(a, c) = A(b, d) = 1
 * whenever both are touched; A(a, b) = 2 ALL N / ((AC + ALL) N + (BD + ALL) N).
 * Example: "1 3 0 0" touches only a and c (do not split); merged with "1 0 5 1", a and c cost 4N,
 * b and d 6N, A(a, b) = 2N / 10N = 0.2: split into {a, c} and {b, d}.  hist, a second global,
 * takes one read and one write per AC pass.
 * Arguments: REPEAT (the whole workload, for sampling.sh), AC, BD, ALL; defaults 1 1 1 1. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000

struct rec {
	int a, b, c, d;
};

struct rec table[N];   /* MARK:table */
long hist[16];         /* MARK:hist */

static __attribute__((noinline)) long run(int ac, int bd, int all)
{
	long s = 0;

	for (int r = 0; r < all; r++)
		for (int i = 0; i < N; i++) {        /* MARK:all */
			table[i].a = i + r;
			table[i].b = 2 * i;
			table[i].c = 3 * i;
			table[i].d = i ^ r;
		}
	for (int r = 0; r < ac; r++) {
		for (int i = 0; i < N; i++)          /* MARK:ac */
			s += (table[i].a + table[i].c) ^ r;
		hist[r & 15] += s;
	}
	for (int r = 0; r < bd; r++)
		for (int i = 0; i < N; i++)          /* MARK:bd */
			s += (table[i].b * table[i].d) ^ r;
	return s;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 1, ac = argc > 2 ? atoi(argv[2]) : 1;
	int bd = argc > 3 ? atoi(argv[3]) : 1, all = argc > 4 ? atoi(argv[4]) : 1;
	long s = 0;

	for (int k = 0; k < reps; k++)
		s += run(ac, bd, all);
	printf("%ld\n", s);
	return 0;
}
