/*
 * A little of everything the modules look at, scaled by argv[1] (and seeded by argv[2]), so that
 * runs with different arguments give different counts of the same sites: loops with and without
 * carried dependences, calls, memcpy and memset of a run-time length, a linked list and a tree on
 * the heap (RDS), an array of structures read field by field (affinity), constant and strided
 * loads (value patterns), and one access reached through one call path or another by the parity
 * of argv[2] (so that runs have contexts the others lack).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	long key;
};

struct tree {
	struct tree *left, *right;
	long key;
};

struct particle {
	double x, y, z;
	double vx, vy, vz;
	long id;
	char tag[8];
};

static volatile size_t len_of_copy = 16;   /* a length the compiler cannot see */

static struct tree *insert(struct tree *t, long key)
{
	if (!t) {
		t = calloc(1, sizeof(*t));
		t->key = key;
		return t;
	}
	if (key < t->key)
		t->left = insert(t->left, key);
	else
		t->right = insert(t->right, key);
	return t;
}

static long walk(const struct tree *t)
{
	return t ? t->key + walk(t->left) + walk(t->right) : 0;
}

static void free_tree(struct tree *t)
{
	if (t) {
		free_tree(t->left);
		free_tree(t->right);
		free(t);
	}
}

static long shared_counter;

static __attribute__((noinline)) void bump(long v)
{
	shared_counter += v;
}

static __attribute__((noinline)) void via_even(long v)
{
	bump(v);
}

static __attribute__((noinline)) void via_odd(long v)
{
	bump(v + 1);
}

static long scale(long v, long k)
{
	return v * k + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	unsigned long seed = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
	long *a = malloc(n * sizeof(*a)), sum = 0;
	struct particle *ps = calloc(n, sizeof(*ps));
	struct node *head = NULL;
	struct tree *root = NULL;
	char src[64], dst[64];

	for (long i = 0; i < n; i++)   /* carried through bump(), by one path or the other */
		if (seed & 1)
			via_odd(i);
		else
			via_even(i);
	for (long i = 0; i < n; i++)   /* no carried dependence */
		a[i] = scale(i, 3);
	for (long i = 1; i < n; i++)   /* carried at distance 1 */
		a[i] += a[i - 1];
	for (long i = 0; i < n; i++) {
		struct node *e = malloc(sizeof(*e));

		e->key = a[i];
		e->next = head;
		head = e;
		seed = seed * 6364136223846793005ul + 1442695040888963407ul;
		root = insert(root, (long)(seed >> 33) % (4 * n));
	}
	for (long i = 0; i < n; i++) {
		ps[i].x = (double)i;
		ps[i].vx = 1.0;
		ps[i].id = i;
	}
	for (int step = 0; step < 3; step++)
		for (long i = 0; i < n; i++)
			ps[i].x += ps[i].vx;   /* x and vx together: the hot pair */
	memset(src, (int)(n & 0x7f), sizeof(src));
	for (long i = 0; i < n; i++) {
		memcpy(dst, src, len_of_copy);
		sum += dst[i % 16];
	}
	for (struct node *e = head; e;) {
		struct node *next = e->next;

		sum += e->key;
		free(e);
		e = next;
	}
	sum += walk(root) + shared_counter;
	free_tree(root);
	for (long i = 0; i < n; i++)
		sum += (long)ps[i].x + ps[i].id;
	printf("mixed %ld %ld\n", n, sum);
	free(ps);
	free(a);
	return 0;
}
