/*
 * The live heap objects of the profiled program, and the lookup from any address inside one to it:
 * the paper's OID manager (Raman and August, 4.1), with shadow memory in place of its AVL tree.
 *
 * An object is a slot of a table (1, 2, ...; 0 is "none"), reused after its free.  Every 8-byte
 * granule of a live object holds its slot in a shadow memory of 4 bytes per granule (half the
 * object's size, written at allocation and cleared at free), so rds_objects_find() is a range
 * check, one tag compare and one load: O(1) whatever the sizes, where a balanced tree costs
 * O(log live) dependent cache misses.  Allocators never put two live objects in one granule (glibc
 * keeps 16-byte alignment and a header between chunks); if one did, the later object would own it.
 *
 * Memory: 52 bytes per live object in the tables (which keeps its peak size) plus half the bytes of
 * the heap memory that live objects cover, as shadow; freed objects' shadow pages are given back
 * when whole (backend/shadow.h), so both follow the live set.
 *
 * Not thread-safe: one per module state.
 */
#ifndef RDS_OBJECTS_H
#define RDS_OBJECTS_H

#include <stdint.h>

#include "shadow.h"

struct rds_obj {
	uint64_t addr, size;     /* the object: [addr, addr + size); size 0 is given one granule */
	uint64_t serial;         /* dynid: allocation order from 1, kept by realloc; 0: free slot */
	uint64_t born;           /* the module's clock at its allocation */
	uint32_t node;           /* its allocation site's node in the static shape graph */
	uint32_t prev, next;     /* the other members of its instance (slots, 0: none);
				  * next also links free slots */
};

struct rds_objects {
	struct mn_shadow *sh;    /* uint32_t slot per 8-byte granule */
	struct rds_obj *v;       /* by slot; v[0] unused */
	uint32_t *inst;          /* by slot: its RDS instance, 0: none.  Apart from v[] so that a
				  * traversal's two lookups touch 4 dense bytes, not two records */
	uint32_t n, cap;         /* slots used so far (free ones included), allocated */
	uint32_t free;           /* first free slot, 0: none */
	uint64_t lo, span;       /* every object ever lies in [lo, lo + span): the cheap filter */
	uint64_t serial;         /* the last serial handed out */
	uint64_t live, peak;     /* live objects now, at most */
	uint64_t aliases;        /* granules left unmapped because their shadow aliased */
};

/* 0 or -errno (the shadow's). */
int rds_objects_init(struct rds_objects *o);
void rds_objects_free(struct rds_objects *o);

/*
 * A new object [addr, addr + size), with the next serial, every other field and its inst[] zero,
 * mapped in the shadow.  Returns its slot, or 0 without memory for the table.
 */
uint32_t rds_objects_alloc(struct rds_objects *o, uint64_t addr, uint64_t size);

/* Moves object s to [addr, addr + size) (realloc): unmaps the old range, maps the new one. */
void rds_objects_move(struct rds_objects *o, uint32_t s, uint64_t addr, uint64_t size);

/* Unmaps object s and frees its slot. */
void rds_objects_release(struct rds_objects *o, uint32_t s);

static inline struct rds_obj *rds_obj(const struct rds_objects *o, uint32_t s)
{
	return &o->v[s];
}

/* The slot of the live object holding address a, or 0.  The hot path of every load and store. */
static inline uint32_t rds_objects_find(const struct rds_objects *o, uint64_t a)
{
	const uint32_t *m;

	if (a - o->lo >= o->span)
		return 0;
	m = (const uint32_t *)mn_shadow_peek(o->sh, a);
	return m ? *m : 0;
}

#endif /* RDS_OBJECTS_H */
