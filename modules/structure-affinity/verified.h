/*
 * Verified extents: which granules of a live object are known to be found as that object by
 * mn_objects_find(), so that structure-affinity's loop summaries (sa_loop_summary()) attribute a
 * summarized walk inside them in O(1) instead of one lookup per access.
 *
 * One record per object slot: a range of granules whose shadow held the slot when they were read,
 * and the serial of the instance then in the slot (a record of an earlier instance of the slot is
 * stale by its serial; a moved instance keeps its serial, but its record is forgotten, below).  An
 * address inside the object's extent whose granule holds the slot is found as the slot
 * (objects.h: the granule's owner, and the address inside it; the range filter passes for every
 * address of a mapped object, as it only widens).  The shadow changes only when an object is
 * mapped over it or unmapped from it, so sa_verified_forget(), called before every
 * mn_objects_alloc(), mn_objects_move() and mn_objects_release(), drops the record of every slot
 * that range's granules hold, and a record stays true for as long as it exists.
 *
 * Reading the shadow costs one lookup per granule.  A walk whose range would cost far more granules
 * than it has accesses (a column of a large matrix) is checked at its own addresses instead, and
 * the record grows over its range only once those point checks have cost as much as the growing
 * would (ski rental: at most twice the cheaper of the two, and O(1) once grown).
 *
 * Not thread-safe: one per module state, with the object table it describes.
 */
#ifndef SA_VERIFIED_H
#define SA_VERIFIED_H

#include <stdbool.h>
#include <stdint.h>

#include "objects.h"

struct sa_verified_rec {
	uint64_t serial;          /* the instance the granules were read for; 0: none */
	uint64_t glo, ghi;        /* granules (address >> shift) holding the slot, inclusive */
	uint64_t debt;            /* point checks (addresses) made since the record last grew */
};

struct sa_verified {
	struct sa_verified_rec *rec;   /* by slot; NULL until the first walk */
	uint32_t n;                    /* rec[] length */
	bool any;                      /* some record was made: forget() has something to drop */
};

/*
 * Whether every address first + k * step, k in [0, n), is found as slot by mn_objects_find(o, .),
 * for a walk that does not wrap (lo and hi its lowest and highest address) and whose first address
 * is found as slot.  Exact: true only when each lookup would return slot.  May grow slot's record;
 * without memory for it, checks the addresses one by one.
 */
bool sa_verified_walk(struct sa_verified *v, const struct mn_objects *o, uint32_t slot,
		      uint64_t first, int64_t step, uint64_t n, uint64_t lo, uint64_t hi);

/*
 * Call before the table maps or unmaps [addr, addr + size) (size 0: one byte): forgets the record
 * of every slot one of those granules holds.  Costs one lookup per granule once any record exists,
 * nothing before.
 */
void sa_verified_forget(struct sa_verified *v, const struct mn_objects *o, uint64_t addr,
			uint64_t size);

/* Frees the records (a zeroed one is fine). */
void sa_verified_free(struct sa_verified *v);

#endif /* SA_VERIFIED_H */
