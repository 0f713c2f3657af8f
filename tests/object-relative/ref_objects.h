/*
 * The live objects of a recorded run, kept the simple way for the object-relative references
 * (lossless_ref.c, derived_check.c): one array sorted by address, searched by bisection, no shadow
 * memory, sharing no code with the module.  Objects are numbered within their group (allocation
 * or global site) from 0 in allocation order; a realloc keeps the number.
 *
 * ref_objects_event() applies one recorded allocation event.  A new object that overlaps live
 * ones either hides them (hide, as the module's shadow does for a stack object whose free never
 * came) or is refused (the caller decides: lossless_ref's one assumption is that objects never
 * overlap).  Header-only: each reference is one C file.
 */
#ifndef MNEMO_TEST_REF_OBJECTS_H
#define MNEMO_TEST_REF_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_internal.h"   /* MN_EV_* */
#include "queue.h"              /* struct mn_wire, mn_wire_get() */

struct ref_obj {
	uint64_t addr, size;     /* size 0 counts as 1 byte (README) */
	uint32_t group;
	uint64_t serial;
	bool global;
};

struct ref_objects {
	struct ref_obj *live;    /* sorted by addr */
	size_t n, cap;
	uint64_t *serials;       /* next object number by group (site) */
	size_t nserials;
	bool hide;               /* a new object hides what it overlaps, else it is refused */
	bool stack;              /* stack objects are objects */
};

static inline void *ref_xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p) {
		fputs("reference: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

static inline uint64_t ref_extent(const struct ref_obj *o)
{
	return o->size ? o->size : 1;
}

/* The index of the first live object with addr > a. */
static inline size_t ref_upper(const struct ref_objects *r, uint64_t a)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->live[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The live object holding a, or NULL. */
static inline struct ref_obj *ref_find(const struct ref_objects *r, uint64_t a)
{
	size_t i = ref_upper(r, a);

	return i && a - r->live[i - 1].addr < ref_extent(&r->live[i - 1]) ? &r->live[i - 1] : NULL;
}

/* The live heap or stack object starting at a, or NULL. */
static inline struct ref_obj *ref_starting_at(const struct ref_objects *r, uint64_t a)
{
	struct ref_obj *o = ref_find(r, a);

	return o && o->addr == a && !o->global ? o : NULL;
}

static inline void ref_erase(struct ref_objects *r, struct ref_obj *o)
{
	size_t i = (size_t)(o - r->live);

	memmove(&r->live[i], &r->live[i + 1], (r->n - i - 1) * sizeof(*r->live));
	r->n--;
}

/* Inserts o; false when it overlaps a live object and r->hide is off. */
static inline bool ref_insert(struct ref_objects *r, struct ref_obj o)
{
	size_t i;

	for (;;) {
		struct ref_obj *below, *above, *hit;

		i = ref_upper(r, o.addr);
		below = i ? &r->live[i - 1] : NULL;
		above = i < r->n ? &r->live[i] : NULL;
		hit = below && below->addr + ref_extent(below) > o.addr ? below :
		      above && o.addr + ref_extent(&o) > above->addr ? above : NULL;
		if (!hit)
			break;
		if (!r->hide)
			return false;
		ref_erase(r, hit);
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->live = ref_xrealloc(r->live, r->cap * sizeof(*r->live));
	}
	memmove(&r->live[i + 1], &r->live[i], (r->n - i) * sizeof(*r->live));
	r->live[i] = o;
	r->n++;
	return true;
}

static inline bool ref_new_object(struct ref_objects *r, uint32_t site, uint64_t addr,
				  uint64_t size, bool global)
{
	if (site >= r->nserials) {
		size_t n = 2 * (size_t)site + 16;

		r->serials = ref_xrealloc(r->serials, n * sizeof(*r->serials));
		memset(r->serials + r->nserials, 0, (n - r->nserials) * sizeof(*r->serials));
		r->nserials = n;
	}
	return ref_insert(r, (struct ref_obj){ addr, size, site, r->serials[site]++, global });
}

/*
 * Applies record rec (event code) if it makes, moves or ends an object; other events are left
 * alone.  False when a new object was refused (overlap without hide): *at is then its address.
 */
static inline bool ref_objects_event(struct ref_objects *r, const struct mn_wire *wire,
				     const uint64_t *rec, unsigned code, uint64_t *at)
{
	uint32_t site = (uint32_t)mn_wire_get(wire, rec, code, 0);
	uint64_t a = mn_wire_get(wire, rec, code, 1);
	struct ref_obj *o;

	*at = a;
	switch (code) {
	case MN_EV_HEAP_ALLOC:
	case MN_EV_GLOBAL:
		return ref_new_object(r, site, a, mn_wire_get(wire, rec, code, 2),
				      code == MN_EV_GLOBAL);
	case MN_EV_STACK_ALLOC:
		return !r->stack || ref_new_object(r, site, a, mn_wire_get(wire, rec, code, 2), false);
	case MN_EV_HEAP_REALLOC: {
		uint64_t addr = mn_wire_get(wire, rec, code, 2);
		uint64_t size = mn_wire_get(wire, rec, code, 3);

		o = a ? ref_starting_at(r, a) : NULL;
		*at = addr;
		if (o) {   /* moved: the same object, its group and number kept */
			struct ref_obj moved = *o;

			ref_erase(r, o);
			moved.addr = addr;
			moved.size = size;
			return ref_insert(r, moved);
		}
		return ref_new_object(r, site, addr, size, false);
	}
	case MN_EV_STACK_FREE:
		if (!r->stack)
			return true;
		/* fall through */
	case MN_EV_HEAP_FREE:
		o = ref_starting_at(r, a);
		if (o)
			ref_erase(r, o);
		return true;
	default:
		return true;
	}
}

static inline void ref_objects_free(struct ref_objects *r)
{
	free(r->live);
	free(r->serials);
}

#endif /* MNEMO_TEST_REF_OBJECTS_H */
