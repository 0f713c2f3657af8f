/*
 * Iteration starts of a live loop invocation, by clock (the dependence module's k of README's
 * rule).  Not thread-safe: one per loop frame of a worker.  Nothing here aborts: without memory
 * an add returns false and the caller counts the loss.
 */
#ifndef MNEMO_STARTS_H
#define MNEMO_STARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 *          24  off      40 B  MN_STARTS_BYTES: u8 clock offsets, each run one iteration after the one
 *                             before: up to 41 runs;
 *                             MN_STARTS_SHORTS: u16 clock offsets, the same: up to 21 runs;
 *                             MN_STARTS_WIDE: u16 clock offsets [0, 10), iteration offsets [10, 20):
 *                             up to 11 runs.
 *
 * Unused clock offsets are all ones, above any in use.  A run begins a new block when its offsets
 * fit neither the block's layout nor a wider one that still holds the block's runs.  With the
 * index, runs of one iteration take about 1.7 bytes each when their clock deltas average below 6
 * (an outer loop of 24 million iterations: 41 MB), 3.3 bytes when they average 32.  A search
 * reads a bucket of the index (starts.c, index_add()), then the block, and counts the offsets
 * at or below the clock: a few vector compares on one line.  The runs that searches found and
 * their answers by clock are remembered (hit[] and memo below).
 */
enum mn_starts_kind { MN_STARTS_BYTES, MN_STARTS_SHORTS, MN_STARTS_WIDE };

struct mn_starts_block {
	uint64_t iter;               /* run 0: its first iteration ... */
	uint32_t clock, next;        /* ... began at clock; the next block's first run at next */
	uint32_t niter;              /* iterations to the next block's first; set when it begins */
	uint8_t n, kind;             /* runs in the block; enum mn_starts_kind */
	uint16_t pad;
	union {
		uint8_t b[40];       /* MN_STARTS_BYTES */
		uint16_t w[20];      /* MN_STARTS_SHORTS, MN_STARTS_WIDE */
	} off;
};
_Static_assert(sizeof(struct mn_starts_block) == 64, "one block, one cache line");

#define MN_STARTS_BLOCK_RUNS 41            /* runs in a block of bytes; 21 of shorts, 11 wide */

struct mn_starts {
	struct mn_starts_block *blk;       /* nblk blocks, 64-byte aligned within raw */
	void *raw;                   /* the allocation, blkcap blocks and the alignment's slack */
	uint32_t nblk, blkcap;
	uint32_t *bucket;            /* the block index (starts.c, index_add()) */
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
	struct mn_starts_hit {
		uint64_t iter, end;  /* the run's first and last iterations */
		uint32_t clock, next;   /* the clocks of its start and of the next run's; 0, 0: none */
	} hit[4];
	unsigned nhit;               /* lookups that missed them: the next one replaces hit[nhit % 4] */
	/* Answers of searches, by clock: an answer for a clock before the last run never changes
	 * in this invocation, and sources that come back (the nodes of a list walked again) come
	 * back with the same clock.  2^mbits slots of clock | (k - base + 1) << 32 (0: empty),
	 * grown with the runs up to 2^MN_STARTS_MEMO_BITS, cleared at reset if used; 0 bits: none. */
	uint64_t *memo;
	unsigned mbits;
	bool mused;
};

#define MN_STARTS_MEMO_BITS 14             /* at most 16384 slots, 128 KiB, per loop that searches */

/* Empties s for a new invocation, or after a clock reset with base = n (keeps the memory). */
void mn_starts_reset(struct mn_starts *s, uint64_t base);
/* Iteration n + 1 begins at clock.  Returns false when memory ran out: the iteration is counted
 * but its start is not stored, so distances measured in this invocation may be off. */
bool mn_starts_add(struct mn_starts *s, uint32_t clock);
/* Iterations n + 1 .. n + count begin at clock, clock + 1, ...: count calls of mn_starts_add()
 * (a summarized loop's), in O(1).  Returns false as it does. */
bool mn_starts_add_run(struct mn_starts *s, uint32_t clock, uint64_t count);
/*
 * mn_starts_upto(s, clock), and the clocks [*lo, *hi) around clock that get the same answer:
 * sources that ran during one iteration (or one run of iterations) of this loop, met one after
 * another, are then told apart from the next by two compares.
 */
uint64_t mn_starts_span(struct mn_starts *s, uint32_t clock, uint32_t *lo, uint32_t *hi);
/* mn_starts_upto() for a clock before the last run: call that instead. */
uint64_t mn_starts_upto_slow(struct mn_starts *s, uint32_t clock);

/* The memo's slot for clock. */
static inline uint64_t *mn_starts_memo(const struct mn_starts *s, uint32_t clock)
{
	return &s->memo[(clock * 0x9e3779b1u) >> (32 - s->mbits)];
}

/* Iterations of this invocation begun at or before clock: k of README's rule.  Sources of the
 * current run (the common case) take no search, nor those asked about before, inline; others
 * the index and one block. */
static inline uint64_t mn_starts_upto(struct mn_starts *s, uint32_t clock)
{
	if (__builtin_expect(s->nruns && clock >= s->last_clock, 1)) {   /* in the last run */
		uint64_t iter = s->last_iter + (clock - s->last_clock);

		return iter < s->n ? iter : s->n;
	}
	if (s->mbits) {
		uint64_t m = *mn_starts_memo(s, clock);

		if ((uint32_t)m == clock && m >> 32)
			return s->base + (m >> 32) - 1;
	}
	return mn_starts_upto_slow(s, clock);
}
void mn_starts_free(struct mn_starts *s);

#endif /* MNEMO_STARTS_H */
