/*
 * The object table: the slot array with its free list, the shadow that maps every granule of an
 * object to its slot, and the sorted globals (objects.h has the contracts; the lookups are inline
 * there).
 *
 * Allocation, move and release run on every heap event of the profiled program: each costs one
 * shadow lookup per 1 GiB slice its object touches plus one 4-byte store per granule.
 */
#include <stdlib.h>
#include <string.h>

#include "objects.h"

/* Gives a symbol default visibility in a build that defaults to hidden (STYLE rule 3). */
#ifndef MN_EXPORT
#define MN_EXPORT __attribute__((visibility("default")))
#endif

#define GRANULE_SHIFT 3                       /* 8-byte granules */
#define SLICE_BYTES   (UINT64_C(1) << MN_SHADOW_SLICE_SHIFT)
#define CLEAR_BULK    (UINT64_C(256) << 10)   /* objects this big give their shadow pages back */

_Static_assert(sizeof(struct mn_obj) == 48, "objects.h states the memory cost per slot");

MN_EXPORT __attribute__((cold)) int mn_objects_init(struct mn_objects *o)
{
	memset(o, 0, sizeof(*o));
	return mn_shadow_create(&o->sh, 1u << GRANULE_SHIFT, sizeof(uint32_t));
}

MN_EXPORT __attribute__((cold)) void mn_objects_free(struct mn_objects *o)
{
	mn_shadow_destroy(o->sh);
	free(o->v);
	free(o->globals);
	memset(o, 0, sizeof(*o));
}

/* The object's extent: at least one byte, so that a malloc(0) pointer finds its object. */
static uint64_t extent(uint64_t size)
{
	return size ? size : 1;
}

/*
 * Object t is being mapped over a granule of live object s: neither is found in every byte of
 * its own any more (objects.h, Guesses), but two globals that only share the granule are, the
 * globals' search finding the one the granule's owner does not hold.
 */
static void share(struct mn_objects *o, uint32_t s, uint32_t t)
{
	struct mn_obj *x = &o->v[s], *y = &o->v[t];

	if (x->kind == MN_OBJ_GLOBAL && y->kind == MN_OBJ_GLOBAL &&
	    (x->addr + extent(x->size) <= y->addr || y->addr + extent(y->size) <= x->addr))
		return;
	x->shared = true;
	y->shared = true;
}

/*
 * Sets the shadow of every granule [addr, addr + len) touches to slot, or, with clear, to 0 where
 * it holds slot (a granule a later object took stays the later one's).  Mapping marks `shared`
 * both objects of a granule another held, and the object of an aliased one.  The shadow of
 * consecutive granules is contiguous within a 1 GiB slice: one lookup per slice.  A slice another
 * window owns is skipped, and counted (granules) when mapping.
 */
static void map_range(struct mn_objects *o, uint64_t addr, uint64_t len, uint32_t slot,
		      bool clear)
{
	uint64_t a = addr & ~((UINT64_C(1) << GRANULE_SHIFT) - 1), end = addr + len;

	while (a < end) {
		uint64_t stop = (a | (SLICE_BYTES - 1)) + 1;
		uint64_t n = ((end < stop ? end : stop) - a + 7) >> GRANULE_SHIFT;
		uint32_t *m = clear ? (uint32_t *)mn_shadow_peek(o->sh, a)
				    : mn_shadow_get(o->sh, a);

		if (!m) {
			o->aliases += clear ? 0 : n;
			o->v[slot].shared |= !clear;
		} else if (!clear) {
			for (uint64_t i = 0; i < n; i++) {
				if (m[i] && m[i] != slot)
					share(o, m[i], slot);
				m[i] = slot;
			}
		} else
			for (uint64_t i = 0; i < n; i++)
				m[i] = m[i] == slot ? 0 : m[i];
		a = stop;
	}
}

static void map(struct mn_objects *o, const struct mn_obj *x, uint32_t slot)
{
	uint64_t len = extent(x->size), end = x->addr + len;

	map_range(o, x->addr, len, slot, false);
	if (!o->span) {
		o->lo = x->addr;
		o->span = len;
	} else {
		uint64_t hi = o->lo + o->span;

		if (x->addr < o->lo)
			o->lo = x->addr;
		if (end > hi)
			hi = end;
		o->span = hi - o->lo;
	}
}

/*
 * A large object's shadow is cleared whole, pages given back to the kernel; a small one's entry by
 * entry, which commits nothing new.  So is a large one that shares a granule: its range may hold
 * another object's entries (objects.h, Guesses), which it must not take with it.
 */
static void unmap(struct mn_objects *o, const struct mn_obj *x, uint32_t slot)
{
	uint64_t len = extent(x->size);

	if (len >= CLEAR_BULK && !x->shared)
		mn_shadow_clear(o->sh, x->addr, len);
	else
		map_range(o, x->addr, len, slot, true);
}

/* Inserts global slot s into the sorted globals; false without memory. */
static bool add_global(struct mn_objects *o, uint32_t s)
{
	uint64_t a = o->v[s].addr;
	uint32_t i;

	if (o->nglobals == o->gcap) {
		uint32_t cap = o->gcap ? 2 * o->gcap : 64;
		uint32_t *g = realloc(o->globals, (size_t)cap * sizeof(*g));

		if (!g)
			return false;
		o->globals = g;
		o->gcap = cap;
	}
	/* Insertion: globals arrive before main, mostly in address order. */
	for (i = o->nglobals; i > 0 && o->v[o->globals[i - 1]].addr > a; i--)
		o->globals[i] = o->globals[i - 1];
	o->globals[i] = s;
	o->nglobals++;
	return true;
}

MN_EXPORT uint32_t mn_objects_find_global(const struct mn_objects *o, uint64_t a)
{
	uint32_t lo = 0, hi = o->nglobals;   /* the last global starting at or below a */

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->v[o->globals[mid]].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		const struct mn_obj *x = &o->v[o->globals[lo - 1]];

		if (a - x->addr < extent(x->size))
			return o->globals[lo - 1];
	}
	return 0;
}

MN_EXPORT uint32_t mn_objects_alloc(struct mn_objects *o, const struct mn_obj *tmpl)
{
	struct mn_obj *x;
	uint32_t s = o->free;

	if (s) {
		o->free = o->v[s].next;
	} else {
		if (o->n + 1 >= o->cap) {
			uint32_t cap = o->cap ? 2 * o->cap : 4096;
			struct mn_obj *v;

			if (o->cap >= UINT32_MAX / 2)
				return 0;
			v = realloc(o->v, (size_t)cap * sizeof(*v));
			if (!v)
				return 0;
			o->v = v;
			o->cap = cap;
		}
		s = ++o->n;
	}
	x = &o->v[s];
	*x = *tmpl;
	x->live = true;
	x->shared = false;
	x->next = 0;
	if (x->kind == MN_OBJ_GLOBAL && !add_global(o, s)) {
		/* Back to the head of the free list, where it came from or as the new last slot. */
		x->live = false;
		x->next = o->free;
		o->free = s;
		return 0;
	}
	map(o, x, s);
	if (++o->live > o->peak)
		o->peak = o->live;
	return s;
}

MN_EXPORT void mn_objects_move(struct mn_objects *o, uint32_t s, uint64_t addr, uint64_t size)
{
	struct mn_obj *x = &o->v[s];

	unmap(o, x, s);
	x->addr = addr;
	x->size = size;
	x->shared = false;   /* map() finds out again, in the new granules */
	map(o, x, s);
}

MN_EXPORT void mn_objects_release(struct mn_objects *o, uint32_t s)
{
	struct mn_obj *x = &o->v[s];

	unmap(o, x, s);
	x->live = false;
	x->next = o->free;
	o->free = s;
	o->live--;
}
