/*
 * The dependence module's state and the helpers its files share (module-internal): the shadow
 * word, the loop frames, the counts owed to outer frames and the rows' memo paths.  The files:
 * dependence.c (the clock, the loops and the reporting rule: the hot path), dep_closed.c and
 * dep_summary.c (loop summaries in closed form), dep_setup.c (options, init, merge, the module),
 * dep_io.c (emit and restore); the access table, span lists and iteration starts are backend
 * components (backend/accesses.h, spans.h, starts.h).
 */
#ifndef MNEMO_DEP_H
#define MNEMO_DEP_H

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "context.h"
#include "accesses.h"
#include "spans.h"
#include "starts.h"
#include "map.h"
#include "module.h"
#include "shadow.h"
#include "sitevec.h"

/* The key of README's schema (the rows: a row map, map.h). */
enum dep_kind { DEP_RAW, DEP_WAR, DEP_WAW };

/* One row's key, all decoded values (never module-local ids), so that the workers' rows merge
 * without translation.  32 bytes, no implicit padding: a row map's MN_ROWS_KEY_WORDS words. */
struct dep_key {
	uint32_t loop;               /* loop site; 0: the source and destination share no loop */
	uint32_t src, dst;           /* access sites */
	uint32_t src_via, dst_via;   /* function entered from the loop's body; 0: none */
	uint32_t src_ctx, dst_ctx;   /* context ids with --context, else 0 */
	uint8_t kind;                /* enum dep_kind */
	uint8_t carried;
	uint16_t pad;                /* 0 */
};
_Static_assert(sizeof(struct dep_key) == 32, "dep_key is a row map's key of four words");

#define PAGE_SHIFT 12        /* shard_shift: workers own whole 4 KiB pages */
#define CTX_DEPTH  64        /* context ids encode the outermost 64 frames */
#define MEMO_BITS  14        /* 2^14 rows remembered by the ids that make their key: 1 MiB */

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
	struct mn_starts starts;  /* clocks at its iteration starts */
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
	struct mn_accesses acc;
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
	struct mn_spans span_rows;
	struct mn_rows_memo memo[1u << MEMO_BITS];   /* the rows' memo (mn_rows_memo_use()) */
};

/* ---- Rows: through the memo, counted once per destination access ----------------------------- */

/* Counts an instance in row e (once per destination access: rule 6) with its distance. */
static inline void count(struct dep *d, struct mn_row *e, bool carried, uint64_t distance)
{
	if (e->stamp != d->stamp) {
		e->stamp = d->stamp;
		e->count++;
		if (__builtin_expect(d->spanning, 0) && !mn_spans_add(&d->span_rows, mn_row_key(e), d->spans))
			d->nomem++;
	}
	if (carried && distance < e->min)
		e->min = distance;
	if (carried && distance > e->max)
		e->max = distance;
}

/* Below slot b's pending instances into its rows. */
static inline void below_flush(struct below *b)
{
	if (!b->pend)
		return;
	for (unsigned m = 0; m < b->n && b->n <= BELOW_MAX; m++)
		b->e[m]->count += (int)m == b->dup ? b->pendc : b->pend;
	b->pend = b->pendc = 0;
}

/* Every slot's, memo and below: before the rows move (the table grows) or are read (merge,
 * emit). */
static inline void pending_flush_all(struct dep *d)
{
	mn_rows_memo_flush(&d->deps);
	for (size_t i = 0; i < sizeof(d->below) / sizeof(d->below[0]); i++)
		below_flush(&d->below[i]);
}

/* The row of key k in rows, found or added with count 0 (to count at once); NULL without memory. */
static inline struct mn_row *rows_find(struct mn_rows *rows, const struct dep_key *k)
{
	uint64_t w[MN_ROWS_KEY_WORDS];

	memcpy(w, k, sizeof(w));
	return mn_rows_get(rows, w);
}

/* A row's key. */
static inline struct dep_key key_of(const struct mn_row *e)
{
	struct dep_key k;

	memcpy(&k, mn_row_key(e), sizeof(k));
	return k;
}

/* row()'s miss (dependence.c): the via walks and the row map; fills memo slot m. */
struct mn_row *dep_row_slow(struct dep *d, struct mn_rows_memo *m, uint32_t src, uint32_t dst,
			    const struct loop *l, enum dep_kind kind, bool carried);

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
	return &d->memo[((ph ^ (l ? l->mhash : 0) ^ kc * 0x9e3779b1u) * 0x85ebca6bu) >>
			(32 - MEMO_BITS)];
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
	return dep_row_slow(d, m, (uint32_t)pair, (uint32_t)(pair >> 32), l, kind, carried);
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
		if ((e = dep_row_slow(d, m, (uint32_t)pair, (uint32_t)(pair >> 32), l, kind, carried)))
			count(d, e, carried, distance);
		return;
	}
	mn_rows_memo_count(m, carried, distance);
}

static inline uint32_t pair_hash(uint32_t src, uint32_t dst, enum dep_kind kind)
{
	return src * 0x9e3779b1u ^ dst * 0x85ebca77u ^ (uint32_t)kind * 0x165667b1u;
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

/* dependence.c */
void dep_loop_invoke(void *st, uint32_t site);
void dep_loop_iter(void *st, uint32_t site);
void dep_loop_exit(void *st, uint32_t site);
void dep_func_entry(void *st, uint32_t site);
void dep_func_exit(void *st, uint32_t site);
void dep_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size);
void dep_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size);
/* One access as the driver gives it (a summary's expansion). */
void dep_access(struct dep *d, uint32_t site, uint64_t addr, uint32_t size, bool store);
struct loop *dep_top_loop(struct dep *d, uint32_t site);
bool dep_outer_add(struct loop *l, uint64_t pair, enum dep_kind kind, uint64_t c);
void dep_outer_count(struct dep *d, unsigned i, uint64_t pair, enum dep_kind kind, uint64_t c);
void dep_outer_pay_all(struct dep *d);
/* Every count still owed or pending into the rows: before they are read (merge, emit). */
static inline void dep_flush(struct dep *d)
{
	dep_outer_pay_all(d);
	pending_flush_all(d);
}

/* dep_summary.c */
void dep_loop_summary(void *st, uint32_t site, uint64_t T, const struct mn_summary_access *acc,
		      unsigned n);

/* dep_io.c */
void dep_merge(void *into, void *from);
int dep_emit(void *st, struct mn_prof *p);
int dep_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *section,
		char *err, size_t errlen);

extern const struct mn_module mn_module_dependence;   /* dep_setup.c */

#endif /* MNEMO_DEP_H */
