/* L lists, one after the other: each built (20 nodes), walked 5 times and freed.  L instances of
 * 20 nodes and 19 edges, none alive at the end, each living a short slice of the run; every walk
 * makes 19 traversals, and so does the freeing loop (it reads next before each free). */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	long val;
};

volatile long sink;

int main(int argc, char **argv)
{
	int lists = argc > 1 ? atoi(argv[1]) : 50;

	for (int l = 0; l < lists; l++) {
		struct node *head = NULL;

		for (int i = 0; i < 20; i++) {
			struct node *x = malloc(sizeof(*x));   /* MARK:node */

			x->val = i;
			x->next = head;
			head = x;
		}
		for (int w = 0; w < 5; w++) {
			long s = 0;

			for (struct node *p = head; p; p = p->next)
				s += p->val;
			sink += s;
		}
		while (head) {
			struct node *next = head->next;

			free(head);
			head = next;
		}
	}
	printf("%ld\n", sink);
	return 0;
}
