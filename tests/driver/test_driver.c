/*
 * The driver's loop summaries (backend/driver.c): the fast path's slow twin.  A stream written
 * with loop_summary_load/store and loop_summary records must reach a module exactly as the same
 * stream written record per access: every handler call, in the same order, with the same
 * arguments, for 1 worker and for 2 and 3 workers sharded by address and by site.
 *
 * Each scenario is written twice by the same script: `sum` gets the summary records, `ref` gets,
 * in place of each loop_summary record, its expansion computed here the plain way (address
 * (start + k * step) & (2^48 - 1), a multiply per access, accesses in push order, loop events only
 * when the wire sends them).  A recording module logs every call; the logs of the two streams
 * must be identical, worker by worker.  Also: summaries that cannot be whole are counted lost and
 * not expanded, entries left pending at the end are counted, the stack survives buffer
 * boundaries, and a module's loop_summary handler gets the summary instead of the expansion.
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
	size_t split[4];             /* word offsets in sum where a test may cut its buffers */
	unsigned nsplit;
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
	assert_true(s->nsplit < 4);
	s->split[s->nsplit++] = s->sum.n;
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
 * starts), then ends the stream.
 */
static void run(struct result *r, const struct mn_module *m, unsigned nw,
		const struct mn_wire *wire, const uint64_t *words, size_t n, const size_t *cuts,
		unsigned ncuts, size_t pending_max)
{
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < nw; i++) {
		struct mn_worker w = { .mod = m, .state = &r->log[i], .id = i, .nworkers = nw,
				       .pending_max = pending_max };
		size_t from = 0;

		for (unsigned c = 0; c <= ncuts; c++) {
			size_t to = c < ncuts ? cuts[c] : n;

			mn_worker_run(&w, wire, words + from, to - from, &r->st[i]);
			from = to;
		}
		mn_worker_finish(&w, &r->st[i]);
		assert_null(w.pending);
	}
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

/*
 * The scenario through 1, 2 and 3 workers of m, summaries against their expansion: logs identical
 * per worker, each access handled by exactly one worker, stats as written.
 */
static void check_module(const struct mn_module *m, bool loop)
{
	struct script s;
	struct mn_wire wire;
	size_t total = 0;
	char what[96];

	scenario(&s, loop);
	wire_make(&wire, loop);
	for (unsigned nw = 1; nw <= 3; nw++) {
		struct result sum, ref;
		size_t handled = 0;

		run(&sum, m, nw, &wire, s.sum.w, s.sum.n, s.split, s.nsplit, 0);
		run(&ref, m, nw, &wire, s.ref.w, s.ref.n, NULL, 0, 0);
		for (unsigned i = 0; i < nw; i++) {
			snprintf(what, sizeof(what), "shard %s, loop events %s, worker %u of %u",
				 m->shard == MN_SHARD_SITE ? "site" : "address",
				 loop ? "sent" : "not sent", i, nw);
			logs_equal(&sum.log[i], &ref.log[i], what);
			handled += count_accesses(&sum.log[i]);
			if (nw > 1 && count_accesses(&sum.log[i]) < 100)
				fail_msg("%s: only %zu accesses: the sharding is not exercised",
					 what, count_accesses(&sum.log[i]));

			if (sum.st[i].events != s.sum.records || ref.st[i].events != s.ref.records)
				fail_msg("%s: expected %llu and %llu events, got %llu and %llu",
					 what, (unsigned long long)s.sum.records,
					 (unsigned long long)s.ref.records,
					 (unsigned long long)sum.st[i].events,
					 (unsigned long long)ref.st[i].events);
			if (sum.st[i].summarized != s.summarized)
				fail_msg("%s: expected %llu summarized accesses, got %llu", what,
					 (unsigned long long)s.summarized,
					 (unsigned long long)sum.st[i].summarized);
			assert_int_equal(sum.st[i].corrupt + ref.st[i].corrupt, 0);
			assert_int_equal(sum.st[i].lost_summaries + sum.st[i].lost_pending, 0);
			assert_int_equal(ref.st[i].summarized, 0);
		}
		if (nw == 1)
			total = handled;
		else if (handled != total)
			fail_msg("%u workers handled %zu accesses, 1 worker %zu", nw, handled, total);
		result_free(&sum);
		result_free(&ref);
	}
	script_free(&s);
}

static void test_expansion_by_address(void **state)
{
	(void)state;
	check_module(&by_addr, true);
	check_module(&by_addr, false);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expansion_by_address),
		cmocka_unit_test(test_expansion_by_site),
		cmocka_unit_test(test_lost_summary),
		cmocka_unit_test(test_unstored),
		cmocka_unit_test(test_handler),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
