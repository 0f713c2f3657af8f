/*
 * LEAP's two applications (Wu et al., 4.2), computed from the LMADs alone, after the run: the
 * post-processors of the paper.  `mnemo derive` (tools/derive.c) runs them on a profile.
 *
 * Dependence frequency (4.2.1).  A load execution depends on a store when the last write to the
 * location it reads, before it, was by that store: the read-after-write rule of the dependence
 * module (modules/dependence/README.md), on locations of 2^granule_shift bytes (3: its 8-byte
 * words) counted from each object's start.  The frequency of (store, load) is the number of the
 * load's executions that depend on the store over all its executions, captured or not.
 * Every point of every LMAD is replayed in time order, group by group; a point's time is
 * interpolated between its LMAD's first and last time (the LMAD keeps no time stride), and ties
 * go in LMAD order.  Points the LMADs did not capture (a full stream) neither write nor read.
 *
 * Strides (4.2.2).  An instruction's stride is the offset difference between two consecutive
 * captured accesses of one (instruction, group) stream to the same object: count - 1 of an LMAD's
 * own offset stride when its object stride is 0, and one stride between consecutive LMADs that
 * start and end in the same object.  An instruction is strongly strided when one non-zero stride
 * accounts for at least 70% of its executions (Wu, PLDI 2002); a zero stride (the same location
 * again) is not one a prefetcher can use.
 */
#ifndef OBJREL_DERIVE_H
#define OBJREL_DERIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lmad.h"

#define OBJREL_STRONG_STRIDE 0.7

/* One (instruction, group) stream's LMADs, in time order. */
struct objrel_dstream {
	uint32_t group;
	const struct objrel_lmad *lmads;
	size_t n;
};

/* One load or store instruction: every execution (attributed or not) and its streams. */
struct objrel_dinsn {
	uint32_t site;
	bool store;
	uint64_t accesses;
	const struct objrel_dstream *streams;
	size_t n;
};

/* (store, load): conflicts of the load's executions with the store, out of load_accesses. */
struct objrel_dep {
	uint32_t store, load;
	uint64_t conflicts, load_accesses;
};

/* An instruction's most frequent non-zero stride (bytes) and how many of its executions had it. */
struct objrel_stride {
	uint32_t site;
	int64_t stride;
	uint64_t strided, accesses;
};

/*
 * The (store, load) pairs with at least one conflict, sorted by load then store, in a new array
 * *out of *nout.  Returns 0 or -ENOMEM.
 */
int objrel_derive_deps(const struct objrel_dinsn *insns, size_t n, unsigned granule_shift,
		       struct objrel_dep **out, size_t *nout);

/*
 * One row per instruction with at least one non-zero stride, sorted by site: its most frequent
 * one (the smaller stride of equal counts), in a new array.  Returns 0 or -ENOMEM.
 */
int objrel_derive_strides(const struct objrel_dinsn *insns, size_t n,
			  struct objrel_stride **out, size_t *nout);

static inline bool objrel_strongly_strided(const struct objrel_stride *s)
{
	return s->accesses && (double)s->strided >= OBJREL_STRONG_STRIDE * (double)s->accesses;
}

#endif /* OBJREL_DERIVE_H */
