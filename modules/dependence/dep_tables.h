/*
 * The dependence module's plumbing (dep_tables.c), kept out of dependence.c so that the module
 * itself reads like PROMPT's Figure 6: the table of accesses (a load or store site in a calling
 * context, interned as one 32-bit id, the currency of the shadow), the key of a reported
 * dependence, the rows counted by accesses that span workers, and the iteration starts of a live
 * loop invocation.  Module-local: nothing here is
 * installed or used by anything else.
 *
 * Not thread-safe: one of each per worker.  Nothing here aborts: a table that cannot grow returns 0
 * or NULL and the module counts the loss.
 */
#ifndef MNEMO_DEP_TABLES_H
#define MNEMO_DEP_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Accesses: (site, context id) <-> dense id from 1 ---------------------------------------- */

struct dep_access {
	uint32_t site, ctx;
};

struct dep_accesses {
	struct dep_access *acc;      /* by id; [0] unused: 0 is "no access" in the shadow */
	uint32_t n, cap;             /* ids 1..n-1 assigned; entries of acc[] */
	uint32_t *slots;             /* open addressing over ids; 0: empty */
	unsigned bits;               /* 2^bits slots */
};

/* The id of (site, ctx), assigned on first sight; 0 when memory ran out. */
uint32_t dep_access_intern(struct dep_accesses *t, uint32_t site, uint32_t ctx);
void dep_accesses_free(struct dep_accesses *t);

/* ---- Reported dependences: the key of README's schema (the rows: a row map, map.h) ----------- */

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

/* ---- Rows counted by accesses that span workers ---------------------------------------------- */

/*
 * With several workers an access that spans pages of two workers is handled by each on its own
 * pages, and each counts the rows its part found: once per access (rule 6) means once in all.
 * Every worker numbers such accesses alike (the driver shows each of them to every worker), so
 * each logs, per row key, the serials of the accesses that counted it, and merge() takes back one
 * count for each serial both sides logged.  Per key an increasing list, LEB128 deltas.
 */
struct dep_span_list {
	uint64_t k[4];               /* the row's key (struct dep_key's words) */
	uint8_t *bytes;
	uint32_t n, cap;             /* bytes used, allocated; n 0: an empty slot */
	uint64_t last;               /* the last serial added */
};

struct dep_spans {
	struct dep_span_list *v;     /* 2^bits slots, at most half full */
	size_t n;
	unsigned bits;
};

/* Logs that access serial (not below any logged before for k) counted row k.  False without
 * memory (the row's count may then be one too many after the merge: the caller counts it). */
bool dep_spans_add(struct dep_spans *t, const uint64_t *k, uint64_t serial);
/* Folds from's lists into into's, calling dup(arg, k, n) for every key both hold that share
 * n > 0 serials.  -ENOMEM without memory (some lists then stay in from: the caller counts
 * the loss).  from is left empty or holding what could not move; free it after. */
int dep_spans_merge(struct dep_spans *into, struct dep_spans *from,
		    void (*dup)(void *arg, const uint64_t *k, uint64_t n), void *arg);
void dep_spans_free(struct dep_spans *t);

/* ---- Iteration starts of a live loop invocation ---------------------------------------------- */

/*
 * The clocks at which the iterations of one loop invocation began, as runs: iterations iter,
 * iter + 1, ... began at clock, clock + 1, ... until the next run.  An innermost loop is one run
 * (nothing but its own iterations moves the clock), so it costs nothing however long it runs; a
 * loop whose iterations run inner loops starts a run per iteration, and its sources are met at
 * random among millions of them.  So runs are kept in 64-byte blocks, one cache line each, that
 * a search reads alone: the block's first run absolute, the others as fixed-width offsets from it.
 *
 *   offset  0  iter     u64   the first run's first iteration
 *           8  clock    u32   ... began at this clock
 *          12  next     u32   the next block's first clock (UINT32_MAX while the last)
 *          16  niter    u32   iterations from this block's first to the next block's first
 *          20  n        u8    runs in the block, from 1
 *          21  kind     u8    the layout of the offsets of runs 1 .. n - 1 from run 0:
 *          24  off      40 B  DEP_BYTES: u8 clock offsets, each run one iteration after the one
 *                             before: up to 41 runs;
 *                             DEP_SHORTS: u16 clock offsets, the same: up to 21 runs;
 *                             DEP_WIDE: u16 clock offsets [0, 10), iteration offsets [10, 20):
 *                             up to 11 runs.
 *
 * Unused clock offsets are all ones, above any in use.  A run begins a new block when its offsets
 * fit neither the block's layout nor a wider one that still holds the block's runs.  With the
 * index, runs of one iteration take about 1.7 bytes each when their clock deltas average below 6
 * (an outer loop of 24 million iterations: 41 MB), 3.3 bytes when they average 32.  A search
 * reads a bucket of the index (dep_tables.c, index_add()), then the block, and counts the offsets
 * at or below the clock: a few vector compares on one line.  The runs that searches found and
 * their answers by clock are remembered (hit[] and memo below).
 */
enum dep_block_kind { DEP_BYTES, DEP_SHORTS, DEP_WIDE };

struct dep_block {
	uint64_t iter;               /* run 0: its first iteration ... */
	uint32_t clock, next;        /* ... began at clock; the next block's first run at next */
	uint32_t niter;              /* iterations to the next block's first; set when it begins */
	uint8_t n, kind;             /* runs in the block; enum dep_block_kind */
	uint16_t pad;
	union {
		uint8_t b[40];       /* DEP_BYTES */
		uint16_t w[20];      /* DEP_SHORTS, DEP_WIDE */
	} off;
};
_Static_assert(sizeof(struct dep_block) == 64, "one block, one cache line");

#define DEP_BLOCK_RUNS 41            /* runs in a block of bytes; 21 of shorts, 11 wide */

struct dep_starts {
	struct dep_block *blk;       /* nblk blocks, 64-byte aligned within raw */
	void *raw;                   /* the allocation, blkcap blocks and the alignment's slack */
	uint32_t nblk, blkcap;
	uint32_t *bucket;            /* the block index (dep_tables.c, index_add()) */
	uint32_t nbucket, bucketcap;
	unsigned bshift;
	bool bstop;                  /* the index could not grow: no more buckets until a reset */
	uint64_t nruns;              /* stored since the reset */
	uint64_t last_iter;          /* the last run, absolute */
	uint32_t last_clock;
	uint64_t n;                  /* iterations begun in this invocation */
	uint64_t base;               /* of which began before the last clock reset (at "clock 0") */
	/* The runs the last lookups found, if not the last run (whose end still moves): sources
	 * come from a few iterations at a time (the one before, the one before that, ...). */
	struct dep_hit {
		uint64_t iter, end;  /* the run's first and last iterations */
		uint32_t clock, next;   /* the clocks of its start and of the next run's; 0, 0: none */
	} hit[4];
	unsigned nhit;               /* lookups that missed them: the next one replaces hit[nhit % 4] */
	/* Answers of searches, by clock: an answer for a clock before the last run never changes
	 * in this invocation, and sources that come back (the nodes of a list walked again) come
	 * back with the same clock.  2^mbits slots of clock | (k - base + 1) << 32 (0: empty),
	 * grown with the runs up to 2^DEP_MEMO_BITS, cleared at reset if used; 0 bits: none. */
	uint64_t *memo;
	unsigned mbits;
	bool mused;
};

#define DEP_MEMO_BITS 14             /* at most 16384 slots, 128 KiB, per loop that searches */

/* Empties s for a new invocation, or after a clock reset with base = n (keeps the memory). */
void dep_starts_reset(struct dep_starts *s, uint64_t base);
/* Iteration n + 1 begins at clock.  Returns false when memory ran out: the iteration is counted
 * but its start is not stored, so distances measured in this invocation may be off. */
bool dep_starts_add(struct dep_starts *s, uint32_t clock);
/* Iterations n + 1 .. n + count begin at clock, clock + 1, ...: count calls of dep_starts_add()
 * (a summarized loop's), in O(1).  Returns false as it does. */
bool dep_starts_add_run(struct dep_starts *s, uint32_t clock, uint64_t count);
/*
 * dep_starts_upto(s, clock), and the clocks [*lo, *hi) around clock that get the same answer:
 * sources that ran during one iteration (or one run of iterations) of this loop, met one after
 * another, are then told apart from the next by two compares.
 */
uint64_t dep_starts_span(struct dep_starts *s, uint32_t clock, uint32_t *lo, uint32_t *hi);
/* dep_starts_upto() for a clock before the last run: call that instead. */
uint64_t dep_starts_upto_slow(struct dep_starts *s, uint32_t clock);

/* The memo's slot for clock. */
static inline uint64_t *dep_starts_memo(const struct dep_starts *s, uint32_t clock)
{
	return &s->memo[(clock * 0x9e3779b1u) >> (32 - s->mbits)];
}

/* Iterations of this invocation begun at or before clock: k of README's rule.  Sources of the
 * current run (the common case) take no search, nor those asked about before, inline; others
 * the index and one block. */
static inline uint64_t dep_starts_upto(struct dep_starts *s, uint32_t clock)
{
	if (__builtin_expect(s->nruns && clock >= s->last_clock, 1)) {   /* in the last run */
		uint64_t iter = s->last_iter + (clock - s->last_clock);

		return iter < s->n ? iter : s->n;
	}
	if (s->mbits) {
		uint64_t m = *dep_starts_memo(s, clock);

		if ((uint32_t)m == clock && m >> 32)
			return s->base + (m >> 32) - 1;
	}
	return dep_starts_upto_slow(s, clock);
}
void dep_starts_free(struct dep_starts *s);

#endif /* MNEMO_DEP_TABLES_H */
