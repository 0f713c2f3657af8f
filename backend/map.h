/*
 * Reduction maps (PROMPT 4.1 and 5.3, Figure 5): what a module keeps its results in.  A map takes
 * a 64-bit key (often two 32-bit ids packed with mn_map_key()) to one reduction of the values
 * inserted with it: their count, sum, minimum or maximum, whether they were all the same, or the
 * set of them up to a bound.
 *
 *	struct mn_map *deps;                              // in the module state
 *	mn_map_create(&deps, MN_MAP_COUNT, 0, 1, 0);      // init: one pool thread, default buffer
 *	mn_map_count_insert(deps, mn_map_key(src, dst));  // a handler: a few instructions
 *	mn_map_merge(deps, other->deps);                  // merge: data-parallel workers
 *	mn_map_foreach(deps, emit_one, p);                // emit: by increasing key
 *	mn_map_destroy(deps);                             // fini
 *
 * Every insert is a reduction (commutative and associative), so nothing needs it applied at once,
 * in order, or in one place.  A buffered map (threads >= 1) appends (key, value) to a buffer and
 * returns; when the buffer fills, the map's pool threads reduce it in parallel, each part of it
 * into its own table, while the module goes on filling the next buffer of a ring of four.  Any
 * read (mn_map_get, mn_map_size, mn_map_foreach, mn_map_merge, mn_map_lost, mn_map_flush) first
 * waits for that, reduces what is still buffered and folds the per-thread tables into one; the
 * next read is then cheap until the next insert.  A map without threads reduces on the calling
 * thread: unbuffered, each insert goes into its table at once; batched (a buffer of 2 or more
 * entries), a full buffer is reduced in one go, which is faster.  Those are for the maps of
 * data-parallel workers, whose threads already fill the cores.
 *
 * Threading: a map belongs to one thread, its owner, which makes every mn_map_* call on it.  Pool
 * threads only ever touch the buffer they were handed and their own tables, and no lock is taken.
 *
 * Memory: a table that cannot grow keeps working at a higher load and, once full, drops inserts of
 * new keys (inserts of the keys it holds still count).  mn_map_lost() says how many were dropped;
 * a module reports that as an incomplete profile.  Nothing here aborts on a failed allocation.
 */
#ifndef MNEMO_MAP_H
#define MNEMO_MAP_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mn_map;   /* opaque but for its head (below) */
struct mn_pool;  /* pool.h */

enum mn_map_kind {
	MN_MAP_COUNT,   /* inserts of the key; the inserted values are ignored */
	MN_MAP_SUM,     /* sum of the values, modulo 2^64 */
	MN_MAP_MIN,     /* smallest value, as unsigned (insert v ^ INT64_MIN for signed order) */
	MN_MAP_MAX,     /* largest value, as unsigned */
	MN_MAP_CONST,   /* the value if every insert had the same one, else "varies" */
	MN_MAP_SET,     /* up to k distinct values; past k, the k smallest and "overflow" */
};

/*
 * MN_MAP_SET keeps, of a key's distinct values, the k smallest, and sets overflow once it has seen
 * more than k: a bound on memory that, unlike "the first k seen", does not depend on the order of
 * inserts or merges.  Its cost grows with k (a slot holds k values), so keep k small.
 */
#define MN_MAP_SET_MAX 64

/* A key's reduction, as read by mn_map_get() and mn_map_foreach(). */
struct mn_map_value {
	uint64_t value;          /* COUNT, SUM, MIN, MAX; CONST unless varies (then 0); SET: 0 */
	bool varies;             /* CONST: inserts had more than one value */
	bool overflow;           /* SET: more than k distinct values were inserted */
	unsigned n;              /* SET: values kept, min(k, distinct values) */
	const uint64_t *values;  /* SET: those n values, ascending; valid until the next call */
};

/*
 * The one hash finalizer of the backend and its modules (MurmurHash3's fmix64): every input bit
 * reaches every output bit, so packed ids, addresses and strides spread alike over a table.
 */
static inline uint64_t mn_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	return x ^ (x >> 33);
}

static inline uint64_t mn_map_key(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}

static inline uint32_t mn_map_key_hi(uint64_t key)
{
	return (uint32_t)(key >> 32);
}

static inline uint32_t mn_map_key_lo(uint64_t key)
{
	return (uint32_t)key;
}

/* ---- Setup ----------------------------------------------------------------------------------- */

/* Entries a buffer of a buffered map holds by default: 4 buffers of 16 bytes an entry, 4 MiB. */
#define MN_MAP_BUFFER_DEFAULT 65536

/*
 * Makes an empty map of the given kind.  k is the bound of a MN_MAP_SET map (1 to MN_MAP_SET_MAX)
 * and must be 0 for the other kinds.  threads is the number of pool threads the map starts to
 * reduce its buffers (at most MN_POOL_MAX), or 0 to reduce on the caller's thread.  buffer is the
 * entries a buffer holds, at most UINT32_MAX; 0 means MN_MAP_BUFFER_DEFAULT with threads and 1
 * (unbuffered) without.  Bigger buffers hand work to the pool less often, which pays where waking
 * its threads is slow (bench/maps/README.md).
 *
 * Returns 0, -EINVAL for a bad kind, k or thread count, or -ENOMEM if the map itself cannot be
 * allocated.  If its threads or buffers cannot be made, the map reduces on the caller's thread
 * instead, which costs only speed: mn_map_threads() then says 0.
 */
int mn_map_create(struct mn_map **mp, enum mn_map_kind kind, unsigned k, unsigned threads,
		  size_t buffer);

/*
 * The same, reducing on a pool the caller made and owns (pool.h), so that several maps of one
 * module share its threads: the map starts jobs on it and waits for them, and the caller's thread
 * must own the pool and every map on it.  One job at a time: a map that fills a buffer while
 * another map's job runs waits for that job.  The pool must outlive the maps.  On a pool of 0
 * threads the map reduces on the caller's thread, as with threads 0.
 */
int mn_map_create_on(struct mn_map **mp, enum mn_map_kind kind, unsigned k, struct mn_pool *pool,
		     size_t buffer);

/* Waits for the map's pool job, stops its own pool, frees everything.  NULL is a no-op. */
void mn_map_destroy(struct mn_map *m);

/* ---- Inserting: the hot path ----------------------------------------------------------------- */

/*
 * The head of every struct mn_map: the buffer being filled.  Private to the inline inserts below,
 * which must see it to be a handful of instructions; everything else is in map.c.
 */
struct mn_map_head {
	uint64_t *keys;          /* the buffer being filled: keys[fill], vals[fill] are next */
	uint64_t *vals;
	uint32_t fill;           /* entries in it (uint32_t: no store to keys[] aliases it) */
	uint32_t cap;            /* entries it holds: 1 when unbuffered */
	enum mn_map_kind kind;
};

/* Reduces the full buffer: on the pool, moving on to the next buffer, or on the caller's thread
 * without threads.  Called by the inserts below, never else. */
void mn_map_buffer_full(struct mn_map *m);

/* Inserts (key, value).  Never fails: without memory for a new key, the insert is counted lost. */
static inline void mn_map_insert(struct mn_map *m, uint64_t key, uint64_t value)
{
	struct mn_map_head *h = (struct mn_map_head *)(void *)m;
	uint32_t i = h->fill;

	h->keys[i] = key;
	h->vals[i] = value;
	/* fill is not stored when the buffer is full: an unbuffered map's stays 0, and its
	 * inserts do not wait on each other through it. */
	if (__builtin_expect(++i == h->cap, 0))
		mn_map_buffer_full(m);
	else
		h->fill = i;
}

/* Inserts key into a MN_MAP_COUNT map: mn_map_insert() minus the value's store. */
static inline void mn_map_count_insert(struct mn_map *m, uint64_t key)
{
	struct mn_map_head *h = (struct mn_map_head *)(void *)m;
	uint32_t i = h->fill;

	assert(h->kind == MN_MAP_COUNT);
	h->keys[i] = key;
	if (__builtin_expect(++i == h->cap, 0))
		mn_map_buffer_full(m);
	else
		h->fill = i;
}

/* ---- Reading --------------------------------------------------------------------------------- */

/*
 * Reduces everything inserted so far and folds the per-thread tables into one.  Every read below
 * does it first; calling it directly only moves that work to a moment of the caller's choosing.
 */
void mn_map_flush(struct mn_map *m);

/* Looks key up: true and *v filled in, or false if it was never inserted (*v untouched). */
bool mn_map_get(struct mn_map *m, uint64_t key, struct mn_map_value *v);

/* The number of distinct keys. */
size_t mn_map_size(struct mn_map *m);

/*
 * Calls fn on every key, by increasing key, until fn returns non-zero.  Returns 0, fn's non-zero
 * return, or -ENOMEM if the sorted index could not be allocated (then fn was never called).  fn
 * must not call mn_map_* on this map.
 */
typedef int mn_map_fn(void *arg, uint64_t key, const struct mn_map_value *v);
int mn_map_foreach(struct mn_map *m, mn_map_fn *fn, void *arg);

/*
 * Folds from into into, as if every insert into from had been made into into; from keeps its
 * contents.  The result does not depend on the order of merges: folding B into A or A into B, and
 * a set of maps in any order, gives the same keys and values.  Returns 0, or -EINVAL when the maps
 * differ in kind or k, or are the same map.  Keys that find no memory are dropped and counted in
 * into's mn_map_lost(), which also adds from's.
 */
int mn_map_merge(struct mn_map *into, struct mn_map *from);

/* Inserts dropped for want of memory (and keys, from mn_map_merge()); 0 in a complete map. */
uint64_t mn_map_lost(struct mn_map *m);

/* The pool threads that reduce the map's buffers; 0 when it reduces on its owner's thread. */
unsigned mn_map_threads(const struct mn_map *m);

/* ---- Row maps: a wide key to a row of reductions, updated in place --------------------------- */

/*
 * A row map takes a key of MN_ROWS_KEY_WORDS words (a record of ids, zero-padded) to a row: a
 * count and the minimum and maximum of some value (a distance, a size), which the caller updates
 * in place through the pointer mn_rows_get() returns.  That is the map for a module whose handler
 * finds one row per event and changes several of its reductions (the dependence module: a row
 * per (loop, source, destination, kind, ...), counted, with its distances), where the buffered
 * map above would need one map per reduction and a packed 64-bit key.
 *
 *	struct mn_rows rows = { 0 };                     // in the module state: empty
 *	mn_rows_memo_init(&rows, 14);                    // init: a memo of 2^14 recent rows
 *	struct mn_row *r = mn_rows_get(&rows, key);      // miss: find or add
 *	r->count++;                                      // then update it in place
 *	mn_rows_sorted(&rows, cmp, arg);                 // emit: rows in the caller's order
 *	mn_rows_free(&rows);                             // fini
 *
 * The memo remembers, by a short key of the caller's (three words that identify the row without
 * computing its wide key), the rows found recently, and takes counts and values for them that
 * reach the row later (pending): a handler that hits the memo touches one cache line, not the
 * table, which may be megabytes.  The map flushes what is pending before its rows move (it grows)
 * and on mn_rows_memo_flush() (call it before reading the rows).
 *
 * One implementation here (backend/map.c: open addressing, a key and its row a cache line,
 * kept at most half full); the bench keeps a plain chained twin (bench/maps/rows_plain.c, the
 * breakdown's baseline) with the same interface.  Threading: one owner, as for maps above.
 * Nothing aborts: mn_rows_get() returns NULL when a new key finds no memory.
 */
#define MN_ROWS_KEY_WORDS 4

struct mn_row {
	uint64_t count;          /* > 0 once counted: a new row (count 0) must be counted at once */
	uint64_t min, max;       /* of the values; UINT64_MAX and 0 until the first */
	uint64_t stamp;          /* the caller's, e.g. the last event that counted the row */
};

/* One slot of the memo: a cache line. */
struct mn_rows_memo {
	uint64_t k0, k1;         /* the caller's short key; k0 0: an empty slot */
	uint32_t k2;
	unsigned gen;            /* the map's gen when row was found */
	struct mn_row *row;
	uint64_t pend;           /* counts not yet in row */
	uint64_t min, max;       /* of the values not yet in row: UINT64_MAX, 0 if none */
	uint64_t pad;
};

/* A row map.  Set to all zeros it is empty; the fields are the implementation's. */
struct mn_rows {
	void *e;                 /* the slots (map.c), or the twin's state */
	size_t n;                /* rows */
	unsigned bits;           /* 2^bits slots */
	unsigned gen;            /* bumped when rows move: pointers to them are then stale */
	struct mn_rows_memo *memo;
	unsigned mshift;         /* 32 - log2(memo slots) */
	bool memo_lent;          /* memo is the caller's (mn_rows_memo_use()) */
};

/* The key of a row: the MN_ROWS_KEY_WORDS words stored with it. */
static inline const uint64_t *mn_row_key(const struct mn_row *r)
{
	return (const uint64_t *)(const void *)r - MN_ROWS_KEY_WORDS;
}

/* The hash of a wide key: four independent multiplies, then mn_hash64(). */
static inline uint64_t mn_rows_hash(const uint64_t *key)
{
	return mn_hash64(key[0] * UINT64_C(0x9e3779b97f4a7c15) ^
			 key[1] * UINT64_C(0xc2b2ae3d27d4eb4f) ^
			 key[2] * UINT64_C(0x165667b19e3779f9) ^
			 key[3] * UINT64_C(0x27d4eb2f165667c5));
}

/* The row of key: found, or added with count 0 and no values.  NULL when key is new and the map
 * is full and cannot grow.  Pointers to rows stay valid until gen changes: a call moves them when
 * mn_rows_grows() said so before it, whether its key is new or not. */
struct mn_row *mn_rows_get(struct mn_rows *r, const uint64_t *key);

/* Whether the next mn_rows_get() moves the rows (more than half full after one more row). */
bool mn_rows_grows(const struct mn_rows *r);

/* Every row, in no particular order: start with a zeroed cursor, stop at NULL. */
struct mn_rows_cursor {
	size_t i;
	void *node;
};
struct mn_row *mn_rows_next(const struct mn_rows *r, struct mn_rows_cursor *c);

/* The rows sorted by cmp(a, b, arg) (a and b point to struct mn_row *), in a new array of r->n
 * pointers that the caller frees; NULL without memory.  Flush the memo first. */
struct mn_row **mn_rows_sorted(const struct mn_rows *r,
			       int (*cmp)(const void *, const void *, void *), void *arg);

/* Frees every row and the memo: the map is then all zeros, empty. */
void mn_rows_free(struct mn_rows *r);

/* Gives the map a memo of 2^bits slots (1 to 24); -ENOMEM without memory.  Once. */
int mn_rows_memo_init(struct mn_rows *r, unsigned bits);

/* The same in the caller's storage, slots[2^bits] all zeros, which the caller keeps until
 * mn_rows_free() and then frees: in its own state, a slot is found at a constant offset from it
 * (&slots[hash >> (32 - bits)], what mn_rows_memo_slot() computes), one load fewer on a hot path.
 * -EINVAL for bad bits or a second memo. */
int mn_rows_memo_use(struct mn_rows *r, struct mn_rows_memo *slots, unsigned bits);

/* The memo slot of a 32-bit hash of the short key (its top bits name the slot). */
static inline struct mn_rows_memo *mn_rows_memo_slot(const struct mn_rows *r, uint32_t hash)
{
	return &r->memo[hash >> r->mshift];
}

/* Whether slot m holds the row of short key (k0, k1, k2), k0 never 0. */
static inline bool mn_rows_memo_hit(const struct mn_rows *r, const struct mn_rows_memo *m,
				    uint64_t k0, uint64_t k1, uint32_t k2)
{
	return m->k0 == k0 && m->k1 == k1 && m->k2 == k2 && m->gen == r->gen;
}

/* Counts one in a hit slot's row, with value v if has_v: the row gets it when the slot's
 * pending counts are flushed. */
static inline void mn_rows_memo_count(struct mn_rows_memo *m, bool has_v, uint64_t v)
{
	if (has_v && v < m->min)
		m->min = v;
	if (has_v && v > m->max)
		m->max = v;
	m->pend++;
}

/* Slot m now remembers row for (k0, k1, k2), its pending counts flushed into its old row first.
 * k0 0 (or row NULL) empties it.  (The twin never remembers: its slots stay empty.) */
void mn_rows_memo_set(struct mn_rows *r, struct mn_rows_memo *m, uint64_t k0, uint64_t k1,
		      uint32_t k2, struct mn_row *row);

/* Every slot's pending counts into the rows: before reading them. */
void mn_rows_memo_flush(struct mn_rows *r);

/* ---- Bit sets by id ----------------------------------------------------------------------------- */

/* Sets bit v of the growable bit set (*bits, *nwords words, all zeros when empty); false, and
 * the set unchanged, when out of memory. */
bool mn_bits_set(uint64_t **bits, size_t *nwords, uint64_t v);
/* Whether bit v of the set is set. */
static inline bool mn_bits_has(const uint64_t *bits, size_t nwords, uint64_t v)
{
	return v / 64 < nwords && (bits[v / 64] >> (v % 64) & 1);
}

/* ---- Last values ------------------------------------------------------------------------------ */

/*
 * A map that keeps, for each key, the value put last: not a reduction (the order of puts counts),
 * for the state a module keeps per site and thread, say, which merges do not see.  Open
 * addressing, at most half full; key 0 is reserved.  Set to all zeros it is empty.  One owner.
 */
struct mn_kv64 {
	struct mn_kv64_slot {
		uint64_t key, value;
	} *slot;
	uint64_t n, cap;
	uint64_t *ended;           /* mn_kv64_thread_end(): a bit per thread number (mn_bits_set()) */
	size_t ended_words;
	uint64_t ended_new;
};

/* Keeps value for key (not 0); false without memory (the map is unchanged). */
bool mn_kv64_put(struct mn_kv64 *m, uint64_t key, uint64_t value);
/* The value kept for key, into *value; false when none is. */
bool mn_kv64_get(const struct mn_kv64 *m, uint64_t key, uint64_t *value);
void mn_kv64_free(struct mn_kv64 *m);

/*
 * A value of site `site` per thread, kept beside the site for the thread that last ran it
 * (*owner, 0 for none yet) and in `parked` for the others: when `thread` runs the site, the
 * owner's value is parked under (site, owner) and thread's taken back.  Returns whether thread had
 * one.  A value that found no memory to park in is lost, counted in *lost.  Out of line: the
 * caller's fast path is *owner == thread.
 */
bool mn_kv64_switch(struct mn_kv64 *parked, uint32_t site, uint32_t *owner, uint64_t *value,
		    uint32_t thread, uint64_t *lost);
/*
 * Thread `thread` ended (mn_module.thread_end): its values, parked under (site, thread), are
 * never asked for again.  They are dropped when the map would next grow, and none is parked from
 * then on, so that a program that runs 10,000 short threads one after another keeps the map at
 * the size its live threads need (a bit per thread ever ended stays).
 */
void mn_kv64_thread_end(struct mn_kv64 *parked, uint32_t thread);

#ifdef __cplusplus
}
#endif
#endif /* MNEMO_MAP_H */
