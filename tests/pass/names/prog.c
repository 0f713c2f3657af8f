/*
 * The site table's names end to end (site-names.sh): one line of mark_in_use() inlined into
 * three functions, twice into one of them, and a load whose location is merged (line 0).  The
 * markers at the ends of lines are what the test looks for.
 */
#include <stdio.h>
#include <stdlib.h>

struct node {
	int used;
	int val;
	struct node *next;
};

static inline __attribute__((always_inline)) void mark_in_use(struct node *n)
{
	n->used += 1; /* @mark */
}

__attribute__((noinline)) void delete_node(struct node *n)
{
	mark_in_use(n); /* @delete */
	n->val = 0;
}

__attribute__((noinline)) void insert_end_child(struct node *n)
{
	mark_in_use(n); /* @insert */
	n->val = 1;
}

__attribute__((noinline)) void parse_deep(struct node *n)
{
	mark_in_use(n); /* @parse1 */
	n->val += 2;
	mark_in_use(n->next); /* @parse2 */
}

/*
 * The loads of p->val in both branches are hoisted into one (SimplifyCFG, before the link) whose
 * location merges both lines into line 0; the compare before it has the line of the `if`.
 */
__attribute__((noinline)) int pick(struct node *p, int c)
{
	int r;

	if (c) /* @if */
		r = p->val * 3;
	else
		r = p->val + 7;
	return r;
}

int main(void)
{
	struct node *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	int s = 0;

	if (!a || !b)
		return 1;
	a->next = b;
	for (int i = 0; i < 10; i++) {
		delete_node(a);
		insert_end_child(b);
		parse_deep(a);
		s += pick(a, i & 1);
	}
	printf("%d %d %d\n", a->used, b->used, s);
	free(a);
	free(b);
	return 0;
}
