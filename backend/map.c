/*
 * Reduction maps (map.h): open-addressing tables, and the buffers and pool jobs that fill them
 * (PROMPT 5.3, Figure 5).
 *
 * The table.  Power-of-two groups of 4 slots, each group its 4 keys then their 4 values, so that
 * for the one-word reductions (count, sum, min, max) a group is one 64-byte line.  Probing goes
 * group by group from the group named by the top bits of group_hash(key), which both halves of a
 * packed id pair reach.  A lookup compares the key with the group's 4 keys at once
 * (SSE2; 4 branch-free compares elsewhere) and branches once, so it mispredicts only for a key
 * outside its own group, where probing slot by slot mispredicts for every key not first in line.
 * Tables grow at 3/4 full; one that cannot grow fills on to 7/8 and then drops new keys, counted.
 * Tables past 256 KiB (out of L2) are prefetched into 16 entries ahead.
 *
 * Parallel reduction.  Pool threads take 4096-entry chunks of the full buffers in turn, each into
 * its own table; a read folds the tables into the first.  The alternative, every thread scanning
 * every entry for the keys of its hash partition (disjoint tables, nothing to fold), pays a pass
 * over the whole buffer per thread and lost in every case measured.  Chunks in turn rather than
 * one fixed slice a thread, so that a thread the scheduler holds back leaves its part to others.
 *
 * Buffering.  A ring of 4 buffers where PROMPT has two (struct mn_map says how it works): with
 * two, the owner waited for every job, and a pool thread that had gone to sleep between jobs
 * (pool.c spins ~50 us first) took 130 to 290 us on average to start the next one on the 2-vCPU
 * VM below, with two threads; with four, the owner goes on filling meanwhile.
 *
 * Expected and measured.  2-vCPU AMD EPYC KVM guest, clang 19 -O2, 10 million inserts into a
 * count map, ns an insert, the same quiet minute for each table.  "graph" and "aos" are the
 * dependence streams of bench/maps (22 and 45 distinct keys, periodic); "random D" draws
 * uniformly from D random id pairs.
 *
 *   reduction alone, no pool                 graph   aos   random 1e3   1e4   1e5   1e6
 *   16-byte slots, probed slot by slot        1.19  1.06          5.8   7.1   5.7  21.7
 *   groups of 4, 4 scalar compares            1.84  2.36          2.6   3.5   3.7  14.5
 *   groups of 4, SSE2 compare (this file)     1.17  1.32          2.1   2.9   2.7  13.5
 *     the same, never prefetching             1.19  1.33          2.1   2.9   3.0  19.0
 *
 * Expected: slot-by-slot probing best where the branch predictor learns the stream, worst
 * elsewhere.  Measured: so, and groups with one SIMD compare lose nothing on the periodic streams
 * and win 2.5x on random keys.  Prefetching: 10% on a 2 MiB table, 30% on 32 MiB.
 *
 *   pool, graph stream (16-byte slots, two 64Ki-entry buffers)    1 thread   2 threads
 *   chunks taken in turn                                               1.04        1.56
 *   one fixed slice a thread                                           1.09        1.64
 *   hash partitions, every thread scanning every entry                 1.48        2.59
 *   (random 1e5, 2 threads: chunks 4.0, slices 4.9, partitions 10.1)
 *
 *   pool, graph stream (this file)         two buffers      ring of 4      (buffer entries)
 *   1 thread / 2 threads                   1.32 / 1.94      1.40 / 1.53    64Ki
 *                                          1.31 / 1.53      1.37 / 1.31    128Ki
 *
 * Expected for 2 pool threads on 2 cores: faster than 1, by up to 1.4x (0.35 ns of inserting and
 * 1.2 ns of reducing spread over both cores).  Measured (bench/maps): 0.95x to 1.06x with
 * 256Ki-entry buffers, 0.9x with the default 64Ki, 0.5x to 0.9x with 16Ki: the owner and two pool
 * threads share two cores, and a job start or end is often a sleep and a wake-up (pool.c spins
 * only ~50 us).  With a core to spare for the owner that cost goes.  Unbuffered (a call per
 * insert) measured 3.5 ns; batched on the owner (threads 0, a buffer of 4096) 2.0; GHashTable
 * 6.7.  bench/maps/README.md has the whole table.
 */
#define _GNU_SOURCE   /* qsort_r */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "barrier.h"
#include "map.h"
#include "pool.h"

#define GROUP          4          /* slots a group: 4 keys, then their 4 values */
#define TABLE_MIN      16         /* groups of a new table: 64 slots */
#define GROW_EIGHTHS   6          /* grow at 6/8 full */
#define CHUNK          4096       /* entries a pool thread takes at a time */
#define NBUF           4          /* buffers in a buffered map's ring */
#define PREFETCH_BYTES (256u << 10)  /* tables bigger than this are prefetched into */
#define PREFETCH_AHEAD 16         /* entries ahead */

/*
 * One open-addressing table of 2^n groups, probed group after group from the group the hash's
 * top bits name.  A group is GROUP keys and then their GROUP values, `vw` words each: for the
 * one-word reductions 4 keys and 4 values, one 64-byte line.  Key 0 marks an empty slot, so the
 * key 0 itself lives apart, in `zero`.  Nothing is ever deleted, so a lookup stops at the first
 * group with an empty slot.  A new value is all zero, which every reduction takes as "nothing
 * yet" (see update()).
 */
struct table {
	uint64_t *g;             /* the groups; NULL until the first insert */
	uint64_t *zero;          /* key 0's value (vw words), in the same allocation */
	uint64_t gmask;          /* groups - 1 */
	unsigned shift;          /* 64 - log2(groups): the group is the hash's top bits */
	bool has_zero;           /* key 0 was inserted */
	size_t count;            /* keys in the groups */
	size_t limit;            /* grow before count passes it */
	uint64_t lost;           /* inserts (or merged keys) dropped for want of memory */
} __attribute__((aligned(64)));  /* each pool thread writes its own: no false sharing */

/*
 * A buffered map's buffers form a ring, used in order; three counters that only grow say where
 * each one is (buffer i is buf[i % NBUF]):
 *
 *	| reduced | done .. started: in the job | started .. filled: full, waiting | filling |
 *
 * The owner fills buffer `filled`; a full one waits until the pool is free, and the next job then
 * takes every full one.  So the owner blocks only when every buffer is full or being reduced, and
 * a pool that was slow to wake up (a sleeping thread on a loaded or virtual machine can take a
 * few hundred microseconds) finds more work waiting, not an owner waiting.
 */
struct mn_map {
	struct mn_map_head head; /* first: map.h's inserts cast the map to it */
	/* The owner writes the head at every insert; what pool threads read starts a line later. */
	enum mn_map_kind kind __attribute__((aligned(64)));
	unsigned k;              /* SET: values kept */
	unsigned vw;             /* words of a value */
	unsigned nt;             /* tables: pool threads, or 1 */
	struct mn_pool *pool;    /* NULL: unbuffered or batched, on the owner */
	bool own_pool;
	bool busy;               /* a job of ours is started and not yet waited for */
	bool unmerged;           /* tables past the first may hold keys */
	uint64_t *keys[NBUF];    /* the ring; one buffer when batched, none when unbuffered */
	uint64_t *vals[NBUF];
	uint32_t n[NBUF];        /* entries in each full buffer */
	uint64_t filled, started, done;
	uint64_t job_first;      /* the job's buffers: job_first on, job_bufs of them */
	unsigned job_bufs;
	size_t cpb;              /* chunks a buffer */
	uint64_t lost;           /* lost in merges of other maps, beyond the tables' own */
	uint64_t one_key, one_val;  /* an unbuffered map's one-entry buffer */
	struct table *t;         /* nt tables */
	/* Written by the pool threads during a job. */
	size_t next_chunk __attribute__((aligned(64)));  /* of the job's buffers, in ring order */
	unsigned shares_done;    /* threads through with the job */
};

_Static_assert(offsetof(struct mn_map, head) == 0, "map.h casts a map to its head");

/* ---- Hashing and probing --------------------------------------------------------------------- */

/*
 * The group of a key is the top bits of this multiplicative hash, not of mn_hash64() (map.h, the
 * finalizer everything else uses): the top bits are all a group index needs, and a key is hashed
 * at every insert, where mn_hash64()'s two dependent multiplies made batched inserts slower
 * (bench-maps, graph stream, "Mnemo, 1 thread", alternated runs on a loaded 2-vCPU VM: 99-137 ms
 * against 127-172 ms; again 124-152 against 147-155).  Both halves of a packed id pair reach the
 * top bits.
 */
static inline uint64_t group_hash(uint64_t key)
{
	key ^= key >> 32;
	return key * UINT64_C(0x9e3779b97f4a7c15);
}

static inline size_t group_words(unsigned vw)
{
	return GROUP * (1 + (size_t)vw);
}

static inline uint64_t *group(const struct table *t, uint64_t i, unsigned vw)
{
	return t->g + i * group_words(vw);
}

/* The value of slot j of group g. */
static inline uint64_t *value(uint64_t *g, unsigned j, unsigned vw)
{
	return g + GROUP + j * vw;
}

/* Makes t an empty table of `groups` groups; false without memory (t unchanged then). */
static bool table_alloc(struct table *t, size_t groups, unsigned vw)
{
	size_t bytes = (groups * group_words(vw) + vw) * 8;
	void *p;

	if (posix_memalign(&p, 64, bytes))
		return false;
	memset(p, 0, bytes);
	t->g = p;
	t->zero = t->g + groups * group_words(vw);
	t->gmask = groups - 1;
	t->shift = 64 - (unsigned)__builtin_ctzll(groups);
	t->limit = groups * GROUP / 8 * GROW_EIGHTHS;
	t->count = 0;
	t->has_zero = false;
	return true;
}

static void table_free(struct table *t)
{
	free(t->g);
	memset(t, 0, sizeof(*t));
}

/* Bit j set where key j of group g equals key: no branch, so no misprediction per slot. */
#if defined(__SSE2__)
static inline unsigned match(const uint64_t *g, uint64_t key)
{
	__m128i k = _mm_set1_epi64x((long long)key);
	__m128i a = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)g), k);
	__m128i b = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)g + 1), k);

	/* A 64-bit key is equal where both its 32-bit halves are (SSE2 has no 64-bit compare). */
	a = _mm_and_si128(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
	b = _mm_and_si128(b, _mm_shuffle_epi32(b, _MM_SHUFFLE(2, 3, 0, 1)));
	return (unsigned)_mm_movemask_pd(_mm_castsi128_pd(a)) |
	       (unsigned)_mm_movemask_pd(_mm_castsi128_pd(b)) << 2;
}
#else
static inline unsigned match(const uint64_t *g, uint64_t key)
{
	return (unsigned)(g[0] == key) | (unsigned)(g[1] == key) << 1 |
	       (unsigned)(g[2] == key) << 2 | (unsigned)(g[3] == key) << 3;
}
#endif

/*
 * The most keys a table takes when it cannot grow: 7/8 full.  Lookups of absent keys end at an
 * empty slot, and a fuller table would make them scan most of it.
 */
static inline size_t table_full(const struct table *t)
{
	return (t->gmask + 1) * GROUP / 8 * 7;
}

/* Doubles the table; false (the table unchanged, the next try a little later) without memory. */
static bool grow(struct table *t, unsigned vw)
{
	struct table n = *t;

	if (!table_alloc(&n, (t->gmask + 1) * 2, vw)) {
		t->limit += (t->gmask + 1) * GROUP / 32;
		if (t->limit > table_full(t))
			t->limit = table_full(t);
		return false;
	}
	for (uint64_t i = 0; i <= t->gmask; i++) {
		uint64_t *g = group(t, i, vw);

		for (unsigned j = 0; j < GROUP; j++) {
			uint64_t *d, e;

			if (!g[j])
				continue;
			for (e = group_hash(g[j]) >> n.shift;; e = (e + 1) & n.gmask) {
				d = group(&n, e, vw);
				if (match(d, 0))
					break;
			}
			e = (uint64_t)__builtin_ctz(match(d, 0));
			d[e] = g[j];
			memcpy(value(d, (unsigned)e, vw), value(g, j, vw), (size_t)vw * 8);
		}
	}
	n.count = t->count;
	n.has_zero = t->has_zero;
	memcpy(n.zero, t->zero, (size_t)vw * 8);
	free(t->g);
	*t = n;
	return true;
}

/*
 * Adds key (hash h), absent from t, with a zero value and returns the value; NULL if the table is
 * full and cannot grow.  Out of line: the hot loops only look keys up, and a new key is rare.
 */
static __attribute__((noinline)) uint64_t *add(struct table *t, uint64_t key, uint64_t h,
					       unsigned vw)
{
	size_t full = table_full(t);
	uint64_t i, *g;
	unsigned m;

	if (!key) {
		t->has_zero = true;
		return t->zero;
	}
	/* Past the limit, grow; a table that could not and is full tries again only now and
	 * then, so that a failing allocation is not a system call per insert. */
	if (t->count >= t->limit && (t->count < full || t->lost % 1024 == 0))
		grow(t, vw);
	if (t->count >= full)
		return NULL;
	for (i = h >> t->shift;; i = (i + 1) & t->gmask) {
		g = group(t, i, vw);
		m = match(g, 0);
		if (m)
			break;
	}
	t->count++;
	m = (unsigned)__builtin_ctz(m);
	g[m] = key;
	return value(g, m, vw);
}

/*
 * The value of key (hash h) in groups G, or NULL if absent.  Key 0 is the caller's: it would
 * match an empty slot.  Takes the table's fields as arguments so that a hot loop holds them in
 * registers: the stores to values could otherwise alias the table's own words.
 */
static inline __attribute__((always_inline)) uint64_t *lookup(uint64_t *G, uint64_t gmask,
							       unsigned shift, uint64_t key,
							       uint64_t h, unsigned vw)
{
	for (uint64_t i = h >> shift;; i = (i + 1) & gmask) {
		uint64_t *g = G + i * group_words(vw);
		unsigned m = match(g, key);

		if (__builtin_expect(m != 0, 1))
			return value(g, (unsigned)__builtin_ctz(m), vw);
		if (match(g, 0))
			return NULL;
	}
}

/* The value of key, added zeroed if new; NULL if the table is full and cannot grow. */
static inline __attribute__((always_inline)) uint64_t *find_or_add(struct table *t, uint64_t key,
								    uint64_t h, unsigned vw)
{
	uint64_t *v = key ? lookup(t->g, t->gmask, t->shift, key, h, vw) : NULL;

	return v ? v : add(t, key, h, vw);
}

/* ---- The reductions -------------------------------------------------------------------------- */

/*
 * A value's words, by kind (all zero before the first insert):
 *   COUNT, SUM, MAX  [0] the count, sum, maximum
 *   MIN              [0] ~minimum (so that zero, "nothing yet", is above every value)
 *   CONST            [0] the value, [1] 0 nothing yet, 1 constant, 2 varies
 *   SET              [0] values kept | overflow << 32, [1..1+k) the values kept, ascending
 */
static unsigned value_words(enum mn_map_kind kind, unsigned k)
{
	return kind == MN_MAP_SET ? 1 + k : kind == MN_MAP_CONST ? 2 : 1;
}

#define SET_OVERFLOW (UINT64_C(1) << 32)

/* Adds x to a SET value: kept sorted, the k smallest distinct values. */
static void set_add(uint64_t *v, unsigned k, uint64_t x)
{
	uint64_t *vals = v + 1;
	unsigned n = (unsigned)v[0], i;

	for (i = 0; i < n && vals[i] < x; i++)
		;
	if (i < n && vals[i] == x)
		return;
	if (n == k) {
		v[0] |= SET_OVERFLOW;
		if (i == n)
			return;
		n--;  /* the largest makes room */
	} else {
		v[0]++;
	}
	memmove(vals + i + 1, vals + i, (size_t)(n - i) * 8);
	vals[i] = x;
}

static inline __attribute__((always_inline)) void update(enum mn_map_kind kind, unsigned k,
							  uint64_t *v, uint64_t x)
{
	switch (kind) {
	case MN_MAP_COUNT:
		v[0]++;
		break;
	case MN_MAP_SUM:
		v[0] += x;
		break;
	case MN_MAP_MIN:
		if (~x > v[0])
			v[0] = ~x;
		break;
	case MN_MAP_MAX:
		if (x > v[0])
			v[0] = x;
		break;
	case MN_MAP_CONST:
		if (!v[1]) {
			v[0] = x;
			v[1] = 1;
		} else if (v[0] != x) {
			v[1] = 2;
		}
		break;
	case MN_MAP_SET:
		set_add(v, k, x);
		break;
	}
}

/* Folds value `from` into value `into` (of the same key): the reduction of both one's inserts. */
static void combine(enum mn_map_kind kind, unsigned k, uint64_t *into, const uint64_t *from)
{
	switch (kind) {
	case MN_MAP_COUNT:
	case MN_MAP_SUM:
		into[0] += from[0];
		break;
	case MN_MAP_MIN:
	case MN_MAP_MAX:
		if (from[0] > into[0])
			into[0] = from[0];
		break;
	case MN_MAP_CONST:
		if (!into[1]) {
			into[0] = from[0];
			into[1] = from[1];
		} else if (from[1] && (from[1] == 2 || into[0] != from[0])) {
			into[1] = 2;
		}
		break;
	case MN_MAP_SET:
		for (unsigned i = 0; i < (unsigned)from[0]; i++)
			set_add(into, k, from[1 + i]);
		into[0] |= from[0] & SET_OVERFLOW;
		break;
	}
}

/*
 * Reduces entries [j, n) into t until a new key changes the table (it may have grown); returns
 * where it stopped.  kind, vw and pf are constants where this is inlined.
 */
static inline __attribute__((always_inline)) size_t reduce_run(struct table *t,
								const uint64_t *keys,
								const uint64_t *vals, size_t j,
								size_t n, enum mn_map_kind kind,
								unsigned k, unsigned vw, bool pf)
{
	uint64_t *G = t->g, gmask = t->gmask;
	unsigned shift = t->shift;

	for (; j < n; j++) {
		uint64_t key = keys[j], h = group_hash(key), *v;

		if (pf && j + PREFETCH_AHEAD < n)
			__builtin_prefetch(G + (group_hash(keys[j + PREFETCH_AHEAD]) >> shift) *
						   group_words(vw), 1);
		v = __builtin_expect(key != 0, 1) ? lookup(G, gmask, shift, key, h, vw) : NULL;
		if (__builtin_expect(!v, 0)) {
			v = add(t, key, h, vw);
			if (!v)
				t->lost++;
			else
				update(kind, k, v, kind == MN_MAP_COUNT ? 0 : vals[j]);
			return j + 1;
		}
		update(kind, k, v, kind == MN_MAP_COUNT ? 0 : vals[j]);
	}
	return j;
}

/* Reduces n entries into t. */
static inline __attribute__((always_inline)) void reduce_kind(struct table *t, const uint64_t *keys,
							       const uint64_t *vals, size_t n,
							       enum mn_map_kind kind, unsigned k,
							       unsigned vw)
{
	if (!t->g && !table_alloc(t, TABLE_MIN, vw)) {
		t->lost += n;
		return;
	}
	for (size_t j = 0; j < n;) {
		if ((t->gmask + 1) * group_words(vw) * 8 > PREFETCH_BYTES)
			j = reduce_run(t, keys, vals, j, n, kind, k, vw, true);
		else
			j = reduce_run(t, keys, vals, j, n, kind, k, vw, false);
	}
}

static void reduce(const struct mn_map *m, struct table *t, const uint64_t *keys,
		   const uint64_t *vals, size_t n)
{
	switch (m->kind) {
	case MN_MAP_COUNT:
		reduce_kind(t, keys, vals, n, MN_MAP_COUNT, 0, 1);
		break;
	case MN_MAP_SUM:
		reduce_kind(t, keys, vals, n, MN_MAP_SUM, 0, 1);
		break;
	case MN_MAP_MIN:
		reduce_kind(t, keys, vals, n, MN_MAP_MIN, 0, 1);
		break;
	case MN_MAP_MAX:
		reduce_kind(t, keys, vals, n, MN_MAP_MAX, 0, 1);
		break;
	case MN_MAP_CONST:
		reduce_kind(t, keys, vals, n, MN_MAP_CONST, 0, 2);
		break;
	case MN_MAP_SET:
		reduce_kind(t, keys, vals, n, MN_MAP_SET, m->k, m->vw);
		break;
	}
}

/*
 * A pool job: thread `index` reduces chunks of the job's buffers (those full when it started) into
 * its own table.  Chunks are taken in turn rather than fixed slices, so a thread the scheduler
 * holds back (the pool shares the cores with the owner and the profiled program) leaves its part
 * to the others.  Relaxed: the buffers and counters were published by mn_pool_start().
 */
static void reduce_job(void *arg, unsigned index)
{
	struct mn_map *m = arg;
	size_t c, chunks = m->job_bufs * m->cpb;

	while ((c = mn_fetch_add_relaxed(&m->next_chunk, 1)) < chunks) {
		unsigned b = (unsigned)((m->job_first + c / m->cpb) % NBUF);
		size_t lo = c % m->cpb * CHUNK, n = m->n[b];

		if (lo < n)
			reduce(m, &m->t[index], m->keys[b] + lo, m->vals[b] + lo,
			       n - lo < CHUNK ? n - lo : CHUNK);
	}
	/* Publishes this thread's table; pairs with the acquire load in pool_idle(). */
	mn_fetch_add_release(&m->shares_done, 1);
}

/* Runs body for every key of table t, with key and v (its value) in scope. */
#define TABLE_FOREACH(t, vw, key, v, body)                                                        \
	do {                                                                                      \
		if ((t)->g && (t)->has_zero) {                                                    \
			uint64_t key = 0, *v = (t)->zero;                                         \
			body;                                                                     \
		}                                                                                 \
		for (uint64_t gi_ = 0; (t)->g && gi_ <= (t)->gmask; gi_++) {                      \
			uint64_t *g_ = group((t), gi_, (vw));                                     \
			for (unsigned j_ = 0; j_ < GROUP; j_++) {                                 \
				uint64_t key = g_[j_], *v = value(g_, j_, (vw));                  \
				if (key) {                                                        \
					body;                                                     \
				}                                                                 \
			}                                                                         \
		}                                                                                 \
	} while (0)

/* Folds every key of table `from` into `into` (a table of m); keys without memory are lost. */
static void fold(struct mn_map *m, struct table *into, const struct table *from)
{
	unsigned vw = m->vw;

	if (!from->g)
		return;
	if (!into->g && !table_alloc(into, TABLE_MIN, vw)) {
		into->lost += from->count + from->has_zero;
		return;
	}
	TABLE_FOREACH(from, vw, key, v, {
		uint64_t *d = find_or_add(into, key, group_hash(key), vw);

		if (!d)
			into->lost++;
		else
			combine(m->kind, m->k, d, v);
	});
}

/* ---- Buffers --------------------------------------------------------------------------------- */

/* Whether our job is over (or none is started): reap() then does not block. */
static bool pool_idle(struct mn_map *m)
{
	/* Pairs with the release add at the end of reduce_job(): the tables are complete. */
	return !m->busy || mn_load_acquire(&m->shares_done) == m->nt;
}

/* Waits for the job (every thread is through with it, or about to be) and frees its buffers. */
static void reap(struct mn_map *m)
{
	if (!m->busy)
		return;
	mn_pool_wait(m->pool);
	m->busy = false;
	m->done = m->started;
}

/* Starts a job on every full buffer, if there is one; our own job must be reaped. */
static void start_job(struct mn_map *m)
{
	if (m->started == m->filled)
		return;
	/* Returns at once unless another map on a shared pool has a job in it. */
	mn_pool_wait(m->pool);
	/* Published, with the buffers, by mn_pool_start() (pool.h: the threads acquire what it
	 * releases); nobody writes them again until reap() has waited for the job. */
	m->job_first = m->started;
	m->job_bufs = (unsigned)(m->filled - m->started);
	m->next_chunk = 0;
	m->shares_done = 0;
	m->busy = true;
	if (m->nt > 1)
		m->unmerged = true;
	mn_pool_start(m->pool, reduce_job, m);
	m->started = m->filled;
}

/* The buffer being filled is full (or flushed): queue it, start what can start, move on. */
static void hand_over(struct mn_map *m)
{
	unsigned b = (unsigned)(m->filled % NBUF);

	m->n[b] = m->head.fill;
	m->filled++;
	if (pool_idle(m)) {
		reap(m);
		start_job(m);
	}
	if (m->filled - m->done == NBUF) {
		/* Every buffer is full or in the job: the next one to fill is in it. */
		reap(m);
		start_job(m);
	}
	b = (unsigned)(m->filled % NBUF);
	m->head.keys = m->keys[b];
	m->head.vals = m->vals[b];
	m->head.fill = 0;
}

/* An unbuffered map's insert: straight into its table. */
static inline __attribute__((always_inline)) void insert_one(struct mn_map *m, struct table *t,
							      uint64_t key, uint64_t x,
							      enum mn_map_kind kind, unsigned vw)
{
	uint64_t *v;

	if (__builtin_expect(!t->g, 0) && !table_alloc(t, TABLE_MIN, vw)) {
		t->lost++;
		return;
	}
	v = find_or_add(t, key, group_hash(key), vw);
	if (__builtin_expect(!v, 0))
		t->lost++;
	else
		update(kind, m->k, v, x);
}

/* Reduces what the buffer being filled holds, n entries: on the pool, or on the owner. */
static void buffer_done(struct mn_map *m, uint32_t n)
{
	m->head.fill = n;
	if (m->pool) {
		hand_over(m);
	} else {
		reduce(m, m->t, m->head.keys, m->head.vals, n);
		m->head.fill = 0;
	}
}

void mn_map_buffer_full(struct mn_map *m)
{
	uint64_t key = m->one_key, x = m->one_val;
	struct table *t = m->t;

	if (m->head.cap > 1 || m->pool) {
		buffer_done(m, m->head.cap);
		return;
	}
	switch (m->kind) {
	case MN_MAP_COUNT:
		insert_one(m, t, key, x, MN_MAP_COUNT, 1);
		break;
	case MN_MAP_SUM:
		insert_one(m, t, key, x, MN_MAP_SUM, 1);
		break;
	case MN_MAP_MIN:
		insert_one(m, t, key, x, MN_MAP_MIN, 1);
		break;
	case MN_MAP_MAX:
		insert_one(m, t, key, x, MN_MAP_MAX, 1);
		break;
	case MN_MAP_CONST:
		insert_one(m, t, key, x, MN_MAP_CONST, 2);
		break;
	case MN_MAP_SET:
		insert_one(m, t, key, x, MN_MAP_SET, m->vw);
		break;
	}
}

void mn_map_flush(struct mn_map *m)
{
	if (m->head.fill)
		buffer_done(m, m->head.fill);
	if (!m->pool)
		return;
	reap(m);
	start_job(m);
	reap(m);
	if (m->unmerged) {
		for (unsigned i = 1; i < m->nt; i++) {
			fold(m, &m->t[0], &m->t[i]);
			m->t[0].lost += m->t[i].lost;
			table_free(&m->t[i]);
		}
	}
	m->unmerged = false;
}

/* ---- Setup ----------------------------------------------------------------------------------- */

static int create(struct mn_map **mp, enum mn_map_kind kind, unsigned k, struct mn_pool *pool,
		  unsigned threads, size_t buffer)
{
	struct mn_map *m;
	void *p;

	*mp = NULL;
	if ((unsigned)kind > MN_MAP_SET || (kind == MN_MAP_SET) != (k != 0) || k > MN_MAP_SET_MAX ||
	    threads > MN_POOL_MAX || buffer > UINT32_MAX)
		return -EINVAL;
	if (posix_memalign(&p, 64, sizeof(*m)))
		return -ENOMEM;
	m = memset(p, 0, sizeof(*m));
	m->kind = kind;
	m->k = k;
	m->vw = value_words(kind, k);
	m->head.kind = kind;
	if (pool) {
		m->pool = mn_pool_threads(pool) ? pool : NULL;
	} else if (threads && mn_pool_create(&m->pool, threads) == 0) {
		m->own_pool = true;
	}
	if (!buffer)
		buffer = m->pool ? MN_MAP_BUFFER_DEFAULT : 1;
	m->nt = m->pool ? mn_pool_threads(m->pool) : 1;
	if (posix_memalign(&p, 64, m->nt * sizeof(*m->t)))
		p = NULL;
	m->t = p;
	if (m->t && (m->pool || buffer > 1)) {
		unsigned nbuf = m->pool ? NBUF : 1;

		if (posix_memalign(&p, 64, buffer * 16 * nbuf))
			p = NULL;
		for (unsigned i = 0; p && i < nbuf; i++) {
			m->keys[i] = (uint64_t *)p + 2 * i * buffer;
			m->vals[i] = m->keys[i] + buffer;
			/* Fault the buffers in now rather than in the first inserts (a COUNT
			 * map's values may never be written). */
			memset(m->keys[i], 0, buffer * 8);
			if (kind != MN_MAP_COUNT)
				memset(m->vals[i], 0, buffer * 8);
		}
	}
	if ((m->pool || buffer > 1) && (!m->t || !m->keys[0])) {
		/* Without threads or buffers the map still works, unbuffered. */
		if (m->own_pool)
			mn_pool_destroy(m->pool);
		m->pool = NULL;
		m->own_pool = false;
		m->nt = 1;
		free(m->t);
		m->t = posix_memalign(&p, 64, sizeof(*m->t)) ? NULL : p;
	}
	if (!m->t) {
		free(m);
		return -ENOMEM;
	}
	memset(m->t, 0, m->nt * sizeof(*m->t));
	if (m->keys[0]) {
		m->head.keys = m->keys[0];
		m->head.vals = m->vals[0];
		m->head.cap = (uint32_t)buffer;
		m->cpb = (buffer + CHUNK - 1) / CHUNK;
	} else {
		m->head.keys = &m->one_key;
		m->head.vals = &m->one_val;
		m->head.cap = 1;
	}
	*mp = m;
	return 0;
}

int mn_map_create(struct mn_map **mp, enum mn_map_kind kind, unsigned k, unsigned threads,
		  size_t buffer)
{
	return create(mp, kind, k, NULL, threads, buffer);
}

int mn_map_create_on(struct mn_map **mp, enum mn_map_kind kind, unsigned k, struct mn_pool *pool,
		     size_t buffer)
{
	if (!pool)
		return -EINVAL;
	return create(mp, kind, k, pool, 0, buffer);
}

void mn_map_destroy(struct mn_map *m)
{
	if (!m)
		return;
	if (m->busy)
		mn_pool_wait(m->pool);
	if (m->own_pool)
		mn_pool_destroy(m->pool);
	for (unsigned i = 0; i < m->nt; i++)
		free(m->t[i].g);
	free(m->t);
	free(m->keys[0]);
	free(m);
}

/* ---- Reading --------------------------------------------------------------------------------- */

static void read_value(const struct mn_map *m, const uint64_t *v, struct mn_map_value *out)
{
	memset(out, 0, sizeof(*out));
	switch (m->kind) {
	case MN_MAP_COUNT:
	case MN_MAP_SUM:
	case MN_MAP_MAX:
		out->value = v[0];
		break;
	case MN_MAP_MIN:
		out->value = ~v[0];
		break;
	case MN_MAP_CONST:
		out->varies = v[1] == 2;
		out->value = out->varies ? 0 : v[0];
		break;
	case MN_MAP_SET:
		out->n = (unsigned)v[0];
		out->overflow = (v[0] & SET_OVERFLOW) != 0;
		out->values = v + 1;
		break;
	}
}

/* After mn_map_flush(), every key and every lost insert is in the first table. */

bool mn_map_get(struct mn_map *m, uint64_t key, struct mn_map_value *out)
{
	struct table *t = m->t;
	const uint64_t *v;

	mn_map_flush(m);
	if (!t->g)
		return false;
	if (key)
		v = lookup(t->g, t->gmask, t->shift, key, group_hash(key), m->vw);
	else
		v = t->has_zero ? t->zero : NULL;
	if (!v)
		return false;
	read_value(m, v, out);
	return true;
}

size_t mn_map_size(struct mn_map *m)
{
	mn_map_flush(m);
	return m->t->count + m->t->has_zero;
}

struct entry {
	uint64_t key;
	const uint64_t *v;
};

static int by_key(const void *a, const void *b)
{
	uint64_t x = ((const struct entry *)a)->key, y = ((const struct entry *)b)->key;

	return (x > y) - (x < y);
}

int mn_map_foreach(struct mn_map *m, mn_map_fn *fn, void *arg)
{
	size_t n = mn_map_size(m), i = 0;
	struct mn_map_value out;
	struct entry *e;
	int ret = 0;

	if (!n)
		return 0;
	e = malloc(n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	TABLE_FOREACH(m->t, m->vw, key, v, {
		e[i].key = key;
		e[i++].v = v;
	});
	qsort(e, n, sizeof(*e), by_key);
	for (i = 0; i < n && !ret; i++) {
		read_value(m, e[i].v, &out);
		ret = fn(arg, e[i].key, &out);
	}
	free(e);
	return ret;
}

int mn_map_merge(struct mn_map *into, struct mn_map *from)
{
	if (into == from || into->kind != from->kind || into->k != from->k)
		return -EINVAL;
	mn_map_flush(into);
	mn_map_flush(from);
	fold(into, into->t, from->t);
	into->lost += mn_map_lost(from);
	return 0;
}

uint64_t mn_map_lost(struct mn_map *m)
{
	mn_map_flush(m);
	return m->lost + m->t->lost;
}

unsigned mn_map_threads(const struct mn_map *m)
{
	return m->pool ? m->nt : 0;
}

/* ---- Row maps (map.h, struct mn_rows) -------------------------------------------------------- */

/*
 * Open addressing over 2^bits slots of a key and its row, 64 bytes, probed slot by slot: a row
 * map is looked up on a memo miss only, and its rows are written in place, so the grouped layout
 * above (a lookup per insert, values apart from keys) buys nothing here.  At most half full; a
 * map that cannot grow goes on at a higher load until it is full.  count 0 marks an empty slot,
 * which is why a new row must be counted at once.
 *
 * The functions are weak symbols: a build that links a twin's (bench/maps/rows_plain.c, the
 * breakdown's plain baseline, in mnemo-backend-plain) gets the twin's, and this file's maps still.
 */
#define MN_ROWS_WEAK __attribute__((weak))

struct rows_slot {
	uint64_t key[MN_ROWS_KEY_WORDS];
	struct mn_row row;
};
_Static_assert(sizeof(struct rows_slot) == 64, "a key and its row: one cache line");

#define ROWS_BITS_MIN 10

static bool rows_key_equal(const uint64_t *a, const uint64_t *b)
{
	return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]));
}

MN_ROWS_WEAK bool mn_rows_grows(const struct mn_rows *r)
{
	return 2 * (r->n + 1) > (r->e ? (size_t)1 << r->bits : 0);
}

/* Twice the slots, every row moved (the memo's pending counts go in first); -1 without memory. */
static int rows_grow(struct mn_rows *r)
{
	unsigned bits = r->bits ? r->bits + 1 : ROWS_BITS_MIN;
	size_t mask = ((size_t)1 << bits) - 1;
	struct rows_slot *e = calloc(mask + 1, sizeof(*e)), *old = r->e;

	if (!e)
		return -1;
	mn_rows_memo_flush(r);
	for (size_t j = 0; old && j < (size_t)1 << r->bits; j++) {
		size_t i;

		if (!old[j].row.count)
			continue;
		for (i = mn_rows_hash(old[j].key) & mask; e[i].row.count; i = (i + 1) & mask)
			;
		e[i] = old[j];
	}
	free(old);
	r->e = e;
	r->bits = bits;
	r->gen++;
	return 0;
}

MN_ROWS_WEAK struct mn_row *mn_rows_get(struct mn_rows *r, const uint64_t *key)
{
	size_t size = r->e ? (size_t)1 << r->bits : 0, i;
	struct rows_slot *e;

	if (mn_rows_grows(r) && rows_grow(r) && r->n + 1 >= size)
		return NULL;
	size = (size_t)1 << r->bits;
	e = r->e;
	for (i = mn_rows_hash(key) & (size - 1); e[i].row.count; i = (i + 1) & (size - 1))
		if (rows_key_equal(e[i].key, key))
			return &e[i].row;
	memcpy(e[i].key, key, sizeof(e[i].key));
	e[i].row = (struct mn_row){ .min = UINT64_MAX };
	r->n++;
	return &e[i].row;
}

MN_ROWS_WEAK struct mn_row *mn_rows_next(const struct mn_rows *r, struct mn_rows_cursor *c)
{
	struct rows_slot *e = r->e;

	for (; e && c->i < (size_t)1 << r->bits; c->i++)
		if (e[c->i].row.count)
			return &e[c->i++].row;
	return NULL;
}

/* Not weak: it reads the map only through mn_rows_next(), so a twin keeps it. */
struct mn_row **mn_rows_sorted(const struct mn_rows *r,
					    int (*cmp)(const void *, const void *, void *),
					    void *arg)
{
	struct mn_row **v = malloc((r->n + 1) * sizeof(*v));
	struct mn_rows_cursor c = { 0 };
	struct mn_row *row;
	size_t n = 0;

	if (!v)
		return NULL;
	while ((row = mn_rows_next(r, &c)))
		v[n++] = row;
	qsort_r(v, n, sizeof(*v), cmp, arg);
	return v;
}

MN_ROWS_WEAK void mn_rows_free(struct mn_rows *r)
{
	free(r->e);
	if (!r->memo_lent)
		free(r->memo);
	memset(r, 0, sizeof(*r));
}

/* ---- The memo of recent rows ---- */

MN_ROWS_WEAK int mn_rows_memo_init(struct mn_rows *r, unsigned bits)
{
	size_t n = (size_t)1 << bits;
	void *p;

	if (bits < 1 || bits > 24 || r->memo)
		return -EINVAL;
	if (posix_memalign(&p, 64, n * sizeof(*r->memo)))
		return -ENOMEM;
	r->memo = p;
	r->mshift = 32 - bits;
	for (size_t i = 0; i < n; i++)
		r->memo[i] = (struct mn_rows_memo){ .min = UINT64_MAX };
	return 0;
}

MN_ROWS_WEAK int mn_rows_memo_use(struct mn_rows *r, struct mn_rows_memo *slots, unsigned bits)
{
	if (bits < 1 || bits > 24 || r->memo)
		return -EINVAL;
	r->memo = slots;
	r->mshift = 32 - bits;
	r->memo_lent = true;
	return 0;
}

static void memo_flush_one(struct mn_rows_memo *m)
{
	struct mn_row *row = m->row;

	if (!m->pend)
		return;
	row->count += m->pend;
	if (m->min < row->min)
		row->min = m->min;
	if (m->max > row->max)
		row->max = m->max;
	m->pend = 0;
	m->min = UINT64_MAX;
	m->max = 0;
}

MN_ROWS_WEAK void mn_rows_memo_set(struct mn_rows *r, struct mn_rows_memo *m, uint64_t k0,
				   uint64_t k1, uint32_t k2, struct mn_row *row)
{
	memo_flush_one(m);
	if (!row)
		k0 = 0;
	*m = (struct mn_rows_memo){ k0, k1, k2, r->gen, row, .min = UINT64_MAX };
}

MN_ROWS_WEAK void mn_rows_memo_flush(struct mn_rows *r)
{
	for (size_t i = 0; r->memo && i < (size_t)1 << (32 - r->mshift); i++)
		memo_flush_one(&r->memo[i]);
}

/* ---- Last values ----------------------------------------------------------------------------- */

static uint64_t kv64_index(const struct mn_kv64 *m, uint64_t key)
{
	uint64_t i = mn_hash64(key) & (m->cap - 1);

	while (m->slot[i].key && m->slot[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

bool mn_bits_set(uint64_t **bits, size_t *nwords, uint64_t v)
{
	size_t w = (size_t)(v / 64);

	if (w >= *nwords) {
		size_t n = w + 1 > 2 * *nwords ? w + 1 : 2 * *nwords;
		uint64_t *nb = realloc(*bits, n * sizeof(*nb));

		if (!nb)
			return false;
		memset(nb + *nwords, 0, (n - *nwords) * sizeof(*nb));
		*bits = nb;
		*nwords = n;
	}
	(*bits)[w] |= UINT64_C(1) << (v % 64);
	return true;
}

/* Whether the thread of a (site, thread) key ended. */
static bool kv64_ended(const struct mn_kv64 *m, uint32_t thread)
{
	return mn_bits_has(m->ended, m->ended_words, thread);
}

/* Rehashes into cap slots, without the values of ended threads. */
static bool kv64_rebuild(struct mn_kv64 *m, uint64_t cap)
{
	struct mn_kv64 g = { .cap = cap, .ended = m->ended, .ended_words = m->ended_words };

	if (!(g.slot = calloc(g.cap, sizeof(*g.slot))))
		return false;
	for (uint64_t j = 0; j < m->cap; j++) {
		if (!m->slot[j].key || kv64_ended(m, (uint32_t)m->slot[j].key))
			continue;
		g.slot[kv64_index(&g, m->slot[j].key)] = m->slot[j];
		g.n++;
	}
	free(m->slot);
	*m = g;
	return true;
}

/* Room for one more: ended threads' values out first, then twice the slots if still needed. */
static bool kv64_grow(struct mn_kv64 *m)
{
	if (m->ended_new && m->cap && kv64_rebuild(m, m->cap) && 2 * (m->n + 1) <= m->cap)
		return true;
	return kv64_rebuild(m, m->cap ? 2 * m->cap : 64);
}

void mn_kv64_thread_end(struct mn_kv64 *m, uint32_t thread)
{
	if (mn_bits_set(&m->ended, &m->ended_words, thread))
		m->ended_new++;   /* else its values stay: memory, not answers */
}

bool mn_kv64_put(struct mn_kv64 *m, uint64_t key, uint64_t value)
{
	uint64_t i;

	if (2 * (m->n + 1) > m->cap && !kv64_grow(m))
		return false;
	i = kv64_index(m, key);
	m->n += !m->slot[i].key;
	m->slot[i] = (struct mn_kv64_slot){ key, value };
	return true;
}

bool mn_kv64_get(const struct mn_kv64 *m, uint64_t key, uint64_t *value)
{
	uint64_t i;

	if (!m->cap)
		return false;
	i = kv64_index(m, key);
	*value = m->slot[i].value;
	return m->slot[i].key == key;
}

void mn_kv64_free(struct mn_kv64 *m)
{
	free(m->slot);
	free(m->ended);
	*m = (struct mn_kv64){ 0 };
}

bool mn_kv64_switch(struct mn_kv64 *parked, uint32_t site, uint32_t *owner, uint64_t *value,
		    uint32_t thread, uint64_t *lost)
{
	if (*owner && !kv64_ended(parked, *owner) &&
	    !mn_kv64_put(parked, mn_map_key(site, *owner), *value))
		++*lost;   /* that thread's value is gone: its next use has none */
	*owner = thread;
	return mn_kv64_get(parked, mn_map_key(site, thread), value);
}
