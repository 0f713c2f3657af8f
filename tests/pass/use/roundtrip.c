/* Round trip (tests/pass/use/use.sh roundtrip): profiled, then rebuilt with the profile as is
 * (every site matches by id) and after an edit that adds lines to helper() only (EDIT below):
 * every site of the functions after it must still match, by location. */
#include <stdio.h>
#include <stdlib.h>

volatile int bias = 1; /* a load in helper() below the edit, which moves within helper() */

__attribute__((noinline)) int helper(int x)
{
	/* EDIT */
	return x * 2 + bias;
}

struct pair {
	int a, b;
};

__attribute__((noinline)) long sum_pairs(const struct pair *p, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += p[i].a * p[i].b;
	return s;
}

__attribute__((noinline)) void fill(struct pair *p, int n)
{
	for (int i = 0; i < n; i++) {
		p[i].a = helper(i);
		p[i].b = i & 7;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 500;
	struct pair *p = malloc(n * sizeof(*p));

	if (!p)
		return 1;
	fill(p, n);
	printf("%ld\n", sum_pairs(p, n));
	free(p);
	return 0;
}
