/*
 * The data objects' instances the profiled program has live (heap objects, stack objects and
 * globals), and the lookup from any address inside one to it: StructSlim's data-centric
 * attribution.  A private copy of the approach of modules/object-relative/objects.h (shadow
 * memory), with stack objects beside heap objects and globals.
 *
 * An object is a slot of a table (1, 2, ...; 0 is "none"), reused after its free.  Every 8-byte
 * granule of an object holds its slot in a shadow of 4 bytes per granule.  A granule may be shared:
 * globals are packed (two 4-byte globals in one granule), and a heap object's size need not be a
 * multiple of 8.  So a lookup checks that the address lies inside the slot's object, and when it
 * does not, searches the globals (sorted by address; there are few, registered before main).  The
 * later object mapped owns a shared granule; the search finds the others.
 *
 * Not thread-safe: one per module state.
 */
#ifndef SA_OBJECTS_H
#define SA_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#include "shadow.h"

struct sa_obj {
	uint64_t addr, size;     /* [addr, addr + size); size 0 is given one byte */
	uint64_t serial;         /* unique per instance, from 1 in creation order; realloc keeps */
	uint32_t site;           /* its data object: allocation, alloca or global site */
	uint32_t next;           /* free slots: the next free one */
	bool live;
	bool global;             /* a global: never freed, never moved */
};

struct sa_objects {
	struct mn_shadow *sh;    /* uint32_t slot per 8-byte granule */
	struct sa_obj *v;        /* by slot; v[0] unused */
	uint32_t n, cap;         /* slots used so far (free ones included), allocated */
	uint32_t free;           /* first free slot, 0: none */
	uint32_t *globals;       /* slots of globals, by increasing address */
	uint32_t nglobals, gcap;
	uint64_t lo, span;       /* every object ever lies in [lo, lo + span): the cheap filter */
	uint64_t aliases;        /* granules left unmapped because their shadow aliased */
};

/* 0 or -errno (the shadow's). */
int sa_objects_init(struct sa_objects *o);
void sa_objects_free(struct sa_objects *o);

/* A new object [addr, addr + size) of site, mapped.  Returns its slot, or 0 without memory. */
uint32_t sa_objects_alloc(struct sa_objects *o, uint64_t addr, uint64_t size, uint32_t site,
			  uint64_t serial, bool global);

/* Moves object s to [addr, addr + size) (realloc). */
void sa_objects_move(struct sa_objects *o, uint32_t s, uint64_t addr, uint64_t size);

/* Unmaps heap or stack object s and frees its slot. */
void sa_objects_release(struct sa_objects *o, uint32_t s);

/* The searched half of sa_objects_find(): the global holding a, or 0. */
uint32_t sa_objects_find_global(const struct sa_objects *o, uint64_t a);

static inline struct sa_obj *sa_obj(const struct sa_objects *o, uint32_t s)
{
	return &o->v[s];
}

/* The slot of the live object holding address a, or 0.  The hot path of every load and store. */
static inline uint32_t sa_objects_find(const struct sa_objects *o, uint64_t a)
{
	const uint32_t *m;
	uint32_t s;

	if (a - o->lo >= o->span)
		return 0;
	m = (const uint32_t *)mn_shadow_peek(o->sh, a);
	s = m ? *m : 0;
	if (s) {
		const struct sa_obj *x = &o->v[s];

		if (a - x->addr < (x->size ? x->size : 1))
			return s;
	}
	return o->nglobals ? sa_objects_find_global(o, a) : 0;
}

#endif /* SA_OBJECTS_H */
