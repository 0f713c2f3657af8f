/*
 * Loop summaries expanded the simple way for the object-relative references (lossless_ref.c,
 * derived_check.c), from their description in docs/internals.md and sharing no code with
 * backend/driver.c: loop_summary_load/store records (codes 17, 18) push one access each on a
 * plain array; a loop_summary record (code 19: loop site, n, iterations) pops the top n and
 * stands for, each iteration k in turn, those n accesses in the order they were pushed, at
 * (start + k * step) mod 2^48.  The references want accesses alone, so the loop events the
 * summary also stands for are left out.  Header-only: each reference is one C file.
 */
#ifndef MNEMO_TEST_REF_SUMMARIES_H
#define MNEMO_TEST_REF_SUMMARIES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

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

struct ref_summaries {
	struct ref_pending *p;   /* first pushed first */
	size_t n, cap;
	uint64_t summaries;      /* loop_summary records expanded */
	uint64_t accesses;       /* accesses they stood for: iterations * n each */
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

static inline bool ref_is_summary(unsigned code)
{
	return code == MN_EV_LOOP_SUMMARY_LOAD || code == MN_EV_LOOP_SUMMARY_STORE ||
	       code == MN_EV_LOOP_SUMMARY;
}

/*
 * Applies record rec of a summary event (ref_is_summary(code)): a push, or a loop_summary whose
 * accesses go to access(ctx, ...) in program order.  False when a loop_summary finds fewer than
 * n accesses pending (a recording that lost records): nothing is then called.
 */
static inline bool ref_summary_event(struct ref_summaries *s, const struct mn_wire *wire,
				     const uint64_t *rec, unsigned code, ref_access_fn *access,
				     void *ctx)
{
	const struct ref_pending *acc;
	uint64_t n, iters;

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
	for (uint64_t k = 0; k < iters; k++) {
		for (uint64_t j = 0; j < n; j++) {
			unsigned ev = acc[j].store ? MN_EV_STORE : MN_EV_LOAD;

			access(ctx, (uint32_t)ref_as_sent(wire, ev, 0, acc[j].site),
			       (acc[j].start + k * acc[j].step) & REF_ADDR48,
			       ref_as_sent(wire, ev, 3, acc[j].size), acc[j].store);
		}
	}
	return true;
}

static inline void ref_summaries_free(struct ref_summaries *s)
{
	free(s->p);
}

#endif /* MNEMO_TEST_REF_SUMMARIES_H */
