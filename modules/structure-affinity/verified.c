/*
 * Verified extents of live objects (verified.h): per slot, granules read from the object table's
 * shadow and found to hold the slot, grown as summarized walks need them and forgotten before
 * the table changes them.
 */
#include <stdlib.h>
#include <string.h>

#include "verified.h"

/* Grow a record anyway when the granules it lacks are at most a walk's accesses plus this. */
#define SLACK 64
/* A change to a range of more granules than this drops every record instead of reading them. */
#define FORGET_SCAN_MAX (UINT64_C(1) << 32)
/* Addresses are 48 bits on the wire: no object reaches beyond. */
#define ADDR_END (UINT64_C(1) << 48)

static unsigned granule_shift(const struct mn_objects *o)
{
	return (unsigned)__builtin_ctz(mn_shadow_granule_bytes(o->sh));
}

/*
 * The slot granule g's shadow holds, 0 for none: mn_objects_find_granule() without its range
 * filter, which passes anyway for every address inside a mapped object (it only widens).
 */
static uint32_t owner(const struct mn_objects *o, uint64_t g, unsigned shift)
{
	const uint32_t *m = (const uint32_t *)mn_shadow_peek(o->sh, g << shift);

	return m ? *m : 0;
}

/* Checks the walk address by address, with the table's own lookup. */
static bool points(const struct mn_objects *o, uint32_t slot, uint64_t first, int64_t step,
		   uint64_t n)
{
	uint64_t a = first;

	for (uint64_t k = 0; k < n; k++, a += (uint64_t)step)
		if (mn_objects_find(o, a) != slot)
			return false;
	return true;
}

/* Slot's record, the array grown to hold it; NULL without memory. */
static struct sa_verified_rec *rec_get(struct sa_verified *v, uint32_t slot)
{
	if (slot >= v->n) {
		uint64_t n = v->n ? v->n : 64;
		struct sa_verified_rec *r;

		while (n <= slot)
			n *= 2;
		if (n > UINT32_MAX)
			n = UINT32_MAX;
		if (slot >= n)
			return NULL;
		r = realloc(v->rec, (size_t)n * sizeof(*r));
		if (!r)
			return NULL;
		memset(r + v->n, 0, (size_t)(n - v->n) * sizeof(*r));
		v->rec = r;
		v->n = (uint32_t)n;
	}
	return &v->rec[slot];
}

bool sa_verified_walk(struct sa_verified *v, const struct mn_objects *o, uint32_t slot,
		      uint64_t first, int64_t step, uint64_t n, uint64_t lo, uint64_t hi)
{
	const struct mn_obj *x = mn_obj(o, slot);
	const uint64_t extent = x->size ? x->size : 1;
	const unsigned shift = granule_shift(o);
	const uint64_t glo = lo >> shift, ghi = hi >> shift;
	uint64_t hlo, hhi, need;
	struct sa_verified_rec *r;
	bool empty;

	/* Outside the object some address is found as another, or as none. */
	if (lo - x->addr >= extent || hi - x->addr >= extent)
		return false;
	r = rec_get(v, slot);
	if (!r)
		return points(o, slot, first, step, n);
	if (r->serial != x->serial) {
		*r = (struct sa_verified_rec){ .serial = x->serial, .glo = 1, .ghi = 0 };
		v->any = true;
	}
	empty = r->glo > r->ghi;
	if (!empty && r->glo <= glo && ghi <= r->ghi)
		return true;

	/* Grow the record to the hull of it and the walk, unless that costs far more than the
	 * walk's own addresses and they have not yet paid for it. */
	hlo = empty || glo < r->glo ? glo : r->glo;
	hhi = empty || ghi > r->ghi ? ghi : r->ghi;
	need = hhi - hlo + 1 - (empty ? 0 : r->ghi - r->glo + 1);
	if (need > n + SLACK && r->debt + n < need) {
		r->debt += n;
		return points(o, slot, first, step, n);
	}
	r->debt = 0;
	if (empty) {
		uint64_t g = glo;

		while (g <= ghi && owner(o, g, shift) == slot)
			g++;
		if (g > glo) {
			r->glo = glo;
			r->ghi = g - 1;
		}
	} else {
		while (r->glo > hlo && owner(o, r->glo - 1, shift) == slot)
			r->glo--;
		while (r->ghi < hhi && owner(o, r->ghi + 1, shift) == slot)
			r->ghi++;
	}
	if (r->glo <= glo && ghi <= r->ghi)
		return true;
	/* A granule of the range is another's (an object mapped over this one, a neighbour's
	 * shared end granule): the walk's own addresses may still all be this one's. */
	return points(o, slot, first, step, n);
}

void sa_verified_forget(struct sa_verified *v, const struct mn_objects *o, uint64_t addr,
			uint64_t size)
{
	uint64_t end = addr + (size ? size : 1), g, last;
	unsigned shift;

	if (!v->any)
		return;
	if (end < addr || end > ADDR_END)
		end = ADDR_END;
	if (addr >= end)
		return;
	shift = granule_shift(o);
	g = addr >> shift;
	last = (end - 1) >> shift;
	if (last - g >= FORGET_SCAN_MAX) {
		for (uint32_t s = 0; s < v->n; s++)
			v->rec[s].serial = 0;
		return;
	}
	for (; g <= last; g++) {
		uint32_t s = owner(o, g, shift);

		if (s && s < v->n)
			v->rec[s].serial = 0;
	}
}

void sa_verified_free(struct sa_verified *v)
{
	free(v->rec);
	memset(v, 0, sizeof(*v));
}
