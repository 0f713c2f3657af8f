/*
 * Loop summaries expanded the simple way for the object-relative references (lossless_ref.c,
 * derived_check.c), from their description in docs/internals.md and sharing no code with
 * backend/driver.c: loop_summary_load/store records (codes 17, 18) push one access each on a
 * plain array; a loop_summary record (code 19: loop site, n, iterations) pops the top n and
 * stands for, each iteration k in turn, those n accesses in the order they were pushed, at
 * (start + k * step) mod 2^48.  The references want accesses alone, so the loop events the
 * summary also stands for are left out.  Header-only: each reference is one C file.
 *
 * Mixed loops (codes 20-24, described in events.yaml), as simply: loop_summary_open takes the top
 * n pending accesses off the array into a plain array of open loops; the accesses it stands for
 * are numbered in program order (access j of iteration k is the k*n + j-th), and a
 * mixed_load/store record of the innermost one, in iteration K after R of them, comes after the
 * first K*n + R: those not yet replayed are, then the record's own access.  Its close replays the
 * rest of the first iterations * n.
 */
#ifndef MNEMO_TEST_REF_SUMMARIES_H
#define MNEMO_TEST_REF_SUMMARIES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend_internal.h"   /* MN_EV_* */
#include "queue.h"              /* struct mn_wire, mn_wire_get() */
#include "ref_objects.h"        /* ref_xrealloc() */

#define REF_ADDR48 ((UINT64_C(1) << 48) - 1)   /* addresses are 48 bits on the wire */

/* A summarized access waiting for the loop_summary record that closes it. */
struct ref_pending {
	uint32_t site, size;
	uint64_t start;          /* its address in iteration 0 */
	uint64_t step;           /* bytes per iteration, two's complement */
	bool store;
};

/* An open mixed loop. */
struct ref_mixed {
	uint64_t n;
	struct ref_pending *acc;  /* [n], a copy */
	uint64_t done;            /* accesses it stands for replayed so far */
	uint64_t last;            /* the iteration of its latest mixed record; UINT64_MAX: none */
	uint32_t site;
};

struct ref_summaries {
	struct ref_pending *p;   /* first pushed first */
	size_t n, cap;
	uint64_t summaries;      /* loop_summary records expanded, and mixed loops closed */
	uint64_t accesses;       /* accesses they stood for: iterations * n each */
	struct ref_mixed *m;     /* the open mixed loops, innermost last */
	size_t nm, mcap;
};

/* Called for each access a summary stands for: site and size as a load or store record would
 * carry them (0 when the wire does not send them). */
typedef void ref_access_fn(void *ctx, uint32_t site, uint64_t addr, uint64_t size, bool store);

/* v as argument i of a record of event code carries it: cut to its bits, 0 when not sent. */
static inline uint64_t ref_as_sent(const struct mn_wire *wire, unsigned code, unsigned i,
				   uint64_t v)
{
	unsigned bits = wire->arg[code][i].bits;

	return bits >= 64 ? v : v & ((UINT64_C(1) << bits) - 1);
}

/* Summary events: loop summaries and mixed loops, with mixed_load/store. */
static inline bool ref_is_summary(unsigned code)
{
	return code >= MN_EV_LOOP_SUMMARY_LOAD && code <= MN_EV_LOOP_SUMMARY_CLOSE;
}

/* Access j of iteration k of pending entry a, to access() as a load or store record has it. */
static inline void ref_replay(const struct mn_wire *wire, const struct ref_pending *a, uint64_t k,
			      ref_access_fn *access, void *ctx)
{
	unsigned ev = a->store ? MN_EV_STORE : MN_EV_LOAD;

	access(ctx, (uint32_t)ref_as_sent(wire, ev, 0, a->site),
	       (a->start + k * a->step) & REF_ADDR48, ref_as_sent(wire, ev, 3, a->size), a->store);
}

/* Replays the accesses mixed loop m stands for up to the upto-th (not included). */
static inline void ref_mixed_replay(const struct mn_wire *wire, struct ref_mixed *m, uint64_t upto,
				    ref_access_fn *access, void *ctx)
{
	for (; m->done < upto; m->done++)
		ref_replay(wire, &m->acc[m->done % m->n], m->done / m->n, access, ctx);
}

/*
 * A mixed loop's record (codes 20-24; see ref_summary_event()).  False when it does not fit the
 * records before it: an open with fewer than n accesses pending, a mixed, at or close record
 * with no mixed loop open, a close of another loop, a mixed record in no iteration or after more
 * than all n.
 */
static inline bool ref_mixed_event(struct ref_summaries *s, const struct mn_wire *wire,
				   const uint64_t *rec, unsigned code, ref_access_fn *access,
				   void *ctx)
{
	struct ref_mixed *m = s->nm ? &s->m[s->nm - 1] : NULL;
	uint64_t n, pos;
	unsigned ev;

	switch (code) {
	case MN_EV_LOOP_SUMMARY_OPEN:
		n = mn_wire_get(wire, rec, code, 1);
		if (n > s->n)
			return false;
		if (s->nm == s->mcap) {
			s->mcap = s->mcap ? 2 * s->mcap : 16;
			s->m = ref_xrealloc(s->m, s->mcap * sizeof(*s->m));
		}
		m = &s->m[s->nm++];
		m->n = n;
		m->acc = ref_xrealloc(NULL, (n ? n : 1) * sizeof(*m->acc));
		s->n -= n;
		memcpy(m->acc, s->p + s->n, n * sizeof(*m->acc));
		m->done = 0;
		m->last = UINT64_MAX;
		m->site = (uint32_t)mn_wire_get(wire, rec, code, 0);
		return true;
	case MN_EV_MIXED_LOAD:
	case MN_EV_MIXED_STORE:
		pos = mn_wire_get(wire, rec, code, 3);
		if (!m)
			return false;
		if (pos & 1)
			m->last++;
		if (m->last == UINT64_MAX || pos >> 1 > m->n)
			return false;
		ref_mixed_replay(wire, m, m->last * m->n + (pos >> 1), access, ctx);
		ev = code == MN_EV_MIXED_STORE ? MN_EV_STORE : MN_EV_LOAD;
		access(ctx, (uint32_t)ref_as_sent(wire, ev, 0, mn_wire_get(wire, rec, code, 0)),
		       ref_as_sent(wire, ev, 1, mn_wire_get(wire, rec, code, 1)),
		       ref_as_sent(wire, ev, 3, mn_wire_get(wire, rec, code, 2)),
		       code == MN_EV_MIXED_STORE);
		return true;
	case MN_EV_LOOP_SUMMARY_AT:
		if (!m)
			return false;
		m->last = mn_wire_get(wire, rec, code, 0);
		return true;
	default:   /* MN_EV_LOOP_SUMMARY_CLOSE */
		if (!m || m->site != (uint32_t)mn_wire_get(wire, rec, code, 0))
			return false;
		n = mn_wire_get(wire, rec, code, 1) * m->n;
		ref_mixed_replay(wire, m, n, access, ctx);
		s->summaries++;
		s->accesses += n;
		free(m->acc);
		s->nm--;
		return true;
	}
}

/*
 * Applies record rec of a summary event (ref_is_summary(code)): a push, a loop_summary whose
 * accesses go to access(ctx, ...) in program order, or a mixed loop's record (ref_mixed_event():
 * the accesses before a mixed record's, then its own, go to access()).  False when a
 * loop_summary finds fewer than n accesses pending (a recording that lost records), or a mixed
 * loop's record does not fit the records before it: nothing is then called.
 */
static inline bool ref_summary_event(struct ref_summaries *s, const struct mn_wire *wire,
				     const uint64_t *rec, unsigned code, ref_access_fn *access,
				     void *ctx)
{
	const struct ref_pending *acc;
	uint64_t n, iters;

	if (code >= MN_EV_LOOP_SUMMARY_OPEN)
		return ref_mixed_event(s, wire, rec, code, access, ctx);
	if (code != MN_EV_LOOP_SUMMARY) {
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 64;
			s->p = ref_xrealloc(s->p, s->cap * sizeof(*s->p));
		}
		s->p[s->n++] = (struct ref_pending){
			.site = (uint32_t)mn_wire_get(wire, rec, code, 0),
			.start = mn_wire_get(wire, rec, code, 1),
			.step = mn_wire_get(wire, rec, code, 2),
			.size = (uint32_t)mn_wire_get(wire, rec, code, 3),
			.store = code == MN_EV_LOOP_SUMMARY_STORE,
		};
		return true;
	}
	n = mn_wire_get(wire, rec, code, 1);
	iters = mn_wire_get(wire, rec, code, 2);
	if (n > s->n)
		return false;
	s->n -= n;
	acc = s->p + s->n;   /* the popped entries stay in place until the next push */
	s->summaries++;
	s->accesses += n * iters;
	for (uint64_t k = 0; k < iters; k++)
		for (uint64_t j = 0; j < n; j++)
			ref_replay(wire, &acc[j], k, access, ctx);
	return true;
}

static inline void ref_summaries_free(struct ref_summaries *s)
{
	for (size_t i = 0; i < s->nm; i++)
		free(s->m[i].acc);
	free(s->m);
	free(s->p);
}

#endif /* MNEMO_TEST_REF_SUMMARIES_H */
