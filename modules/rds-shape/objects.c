/*
 * The live heap objects of objects.h: a slot table with a free list, and the shadow that maps
 * every granule of an object to its slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"

#define GRANULE_SHIFT 3                       /* 8-byte granules */
#define SLICE_BYTES   (UINT64_C(1) << MN_SHADOW_SLICE_SHIFT)
#define CLEAR_BULK    (UINT64_C(256) << 10)   /* objects this big give their shadow pages back */

int rds_objects_init(struct rds_objects *o)
{
	memset(o, 0, sizeof(*o));
	return mn_shadow_create(&o->sh, 1u << GRANULE_SHIFT, sizeof(uint32_t));
}

void rds_objects_free(struct rds_objects *o)
{
	mn_shadow_destroy(o->sh);
	free(o->v);
	free(o->inst);
	memset(o, 0, sizeof(*o));
}

/* The object's extent: at least one granule, so that a malloc(0) pointer finds its object. */
static uint64_t extent(uint64_t size)
{
	return size ? size : 1;
}

/*
 * Sets the shadow of every granule of [addr, addr + len) to slot, or, with clear, to 0 where it
 * holds slot.  The shadow of consecutive granules is contiguous within a 1 GiB slice: one lookup
 * per slice.  A slice another window owns is skipped and counted (granules, an estimate).
 */
static void map_range(struct rds_objects *o, uint64_t addr, uint64_t len, uint32_t slot,
		      int clear)
{
	uint64_t a = addr & ~((UINT64_C(1) << GRANULE_SHIFT) - 1), end = addr + len;

	while (a < end) {
		uint64_t stop = (a | (SLICE_BYTES - 1)) + 1;
		uint64_t n = ((end < stop ? end : stop) - a + 7) >> GRANULE_SHIFT;
		uint32_t *m;

		m = clear ? (uint32_t *)mn_shadow_peek(o->sh, a) : mn_shadow_get(o->sh, a);

		if (!m)
			o->aliases += clear ? 0 : n;
		else if (!clear)
			for (uint64_t i = 0; i < n; i++)
				m[i] = slot;
		else
			for (uint64_t i = 0; i < n; i++)
				m[i] = m[i] == slot ? 0 : m[i];
		a = stop;
	}
}

static void map(struct rds_objects *o, struct rds_obj *x, uint32_t slot)
{
	uint64_t len = extent(x->size), end = x->addr + len;

	map_range(o, x->addr, len, slot, 0);
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

static void unmap(struct rds_objects *o, struct rds_obj *x, uint32_t slot)
{
	uint64_t len = extent(x->size);

	if (len >= CLEAR_BULK)
		mn_shadow_clear(o->sh, x->addr, len);
	else
		map_range(o, x->addr, len, slot, 1);
}

uint32_t rds_objects_alloc(struct rds_objects *o, uint64_t addr, uint64_t size)
{
	struct rds_obj *x;
	uint32_t s = o->free;

	if (s) {
		o->free = o->v[s].next;
	} else {
		if (o->n + 1 >= o->cap) {
			uint32_t cap = o->cap ? 2 * o->cap : 4096;
			struct rds_obj *v;
			uint32_t *inst;

			if (o->cap >= UINT32_MAX / 2)
				return 0;
			v = realloc(o->v, (size_t)cap * sizeof(*v));
			if (!v)
				return 0;
			o->v = v;
			inst = realloc(o->inst, (size_t)cap * sizeof(*inst));
			if (!inst)
				return 0;
			o->inst = inst;
			o->inst[0] = 0;   /* slot 0, "none", is in no instance */
			o->cap = cap;
		}
		s = ++o->n;
	}
	x = &o->v[s];
	memset(x, 0, sizeof(*x));
	o->inst[s] = 0;
	x->addr = addr;
	x->size = size;
	x->serial = ++o->serial;
	map(o, x, s);
	if (++o->live > o->peak)
		o->peak = o->live;
	return s;
}

void rds_objects_move(struct rds_objects *o, uint32_t s, uint64_t addr, uint64_t size)
{
	struct rds_obj *x = &o->v[s];

	unmap(o, x, s);
	x->addr = addr;
	x->size = size;
	map(o, x, s);
}

void rds_objects_release(struct rds_objects *o, uint32_t s)
{
	struct rds_obj *x = &o->v[s];

	unmap(o, x, s);
	x->serial = 0;
	x->next = o->free;
	o->free = s;
	o->live--;
}
