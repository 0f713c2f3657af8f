/* The memory test's program: `waves` times, a list of `n` nodes is built, walked and freed, so
 * that waves * n nodes (10 million by default) go through the heap with at most n alive. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	long val;
};

volatile long sink;

int main(int argc, char **argv)
{
	int waves = argc > 1 ? atoi(argv[1]) : 100, n = argc > 2 ? atoi(argv[2]) : 100000;

	for (int w = 0; w < waves; w++) {
		struct node *head = NULL;
		long s = 0;

		for (int i = 0; i < n; i++) {
			struct node *x = malloc(sizeof(*x));

			x->val = i;
			x->next = head;
			head = x;
		}
		for (struct node *p = head; p; p = p->next)
			s += p->val;
		while (head) {
			struct node *next = head->next;

			free(head);
			head = next;
		}
		sink += s;
	}
	printf("%ld\n", sink);
	return 0;
}
