/*
 * Rows per loop frame: counts instances of a relation between two accesses (a source and a
 * destination, by access id, accesses.h) of some kind, such as a memory dependence, into a row
 * map (map.h) in the rows of the loop frames that hold both (loopnest.h), each row at most once
 * per destination access, with the distance in iterations where the innermost frame carries it.
 * Not thread-safe: one per worker.
 *
 * The caller makes each row's key, called on a miss only (key()): the row of an instance depends
 * only on its accesses, the loop frame, the kind and whether it is carried, so a memo keyed by
 * those (map.h's) skips the key and the row lookup for the instances that repeat, most of them,
 * and takes their counts and distances (tally()): a row map of megabytes is touched once per memo
 * slot fill, not once per instance.  Short key: src | dst << 32, the frame's fid | site << 32,
 * kind << 1 | carried.  The hot functions are inline, for the caller's handlers.
 *
 * Frames below the innermost: an instance counts its row in the innermost frame J holding both
 * accesses at once and owes 1 to frame J - 1 (struct mn_nestrows_owed), which pays what it owes
 * into its rows when it ends (mn_nestrows_pay(), the nest's close hook) and hands it to the frame
 * below: O(1) per instance, whatever the depth.  Only where counting once per destination access
 * merges nothing, so that counts simply add: accesses that touch one word (one instance per pair
 * and kind) and frames below that are all of different loops.  Below a loop met twice (a
 * recursion: mn_loop.dup) several frames share a row: struct mn_nestrows_below.
 */
#ifndef MNEMO_NESTROWS_H
#define MNEMO_NESTROWS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "loopnest.h"
#include "map.h"
#include "spans.h"

#define MN_NESTROWS_MEMO_BITS 14   /* 2^14 rows remembered: 1 MiB */
#define MN_NESTROWS_BELOW_MAX 6
#define MN_NESTROWS_BELOW     512

/* Counts owed by one frame to the not-carried rows of its own and every frame below it. */
struct mn_nestrows_owe {
	uint64_t pair;             /* src | dst << 32; 0: an empty slot */
	uint64_t count;
	uint32_t kind;
};

struct mn_nestrows_owed {
	struct mn_nestrows_owe *v; /* [cap] */
	uint32_t *used;            /* [cap / 2]: the slots in use, n of them */
	uint32_t cap, n;
};

/*
 * The not-carried rows of the frames below J = loops[i - 1] for one (src, dst, kind), when a loop
 * has two frames on the stack: they depend only on the pair, the kind and the stack below J,
 * which lives as long as J's invocation, so they are found once per (pair, kind, J's serial),
 * distinct, and each instance counts those.  More than BELOW_MAX distinct rows, or one that memory
 * could not hold: walked.
 */
struct mn_nestrows_below {
	uint64_t pair;             /* 0: an empty slot */
	uint64_t serial;           /* J's invocation serial */
	unsigned gen;              /* the row map's gen when e[] was found */
	uint32_t kind, n;          /* n > BELOW_MAX: walk */
	struct mn_row *e[MN_NESTROWS_BELOW_MAX];
	/* Instances of one-word accesses counted here and not yet in e[] (as memo slots hold
	 * theirs), pendc of them carried in J.  e[dup] is J's own not-carried row (-1: none),
	 * which an instance not carried in J counts there, once. */
	uint32_t pend, pendc;
	int dup;
};

/* The row key of an instance in frame l (NULL: no frame holds both), MN_ROWS_KEY_WORDS words. */
typedef void mn_nestrows_key_fn(void *arg, uint64_t *key, uint32_t src, uint32_t dst,
				const struct mn_loop *l, unsigned kind, bool carried);

struct mn_nestrows {
	struct mn_rows *rows;      /* the caller's row map */
	struct mn_loopnest *nest;
	mn_nestrows_key_fn *key;
	void *arg;
	uint64_t *lost;            /* instances lost for want of memory */
	uint64_t stamp;            /* destination accesses so far (mn_nestrows_next()) */
	bool spanning;             /* the access at hand is counted by several workers: log rows */
	uint64_t span;             /* its serial */
	struct mn_spans *span_log;
	struct mn_nestrows_owed *owed;   /* [owed_cap]: by frame index */
	unsigned owed_cap;
	struct mn_nestrows_below below[MN_NESTROWS_BELOW];
	struct mn_rows_memo memo[1u << MN_NESTROWS_MEMO_BITS];
};

/* Counts into the caller's row map rows, in the frames of nest, lending rows its memo; rows
 * counted by an access several workers count are logged in span_log (spans.h).  Once, before
 * the first instance.  0 or -errno. */
int mn_nestrows_init(struct mn_nestrows *r, struct mn_rows *rows, struct mn_loopnest *nest,
		     mn_nestrows_key_fn *key, void *arg, uint64_t *lost, struct mn_spans *span_log);

void mn_nestrows_free(struct mn_nestrows *r);

/* Threads (issue 22): what frames owe is by frame index, so it is the current thread's, parked with
 * its frames (loopnest.h, mn_loopnest_switch()): swaps r's with *owed and *cap (NULL and 0: a new
 * thread's, nothing owed).  The memo and the below slots, keyed by ids and serials that every
 * thread shares, stay. */
static inline void mn_nestrows_switch(struct mn_nestrows *r, struct mn_nestrows_owed **owed,
				      unsigned *cap)
{
	struct mn_nestrows_owed *o = r->owed;
	unsigned c = r->owed_cap;

	r->owed = *owed;
	r->owed_cap = *cap;
	*owed = o;
	*cap = c;
}
/* A parked thread's owed counts (all paid: mn_loopnest_end()), freed. */
void mn_nestrows_owed_free(struct mn_nestrows_owed *owed, unsigned cap);

/* A new destination access: its instances count each row once. */
static inline void mn_nestrows_next(struct mn_nestrows *r)
{
	r->stamp++;
}

static inline uint32_t mn_nestrows_hash(uint32_t src, uint32_t dst, unsigned kind)
{
	return src * 0x9e3779b1u ^ dst * 0x85ebca77u ^ kind * 0x165667b1u;
}

/* Counts an instance in row e, once per destination access, with its distance if carried. */
static inline void mn_nestrows_count(struct mn_nestrows *r, struct mn_row *e, bool carried,
				     uint64_t distance)
{
	if (e->stamp != r->stamp) {
		e->stamp = r->stamp;
		e->count++;
		if (__builtin_expect(r->spanning, 0) &&
		    !mn_spans_add(r->span_log, mn_row_key(e), r->span))
			++*r->lost;
	}
	if (carried && distance < e->min)
		e->min = distance;
	if (carried && distance > e->max)
		e->max = distance;
}

/* The memo's miss: the caller's key and the row map.  Fills memo slot m; NULL without memory. */
struct mn_row *mn_nestrows_slow(struct mn_nestrows *r, struct mn_rows_memo *m, uint64_t pair,
				const struct mn_loop *l, unsigned kind, bool carried);

static inline struct mn_rows_memo *mn_nestrows_slot(struct mn_nestrows *r, uint32_t ph,
						    const struct mn_loop *l, uint32_t kc)
{
	/* A multiplicative hash's top bits: all of ph's bits reach the slot number (the top bits
	 * alone left 1024 slots in use, however many there were: SQLite missed 3 rows in 10). */
	return &r->memo[((ph ^ (l ? l->mhash : 0) ^ kc * 0x9e3779b1u) * 0x85ebca6bu) >>
			(32 - MN_NESTROWS_MEMO_BITS)];
}

/*
 * The row of an instance in frame l (NULL: no frame), through the memo; NULL without memory.
 * pair and ph are the instance's src | dst << 32 and mn_nestrows_hash(), made once an instance.
 */
static inline struct mn_row *mn_nestrows_row(struct mn_nestrows *r, uint64_t pair, uint32_t ph,
					     const struct mn_loop *l, unsigned kind, bool carried)
{
	uint32_t kc = kind << 1 | carried;
	struct mn_rows_memo *m = mn_nestrows_slot(r, ph, l, kc);

	if (__builtin_expect(mn_rows_memo_hit(r->rows, m, pair, l ? l->mkey : 0, kc), 1))
		return m->row;
	return mn_nestrows_slow(r, m, pair, l, kind, carried);
}

/*
 * An instance that counts its row at most once per destination access without a stamp (a
 * one-word access has one writer and one reader, of different kinds, and its frames are of
 * different loops): counted in its memo slot, which its row gets at the slot's next fill or
 * flush.  A new row is counted at once (count 0 would mark its slot empty).
 */
static inline void mn_nestrows_tally(struct mn_nestrows *r, uint64_t pair, uint32_t ph,
				     const struct mn_loop *l, unsigned kind, bool carried,
				     uint64_t distance)
{
	uint32_t kc = kind << 1 | carried;
	struct mn_rows_memo *m = mn_nestrows_slot(r, ph, l, kc);
	struct mn_row *e;

	if (__builtin_expect(!mn_rows_memo_hit(r->rows, m, pair, l ? l->mkey : 0, kc), 0)) {
		if ((e = mn_nestrows_slow(r, m, pair, l, kind, carried)))
			mn_nestrows_count(r, e, carried, distance);
		return;
	}
	mn_rows_memo_count(m, carried, distance);
}

/* Adds c to what frame i owes (pair, kind); false without memory. */
bool mn_nestrows_owe(struct mn_nestrows *r, unsigned i, uint64_t pair, unsigned kind, uint64_t c);
/* c instances of (pair, kind) in the not-carried rows of frames [0, i], at once. */
void mn_nestrows_count_below(struct mn_nestrows *r, unsigned i, uint64_t pair, unsigned kind,
			     uint64_t c);
/* Frame i pays what it owes into its rows and hands it to the frame below (the close hook). */
void mn_nestrows_pay(struct mn_nestrows *r, unsigned i);
/* Below a frame of a loop met twice (frame i - 1 dup). */
void mn_nestrows_dup(struct mn_nestrows *r, uint64_t pair, uint32_t ph, unsigned i,
		     uint32_t sclock, unsigned kind, bool one_word);
/* Every count pending in the memo and the below slots into the rows: before they move or are
 * read. */
void mn_nestrows_flush(struct mn_nestrows *r);

/* An instance counted in frame l's row (carried if the source ran in an earlier iteration). */
static inline void mn_nestrows_frame(struct mn_nestrows *r, uint64_t pair, uint32_t ph,
				     struct mn_loop *l, uint32_t sclock, unsigned kind)
{
	uint64_t started = mn_starts_upto(&l->starts, sclock);
	bool carried = started < l->starts.n;
	struct mn_row *e = mn_nestrows_row(r, pair, ph, l, kind, carried);

	if (e)
		mn_nestrows_count(r, e, carried, l->starts.n - started);
}

/*
 * An instance from access src at clock sclock to access dst now, whose innermost holding frame is
 * i - 1 (mn_loopnest_holding(); i = 0: none), counted in the rows of frames [0, i), or in the
 * frameless row when i = 0.  one_word: the destination touches one word (at most one instance
 * per pair and kind).
 */
static inline void mn_nestrows_add(struct mn_nestrows *r, uint32_t src, uint32_t dst,
				   unsigned kind, unsigned i, uint32_t sclock, bool one_word)
{
	uint64_t pair = src | (uint64_t)dst << 32;
	uint32_t ph = mn_nestrows_hash(src, dst, kind);
	struct mn_loop *loops = r->nest->loops;
	struct mn_row *e;

	if (i && loops[i - 1].dup) {
		mn_nestrows_dup(r, pair, ph, i, sclock, kind, one_word);
	} else if (one_word && !i) {
		mn_nestrows_tally(r, pair, ph, NULL, kind, false, 0);
	} else if (one_word) {   /* its row now, and one owed by the frame below */
		struct mn_loop *l = &loops[i - 1];
		uint64_t started = mn_starts_upto(&l->starts, sclock);
		bool carried = started < l->starts.n;

		mn_nestrows_tally(r, pair, ph, l, kind, carried, l->starts.n - started);
		if (i > 1 && !mn_nestrows_owe(r, i - 2, pair, kind, 1))
			mn_nestrows_count_below(r, i - 2, pair, kind, 1);
	} else {
		for (unsigned j = 0; j < i; j++)
			mn_nestrows_frame(r, pair, ph, &loops[j], sclock, kind);
		if (!i && (e = mn_nestrows_row(r, pair, ph, NULL, kind, false)))
			mn_nestrows_count(r, e, false, 0);
	}
}

/* c one-word instances from src to dst whose innermost frame is i - 1 (i = 0: none), carried or
 * not at distance dist there: what c calls of mn_nestrows_add() would count. */
void mn_nestrows_add_n(struct mn_nestrows *r, uint32_t src, uint32_t dst, unsigned i,
		       bool carried, uint64_t dist, unsigned kind, uint64_t c);

#endif /* MNEMO_NESTROWS_H */
