/*
 * LEAP's two applications (Wu et al., 4.2), computed from the LMADs alone, after the run: the
 * post-processors of the paper.  `mnemo derive` (commands/derive.c) runs them on a profile.
 *
 * Dependence frequency (4.2.1).  A load execution depends on a store when the last write to the
 * location it reads, before it, was by that store: the read-after-write rule of the dependence
 * module (modules/dependence/README.md), on locations of 2^granule_shift bytes (3: its 8-byte
 * words) counted from each object's start.  The frequency of (store, load) is the fraction of the
 * load's executions that depend on the store.
 * Every point of every LMAD is replayed in time order, group by group and run by run (a run's
 * store never feeds another run's load; conflicts and observations add); a point's time is
 * interpolated between its LMAD's first and last time (the LMAD keeps no time stride), and ties
 * go in LMAD order.  The LMADs are a sample: a full stream captured its points up to some time
 * and none after, but its summary (min, max and granularity of object and offset) bounds where
 * its later points can be.  So a captured load finds its last store exactly unless a full store
 * stream of its group stopped capturing before it and its summary holds the load's location:
 * such a load is not observed.  The frequency is then estimated as the conflicts of the observed
 * executions over the observed executions, scaled by the share of its executions that were
 * attributed to an object at all (an unattributed load reads memory no object holds, which an
 * object's store never wrote).
 *
 * Strides (4.2.2).  An instruction's stride is the offset difference between two consecutive
 * captured accesses of one (instruction, group) stream to the same object: count - 1 of an LMAD's
 * own offset stride when its object stride is 0, and one stride between consecutive LMADs that
 * start and end in the same object.  Its share of the executions is estimated as its share of the
 * captured points, scaled by the attributed share.  An instruction is strongly strided when one
 * non-zero stride accounts for at least 70% of its executions (Wu, PLDI 2002); a zero stride (the
 * same location again) is not one a prefetcher can use.
 */
#ifndef OBJREL_DERIVE_H
#define OBJREL_DERIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lmad.h"

#define OBJREL_STRONG_STRIDE 0.7

/* One (instruction, group, run, thread) stream's LMADs, in time order.  Streams of different runs
 * of a merged profile (README "Merging") are replayed apart: times and objects are per run; so
 * are those of different threads, whose times are per thread. */
struct objrel_dstream {
	uint32_t group;          /* its site; an allocation context's a number above every site */
	uint32_t run;            /* 0 but in a merged profile */
	uint32_t thread;         /* 0 but in a profile of several threads (README "Threads") */
	bool full;               /* points after its last LMAD were not captured */
	/* Every point's bounds, per dimension (object, offset): min + k * gran <= max (gran 0: min) */
	uint64_t min[OBJREL_LMAD_DIMS], max[OBJREL_LMAD_DIMS], gran[OBJREL_LMAD_DIMS];
	const struct objrel_lmad *lmads;
	size_t n;
};

/* One load or store instruction: its executions, those no object held, and its streams. */
struct objrel_dinsn {
	uint32_t site;
	bool store;
	uint64_t accesses, unattributed;
	const struct objrel_dstream *streams;
	size_t n;
};

/* (store, load): of the load's observed executions, conflicts depended on the store. */
struct objrel_dep {
	uint32_t store, load;
	uint64_t conflicts, observed;
	uint64_t load_accesses, load_unattributed;
};

/* An instruction's most frequent non-zero stride (bytes): how many times it was seen, out of how
 * many captured points. */
struct objrel_stride {
	uint32_t site;
	int64_t stride;
	uint64_t strided, captured;
	uint64_t accesses, unattributed;
};

/*
 * The (store, load) pairs with at least one conflict seen, sorted by load then store, in a new
 * array *out of *nout.  Returns 0 or -ENOMEM.
 */
int objrel_derive_deps(const struct objrel_dinsn *insns, size_t n, unsigned granule_shift,
		       struct objrel_dep **out, size_t *nout);

/*
 * One row per instruction with at least one non-zero stride, sorted by site: its most frequent
 * one (the smaller stride of equal counts), in a new array.  Returns 0 or -ENOMEM.
 */
int objrel_derive_strides(const struct objrel_dinsn *insns, size_t n,
			  struct objrel_stride **out, size_t *nout);

/* The share of its executions attributed to an object. */
static inline double objrel_attributed(uint64_t accesses, uint64_t unattributed)
{
	return accesses ? (double)(accesses - unattributed) / (double)accesses : 0.0;
}

/* The estimated dependence frequency of d. */
static inline double objrel_dep_frequency(const struct objrel_dep *d)
{
	return d->observed ? (double)d->conflicts / (double)d->observed *
			     objrel_attributed(d->load_accesses, d->load_unattributed) : 0.0;
}

/* The estimated share of s's executions that had its stride. */
static inline double objrel_stride_fraction(const struct objrel_stride *s)
{
	return s->captured ? (double)s->strided / (double)s->captured *
			     objrel_attributed(s->accesses, s->unattributed) : 0.0;
}

static inline bool objrel_strongly_strided(const struct objrel_stride *s)
{
	return objrel_stride_fraction(s) >= OBJREL_STRONG_STRIDE;
}

#endif /* OBJREL_DERIVE_H */
