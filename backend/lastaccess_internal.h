/*
 * Loop summaries in closed form (lastaccess.h): what lastaccess.c (the streams, their classes,
 * step-0 words, the expansion) and lastaccess_closed.c (the boundary, the last stores and loads,
 * the chunked sweep) share.  Never installed.
 */
#ifndef MNEMO_LASTACCESS_INTERNAL_H
#define MNEMO_LASTACCESS_INTERNAL_H

#include "lastaccess.h"

/*
 * A summarized loop (module.h) is taken whole when every access stream touches one word per
 * iteration at a whole number of words per iteration: stream p touches word w_p + k * e_p in
 * iteration k.  Streams of one step e != 0 whose words are congruent modulo e form a class; only
 * streams of one class ever touch a common word, and on any word W they do so in one fixed order,
 * by k_p(W) = (W - w_p) / e and then by their order in the iteration: sorted so, a class is a
 * sequence sigma, and with t_p = (w_0 - w_p) / e (w_0: sigma's first) stream q touches W
 * d = t_q - t_p iterations after p did.  The touches of W are the streams of sigma whose iteration
 * on W lies in [0, T): a contiguous part of sigma.  So for stream q, its dependence on the nearest
 * earlier store p of sigma is there exactly in iterations k >= d (T - d times, carried at distance
 * d when d > 0), and in iterations k < d no earlier store touched the word in this loop: the
 * source is the word's last store before the loop, read from the shadow (the boundary).  Write
 * after read likewise from the last load after that store.  After the loop a word's last store is
 * the store of sigma none of whose successor stores reached it (its last d iterations), its last
 * load the last stream of sigma on it if that is a load.  Streams of step 0 share one word each
 * iteration: the first iteration, then the second, stand for all (their sources lie in the same
 * or the previous iteration, or before the loop).  Anything else, and streams of different steps
 * that come near one another, takes the expansion: so does a loop that would reset
 * the clock.  The boundary and the last states are tight loops over the shadow; the boundary's
 * sources, met in address order, come in runs from one iteration of one loop, counted as one.
 */
/* Sources met one after another that make the same rows: one source access, one loop frame, one
 * iteration of it; clocks [lo, hi). */
struct run {
	uint32_t src, lo, hi;
	unsigned i;                /* mn_loopnest_holding() of its clock */
	bool carried;
	uint64_t dist, c;
};

struct stream {
	int64_t w, e;              /* word (address >> 3) in iteration 0; words per iteration */
	int64_t lo, hi;            /* the words it touches lie in [lo, hi] */
	struct mn_lastaccess_word *sw;   /* the shadow of its word in iteration 0; then + k * e */
	uint64_t t;                /* in its class: iterations after sigma's first stream */
	uint32_t aid, j;           /* access id; place in the iteration (acc[] index) */
	bool store;
	/* The plan (class_plan()): iterations [0, brw) find their raw or waw source, and [0, bwar)
	 * a store's war source, before the loop; from iteration fin on it is its words' last store
	 * (a store) or last load (a load). */
	uint64_t brw, bwar, fin;
	uint64_t marked;           /* in this chunk, its boundary pass wrote its words' last load
				    * (boundary()) or last store (boundary_store()) up to here */
	struct run run[2];         /* the boundary's sources so far: raw or waw, war */
	/* Streams later in sigma on the same words in the same iterations (equal t) whose raw or
	 * waw boundary covers the same iterations: their sources are this one's, so this one's
	 * pass counts for them too (a load and a store of one element: x[i] += ...).  A twin's
	 * own pass is skipped (twin_of). */
	uint32_t twin_aid[3];
	bool twin_store[3];
	unsigned ntwins;
	bool twin_of;
};

#define NEVER UINT64_MAX       /* a distance to a stream that is not there */
#define SLICE (UINT64_C(1) << MN_SHADOW_SLICE_SHIFT)

/* The shadow of the word p touches in iteration k: every slice p touches is ours, and all lie in
 * one window, where the shadow of consecutive words is consecutive (closed_streams()). */
static inline struct mn_lastaccess_word *word_of(const struct stream *p, uint64_t k)
{
	return p->sw + (int64_t)k * p->e;
}

void lastaccess_class_plan(struct mn_lastaccess *la, struct stream *s, unsigned m, uint64_t T);
void lastaccess_closed_chunk(struct mn_lastaccess *la, struct stream *s, unsigned m, uint64_t k0,
			     uint64_t k1, uint32_t inv);
void lastaccess_run_flush(struct mn_lastaccess *la, const struct run *r, uint32_t dst,
			  enum mn_dep_kind kind);
void lastaccess_run_flush_stream(struct mn_lastaccess *la, const struct run *r,
				 const struct stream *q, unsigned which);
void lastaccess_run_start(struct mn_lastaccess *la, struct run *r, uint32_t src, uint32_t sclock);

#endif /* MNEMO_LASTACCESS_INTERNAL_H */
