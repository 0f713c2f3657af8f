/*
 * The dependence module's plumbing: the open-addressing table of accesses, the rows' spans and
 * the run-length coded iteration starts of a loop invocation, in cache-line blocks
 * (dep_tables.h).  Tables are power-of-two sized and kept at most half full.  When one cannot
 * grow, the access table takes no new access (0): the module counts it as nomem.  The rows
 * themselves are in a row map (backend/map.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dep_tables.h"
#include "map.h"

/* ---- Accesses -------------------------------------------------------------------------------- */

static size_t access_slot(const struct dep_accesses *t, uint32_t site, uint32_t ctx)
{
	return mn_hash64((uint64_t)site << 32 | ctx) & (((size_t)1 << t->bits) - 1);
}

static int accesses_grow(struct dep_accesses *t)
{
	unsigned bits = t->bits ? t->bits + 1 : 12;
	size_t mask = ((size_t)1 << bits) - 1;
	uint32_t *slots = calloc(mask + 1, sizeof(*slots));
	struct dep_access *acc = realloc(t->acc, (mask + 1) / 2 * sizeof(*acc));

	if (acc)
		t->acc = acc;
	if (!slots || !acc) {
		free(slots);
		return -1;
	}
	free(t->slots);
	t->slots = slots;
	t->bits = bits;
	t->cap = (uint32_t)((mask + 1) / 2);
	if (!t->n)
		t->n = 1;
	for (uint32_t id = 1; id < t->n; id++) {
		size_t i = access_slot(t, t->acc[id].site, t->acc[id].ctx);

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = id;
	}
	return 0;
}

uint32_t dep_access_intern(struct dep_accesses *t, uint32_t site, uint32_t ctx)
{
	size_t mask, i;

	if (!t->bits && accesses_grow(t))
		return 0;
	mask = ((size_t)1 << t->bits) - 1;
	for (i = access_slot(t, site, ctx); t->slots[i]; i = (i + 1) & mask) {
		const struct dep_access *a = &t->acc[t->slots[i]];

		if (a->site == site && a->ctx == ctx)
			return t->slots[i];
	}
	if (t->n == t->cap) {   /* half full: grow, and find the new table's empty slot */
		if (t->bits >= 31 || accesses_grow(t))
			return 0;
		mask = ((size_t)1 << t->bits) - 1;
		for (i = access_slot(t, site, ctx); t->slots[i]; i = (i + 1) & mask)
			;
	}
	t->acc[t->n] = (struct dep_access){ site, ctx };
	t->slots[i] = t->n;
	return t->n++;
}

void dep_accesses_free(struct dep_accesses *t)
{
	free(t->acc);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* ---- Rows counted by accesses that span workers ---------------------------------------------- */

static size_t key_slot(const uint64_t *k, unsigned bits)
{
	return mn_rows_hash(k) & (((size_t)1 << bits) - 1);
}

static bool key_equal(const uint64_t *a, const uint64_t *b)
{
	return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]));
}

static struct dep_span_list *spans_slot(const struct dep_spans *t, const uint64_t *k)
{
	size_t mask = ((size_t)1 << t->bits) - 1, i = key_slot(k, t->bits);

	while (t->v[i].n && !key_equal(t->v[i].k, k))
		i = (i + 1) & mask;
	return &t->v[i];
}

static bool spans_grow(struct dep_spans *t)
{
	struct dep_spans g = { .bits = t->bits ? t->bits + 1 : 6, .n = t->n };

	if (!(g.v = calloc((size_t)1 << g.bits, sizeof(*g.v))))
		return false;
	for (size_t i = 0; t->v && i < (size_t)1 << t->bits; i++)
		if (t->v[i].n)
			*spans_slot(&g, t->v[i].k) = t->v[i];
	free(t->v);
	*t = g;
	return true;
}

static bool list_put(struct dep_span_list *l, uint64_t v)
{
	if (l->cap - l->n < 10) {
		uint32_t cap = l->cap ? 2 * l->cap : 16;
		uint8_t *b = realloc(l->bytes, cap);

		if (!b)
			return false;
		l->bytes = b;
		l->cap = cap;
	}
	do {
		l->bytes[l->n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	return true;
}

bool dep_spans_add(struct dep_spans *t, const uint64_t *k, uint64_t serial)
{
	struct dep_span_list *l;

	if (2 * (t->n + 1) > (size_t)1 << t->bits && !spans_grow(t))
		return false;
	l = spans_slot(t, k);
	if (!l->n) {   /* a new key: its first delta is from 0 */
		if (!list_put(l, serial)) {
			free(l->bytes);
			*l = (struct dep_span_list){ 0 };
			return false;
		}
		memcpy(l->k, k, sizeof(l->k));
		l->last = serial;
		t->n++;
		return true;
	}
	if (serial == l->last)
		return true;   /* this access counted the row already */
	if (!list_put(l, serial - l->last))
		return false;
	l->last = serial;
	return true;
}

/* The next serial of a list being read at *p (< end), after prev. */
static uint64_t list_next(const uint8_t **p, uint64_t prev)
{
	uint64_t v = 0;

	for (unsigned shift = 0;; shift += 7) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return prev + v;
	}
}

/* The union of lists a and b into a new list u; returns the serials they share. */
static uint64_t list_union(const struct dep_span_list *a, const struct dep_span_list *b,
			   struct dep_span_list *u, bool *ok)
{
	const uint8_t *pa = a->bytes, *pb = b->bytes, *ea = pa + a->n, *eb = pb + b->n;
	uint64_t x = pa < ea ? list_next(&pa, 0) : 0, y = pb < eb ? list_next(&pb, 0) : 0;
	bool hx = true, hy = true;
	uint64_t shared = 0, prev = 0;

	*u = (struct dep_span_list){ 0 };
	memcpy(u->k, a->k, sizeof(u->k));
	*ok = true;
	while (hx || hy) {
		uint64_t v = !hy || (hx && x <= y) ? x : y;

		shared += hx && hy && x == y;
		if (hx && x == v)
			hx = pa < ea ? (x = list_next(&pa, x), true) : false;
		if (hy && y == v)
			hy = pb < eb ? (y = list_next(&pb, y), true) : false;
		*ok = *ok && list_put(u, v - prev);
		prev = v;
	}
	u->last = prev;
	return shared;
}

int dep_spans_merge(struct dep_spans *into, struct dep_spans *from,
		    void (*dup)(void *arg, const uint64_t *k, uint64_t n), void *arg)
{
	int err = 0;

	for (size_t i = 0; from->v && i < (size_t)1 << from->bits; i++) {
		struct dep_span_list *f = &from->v[i], *t, u;
		uint64_t shared;
		bool ok;

		if (!f->n)
			continue;
		if (2 * (into->n + 1) > (size_t)1 << into->bits && !spans_grow(into)) {
			err = -ENOMEM;
			continue;
		}
		t = spans_slot(into, f->k);
		if (!t->n) {   /* into never logged the row: the list moves */
			*t = *f;
			into->n++;
		} else {
			shared = list_union(t, f, &u, &ok);
			if (shared)
				dup(arg, f->k, shared);
			if (!ok) {
				free(u.bytes);
				err = -ENOMEM;   /* into keeps its own list; from's is dropped */
			} else {
				free(t->bytes);
				*t = u;
			}
			free(f->bytes);
		}
		*f = (struct dep_span_list){ 0 };
	}
	from->n = 0;
	return err;
}

void dep_spans_free(struct dep_spans *t)
{
	for (size_t i = 0; t->v && i < (size_t)1 << t->bits; i++)
		free(t->v[i].bytes);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* ---- Iteration starts ------------------------------------------------------------------------ */

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
static void index_add(struct dep_starts *s)
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
static uint32_t index_find(const struct dep_starts *s, uint32_t clock)
{
	uint64_t b = (uint64_t)(clock - s->blk[0].clock) >> s->bshift;
	uint32_t from = 0, to = s->nblk;   /* the last at or before clock is in [from, to) */
	const struct dep_block *p;

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

void dep_starts_reset(struct dep_starts *s, uint64_t base)
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
static bool blocks_grow(struct dep_starts *s)
{
	uint32_t cap = s->blkcap ? 2 * s->blkcap : 4;
	size_t at = s->raw ? (size_t)((char *)s->blk - (char *)s->raw) : 0, to;
	char *raw;

	if (cap <= s->blkcap)   /* 2^32 blocks: no more */
		return false;
	raw = realloc(s->raw, (size_t)cap * sizeof(struct dep_block) + 63);
	if (!raw)
		return false;
	to = (size_t)(-(uintptr_t)raw & 63);
	if (to != at)
		memmove(raw + to, raw + at, (size_t)s->nblk * sizeof(struct dep_block));
	s->raw = raw;
	s->blk = (struct dep_block *)(raw + to);
	s->blkcap = cap;
	return true;
}

/* Rewrites block b's offsets as kind (a wider one than its own, holding its runs). */
static void block_widen(struct dep_block *b, enum dep_block_kind kind)
{
	uint16_t w[20];

	memset(w, 0xff, sizeof(w));
	for (unsigned i = 0; i + 1 < b->n; i++) {
		w[i] = b->kind == DEP_BYTES ? b->off.b[i] : b->off.w[i];
		if (kind == DEP_WIDE)   /* they began an iteration apart */
			w[10 + i] = (uint16_t)(i + 1);
	}
	memcpy(b->off.w, w, sizeof(w));
	b->kind = (uint8_t)kind;
}

/* Appends the run (iter, clock) to block b if its offsets fit there; false if not. */
static bool block_put(struct dep_block *b, uint64_t iter, uint32_t clock)
{
	uint32_t dc = clock - b->clock;
	uint64_t di = iter - b->iter;
	unsigned i = b->n - 1u;   /* the new run's offsets' index */

	if (dc >= 0xffff || di >= 0xffff)
		return false;
	if (di == b->n && b->kind != DEP_WIDE) {   /* one iteration after the last run began */
		if (b->kind == DEP_BYTES && dc < 0xff && b->n < DEP_BLOCK_RUNS) {
			b->off.b[i] = (uint8_t)dc;
			b->n++;
			return true;
		}
		if (b->n < SHORT_RUNS) {
			if (b->kind == DEP_BYTES)
				block_widen(b, DEP_SHORTS);
			b->off.w[i] = (uint16_t)dc;
			b->n++;
			return true;
		}
	}
	if (b->n >= WIDE_RUNS)
		return false;
	if (b->kind != DEP_WIDE)
		block_widen(b, DEP_WIDE);
	b->off.w[i] = (uint16_t)dc;
	b->off.w[10 + i] = (uint16_t)di;
	b->n++;
	return true;
}

bool dep_starts_add(struct dep_starts *s, uint32_t clock)
{
	struct dep_block *b;
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
		*b = (struct dep_block){ .iter = s->n, .clock = clock, .next = UINT32_MAX, .n = 1,
					 .kind = DEP_BYTES };
		memset(b->off.b, 0xff, sizeof(b->off.b));   /* unused */
		index_add(s);
	}
	s->nruns++;
	s->last_iter = s->n;
	s->last_clock = clock;
	return true;
}

static const struct dep_hit *find_run(struct dep_starts *s, uint32_t clock);

/* The search behind dep_starts_upto_slow(): through the run that holds clock. */
static uint64_t search(struct dep_starts *s, uint32_t clock)
{
	const struct dep_hit *h = find_run(s, clock);
	uint64_t iter;

	if (!h)
		return s->base;
	iter = h->iter + (clock - h->clock);
	return iter < h->end ? iter : h->end;
}

/* Grows the memo of searches to about nruns slots; false without memory (then it is unchanged). */
static bool memo_grow(struct dep_starts *s)
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

uint64_t dep_starts_upto_slow(struct dep_starts *s, uint32_t clock)
{
	uint64_t *m, k;

	if (s->nruns && clock >= s->last_clock) {   /* in the last run */
		k = s->last_iter + (clock - s->last_clock);
		return k < s->n ? k : s->n;
	}
	if (s->nblk < 4)   /* a short search: not worth a memo */
		return search(s, clock);
	if (s->mbits < DEP_MEMO_BITS && (uint64_t)1 << s->mbits < s->nruns && !memo_grow(s) &&
	    !s->memo)
		return search(s, clock);
	m = dep_starts_memo(s, clock);
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
static const struct dep_hit *find_run(struct dep_starts *s, uint32_t clock)
{
	const struct dep_block *b;
	struct dep_hit *h;
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
	if (b->kind == DEP_BYTES) {
		int8_t x = (int8_t)((dc < 0xfe ? dc : 0xfe) ^ 0x80);

		for (unsigned i = 0; i < 40; i++)
			j += (int8_t)(b->off.b[i] ^ 0x80) <= x;
	} else {
		int16_t x = (int16_t)((dc < 0xfffe ? dc : 0xfffe) ^ 0x8000);

		for (unsigned i = 0; i < 10; i++)
			j += (int16_t)(b->off.w[i] ^ 0x8000) <= x;
		if (b->kind == DEP_SHORTS)
			for (unsigned i = 10; i < 20; i++)
				j += (int16_t)(b->off.w[i] ^ 0x8000) <= x;
	}
	/* Not the last run, so a run or a block follows run j. */
	h = &s->hit[s->nhit++ % 4];
	if (b->kind == DEP_BYTES) {
		h->clock = b->clock + (j ? b->off.b[j - 1] : 0);
		h->next = j + 1 < b->n ? b->clock + b->off.b[j] : b->next;
		di = j, dend = j + 1;
	} else {
		h->clock = b->clock + (j ? b->off.w[j - 1] : 0);
		h->next = j + 1 < b->n ? b->clock + b->off.w[j] : b->next;
		di = b->kind == DEP_WIDE && j ? b->off.w[10 + j - 1] : j;
		dend = b->kind == DEP_WIDE && j + 1 < b->n ? b->off.w[10 + j] : j + 1;
	}
	h->iter = b->iter + di;
	h->end = b->iter + (j + 1 < b->n ? dend : b->niter) - 1;
	return h;
}

bool dep_starts_add_run(struct dep_starts *s, uint32_t clock, uint64_t count)
{
	bool ok;

	if (!count)
		return true;
	ok = dep_starts_add(s, clock);
	/* the rest extend the run just added or continued (dep_starts_add()'s common case); without
	 * memory they are counted all the same, their starts not stored */
	s->n += count - 1;
	return ok;
}

uint64_t dep_starts_span(struct dep_starts *s, uint32_t clock, uint32_t *lo, uint32_t *hi)
{
	const struct dep_hit *h;
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

void dep_starts_free(struct dep_starts *s)
{
	free(s->raw);
	free(s->bucket);
	free(s->memo);
	memset(s, 0, sizeof(*s));
}
