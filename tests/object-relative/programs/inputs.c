/* A program whose object-relative profile depends on its input, for the merge tests
 * (merge.sh): `inputs N SEED` builds a list of N nodes linked in an order shuffled by SEED, walks
 * it (an irregular stream: past 30 LMADs for N of a few dozen), sums an array of N elements
 * written just before (a regular stream, and a store-to-load dependence for `mnemo derive`),
 * frees every other node (lifetimes of two kinds) and keeps a global counter.  Three runs with
 * different N and SEED share their sites and differ in every count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	int64_t key;
};

static volatile int64_t visits;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	unsigned seed = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
	struct node **v;
	volatile int64_t *a;
	struct node *p;
	int64_t sum = 0;

	if (n < 1)
		n = 1;
	v = malloc((size_t)n * sizeof(*v));
	a = malloc((size_t)n * sizeof(*a));
	if (!v || !a)
		return 1;
	for (int i = 0; i < n; i++) {
		v[i] = malloc(sizeof(struct node));
		if (!v[i])
			return 1;
		v[i]->key = i;
	}
	/* Fisher-Yates with a small LCG: the order of the links depends on SEED. */
	for (int i = n - 1; i > 0; i--) {
		int j;
		struct node *t;

		seed = seed * 1103515245u + 12345u;
		j = (int)((seed >> 8) % (unsigned)(i + 1));
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
	for (int i = 0; i < n; i++)
		v[i]->next = i + 1 < n ? v[i + 1] : NULL;
	for (p = v[0]; p; p = p->next) {
		sum += p->key;
		visits++;
	}
	for (int i = 0; i < n; i++)
		a[i] = i * 3;
	for (int i = 0; i < n; i++)
		sum += a[i];
	for (int i = 0; i < n; i += 2)
		free(v[i]);
	printf("%lld\n", (long long)sum);
	return 0;
}
