/* Binary trees built and walked (pointer chasing, many small allocations). */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *left, *right;
	long value;
};

static struct node *build(int depth, long v)
{
	struct node *n = malloc(sizeof(*n));
	n->value = v;
	if (depth > 0) {
		n->left = build(depth - 1, 2 * v);
		n->right = build(depth - 1, 2 * v + 1);
	} else {
		n->left = n->right = NULL;
	}
	return n;
}

static long walk(const struct node *n)
{
	return n ? n->value + walk(n->left) - walk(n->right) : 0;
}

static void release(struct node *n)
{
	if (!n)
		return;
	release(n->left);
	release(n->right);
	free(n);
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 20, rounds = argc > 2 ? atoi(argv[2]) : 12;
	long sum = 0;

	for (int r = 0; r < rounds; r++) {
		struct node *t = build(depth, r);
		sum += walk(t);
		release(t);
	}
	printf("bintree depth %d rounds %d checksum %ld\n", depth, rounds, sum);
	return 0;
}
