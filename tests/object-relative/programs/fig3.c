/* The paper's Figure 3 (Wu et al.): a linked list of three nodes allocated at one site, appended
 * at the tail so that a traversal visits them in allocation order, then walked by two loads, one
 * of the field at offset 0 and one of the field at offset 4 of each node. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	int data;                 /* offset 0 */
	int key;                  /* offset 4 */
	struct node *next;        /* offset 8 */
};

int main(int argc, char **argv)
{
	struct node *head = NULL, **tail = &head, *n;
	long sum = 0, keys = 0;

	for (int i = 0; i < 3; i++) {
		n = (struct node *)malloc(sizeof(*n));   /* MARK:node */
		n->data = i + argc;
		n->key = 2 * i;
		n->next = NULL;
		*tail = n;
		tail = &n->next;
	}
	for (n = head; n; n = n->next) {
		sum += n->data;   /* MARK:data */
		keys ^= n->key;   /* MARK:key */
	}
	printf("%ld %ld\n", sum, keys);
	while (head) {
		n = head->next;
		free(head);
		head = n;
	}
	return 0;
}
