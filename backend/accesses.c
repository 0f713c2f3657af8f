/* Accesses (accesses.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "accesses.h"
#include "map.h"

static size_t access_slot(const struct mn_accesses *t, uint32_t site, uint32_t ctx, uint32_t tag)
{
	return mn_hash64(((uint64_t)site << 32 | ctx) ^ (uint64_t)tag * 0x9e3779b97f4a7c15u) &
	       (((size_t)1 << t->bits) - 1);
}

static int accesses_grow(struct mn_accesses *t)
{
	unsigned bits = t->bits ? t->bits + 1 : 12;
	size_t mask = ((size_t)1 << bits) - 1;
	uint32_t *slots = calloc(mask + 1, sizeof(*slots));
	struct mn_access *acc = realloc(t->acc, (mask + 1) / 2 * sizeof(*acc));

	if (acc)
		t->acc = acc;
	if (!slots || !acc) {
		free(slots);
		return -1;
	}
	free(t->slots);
	t->slots = slots;
	t->bits = bits;
	t->cap = (uint32_t)((mask + 1) / 2);
	if (!t->n)
		t->n = 1;
	for (uint32_t id = 1; id < t->n; id++) {
		size_t i = access_slot(t, t->acc[id].site, t->acc[id].ctx, t->acc[id].tag);

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = id;
	}
	return 0;
}

uint32_t mn_access_intern(struct mn_accesses *t, uint32_t site, uint32_t ctx, uint32_t tag)
{
	size_t mask, i;

	if (!t->bits && accesses_grow(t))
		return 0;
	mask = ((size_t)1 << t->bits) - 1;
	for (i = access_slot(t, site, ctx, tag); t->slots[i]; i = (i + 1) & mask) {
		const struct mn_access *a = &t->acc[t->slots[i]];

		if (a->site == site && a->ctx == ctx && a->tag == tag)
			return t->slots[i];
	}
	if (t->n == t->cap) {   /* half full: grow, and find the new table's empty slot */
		if (t->bits >= 31 || accesses_grow(t))
			return 0;
		mask = ((size_t)1 << t->bits) - 1;
		for (i = access_slot(t, site, ctx, tag); t->slots[i]; i = (i + 1) & mask)
			;
	}
	t->acc[t->n] = (struct mn_access){ site, ctx, tag };
	t->slots[i] = t->n;
	return t->n++;
}

void mn_accesses_free(struct mn_accesses *t)
{
	free(t->acc);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
