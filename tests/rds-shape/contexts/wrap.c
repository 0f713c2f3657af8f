/*
 * Allocation contexts (tests/rds-shape/contexts.sh): one malloc, in an xmalloc wrapper called from
 * three places: make_list (10 list nodes), insert (7 nodes of a binary search tree, built
 * iteratively) and main (one table).  By site there is one allocation; by context three, and
 * rds-shape finds two types, a list of 10 nodes and a tree of 7, where by site it finds one type
 * of two instances.
 */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	long val;
};

struct tnode {
	struct tnode *left, *right;
	long key;
};

volatile long sink;

__attribute__((noinline)) static void *xmalloc(size_t n)
{
	void *p = malloc(n);   /* MARK:alloc */

	if (!p)
		abort();
	return p;
}

__attribute__((noinline)) static struct node *make_list(int n)
{
	struct node *head = NULL;

	for (int i = 0; i < n; i++) {
		struct node *x = xmalloc(sizeof(*x));   /* MARK:list */

		x->val = i;
		x->next = head;
		head = x;
	}
	return head;
}

__attribute__((noinline)) static struct tnode *insert(struct tnode *t, long key)
{
	struct tnode **at = &t;

	while (*at)
		at = key < (*at)->key ? &(*at)->left : &(*at)->right;
	*at = xmalloc(sizeof(**at));   /* MARK:tree */
	(*at)->key = key;
	(*at)->left = (*at)->right = NULL;
	return t;
}

int main(void)
{
	struct node *l = make_list(10);
	struct tnode *t = NULL;
	long *table = xmalloc(16 * sizeof(long));   /* MARK:table */
	static const long keys[] = { 50, 30, 70, 20, 40, 60, 80 };

	for (int i = 0; i < 7; i++)
		t = insert(t, keys[i]);
	for (struct node *x = l; x; x = x->next)
		sink += x->val;
	table[0] = t->left->key;
	sink += table[0];
	printf("%ld\n", sink);
	return 0;
}
