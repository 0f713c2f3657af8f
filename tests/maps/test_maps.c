/*
 * Tests of the reduction maps (backend/map.h): every kind against a plain reference (the inserts
 * kept in an array, sorted, each key's run reduced by hand) on random input with many duplicate
 * keys, unbuffered, batched and on 1, 2 and 4 pool threads with buffers small enough to be handed
 * over thousands of times; reads between inserts; merges in every order giving the same map; a
 * shared pool; and a table that runs out of memory, which must count what it drops and go on.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "map.h"
#include "pool.h"

#define SET_K 4

static const char *const kind_name[] = { "COUNT", "SUM", "MIN", "MAX", "CONST", "SET" };

/* ---- Random input ---------------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure names a seed that replays it. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

struct ins {
	uint64_t key, value;
};

/*
 * n inserts over about nkeys keys: small id pairs as profilers make them, the edge keys 0 (the
 * empty-slot marker inside a table) and all-ones, and arbitrary 64-bit keys.  Each key draws its
 * values from a few per-key choices (so CONST keys are often constant and SET keys often within
 * or just past k), with the extremes 0 and all-ones mixed in.
 */
static struct ins *make_inserts(size_t n, unsigned nkeys, uint64_t seed)
{
	struct ins *in = malloc(n * sizeof(*in));
	uint64_t *keys = malloc(nkeys * sizeof(*keys));

	assert_non_null(in);
	assert_non_null(keys);
	rng_state = seed | 1;
	for (unsigned i = 0; i < nkeys; i++) {
		switch (i % 4) {
		case 0: keys[i] = mn_map_key((uint32_t)(rnd() % 16), (uint32_t)(rnd() % 16)); break;
		case 1: keys[i] = i == 1 ? 0 : i == 5 ? UINT64_MAX : rnd(); break;
		case 2: keys[i] = mn_map_key((uint32_t)rnd(), (uint32_t)(rnd() % 3)); break;
		default: keys[i] = rnd() % 1000; break;
		}
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t key = keys[rnd() % nkeys], r = rnd();
		unsigned spread = 1 + (unsigned)(key % 7);   /* 1 to 7 values for this key */

		in[i].key = key;
		in[i].value = (key * 31 + r % spread) ^ (r % 97 == 0 ? UINT64_MAX : 0);
		if (r % 89 == 0)
			in[i].value = 0;
	}
	free(keys);
	return in;
}

/* ---- The reference --------------------------------------------------------------------------- */

struct expect {
	uint64_t key;
	struct mn_map_value v;
	uint64_t set[SET_K];
};

static int cmp_ins(const void *a, const void *b)
{
	const struct ins *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->value > y->value) - (x->value < y->value);
}

/* The map every kind should make of the inserts, by increasing key; returns the key count. */
static size_t reference(enum mn_map_kind kind, const struct ins *in, size_t n, struct expect **out)
{
	struct ins *s = malloc(n * sizeof(*s) + 1);
	struct expect *e = calloc(n + 1, sizeof(*e));
	size_t nk = 0;

	assert_non_null(s);
	assert_non_null(e);
	memcpy(s, in, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_ins);
	for (size_t i = 0, j; i < n; i = j) {
		struct expect *x = &e[nk++];
		unsigned distinct = 0;

		x->key = s[i].key;
		for (j = i; j < n && s[j].key == s[i].key; j++) {
			uint64_t v = s[j].value;
			bool first_of_value = j == i || s[j - 1].value != v;

			switch (kind) {
			case MN_MAP_COUNT: x->v.value++; break;
			case MN_MAP_SUM: x->v.value += v; break;
			case MN_MAP_MIN: x->v.value = j == i || v < x->v.value ? v : x->v.value;
				break;
			case MN_MAP_MAX: x->v.value = v > x->v.value ? v : x->v.value; break;
			case MN_MAP_CONST: x->v.varies |= v != s[i].value; break;
			case MN_MAP_SET:
				/* Values arrive sorted: the first k distinct are the k smallest. */
				if (first_of_value && distinct++ < SET_K)
					x->set[x->v.n++] = v;
				break;
			}
		}
		if (kind == MN_MAP_CONST)
			x->v.value = x->v.varies ? 0 : s[i].value;
		if (kind == MN_MAP_SET)
			x->v.overflow = distinct > SET_K;
	}
	free(s);
	*out = e;
	return nk;
}

/* ---- Comparing a map with the reference ------------------------------------------------------ */

struct walk {
	const char *what;
	enum mn_map_kind kind;
	const struct expect *e;
	size_t n, i;
};

static void check_value(const char *what, enum mn_map_kind kind, uint64_t key,
			const struct expect *x, const struct mn_map_value *v)
{
	if (v->value != x->v.value || v->varies != x->v.varies || v->overflow != x->v.overflow ||
	    v->n != x->v.n)
		fail_msg("%s %s key %#" PRIx64 ": expected value %#" PRIx64 " varies %d overflow "
			 "%d n %u, got value %#" PRIx64 " varies %d overflow %d n %u", what,
			 kind_name[kind], key, x->v.value, x->v.varies, x->v.overflow, x->v.n,
			 v->value, v->varies, v->overflow, v->n);
	for (unsigned i = 0; i < x->v.n; i++)
		if (v->values[i] != x->set[i])
			fail_msg("%s SET key %#" PRIx64 ": expected value %u to be %#" PRIx64
				 ", got %#" PRIx64, what, key, i, x->set[i], v->values[i]);
}

static int walk_one(void *arg, uint64_t key, const struct mn_map_value *v)
{
	struct walk *w = arg;

	if (w->i >= w->n)
		fail_msg("%s %s: expected %zu keys, got more (%#" PRIx64 ")", w->what,
			 kind_name[w->kind], w->n, key);
	if (key != w->e[w->i].key)
		fail_msg("%s %s: expected key %zu to be %#" PRIx64 ", got %#" PRIx64, w->what,
			 kind_name[w->kind], w->i, w->e[w->i].key, key);
	check_value(w->what, w->kind, key, &w->e[w->i], v);
	w->i++;
	return 0;
}

/* Checks m against the reference e[n] through mn_map_foreach(), mn_map_get() and mn_map_size(). */
static void check_map(const char *what, struct mn_map *m, enum mn_map_kind kind,
		      const struct expect *e, size_t n)
{
	struct walk w = { what, kind, e, n, 0 };
	struct mn_map_value v;

	assert_int_equal(mn_map_foreach(m, walk_one, &w), 0);
	if (w.i != n)
		fail_msg("%s %s: expected %zu keys, got %zu", what, kind_name[kind], n, w.i);
	if (mn_map_size(m) != n)
		fail_msg("%s %s: expected size %zu, got %zu", what, kind_name[kind], n,
			 mn_map_size(m));
	for (size_t i = 0; i < n; i += 1 + i % 3) {
		if (!mn_map_get(m, e[i].key, &v))
			fail_msg("%s %s: key %#" PRIx64 " not found", what, kind_name[kind],
				 e[i].key);
		check_value(what, kind, e[i].key, &e[i], &v);
	}
	/* Keys next to present ones, unless present themselves. */
	for (size_t i = 0; i < n; i++) {
		uint64_t k = e[i].key + 1;

		if ((i + 1 < n && e[i + 1].key == k) || (!k && n && e[0].key == 0))
			continue;
		if (mn_map_get(m, k, &v))
			fail_msg("%s %s: key %#" PRIx64 " was never inserted, but found", what,
				 kind_name[kind], k);
	}
	assert_int_equal(mn_map_lost(m), 0);
}

static struct mn_map *new_map(enum mn_map_kind kind, unsigned threads, size_t buffer)
{
	struct mn_map *m = NULL;
	int err = mn_map_create(&m, kind, kind == MN_MAP_SET ? SET_K : 0, threads, buffer);

	if (err)
		fail_msg("mn_map_create(%s, threads %u, buffer %zu): expected 0, got %d",
			 kind_name[kind], threads, buffer, err);
	if (mn_map_threads(m) != threads)
		fail_msg("mn_map_create(threads %u): expected %u threads, got %u", threads,
			 threads, mn_map_threads(m));
	return m;
}

static void insert_all(struct mn_map *m, enum mn_map_kind kind, const struct ins *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (kind == MN_MAP_COUNT && i % 2)
			mn_map_count_insert(m, in[i].key);
		else
			mn_map_insert(m, in[i].key, in[i].value);
	}
}

/* ---- Tests ----------------------------------------------------------------------------------- */

static const struct config {
	unsigned threads;
	size_t buffer;
} configs[] = {
	{ 0, 0 },      /* unbuffered */
	{ 0, 1 },      /* the same, said explicitly */
	{ 0, 5 },      /* batched on the owner */
	{ 0, 64 },
	{ 1, 1 },      /* a job per insert */
	{ 1, 7 },
	{ 1, 0 },      /* the default buffer: only the flush reduces */
	{ 2, 3 },
	{ 2, 61 },
	{ 2, 4096 },
	{ 4, 2 },
	{ 4, 100 },
};

/* Every kind, every configuration, against the reference. */
static void test_reference(void **state)
{
	for (enum mn_map_kind kind = MN_MAP_COUNT; kind <= MN_MAP_SET; kind++) {
		for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
			const struct config *cf = &configs[c];
			/* A job per insert or two costs a thread handoff each: fewer inserts. */
			size_t n = cf->threads && cf->buffer < 4 ? 3000 : 30000;
			uint64_t seed = 1000 * kind + c;
			struct ins *in = make_inserts(n, 300, seed);
			struct expect *e;
			size_t nk = reference(kind, in, n, &e);
			struct mn_map *m = new_map(kind, cf->threads, cf->buffer);
			char what[80];

			snprintf(what, sizeof(what), "threads %u buffer %zu seed %" PRIu64,
				 cf->threads, cf->buffer, seed);
			insert_all(m, kind, in, n);
			check_map(what, m, kind, e, nk);
			mn_map_destroy(m);
			free(e);
			free(in);
		}
	}
}

/* Reads between inserts: each read folds the per-thread tables, and inserting must go on. */
static void test_reads_between_inserts(void **state)
{
	for (enum mn_map_kind kind = MN_MAP_COUNT; kind <= MN_MAP_SET; kind++) {
		size_t n = 20000, done = 0;
		struct ins *in = make_inserts(n, 500, 77 + kind);
		struct mn_map *m = new_map(kind, 2, 37);
		struct expect *e;

		for (size_t step = 1; done < n; step *= 3) {
			size_t upto = done + step < n ? done + step : n, nk;

			insert_all(m, kind, in + done, upto - done);
			done = upto;
			nk = reference(kind, in, done, &e);
			check_map("reads between inserts", m, kind, e, nk);
			free(e);
		}
		mn_map_destroy(m);
		free(in);
	}
}

/* Keys far beyond the first table: growth, on every thread's table and in the fold. */
static void test_many_keys(void **state)
{
	size_t n = 200000;
	struct ins *in = make_inserts(n, 60000, 4242);
	struct expect *e;

	for (unsigned threads = 0; threads <= 2; threads++) {
		size_t nk = reference(MN_MAP_SUM, in, n, &e);
		struct mn_map *m = new_map(MN_MAP_SUM, threads, threads ? 1000 : 0);

		insert_all(m, MN_MAP_SUM, in, n);
		check_map("many keys", m, MN_MAP_SUM, e, nk);
		mn_map_destroy(m);
		free(e);
	}
	free(in);
}

/* The keys and values of a map, by increasing key, to compare two maps. */
struct dump {
	size_t n;
	struct expect e[2000];
};

static int dump_one(void *arg, uint64_t key, const struct mn_map_value *v)
{
	struct dump *d = arg;

	assert_true(d->n < sizeof(d->e) / sizeof(d->e[0]));
	assert_true(v->n <= SET_K);
	d->e[d->n].key = key;
	d->e[d->n].v = *v;
	if (v->n)
		memcpy(d->e[d->n].set, v->values, v->n * 8);
	d->e[d->n].v.values = d->e[d->n].set;
	d->n++;
	return 0;
}

static void same_dump(const char *what, enum mn_map_kind kind, const struct dump *a,
		      const struct dump *b)
{
	if (a->n != b->n)
		fail_msg("%s %s: expected %zu keys as in order 012, got %zu", what, kind_name[kind],
			 a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		if (a->e[i].key != b->e[i].key)
			fail_msg("%s %s: expected key %zu to be %#" PRIx64 " as in order 012, got "
				 "%#" PRIx64, what, kind_name[kind], i, a->e[i].key, b->e[i].key);
		check_value(what, kind, a->e[i].key, &a->e[i], &b->e[i].v);
	}
}

/*
 * Merges of three maps in every order, into each of them, give one map, which is the reference
 * of all their inserts: what data-parallel workers need of merge.
 */
static void test_merge_order(void **state)
{
	static const unsigned perm[6][3] = {
		{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
	};
	static const struct config part[3] = { { 0, 0 }, { 1, 50 }, { 2, 64 } };

	for (enum mn_map_kind kind = MN_MAP_COUNT; kind <= MN_MAP_SET; kind++) {
		size_t n = 6000;
		struct ins *in = make_inserts(3 * n, 400, 99 + kind);
		struct dump *first = calloc(1, sizeof(*first)), *d = calloc(1, sizeof(*d));
		struct expect *e;
		size_t nk = reference(kind, in, 3 * n, &e);

		assert_non_null(first);
		assert_non_null(d);
		for (unsigned p = 0; p < 6; p++) {
			struct mn_map *m[3];
			char what[64];

			/* Part i holds inserts i, i + 3, ...: every key in every part. */
			for (unsigned i = 0; i < 3; i++) {
				m[i] = new_map(kind, part[i].threads, part[i].buffer);
				for (size_t j = i; j < 3 * n; j += 3)
					mn_map_insert(m[i], in[j].key, in[j].value);
			}
			/* Fold the other two into perm[p][0], in the order perm gives. */
			assert_int_equal(mn_map_merge(m[perm[p][0]], m[perm[p][1]]), 0);
			assert_int_equal(mn_map_merge(m[perm[p][0]], m[perm[p][2]]), 0);
			snprintf(what, sizeof(what), "merge order %u%u%u", perm[p][0], perm[p][1],
				 perm[p][2]);
			check_map(what, m[perm[p][0]], kind, e, nk);
			d->n = 0;
			assert_int_equal(mn_map_foreach(m[perm[p][0]], dump_one, d), 0);
			if (!p)
				memcpy(first, d, sizeof(*d));
			else
				same_dump(what, kind, first, d);
			for (unsigned i = 0; i < 3; i++)
				mn_map_destroy(m[i]);
		}
		free(e);
		free(first);
		free(d);
		free(in);
	}
}

/* from keeps its contents; a map merged into twice holds both. */
static void test_merge_keeps_source(void **state)
{
	struct mn_map *a = new_map(MN_MAP_COUNT, 0, 0), *b = new_map(MN_MAP_COUNT, 1, 3);
	struct mn_map_value v;

	for (unsigned i = 0; i < 10; i++)
		mn_map_count_insert(b, 5);
	assert_int_equal(mn_map_merge(a, b), 0);
	assert_int_equal(mn_map_merge(a, b), 0);
	assert_true(mn_map_get(b, 5, &v));
	assert_int_equal(v.value, 10);
	assert_true(mn_map_get(a, 5, &v));
	assert_int_equal(v.value, 20);
	mn_map_destroy(a);
	mn_map_destroy(b);
}

static void test_bad_arguments(void **state)
{
	struct mn_map *m = (struct mn_map *)1, *a, *b;
	struct mn_pool *p;

	assert_int_equal(mn_map_create(&m, MN_MAP_SET, 0, 0, 0), -EINVAL);
	assert_null(m);
	assert_int_equal(mn_map_create(&m, MN_MAP_SET, MN_MAP_SET_MAX + 1, 0, 0), -EINVAL);
	assert_int_equal(mn_map_create(&m, MN_MAP_COUNT, 3, 0, 0), -EINVAL);
	assert_int_equal(mn_map_create(&m, (enum mn_map_kind)42, 0, 0, 0), -EINVAL);
	assert_int_equal(mn_map_create(&m, MN_MAP_SUM, 0, MN_POOL_MAX + 1, 0), -EINVAL);
	assert_int_equal(mn_map_create(&m, MN_MAP_SUM, 0, 1, (size_t)UINT32_MAX + 1), -EINVAL);
	assert_int_equal(mn_map_create_on(&m, MN_MAP_SUM, 0, NULL, 0), -EINVAL);

	a = new_map(MN_MAP_SUM, 0, 0);
	b = new_map(MN_MAP_MAX, 0, 0);
	assert_int_equal(mn_map_merge(a, b), -EINVAL);
	assert_int_equal(mn_map_merge(a, a), -EINVAL);
	mn_map_destroy(b);
	assert_int_equal(mn_map_create(&b, MN_MAP_SET, 3, 0, 0), 0);
	mn_map_destroy(a);
	assert_int_equal(mn_map_create(&a, MN_MAP_SET, 4, 0, 0), 0);
	assert_int_equal(mn_map_merge(a, b), -EINVAL);
	mn_map_destroy(a);
	mn_map_destroy(b);
	mn_map_destroy(NULL);

	/* A pool of no threads makes an unbuffered map. */
	assert_int_equal(mn_pool_create(&p, 0), 0);
	assert_int_equal(mn_map_create_on(&m, MN_MAP_COUNT, 0, p, 0), 0);
	assert_int_equal(mn_map_threads(m), 0);
	mn_map_count_insert(m, 1);
	assert_int_equal(mn_map_size(m), 1);
	mn_map_destroy(m);
	mn_pool_destroy(p);
}

static int stop_at_third(void *arg, uint64_t key, const struct mn_map_value *v)
{
	unsigned *seen = arg;

	return ++*seen == 3 ? 1234 : 0;
}

static void test_foreach(void **state)
{
	struct mn_map *m = new_map(MN_MAP_MAX, 1, 2);
	unsigned seen = 0;

	assert_int_equal(mn_map_foreach(m, stop_at_third, &seen), 0);
	assert_int_equal(seen, 0);
	for (uint64_t k = 10; k > 0; k--)
		mn_map_insert(m, k, k * 2);
	assert_int_equal(mn_map_foreach(m, stop_at_third, &seen), 1234);
	assert_int_equal(seen, 3);
	mn_map_destroy(m);
}

/* Two maps on one pool, inserted into in turn: each waits for the other's job. */
static void test_shared_pool(void **state)
{
	size_t n = 20000;
	struct ins *in = make_inserts(n, 300, 5150);
	struct mn_map *a, *b;
	struct expect *ea, *eb;
	size_t na = reference(MN_MAP_COUNT, in, n, &ea), nb = reference(MN_MAP_SUM, in, n, &eb);
	struct mn_pool *p;

	assert_int_equal(mn_pool_create(&p, 2), 0);
	assert_int_equal(mn_map_create_on(&a, MN_MAP_COUNT, 0, p, 13), 0);
	assert_int_equal(mn_map_create_on(&b, MN_MAP_SUM, 0, p, 29), 0);
	assert_int_equal(mn_map_threads(a), 2);
	for (size_t i = 0; i < n; i++) {
		mn_map_count_insert(a, in[i].key);
		mn_map_insert(b, in[i].key, in[i].value);
	}
	check_map("shared pool", a, MN_MAP_COUNT, ea, na);
	check_map("shared pool", b, MN_MAP_SUM, eb, nb);
	mn_map_destroy(a);
	mn_map_destroy(b);
	mn_pool_destroy(p);
	free(ea);
	free(eb);
	free(in);
}

static void test_key_helpers(void **state)
{
	uint64_t k = mn_map_key(0xdeadbeef, 7);

	assert_int_equal(k, UINT64_C(0xdeadbeef00000007));
	assert_int_equal(mn_map_key_hi(k), 0xdeadbeef);
	assert_int_equal(mn_map_key_lo(k), 7);
}

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif

/*
 * Out of memory: under an address-space limit a table stops growing, fills, and then drops the
 * inserts of new keys, counting them; the keys it holds still count; nothing crashes.  (Skipped
 * under AddressSanitizer, whose shadow memory needs more address space than any such limit.)
 */
/* Last values against an array twin: overwrites, growth past many keys, absent keys. */
static void test_kv64(void **state)
{
	enum { N = 20000 };
	static uint64_t twin[N];
	struct mn_kv64 m = { 0 };
	uint64_t v;

	assert_false(mn_kv64_get(&m, 5, &v));
	for (uint64_t r = 0; r < 3; r++)
		for (uint64_t k = 1; k < N; k += 1 + r) {
			twin[k] = k * 7 + r;
			assert_true(mn_kv64_put(&m, k << 20 | r, 0) && mn_kv64_put(&m, k, twin[k]));
		}
	for (uint64_t k = 1; k < N; k++) {
		assert_true(mn_kv64_get(&m, k, &v));
		assert_int_equal(v, twin[k]);
	}
	assert_false(mn_kv64_get(&m, N + 1, &v));
	mn_kv64_free(&m);
	assert_int_equal(m.cap, 0);
}

/* A site's value per thread: the owner's kept beside the site, the others' parked. */
static void test_kv64_switch(void **state)
{
	struct mn_kv64 parked = { 0 };
	uint32_t owner = 0;
	uint64_t value = 0, lost = 0;

	assert_false(mn_kv64_switch(&parked, 9, &owner, &value, 1, &lost));   /* none yet */
	value = 100;                                                           /* thread 1's */
	assert_false(mn_kv64_switch(&parked, 9, &owner, &value, 2, &lost));   /* 2 has none */
	assert_int_equal(owner, 2);
	value = 200;
	assert_true(mn_kv64_switch(&parked, 9, &owner, &value, 1, &lost));
	assert_int_equal(value, 100);
	value = 101;
	assert_true(mn_kv64_switch(&parked, 9, &owner, &value, 2, &lost));
	assert_int_equal(value, 200);
	assert_true(mn_kv64_switch(&parked, 9, &owner, &value, 1, &lost));
	assert_int_equal(value, 101);
	assert_int_equal(lost, 0);
	mn_kv64_free(&parked);
}

static void test_out_of_memory(void **state)
{
#ifdef HAVE_ASAN
	skip();
#else
	struct rlimit old, lim;
	unsigned long pages = 0;
	struct mn_map *m, *t;
	uint64_t inserted = 0, counted = 0, lost;
	struct mn_map_value v;
	FILE *f = fopen("/proc/self/statm", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
	m = new_map(MN_MAP_COUNT, 0, 0);
	lim = old;
	/* Room for tables up to 16 MiB, not for the 32 MiB one after. */
	lim.rlim_cur = pages * 4096 + (40u << 20);
	if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur <= lim.rlim_cur) {
		mn_map_destroy(m);
		skip();  /* a tighter limit is already set: no room to test in */
	}
	assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);

	/* A thread stack (8 MiB) and buffers may not fit now: the map must still be made. */
	assert_int_equal(mn_map_create(&t, MN_MAP_COUNT, 0, 4, 1u << 22), 0);
	mn_map_count_insert(t, 9);
	for (uint64_t k = 1; k <= 3000000; k++) {
		mn_map_count_insert(m, k);
		mn_map_count_insert(m, 1);  /* a key it holds: always counted */
		inserted += 2;
	}
	lost = mn_map_lost(m);
	assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);

	if (lost == 0)
		fail_msg("expected inserts lost under a %lu MiB limit, got none",
			 (unsigned long)(lim.rlim_cur >> 20));
	assert_true(mn_map_get(m, 1, &v));
	assert_int_equal(v.value, 3000001);
	for (uint64_t k = 2; k <= 3000000; k++)
		if (mn_map_get(m, k, &v))
			counted += v.value;
	if (counted + 3000001 + lost != inserted)
		fail_msg("expected counts + lost = %" PRIu64 " inserts, got %" PRIu64 " + %" PRIu64,
			 inserted, counted + 3000001, lost);
	assert_true(mn_map_get(t, 9, &v));
	assert_int_equal(v.value, 1);
	mn_map_destroy(t);
	mn_map_destroy(m);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_reads_between_inserts),
		cmocka_unit_test(test_many_keys),
		cmocka_unit_test(test_merge_order),
		cmocka_unit_test(test_merge_keeps_source),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_foreach),
		cmocka_unit_test(test_shared_pool),
		cmocka_unit_test(test_key_helpers),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_kv64),
		cmocka_unit_test(test_kv64_switch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
