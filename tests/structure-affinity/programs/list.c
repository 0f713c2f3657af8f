/* The same linked list twice: once with its nodes in one array from one malloc (contiguous), once
 * with every node its own malloc (separate).  Both are walked out of allocation order (node
 * j * 7 mod N follows node (j - 1) * 7 mod N).  Contiguous: the distances between nodes of the one
 * instance are multiples of 24, whose gcd is 24: size 24.  Separate: no instruction touches one
 * instance at two addresses, so there is no stride and the size is unknown; the fields are then
 * the offsets from each node's start, the same three.
 *
 * Loops: build (key, val, next), sum (key, val, next) once, search (key, next) 4 times.  Per field:
 * key 6N, val 2N, next 6N.  A(key, next) = 1; A(key, val) = (2N + 2N) / (6N + 2N) = 0.5, as
 * A(val, next): split into {0, 16} and {8}. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000
#define P 7

struct node {
	long key;              /* 0 */
	long val;              /* 8 */
	struct node *next;     /* 16 */
};

static long walk(struct node *head, long *found)
{
	long s = 0, f = 0;

	for (struct node *n = head; n; n = n->next)        /* MARK:sum */
		s += n->key * n->val;
	for (int r = 0; r < 4; r++)
		for (struct node *n = head; n; n = n->next)  /* MARK:search */
			f += n->key == 3 * r;
	*found += f;
	return s;
}

static __attribute__((noinline)) int run(int argc, char **argv)
{
	struct node *pool = malloc(N * sizeof(*pool));   /* MARK:contig */
	struct node *nodes[N], *head = NULL;
	long found = 0, s;

	if (!pool)
		return 1;
	for (int j = N - 1; j >= 0; j--) {                 /* MARK:build_contig */
		struct node *n = &pool[j * P % N];

		n->key = j;
		n->val = j + argc;
		n->next = head;
		head = n;
	}
	s = walk(head, &found);
	head = NULL;
	for (int j = 0; j < N; j++)
		nodes[j] = malloc(sizeof(struct node));   /* MARK:separate */
	for (int j = N - 1; j >= 0; j--) {                 /* MARK:build_separate */
		struct node *n = nodes[j * P % N];

		n->key = j;
		n->val = j + argc;
		n->next = head;
		head = n;
	}
	s += walk(head, &found);
	printf("%ld %ld\n", s, found);
	for (int j = 0; j < N; j++)
		free(nodes[j]);
	free(pool);
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
