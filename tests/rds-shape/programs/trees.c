/* Two full binary trees of depth 6 (63 nodes, 62 edges each), from two allocation sites: one
 * built top-down (the parent allocated before its children: every edge is forward), one built
 * bottom-up (the children first: every edge is backward).  Two types, one instance each. */
#include <stdio.h>
#include <stdlib.h>

struct tree {
	struct tree *left, *right;
	long val;
};

volatile long sink;

__attribute__((noinline)) static struct tree *top_down(int depth)
{
	struct tree *t;

	if (!depth)
		return NULL;
	t = malloc(sizeof(*t));   /* MARK:top_down */
	t->val = depth;
	t->left = top_down(depth - 1);
	t->right = top_down(depth - 1);
	return t;
}

__attribute__((noinline)) static struct tree *bottom_up(int depth)
{
	struct tree *l, *r, *t;

	if (!depth)
		return NULL;
	l = bottom_up(depth - 1);
	r = bottom_up(depth - 1);
	t = malloc(sizeof(*t));   /* MARK:bottom_up */
	t->val = depth;
	t->left = l;
	t->right = r;
	return t;
}

static long sum(const struct tree *t)
{
	return t ? t->val + sum(t->left) + sum(t->right) : 0;
}

int main(void)
{
	struct tree *a = top_down(6), *b = bottom_up(6);

	sink = sum(a) + sum(b);
	printf("%ld\n", sink);
	return 0;
}
