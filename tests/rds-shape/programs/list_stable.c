/* One list of N nodes built once (insertion at the head), then walked W times: one instance of N
 * nodes and N - 1 backward edges (each new node points to the older head), 99 traversals per
 * walk, all in one interval between alteration points: stability factor 1. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	long val;
};

volatile long sink;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, walks = argc > 2 ? atoi(argv[2]) : 500;
	struct node *head = NULL;

	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof(*x));   /* MARK:node */

		x->val = i;
		x->next = head;
		head = x;
	}
	for (int w = 0; w < walks; w++) {
		long s = 0;

		for (struct node *p = head; p; p = p->next)
			s += p->val;
		sink = s;
	}
	printf("%ld\n", sink);
	return 0;
}
