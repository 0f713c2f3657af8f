/* A linked list built, then walked three times, each walk updating every node.  The walk carries
 * nothing (each node once per walk); the rounds loop carries the updates at distance 1. */
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

struct node {
	struct node *next;
	long val;
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;
	struct node *head = NULL, *p;
	long s = 0;

	for (int i = 0; i < n; i++) { /* MARK:build */
		p = malloc(sizeof(*p));
		V(p->val) = i; /* MARK:build_val */
		V(p->next) = head; /* MARK:build_next */
		head = p;
	}
	for (int r = 0; r < 3; r++) /* MARK:rounds */
		for (p = head; p; p = V(p->next)) /* MARK:walk */
			V(p->val) = V(p->val) + r; /* MARK:update */
	for (p = head; p; p = head) {
		s += p->val;
		head = p->next;
		free(p);
	}
	printf("%ld\n", s);
	return 0;
}
