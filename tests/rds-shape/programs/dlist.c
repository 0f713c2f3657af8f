/* A doubly linked list of N nodes, appended at the tail: every append stores tail->next = new
 * (the older node points to the younger: forward) and new->prev = tail (backward).  One instance
 * of N nodes, 2(N - 1) edges, N - 1 each way; walked forward then backward, 2(N - 1) traversals. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next, *prev;
	long val;
};

volatile long sink;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 64;
	struct node *head = NULL, *tail = NULL;
	long s = 0;

	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof(*x));   /* MARK:node */

		x->val = i;
		x->next = NULL;
		x->prev = tail;
		if (tail)
			tail->next = x;
		else
			head = x;
		tail = x;
	}
	for (struct node *p = head; p; p = p->next)
		s += p->val;
	for (struct node *p = tail; p; p = p->prev)
		s -= p->val;
	sink = s;
	printf("%ld\n", sink);
	return 0;
}
