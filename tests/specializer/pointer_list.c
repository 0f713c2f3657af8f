/*
 * A singly linked list built, walked and freed: every `next` is a load or store of a pointer
 * value (__mnemo_load_ptr, __mnemo_store_ptr), every `v` one of an integer (__mnemo_load,
 * __mnemo_store).  record_pointer.sh records its stream.  Prints the sum of 0..n-1.
 */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	long v;
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	struct node *head = NULL;
	long sum = 0;

	for (int i = 0; i < n; i++) {
		struct node *p = malloc(sizeof(*p));

		if (!p)
			return 1;
		p->v = i;
		p->next = head;
		head = p;
	}
	for (struct node *p = head; p; p = p->next)
		sum += p->v;
	while (head) {
		struct node *p = head->next;

		free(head);
		head = p;
	}
	printf("%ld\n", sum);
	return 0;
}
