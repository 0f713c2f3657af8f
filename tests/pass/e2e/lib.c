/* Heap, pointers, loops, a VLA and an atomic for the end-to-end test. */
#include <stdlib.h>

#include "prog.h"

static _Atomic long counter;

struct node *list_build(int n)
{
	struct node *h = NULL;

	for (int i = 0; i < n; i++) {
		struct node *e = malloc(sizeof(*e));
		if (!e)
			abort();
		e->value = i;
		e->next = h;
		h = e;
	}
	return h;
}

long list_sum(const struct node *h)
{
	long s = 0;

	for (; h; h = h->next)
		s += h->value;
	return s;
}

void list_free(struct node *h)
{
	while (h) {
		struct node *next = h->next;
		free(h);
		h = next;
	}
}

long vla_sum(int n)
{
	long a[n];
	long s = 0;

	for (int i = 0; i < n; i++)
		a[i] = i;
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= i; j++)
			s += a[j];
	return s;
}

long bump(long by)
{
	return counter += by;
}
