/* Two allocation sites whose static shape graph is cyclic only in the union of two inputs, for
 * the merge tests (test_merge.c):
 *   list N: a list of N a-nodes (a -> a), its head hung off one b-node (b -> a): one type, {a};
 *   tree D: a full binary tree of depth D of b-nodes (b -> b), its root hung off one a-node
 *           (a -> b): one type, {b}.
 * Merged, a -> a, b -> a, b -> b and a -> b make one SCC: one type, {a, b}.  Each structure is
 * walked `walks` times (third argument, default 3).  Allocation is in noinline functions so that
 * each kind of node has one site whatever the optimizer does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct b;

struct a {
	struct a *next;
	struct b *down;
	long val;
};

struct b {
	struct b *kid[2];
	struct a *up;
	long val;
};

volatile long sink;

__attribute__((noinline)) static struct a *new_a(long v)
{
	struct a *x = calloc(1, sizeof(*x));   /* MARK:a */

	x->val = v;
	return x;
}

__attribute__((noinline)) static struct b *new_b(long v)
{
	struct b *x = calloc(1, sizeof(*x));   /* MARK:b */

	x->val = v;
	return x;
}

__attribute__((noinline)) static struct b *tree(int depth, long v)
{
	struct b *x = new_b(v);

	if (depth > 1) {
		x->kid[0] = tree(depth - 1, 2 * v);
		x->kid[1] = tree(depth - 1, 2 * v + 1);
	}
	return x;
}

__attribute__((noinline)) static long sum_tree(struct b *x)
{
	return x ? x->val + sum_tree(x->kid[0]) + sum_tree(x->kid[1]) : 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 10, walks = argc > 3 ? atoi(argv[3]) : 3;
	long s = 0;

	if (argc > 1 && !strcmp(argv[1], "tree")) {
		struct a *holder = new_a(0);

		holder->down = tree(n, 1);
		for (int w = 0; w < walks; w++)
			s += sum_tree(holder->down);
	} else {
		struct b *holder = new_b(0);
		struct a *head = NULL;

		for (int i = 0; i < n; i++) {
			struct a *x = new_a(i);

			x->next = head;
			head = x;
		}
		holder->up = head;
		for (int w = 0; w < walks; w++)
			for (struct a *p = holder->up; p; p = p->next)
				s += p->val;
	}
	sink = s;
	printf("%ld\n", sink);
	return 0;
}
