/*
 * dependence: the memory dependences of every loop (PROMPT 2.1, 6.2): for each loop, each
 * (source access, destination access, kind) that manifested, whether the loop carried it and at
 * which distances in iterations, and how often.  This file is README.md's rules on backend parts:
 * each word's last store and load since (lastaccess.h), the loop frames around an access and the
 * clock that says which held its source (loopnest.h), and rows per loop frame (nestrows.h).
 */
#include "dep.h"

/* README's rules 4, 5 and 8: the rows.  The row key of an instance from access src to dst in
 * frame l (NULL: loop 0), with the function each access went through from the loop (rule 5). */
static void row_key(void *st, uint64_t *key, uint32_t src, uint32_t dst, const struct mn_loop *l,
		    unsigned kind, bool carried)
{
	struct dep *d = st;
	const struct mn_access *s = access_of(d, src), *t = access_of(d, dst);
	struct dep_key k = { .loop = l ? l->site : 0, .src = s->site, .dst = t->site,
			     .kind = (uint8_t)kind, .carried = carried };

	if (d->context) {
		k.src_ctx = s->ctx;
		k.dst_ctx = t->ctx;
	}
	if (l) {
		k.src_via = mn_loopnest_via(&d->nest, s->ctx, l->fid);
		k.dst_via = mn_loopnest_via(&d->nest, t->ctx, l->fid);
	}
	memcpy(key, &k, sizeof(k));
}

/*
 * One dependence instance from access src at clock sclock to access dst, now: README's rule 4,
 * a row in every loop frame whose invocation holds both accesses (its clock says the source ran
 * in it), carried by the innermost if the source ran in an earlier iteration; loop 0 when none
 * does.  In target mode (rule 8) only the target loops' frames, and no loop 0.
 */
static inline void report(struct dep *d, uint32_t src, uint32_t sclock, uint32_t dst,
			  enum dep_kind kind, bool one_word)
{
	unsigned i = mn_loopnest_holding(&d->nest, sclock);

	if (!d->target_mode) {
		mn_nestrows_add(&d->rows, src, dst, kind, i, sclock, one_word);
		return;
	}
	for (unsigned j = 0; j < i; j++)
		if (d->nest.loops[j].target)
			mn_nestrows_frame(&d->rows, src | (uint64_t)dst << 32,
					  mn_nestrows_hash(src, dst, kind), &d->nest.loops[j],
					  sclock, kind);
}

/* Rules 1, 3, 6: the accesses.  Rule 3 on word w of access aid: a load depends on the word's
 * last store (raw), a store on it (waw) and on the loads since (war); then aid is the word's
 * last.  Also mn_lastaccess_span()'s, for an access that spans pages. */
static inline __attribute__((always_inline)) void
word_access(void *st, struct mn_lastaccess_word *w, uint64_t a, uint32_t aid, bool store, bool one)
{
	struct dep *d = st;

	if (w->writer)
		report(d, w->writer, w->wclock, aid, store ? DEP_WAW : DEP_RAW, one);
	if (store && w->reader)
		report(d, w->reader, w->rclock, aid, DEP_WAR, one);
	if (store)
		*w = (struct mn_lastaccess_word){ .writer = aid, .wclock = d->nest.clock };
	else
		*w = (struct mn_lastaccess_word){ w->writer, w->wclock, aid, d->nest.clock };
}

/* The cross-thread row of an instance from access src to dst in the destination's innermost loop
 * (0: none), through the cache of recent rows; NULL without memory. */
static struct mn_row *cross_row(struct dep *d, uint32_t src, uint32_t dst, uint32_t loop,
				enum dep_kind kind)
{
	struct dep_xkey k = { .src = access_of(d, src)->site, .dst = access_of(d, dst)->site,
			      .loop = loop, .kind = (uint8_t)kind };
	uint64_t key[MN_ROWS_KEY_WORDS];
	uint32_t h = (uint32_t)(((src * 0x9e3779b1u) ^ (dst * 0x85ebca6bu) ^ (loop * 0xc2b2ae35u) ^
				 kind) * 0x27d4eb2fu) >> 23;
	struct dep_xcache *c = d->xcache ? &d->xcache[h & (DEP_XCACHE - 1)] : NULL;
	struct mn_row *e;

	if (c && c->row && c->gen == d->cross.gen && c->src == src && c->dst == dst &&
	    c->loop == loop && c->kind == kind)
		return c->row;
	memcpy(key, &k, sizeof(k));
	if ((e = mn_rows_get(&d->cross, key)) && c)
		*c = (struct dep_xcache){ src, dst, loop, (uint8_t)kind, d->cross.gen, e };
	return e;
}

/*
 * Threads (README, "Threads"): an instance whose source another thread made, from access src to
 * dst now, with the source's happens-before stamp: one count in its cross-thread row (once per
 * destination access, rule 6), and in `ordered` when the source happens before now, unless
 * another of the access's words found the row unordered.  The row's min holds the stamp of the
 * access that counted `ordered` last.
 */
static void cross(struct dep *d, uint32_t src, uint32_t dst, enum dep_kind kind, bool ordered)
{
	uint32_t loop = d->nest.n ? d->nest.loops[d->nest.n - 1].site : 0;
	struct mn_row *e;

	if (!(e = cross_row(d, src, dst, loop, kind))) {
		d->nomem++;
		return;
	}
	if (e->stamp != d->rows.stamp) {
		e->stamp = d->rows.stamp;
		e->count++;
		e->max += ordered;
		e->min = ordered ? d->rows.stamp : 0;
		if (d->rows.spanning && !mn_spans_add(&d->cross_spans, mn_row_key(e), d->rows.span))
			d->nomem++;
	} else if (!ordered && e->min == d->rows.stamp) {
		e->max--;
		e->min = 0;
	}
}

/* The run of a source at clock c from before the current run, as struct dep_xrun says it. */
static struct dep_xrun *source_run(struct dep *d, uint32_t src, uint32_t c)
{
	struct dep_xrun *x = &d->xrun[src >> DEP_TAG_SHIFT];
	const struct mn_lastaccess_run *r;

	if (x->gen == d->xgen && c - x->lo < x->span)
		return x;
	r = mn_lastaccess_run_of(&d->last, c, src >> DEP_TAG_SHIFT);
	x->gen = d->xgen;
	x->lo = r->clock;
	x->span = mn_lastaccess_run_span(&d->last, r);
	x->foreign = r->thread != d->last.thread;
	x->ordered = x->foreign && d->hb && mn_hb_before(d->hb, r->stamp);
	return x;
}

/* A source from before the current run (lastaccess.h) that its tag does not say is the current
 * thread's: its run says whose it is, and whether it happens before now. */
static __attribute__((noinline)) void source_earlier(struct dep *d, uint32_t src, uint32_t sclock,
						     uint32_t dst, enum dep_kind kind, bool one)
{
	const struct dep_xrun *x = source_run(d, src, sclock);

	if (x->foreign)
		cross(d, src, dst, kind, x->ordered);
	else
		report(d, src, sclock, dst, kind, one);
}

/* Source access src at clock c is the current thread's, known without a lookup: it is in the
 * current run, or its id has the current thread's tag and came after the thread took it. */
static inline bool source_mine(const struct dep *d, uint32_t src, uint32_t c)
{
	return c >= d->last.run_clock ||
	       (d->tag && src >> DEP_TAG_SHIFT == d->tag && c >= d->tag_from);
}

/*
 * Rule 3 once a second thread appeared: as word_access(), but a source another thread made (the
 * run of its clock is another thread's) is a cross-thread instance, with that run's stamp.  A
 * source source_mine() knows is the current thread's takes no lookup.
 */
static inline __attribute__((always_inline)) void
word_access_mt(void *st, struct mn_lastaccess_word *w, uint64_t a, uint32_t aid, bool store,
	       bool one)
{
	struct dep *d = st;

	if (w->writer && source_mine(d, w->writer, w->wclock))
		report(d, w->writer, w->wclock, aid, store ? DEP_WAW : DEP_RAW, one);
	else if (w->writer)
		source_earlier(d, w->writer, w->wclock, aid, store ? DEP_WAW : DEP_RAW, one);
	if (store && w->reader && source_mine(d, w->reader, w->rclock))
		report(d, w->reader, w->rclock, aid, DEP_WAR, one);
	else if (store && w->reader)
		source_earlier(d, w->reader, w->rclock, aid, DEP_WAR, one);
	if (store)
		*w = (struct mn_lastaccess_word){ .writer = aid, .wclock = d->nest.clock };
	else
		*w = (struct mn_lastaccess_word){ w->writer, w->wclock, aid, d->nest.clock };
}

/* As word_access_mt(), for mn_lastaccess_span(). */
static void word_access_mt_fn(void *st, struct mn_lastaccess_word *w, uint64_t a, uint32_t aid,
			      bool store, bool one)
{
	word_access_mt(st, w, a, aid, store, one);
}

/* The access id of site in the current context and the current thread's tag (a one-entry cache
 * per site); 0 without memory. */
static inline __attribute__((always_inline)) uint32_t access_id(void *st, uint32_t site)
{
	struct dep *d = st;
	uint32_t ctx = mn_ctx_current(d->ctx);
	struct site *s = mn_sitevec_get(&d->sites, site);

	if (s && (s->ctx != ctx || s->tag != d->tag || !s->aid)) {
		s->ctx = ctx;
		s->tag = d->tag;
		s->aid = mn_access_intern(&d->acc, site, ctx, d->tag);
		if (s->aid > DEP_AID_MASK)
			s->aid = 0;   /* counted as lost */
		else
			s->aid |= (uint32_t)d->tag << DEP_TAG_SHIFT;
	}
	return s ? s->aid : 0;
}

/* The handler behind load and store: rule 3 on every word of the access (rule 1), each row
 * counted once for it (rule 6).  Inlined into each so that `store` and `mt` are constants; mt:
 * a second thread appeared (word_access_mt()). */
static inline __attribute__((always_inline)) void
access_words(struct dep *d, uint32_t site, uint64_t addr, uint32_t size, bool store, bool mt)
{
	uint64_t end = addr + size;
	uint32_t aid;
	bool span;

	span = (addr ^ (end - 1)) >> MN_LASTACCESS_PAGE_SHIFT;
	d->rows.span += span;   /* every worker sees every such access: one numbering */
	if (!(aid = access_id(d, site)) || !d->sh) {
		d->nomem++;
		return;
	}
	mn_nestrows_next(&d->rows);
	if (__builtin_expect(span, 0)) {
		mn_lastaccess_span(&d->last, aid, addr, end, store,
				   mt ? word_access_mt_fn : word_access, d);
		return;
	}
	for (uint64_t a = addr & ~UINT64_C(7); a < end; a += 8) {
		struct mn_lastaccess_word *w = mn_shadow_get(d->sh, a);

		if (w && mt)   /* else an alias: counted by the shadow */
			word_access_mt(d, w, a, aid, store, (addr & 7) + size <= 8);
		else if (w)
			word_access(d, w, a, aid, store, (addr & 7) + size <= 8);
	}
}

/* An access in target mode (rule 8): out of the hot path. */
static __attribute__((noinline)) void on_access_rare(struct dep *d, uint32_t site, uint64_t addr,
						     uint32_t size, bool store)
{
	if (d->target_mode && !d->nest.in_target)
		return;
	if (!(d->mode & DEP_MODE_THREADS))
		access_words(d, site, addr, size, store, false);
	else
		access_words(d, site, addr, size, store, true);
}

/* Once a second thread appeared (and no target): the threads' path, one function a direction, so
 * that each inlines all it calls and the single-threaded path stays as small as before. */
static __attribute__((noinline)) void load_mt(struct dep *d, uint32_t site, uint64_t addr,
					      uint32_t size)
{
	access_words(d, site, addr, size, false, true);
}

static __attribute__((noinline)) void store_mt(struct dep *d, uint32_t site, uint64_t addr,
					       uint32_t size)
{
	access_words(d, site, addr, size, true, true);
}

/* The handler. */
static inline __attribute__((always_inline)) void
on_access(struct dep *d, uint32_t site, uint64_t addr, uint32_t size, bool store)
{
	if (!size)
		return;
	if (__builtin_expect(d->mode, 0)) {
		if (d->mode == DEP_MODE_THREADS)
			(store ? store_mt : load_mt)(d, site, addr, size);
		else
			on_access_rare(d, site, addr, size, store);
		return;
	}
	access_words(d, site, addr, size, store, false);
}

static void dep_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, size, false);
}

static void dep_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, size, true);
}

static void dep_loop_invoke(void *st, uint32_t site)
{
	struct dep *d = st;
	struct site *s = mn_sitevec_get(&d->sites, site);

	mn_loopnest_invoke(&d->nest, site);
	if (!s) {
		d->nomem++;
		return;
	}
	s->loop = true;
	s->invocations++;
	mn_loopnest_open(&d->nest, site, s->target);
}

static void dep_loop_iter(void *st, uint32_t site)
{
	struct dep *d = st;
	struct site *s = mn_sitevec_get(&d->sites, site);

	if (s)
		s->iterations++;
	mn_loopnest_iter(&d->nest, site);
}

static void dep_exit(void *st, uint32_t site)
{
	mn_loopnest_exit(&((struct dep *)st)->nest, site);
}

static void dep_func_entry(void *st, uint32_t site)
{
	mn_loopnest_func_entry(&((struct dep *)st)->nest, site);
}

/* A loop summary: in closed form, or expanded. */
static void dep_loop_summary(void *st, uint32_t site, uint64_t T,
			     const struct mn_summary_access *acc, unsigned n)
{
	struct dep *d = st;
	struct site *s;
	bool mt;

	dep_loop_invoke(d, site);
	mt = d->mode & DEP_MODE_THREADS;
	/* target mode counts per frame; with threads, sources must be this thread's */
	if (!d->target_mode && (!mt || mn_lastaccess_mine(&d->last, T, acc, n)) &&
	    mn_lastaccess_closed(&d->last, mn_loopnest_top(&d->nest, site), T, acc, n)) {
		d->closed++;
		if ((s = mn_sitevec_get(&d->sites, site)))
			s->iterations += T;
	} else {
		d->expanded++;
		mn_lastaccess_expand(&d->last, site, T, acc, n);
	}
	dep_exit(d, site);
}

/* The clock would wrap: every word's history is forgotten (README: clock_resets), and every
 * thread's frames' clocks (the current thread's: the nest's). */
static void clock_reset(void *st)
{
	struct dep *d = st;

	d->aliases += mn_lastaccess_forget(&d->last);
	d->resets++;
	d->tag_from = 0;   /* no word is older than a tag now */
	d->xgen++;         /* nor does any name a run before the current one */
	for (uint32_t t = 0; t < d->nparked; t++) {
		if (d->parked[t]) {
			mn_loopnest_stack_reset(&d->parked[t]->nest);
			d->parked[t]->tag_from = 0;
		}
	}
}

/* A loop frame ends: it pays the counts it owes (nestrows.h). */
static void frame_close(void *st, unsigned i)
{
	mn_nestrows_pay(&((struct dep *)st)->rows, i);
}

static const struct mn_loopnest_hooks nest_hooks = { clock_reset, frame_close };

/* Rule 8: a loop MNEMO_DEP_LOOP names. */
static int mark_target(void *st, uint32_t site)
{
	struct site *s = mn_sitevec_get(&((struct dep *)st)->sites, site);

	return s ? (s->target = true, 0) : -ENOMEM;
}

/* With several workers: which pages are this worker's (lastaccess.h). */
static void dep_shard_worker(void *st, unsigned id, unsigned nworkers)
{
	((struct dep *)st)->last.wid = id;
	((struct dep *)st)->last.nw = nworkers;
}

/* For the driver's prefetch of each access's word (module.h); NULL if it could not be had. */
static struct mn_shadow *dep_shadow(void *st)
{
	return ((struct dep *)st)->sh;
}

/* ---- Threads (README, "Threads") ---- */

/* Thread t's parked state, made (zeroed) if there is none; NULL without memory. */
static struct dep_thread *thread_slot(struct dep *d, uint32_t t)
{
	if (t >= d->nparked) {
		uint32_t n = t < 16 ? 32 : 2 * t;
		struct dep_thread **v = realloc(d->parked, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + d->nparked, 0, (n - d->nparked) * sizeof(*v));
		d->parked = v;
		d->nparked = n;
	}
	if (!d->parked[t])
		d->parked[t] = calloc(1, sizeof(struct dep_thread));
	return d->parked[t];
}

static void thread_free(struct dep *d, uint32_t t)
{
	struct dep_thread *p = t < d->nparked ? d->parked[t] : NULL;

	if (!p)
		return;
	mn_loopnest_stack_free(&p->nest);
	mn_nestrows_owed_free(p->owed, p->owed_cap);
	free(p);
	d->parked[t] = NULL;
}

/* The current thread takes a free tag if it has none (without one, its sources are found by their
 * runs).  Its previous holder has ended: its accesses' clocks are all before tag_from, the next
 * tick's (the run begun next, if not a later loop event; no tick of its own, which would move
 * the clock resets). */
static void tag_take(struct dep *d)
{
	if (d->tag || !~d->tags_used || !d->tags_opt || d->nest.clock == UINT32_MAX)
		return;
	d->tag = (uint8_t)__builtin_ctzll(~d->tags_used);
	d->tags_used |= UINT64_C(1) << d->tag;
	d->tag_from = d->nest.clock + 1;
}

/* A second thread appeared: from now on the words' clocks tell their accesses' threads and
 * stamps by the runs (lastaccess.h), and the access handler takes the threads' path.  What came
 * before is the current thread's, as of now. */
static void threads_begin(struct dep *d)
{
	d->threads = true;
	if (mn_hb_create(&d->hb)) {
		d->hb = NULL;
		d->nomem++;   /* then every source is taken as the current thread's */
		return;
	}
	mn_hb_thread(d->hb, d->thread);
	d->xcache = calloc(DEP_XCACHE, sizeof(*d->xcache));   /* none: no shortcut */
	d->tags_used = 1;   /* tag 0 is none */
	if (mn_lastaccess_threads(&d->last, d->thread, mn_hb_now(d->hb)))
		d->nomem++;
	else
		d->mode |= DEP_MODE_THREADS;
	tag_take(d);
}

/* After a switch or synchronization: a new run if the thread or its stamp changed; and what the
 * current thread knows may have changed (struct dep_xrun). */
static inline void run_check(struct dep *d)
{
	d->xgen++;
	if (d->mode & DEP_MODE_THREADS)
		mn_lastaccess_run(&d->last, d->thread, mn_hb_now(d->hb));
}

/* The frames, context stack and what the frames owe: the current thread's parked, thread's taken
 * up (pointers change hands).  An ended thread's are freed instead of parked. */
static void thread_switch(struct dep *d, uint32_t thread)
{
	struct dep_thread *out = thread_slot(d, d->thread), *in = thread_slot(d, thread);
	uint32_t was = d->thread;

	if (!out || !in || mn_loopnest_switch(&d->nest, &out->nest, &in->nest)) {
		d->nomem++;   /* the new thread's events go on the old one's stacks */
	} else {
		struct mn_nestrows_owed *o = in->owed;
		unsigned cap = in->owed_cap;

		mn_nestrows_switch(&d->rows, &o, &cap);
		out->owed = o;
		out->owed_cap = cap;
		in->owed = NULL;
		in->owed_cap = 0;
		out->tag = d->tag;
		out->tag_from = d->tag_from;
		d->tag = in->tag;
		d->tag_from = in->tag_from;
	}
	d->thread = thread;
	if (d->hb)
		mn_hb_thread(d->hb, thread);
	if (out && out->ended)
		thread_free(d, was);
}

/* The driver's .thread hook (module.h): before a buffer of another thread than the last. */
static void dep_thread(void *st, uint32_t thread)
{
	struct dep *d = st;

	if (thread == d->thread)
		return;
	if (!d->threads)
		threads_begin(d);
	thread_switch(d, thread);
	tag_take(d);
	run_check(d);
}

static void dep_thread_start(void *st, uint32_t thread, uint32_t creator)
{
	struct dep *d = st;

	if (!d->threads)
		threads_begin(d);
	if (d->hb)
		mn_hb_start(d->hb, thread, creator);
	run_check(d);
}

/* Its frames close and pay what they owe; its stacks go at the next switch. */
static void dep_thread_end(void *st, uint32_t thread)
{
	struct dep *d = st;
	struct dep_thread *p;

	if (!d->threads)
		threads_begin(d);
	mn_loopnest_end(&d->nest);
	if (thread == d->thread && (p = thread_slot(d, thread)))
		p->ended = true;
	if (thread == d->thread) {   /* free for the next thread (tag_take()) */
		d->tags_used &= ~(UINT64_C(1) << d->tag) | 1;
		d->tag = 0;
	}
	if (d->hb)
		mn_hb_end(d->hb, thread);
	run_check(d);
}

static void dep_sync_acquire(void *st, uint64_t object)
{
	struct dep *d = st;

	if (!d->threads)
		threads_begin(d);
	if (d->hb)
		mn_hb_acquire(d->hb, object);
	run_check(d);
}

static void dep_sync_release(void *st, uint64_t object)
{
	struct dep *d = st;

	if (!d->threads)
		threads_begin(d);
	if (d->hb)
		mn_hb_release(d->hb, object);
	run_check(d);
}

void dep_flush(struct dep *d)
{
	uint32_t cur = d->thread;

	mn_loopnest_close_all(&d->nest);
	for (uint32_t t = 0; t < d->nparked; t++) {
		if (t == cur || !d->parked[t] || !d->parked[t]->nest.n)
			continue;
		thread_switch(d, t);
		mn_loopnest_close_all(&d->nest);
		thread_switch(d, cur);
	}
	mn_nestrows_flush(&d->rows);
}

static void dep_fini(void *st)
{
	struct dep *d = st;

	for (uint32_t t = 0; t < d->nparked; t++)
		thread_free(d, t);
	free(d->parked);
	mn_hb_destroy(d->hb);
	mn_lastaccess_threads_free(&d->last);
	mn_rows_free(&d->cross);
	free(d->xcache);
	mn_spans_free(&d->cross_spans);

	mn_loopnest_free(&d->nest);
	mn_nestrows_free(&d->rows);
	mn_rows_free(&d->deps);
	mn_spans_free(&d->span_rows);
	mn_accesses_free(&d->acc);
	mn_sitevec_free(&d->sites);
	mn_shadow_destroy(d->sh);
	mn_ctx_destroy(d->ctx);
	memset(d, 0, sizeof(*d));
}

static int dep_init(void *st, const struct mn_run *run)
{
	struct dep *d = st;
	int err = mn_module_options(&mn_module_dependence, d);

	if (err || (err = mn_ctx_create(&d->ctx, CTX_DEPTH)))
		return err;
	d->run = run;
	d->thread = 1;
	mn_loopnest_init(&d->nest, d->ctx, (uint32_t)d->clock_opt, &nest_hooks, d, &d->nomem);
	d->last = (struct mn_lastaccess){ &d->sh, &d->nest, &d->rows, access_id,
					  &mn_module_dependence, d, d->last.wid, d->last.nw,
					  NULL, 0, 0, 0, 0, { 0 }, NULL, 0, 0 };
	err = mn_nestrows_init(&d->rows, &d->deps, &d->nest, row_key, d, &d->nomem, &d->span_rows);
	if (!err)
		err = mn_lastaccess_shadow(&d->sh);
	if (!err)
		err = mn_sitevec_init(&d->sites, sizeof(struct site), mn_run_site_count(run));
	if (!err && *d->loop_opt) {   /* rule 8 */
		err = mn_loopnest_named(run, d->loop_opt, mark_target, d);
		d->target_mode = true;
		d->mode |= DEP_MODE_TARGET;
		if (!err)
			fprintf(stderr, "mnemo: dependence: MNEMO_DEP_LOOP=%s names no loop (give "
				"a loop site id or file:line)\n", d->loop_opt);
		err = err > 0 ? 0 : err ? err : -EINVAL;
	}
	if (err)
		dep_fini(d);
	return err;
}

/* Settings (README); the clock limit is for the tests of clock resets, the tags for those that
 * check them against runs alone. */
static const struct mn_option dep_options[] = {
	{ "MNEMO_DEP_CONTEXT", MN_OPT_BOOL, offsetof(struct dep, context), "0", 0, 0, NULL,
	  "also key each row by the calling contexts of both accesses" },
	{ "MNEMO_DEP_LOOP", MN_OPT_TEXT, offsetof(struct dep, loop_opt), "", 0, 0, NULL,
	  "only the loops at file:line (a loop site's file, or its last path components) or of a "
	  "loop site id" },
	{ "MNEMO_DEP_CLOCK_LIMIT", MN_OPT_UINT, offsetof(struct dep, clock_opt), "4294967295", 2,
	  4294967295.0, NULL, NULL },
	{ "MNEMO_DEP_TAGS", MN_OPT_BOOL, offsetof(struct dep, tags_opt), "1", 0, 0, NULL, NULL },
	{ 0 },
};

static const char *const dep_settings[] = { "granularity", "context", "target", NULL };

const struct mn_module mn_module_dependence = {
	.name = "dependence",
	.doc = "memory dependences per loop (raw/war/waw), loop-carried or not, with distances",
	.state_size = sizeof(struct dep),
	.shard = MN_SHARD_ADDRESS,
	.shard_shift = MN_LASTACCESS_PAGE_SHIFT,
	.thread = dep_thread,
	.init = dep_init,
	.fini = dep_fini,
	.load = dep_load,
	.store = dep_store,
	.func_entry = dep_func_entry,
	.func_exit = dep_exit,
	.loop_invoke = dep_loop_invoke,
	.loop_iter = dep_loop_iter,
	.loop_exit = dep_exit,
	.thread_start = dep_thread_start,
	.thread_end = dep_thread_end,
	.sync_acquire = dep_sync_acquire,
	.sync_release = dep_sync_release,
	.loop_summary = dep_loop_summary,
	.shard_worker = dep_shard_worker,
	.shadow = dep_shadow,
	.merge = dep_merge,
	.emit = dep_emit,
	.restore = dep_restore,
	.schema = &dep_schema,
	.settings = dep_settings,
	.options = dep_options,
};
