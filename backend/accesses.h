/*
 * Accesses: a (site, context id, tag) triple interned as one dense 32-bit id from 1, the currency
 * of a shadow that remembers which access last touched a byte (the dependence module's).  The tag
 * is the caller's, to tell one site in one context apart by something the id should carry (the
 * dependence module: the program thread that made it, so that a word's last access says its
 * thread); 0 for none.  Open
 * addressing over the ids, power-of-two sized, at most half full.  Not thread-safe: one per
 * worker.  Without memory no new pair gets an id (0): the caller counts the loss.
 */
#ifndef MNEMO_ACCESSES_H
#define MNEMO_ACCESSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mn_access {
	uint32_t site, ctx, tag;
};

struct mn_accesses {
	struct mn_access *acc;      /* by id; [0] unused: 0 is "no access" in the shadow */
	uint32_t n, cap;             /* ids 1..n-1 assigned; entries of acc[] */
	uint32_t *slots;             /* open addressing over ids; 0: empty */
	unsigned bits;               /* 2^bits slots */
};

/* The id of (site, ctx, tag), assigned on first sight; 0 when memory ran out. */
uint32_t mn_access_intern(struct mn_accesses *t, uint32_t site, uint32_t ctx, uint32_t tag);
void mn_accesses_free(struct mn_accesses *t);

#endif /* MNEMO_ACCESSES_H */
