/*
 * Accesses: a (site, context id) pair interned as one dense 32-bit id from 1, the currency of a
 * shadow that remembers which access last touched a byte (the dependence module's).  Open
 * addressing over the ids, power-of-two sized, at most half full.  Not thread-safe: one per
 * worker.  Without memory no new pair gets an id (0): the caller counts the loss.
 */
#ifndef MNEMO_ACCESSES_H
#define MNEMO_ACCESSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mn_access {
	uint32_t site, ctx;
};

struct mn_accesses {
	struct mn_access *acc;      /* by id; [0] unused: 0 is "no access" in the shadow */
	uint32_t n, cap;             /* ids 1..n-1 assigned; entries of acc[] */
	uint32_t *slots;             /* open addressing over ids; 0: empty */
	unsigned bits;               /* 2^bits slots */
};

/* The id of (site, ctx), assigned on first sight; 0 when memory ran out. */
uint32_t mn_access_intern(struct mn_accesses *t, uint32_t site, uint32_t ctx);
void mn_accesses_free(struct mn_accesses *t);

#endif /* MNEMO_ACCESSES_H */
