/* A ring buffer of ints, allocated on the heap: the C half of the CMake test project. */
#include <stdlib.h>
#include "ring.h"

struct ring {
	int *slot;
	unsigned head, len, cap;
};

struct ring *ring_new(unsigned cap)
{
	struct ring *r = malloc(sizeof(*r));
	if (!r)
		return NULL;
	r->slot = calloc(cap, sizeof(int));
	r->head = r->len = 0;
	r->cap = cap;
	return r;
}

void ring_push(struct ring *r, int v)
{
	r->slot[(r->head + r->len) % r->cap] = v;
	if (r->len < r->cap)
		r->len++;
	else
		r->head = (r->head + 1) % r->cap;
}

long ring_sum(const struct ring *r)
{
	long s = 0;
	for (unsigned i = 0; i < r->len; i++)
		s += r->slot[(r->head + i) % r->cap];
	return s;
}

void ring_free(struct ring *r)
{
	free(r->slot);
	free(r);
}
