/* Iteration starts (starts.h): run-length coded, in cache-line blocks with an index. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "starts.h"

#define SHORT_RUNS 21                /* runs in a block of u16 clock offsets */
#define WIDE_RUNS  11                /* runs in a wide block: 10 clock and 10 iteration offsets */

/*
 * The block index: bucket[b] is the last block at or before clock blk[0].clock + (b << bshift),
 * so that a search reads one bucket (and most often the next, on the same line) and then the
 * block that holds the clock.  Buckets are widened to keep them at most about twice the blocks:
 * 8 bytes a block, under a byte a run, small enough to stay in cache.  Without memory the
 * index stops growing until the next reset, and searches past its end take the binary search
 * over the blocks after it.
 */
static void index_add(struct mn_starts *s)
{
	uint32_t n = s->nblk - 1, c0 = s->blk[0].clock;
	uint64_t upto;   /* buckets that begin before the new block: the one before is theirs */

	if (!n || s->bstop)
		return;
	upto = ((uint64_t)(s->blk[n].clock - 1 - c0) >> s->bshift) + 1;
	while (upto > 2 * (uint64_t)s->nblk + 64) {   /* wider buckets: every other one */
		for (uint32_t b = 0; 2 * b < s->nbucket; b++)
			s->bucket[b] = s->bucket[2 * b];
		s->nbucket = (s->nbucket + 1) / 2;
		s->bshift++;
		upto = ((uint64_t)(s->blk[n].clock - 1 - c0) >> s->bshift) + 1;
	}
	if (upto > s->bucketcap) {   /* upto <= 2 * nblk + 64 < 2^32 */
		uint32_t cap = s->bucketcap ? 2 * s->bucketcap : 64;
		uint32_t *v;

		cap = cap < upto ? (uint32_t)upto : cap;
		v = cap > s->bucketcap ? realloc(s->bucket, (size_t)cap * sizeof(*v)) : NULL;

		if (!v) {   /* the buckets it leaves out could no longer be filled right */
			s->bstop = true;
			return;
		}
		s->bucket = v;
		s->bucketcap = cap;
	}
	while (s->nbucket < upto)
		s->bucket[s->nbucket++] = n - 1;
}

/*
 * The last block at or before clock (>= blk[0].clock).  Its bucket's block, or when another block
 * begins in the same bucket, most often the one after it: both are read at once, so that either
 * costs one wait for memory; more than that, a binary search between them and the next bucket's.
 */
static uint32_t index_find(const struct mn_starts *s, uint32_t clock)
{
	uint64_t b = (uint64_t)(clock - s->blk[0].clock) >> s->bshift;
	uint32_t from = 0, to = s->nblk;   /* the last at or before clock is in [from, to) */
	const struct mn_starts_block *p;

	if (b < s->nbucket) {
		from = s->bucket[b];
		to = b + 1 < s->nbucket ? s->bucket[b + 1] + 1 : s->nblk;
	} else if (s->nbucket) {
		from = s->bucket[s->nbucket - 1];
	}
	p = s->blk + from;
	if (to - from == 1)
		return from;
	__builtin_prefetch(p + 1);
	if (clock < p->next)
		return from;
	if (to - from == 2 || clock < p[1].next)
		return from + 1;
	for (uint32_t n = to - from; n > 1; n -= n / 2)   /* branchless: the steps are coin flips */
		p = __builtin_unpredictable(p[n / 2].clock <= clock) ? p + n / 2 : p;
	return (uint32_t)(p - s->blk);
}

void mn_starts_reset(struct mn_starts *s, uint64_t base)
{
	s->nblk = 0;
	s->nbucket = 0;
	s->bshift = 0;
	s->bstop = false;
	s->nruns = 0;
	s->n = s->base = base;
	memset(s->hit, 0, sizeof(s->hit));
	if (s->mused)
		memset(s->memo, 0, sizeof(*s->memo) << s->mbits);
	s->mused = false;
}

/* Room for one more block; false without memory (then nothing changed).  The blocks move to a
 * 64-byte boundary of the new allocation, which realloc() keeps only 16-byte aligned. */
static bool blocks_grow(struct mn_starts *s)
{
	uint32_t cap = s->blkcap ? 2 * s->blkcap : 4;
	size_t at = s->raw ? (size_t)((char *)s->blk - (char *)s->raw) : 0, to;
	char *raw;

	if (cap <= s->blkcap)   /* 2^32 blocks: no more */
		return false;
	raw = realloc(s->raw, (size_t)cap * sizeof(struct mn_starts_block) + 63);
	if (!raw)
		return false;
	to = (size_t)(-(uintptr_t)raw & 63);
	if (to != at)
		memmove(raw + to, raw + at, (size_t)s->nblk * sizeof(struct mn_starts_block));
	s->raw = raw;
	s->blk = (struct mn_starts_block *)(raw + to);
	s->blkcap = cap;
	return true;
}

/* Rewrites block b's offsets as kind (a wider one than its own, holding its runs). */
static void block_widen(struct mn_starts_block *b, enum mn_starts_kind kind)
{
	uint16_t w[20];

	memset(w, 0xff, sizeof(w));
	for (unsigned i = 0; i + 1 < b->n; i++) {
		w[i] = b->kind == MN_STARTS_BYTES ? b->off.b[i] : b->off.w[i];
		if (kind == MN_STARTS_WIDE)   /* they began an iteration apart */
			w[10 + i] = (uint16_t)(i + 1);
	}
	memcpy(b->off.w, w, sizeof(w));
	b->kind = (uint8_t)kind;
}

/* Appends the run (iter, clock) to block b if its offsets fit there; false if not. */
static bool block_put(struct mn_starts_block *b, uint64_t iter, uint32_t clock)
{
	uint32_t dc = clock - b->clock;
	uint64_t di = iter - b->iter;
	unsigned i = b->n - 1u;   /* the new run's offsets' index */

	if (dc >= 0xffff || di >= 0xffff)
		return false;
	if (di == b->n && b->kind != MN_STARTS_WIDE) {   /* one iteration after the last run began */
		if (b->kind == MN_STARTS_BYTES && dc < 0xff && b->n < MN_STARTS_BLOCK_RUNS) {
			b->off.b[i] = (uint8_t)dc;
			b->n++;
			return true;
		}
		if (b->n < SHORT_RUNS) {
			if (b->kind == MN_STARTS_BYTES)
				block_widen(b, MN_STARTS_SHORTS);
			b->off.w[i] = (uint16_t)dc;
			b->n++;
			return true;
		}
	}
	if (b->n >= WIDE_RUNS)
		return false;
	if (b->kind != MN_STARTS_WIDE)
		block_widen(b, MN_STARTS_WIDE);
	b->off.w[i] = (uint16_t)dc;
	b->off.w[10 + i] = (uint16_t)di;
	b->n++;
	return true;
}

bool mn_starts_add(struct mn_starts *s, uint32_t clock)
{
	struct mn_starts_block *b;
	uint64_t di;   /* iterations since the last run began */

	s->n++;
	di = s->n - s->last_iter;
	if (s->nruns && s->last_clock + di == clock)
		return true;   /* the common case: no loop event since the last start but its own */
	if (!s->nblk || !block_put(&s->blk[s->nblk - 1], s->n, clock)) {   /* a new block */
		if (s->nblk == s->blkcap && !blocks_grow(s))
			return false;
		if (s->nblk) {   /* close the last: iterations since a reset are below 2^32 */
			b = &s->blk[s->nblk - 1];
			b->next = clock;
			b->niter = (uint32_t)(s->n - b->iter);
		}
		b = &s->blk[s->nblk++];
		*b = (struct mn_starts_block){ .iter = s->n, .clock = clock, .next = UINT32_MAX, .n = 1,
					 .kind = MN_STARTS_BYTES };
		memset(b->off.b, 0xff, sizeof(b->off.b));   /* unused */
		index_add(s);
	}
	s->nruns++;
	s->last_iter = s->n;
	s->last_clock = clock;
	return true;
}

static const struct mn_starts_hit *find_run(struct mn_starts *s, uint32_t clock);

/* The search behind mn_starts_upto_slow(): through the run that holds clock. */
static uint64_t search(struct mn_starts *s, uint32_t clock)
{
	const struct mn_starts_hit *h = find_run(s, clock);
	uint64_t iter;

	if (!h)
		return s->base;
	iter = h->iter + (clock - h->clock);
	return iter < h->end ? iter : h->end;
}

/* Grows the memo of searches to about nruns slots; false without memory (then it is unchanged). */
static bool memo_grow(struct mn_starts *s)
{
	unsigned bits = s->mbits ? s->mbits + 1 : 6;
	uint64_t *m = calloc((size_t)1 << bits, sizeof(*m));

	if (!m)
		return false;
	free(s->memo);   /* its answers are still right, but cheaper to find again than to move */
	s->memo = m;
	s->mbits = bits;
	s->mused = false;
	return true;
}

uint64_t mn_starts_upto_slow(struct mn_starts *s, uint32_t clock)
{
	uint64_t *m, k;

	if (s->nruns && clock >= s->last_clock) {   /* in the last run */
		k = s->last_iter + (clock - s->last_clock);
		return k < s->n ? k : s->n;
	}
	if (s->nblk < 4)   /* a short search: not worth a memo */
		return search(s, clock);
	if (s->mbits < MN_STARTS_MEMO_BITS && (uint64_t)1 << s->mbits < s->nruns && !memo_grow(s) &&
	    !s->memo)
		return search(s, clock);
	m = mn_starts_memo(s, clock);
	if ((uint32_t)*m == clock && *m >> 32)
		return s->base + (*m >> 32) - 1;
	k = search(s, clock);
	/* k - base < 2^32 - 1: each iteration since the last reset ticked the clock */
	*m = clock | (k - s->base + 1) << 32;
	s->mused = true;
	return k;
}

/*
 * The run holding clock, which lies before the last run: one of the hits, or found by the index
 * and the block's offsets, and then remembered among the hits.  NULL for a clock before the
 * first run (every iteration since the last reset began after it).
 */
static const struct mn_starts_hit *find_run(struct mn_starts *s, uint32_t clock)
{
	const struct mn_starts_block *b;
	struct mn_starts_hit *h;
	uint32_t dc;
	unsigned j = 0;   /* the run: the clock offsets at or below clock's */
	uint64_t di, dend;   /* its iteration offset, and the next run's */

	for (h = s->hit; h < s->hit + 4; h++)   /* an empty one: clock and next 0 */
		if (clock - h->clock < h->next - h->clock)
			return h;
	if (!s->nblk || clock < s->blk[0].clock)
		return NULL;
	b = &s->blk[index_find(s, clock)];
	dc = clock - b->clock;
	/* A count, not a search: compares of the whole line, signed (offset ^ bias) so that they
	 * vectorize; an unused offset (all ones) is above any clock's (at most all ones less 1). */
	if (b->kind == MN_STARTS_BYTES) {
		int8_t x = (int8_t)((dc < 0xfe ? dc : 0xfe) ^ 0x80);

		for (unsigned i = 0; i < 40; i++)
			j += (int8_t)(b->off.b[i] ^ 0x80) <= x;
	} else {
		int16_t x = (int16_t)((dc < 0xfffe ? dc : 0xfffe) ^ 0x8000);

		for (unsigned i = 0; i < 10; i++)
			j += (int16_t)(b->off.w[i] ^ 0x8000) <= x;
		if (b->kind == MN_STARTS_SHORTS)
			for (unsigned i = 10; i < 20; i++)
				j += (int16_t)(b->off.w[i] ^ 0x8000) <= x;
	}
	/* Not the last run, so a run or a block follows run j. */
	h = &s->hit[s->nhit++ % 4];
	if (b->kind == MN_STARTS_BYTES) {
		h->clock = b->clock + (j ? b->off.b[j - 1] : 0);
		h->next = j + 1 < b->n ? b->clock + b->off.b[j] : b->next;
		di = j, dend = j + 1;
	} else {
		h->clock = b->clock + (j ? b->off.w[j - 1] : 0);
		h->next = j + 1 < b->n ? b->clock + b->off.w[j] : b->next;
		di = b->kind == MN_STARTS_WIDE && j ? b->off.w[10 + j - 1] : j;
		dend = b->kind == MN_STARTS_WIDE && j + 1 < b->n ? b->off.w[10 + j] : j + 1;
	}
	h->iter = b->iter + di;
	h->end = b->iter + (j + 1 < b->n ? dend : b->niter) - 1;
	return h;
}

bool mn_starts_add_run(struct mn_starts *s, uint32_t clock, uint64_t count)
{
	bool ok;

	if (!count)
		return true;
	ok = mn_starts_add(s, clock);
	/* the rest extend the run just added or continued (mn_starts_add()'s common case); without
	 * memory they are counted all the same, their starts not stored */
	s->n += count - 1;
	return ok;
}

uint64_t mn_starts_span(struct mn_starts *s, uint32_t clock, uint32_t *lo, uint32_t *hi)
{
	const struct mn_starts_hit *h;
	uint64_t first, last;   /* the run's iterations */
	uint32_t c, next;

	if (s->nruns && clock >= s->last_clock) {
		first = s->last_iter, last = s->n, c = s->last_clock, next = UINT32_MAX;
	} else if ((h = find_run(s, clock))) {
		first = h->iter, last = h->end, c = h->clock, next = h->next;
	} else {
		*lo = 0;
		*hi = s->nruns ? s->blk[0].clock : UINT32_MAX;
		return s->base;
	}
	if (clock - c < last - first) {   /* iteration first + (clock - c) began at clock */
		*lo = clock;
		*hi = clock + 1;
		return first + (clock - c);
	}
	*lo = c + (uint32_t)(last - first);   /* the run's last start, until the next run */
	*hi = next;
	return last;
}

void mn_starts_free(struct mn_starts *s)
{
	free(s->raw);
	free(s->bucket);
	free(s->memo);
	memset(s, 0, sizeof(*s));
}
