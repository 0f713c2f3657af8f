/* A list of 100 nodes, then P phases: each inserts 10 nodes at the head and walks the whole list
 * 50 times.  Every phase's walks fall in one interval between alteration points (the insertions),
 * each more than 1% of all traversals: the stability factor is P. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	long val;
};

volatile long sink;

__attribute__((noinline)) static struct node *push(struct node *head, long v)
{
	struct node *x = malloc(sizeof(*x));   /* MARK:node */

	x->val = v;
	x->next = head;
	return x;
}

int main(int argc, char **argv)
{
	int phases = argc > 1 ? atoi(argv[1]) : 4;
	struct node *head = NULL;

	for (int i = 0; i < 100; i++)
		head = push(head, i);
	for (int ph = 0; ph < phases; ph++) {
		for (int i = 0; i < 10; i++)
			head = push(head, i);
		for (int w = 0; w < 50; w++) {
			long s = 0;

			for (struct node *p = head; p; p = p->next)
				s += p->val;
			sink = s;
		}
	}
	printf("%ld\n", sink);
	return 0;
}
