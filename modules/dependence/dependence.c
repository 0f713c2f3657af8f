/*
 * dependence: the memory dependences of every loop (PROMPT 2.1, 6.2): for each loop, each
 * (source access, destination access, kind) that manifested, whether the loop carried it and at
 * which distances in iterations, and how often.  The rules are README.md's; this file is them.
 *
 * Shadow memory gives every 8-byte word its last write and the last read since (an access id and
 * a clock each, 16 bytes).  The clock counts loop events; every live loop invocation remembers the
 * clock of its invoke and of each iteration start (dep_tables.c), so a source's clock says, for
 * every loop around the destination, whether it ran in this invocation and how many iterations
 * ago.  Access ids intern (site, context id); contexts come from the context manager.
 *
 * Sharded by address a 4 KiB page at a time: every worker sees every context event, so clocks,
 * loops and context ids agree across workers, and each word's accesses all reach its page's owner.
 * An access that spans pages reaches every worker, which tracks the words of its own pages and
 * logs the rows they counted, so that merge() counts each once per access (on_span()): profiles
 * do not depend on the number of workers, nor on where the pages of the address layout fall.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "context.h"
#include "dep_tables.h"
#include "map.h"
#include "module.h"
#include "shadow.h"
#include "sitevec.h"

extern const struct mn_module mn_module_dependence;

#define PAGE_SHIFT 12        /* shard_shift: workers own whole 4 KiB pages */
#define CTX_DEPTH  64        /* context ids encode the outermost 64 frames */
#define MEMO_BITS  14        /* 2^14 rows remembered by the ids that make their key: 1 MiB */

static const char *const kind_name[] = { "raw", "war", "waw" };

/* One 8-byte word's shadow. */
struct word {
	uint32_t writer, wclock;   /* the last store's access id (0: never written) and clock */
	uint32_t reader, rclock;   /* the last load since: access id (0: none) and clock */
};

/* Per site: an access site's last context and id (a one-entry cache), or a loop's counts. */
struct site {
	uint32_t ctx, aid;
	uint64_t invocations, iterations;
	bool loop, target;
};

/*
 * The row of an instance depends only on its source and destination accesses, the loop frame,
 * the kind and whether it is carried: the row map's memo (map.h), keyed by those, skips the via
 * walks and the row lookup for the instances that repeat, most of them, and takes their counts
 * and carried distances (tally()), so that a row map of megabytes is touched once per memo slot
 * fill, not once per instance.  Short key: src | dst << 32, the frame's fid | loop site << 32,
 * kind << 1 | carried.
 */
/* A live loop invocation: one per loop frame of the context stack, outermost first. */
struct loop {
	uint32_t site, fid;        /* the loop; the context id with its frame on top */
	unsigned frame;            /* its index in the context stack */
	uint64_t serial;           /* its invocation serial */
	uint32_t inv;              /* clock at its invoke */
	bool target;
	uint64_t mkey;             /* fid | site << 32: its part of a memo key */
	uint32_t mhash;            /* its part of a memo slot's hash */
	struct dep_starts starts;  /* clocks at its iteration starts */
	struct outer *outer;       /* [outer_cap]: counts owed to its rows and the ones below */
	uint32_t *outer_used;      /* [outer_cap / 2]: the slots in use, outer_n of them */
	uint32_t outer_cap, outer_n;
	bool dup;                  /* some frame at or below it is of the same loop as another */
};

/*
 * Counts owed to the not-carried rows of a loop frame and of every frame below it (README rule
 * 4: a source that ran in a deeper frame's invocation ran in this frame's current iteration).
 * An instance whose innermost frame holding both accesses is J counts its row there at once and
 * adds 1 here, in frame J - 1; a frame pays what it holds into its rows when it ends, and hands
 * it to the frame below.  So an instance costs O(1), not O(J), whatever the nest depth.  Only
 * where rule 6 (once per destination access) merges nothing, so that counts simply add: for
 * accesses that touch one word (at most one instance per (pair, kind)), and below frames that
 * are all of different loops (a loop met twice, in a recursion, would give two frames one row).
 */
struct outer {
	uint64_t pair;             /* src | dst << 32; 0: an empty slot */
	uint64_t count;
	uint32_t kind;
};

/*
 * The not-carried rows of the frames below J = loops[i - 1] for one (src, dst, kind): when a loop
 * has two frames on the stack (a recursion: l->dup) several frames share a row, which an access
 * counts once (rule 6), so report() would walk them all, every instance.  But the rows of frames
 * [0, i - 1) depend only on the pair, the kind and the stack below J, which lives as long as J's
 * invocation: they are found once per (pair, kind, J's serial), distinct, and each instance
 * counts those.  More than BELOW_MAX distinct rows, or one that memory could not hold: walked.
 */
#define BELOW_MAX 6
#define BELOW     512

struct below {
	uint64_t pair;             /* 0: an empty slot */
	uint64_t serial;           /* J's invocation serial */
	unsigned gen;              /* the row table's gen when e[] was found */
	uint32_t kind, n;          /* n > BELOW_MAX: walk */
	struct mn_row *e[BELOW_MAX];
	/* Instances of accesses that touch one word counted here and not yet in e[] (as memo
	 * slots hold theirs: tally()), pendc of them carried in J.  e[dup] is J's own not-carried
	 * row (-1: none), which an instance not carried in J counts there, once (rule 6). */
	uint32_t pend, pendc;
	int dup;
};

#define VIA_BITS 12

struct via_slot {
	uint32_t ctx, fid, via;
	bool set;
};

struct dep {
	struct mn_ctx *ctx;
	struct mn_shadow *sh;
	struct mn_sitevec sites;   /* struct site */
	const struct mn_run *run;
	struct dep_accesses acc;
	struct mn_rows deps;       /* the rows: struct dep_key -> count, distances */
	struct loop *loops;        /* [nloops], and idle ones up to loop_cap with their memory */
	unsigned nloops, loop_cap;
	unsigned in_target;        /* target loops among loops[] */
	bool context, target_mode;
	bool restored;             /* a whole run's, from its profile (`mnemo merge`) */
	uint32_t clock, clock_limit;
	/* Settings (dep_options) */
	const char *loop_opt;      /* MNEMO_DEP_LOOP: "" or the target loops (README rule 8) */
	uint64_t clock_opt;        /* MNEMO_DEP_CLOCK_LIMIT: clock_limit, smaller in tests */
	uint64_t stamp;            /* accesses so far: one dynamic access counts an entry once */
	uint64_t aliases, nomem, resets;
	uint64_t clipped;          /* only from profiles written when accesses were clipped */
	uint64_t closed, expanded;  /* loop summaries taken in closed form, and expanded */
	struct below below[BELOW];  /* report_dup() */
	struct via_slot vias[1u << VIA_BITS];   /* via_cached() */
	unsigned wid, nw;          /* this worker, of nw (0: alone); shard_worker() */
	uint64_t spans;            /* accesses so far that span two pages: their serial */
	bool spanning;             /* the access being counted spans workers: log its rows */
	struct dep_spans span_rows;
};

/* ---- The clock and the loops ----------------------------------------------------------------- */

/* Forgets every word's history when the 32-bit clock would wrap (README: clock_resets). */
static void clock_reset(struct dep *d)
{
	if (d->sh)
		d->aliases += mn_shadow_aliases(d->sh);
	mn_shadow_destroy(d->sh);
	if (mn_shadow_create(&d->sh, 8, sizeof(struct word)))
		d->sh = NULL;
	for (unsigned i = 0; i < d->nloops; i++) {   /* all of the past is now clock 0 */
		d->loops[i].inv = 0;
		dep_starts_reset(&d->loops[i].starts, d->loops[i].starts.n);
	}
	d->clock = 0;
	d->resets++;
}

static void tick(struct dep *d)
{
	if (__builtin_expect(d->clock >= d->clock_limit, 0))
		clock_reset(d);
	d->clock++;
}

static void outer_pay(struct dep *d, unsigned i);

/* Drops the loops whose frames the context manager has closed, each paying what it owes. */
static void loops_sync(struct dep *d)
{
	unsigned depth = mn_ctx_depth(d->ctx);

	while (d->nloops) {
		struct loop *l = &d->loops[d->nloops - 1];

		if (l->frame < depth && mn_ctx_frame_serial(d->ctx, l->frame) == l->serial)
			return;
		outer_pay(d, d->nloops - 1);
		d->in_target -= l->target;
		d->nloops--;
	}
}

/* Every live frame pays, innermost first: before merge() and emit() read the rows. */
static void outer_pay_all(struct dep *d)
{
	for (unsigned i = d->nloops; i-- > 0;)
		outer_pay(d, i);
}

/* The loop whose frame is on top of the context stack, if its site is `site`. */
static struct loop *top_loop(struct dep *d, uint32_t site)
{
	struct loop *l = d->nloops ? &d->loops[d->nloops - 1] : NULL;

	return l && l->site == site && l->frame + 1 == mn_ctx_depth(d->ctx) ? l : NULL;
}

static void dep_loop_invoke(void *st, uint32_t site)
{
	struct dep *d = st;
	struct site *s = mn_sitevec_get(&d->sites, site);
	unsigned top;
	struct loop *l;

	tick(d);
	mn_ctx_push(d->ctx, site, MN_CTX_LOOP);
	loops_sync(d);
	if (!s) {
		d->nomem++;
		return;
	}
	s->loop = true;
	s->invocations++;
	top = mn_ctx_depth(d->ctx) - 1;
	if (!mn_ctx_depth(d->ctx) || mn_ctx_frame_site(d->ctx, top) != site || top_loop(d, site))
		return;   /* the frame could not be stored */
	if (d->nloops == d->loop_cap) {
		unsigned cap = d->loop_cap ? 2 * d->loop_cap : 16;
		struct loop *v = realloc(d->loops, cap * sizeof(*v));

		if (!v) {
			d->nomem++;
			return;
		}
		memset(v + d->loop_cap, 0, (cap - d->loop_cap) * sizeof(*v));
		d->loops = v;
		d->loop_cap = cap;
	}
	l = &d->loops[d->nloops++];
	l->site = site;
	l->fid = mn_ctx_frame_id(d->ctx, top);
	l->frame = top;
	l->serial = mn_ctx_frame_serial(d->ctx, top);
	l->inv = d->clock;
	l->target = s->target;
	l->mkey = l->fid | (uint64_t)site << 32;
	l->mhash = l->fid * 0xc2b2ae3du ^ site * 0x27d4eb2fu;
	l->dup = d->nloops > 1 && d->loops[d->nloops - 2].dup;
	for (unsigned i = 0; i + 1 < d->nloops && !l->dup; i++)
		l->dup = d->loops[i].site == site;
	d->in_target += l->target;
	dep_starts_reset(&l->starts, 0);
}

static void dep_loop_iter(void *st, uint32_t site)
{
	struct dep *d = st;
	struct site *s = mn_sitevec_get(&d->sites, site);
	struct loop *l;

	tick(d);
	if (s)
		s->iterations++;
	mn_ctx_iter(d->ctx, site);
	loops_sync(d);
	l = top_loop(d, site);
	if (l && !dep_starts_add(&l->starts, d->clock))
		d->nomem++;
}

static void dep_loop_exit(void *st, uint32_t site)
{
	mn_ctx_pop(((struct dep *)st)->ctx, site);
	loops_sync(st);
}

static void dep_func_entry(void *st, uint32_t site)
{
	mn_ctx_push(((struct dep *)st)->ctx, site, MN_CTX_FUNCTION);
}

static void dep_func_exit(void *st, uint32_t site)
{
	mn_ctx_pop(((struct dep *)st)->ctx, site);
	loops_sync(st);
}

/* ---- Dependences ----------------------------------------------------------------------------- */

/*
 * README's rule 5: walking from an access's context ctx out to the loop's frame fid, the last
 * function frame met (the one nearest the loop), or 0.  Sources ran in the loop's current
 * invocation, so fid is on their path; frames the ids leave out (rule 7) are never met.
 */
static uint32_t via(const struct dep *d, uint32_t ctx, uint32_t fid)
{
	uint32_t v = 0;

	for (; ctx != fid; ctx = mn_ctx_id_parent(d->ctx, ctx)) {
		uint32_t site = mn_ctx_id_site(d->ctx, ctx);
		const struct site *s = mn_sitevec_find(&d->sites, site);

		if (!ctx)
			return 0;   /* fid is not on the path: only after a failed intern */
		if (!s || !s->loop)
			v = site;
	}
	return v;
}

/*
 * via() through a cache: a recursion makes every level's accesses new access ids (their contexts
 * differ), so the memo of rows misses and each miss would walk from the access's context out to
 * the frame, as deep as the recursion.  An answer never changes: the ids name fixed paths, and
 * every loop on a path was invoked, so known as a loop, before the path existed.
 */
static uint32_t via_cached(struct dep *d, uint32_t ctx, uint32_t fid)
{
	struct via_slot *v = &d->vias[(ctx * 0x9e3779b1u ^ fid * 0x85ebca77u) >> (32 - VIA_BITS)];

	if (v->ctx != ctx || v->fid != fid || !v->set)
		*v = (struct via_slot){ ctx, fid, via(d, ctx, fid), true };
	return v->via;
}

/* Counts an instance in row e (once per destination access: rule 6) with its distance. */
static inline void count(struct dep *d, struct mn_row *e, bool carried, uint64_t distance)
{
	if (e->stamp != d->stamp) {
		e->stamp = d->stamp;
		e->count++;
		if (__builtin_expect(d->spanning, 0) && !dep_spans_add(&d->span_rows, mn_row_key(e), d->spans))
			d->nomem++;
	}
	if (carried && distance < e->min)
		e->min = distance;
	if (carried && distance > e->max)
		e->max = distance;
}

/* Below slot b's pending instances into its rows. */
static void below_flush(struct below *b)
{
	if (!b->pend)
		return;
	for (unsigned m = 0; m < b->n && b->n <= BELOW_MAX; m++)
		b->e[m]->count += (int)m == b->dup ? b->pendc : b->pend;
	b->pend = b->pendc = 0;
}

/* Every slot's, memo and below: before the rows move (the table grows) or are read (merge,
 * emit). */
static void pending_flush_all(struct dep *d)
{
	mn_rows_memo_flush(&d->deps);
	for (size_t i = 0; i < sizeof(d->below) / sizeof(d->below[0]); i++)
		below_flush(&d->below[i]);
}

/* The key of the row of an instance from access src to dst in loop frame l (NULL: loop 0). */
static void row_key(struct dep *d, struct dep_key *k, uint32_t src, uint32_t dst,
		    const struct loop *l, enum dep_kind kind, bool carried)
{
	const struct dep_access *s = &d->acc.acc[src], *t = &d->acc.acc[dst];

	*k = (struct dep_key){ .loop = l ? l->site : 0, .src = s->site, .dst = t->site,
			       .kind = (uint8_t)kind, .carried = carried };
	if (d->context) {
		k->src_ctx = s->ctx;
		k->dst_ctx = t->ctx;
	}
	if (l) {
		k->src_via = via_cached(d, s->ctx, l->fid);
		k->dst_via = via_cached(d, t->ctx, l->fid);
	}
}

/* The row of key k in rows, found or added with count 0 (to count at once); NULL without memory. */
static struct mn_row *rows_find(struct mn_rows *rows, const struct dep_key *k)
{
	uint64_t w[MN_ROWS_KEY_WORDS];

	memcpy(w, k, sizeof(w));
	return mn_rows_get(rows, w);
}

/* A row's key. */
static struct dep_key key_of(const struct mn_row *e)
{
	struct dep_key k;

	memcpy(&k, mn_row_key(e), sizeof(k));
	return k;
}

/* rows_find() while profiling: NULL counted. */
static struct mn_row *row_get(struct dep *d, const struct dep_key *k)
{
	struct mn_row *e;

	/* Growing the map moves the rows that below slots point to: their counts go in first
	 * (the map flushes its memo itself). */
	if (mn_rows_grows(&d->deps))
		pending_flush_all(d);
	if (!(e = rows_find(&d->deps, k)))
		d->nomem++;
	return e;
}

/* row()'s miss: the via walks and the row map.  Fills memo slot m; NULL without memory (then
 * m stays empty: the next instance tries again, and counts again). */
static __attribute__((noinline)) struct mn_row *
row_slow(struct dep *d, struct mn_rows_memo *m, uint32_t src, uint32_t dst, const struct loop *l,
	 enum dep_kind kind, bool carried)
{
	struct dep_key k;
	struct mn_row *e;

	row_key(d, &k, src, dst, l, kind, carried);
	e = row_get(d, &k);
	mn_rows_memo_set(&d->deps, m, src | (uint64_t)dst << 32, l ? l->mkey : 0,
			 (uint32_t)kind << 1 | carried, e);
	return e;
}

/*
 * The row of an instance in loop frame l (NULL: loop 0), through the memo; NULL without memory.
 * pair and ph are the instance's src | dst << 32 and its part of the slot hash, made once per
 * instance by report() for all its loop frames.
 */
static inline struct mn_rows_memo *memo_slot(struct dep *d, uint32_t ph, const struct loop *l,
					     uint32_t kc)
{
	/* A multiplicative hash's top bits: all of ph's bits reach the slot number (the top bits
	 * alone left 1024 slots in use, however many there were: SQLite missed 3 rows in 10). */
	return mn_rows_memo_slot(&d->deps, (ph ^ (l ? l->mhash : 0) ^ kc * 0x9e3779b1u) *
					   0x85ebca6bu);
}

static inline bool memo_hit(const struct dep *d, const struct mn_rows_memo *m, uint64_t pair,
			    const struct loop *l, uint32_t kc)
{
	return mn_rows_memo_hit(&d->deps, m, pair, l ? l->mkey : 0, kc);
}

static inline struct mn_row *row(struct dep *d, uint64_t pair, uint32_t ph, const struct loop *l,
				 enum dep_kind kind, bool carried)
{
	uint32_t kc = (uint32_t)kind << 1 | carried;
	struct mn_rows_memo *m = memo_slot(d, ph, l, kc);

	if (__builtin_expect(memo_hit(d, m, pair, l, kc), 1))
		return m->row;
	return row_slow(d, m, (uint32_t)pair, (uint32_t)(pair >> 32), l, kind, carried);
}

/*
 * An instance that counts its row at most once per destination access, so that rule 6 needs no
 * stamp (report_innermost()'s: a one-word access has one writer and one reader, of different
 * kinds, and its frames are of different loops): counted in its memo slot, which its row gets at
 * the slot's next fill or flush.  A new row is counted at once (count 0 would mark its slot
 * empty, for the next new row to take).
 */
static inline void tally(struct dep *d, uint64_t pair, uint32_t ph, const struct loop *l,
			 enum dep_kind kind, bool carried, uint64_t distance)
{
	uint32_t kc = (uint32_t)kind << 1 | carried;
	struct mn_rows_memo *m = memo_slot(d, ph, l, kc);
	struct mn_row *e;

	if (__builtin_expect(!memo_hit(d, m, pair, l, kc), 0)) {
		if ((e = row_slow(d, m, (uint32_t)pair, (uint32_t)(pair >> 32), l, kind, carried)))
			count(d, e, carried, distance);
		return;
	}
	mn_rows_memo_count(m, carried, distance);
}

static inline uint32_t pair_hash(uint32_t src, uint32_t dst, enum dep_kind kind)
{
	return src * 0x9e3779b1u ^ dst * 0x85ebca77u ^ (uint32_t)kind * 0x165667b1u;
}

/* The slot of (pair, kind) in v[cap], cap a power of two: its entry, or the empty one it takes. */
static uint32_t outer_slot(const struct outer *v, uint32_t cap, uint64_t pair, uint32_t kind)
{
	uint32_t i = pair_hash((uint32_t)pair, (uint32_t)(pair >> 32), kind) & (cap - 1);

	while (v[i].pair && (v[i].pair != pair || v[i].kind != kind))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Adds c to what frame l owes (pair, kind); false without memory. */
static bool outer_add(struct loop *l, uint64_t pair, enum dep_kind kind, uint64_t c)
{
	uint32_t i;

	if (2 * (l->outer_n + 1) > l->outer_cap) {
		uint32_t cap = l->outer_cap ? 2 * l->outer_cap : 16;
		struct outer *v = calloc(cap, sizeof(*v));
		uint32_t *u = malloc(cap / 2 * sizeof(*u));

		if (!v || !u) {
			free(v);
			free(u);
			return false;
		}
		for (uint32_t k = 0; k < l->outer_n; k++) {
			const struct outer *o = &l->outer[l->outer_used[k]];

			u[k] = outer_slot(v, cap, o->pair, o->kind);
			v[u[k]] = *o;
		}
		free(l->outer);
		free(l->outer_used);
		l->outer = v;
		l->outer_used = u;
		l->outer_cap = cap;
	}
	i = outer_slot(l->outer, l->outer_cap, pair, kind);
	if (!l->outer[i].pair) {
		l->outer[i] = (struct outer){ .pair = pair, .kind = kind };
		l->outer_used[l->outer_n++] = i;
	}
	l->outer[i].count += c;
	return true;
}

/* c instances of (pair, kind) in the not-carried rows of frames [0, i], at once. */
static void outer_count(struct dep *d, unsigned i, uint64_t pair, enum dep_kind kind, uint64_t c)
{
	uint32_t ph = pair_hash((uint32_t)pair, (uint32_t)(pair >> 32), kind);

	for (unsigned j = 0; j <= i; j++) {
		struct mn_row *e = row(d, pair, ph, &d->loops[j], kind, false);

		if (e)
			e->count += c;
	}
}

/* Frame i pays what it owes into its rows and hands it to the frame below; owes nothing after. */
static void outer_pay(struct dep *d, unsigned i)
{
	struct loop *l = &d->loops[i];

	/* through the slots in use: a frame that ends often may have grown a large table once */
	for (uint32_t k = 0; k < l->outer_n; k++) {
		struct outer *o = &l->outer[l->outer_used[k]];
		struct mn_row *e;

		e = row(d, o->pair, pair_hash((uint32_t)o->pair, (uint32_t)(o->pair >> 32), o->kind),
			l, o->kind, false);
		if (e)
			e->count += o->count;
		if (i && !outer_add(&d->loops[i - 1], o->pair, o->kind, o->count))
			outer_count(d, i - 1, o->pair, o->kind, o->count);
		*o = (struct outer){ 0 };
	}
	l->outer_n = 0;
}

/*
 * report() where frame i - 1 is the innermost holding both accesses (i = 0: none) and rule 6
 * merges nothing (struct outer): its row now, and one owed by the frame below.
 */
static inline void report_innermost(struct dep *d, uint64_t pair, uint32_t ph, unsigned i,
				    uint32_t sclock, enum dep_kind kind)
{
	struct loop *l;
	uint64_t started;
	bool carried;

	if (!i) {
		tally(d, pair, ph, NULL, kind, false, 0);   /* loop 0: no loop invocation holds both */
		return;
	}
	l = &d->loops[i - 1];
	started = dep_starts_upto(&l->starts, sclock);
	carried = started < l->starts.n;
	tally(d, pair, ph, l, kind, carried, l->starts.n - started);
	if (i > 1 && !outer_add(&d->loops[i - 2], pair, kind, 1))
		outer_count(d, i - 2, pair, kind, 1);
}

/* The frames whose invocation began at or before sclock: [0, i).  Invokes only grow outward in;
 * a deep stack (a recursion with loops) is searched, not walked. */
static inline unsigned holding(const struct dep *d, uint32_t sclock)
{
	unsigned i = d->nloops, lo = 0;

	if (i > 8 && d->loops[i - 8].inv > sclock) {
		for (unsigned n = i - 8; n > 0;) {   /* the first frame of [lo, lo + n) invoked after */
			unsigned half = n / 2;

			if (d->loops[lo + half].inv <= sclock) {
				lo += half + 1;
				n -= half + 1;
			} else {
				n = half;
			}
		}
		return lo;
	}
	while (i > 0 && d->loops[i - 1].inv > sclock)
		i--;
	return i;
}

/* Fills b with the distinct rows of frames [0, j) for (pair, kind), counting each for the
 * instance at hand. */
static void below_fill(struct dep *d, struct below *b, uint64_t pair, uint32_t ph, unsigned j,
		       enum dep_kind kind)
{
	unsigned gen;

	do {   /* again if finding a row grew the table, which moves the ones found before */
		gen = d->deps.gen;
		b->n = 0;
		for (unsigned k = 0; k < j && b->n <= BELOW_MAX; k++) {
			struct mn_row *e = row(d, pair, ph, &d->loops[k], kind, false);
			unsigned m;

			if (!e) {
				b->n = BELOW_MAX + 1;   /* walked: each instance counts what is lost */
				break;
			}
			/* this instance's count, now: a new row is an empty slot until it counts,
			 * which the next new row would take (the stamp keeps it at one) */
			count(d, e, false, 0);
			for (m = 0; m < b->n && b->e[m] != e; m++)
				;
			if (m == b->n && b->n++ < BELOW_MAX)
				b->e[m] = e;
		}
	} while (gen != d->deps.gen);
	b->pair = pair;
	b->serial = d->loops[j].serial;
	b->kind = kind;
	b->gen = gen;
	b->dup = -1;
	if (b->n <= BELOW_MAX) {
		struct dep_key k;

		row_key(d, &k, (uint32_t)pair, (uint32_t)(pair >> 32), &d->loops[j], kind, false);
		for (unsigned m = 0; m < b->n; m++)
			if (!memcmp(mn_row_key(b->e[m]), &k, sizeof(k)))
				b->dup = (int)m;
	}
}

/* Does below slot b hold the rows of (pair, kind) under frame J = l's invocation? */
static inline bool below_holds(const struct dep *d, const struct below *b, uint64_t pair,
			       enum dep_kind kind, const struct loop *l)
{
	return b->pair == pair && b->kind == kind && b->serial == l->serial &&
	       b->gen == d->deps.gen;
}

/* report() below a frame of a loop met twice (l->dup): J's row, then the rows below it. */
static void report_dup(struct dep *d, uint64_t pair, uint32_t ph, unsigned i, uint32_t sclock,
		       enum dep_kind kind, bool one_word)
{
	struct loop *l = &d->loops[i - 1];
	uint64_t started = dep_starts_upto(&l->starts, sclock);
	bool carried = started < l->starts.n;
	struct below *b = i > 1 ? &d->below[(ph ^ (uint32_t)l->serial * 0x9e3779b1u) % BELOW] : NULL;
	struct mn_row *e;

	/* An access that touches one word counts each row once whatever it does (one instance per
	 * pair and kind; J's row and the rows below are told apart by b->dup): its instance waits
	 * in the slots, as report_innermost()'s do, when they already hold what it needs. */
	if (one_word && (!b || (below_holds(d, b, pair, kind, l) && b->n <= BELOW_MAX))) {
		if (b) {   /* first: a new row in tally() may grow the table, which flushes b */
			b->pend++;
			b->pendc += carried;
		}
		tally(d, pair, ph, l, kind, carried, l->starts.n - started);
		return;
	}
	if ((e = row(d, pair, ph, l, kind, carried)))
		count(d, e, carried, l->starts.n - started);
	if (i == 1)
		return;
	if (!below_holds(d, b, pair, kind, l)) {
		below_flush(b);
		below_fill(d, b, pair, ph, i - 1, kind);
	}
	if (b->n <= BELOW_MAX) {
		for (unsigned m = 0; m < b->n; m++)
			count(d, b->e[m], false, 0);
		return;
	}
	for (unsigned j = 0; j + 1 < i; j++)
		if ((e = row(d, pair, ph, &d->loops[j], kind, false)))
			count(d, e, false, 0);
}

/* One dependence instance from access src at clock sclock to access dst, now: README's rule 4. */
static inline void report(struct dep *d, uint32_t src, uint32_t sclock, uint32_t dst,
			  enum dep_kind kind, bool one_word)
{
	uint64_t pair = src | (uint64_t)dst << 32;
	uint32_t ph = pair_hash(src, dst, kind);
	struct mn_row *e;
	unsigned i;

	/* The innermost frame holding both accesses (invokes only grow outward in: frames [0, i)
	 * hold the source), the only one that can carry it. */
	i = holding(d, sclock);
	if (!d->target_mode && i && d->loops[i - 1].dup) {
		report_dup(d, pair, ph, i, sclock, kind, one_word);
		return;
	}
	if (one_word && !d->target_mode) {
		report_innermost(d, pair, ph, i, sclock, kind);
		return;
	}
	/* Every frame's row, each once per destination access (count()'s stamp). */
	for (unsigned j = 0; j < i; j++) {
		struct loop *l = &d->loops[j];
		uint64_t started;
		bool carried;

		if (d->target_mode && !l->target)
			continue;
		started = dep_starts_upto(&l->starts, sclock);
		carried = started < l->starts.n;
		e = row(d, pair, ph, l, kind, carried);
		if (e)
			count(d, e, carried, l->starts.n - started);
	}
	if (!i && !d->target_mode && (e = row(d, pair, ph, NULL, kind, false)))
		count(d, e, false, 0);   /* loop 0: no loop invocation holds both */
}

/* README's rule 3 on one word w of an access (aid) that touches one word, or more. */
static inline __attribute__((always_inline)) void
word_access(struct dep *d, struct word *w, uint32_t aid, bool store, bool one)
{
	if (w->writer)
		report(d, w->writer, w->wclock, aid, store ? DEP_WAW : DEP_RAW, one);
	if (store && w->reader)
		report(d, w->reader, w->rclock, aid, DEP_WAR, one);
	if (store)
		*w = (struct word){ .writer = aid, .wclock = d->clock };
	else
		*w = (struct word){ w->writer, w->wclock, aid, d->clock };
}

/*
 * An access [addr, end) that spans pages: every word, each by the worker that owns its page.
 * With several workers each counts the rows its words found, and logs them by the access's
 * serial, so that merge() counts each row once per access (struct dep_spans).
 */
static __attribute__((noinline)) void
on_span(struct dep *d, uint32_t aid, uint64_t addr, uint64_t end, bool store)
{
	d->spanning = d->nw > 1;
	for (uint64_t a = addr & ~UINT64_C(7); a < end; a += 8) {
		struct word *w;

		if (d->nw > 1 && (a >> PAGE_SHIFT) % d->nw != d->wid)
			continue;   /* another worker's page */
		if ((w = mn_shadow_get(d->sh, a)))
			word_access(d, w, aid, store, false);
	}
	d->spanning = false;
}

/* The handler behind load and store: README's rule 3 on every word of the access.  Inlined into
 * each so that `store` is a constant. */
static inline __attribute__((always_inline)) void
on_access(struct dep *d, uint32_t site, uint64_t addr, uint32_t size, bool store)
{
	uint64_t end = addr + size;
	uint32_t ctx = mn_ctx_current(d->ctx);
	struct site *s;
	bool span;

	if (!size || (d->target_mode && !d->in_target))
		return;
	span = (addr ^ (end - 1)) >> PAGE_SHIFT;
	d->spans += span;   /* every worker sees every such access (shard_worker): one numbering */
	s = mn_sitevec_get(&d->sites, site);   /* its access id, cached for its last context */
	if (s && (s->ctx != ctx || !s->aid)) {
		s->ctx = ctx;
		s->aid = dep_access_intern(&d->acc, site, ctx);
	}
	if (!s || !s->aid || !d->sh) {
		d->nomem++;
		return;
	}
	d->stamp++;
	if (__builtin_expect(span, 0)) {
		on_span(d, s->aid, addr, end, store);
		return;
	}
	for (uint64_t a = addr & ~UINT64_C(7); a < end; a += 8) {
		struct word *w = mn_shadow_get(d->sh, a);

		if (w)   /* else an alias: counted by the shadow */
			word_access(d, w, s->aid, store, (addr & 7) + size <= 8);
	}
}

static void dep_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, size, false);
}

static void dep_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, size, true);
}

/* ---- Loop summaries: dependences in closed form (SD3) ----------------------------------------- */

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
 * that come near one another, takes the expansion: so do target mode and a loop that would reset
 * the clock.  The boundary and the last states are tight loops over the shadow; the boundary's
 * sources, met in address order, come in runs from one iteration of one loop, counted as one.
 */
/* Sources met one after another that make the same rows: one source access, one loop frame, one
 * iteration of it; clocks [lo, hi). */
struct run {
	uint32_t src, lo, hi;
	unsigned i;                /* report()'s i */
	bool carried;
	uint64_t dist, c;
};

struct stream {
	int64_t w, e;              /* word (address >> 3) in iteration 0; words per iteration */
	int64_t lo, hi;            /* the words it touches lie in [lo, hi] */
	struct word *sw;           /* the shadow of its word in iteration 0; then + k * e */
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

/*
 * c one-word instances from src to dst whose innermost common loop frame is i - 1 (i = 0: none),
 * carried or not at distance dist there: what c calls of report() would count.
 */
static void report_n(struct dep *d, uint32_t src, uint32_t dst, unsigned i, bool carried,
		     uint64_t dist, enum dep_kind kind, uint64_t c)
{
	uint64_t pair = src | (uint64_t)dst << 32;
	uint32_t ph = pair_hash(src, dst, kind);
	struct mn_row *e;

	if (!i || !d->loops[i - 1].dup) {
		if ((e = row(d, pair, ph, i ? &d->loops[i - 1] : NULL, kind, carried))) {
			e->count += c;
			if (carried && dist < e->min)
				e->min = dist;
			if (carried && dist > e->max)
				e->max = dist;
		}
		if (i > 1 && !outer_add(&d->loops[i - 2], pair, kind, c))
			outer_count(d, i - 2, pair, kind, c);
		return;
	}
	d->stamp++;   /* a loop met twice: its frames' rows may be one, counted once (rule 6) */
	for (unsigned j = 0; j < i; j++) {
		bool cj = j + 1 == i && carried;

		if (!(e = row(d, pair, ph, &d->loops[j], kind, cj)))
			continue;
		if (e->stamp != d->stamp) {
			e->stamp = d->stamp;
			e->count += c;
		}
		if (cj && dist < e->min)
			e->min = dist;
		if (cj && dist > e->max)
			e->max = dist;
	}
}

/* Starts run r at source src of clock sclock (before the summarized loop's invoke). */
static void run_start(struct dep *d, struct run *r, uint32_t src, uint32_t sclock)
{
	unsigned i = holding(d, sclock);
	uint32_t lo, hi;

	*r = (struct run){ .src = src, .i = i, .lo = i ? d->loops[i - 1].inv : 0,
			   .hi = i < d->nloops ? d->loops[i].inv : UINT32_MAX };
	if (i) {
		struct dep_starts *s = &d->loops[i - 1].starts;
		uint64_t started = dep_starts_span(s, sclock, &lo, &hi);

		r->carried = started < s->n;
		r->dist = s->n - started;
		r->lo = lo > r->lo ? lo : r->lo;
		r->hi = hi < r->hi ? hi : r->hi;
	}
}

static void run_flush(struct dep *d, const struct run *r, uint32_t dst, enum dep_kind kind)
{
	if (r->c)
		report_n(d, r->src, dst, r->i, r->carried, r->dist, kind, r->c);
}

/* Run r of stream q's boundary (which: 0 raw or waw, 1 war) to q and to its twins. */
static void run_flush_stream(struct dep *d, const struct run *r, const struct stream *q,
			     unsigned which)
{
	run_flush(d, r, q->aid, which ? DEP_WAR : q->store ? DEP_WAW : DEP_RAW);
	for (unsigned t = 0; !which && t < q->ntwins; t++)
		run_flush(d, r, q->twin_aid[t], q->twin_store[t] ? DEP_WAW : DEP_RAW);
}

/* The shadow of the word p touches in iteration k: every slice p touches is ours, and all lie in
 * one window, where the shadow of consecutive words is consecutive (closed_streams()). */
static inline struct word *word_of(const struct stream *p, uint64_t k)
{
	return p->sw + (int64_t)k * p->e;
}

/* With several workers: is word w (address >> 3) on one of this worker's pages? */
static inline bool owns_word(const struct dep *d, int64_t w)
{
	return d->nw <= 1 || ((uint64_t)w >> (PAGE_SHIFT - 3)) % d->nw == d->wid;
}

/* The first iteration after k, at most k1, in which stream p is on another page than in k. */
static uint64_t page_end(const struct stream *p, uint64_t k, uint64_t k1)
{
	const int64_t words = 1 << (PAGE_SHIFT - 3), w = p->w + (int64_t)k * p->e;
	int64_t ne = p->e > 0 ? p->e : -p->e, dist;
	uint64_t steps;

	if (!p->e)
		return k1;
	dist = p->e > 0 ? (w / words + 1) * words - w : w - w / words * words + 1;
	steps = (uint64_t)((dist + ne - 1) / ne);
	return k1 - k > steps ? k + steps : k1;
}

/* The next part [*a, *b) of iterations [k, k1) in which stream p touches this worker's pages
 * (all of them with one worker); false when there is none. */
static bool owned_part(const struct dep *d, const struct stream *p, uint64_t k, uint64_t k1,
		       uint64_t *a, uint64_t *b)
{
	if (d->nw <= 1) {
		*a = k;
		*b = k1;
		return k < k1;
	}
	for (; k < k1; k = page_end(p, k, k1)) {
		if (owns_word(d, p->w + (int64_t)k * p->e)) {
			*a = k;
			*b = page_end(p, k, k1);
			return true;
		}
	}
	return false;
}

/*
 * How many of the n words at f, f + stride, ... (each a source's access id and clock: a word's
 * writer or reader) run r takes: the same source, a clock in [lo, lo + span).  The boundary's
 * inner loop, kept to a compare or two per word (r.src != 0: a word never written breaks it).
 * With mark, each word taken also gets its last load: aid, at clock, clock + 1, ... (f + 2 and
 * f + 3 are its reader and rclock).
 */
static inline __attribute__((always_inline)) uint64_t
run_take(uint32_t *f, int64_t stride, uint64_t n, uint32_t src, uint32_t lo, uint32_t span,
	 bool mark, uint32_t aid, uint32_t clock)
{
	uint64_t i = 0;

	while (i < n && f[0] == src && f[1] - lo < span) {
		if (mark) {
			f[2] = aid;
			f[3] = clock + (uint32_t)i;
		}
		i++;
		f += stride;
	}
	return i;
}

/* boundary() over [a, b), a part of q's on this worker's pages; with mark, as run_take(). */
static inline __attribute__((always_inline)) void
boundary_part(struct dep *d, const struct stream *q, uint64_t a, uint64_t b, unsigned which,
	      struct run *rp, bool mark, uint32_t inv)
{
	struct run r = *rp;   /* in registers for the loop */
	const int64_t stride = q->e * (int64_t)(sizeof(struct word) / sizeof(uint32_t));
	uint32_t *f = (uint32_t *)word_of(q, a) + (which ? 2 : 0);   /* war: reader, rclock */

	for (uint64_t k = a; k < b; k++, f += stride) {
		uint64_t t = r.src ? run_take(f, stride, b - k, r.src, r.lo, r.hi - r.lo, mark,
					      q->aid, inv + 1 + (uint32_t)k) : 0;

		r.c += t;
		k += t;
		f += (int64_t)t * stride;
		if (k == b)
			break;
		if (f[0]) {   /* else never written (or read) */
			run_flush_stream(d, &r, q, which);
			run_start(d, &r, f[0], f[1]);
			r.c = 1;
		}
		if (mark) {
			f[2] = q->aid;
			f[3] = inv + 1 + (uint32_t)k;
		}
	}
	*rp = r;
}

/*
 * Iterations [k0, k1) of stream q, whose sources all ran before the loop: its words' last
 * stores (or, war, last loads), from the shadow, as the loop found them, gathered in run r.
 * With mark (a load's raw boundary), each word read gets q as its last load at once, which saves
 * last_loads() a pass.  No read sees the write too early: the boundary reads a word's reader
 * only for a store's war source, on a word no load of the loop touched before that store, so a
 * store before q in sigma, whose pass came first.  And none sees it too late: whatever touches
 * the word after q in the loop writes its own last store or load after every boundary pass.
 */
static void boundary(struct dep *d, const struct stream *q, uint64_t k0, uint64_t k1,
		     unsigned which, struct run *rp, bool mark, uint32_t inv)
{
	for (uint64_t a, b; owned_part(d, q, k0, k1, &a, &b); k0 = b) {
		if (mark)
			boundary_part(d, q, a, b, 0, rp, true, inv);
		else
			boundary_part(d, q, a, b, which, rp, false, 0);
	}
}

/* One word's source for run r (a source's access id and clock, src 0: none): taken, or the
 * start of a new run after r's flush. */
static inline void run_word(struct dep *d, struct run *r, const struct stream *q, unsigned which,
			    uint32_t src, uint32_t sclock)
{
	if (src == r->src && src && sclock - r->lo < r->hi - r->lo) {
		r->c++;
	} else if (src) {
		run_flush_stream(d, r, q, which);
		run_start(d, r, src, sclock);
		r->c = 1;
	}
}

/*
 * A store stream's waw and war boundaries over the same iterations [k0, k1), in one pass that
 * also writes its words' last store, which saves two passes.  As for a load's (boundary()): the
 * word's own reads come first, the boundary reads of other streams on the word came before (they
 * touch it before q does) or do not happen (a source in the loop), and whatever touches it after
 * q writes after every boundary pass.
 */
static void boundary_store(struct dep *d, struct stream *q, uint64_t k0, uint64_t k1, uint32_t inv)
{
	const int64_t e = q->e;
	const uint32_t aid = q->aid;

	for (uint64_t a, b; owned_part(d, q, k0, k1, &a, &b); k0 = b) {
		struct word *w = word_of(q, a);

		for (uint64_t k = a; k < b; k++, w += e) {
			struct run *r0 = &q->run[0], *r1 = &q->run[1];
			uint32_t s0 = r0->src, lo0 = r0->lo, n0 = r0->hi - r0->lo;
			uint32_t s1 = r1->src, lo1 = r1->lo, n1 = r1->hi - r1->lo;
			uint64_t t = k;
			struct word o;

			/* both runs go on: the common case, kept in registers */
			while (t < b && s0 && s1 && w->writer == s0 && w->wclock - lo0 < n0 &&
			       w->reader == s1 && w->rclock - lo1 < n1) {
				*w = (struct word){ aid, inv + 1 + (uint32_t)t, 0, 0 };
				t++;
				w += e;
			}
			r0->c += t - k;
			r1->c += t - k;
			if ((k = t) == b)
				break;
			o = *w;
			run_word(d, r0, q, 0, o.writer, o.wclock);
			run_word(d, r1, q, 1, o.reader, o.rclock);
			*w = (struct word){ aid, inv + 1 + (uint32_t)k, 0, 0 };
		}
	}
}

/* In-loop instances from p to q, d iterations apart on every word, in iterations [d, T). */
static void in_loop(struct dep *d, const struct stream *p, const struct stream *q, uint64_t dist,
		    uint64_t T, enum dep_kind kind)
{
	uint64_t c = 0;   /* the instances on this worker's pages: q's words */

	for (uint64_t a, b, k = dist; dist < T && owned_part(d, q, k, T, &a, &b); k = b)
		c += b - a;
	if (c)
		report_n(d, p->aid, q->aid, d->nloops, dist > 0, dist, kind, c);
}

/* One class of streams of step e != 0, sorted into sigma: its in-loop dependences now, and the
 * plan of each stream's boundary and last accesses (struct stream). */
static void class_plan(struct dep *d, struct stream *s, unsigned m, uint64_t T)
{
	int ps = -1, pl = -1;   /* sigma's last store so far, and its last load after that */

	for (int i = 0; i < (int)m; i++) {
		struct stream *q = &s[i];
		uint64_t ds = ps >= 0 ? q->t - s[ps].t : NEVER, dl = pl >= 0 ? q->t - s[pl].t : NEVER;

		if (ps >= 0)
			in_loop(d, &s[ps], q, ds, T, q->store ? DEP_WAW : DEP_RAW);
		q->brw = ds < T ? ds : T;
		q->bwar = 0;
		if (!q->store) {
			pl = i;
			continue;
		}
		if (pl >= 0)
			in_loop(d, &s[pl], q, dl, T, DEP_WAR);
		dl = pl >= 0 ? dl : ds;
		q->bwar = dl < T ? dl : T;
		ps = i;
		pl = -1;
	}
	/* A store is a word's last store unless the next store of sigma reached the word too; a
	 * load its last load unless anything after it in sigma did. */
	for (unsigned i = 0, n; i < m; i++) {
		uint64_t dn = NEVER;

		for (n = i + 1; s[i].store && n < m && !s[n].store; n++)
			;
		if (n < m)
			dn = s[n].t - s[i].t;
		s[i].fin = dn < T ? T - dn : 0;
	}
}

/* Stream p (a store) is its words' last store in iterations [k0, k1). */
static void last_stores(struct dep *d, const struct stream *p, uint64_t k0, uint64_t k1,
			uint32_t inv)
{
	const struct stream q = *p;   /* not reloaded after each store to the shadow */

	for (uint64_t a, b; owned_part(d, &q, k0, k1, &a, &b); k0 = b)
		for (uint64_t k = a; k < b; k++)
			*word_of(&q, k) = (struct word){ q.aid, inv + 1 + (uint32_t)k, 0, 0 };
}

/* Stream p (a load) is its words' last load in iterations [k0, k1). */
static void last_loads(struct dep *d, const struct stream *p, uint64_t k0, uint64_t k1,
		       uint32_t inv)
{
	const struct stream q = *p;

	for (uint64_t a, b; owned_part(d, &q, k0, k1, &a, &b); k0 = b) {
		for (uint64_t k = a; k < b; k++) {
			struct word *w = word_of(&q, k);

			w->reader = q.aid;
			w->rclock = inv + 1 + (uint32_t)k;
		}
	}
}

/*
 * Iterations [k0, k1) of every planned stream: the boundary reads, then the last stores, then
 * the last loads (a word's last load came after its last store).  A read of the shadow always
 * comes before a write of the same word in this order: a stream finds its source before the loop
 * only where no store of sigma reached the word before it, so the word's last store, and its last
 * load, come later in sigma, in the same iteration or a later one.
 */
static void closed_chunk(struct dep *d, struct stream *s, unsigned m, uint64_t k0, uint64_t k1,
			 uint32_t inv)
{
	for (unsigned i = 0; i < m; i++) {
		struct stream *q = &s[i];
		uint64_t end = q->brw < k1 ? q->brw : k1;

		q->marked = k0;
		if (q->e && q->store && q->brw == q->bwar && q->brw > k0 && !q->twin_of) {
			boundary_store(d, q, k0, end, inv);
			q->marked = end;
			continue;
		}
		if (q->e && q->brw > k0 && !q->twin_of) {
			boundary(d, q, k0, end, 0, &q->run[0], !q->store, inv);
			q->marked = q->store ? k0 : end;
		}
		if (q->e && q->bwar > k0)
			boundary(d, q, k0, q->bwar < k1 ? q->bwar : k1, 1, &q->run[1], false, 0);
	}
	for (unsigned i = 0; i < m; i++) {
		uint64_t from = s[i].fin > s[i].marked ? s[i].fin : s[i].marked;

		if (s[i].e && s[i].store)
			last_stores(d, &s[i], from, k1, inv);
	}
	for (unsigned i = 0; i < m; i++) {
		uint64_t from = s[i].fin > s[i].marked ? s[i].fin : s[i].marked;

		if (s[i].e && !s[i].store)
			last_loads(d, &s[i], from, k1, inv);
	}
}

/* A word's last store or load, as the step-0 simulation tracks it: stream j of this loop in
 * iteration it (0 or 1), or (j < 0) the access id and clock the shadow held before the loop. */
struct label {
	int j;
	unsigned it;
	uint32_t aid, clock;
};

/* One instance (c of them) from label a to stream q in iteration it. */
static void label_report(struct dep *d, const struct label *a, const struct stream *q,
			 unsigned it, enum dep_kind kind, uint64_t c)
{
	struct run r;

	if (a->j >= 0) {
		report_n(d, a->aid, q->aid, d->nloops, it > a->it, it - a->it, kind, c);
		return;
	}
	run_start(d, &r, a->aid, a->clock);
	r.c = c;
	run_flush(d, &r, q->aid, kind);
}

/* Streams of step 0 on one word, in iteration order: iteration 0 once, iteration 1 for the T - 1
 * after it (the same sources at the same distances), then the word's last accesses. */
static void closed_word(struct dep *d, const struct stream *s, unsigned m, uint64_t T, uint32_t inv)
{
	struct word *w = word_of(&s[0], 0);
	struct label wr = { -1, 0, w->writer, w->wclock }, rd = { -1, 0, w->reader, w->rclock };

	if (!owns_word(d, s[0].w))
		return;   /* another worker's page */
	for (unsigned it = 0; it < 2 && it < T; it++) {
		uint64_t c = it ? T - 1 : 1;

		for (unsigned i = 0; i < m; i++) {
			const struct stream *q = &s[i];

			if (wr.aid)
				label_report(d, &wr, q, it, q->store ? DEP_WAW : DEP_RAW, c);
			if (q->store && rd.aid)
				label_report(d, &rd, q, it, DEP_WAR, c);
			if (q->store) {
				wr = (struct label){ (int)i, it, q->aid, 0 };
				rd = (struct label){ -1, 0, 0, 0 };
			} else {
				rd = (struct label){ (int)i, it, q->aid, 0 };
			}
		}
	}
	/* after iteration T - 1, in-loop labels are of it: clock inv + T */
	*w = (struct word){ wr.aid, wr.j >= 0 ? inv + (uint32_t)T : wr.clock,
			    rd.aid, rd.j >= 0 ? inv + (uint32_t)T : rd.clock };
}

static int by_range(const void *a, const void *b)
{
	const struct stream *x = a, *y = b;

	return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->j > y->j) - (x->j < y->j);
}

/* sigma's order: by step, residue (word mod step) or, at step 0, word; then by the iteration in
 * which the stream reaches a common word (descending words for e > 0); then in iteration order. */
static int by_class(const void *a, const void *b)
{
	const struct stream *x = a, *y = b;
	int64_t rx, ry, kx, ky;

	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	rx = x->e ? ((x->w % x->e) + llabs(x->e)) % llabs(x->e) : x->w;
	ry = y->e ? ((y->w % y->e) + llabs(y->e)) % llabs(y->e) : y->w;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	kx = x->e > 0 ? -x->w : x->w;
	ky = y->e > 0 ? -y->w : y->w;
	if (kx != ky)
		return kx < ky ? -1 : 1;
	return (x->j > y->j) - (x->j < y->j);
}

static bool same_class(const struct stream *x, const struct stream *y)
{
	if (x->e != y->e)
		return false;
	if (!x->e)
		return x->w == y->w;
	return (x->w - y->w) % x->e == 0;
}

/*
 * Every slice holding a word stream p touches in T iterations is ours already.  A free one sends
 * the summary to the expansion, which claims it when an access first comes, in the order the
 * accesses come: claiming it here, before an access of another stream, in another window, that
 * runs first, would turn that access into the alias instead.
 */
static bool slices_ours(const struct dep *d, const struct stream *p, uint64_t T)
{
	uint64_t step = (uint64_t)llabs(p->e) << 3, first = (uint64_t)p->lo << 3;
	uint64_t last = (uint64_t)p->hi << 3;

	if (step > SLICE) {   /* touches far apart: each one */
		for (uint64_t k = 0; k < T; k++)
			if (!mn_shadow_owns(d->sh, (uint64_t)(p->w + (int64_t)k * p->e) << 3))
				return false;
		return true;
	}
	/* touches at most a slice apart: every slice between the first and the last has one */
	for (uint64_t a = first; a <= last; a = (a | (SLICE - 1)) + 1)
		if (!mn_shadow_owns(d->sh, a))
			return false;
	return true;
}

/*
 * The streams of a summary (s[], n of them at most) for the closed form: 0 streams taken, the
 * number taken, or -1 when the closed form does not apply.  Interns each stream's access id as
 * the expansion's first access would.
 */
static int closed_streams(struct dep *d, uint64_t T, const struct mn_summary_access *acc,
			  unsigned n, struct stream *s)
{
	uint32_t ctx = mn_ctx_current(d->ctx);
	unsigned m = 0;

	for (unsigned j = 0; j < n; j++) {
		const struct mn_summary_access *a = &acc[j];
		struct stream *p = &s[m];
		__int128 last = (__int128)a->start + (__int128)(T - 1) * a->step;
		struct site *st;

		if (!a->size)
			continue;   /* touches nothing, as on_access() */
		if (a->size > 8 || a->step % 8 || (a->start & 7) + a->size > 8 || last < 0 ||
		    last >= (__int128)1 << 48 || a->start >= UINT64_C(1) << 48)
			return -1;
		st = mn_sitevec_get(&d->sites, a->site);
		if (st && (st->ctx != ctx || !st->aid)) {
			st->ctx = ctx;
			st->aid = dep_access_intern(&d->acc, a->site, ctx);
		}
		if (!st || !st->aid)
			return -1;   /* the expansion counts what is lost */
		*p = (struct stream){ .w = (int64_t)(a->start >> 3), .e = a->step / 8, .aid = st->aid,
				      .j = j, .store = a->store };
		p->lo = p->e >= 0 ? p->w : (int64_t)(last >> 3);
		p->hi = p->e >= 0 ? (int64_t)(last >> 3) : p->w;
		if (mn_shadow_window(d->sh, (uint64_t)p->lo << 3) !=
		    mn_shadow_window(d->sh, (uint64_t)p->hi << 3) || !slices_ours(d, p, T))
			return -1;
		p->sw = mn_shadow_map(d->sh, (uint64_t)p->w << 3);
		m++;
	}
	/* Streams of different steps must keep apart: they would meet on words out of order. */
	qsort(s, m, sizeof(*s), by_range);
	for (unsigned i = 1, c = 0; i < m; i++) {
		if (s[i].lo > s[c].hi) {
			c = i;
			continue;
		}
		if (s[i].e != s[c].e)
			return -1;
		if (s[i].hi > s[c].hi)
			s[c].hi = s[i].hi;   /* the component's end; ranges are not used after this */
	}
	qsort(s, m, sizeof(*s), by_class);
	return (int)m;
}

#define CHUNK 256          /* iterations swept at once: the streams' shadow stays in cache */

/* Finds each planned class's twins (struct stream), in sigma order. */
static void twins(struct stream *s, unsigned m)
{
	for (unsigned k = 0; k < m; k++) {
		struct stream *q = &s[k];

		for (unsigned p = 0; p < k && !q->twin_of; p++) {
			struct stream *o = &s[p];

			if (o->twin_of || o->t != q->t || o->brw != q->brw || o->ntwins == 3)
				continue;
			o->twin_aid[o->ntwins] = q->aid;
			o->twin_store[o->ntwins++] = q->store;
			q->twin_of = true;
		}
	}
}

/* The summarized loop's accesses in closed form, its frame on top: s[] sorted by class. */
static void closed(struct dep *d, struct stream *s, unsigned m, uint64_t T, uint32_t inv)
{
	for (unsigned i = 0, c; i < m; i = c) {
		for (c = i + 1; c < m && same_class(&s[i], &s[c]); c++)
			;
		if (!s[i].e) {
			closed_word(d, s + i, c - i, T, inv);
			continue;
		}
		for (unsigned k = i; k < c; k++)
			s[k].t = (uint64_t)((s[i].w - s[k].w) / s[i].e);
		class_plan(d, s + i, c - i, T);
		twins(s + i, c - i);
	}
	for (uint64_t k0 = 0; k0 < T; k0 += CHUNK)
		closed_chunk(d, s, m, k0, T - k0 > CHUNK ? k0 + CHUNK : T, inv);
	for (unsigned i = 0; i < m; i++) {
		if (!s[i].twin_of)
			run_flush_stream(d, &s[i].run[0], &s[i], 0);
		run_flush_stream(d, &s[i].run[1], &s[i], 1);
	}
}

/* The iterations and accesses of a summary as the driver would send them, one by one. */
static void expand(struct dep *d, uint32_t site, uint64_t T, const struct mn_summary_access *acc,
		   unsigned n)
{
	for (uint64_t k = 0; k < T; k++) {
		dep_loop_iter(d, site);
		for (unsigned j = 0; j < n; j++) {
			uint64_t a = (acc[j].start + k * (uint64_t)acc[j].step) &
				     ((UINT64_C(1) << 48) - 1);

			/* with several workers, what the driver would have given this one: its own
			 * pages' accesses and every access across pages */
			if (d->nw > 1 && !owns_word(d, (int64_t)(a >> 3)) &&
			    !(acc[j].size > 1 && (a ^ (a + acc[j].size - 1)) >> PAGE_SHIFT))
				continue;
			on_access(d, acc[j].site, a, acc[j].size, acc[j].store);
		}
	}
}

static void dep_loop_summary(void *st, uint32_t site, uint64_t T,
			     const struct mn_summary_access *acc, unsigned n)
{
	struct dep *d = st;
	struct stream buf[16], *s = n <= 16 ? buf : malloc(n * sizeof(*s));
	struct site *ls;
	struct loop *l;
	int m = -1;

	dep_loop_invoke(d, site);
	l = top_loop(d, site);
	if (T && s && l && !d->target_mode && d->sh && (uint64_t)d->clock + T <= d->clock_limit)
		m = closed_streams(d, T, acc, n, s);
	if (m < 0) {
		d->expanded++;
		expand(d, site, T, acc, n);
	} else {
		uint32_t inv = d->clock;

		d->closed++;
		/* the iterations' own events: clock, counts, starts, the context's count */
		d->clock += (uint32_t)T;
		if ((ls = mn_sitevec_get(&d->sites, site)))
			ls->iterations += T;
		mn_ctx_iter_n(d->ctx, site, T);
		if (!dep_starts_add_run(&l->starts, inv + 1, T))
			d->nomem++;
		closed(d, s, (unsigned)m, T, inv);
	}
	if (s != buf)
		free(s);
	dep_loop_exit(d, site);
}

/* ---- Setup and merge ---------------------------------------------------------------------- */

/* MNEMO_DEP_LOOP (README rule 8): a loop site id, or file:line with the file as in the site table
 * or its last path components.  Marks every loop it names as a target; -EINVAL for none. */
static int target_resolve(struct dep *d, const struct mn_run *run, const char *want)
{
	const char *colon = strrchr(want, ':');
	char *end;
	unsigned long line = strtoul(colon ? colon + 1 : want, &end, 10);
	size_t flen = colon ? (size_t)(colon - want) : 0;
	unsigned found = 0;

	for (uint32_t id = 1; *want && !*end && id <= mn_run_site_count(run); id++) {
		const struct mn_run_site *rs = mn_run_site(run, id);
		size_t len = strlen(rs->file);
		struct site *s;

		if (strcmp(rs->kind, "loop") || (colon ? rs->line != line : id != line))
			continue;
		if (colon && (len < flen || memcmp(rs->file + len - flen, want, flen) ||
			      (len > flen && rs->file[len - flen - 1] != '/')))
			continue;
		if (!(s = mn_sitevec_get(&d->sites, id)))
			return -ENOMEM;
		s->target = true;
		found++;
	}
	if (!found)
		fprintf(stderr, "mnemo: dependence: MNEMO_DEP_LOOP=%s names no loop (give a loop "
			"site id or file:line)\n", want);
	d->target_mode = true;
	return found ? 0 : -EINVAL;
}

/* With several workers: which pages are this worker's (on_span()). */
static void dep_shard_worker(void *st, unsigned id, unsigned nworkers)
{
	struct dep *d = st;

	d->wid = id;
	d->nw = nworkers;
}

/* For the driver's prefetch of each access's word (module.h); NULL if it could not be had. */
static struct mn_shadow *dep_shadow(void *st)
{
	return ((struct dep *)st)->sh;
}

static void dep_fini(void *st)
{
	struct dep *d = st;

	for (unsigned i = 0; i < d->loop_cap; i++) {
		dep_starts_free(&d->loops[i].starts);
		free(d->loops[i].outer);
		free(d->loops[i].outer_used);
	}
	free(d->loops);
	mn_rows_free(&d->deps);
	dep_spans_free(&d->span_rows);
	dep_accesses_free(&d->acc);
	mn_sitevec_free(&d->sites);
	mn_shadow_destroy(d->sh);
	mn_ctx_destroy(d->ctx);
	memset(d, 0, sizeof(*d));
}

static int dep_init(void *st, const struct mn_run *run)
{
	struct dep *d = st;
	int err = mn_module_options(&mn_module_dependence, d);

	if (err)
		return err;
	d->run = run;
	d->clock_limit = (uint32_t)d->clock_opt;
	err = mn_rows_memo_init(&d->deps, MEMO_BITS);
	if (!err)
		err = mn_ctx_create(&d->ctx, CTX_DEPTH);
	if (!err)
		err = mn_shadow_create(&d->sh, 8, sizeof(struct word));
	if (!err)
		err = mn_sitevec_init(&d->sites, sizeof(struct site), mn_run_site_count(run));
	if (!err && *d->loop_opt)
		err = target_resolve(d, run, d->loop_opt);
	if (err)
		dep_fini(d);
	return err;
}

/* from's context id, interned in into's context manager (its sites, outermost first). */
static uint32_t ctx_translate(struct dep *into, const struct dep *from, uint32_t id)
{
	uint32_t sites[CTX_DEPTH], t = 0;
	int depth = mn_ctx_decode(from->ctx, id, sites, CTX_DEPTH);

	for (int k = 0; k < depth && k < CTX_DEPTH; k++)
		t = mn_ctx_intern(into->ctx, t, sites[k]);
	return t;
}

/* A row both workers counted for the same n accesses that span them: once each (rule 6). */
static void span_dup(void *arg, const uint64_t *k, uint64_t n)
{
	struct mn_row *e = mn_rows_get(&((struct dep *)arg)->deps, k);

	if (e && e->count > n)
		e->count -= n;
}

/*
 * Workers own disjoint words: their dependences add up, but for accesses that span workers,
 * which count a row once for all their words.  Loops and contexts: all saw the same.
 * A restored `from` is another run (`mnemo merge`, README "Merging"): its loop counts and clock
 * resets add too, and its context ids, its own, are interned anew in into's context manager.
 */
static void dep_merge(void *into_, void *from_)
{
	struct dep *into = into_, *from = from_;
	const struct mn_row *f;

	outer_pay_all(into);
	outer_pay_all(from);
	pending_flush_all(into);
	pending_flush_all(from);
	into->aliases += from->aliases + (from->sh ? mn_shadow_aliases(from->sh) : 0);
	into->nomem += from->nomem;
	into->clipped += from->clipped;
	into->closed += from->closed;
	into->expanded += from->expanded;
	if (from->restored) {
		struct mn_ctx_stats cs;

		mn_ctx_stats(from->ctx, &cs);
		into->nomem += cs.nomem;
		into->resets += from->resets;
		into->target_mode |= from->target_mode;
		for (uint32_t id = 0; id < from->sites.n; id++) {
			const struct site *f = mn_sitevec_find(&from->sites, id);
			struct site *t;

			if (!f || !(f->loop || f->target || f->invocations || f->iterations))
				continue;
			if (!(t = mn_sitevec_get(&into->sites, id))) {
				into->nomem++;
				continue;
			}
			t->loop |= f->loop;
			t->target |= f->target;
			t->invocations += f->invocations;
			t->iterations += f->iterations;
		}
	}
	for (struct mn_rows_cursor c = { 0 }; (f = mn_rows_next(&from->deps, &c));) {
		struct dep_key k = key_of(f);
		struct mn_row *e;

		if (from->restored && from->context) {
			k.src_ctx = ctx_translate(into, from, k.src_ctx);
			k.dst_ctx = ctx_translate(into, from, k.dst_ctx);
		}
		e = rows_find(&into->deps, &k);
		if (!e) {
			into->nomem += f->count;
			continue;
		}
		e->count += f->count;
		e->min = f->min < e->min ? f->min : e->min;
		e->max = f->max > e->max ? f->max : e->max;
	}
	if (dep_spans_merge(&into->span_rows, &from->span_rows, span_dup, into))
		into->nomem++;
}

/* ---- Restore (`mnemo merge`) ----------------------------------------------------------------- */

/* A context list of a row (`src_context`, `dst_context`): its sites interned into an id. */
static int restore_ctx(struct dep *d, const struct mn_profile *prof, const struct mn_pnode *row,
		       const char *key, uint32_t *id, char *err, size_t errlen)
{
	const struct mn_pnode *seq = mn_pfield_node(prof, row, key, MN_PNODE_SEQ, err, errlen);
	uint32_t t = 0;

	if (!seq)
		return -EINVAL;
	if (mn_pnode_len(seq) > CTX_DEPTH)
		return mn_pnode_errorf(prof, seq, err, errlen, "field '%s': more than %d frames",
				       key, CTX_DEPTH);
	for (size_t i = 0; i < mn_pnode_len(seq); i++) {
		uint64_t site;

		if (mn_pnode_u64(mn_pnode_at(seq, i), &site) || !site || site > UINT32_MAX)
			return mn_pnode_errorf(prof, mn_pnode_at(seq, i), err, errlen,
					       "field '%s': expected a site id", key);
		t = mn_ctx_intern(d->ctx, t, (uint32_t)site);
	}
	*id = t;
	return 0;
}

/* mn_pfield_*() for a field the schema requires: a missing one is malformed too. */
#define REQUIRED(call) ({ int r_ = (call); r_ == -ENOENT ? -EINVAL : r_; })

static int restore_row(struct dep *d, const struct mn_profile *prof, const struct mn_pnode *row,
		       char *err, size_t errlen)
{
	struct dep_key k = { 0 };
	struct mn_row *e;
	const char *kind;
	uint64_t count, dmin = UINT64_MAX, dmax = 0;
	bool carried;
	int ret, r;

	if ((ret = REQUIRED(mn_pfield_u32(prof, row, "loop", &k.loop, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_str(prof, row, "kind", &kind, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u32(prof, row, "src", &k.src, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u32(prof, row, "dst", &k.dst, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_bool(prof, row, "carried", &carried, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u64(prof, row, "count", &count, err, errlen))))
		return ret;
	for (r = 0; r < 3 && strcmp(kind, kind_name[r]); r++)
		;
	if (r == 3)
		return mn_pnode_errorf(prof, mn_pnode_get(row, "kind"), err, errlen,
				       "field 'kind': expected raw, war or waw, found '%s'", kind);
	if (!count)
		return mn_pnode_errorf(prof, mn_pnode_get(row, "count"), err, errlen,
				       "field 'count': a row counts at least 1");
	k.kind = (uint8_t)r;
	k.carried = carried;
	if ((ret = mn_pfield_u32(prof, row, "src_via", &k.src_via, err, errlen)) && ret != -ENOENT)
		return ret;
	if ((ret = mn_pfield_u32(prof, row, "dst_via", &k.dst_via, err, errlen)) && ret != -ENOENT)
		return ret;
	if (carried &&
	    ((ret = REQUIRED(mn_pfield_u64(prof, row, "min_distance", &dmin, err, errlen))) ||
	     (ret = REQUIRED(mn_pfield_u64(prof, row, "max_distance", &dmax, err, errlen)))))
		return ret;
	if (d->context &&
	    ((ret = restore_ctx(d, prof, row, "src_context", &k.src_ctx, err, errlen)) ||
	     (ret = restore_ctx(d, prof, row, "dst_context", &k.dst_ctx, err, errlen))))
		return ret;
	if (!(e = rows_find(&d->deps, &k)))
		return -ENOMEM;
	e->count += count;   /* a row twice (only by hand) adds, as merge would */
	e->min = dmin < e->min ? dmin : e->min;
	e->max = dmax > e->max ? dmax : e->max;
	return 0;
}

/* The section back into a state fresh from dep_init(): the section's settings, not the env's. */
static int dep_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *section,
		       char *err, size_t errlen)
{
	struct dep *d = st;
	const struct mn_pnode *loops, *rows, *lost, *target;
	uint64_t gran;
	int ret;

	if ((ret = REQUIRED(mn_pfield_u64(prof, section, "granularity", &gran, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_bool(prof, section, "context", &d->context, err, errlen))))
		return ret;
	if (gran != 8)
		return mn_pnode_errorf(prof, mn_pnode_get(section, "granularity"), err, errlen,
				       "field 'granularity': expected 8, found %llu",
				       (unsigned long long)gran);
	for (uint32_t id = 0; id < d->sites.n; id++) {   /* MNEMO_DEP_LOOP of this process */
		struct site *s = mn_sitevec_find(&d->sites, id);

		if (s)
			s->target = false;
	}
	d->target_mode = false;
	target = mn_pnode_get(section, "target");
	if (target && !mn_pfield_node(prof, section, "target", MN_PNODE_SEQ, err, errlen))
		return -EINVAL;
	for (size_t i = 0; target && i < mn_pnode_len(target); i++) {
		uint64_t id;
		struct site *s;

		if (mn_pnode_u64(mn_pnode_at(target, i), &id) || !id || id > UINT32_MAX)
			return mn_pnode_errorf(prof, mn_pnode_at(target, i), err, errlen,
					       "field 'target': expected a loop site id");
		if (!(s = mn_sitevec_get(&d->sites, (uint32_t)id)))
			return -ENOMEM;
		s->target = true;
	}
	d->target_mode = target != NULL;

	if (!(loops = mn_pfield_node(prof, section, "loops", MN_PNODE_SEQ, err, errlen)) ||
	    !(rows = mn_pfield_node(prof, section, "dependences", MN_PNODE_SEQ, err, errlen)) ||
	    !(lost = mn_pfield_node(prof, section, "lost", MN_PNODE_MAP, err, errlen)))
		return -EINVAL;
	for (size_t i = 0; i < mn_pnode_len(loops); i++) {
		const struct mn_pnode *row = mn_pnode_at(loops, i);
		uint32_t id;
		uint64_t inv, iter;
		struct site *s;

		if ((ret = REQUIRED(mn_pfield_u32(prof, row, "loop", &id, err, errlen))) ||
		    (ret = REQUIRED(mn_pfield_u64(prof, row, "invocations", &inv, err, errlen))) ||
		    (ret = REQUIRED(mn_pfield_u64(prof, row, "iterations", &iter, err, errlen))))
			return ret;
		if (!id)
			return mn_pnode_errorf(prof, mn_pnode_get(row, "loop"), err, errlen,
					       "field 'loop': expected a loop site id");
		if (!(s = mn_sitevec_get(&d->sites, id)))
			return -ENOMEM;
		s->loop = true;
		s->invocations += inv;
		s->iterations += iter;
	}
	for (size_t i = 0; i < mn_pnode_len(rows); i++)
		if ((ret = restore_row(d, prof, mn_pnode_at(rows, i), err, errlen)))
			return ret;
	if ((ret = REQUIRED(mn_pfield_u64(prof, lost, "aliases", &d->aliases, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u64(prof, lost, "nomem", &d->nomem, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u64(prof, lost, "clipped", &d->clipped, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u64(prof, lost, "clock_resets", &d->resets, err, errlen))))
		return ret;
	d->restored = true;
	return 0;
}

/* ---- Emit ------------------------------------------------------------------------------------ */

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

/* The rows' order (mn_rows_sorted()): loop, src, dst, kind, carried, src_via, dst_via, then the
 * contexts by rank[id] when rank is not NULL (ctx_ranks()), else by id. */
static int by_key(const void *a_, const void *b_, void *rank_)
{
	struct dep_key a = key_of(*(struct mn_row *const *)a_);
	struct dep_key b = key_of(*(struct mn_row *const *)b_);
	const uint32_t *rank = rank_;
	int c;

	if ((c = cmp_u32(a.loop, b.loop)) || (c = cmp_u32(a.src, b.src)) ||
	    (c = cmp_u32(a.dst, b.dst)) || (c = cmp_u32(a.kind, b.kind)) ||
	    (c = cmp_u32(a.carried, b.carried)) || (c = cmp_u32(a.src_via, b.src_via)) ||
	    (c = cmp_u32(a.dst_via, b.dst_via)))
		return c;
	if (rank && ((c = cmp_u32(rank[a.src_ctx], rank[b.src_ctx])) ||
		     (c = cmp_u32(rank[a.dst_ctx], rank[b.dst_ctx]))))
		return c;
	if ((c = cmp_u32(a.src_ctx, b.src_ctx)))
		return c;
	return cmp_u32(a.dst_ctx, b.dst_ctx);
}

/*
 * Contexts ranked by their sites (outermost first, a prefix before its extensions), for the rows'
 * order: ids are in order of first appearance, which differs between runs, and a merged profile
 * must not depend on which run came first.  rank[id] for every id a row uses; NULL without memory.
 */
struct ctx_path {
	uint32_t id;
	int depth;
	uint32_t sites[CTX_DEPTH];
};

static int cmp_path(const void *a_, const void *b_)
{
	const struct ctx_path *a = a_, *b = b_;

	for (int k = 0; k < a->depth && k < b->depth; k++)
		if (a->sites[k] != b->sites[k])
			return a->sites[k] < b->sites[k] ? -1 : 1;
	return (a->depth > b->depth) - (a->depth < b->depth);
}

static uint32_t *ctx_ranks(const struct dep *d)
{
	uint32_t nids = mn_ctx_id_count(d->ctx), n = 0;
	uint32_t *rank = calloc(nids ? nids : 1, sizeof(*rank));
	uint8_t *used = calloc(nids ? nids : 1, 1);
	struct ctx_path *paths = NULL;
	const struct mn_row *e;

	if (!rank || !used)
		goto fail;
	for (struct mn_rows_cursor c = { 0 }; (e = mn_rows_next(&d->deps, &c));) {
		struct dep_key k = key_of(e);

		if (k.src_ctx < nids && k.dst_ctx < nids) {
			n += !used[k.src_ctx];
			used[k.src_ctx] = 1;
			n += !used[k.dst_ctx];
			used[k.dst_ctx] = 1;
		}
	}
	paths = malloc((n ? n : 1) * sizeof(*paths));
	if (!paths)
		goto fail;
	n = 0;
	for (uint32_t id = 0; id < nids; id++) {
		if (!used[id])
			continue;
		paths[n].id = id;
		paths[n].depth = mn_ctx_decode(d->ctx, id, paths[n].sites, CTX_DEPTH);
		if (paths[n].depth > CTX_DEPTH)
			paths[n].depth = CTX_DEPTH;
		n++;
	}
	qsort(paths, n, sizeof(*paths), cmp_path);
	for (uint32_t i = 0; i < n; i++)
		rank[paths[i].id] = i;
	free(paths);
	free(used);
	return rank;
fail:
	free(rank);
	free(used);
	return NULL;
}

static void emit_via(struct mn_prof *p, const char *key, uint32_t via)
{
	if (via)
		mn_prof_kv_site(p, key, via);
}

static void emit_ctx(const struct dep *d, struct mn_prof *p, const char *key, uint32_t ctx)
{
	mn_prof_key(p, key);
	mn_ctx_emit(d->ctx, p, ctx);
}

static int dep_emit(void *st, struct mn_prof *p)
{
	struct dep *d = st;
	uint32_t *rank;

	outer_pay_all(d);
	pending_flush_all(d);
	rank = d->context ? ctx_ranks(d) : NULL;
	struct mn_row **v = d->context && !rank ? NULL : mn_rows_sorted(&d->deps, by_key, rank);
	uint32_t nsites = (uint32_t)(d->sites.n ? d->sites.n - 1 : 0);
	struct mn_ctx_stats cs;

	free(rank);
	if (!v)
		return -ENOMEM;
	if (d->run && mn_run_verbose(d->run) && (d->closed || d->expanded))
		fprintf(stderr, "mnemo: dependence: %" PRIu64 " loop summaries in closed form, %"
			PRIu64 " expanded\n", d->closed, d->expanded);
	mn_ctx_stats(d->ctx, &cs);
	if (nsites < mn_run_site_count(d->run))
		nsites = mn_run_site_count(d->run);
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "granularity", 8);
	mn_prof_kv_bool(p, "context", d->context);
	if (d->target_mode) {
		mn_prof_key(p, "target");
		mn_prof_seq_begin_flow(p);
		for (uint32_t id = 1; id <= nsites; id++) {
			const struct site *s = mn_sitevec_find(&d->sites, id);

			if (s && s->target)
				mn_prof_site(p, id);
		}
		mn_prof_seq_end(p);
	}
	mn_prof_key(p, "loops");
	mn_prof_seq_begin(p);
	for (uint32_t id = 1; id <= nsites; id++) {
		const struct site *s = mn_sitevec_find(&d->sites, id);

		if (d->target_mode ? !(s && s->target) :
		    !(s && s->loop) && strcmp(mn_run_site_kind(d->run, id), "loop"))
			continue;
		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "loop", id);
		mn_prof_kv_u64(p, "invocations", s ? s->invocations : 0);
		mn_prof_kv_u64(p, "iterations", s ? s->iterations : 0);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	mn_prof_key(p, "dependences");
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < d->deps.n; i++) {
		const struct mn_row *e = v[i];
		struct dep_key k = key_of(e);

		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "loop", k.loop);
		mn_prof_kv_str(p, "kind", kind_name[k.kind]);
		mn_prof_kv_site(p, "src", k.src);
		emit_via(p, "src_via", k.src_via);
		mn_prof_kv_site(p, "dst", k.dst);
		emit_via(p, "dst_via", k.dst_via);
		mn_prof_kv_bool(p, "carried", k.carried);
		mn_prof_kv_u64(p, "count", e->count);
		if (k.carried) {
			mn_prof_kv_u64(p, "min_distance", e->min);
			mn_prof_kv_u64(p, "max_distance", e->max);
		}
		if (d->context) {
			emit_ctx(d, p, "src_context", k.src_ctx);
			emit_ctx(d, p, "dst_context", k.dst_ctx);
		}
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	mn_prof_key(p, "lost");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "aliases", d->aliases + (d->sh ? mn_shadow_aliases(d->sh) : 0));
	mn_prof_kv_u64(p, "nomem", d->nomem + cs.nomem);
	mn_prof_kv_u64(p, "clipped", d->clipped);
	mn_prof_kv_u64(p, "clock_resets", d->resets);
	mn_prof_map_end(p);
	mn_prof_map_end(p);
	free(v);
	return 0;
}

/* What the run tracked (README, "Merging"): profiles merge only with the same. */
/* Settings (README); the clock limit is for the tests of clock resets. */
static const struct mn_option dep_options[] = {
	{ "MNEMO_DEP_CONTEXT", MN_OPT_BOOL, offsetof(struct dep, context), "0", 0, 0, NULL,
	  "also key each row by the calling contexts of both accesses" },
	{ "MNEMO_DEP_LOOP", MN_OPT_TEXT, offsetof(struct dep, loop_opt), "", 0, 0, NULL,
	  "only the loops at file:line (a loop site's file, or its last path components) or of a "
	  "loop site id" },
	{ "MNEMO_DEP_CLOCK_LIMIT", MN_OPT_UINT, offsetof(struct dep, clock_opt), "4294967295", 2,
	  4294967295.0, NULL, NULL },
	{ 0 },
};

static const char *const dep_settings[] = { "granularity", "context", "target", NULL };

const struct mn_module mn_module_dependence = {
	.name = "dependence",
	.doc = "memory dependences per loop (raw/war/waw), loop-carried or not, with distances",
	.state_size = sizeof(struct dep),
	.shard = MN_SHARD_ADDRESS,
	.shard_shift = PAGE_SHIFT,
	.init = dep_init,
	.fini = dep_fini,
	.load = dep_load,
	.store = dep_store,
	.func_entry = dep_func_entry,
	.func_exit = dep_func_exit,
	.loop_invoke = dep_loop_invoke,
	.loop_iter = dep_loop_iter,
	.loop_exit = dep_loop_exit,
	.loop_summary = dep_loop_summary,
	.shard_worker = dep_shard_worker,
	.shadow = dep_shadow,
	.merge = dep_merge,
	.emit = dep_emit,
	.restore = dep_restore,
	.settings = dep_settings,
	.options = dep_options,
};
