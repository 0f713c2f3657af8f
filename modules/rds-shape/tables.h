/*
 * The pending edges of rds-shape (Raman and August, 3.2: a pointer between objects whose sites are
 * not in one SCC yet, remembered until the SCCs change).  Open addressing, linear probing,
 * power-of-two sizes.  (The static shape graph's edges by site pair are a map.h reduction map.)
 *
 * Not a map.h map: an entry is a record that a later store into its field replaces, and entries
 * leave the table (taken once their sites share an SCC, dropped once an end dies), where a
 * reduction map only ever folds values into keys it keeps.
 *
 * Pending edges are kept one per pointer field, (source object, offset): a later store into the
 * same field replaces the edge, as the shape graph's edge <u, v> is "a pointer field of u points
 * to v".  An edge whose source or destination object has died is dropped when the table next
 * grows, so the table follows the live objects' pointer fields, never the run's history.
 *
 * Sizes: the table is at most 3/4 full, and grows only when dropping the dead leaves it more than
 * 3/8 full: 24 bytes an entry, 32 to 64 per pending edge.
 *
 * Not thread-safe.
 */
#ifndef RDS_TABLES_H
#define RDS_TABLES_H

#include <stdbool.h>
#include <stdint.h>

#include "objects.h"

struct rds_pend {
	uint32_t src, dst;       /* slots; src 0: empty entry */
	uint32_t src_tag, dst_tag;   /* low 32 bits of the objects' serials then: a slot whose
				      * object has another is dead (a 2^32 coincidence keeps it) */
	uint32_t offset;         /* of the pointer field in the source object */
	uint32_t stores;         /* edge_add events into this field with this destination */
};

struct rds_pending {
	struct rds_pend *e;
	uint64_t mask, n;        /* size - 1, entries used */
	uint64_t dropped;        /* entries dropped because an end died */
};

/*
 * Records that the field at offset in object src now points into object dst.  Returns 0, or
 * -ENOMEM (or -EOVERFLOW for an offset past 4 GiB) with the edge not recorded.
 */
int rds_pending_put(struct rds_pending *p, const struct mn_objects *o, uint32_t src,
		    uint64_t offset, uint32_t dst);

/*
 * Calls take(arg, e) for every pending edge whose two objects are alive; removes the edges it
 * returns true for, and every edge with a dead end.
 */
void rds_pending_take(struct rds_pending *p, const struct mn_objects *o,
		      bool (*take)(void *arg, const struct rds_pend *e), void *arg);

void rds_pending_free(struct rds_pending *p);

#endif /* RDS_TABLES_H */
