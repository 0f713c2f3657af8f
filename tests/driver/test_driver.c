/*
 * The driver's loop summaries and mixed loops (backend/driver.c): the fast path's slow twin.  A
 * stream written with loop_summary_load/store and loop_summary records, or with mixed loops
 * (loop_summary_open, mixed_load/store, loop_summary_at, loop_summary_close), must reach a module
 * exactly as the same stream written record per access: every handler call, in the same order,
 * with the same arguments, for 1 worker and for 2 and 3 workers sharded by address and by site.
 *
 * Each scenario is written twice by the same script: `sum` gets the summary records, `ref` gets,
 * in place of each loop_summary record, its expansion computed here the plain way (address
 * (start + k * step) & (2^48 - 1), a multiply per access, accesses in push order, loop events only
 * when the wire sends them).  A recording module logs every call; the logs of the two streams
 * must be identical, worker by worker.  Also: summaries that cannot be whole are counted lost and
 * not expanded, entries left pending at the end are counted, the stack survives buffer
 * boundaries, and a module's loop_summary handler gets the summary instead of the expansion.
 *
 * Mixed loops are written the same way: `sum` gets what the specializer's bodies send (the
 * pushes, loop_summary_open, each mixed access with its position, rank << 1 | next, after a
 * loop_summary_at when its iteration is neither the previous mixed record's nor the next, through
 * one `mixed_last` as the thread-local one), `ref` gets the per-access records, written here from
 * a plain count of the loop's slots (iteration k is slot k(n+1), its loop_iter, then k(n+1)+1+j,
 * its summarized access j; an access of rank r in iteration k comes after slot k(n+1)+r).  Nested
 * loops (a signal handler's, inside an open one), lost loops (too few pending entries, the frame
 * stack full, a close out of turn), mixed records with no loop open and loops left open at the
 * end are counted as the driver's contract says, and every worker's calls are the one-worker
 * calls it owns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend_internal.h"
#include "shadow.h"

#define MASK48 ((UINT64_C(1) << 48) - 1)

/* ---- The recording module -------------------------------------------------------------------- */

enum { L_LOAD = 1, L_STORE, L_INVOKE, L_ITER, L_EXIT, L_FENTRY, L_FEXIT, L_SUMMARY };

struct call {
	uint32_t what;               /* L_* */
	uint32_t site;
	uint64_t addr;
	uint64_t value;
	uint32_t size;
};

struct log {
	struct call *c;
	size_t n, cap;
	/* loop_summary calls: their accesses, flattened */
	struct mn_summary_access acc[64];
	unsigned nacc;
	uint64_t iterations;
};

static void log_add(struct log *l, uint32_t what, uint32_t site, uint64_t addr, uint64_t value,
		    uint32_t size)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->c = realloc(l->c, l->cap * sizeof(*l->c));
		assert_non_null(l->c);
	}
	l->c[l->n++] = (struct call){ what, site, addr, value, size };
}

static void rec_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	log_add(st, L_LOAD, site, addr, value, size);
}

static void rec_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	log_add(st, L_STORE, site, addr, value, size);
}

static void rec_invoke(void *st, uint32_t site) { log_add(st, L_INVOKE, site, 0, 0, 0); }
static void rec_iter(void *st, uint32_t site) { log_add(st, L_ITER, site, 0, 0, 0); }
static void rec_exit(void *st, uint32_t site) { log_add(st, L_EXIT, site, 0, 0, 0); }
static void rec_fentry(void *st, uint32_t site) { log_add(st, L_FENTRY, site, 0, 0, 0); }
static void rec_fexit(void *st, uint32_t site) { log_add(st, L_FEXIT, site, 0, 0, 0); }

static void rec_summary(void *st, uint32_t site, uint64_t iterations,
			const struct mn_summary_access *acc, unsigned n)
{
	struct log *l = st;

	log_add(l, L_SUMMARY, site, iterations, 0, n);
	for (unsigned j = 0; j < n && l->nacc < 64; j++)
		l->acc[l->nacc++] = acc[j];
	l->iterations += iterations;
}

#define RECORDER(shard_, shift_) {                                                               \
	.name = "recorder", .state_size = sizeof(struct log), .shard = (shard_),                 \
	.shard_shift = (shift_), .load = rec_load, .store = rec_store,                           \
	.loop_invoke = rec_invoke, .loop_iter = rec_iter, .loop_exit = rec_exit,                 \
	.func_entry = rec_fentry, .func_exit = rec_fexit,                                        \
}

/* Address sharding by 8-byte granules: strides of 4 and 1 change owner within a summary. */
static const struct mn_module by_addr = RECORDER(MN_SHARD_ADDRESS, 3);
static const struct mn_module by_site = RECORDER(MN_SHARD_SITE, 0);

/* The recorder with a shadow for the driver to prefetch from (module.h): the same calls. */
static struct mn_shadow *the_shadow;

static struct mn_shadow *rec_shadow(void *st)
{
	(void)st;
	return the_shadow;
}

static const struct mn_module by_addr_prefetched = {
	.name = "recorder", .state_size = sizeof(struct log), .shard = MN_SHARD_ADDRESS,
	.shard_shift = 3, .load = rec_load, .store = rec_store,
	.loop_invoke = rec_invoke, .loop_iter = rec_iter, .loop_exit = rec_exit,
	.func_entry = rec_fentry, .func_exit = rec_fexit, .shadow = rec_shadow,
};

/* ---- Wires ----------------------------------------------------------------------------------- */

static void arg(struct mn_wire *w, unsigned code, unsigned i, unsigned word, unsigned shift,
		unsigned bits)
{
	w->arg[code][i] = (struct mn_wire_arg){ .word = (uint8_t)word, .shift = (uint8_t)shift,
						.bits = (uint8_t)bits };
}

/*
 * Every event of the scenarios.  Loads and stores send value (3 words), so that the expansion's
 * value 0 is checked against a decoded 0.  loop: whether loop_invoke/iter/exit are sent.
 */
static void wire_make(struct mn_wire *w, bool loop)
{
	memset(w, 0, sizeof(*w));
	for (unsigned c = MN_EV_LOAD; c <= MN_EV_STORE; c++) {
		w->nwords[c] = 3;
		arg(w, c, 0, 0, 8, 32);      /* site */
		arg(w, c, 1, 1, 0, 48);      /* address */
		arg(w, c, 2, 2, 0, 64);      /* value */
		arg(w, c, 3, 0, 40, 24);     /* size */
	}
	for (unsigned c = MN_EV_FUNC_ENTRY; c <= MN_EV_LOOP_EXIT; c++) {
		if (c >= MN_EV_LOOP_INVOKE && !loop)
			continue;
		w->nwords[c] = 1;
		arg(w, c, 0, 0, 8, 32);
	}
	for (unsigned c = MN_EV_LOOP_SUMMARY_LOAD; c <= MN_EV_LOOP_SUMMARY_STORE; c++) {
		w->nwords[c] = 3;
		arg(w, c, 0, 0, 8, 32);      /* site */
		arg(w, c, 1, 1, 16, 48);     /* address (start) */
		arg(w, c, 2, 2, 0, 64);      /* step */
		arg(w, c, 3, 0, 40, 24);     /* size */
	}
	w->nwords[MN_EV_LOOP_SUMMARY] = 2;
	arg(w, MN_EV_LOOP_SUMMARY, 0, 0, 8, 32);    /* site */
	arg(w, MN_EV_LOOP_SUMMARY, 1, 1, 0, 16);    /* accesses */
	arg(w, MN_EV_LOOP_SUMMARY, 2, 1, 16, 48);   /* iterations */

	/* Mixed loops, packed as mn_spec_pack_summaries() packs them (first fit). */
	w->nwords[MN_EV_LOOP_SUMMARY_OPEN] = 1;
	arg(w, MN_EV_LOOP_SUMMARY_OPEN, 0, 0, 8, 32);    /* site */
	arg(w, MN_EV_LOOP_SUMMARY_OPEN, 1, 0, 40, 16);   /* accesses */
	for (unsigned c = MN_EV_MIXED_LOAD; c <= MN_EV_MIXED_STORE; c++) {
		w->nwords[c] = 2;
		arg(w, c, 0, 0, 8, 32);      /* site */
		arg(w, c, 1, 1, 0, 48);      /* address */
		arg(w, c, 2, 0, 40, 24);     /* size */
		arg(w, c, 3, 1, 48, 16);     /* position */
	}
	w->nwords[MN_EV_LOOP_SUMMARY_AT] = 1;
	arg(w, MN_EV_LOOP_SUMMARY_AT, 0, 0, 8, 48);      /* iteration */
	w->nwords[MN_EV_LOOP_SUMMARY_CLOSE] = 2;
	arg(w, MN_EV_LOOP_SUMMARY_CLOSE, 0, 0, 8, 32);   /* site */
	arg(w, MN_EV_LOOP_SUMMARY_CLOSE, 1, 1, 0, 48);   /* iterations */
}

/* ---- Streams --------------------------------------------------------------------------------- */

struct buf {
	uint64_t *w;
	size_t n, cap;
	uint64_t records;
};

static void put(struct buf *b, unsigned nw, uint64_t w0, uint64_t w1, uint64_t w2)
{
	if (b->n + 3 > b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->w = realloc(b->w, b->cap * sizeof(*b->w));
		assert_non_null(b->w);
	}
	b->w[b->n++] = w0;
	if (nw > 1)
		b->w[b->n++] = w1;
	if (nw > 2)
		b->w[b->n++] = w2;
	b->records++;
}

static void put_access(struct buf *b, bool store, uint32_t site, uint64_t addr, uint64_t value,
		       uint32_t size)
{
	put(b, 3, (store ? MN_EV_STORE : MN_EV_LOAD) | (uint64_t)site << 8 | (uint64_t)size << 40,
	    addr & MASK48, value);
}

static void put_ctx(struct buf *b, unsigned code, uint32_t site)
{
	put(b, 1, code | (uint64_t)site << 8, 0, 0);
}

static void put_open(struct buf *b, uint32_t loop, unsigned n)
{
	put(b, 1, MN_EV_LOOP_SUMMARY_OPEN | (uint64_t)loop << 8 | (uint64_t)n << 40, 0, 0);
}

static void put_mixed(struct buf *b, bool store, uint32_t site, uint64_t addr, uint32_t size,
		      unsigned position)
{
	put(b, 2, (store ? MN_EV_MIXED_STORE : MN_EV_MIXED_LOAD) | (uint64_t)site << 8 |
			  (uint64_t)size << 40,
	    (addr & MASK48) | (uint64_t)position << 48, 0);
}

static void put_at(struct buf *b, uint64_t iteration)
{
	put(b, 1, MN_EV_LOOP_SUMMARY_AT | iteration << 8, 0, 0);
}

static void put_close(struct buf *b, uint32_t loop, uint64_t iterations)
{
	put(b, 2, MN_EV_LOOP_SUMMARY_CLOSE | (uint64_t)loop << 8, iterations, 0);
}

/*
 * An open mixed loop of a script: its summarized accesses, taken off the script's pending stack
 * at its open, and how many slots of its expansion ref has (see the top of the file).
 */
struct sframe {
	uint32_t loop;
	unsigned n;
	struct mn_summary_access acc[16];
	uint64_t slots;
	unsigned floor;              /* the script's npend at its open, after taking its accesses */
	bool lost;                   /* lost by the driver: ref gets its mixed accesses alone */
};

/*
 * A scenario written twice.  `pend` is the script's own pending stack, from which close() writes
 * ref's expansion.  `loop`: the wire sends loop events (ref holds them only then).
 */
struct script {
	struct buf sum, ref;
	struct mn_summary_access pend[64];
	unsigned npend;
	bool loop;
	uint64_t summarized;
	size_t split[8];             /* word offsets in sum where a test may cut its buffers */
	unsigned nsplit;
	struct sframe frame[8];      /* open mixed loops, innermost last */
	unsigned nframes;
	uint64_t mixed_last;         /* as the specializer's thread-local one */
};

/* A plain record, the same in both streams. */
static void s_access(struct script *s, bool store, uint32_t site, uint64_t addr, uint64_t value,
		     uint32_t size)
{
	put_access(&s->sum, store, site, addr, value, size);
	put_access(&s->ref, store, site, addr, value, size);
}

static void s_ctx(struct script *s, unsigned code, uint32_t site)
{
	put_ctx(&s->sum, code, site);
	put_ctx(&s->ref, code, site);
}

/* One loop_summary_load/store: in sum only; ref gets its accesses at the close. */
static void s_push(struct script *s, bool store, uint32_t site, uint64_t start, int64_t step,
		   uint32_t size)
{
	put(&s->sum, 3,
	    (store ? MN_EV_LOOP_SUMMARY_STORE : MN_EV_LOOP_SUMMARY_LOAD) | (uint64_t)site << 8 |
		    (uint64_t)size << 40,
	    (start & MASK48) << 16, (uint64_t)step);
	assert_true(s->npend < 64);
	s->pend[s->npend++] = (struct mn_summary_access){ .start = start, .step = step,
							  .site = site, .size = size,
							  .store = store };
}

/* The loop_summary record; ref gets the per-access records of the same loop. */
static void s_close(struct script *s, uint32_t loop, unsigned n, uint64_t iters)
{
	const struct mn_summary_access *a;

	put(&s->sum, 2, MN_EV_LOOP_SUMMARY | (uint64_t)loop << 8, n | iters << 16, 0);
	assert_true(n <= s->npend);
	s->npend -= n;
	a = s->pend + s->npend;
	if (s->loop)
		put_ctx(&s->ref, MN_EV_LOOP_INVOKE, loop);
	for (uint64_t k = 0; k < iters; k++) {
		if (s->loop)
			put_ctx(&s->ref, MN_EV_LOOP_ITER, loop);
		for (unsigned j = 0; j < n; j++)
			put_access(&s->ref, a[j].store, a[j].site,
				   (a[j].start + k * (uint64_t)a[j].step) & MASK48, 0, a[j].size);
	}
	if (s->loop)
		put_ctx(&s->ref, MN_EV_LOOP_EXIT, loop);
	s->summarized += iters * n;
}

static void s_mark(struct script *s)
{
	assert_true(s->nsplit < 8);
	s->split[s->nsplit++] = s->sum.n;
}

/* ---- Mixed loops in a script ----------------------------------------------------------------- */

/* Writes the slots of f's expansion into ref up to slot `upto` (not included). */
static void ref_slots(struct script *s, struct sframe *f, uint64_t upto)
{
	for (; f->slots < upto; f->slots++) {
		uint64_t k = f->slots / (f->n + 1), r = f->slots % (f->n + 1);
		const struct mn_summary_access *a;

		if (!r) {
			if (s->loop)
				put_ctx(&s->ref, MN_EV_LOOP_ITER, f->loop);
			continue;
		}
		a = &f->acc[r - 1];
		put_access(&s->ref, a->store, a->site, (a->start + k * (uint64_t)a->step) & MASK48,
			   0, a->size);
	}
}

static struct sframe *m_top(struct script *s)
{
	assert_true(s->nframes > 0);
	return &s->frame[s->nframes - 1];
}

/* loop_summary_open(loop, n) after the n pushes of its summarized accesses (s_push()). */
static void m_open(struct script *s, uint32_t loop, unsigned n)
{
	struct sframe *f;

	assert_true(s->nframes < 8 && n <= 16 && n <= s->npend);
	put_open(&s->sum, loop, n);
	s->mixed_last = UINT64_MAX;
	f = &s->frame[s->nframes++];
	memset(f, 0, sizeof(*f));
	f->loop = loop;
	f->n = n;
	s->npend -= n;
	memcpy(f->acc, s->pend + s->npend, n * sizeof(*f->acc));
	f->floor = s->npend;
	if (s->loop)
		put_ctx(&s->ref, MN_EV_LOOP_INVOKE, loop);
}

/*
 * loop_summary_open(loop, n) that the driver must find lost: too few entries above the open
 * frames' ones (all those are then dropped), or none of them missing (the frame stack is full:
 * its n are dropped).  ref gets nothing for it but its mixed accesses, as plain ones.
 */
static void m_open_lost(struct script *s, uint32_t loop, unsigned n)
{
	unsigned floor = s->nframes ? m_top(s)->floor : 0;
	struct sframe *f;

	assert_true(s->nframes < 8);
	put_open(&s->sum, loop, n);
	s->mixed_last = UINT64_MAX;
	s->npend = n > s->npend - floor ? floor : s->npend - n;
	f = &s->frame[s->nframes++];
	memset(f, 0, sizeof(*f));
	f->loop = loop;
	f->floor = s->npend;
	f->lost = true;
}

/* A mixed access of the innermost open loop, in iteration `it`, after `rank` of its summarized
 * accesses; the specializer's body: an at record when needed, then the record. */
static void m_access(struct script *s, bool store, uint32_t site, uint64_t addr, uint32_t size,
		     uint64_t it, unsigned rank)
{
	struct sframe *f = m_top(s);
	uint64_t d = it - s->mixed_last;

	if (d > 1) {
		put_at(&s->sum, it);
		d = 0;
	}
	s->mixed_last = it;
	put_mixed(&s->sum, store, site, addr, size, rank << 1 | (unsigned)d);
	if (!f->lost)
		ref_slots(s, f, it * (f->n + 1) + 1 + rank);
	put_access(&s->ref, store, site, addr, 0, size);
}

/* loop_summary_close(loop, iterations) of the innermost open loop. */
static void m_close(struct script *s, uint64_t iterations)
{
	struct sframe *f = m_top(s);

	put_close(&s->sum, f->loop, iterations);
	s->mixed_last = UINT64_MAX - 1;
	if (!f->lost) {
		ref_slots(s, f, iterations * (f->n + 1));
		if (s->loop)
			put_ctx(&s->ref, MN_EV_LOOP_EXIT, f->loop);
		s->summarized += iterations * f->n;
	}
	s->nframes--;
}

/* The innermost open loop is never closed (its close is lost, or a signal handler jumped out):
 * nothing more of it in either stream. */
static void m_abandon(struct script *s)
{
	m_top(s);
	s->nframes--;
}

/*
 * The scenario: plain records around summaries with positive, negative and zero steps, one
 * iteration, no accesses, addresses that wrap at 2^48 both ways, mixed sizes, two summaries
 * interleaved as a signal handler makes them (the handler's whole summary between the outer
 * loop's access records and its loop_summary), a summary nested inside that one's pushes too,
 * and a long one, so that every worker owns some of everything.  Cut points fall where records
 * are pending.
 */
static void scenario(struct script *s, bool loop)
{
	memset(s, 0, sizeof(*s));
	s->loop = loop;
	s_ctx(s, MN_EV_FUNC_ENTRY, 100);
	s_access(s, false, 50, 0x7000, 42, 8);
	s_access(s, true, 51, 0x7008, 7, 4);

	/* Three accesses: +8, -4, 0 bytes per iteration. */
	s_push(s, false, 1, 0x1000, 8, 8);
	s_push(s, true, 2, 0x2000, -4, 4);
	s_mark(s);
	s_push(s, false, 3, 0x3000, 0, 8);
	s_close(s, 10, 3, 5);
	s_access(s, true, 52, 0x7010, 1, 2);

	/* The outer loop's records, a signal handler's summarized loop, the outer close. */
	s_push(s, false, 4, 0x4000, 16, 4);
	s_push(s, true, 5, 0x5001, 1, 1);
	s_mark(s);
	s_ctx(s, MN_EV_FUNC_ENTRY, 101);
	s_push(s, false, 6, 0x6000, 24, 8);
	s_push(s, true, 6, 0x6004, 24, 4);
	s_close(s, 30, 2, 3);
	s_close(s, 31, 0, 2);                   /* n = 0: only loop events */
	s_ctx(s, MN_EV_FUNC_EXIT, 101);
	s_close(s, 20, 2, 4);

	/* One iteration; wrap-around above 2^48 and below 0. */
	s_push(s, true, 7, 0x123456789abc, 8, 8);
	s_close(s, 40, 1, 1);
	s_push(s, false, 8, MASK48 - 7, 8, 8);
	s_push(s, true, 9, 8, -8, 8);
	s_close(s, 41, 2, 3);
	s_close(s, 42, 0, 1);

	/* Long enough for every worker to own some of each site and granule. */
	s_push(s, false, 11, 0x10000, 4, 4);
	s_push(s, false, 12, 0x20000, 12, 4);
	s_push(s, true, 13, 0x30000, -1, 1);
	s_mark(s);
	s_close(s, 43, 3, 300);
	s_ctx(s, MN_EV_FUNC_EXIT, 100);
	assert_int_equal(s->npend, 0);
}

static void script_free(struct script *s)
{
	free(s->sum.w);
	free(s->ref.w);
}

/* ---- Running --------------------------------------------------------------------------------- */

struct result {
	struct log log[3];
	struct mn_decode_stats st[3];
};

/*
 * Runs words through nw workers of m, cut into buffers at cuts[0..ncuts) (word offsets at record
 * starts), then ends the stream.  pending_max, frames_max: the workers' bounds (0: the default).
 */
static void run_bounded(struct result *r, const struct mn_module *m, unsigned nw,
			const struct mn_wire *wire, const uint64_t *words, size_t n,
			const size_t *cuts, unsigned ncuts, size_t pending_max, size_t frames_max)
{
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < nw; i++) {
		struct mn_worker w = { .mod = m, .state = &r->log[i], .id = i, .nworkers = nw,
				       .pending_max = pending_max, .frames_max = frames_max };
		size_t from = 0;

		for (unsigned c = 0; c <= ncuts; c++) {
			size_t to = c < ncuts ? cuts[c] : n;

			mn_worker_run(&w, wire, words + from, to - from, &r->st[i]);
			from = to;
		}
		mn_worker_finish(&w, &r->st[i]);
		assert_null(w.pending);
		assert_null(w.frames);
	}
}

static void run(struct result *r, const struct mn_module *m, unsigned nw,
		const struct mn_wire *wire, const uint64_t *words, size_t n, const size_t *cuts,
		unsigned ncuts, size_t pending_max)
{
	run_bounded(r, m, nw, wire, words, n, cuts, ncuts, pending_max, 0);
}

static void result_free(struct result *r)
{
	for (unsigned i = 0; i < 3; i++)
		free(r->log[i].c);
}

static const char *what_name(uint32_t what)
{
	static const char *const names[] = { "?", "load", "store", "loop_invoke", "loop_iter",
					     "loop_exit", "func_entry", "func_exit",
					     "loop_summary" };

	return what < sizeof(names) / sizeof(names[0]) ? names[what] : "?";
}

/* The two logs are identical; on the first difference, prints both calls and fails. */
static void logs_equal(const struct log *got, const struct log *want, const char *what)
{
	size_t n = got->n < want->n ? got->n : want->n;

	for (size_t i = 0; i < n; i++) {
		const struct call *g = &got->c[i], *e = &want->c[i];

		if (g->what != e->what || g->site != e->site || g->addr != e->addr ||
		    g->value != e->value || g->size != e->size)
			fail_msg("%s: call %zu: expected %s(site %u, addr %#llx, value %llu, size "
				 "%u), got %s(site %u, addr %#llx, value %llu, size %u)",
				 what, i, what_name(e->what), e->site, (unsigned long long)e->addr,
				 (unsigned long long)e->value, e->size, what_name(g->what),
				 g->site, (unsigned long long)g->addr,
				 (unsigned long long)g->value, g->size);
	}
	if (got->n != want->n)
		fail_msg("%s: expected %zu calls, got %zu", what, want->n, got->n);
}

static size_t count_accesses(const struct log *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++)
		k += l->c[i].what == L_LOAD || l->c[i].what == L_STORE;
	return k;
}

/* Does worker id of nw own call c?  Accesses by m's shard key, every other event always. */
static bool call_owned(const struct mn_module *m, const struct call *c, unsigned nw, unsigned id)
{
	if (c->what != L_LOAD && c->what != L_STORE)
		return true;
	if (m->shard == MN_SHARD_ADDRESS)
		return (c->addr >> m->shard_shift) % nw == id;
	if (m->shard == MN_SHARD_SITE)
		return c->site % nw == id;
	return true;
}

/* What a script's summary stream must give besides ref's calls. */
struct expect {
	uint64_t lost_summaries, lost_pending;
	size_t min_accesses;         /* each worker of 2 or 3 handles at least this many */
	size_t frames_max;           /* the workers' bound on open mixed loops; 0: the default */
};

/*
 * A script through 1, 2 and 3 workers of m, its summary stream (cut where the script marked it)
 * against its per-access one: logs identical per worker, each worker's log the one-worker log's
 * calls it owns, stats as written (the per-access stream loses nothing).
 */
static void check_script(const struct script *s, const struct mn_wire *wire,
			 const struct mn_module *m, const struct expect *e, const char *name)
{
	struct result one;
	size_t total = 0;
	char what[160];

	for (unsigned nw = 1; nw <= 3; nw++) {
		struct result sum, ref;
		size_t handled = 0;

		run_bounded(&sum, m, nw, wire, s->sum.w, s->sum.n, s->split, s->nsplit, 0,
			    e->frames_max);
		run(&ref, m, nw, wire, s->ref.w, s->ref.n, NULL, 0, 0);
		for (unsigned i = 0; i < nw; i++) {
			snprintf(what, sizeof(what),
				 "%s: shard %s, loop events %s, worker %u of %u", name,
				 m->shard == MN_SHARD_SITE ? "site" : "address",
				 s->loop ? "sent" : "not sent", i, nw);
			logs_equal(&sum.log[i], &ref.log[i], what);
			handled += count_accesses(&sum.log[i]);
			if (nw > 1 && count_accesses(&sum.log[i]) < e->min_accesses)
				fail_msg("%s: only %zu accesses: the sharding is not exercised",
					 what, count_accesses(&sum.log[i]));
			if (nw > 1) {
				struct log owned = { 0 };

				for (size_t c = 0; c < one.log[0].n; c++) {
					const struct call *k = &one.log[0].c[c];

					if (call_owned(m, k, nw, i))
						log_add(&owned, k->what, k->site, k->addr, k->value,
							k->size);
				}
				strncat(what, ", against 1 worker",
					sizeof(what) - strlen(what) - 1);
				logs_equal(&sum.log[i], &owned, what);
				free(owned.c);
			}

			if (sum.st[i].events != s->sum.records ||
			    ref.st[i].events != s->ref.records)
				fail_msg("%s: expected %llu and %llu events, got %llu and %llu",
					 what, (unsigned long long)s->sum.records,
					 (unsigned long long)s->ref.records,
					 (unsigned long long)sum.st[i].events,
					 (unsigned long long)ref.st[i].events);
			if (sum.st[i].summarized != s->summarized)
				fail_msg("%s: expected %llu summarized accesses, got %llu", what,
					 (unsigned long long)s->summarized,
					 (unsigned long long)sum.st[i].summarized);
			if (sum.st[i].lost_summaries != e->lost_summaries ||
			    sum.st[i].lost_pending != e->lost_pending)
				fail_msg("%s: expected %llu lost summaries and %llu lost pending, "
					 "got %llu and %llu", what,
					 (unsigned long long)e->lost_summaries,
					 (unsigned long long)e->lost_pending,
					 (unsigned long long)sum.st[i].lost_summaries,
					 (unsigned long long)sum.st[i].lost_pending);
			assert_int_equal(sum.st[i].corrupt + ref.st[i].corrupt, 0);
			assert_int_equal(ref.st[i].summarized + ref.st[i].lost_summaries +
						 ref.st[i].lost_pending, 0);
		}
		if (nw == 1)
			total = handled;
		else if (handled != total)
			fail_msg("%s: %u workers handled %zu accesses, 1 worker %zu", name, nw,
				 handled, total);
		if (nw == 1)
			one = sum;
		else
			result_free(&sum);
		result_free(&ref);
	}
	result_free(&one);
}

/* The summary scenario through 1, 2 and 3 workers of m. */
static void check_module(const struct mn_module *m, bool loop)
{
	const struct expect e = { .min_accesses = 100 };
	struct script s;
	struct mn_wire wire;

	scenario(&s, loop);
	wire_make(&wire, loop);
	check_script(&s, &wire, m, &e, "summaries");
	script_free(&s);
}

static void test_expansion_by_address(void **state)
{
	(void)state;
	check_module(&by_addr, true);
	check_module(&by_addr, false);
}

static void mixed_scenario(struct script *s, bool loop);

/* The lookahead that prefetches shadow metadata changes no call, in any stream. */
static void test_prefetched(void **state)
{
	const struct expect e = { .min_accesses = 100 };
	struct mn_wire wire;
	struct script s;

	(void)state;
	assert_int_equal(mn_shadow_create(&the_shadow, 8, 16), 0);
	check_module(&by_addr_prefetched, true);
	check_module(&by_addr_prefetched, false);
	for (int loop = 1; loop >= 0; loop--) {
		mixed_scenario(&s, loop);
		wire_make(&wire, loop);
		check_script(&s, &wire, &by_addr_prefetched, &e, "mixed loops, prefetched");
		script_free(&s);
	}
	mn_shadow_destroy(the_shadow);
	the_shadow = NULL;
}

/*
 * The lookahead meets what the decoder meets, first: unwritten (zero) words, then a record that
 * runs past the end of the buffer.  It stays inside the buffer (AddressSanitizer watches the
 * words, allocated to the exact length), and the calls and counts are those without it.
 */
static void test_prefetched_ragged(void **state)
{
	struct mn_wire wire;
	struct buf b = { 0 };
	struct result with, without;

	(void)state;
	assert_int_equal(mn_shadow_create(&the_shadow, 8, 16), 0);
	wire_make(&wire, true);
	for (unsigned i = 0; i < 40; i++) {
		put_access(&b, i & 1, 7, UINT64_C(0x7f0000001000) + 8 * i, i, 8);
		if (i % 9 == 0)
			put(&b, 2, 0, 0, 0);   /* two words never written */
	}
	put(&b, 1, MN_EV_LOAD | (uint64_t)3 << 8, 0, 0);   /* three words long, one here */
	for (size_t cut = 1; cut <= b.n; cut += 7) {
		uint64_t *exact = malloc(cut * sizeof(*exact));

		assert_non_null(exact);
		memcpy(exact, b.w, cut * sizeof(*exact));
		run(&with, &by_addr_prefetched, 1, &wire, exact, cut, NULL, 0, 0);
		run(&without, &by_addr, 1, &wire, exact, cut, NULL, 0, 0);
		logs_equal(&with.log[0], &without.log[0], "a ragged buffer, prefetched");
		assert_int_equal(with.st[0].events, without.st[0].events);
		assert_int_equal(with.st[0].corrupt, without.st[0].corrupt);
		result_free(&with);
		result_free(&without);
		free(exact);
	}
	free(b.w);
	mn_shadow_destroy(the_shadow);
	the_shadow = NULL;
}

static void test_expansion_by_site(void **state)
{
	(void)state;
	check_module(&by_site, true);
	check_module(&by_site, false);
}

/* A summary with fewer pending entries than it closes: lost, not expanded, stack emptied. */
static void test_lost_summary(void **state)
{
	struct script s, t;
	struct mn_wire wire;
	struct result r;

	(void)state;
	wire_make(&wire, true);
	memset(&s, 0, sizeof(s));
	s.loop = true;
	s_push(&s, false, 1, 0x1000, 8, 8);
	/* The close of a summary whose first record was lost: it says 2, one is pending. */
	put(&s.sum, 2, MN_EV_LOOP_SUMMARY | (uint64_t)10 << 8, 2 | (uint64_t)5 << 16, 0);
	s.npend = 0;
	/* Then a whole summary, which must expand as usual. */
	s_push(&s, true, 2, 0x2000, 4, 4);
	s_close(&s, 11, 1, 2);
	/* And two accesses nobody closes. */
	s_push(&s, false, 3, 0x3000, 8, 8);
	s_push(&s, false, 4, 0x4000, 8, 8);

	memset(&t, 0, sizeof(t));
	t.loop = true;
	s_push(&t, true, 2, 0x2000, 4, 4);
	s_close(&t, 11, 1, 2);

	run(&r, &by_addr, 1, &wire, s.sum.w, s.sum.n, NULL, 0, 0);
	assert_int_equal(r.st[0].lost_summaries, 1);
	assert_int_equal(r.st[0].lost_pending, 2);
	assert_int_equal(r.st[0].summarized, 2);
	{
		struct result want;

		run(&want, &by_addr, 1, &wire, t.ref.w, t.ref.n, NULL, 0, 0);
		logs_equal(&r.log[0], &want.log[0], "after a lost summary");
		result_free(&want);
	}
	result_free(&r);
	script_free(&s);
	script_free(&t);
}

/*
 * Entries that cannot be stored (the stack's bound, as when realloc fails): the summaries they
 * belong to are lost, later pushes stay above them, and the stack is right again once they are
 * popped.
 */
static void test_unstored(void **state)
{
	struct script s, t;
	struct mn_wire wire;
	struct result r, want;

	(void)state;
	wire_make(&wire, true);
	memset(&s, 0, sizeof(s));
	s.loop = true;
	s_push(&s, false, 1, 0x1000, 8, 8);     /* stored */
	s_push(&s, true, 2, 0x2000, 8, 8);      /* stored: the bound is 2 */
	s_push(&s, false, 3, 0x3000, 8, 8);     /* unstored */
	s_push(&s, false, 4, 0x4000, 8, 8);     /* unstored */
	put(&s.sum, 2, MN_EV_LOOP_SUMMARY | (uint64_t)30 << 8, 1 | (uint64_t)3 << 16, 0);
	put(&s.sum, 2, MN_EV_LOOP_SUMMARY | (uint64_t)31 << 8, 1 | (uint64_t)3 << 16, 0);
	s.npend = 2;
	s_close(&s, 20, 2, 3);                  /* the two stored ones: expanded */
	/* A summary of 3 with the bound at 2: its third entry is unstored, so it is lost whole. */
	s_push(&s, false, 5, 0x5000, 8, 8);
	s_push(&s, false, 6, 0x6000, 8, 8);
	s_push(&s, false, 7, 0x7000, 8, 8);
	put(&s.sum, 2, MN_EV_LOOP_SUMMARY | (uint64_t)32 << 8, 3 | (uint64_t)3 << 16, 0);
	s.npend = 0;

	memset(&t, 0, sizeof(t));
	t.loop = true;
	s_push(&t, false, 1, 0x1000, 8, 8);
	s_push(&t, true, 2, 0x2000, 8, 8);
	s_close(&t, 20, 2, 3);

	run(&r, &by_addr, 1, &wire, s.sum.w, s.sum.n, NULL, 0, 2);
	run(&want, &by_addr, 1, &wire, t.ref.w, t.ref.n, NULL, 0, 0);
	logs_equal(&r.log[0], &want.log[0], "with unstored entries");
	assert_int_equal(r.st[0].lost_summaries, 3);
	assert_int_equal(r.st[0].lost_pending, 0);
	assert_int_equal(r.st[0].summarized, 6);
	result_free(&r);
	result_free(&want);
	script_free(&s);
	script_free(&t);
}

/* A module with a loop_summary handler gets the summary (one worker) or the expansion (more). */
static void test_handler(void **state)
{
	struct mn_module m = RECORDER(MN_SHARD_ADDRESS, 3);
	struct script s;
	struct mn_wire wire;
	struct result r, ref;
	size_t handled = 0;

	(void)state;
	m.loop_summary = rec_summary;
	wire_make(&wire, true);
	memset(&s, 0, sizeof(s));
	s.loop = true;
	s_push(&s, false, 1, 0x1000, 8, 8);
	s_push(&s, true, 2, 0x2000, -4, 4);
	s_close(&s, 10, 2, 50);

	run(&r, &m, 1, &wire, s.sum.w, s.sum.n, NULL, 0, 0);
	assert_int_equal(r.log[0].n, 1);
	assert_int_equal(r.log[0].c[0].what, L_SUMMARY);
	assert_int_equal(r.log[0].c[0].site, 10);
	assert_int_equal(r.log[0].c[0].addr, 50);       /* iterations */
	assert_int_equal(r.log[0].c[0].size, 2);        /* n */
	assert_int_equal(r.log[0].nacc, 2);
	assert_int_equal(r.log[0].acc[0].site, 1);
	assert_int_equal(r.log[0].acc[0].start, 0x1000);
	assert_int_equal(r.log[0].acc[0].step, 8);
	assert_int_equal(r.log[0].acc[0].size, 8);
	assert_false(r.log[0].acc[0].store);
	assert_int_equal(r.log[0].acc[1].site, 2);
	assert_int_equal(r.log[0].acc[1].start, 0x2000);
	assert_int_equal(r.log[0].acc[1].step, -4);
	assert_int_equal(r.log[0].acc[1].size, 4);
	assert_true(r.log[0].acc[1].store);
	assert_int_equal(r.st[0].summarized, 100);
	result_free(&r);

	run(&r, &m, 2, &wire, s.sum.w, s.sum.n, NULL, 0, 0);
	run(&ref, &m, 2, &wire, s.ref.w, s.ref.n, NULL, 0, 0);
	for (unsigned i = 0; i < 2; i++) {
		logs_equal(&r.log[i], &ref.log[i], "a handler with 2 workers");
		handled += count_accesses(&r.log[i]);
	}
	assert_int_equal(handled, 100);
	result_free(&r);
	result_free(&ref);
	script_free(&s);
}

/* ---- Mixed loops ----------------------------------------------------------------------------- */

/* A fixed pseudo-random sequence (xorshift64), so that failures repeat. */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Mixed loops of every shape, plain records and summaries around them, nested as signal handlers
 * nest them, with cut points inside open loops.
 */
static void mixed_scenario(struct script *s, bool loop)
{
	uint64_t x = 88172645463325252u;

	memset(s, 0, sizeof(*s));
	s->loop = loop;
	s_ctx(s, MN_EV_FUNC_ENTRY, 100);
	s_access(s, false, 50, 0x7000, 42, 8);

	/* A histogram: v = data[i] summarized (rank 0); bins[v]++ a load and a store at rank 1. */
	s_push(s, false, 1, 0x10000, 4, 4);
	m_open(s, 10, 1);
	for (uint64_t i = 0; i < 300; i++) {
		uint64_t bin = 0x20000 + 8 * (rnd(&x) % 37);

		m_access(s, false, 2, bin, 8, i, 1);
		m_access(s, true, 3, bin, 8, i, 1);
		if (i == 150)
			s_mark(s);
	}
	m_close(s, 300);

	/* A conditional access: some iterations only (loop_summary_at between them), between two
	 * summarized accesses, none in the last iterations (the close expands them). */
	s_push(s, false, 4, 0x30000, 8, 8);
	s_push(s, true, 5, 0x40000, -8, 8);
	m_open(s, 11, 2);
	for (uint64_t i = 0; i < 97; i++)
		if (i < 2 || (i >= 5 && i <= 7) || i == 20 || rnd(&x) % 4 == 0)
			m_access(s, false, 6, 0x50000 + 16 * i, 4, i, 1);
	m_close(s, 100);

	/* Ranks 0 and n (before and after both summarized accesses) and 1; the first mixed record
	 * in iteration 3 (so after a loop_summary_at). */
	s_push(s, false, 7, 0x60000, 12, 4);
	s_push(s, false, 8, 0x70000, 1, 1);
	m_open(s, 12, 2);
	for (uint64_t i = 3; i < 60; i += 1 + rnd(&x) % 3) {
		m_access(s, true, 9, 0x80000 + 4 * i, 4, i, 0);
		if (i % 2)
			m_access(s, false, 10, 0x80100 + 2 * i, 2, i, 1);
		m_access(s, false, 11, 0x80000 + 4 * i, 4, i, 2);
		m_access(s, true, 12, 0x90000 - 8 * i, 8, i, 2);
	}
	s_mark(s);
	m_close(s, 61);

	/* No mixed record at all; and no summarized access, only mixed ones. */
	s_push(s, false, 13, 0xa0000, 8, 8);
	m_open(s, 13, 1);
	m_close(s, 40);
	m_open(s, 14, 0);
	for (uint64_t i = 0; i < 50; i += 2)
		m_access(s, false, 15, 0xa8000 + 8 * i, 8, i, 0);
	m_close(s, 51);

	/* A signal handler inside an open mixed loop: its summarized loop, then its own mixed
	 * loop; the outer loop goes on after a loop_summary_at (the handler's close resets
	 * mixed_last). */
	s_push(s, false, 16, 0xb0000, 8, 8);
	s_push(s, true, 17, 0xc0000, 8, 8);
	m_open(s, 20, 2);
	m_access(s, false, 18, 0xd0000, 8, 0, 1);
	m_access(s, false, 18, 0xd0008, 8, 1, 1);
	s_ctx(s, MN_EV_FUNC_ENTRY, 101);
	s_push(s, false, 19, 0xe0000, 4, 4);
	s_push(s, false, 20, 0xe1000, 4, 4);
	s_close(s, 30, 2, 10);
	s_ctx(s, MN_EV_FUNC_EXIT, 101);
	m_access(s, false, 18, 0xd0010, 8, 2, 1);   /* no at: the handler left mixed_last */
	s_ctx(s, MN_EV_FUNC_ENTRY, 102);
	s_push(s, true, 21, 0xf0000, 4, 4);
	s_mark(s);
	m_open(s, 31, 1);
	m_access(s, false, 22, 0xf1000, 4, 0, 0);
	m_access(s, false, 22, 0xf1004, 4, 3, 1);
	m_close(s, 5);
	s_ctx(s, MN_EV_FUNC_EXIT, 102);
	m_access(s, false, 18, 0xd0018, 8, 3, 1);   /* after loop_summary_at(3) */
	m_access(s, true, 23, 0xd0100, 8, 3, 2);
	m_access(s, false, 18, 0xd0020, 8, 4, 1);
	m_close(s, 10);

	/* A handler's mixed loop between another mixed loop's pushes and its open, and between a
	 * summarized loop's pushes and its loop_summary. */
	s_push(s, false, 24, 0x100000, 8, 8);
	s_push(s, false, 25, 0x110000, 8, 8);
	m_open(s, 32, 1);
	m_access(s, true, 26, 0x120000, 8, 1, 1);
	m_close(s, 2);
	m_open(s, 33, 1);
	m_access(s, true, 27, 0x130000, 8, 0, 0);
	m_close(s, 3);
	s_push(s, false, 28, 0x140000, 4, 4);
	s_push(s, true, 29, 0x150000, 4, 4);
	s_push(s, false, 30, 0x160000, 4, 4);
	m_open(s, 34, 1);
	m_access(s, true, 31, 0x170000, 8, 0, 1);
	m_close(s, 4);
	s_close(s, 35, 2, 6);
	s_ctx(s, MN_EV_FUNC_EXIT, 100);
	assert_int_equal(s->npend, 0);
	assert_int_equal(s->nframes, 0);
}

static void test_mixed_by_address(void **state)
{
	const struct expect e = { .min_accesses = 100 };
	struct mn_wire wire;
	struct script s;

	(void)state;
	for (int loop = 1; loop >= 0; loop--) {
		mixed_scenario(&s, loop);
		wire_make(&wire, loop);
		check_script(&s, &wire, &by_addr, &e, "mixed loops");
		script_free(&s);
	}
}

static void test_mixed_by_site(void **state)
{
	const struct expect e = { .min_accesses = 100 };
	struct mn_wire wire;
	struct script s;

	(void)state;
	for (int loop = 1; loop >= 0; loop--) {
		mixed_scenario(&s, loop);
		wire_make(&wire, loop);
		check_script(&s, &wire, &by_site, &e, "mixed loops");
		script_free(&s);
	}
}

/* Loads and stores without their size on the wire: the driver's accesses have size 0, as
 * decoded records have. */
static void test_mixed_unsized(void **state)
{
	const struct expect e = { .min_accesses = 100 };
	struct mn_wire wire;
	struct script s;

	(void)state;
	mixed_scenario(&s, true);
	wire_make(&wire, true);
	wire.arg[MN_EV_LOAD][3].bits = 0;
	wire.arg[MN_EV_STORE][3].bits = 0;
	check_script(&s, &wire, &by_addr, &e, "mixed loops, no sizes");
	script_free(&s);
}

/*
 * A mixed loop whose pending entries are not all there: lost, its mixed accesses plain ones, no
 * loop event, the stack emptied down to the enclosing open loop's accesses; a mixed record with no
 * loop open: a plain access, counted lost too.  The loops around it are whole.
 */
static void test_mixed_lost(void **state)
{
	const struct expect e = { .lost_summaries = 3 };
	struct mn_wire wire;
	struct script s;

	(void)state;
	for (int loop = 1; loop >= 0; loop--) {
		memset(&s, 0, sizeof(s));
		s.loop = loop;
		/* No loop open. */
		put_mixed(&s.sum, false, 1, 0x1000, 8, 3);
		put_access(&s.ref, false, 1, 0x1000, 0, 8);
		/* One entry pending, the open says 3. */
		s_push(&s, false, 2, 0x2000, 8, 8);
		m_open_lost(&s, 10, 3);
		m_access(&s, false, 3, 0x3000, 8, 0, 2);
		m_access(&s, true, 3, 0x3000, 8, 4, 2);
		m_close(&s, 6);
		/* An open loop, a handler's lost one inside it: the outer loop's accesses stay. */
		s_push(&s, false, 4, 0x4000, 8, 8);
		m_open(&s, 11, 1);
		m_access(&s, false, 5, 0x5000, 8, 1, 0);
		s_push(&s, true, 6, 0x6000, 8, 8);
		m_open_lost(&s, 12, 2);
		m_access(&s, false, 7, 0x7000, 8, 0, 1);
		m_close(&s, 1);
		m_access(&s, false, 5, 0x5008, 8, 2, 1);
		m_close(&s, 3);
		/* The next loop is whole. */
		s_push(&s, false, 8, 0x8000, 8, 8);
		m_open(&s, 13, 1);
		m_access(&s, true, 9, 0x9000, 8, 0, 1);
		m_close(&s, 2);
		assert_int_equal(s.npend, 0);
		wire_make(&wire, loop);
		check_script(&s, &wire, &by_addr, &e, "a lost mixed loop");
		check_script(&s, &wire, &by_site, &e, "a lost mixed loop");
		script_free(&s);
	}
}

/*
 * The frame stack full (frames_max 1): a handler's mixed loop inside an open one is lost, and so
 * is one nested in it; their entries are dropped, their accesses plain, the outer loop whole.
 */
static void test_mixed_frames_full(void **state)
{
	const struct expect e = { .lost_summaries = 2, .frames_max = 1 };
	struct mn_wire wire;
	struct script s;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.loop = true;
	s_push(&s, false, 1, 0x1000, 8, 8);
	m_open(&s, 10, 1);
	m_access(&s, false, 2, 0x2000, 4, 0, 1);
	s_push(&s, false, 3, 0x3000, 8, 8);
	s_push(&s, true, 4, 0x4000, 8, 8);
	m_open_lost(&s, 11, 2);
	m_access(&s, false, 5, 0x5000, 4, 0, 0);
	m_open_lost(&s, 12, 0);
	m_access(&s, true, 6, 0x6000, 4, 0, 0);
	m_close(&s, 1);
	/* A summarized loop inside the lost one: whole. */
	s_push(&s, false, 7, 0x7000, 8, 8);
	s_close(&s, 20, 1, 3);
	m_close(&s, 2);
	m_access(&s, false, 2, 0x2004, 4, 1, 1);
	m_close(&s, 2);
	/* And a second loop, once the stack has room again. */
	s_push(&s, false, 8, 0x8000, 8, 8);
	m_open(&s, 13, 1);
	m_access(&s, true, 9, 0x9000, 8, 1, 0);
	m_close(&s, 2);
	wire_make(&wire, true);
	check_script(&s, &wire, &by_addr, &e, "frames full");
	script_free(&s);
}

/*
 * Closes out of turn: a loop closed while one opened inside it is still open (a handler that
 * jumped out of its loop) pops both, the inner one lost with its entries; a close that matches no
 * open loop is lost and changes nothing.
 */
static void test_mixed_out_of_turn(void **state)
{
	const struct expect e = { .lost_summaries = 2, .lost_pending = 2 };
	struct mn_wire wire;
	struct script s;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.loop = true;
	s_push(&s, false, 1, 0x1000, 8, 8);
	m_open(&s, 10, 1);
	m_access(&s, false, 2, 0x2000, 4, 1, 1);
	s_push(&s, false, 3, 0x3000, 8, 8);
	s_push(&s, false, 4, 0x4000, 8, 8);
	m_open(&s, 11, 2);
	m_access(&s, true, 5, 0x5000, 4, 2, 1);
	m_abandon(&s);
	m_close(&s, 4);
	put_close(&s.sum, 99, 7);
	s_push(&s, false, 6, 0x6000, 8, 8);
	m_open(&s, 12, 1);
	m_access(&s, true, 7, 0x7000, 8, 0, 1);
	m_close(&s, 2);
	wire_make(&wire, true);
	check_script(&s, &wire, &by_addr, &e, "closes out of turn");
	check_script(&s, &wire, &by_site, &e, "closes out of turn");
	script_free(&s);
}

/* Mixed loops left open at the end: their summarized accesses are counted lost pending, what
 * came before their last mixed record was sent. */
static void test_mixed_left_open(void **state)
{
	const struct expect e = { .lost_pending = 3 };
	struct mn_wire wire;
	struct script s;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.loop = true;
	s_push(&s, false, 1, 0x1000, 8, 8);
	s_push(&s, true, 2, 0x2000, 8, 8);
	m_open(&s, 10, 2);
	m_access(&s, false, 3, 0x3000, 4, 2, 1);
	s_push(&s, false, 4, 0x4000, 8, 8);
	m_open(&s, 11, 1);
	m_access(&s, false, 5, 0x5000, 4, 0, 1);
	m_open(&s, 12, 0);
	wire_make(&wire, true);
	check_script(&s, &wire, &by_addr, &e, "left open");
	script_free(&s);
}

/* A module with a loop_summary handler still gets a mixed loop expanded, with one worker too. */
static void test_mixed_handler(void **state)
{
	struct mn_module m = RECORDER(MN_SHARD_ADDRESS, 3);
	const struct expect e = { 0 };
	struct mn_wire wire;
	struct script s;

	(void)state;
	m.loop_summary = rec_summary;
	memset(&s, 0, sizeof(s));
	s.loop = true;
	s_push(&s, false, 1, 0x1000, 8, 8);
	s_push(&s, true, 2, 0x2000, -8, 8);
	m_open(&s, 10, 2);
	for (uint64_t i = 0; i < 20; i += 3)
		m_access(&s, false, 3, 0x3000 + i, 1, i, 1);
	m_close(&s, 21);
	wire_make(&wire, true);
	check_script(&s, &wire, &m, &e, "a loop_summary handler");
	script_free(&s);
}

/* ---- Lanes: one decode for several modules -------------------------------------------------- */

/* A summary-taking recorder that takes mixed loops whole too. */
static bool rec_mixed_whole(const void *st)
{
	(void)st;
	return true;
}

static const struct mn_module whole = {
	.name = "whole", .state_size = sizeof(struct log), .shard = MN_SHARD_NONE,
	.load = rec_load, .store = rec_store, .loop_invoke = rec_invoke, .loop_iter = rec_iter,
	.loop_exit = rec_exit, .func_entry = rec_fentry, .func_exit = rec_fexit,
	.loop_summary = rec_summary, .mixed_whole = rec_mixed_whole,
};

static const struct mn_module pointers = {
	.name = "pointers", .state_size = sizeof(struct log), .shard = MN_SHARD_NONE,
	.pointer_only = true, .load = rec_load, .store = rec_store, .loop_invoke = rec_invoke,
	.loop_iter = rec_iter, .loop_exit = rec_exit, .func_entry = rec_fentry,
	.func_exit = rec_fexit,
};

/* One member of a lane: worker id of nw of module m. */
struct member {
	const struct mn_module *m;
	unsigned id, nw;
};

/*
 * The words through one lane of n members, cut at cuts[0..ncuts), then each one's stream ended:
 * logs[k] and st[k] are member k's.
 */
static void run_lane(struct log *logs, struct mn_decode_stats *st, const struct member *mb,
		     unsigned n, const struct mn_wire *wire, const uint64_t *words, size_t nwords,
		     const size_t *cuts, unsigned ncuts)
{
	struct mn_worker w[8], *ws[8];
	struct mn_decode_stats *sts[8];
	size_t from = 0;

	memset(logs, 0, n * sizeof(*logs));
	memset(st, 0, n * sizeof(*st));
	for (unsigned k = 0; k < n; k++) {
		w[k] = (struct mn_worker){ .mod = mb[k].m, .state = &logs[k], .id = mb[k].id,
					   .nworkers = mb[k].nw };
		ws[k] = &w[k];
		sts[k] = &st[k];
	}
	for (unsigned c = 0; c <= ncuts; c++) {
		size_t to = c < ncuts ? cuts[c] : nwords;

		mn_lane_run(ws, n, wire, words + from, to - from, sts);
		from = to;
	}
	for (unsigned k = 0; k < n; k++)
		mn_worker_finish(&w[k], &st[k]);
}

/* Each member of a lane gets the calls and counts it gets decoding the stream alone. */
static void check_lane(const struct member *mb, unsigned n, const struct mn_wire *wire,
		       const struct buf *b, const size_t *cuts, unsigned ncuts, const char *name)
{
	struct log logs[8];
	struct mn_decode_stats st[8];
	char what[160];

	run_lane(logs, st, mb, n, wire, b->w, b->n, cuts, ncuts);
	for (unsigned k = 0; k < n; k++) {
		struct log alone = { 0 };
		struct mn_decode_stats ast = { 0 };
		struct mn_worker w = { .mod = mb[k].m, .state = &alone, .id = mb[k].id,
				       .nworkers = mb[k].nw };
		size_t from = 0;

		for (unsigned c = 0; c <= ncuts; c++) {
			size_t to = c < ncuts ? cuts[c] : b->n;

			mn_worker_run(&w, wire, b->w + from, to - from, &ast);
			from = to;
		}
		mn_worker_finish(&w, &ast);
		snprintf(what, sizeof(what), "%s: lane member %u (%s, worker %u of %u)", name, k,
			 mb[k].m->name, mb[k].id, mb[k].nw);
		logs_equal(&logs[k], &alone, what);
		assert_int_equal(logs[k].nacc, alone.nacc);
		for (unsigned j = 0; j < alone.nacc; j++) {   /* field by field: padding differs */
			const struct mn_summary_access *a = &logs[k].acc[j], *b2 = &alone.acc[j];

			assert_true(a->start == b2->start && a->step == b2->step &&
				    a->site == b2->site && a->size == b2->size &&
				    a->store == b2->store);
		}
		assert_int_equal(logs[k].iterations, alone.iterations);
		assert_memory_equal(&st[k], &ast, sizeof(ast));
		free(alone.c);
		free(logs[k].c);
	}
}

/* Modules of every kind in one lane, sharded or not, with a shadow or not, taking summaries
 * whole or not: each sees what it sees alone, over summaries and mixed loops cut anywhere. */
static void test_lane(void **state)
{
	const struct member mb[] = {
		{ &by_addr, 0, 2 }, { &by_site, 1, 2 }, { &whole, 0, 1 },
		{ &by_addr_prefetched, 0, 1 }, { &by_addr, 1, 3 },
	};
	struct mn_wire wire;
	struct script s;

	(void)state;
	assert_int_equal(mn_shadow_create(&the_shadow, 8, 16), 0);
	for (int loop = 1; loop >= 0; loop--) {
		wire_make(&wire, loop);
		scenario(&s, loop);
		check_lane(mb, 5, &wire, &s.sum, s.split, s.nsplit, "summaries");
		check_lane(mb, 5, &wire, &s.ref, NULL, 0, "per access");
		script_free(&s);
		mixed_scenario(&s, loop);
		check_lane(mb, 5, &wire, &s.sum, s.split, s.nsplit, "mixed loops");
		script_free(&s);
	}
	mn_shadow_destroy(the_shadow);
	the_shadow = NULL;
}

/*
 * The pointer flag (queue.h): a pointer's load or store (code | 0x80) reaches every module; a
 * plain one, and the accesses of summaries and mixed loops, only the modules that take every
 * access.  Without the flag, a pointer_only module hears every access, and 0x81 is corrupt.
 */
static void test_pointer_flag(void **state)
{
	const struct member mb[] = { { &pointers, 0, 1 }, { &by_addr, 0, 1 } };
	struct mn_wire wire;
	struct script s;
	struct log logs[2];
	struct mn_decode_stats st[2];
	uint64_t *w;

	(void)state;
	wire_make(&wire, true);
	wire.flags = MN_WIRE_POINTER;
	scenario(&s, true);
	/* Every third plain record of the stream made a pointer's. */
	w = s.ref.w;
	for (size_t i = 0, nrec = 0; i < s.ref.n; nrec++) {
		unsigned code = (unsigned)(w[i] & 0xff);

		if ((code == MN_EV_LOAD || code == MN_EV_STORE) && nrec % 3 == 0)
			w[i] |= MN_CODE_POINTER;
		i += wire.nwords[code];
	}
	check_lane(mb, 2, &wire, &s.ref, NULL, 0, "pointer flag");
	run_lane(logs, st, mb, 2, &wire, s.ref.w, s.ref.n, NULL, 0);
	assert_int_equal(st[0].corrupt + st[1].corrupt, 0);
	{
		size_t ptr = 0, plain = 0, heard = count_accesses(&logs[0]);

		for (size_t i = 0; i < s.ref.n; i += wire.nwords[w[i] & 0x7f]) {
			unsigned code = (unsigned)(w[i] & 0xff);

			ptr += code == (MN_EV_LOAD | MN_CODE_POINTER) ||
			       code == (MN_EV_STORE | MN_CODE_POINTER);
			plain += code == MN_EV_LOAD || code == MN_EV_STORE;
		}
		assert_true(ptr > 10 && plain > 10);
		assert_int_equal(heard, ptr);
		assert_int_equal(count_accesses(&logs[1]), ptr + plain);
	}
	free(logs[0].c);
	free(logs[1].c);

	/* The summary stream: its expansions are never a pointer's. */
	check_lane(mb, 2, &wire, &s.sum, s.split, s.nsplit, "pointer flag, summaries");
	run_lane(logs, st, mb, 2, &wire, s.sum.w, s.sum.n, s.split, s.nsplit);
	assert_int_equal(count_accesses(&logs[0]), 0);
	assert_true(count_accesses(&logs[1]) > 100);
	free(logs[0].c);
	free(logs[1].c);

	/* No flag: the pointer_only module hears every access; a pointer's code is corrupt. */
	wire.flags = 0;
	run_lane(logs, st, mb, 2, &wire, s.sum.w, s.sum.n, s.split, s.nsplit);
	assert_int_equal(count_accesses(&logs[0]), count_accesses(&logs[1]));
	free(logs[0].c);
	free(logs[1].c);
	run_lane(logs, st, mb, 2, &wire, s.ref.w, s.ref.n, NULL, 0);
	assert_int_equal(st[0].corrupt, 1);
	assert_int_equal(st[1].corrupt, 1);
	free(logs[0].c);
	free(logs[1].c);
	script_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expansion_by_address),
		cmocka_unit_test(test_expansion_by_site),
		cmocka_unit_test(test_prefetched),
		cmocka_unit_test(test_prefetched_ragged),
		cmocka_unit_test(test_lost_summary),
		cmocka_unit_test(test_unstored),
		cmocka_unit_test(test_handler),
		cmocka_unit_test(test_mixed_by_address),
		cmocka_unit_test(test_mixed_by_site),
		cmocka_unit_test(test_mixed_unsized),
		cmocka_unit_test(test_mixed_lost),
		cmocka_unit_test(test_mixed_frames_full),
		cmocka_unit_test(test_mixed_out_of_turn),
		cmocka_unit_test(test_mixed_left_open),
		cmocka_unit_test(test_mixed_handler),
		cmocka_unit_test(test_lane),
		cmocka_unit_test(test_pointer_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
