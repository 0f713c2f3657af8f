/*
 * Tests of the value-pattern module: its handlers are driven directly with synthetic event streams,
 * its section is emitted into memory, read back with libyaml and checked field by field; and it
 * agrees with a brute-force reference (every event kept in a list) on random streams.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yaml.h>

#include "backend.h"
#include "module.h"
#include "profile.h"

extern const struct mn_module mn_module_value_pattern;
#define VP (&mn_module_value_pattern)

/* ---- Driving the module ---------------------------------------------------------------------- */

static void *vp_new(const struct mn_run *run)
{
	void *st = calloc(1, VP->state_size);

	assert_non_null(st);
	assert_int_equal(VP->init(st, run), 0);
	return st;
}

static void vp_free(void *st)
{
	VP->fini(st);
	free(st);
}

static void load(void *st, uint32_t site, uint64_t addr, uint64_t value)
{
	VP->load(st, site, addr, value, 8);
}

static void store(void *st, uint32_t site, uint64_t addr, uint64_t value)
{
	VP->store(st, site, addr, value, 8);
}

/* A parsed section, and the site ids the writer was told about. */
struct section {
	char *text;
	yaml_document_t doc;
	yaml_node_t *root;
	uint64_t sites_used[128]; /* bitmap of ids < 8192 */
};

static void emit(void *st, struct section *s)
{
	struct mn_prof *p;
	yaml_parser_t parser;
	size_t len, nbits;
	const uint64_t *bits;
	FILE *f;

	memset(s, 0, sizeof(*s));
	f = open_memstream(&s->text, &len);
	assert_non_null(f);
	assert_int_equal(mn_prof_open(&p, f), 0);
	assert_int_equal(VP->emit(st, p), 0);
	bits = mn_prof_sites_used(p, &nbits);
	for (size_t b = 0; bits && b < nbits; b++)
		if (bits[b / 64] >> (b % 64) & 1) {
			assert_true(b < 8192);
			s->sites_used[b / 64] |= UINT64_C(1) << (b % 64);
		}
	assert_int_equal(mn_prof_close(p), 0);
	fclose(f);

	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (unsigned char *)s->text, len);
	if (!yaml_parser_load(&parser, &s->doc))
		fail_msg("the section does not parse: %s\n%s", parser.problem, s->text);
	yaml_parser_delete(&parser);
	s->root = yaml_document_get_root_node(&s->doc);
	assert_non_null(s->root);
	assert_int_equal(s->root->type, YAML_MAPPING_NODE);
}

static void section_free(struct section *s)
{
	yaml_document_delete(&s->doc);
	free(s->text);
}

static yaml_node_t *find(struct section *s, yaml_node_t *map, const char *key)
{
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = yaml_document_get_node(&s->doc, pr->key);

		if (!strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(&s->doc, pr->value);
	}
	return NULL;
}

static const char *str(struct section *s, yaml_node_t *map, const char *key)
{
	yaml_node_t *n = find(s, map, key);

	if (!n)
		fail_msg("expected key '%s' in the row", key);
	assert_int_equal(n->type, YAML_SCALAR_NODE);
	return (const char *)n->data.scalar.value;
}

static uint64_t u64(struct section *s, yaml_node_t *map, const char *key)
{
	return strtoull(str(s, map, key), NULL, 10);
}

static size_t nentries(struct section *s)
{
	yaml_node_t *e = find(s, s->root, "entries");

	assert_non_null(e);
	assert_int_equal(e->type, YAML_SEQUENCE_NODE);
	return (size_t)(e->data.sequence.items.top - e->data.sequence.items.start);
}

static yaml_node_t *entry_at(struct section *s, size_t i)
{
	yaml_node_t *e = find(s, s->root, "entries");

	return yaml_document_get_node(&s->doc, e->data.sequence.items.start[i]);
}

static yaml_node_t *entry(struct section *s, uint32_t site)
{
	for (size_t i = 0; i < nentries(s); i++)
		if (u64(s, entry_at(s, i), "site") == site)
			return entry_at(s, i);
	fail_msg("no entry for site %u", site);
	return NULL;
}

/* The expectation for one entry; stride fields are checked when executions >= 2. */
struct want {
	uint32_t site;
	const char *access;
	uint64_t executions;
	bool constant;
	uint64_t value;
	uint64_t distinct;
	bool capped;
	int64_t stride;
	const char *fraction;   /* as written: shortest round trip */
	bool strong;
};

static void check(struct section *s, const struct want *w)
{
	yaml_node_t *e = entry(s, w->site);
	char buf[32];

	assert_string_equal(str(s, e, "access"), w->access);
	assert_int_equal(u64(s, e, "executions"), w->executions);
	assert_string_equal(str(s, e, "constant"), w->constant ? "true" : "false");
	if (w->constant)
		assert_int_equal(u64(s, e, "value"), w->value);
	else
		assert_null(find(s, e, "value"));
	assert_int_equal(u64(s, e, "distinct"), w->distinct);
	assert_string_equal(str(s, e, "distinct_capped"), w->capped ? "true" : "false");
	if (w->executions < 2) {
		assert_null(find(s, e, "stride"));
		assert_null(find(s, e, "stride_fraction"));
		assert_null(find(s, e, "strongly_strided"));
		return;
	}
	snprintf(buf, sizeof(buf), "%" PRId64, w->stride);
	assert_string_equal(str(s, e, "stride"), buf);
	assert_string_equal(str(s, e, "stride_fraction"), w->fraction);
	assert_string_equal(str(s, e, "strongly_strided"), w->strong ? "true" : "false");
	assert_true(s->sites_used[w->site / 64] >> (w->site % 64) & 1);
}

/* ---- The synthetic stream -------------------------------------------------------------------- */

enum {
	S_CONST = 1,     /* a load always reading 42 from one address */
	S_VARYING = 2,   /* a load reading 100 different values: capped */
	S_ARRAY8 = 3,    /* a load walking an array of 8-byte elements */
	S_ARRAY24 = 4,   /* a store walking an array of 24-byte structs */
	S_MIX70 = 5,     /* 70 strides of 8, 30 of 16: strongly strided, just */
	S_MIX60 = 6,     /* 60 / 40: not */
	S_ONCE = 7,      /* one execution: no stride fields */
	S_SIXTEEN = 8,   /* exactly 16 distinct values: not capped */
	S_NEG = 9,       /* walking backwards: a negative stride */
};

/* Feeds every stream above into st; interleaved, as a program would. */
static void feed(void *st)
{
	uint64_t a8 = 0x10000, a24 = 0x20000, m70 = 0x30000, m60 = 0x40000, neg = 0x50000;

	for (int i = 0; i < 1000; i++) {
		load(st, S_CONST, 0x7000, 42);
		if (i < 100)
			load(st, S_VARYING, 0x8000, (uint64_t)i * 7);
		if (i < 64) {
			load(st, S_ARRAY8, a8, (uint64_t)i);
			a8 += 8;
			store(st, S_ARRAY24, a24, 5);
			a24 += 24;
		}
		if (i < 101) {
			/* 101 executions = 100 strides: the first 70 of 8, then 30 of 16 */
			store(st, S_MIX70, m70, (uint64_t)i % 3);
			m70 += i < 70 ? 8 : 16;
			load(st, S_MIX60, m60, 1);
			m60 += i % 5 < 3 ? 4 : 12;   /* 3 of every 5 strides are 4 */
		}
		if (i < 32) {
			load(st, S_SIXTEEN, 0x9000, (uint64_t)i % 16);
			load(st, S_NEG, neg, (uint64_t)-1);
			neg -= 4;
		}
	}
	store(st, S_ONCE, 0xa000, 0);
}

static const struct want wants[] = {
	{ S_CONST, "load", 1000, true, 42, 1, false, 0, "1.0", true },
	{ S_VARYING, "load", 100, false, 0, 16, true, 0, "1.0", true },
	{ S_ARRAY8, "load", 64, false, 0, 16, true, 8, "1.0", true },
	{ S_ARRAY24, "store", 64, true, 5, 1, false, 24, "1.0", true },
	{ S_MIX70, "store", 101, false, 0, 3, false, 8, "0.7", true },
	{ S_MIX60, "load", 101, true, 1, 1, false, 4, "0.6", false },
	{ S_ONCE, "store", 1, true, 0, 1, false, 0, NULL, false },
	{ S_SIXTEEN, "load", 32, false, 0, 16, false, 0, "1.0", true },
	{ S_NEG, "load", 32, true, UINT64_MAX, 1, false, -4, "1.0", true },
};

static void test_every_field(void **state)
{
	void *st = vp_new(NULL);
	struct section s;

	feed(st);
	emit(st, &s);
	assert_string_equal(str(&s, s.root, "value_cap"), "16");
	assert_string_equal(str(&s, s.root, "strong_stride_fraction"), "0.7");
	assert_int_equal(nentries(&s), sizeof(wants) / sizeof(wants[0]));
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		check(&s, &wants[i]);
	section_free(&s);
	vp_free(st);
}

/* Sorted by executions, descending, then by site id; executions is the first numeric column. */
static void test_order_and_columns(void **state)
{
	static const uint32_t order[] = { S_CONST, S_MIX70, S_MIX60, S_VARYING, S_ARRAY8, S_ARRAY24,
					  S_SIXTEEN, S_NEG, S_ONCE };
	void *st = vp_new(NULL);
	struct section s;

	feed(st);
	emit(st, &s);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		yaml_node_t *e = entry_at(&s, i);
		yaml_node_pair_t *pairs = e->data.mapping.pairs.start;
		yaml_node_t *k1 = yaml_document_get_node(&s.doc, pairs[1].key);
		yaml_node_t *k2 = yaml_document_get_node(&s.doc, pairs[2].key);

		assert_int_equal(u64(&s, e, "site"), order[i]);
		assert_int_equal(e->data.mapping.style, YAML_FLOW_MAPPING_STYLE);
		assert_string_equal((char *)k1->data.scalar.value, "access");
		assert_string_equal((char *)k2->data.scalar.value, "executions");
	}
	section_free(&s);
	vp_free(st);
}

/* Two workers owning disjoint sites, merged, say what one worker says. */
static void test_merge_disjoint(void **state)
{
	void *w0 = vp_new(NULL), *w1 = vp_new(NULL), *all = vp_new(NULL);
	struct section a, b;

	/* Split the synthetic stream by site parity, as MN_SHARD_SITE with two workers would. */
	feed(all);
	for (int i = 0; i < 200; i++) {
		uint32_t site = (uint32_t)(100 + i % 10);
		void *w = site % 2 ? w1 : w0;

		load(w, site, (uint64_t)(0x1000 * site + 8 * i), (uint64_t)(i % 3));
		load(all, site, (uint64_t)(0x1000 * site + 8 * i), (uint64_t)(i % 3));
	}
	feed(w0);   /* the synthetic sites all go to worker 0 */
	VP->merge(w0, w1);
	vp_free(w1);
	emit(w0, &a);
	emit(all, &b);
	assert_string_equal(a.text, b.text);
	section_free(&a);
	section_free(&b);
	vp_free(w0);
	vp_free(all);
}

/* A site table sizes the array; ids beyond it still work (the array grows). */
static void test_with_site_table(void **state)
{
	static const char blob[] = "mnemo-sites/1\n"
				   "load\tmain\tp.c\t3\t5\t\t0\n"
				   "store\tmain\tp.c\t4\t5\t\t0\n";
	struct mn_run *run;
	struct section s;
	void *st;

	assert_int_equal(mn_run_create(&run, blob, sizeof(blob) - 1, NULL, 0), 0);
	assert_int_equal(mn_run_site_count(run), 2);
	assert_string_equal(mn_run_site_kind(run, 2), "store");
	st = vp_new(run);
	load(st, 1, 0x100, 7);
	store(st, 2, 0x200, 8);
	load(st, 5000, 0x300, 9);
	emit(st, &s);
	assert_int_equal(nentries(&s), 3);
	assert_int_equal(u64(&s, entry(&s, 5000), "value"), 9);
	section_free(&s);
	vp_free(st);
	mn_run_destroy(run);
}

/*
 * More than 8 distinct strides: Space-Saving keeps the heavy stride and reports a lower bound of
 * its count, never more than the truth.
 */
static void test_many_strides_lower_bound(void **state)
{
	void *st = vp_new(NULL);
	uint64_t addr = 0x100000, heavy = 0;
	struct section s;
	yaml_node_t *e;
	double frac;
	uint64_t x = 12345;

	for (int i = 0; i < 10000; i++) {
		int64_t d;

		load(st, 1, addr, 0);
		x = x * 6364136223846793005u + 1442695040888963407u;
		if ((x >> 33) % 2 == 0) {
			d = 64;   /* half of all strides */
			heavy++;
		} else {
			d = (int64_t)((x >> 40) % 50) * 8 - 200;   /* 50 others */
			if (d == 64)
				heavy++;
		}
		addr += (uint64_t)d;
	}
	emit(st, &s);
	e = entry(&s, 1);
	assert_string_equal(str(&s, e, "stride"), "64");
	frac = strtod(str(&s, e, "stride_fraction"), NULL);
	assert_true(frac <= (double)heavy / 9999.0);
	assert_true(frac > 0.3);   /* the bound is useful: err is at most 9999 / 8 */
	section_free(&s);
	vp_free(st);
}

/* ---- Functions and memops ------------------------------------------------------------------- */

/*
 * A site table with the memory intrinsics' sites named as the pass names them: 2 and 3 are a
 * memcpy's source load and destination store, 4 a memset's store, 5 a memmove's store, 6 a plain
 * store, 7 a load named memset (never a memop: only stores carry the length), 1 and 8 functions.
 */
static const char memop_blob[] = "mnemo-sites/2\n"
	"function\tmain\tm.c\t1\t0\t\t0\t0\t\n"             /* 1 */
	"load\tmain\tm.c\t3\t5\tmemcpy\t0\t0\t\n"            /* 2 */
	"store\tmain\tm.c\t3\t5\tmemcpy\t0\t0\t\n"           /* 3 */
	"store\tmain\tm.c\t4\t5\tmemset\t0\t0\t\n"           /* 4 */
	"store\tmain\tm.c\t5\t5\tmemmove\t0\t0\t\n"          /* 5 */
	"store\tmain\tm.c\t6\t5\t\t0\t0\t\n"                 /* 6 */
	"load\tmain\tm.c\t7\t5\tmemset\t0\t0\t\n"            /* 7 */
	"function\tf\tm.c\t9\t0\t\t0\t0\t\n";                /* 8 */

static void store_sized(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	VP->store(st, site, addr, value, size);
}

/* The text of the section from `key:` on to the end. */
static const char *tail_from(const struct section *s, const char *key)
{
	const char *t = strstr(s->text, key);

	if (!t)
		fail_msg("no '%s' in the section:\n%s", key, s->text);
	return t;
}

static void test_functions_and_memops(void **state)
{
	struct mn_run *run;
	struct section s;
	void *st;
	char why[128];

	if (mn_run_create(&run, memop_blob, sizeof(memop_blob) - 1, why, sizeof(why)))
		fail_msg("site table: %s", why);
	st = vp_new(run);
	for (int i = 0; i < 1000; i++) {
		load(st, 2, 0x1000 + 16 * (uint64_t)i, 0);
		store_sized(st, 3, 0x9000 + 16 * (uint64_t)i, 0, 16);   /* memcpy: always 16 */
	}
	/* memset: 100 x5, 200 x3, then 1..9 once each (the 8 tracked are 100, 200, 1..6; 7, 8 and 9
	 * go to other), then 100 twice more: a tracked size goes on counting after others spill. */
	for (int i = 0; i < 5; i++)
		store_sized(st, 4, 0x5000, 0xff, 100);
	for (int i = 0; i < 3; i++)
		store_sized(st, 4, 0x5000, 0xff, 200);
	for (uint32_t z = 1; z <= 9; z++)
		store_sized(st, 4, 0x5000, 0xff, z);
	store_sized(st, 4, 0x5000, 0xff, 100);
	store_sized(st, 4, 0x5000, 0xff, 100);
	store_sized(st, 5, 0x6000, 0, 0xffffff);   /* a saturated length is a length like any */
	store_sized(st, 6, 0x7000, 3, 0);          /* a plain store: no memop row */
	load(st, 7, 0x7000, 3);                    /* a load, whatever its name */
	for (int i = 0; i < 3; i++)
		VP->func_entry(st, 8);
	VP->func_entry(st, 1);
	VP->func_entry(st, 1);
	emit(st, &s);
	assert_string_equal(tail_from(&s, "functions:"),
		"functions:\n"
		"- {site: 1, entries: 2}\n"
		"- {site: 8, entries: 3}\n"
		"memops:\n"
		"- {site: 3, op: memcpy, executions: 1000, sizes: [{size: 16, count: 1000}], other: 0}\n"
		"- {site: 4, op: memset, executions: 19, sizes: [{size: 100, count: 7}, {size: 200, "
		"count: 3}, {size: 1, count: 1}, {size: 2, count: 1}, {size: 3, count: 1}, {size: 4, "
		"count: 1}, {size: 5, count: 1}, {size: 6, count: 1}], other: 3}\n"
		"- {site: 5, op: memmove, executions: 1, sizes: [{size: 16777215, count: 1}], other: 0}\n");
	/* The memop stores are value-pattern entries like any store. */
	assert_int_equal(u64(&s, entry(&s, 3), "executions"), 1000);
	assert_int_equal(u64(&s, entry(&s, 4), "executions"), 19);
	assert_int_equal(u64(&s, entry(&s, 6), "executions"), 1);
	for (uint32_t id = 1; id <= 8; id++)
		if (id != 2 && id != 6 && id != 7)   /* memop and function sites are in sites: */
			assert_true(s.sites_used[0] >> id & 1);
	section_free(&s);
	vp_free(st);
	mn_run_destroy(run);
}

/* Without a site table, or with no memop and no function, both tables are there, empty. */
static void test_empty_tables(void **state)
{
	void *st = vp_new(NULL);
	struct section s;

	store_sized(st, 3, 0x1000, 0, 16);   /* no table: site 3 is no memop */
	emit(st, &s);
	assert_string_equal(tail_from(&s, "functions:"), "functions: []\nmemops: []\n");
	section_free(&s);
	vp_free(st);
}

/* ---- The reference --------------------------------------------------------------------------- */

/*
 * The reference: every event in one list; each field computed by brute force over the list.
 * Deliberately naive and independent of the module's data structures.
 */
struct ev {
	uint32_t site;
	bool store;
	uint64_t addr, value;
};

struct ref_row {
	uint32_t site;
	bool store;
	uint64_t executions;
	bool constant;
	uint64_t value;
	uint64_t distinct;
	bool capped;
	int64_t stride;
	uint64_t stride_count;
};

static void reference(const struct ev *evs, size_t n, uint32_t site, struct ref_row *r)
{
	uint64_t *vals = malloc(n * sizeof(*vals)), nvals = 0;
	int64_t *strides = malloc(n * sizeof(*strides));
	uint64_t nstrides = 0, last = 0;

	memset(r, 0, sizeof(*r));
	r->site = site;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		if (evs[i].site != site)
			continue;
		r->store = evs[i].store;
		if (r->executions++)
			strides[nstrides++] = (int64_t)(evs[i].addr - last);
		last = evs[i].addr;
		for (uint64_t k = 0; k < nvals; k++)
			seen |= vals[k] == evs[i].value;
		if (!seen)
			vals[nvals++] = evs[i].value;
	}
	r->distinct = nvals > 16 ? 16 : nvals;
	r->capped = nvals > 16;
	r->constant = nvals == 1;
	r->value = nvals ? vals[0] : 0;
	for (uint64_t i = 0; i < nstrides; i++) {
		uint64_t c = 0;

		for (uint64_t j = 0; j < nstrides; j++)
			c += strides[j] == strides[i];
		if (c > r->stride_count || (c == r->stride_count && strides[i] < r->stride)) {
			r->stride_count = c;
			r->stride = strides[i];
		}
	}
	free(vals);
	free(strides);
}

static uint64_t rng(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_agrees_with_reference(void **state)
{
	enum { NSITES = 40, NEVENTS = 200000 };
	struct ev *evs = malloc(NEVENTS * sizeof(*evs));
	uint64_t x = 0x2545f4914f6cdd1du;
	uint64_t addr[NSITES + 1] = { 0 };
	int64_t menu[NSITES + 1][8];
	unsigned nmenu[NSITES + 1], nvalues[NSITES + 1];
	bool is_store[NSITES + 1];
	void *st = vp_new(NULL);
	struct section s;
	size_t row = 0;

	/* Per site: up to 8 strides (with skewed weights), a value range of 1..40, a kind. */
	for (uint32_t site = 1; site <= NSITES; site++) {
		nmenu[site] = 1 + (unsigned)(rng(&x) % 8);
		for (unsigned k = 0; k < nmenu[site]; k++)
			menu[site][k] = (int64_t)(rng(&x) % 33) * 4 - 64;
		nvalues[site] = 1 + (unsigned)(rng(&x) % 40);
		is_store[site] = rng(&x) % 2;
		addr[site] = 0x10000000u * site;
	}
	for (size_t i = 0; i < NEVENTS; i++) {
		/* Sites are hot or cold: squaring skews the choice towards low ids. */
		uint64_t r = rng(&x) % NSITES;
		uint32_t site = (uint32_t)(1 + r * r / NSITES);
		unsigned k = (unsigned)(rng(&x) % (nmenu[site] * 2));

		k = k >= nmenu[site] ? 0 : k;   /* stride 0 of the menu is the favourite */
		evs[i] = (struct ev){ site, is_store[site], addr[site], rng(&x) % nvalues[site] };
		addr[site] += (uint64_t)menu[site][k];
		if (evs[i].store)
			store(st, site, evs[i].addr, evs[i].value);
		else
			load(st, site, evs[i].addr, evs[i].value);
	}
	emit(st, &s);

	/* Every site that ran, field by field; then the order. */
	{
		for (uint32_t site = 1; site <= NSITES; site++) {
			struct ref_row r;
			yaml_node_t *e;
			char buf[32];
			bool strong;

			reference(evs, NEVENTS, site, &r);
			if (!r.executions)
				continue;
			row++;
			e = entry(&s, site);
			assert_string_equal(str(&s, e, "access"), r.store ? "store" : "load");
			assert_int_equal(u64(&s, e, "executions"), r.executions);
			assert_string_equal(str(&s, e, "constant"), r.constant ? "true" : "false");
			if (r.constant)
				assert_int_equal(u64(&s, e, "value"), r.value);
			assert_int_equal(u64(&s, e, "distinct"), r.distinct);
			assert_string_equal(str(&s, e, "distinct_capped"),
					    r.capped ? "true" : "false");
			if (r.executions < 2)
				continue;
			snprintf(buf, sizeof(buf), "%" PRId64, r.stride);
			if (strcmp(str(&s, e, "stride"), buf))
				fail_msg("site %u: expected stride %s, got %s", site, buf,
					 str(&s, e, "stride"));
			assert_true(strtod(str(&s, e, "stride_fraction"), NULL) ==
				    (double)r.stride_count / (double)(r.executions - 1));
			strong = r.stride_count * 10 >= (r.executions - 1) * 7;
			assert_string_equal(str(&s, e, "strongly_strided"),
					    strong ? "true" : "false");
		}
		assert_int_equal(nentries(&s), row);
		for (size_t i = 1; i < row; i++) {
			uint64_t e0 = u64(&s, entry_at(&s, i - 1), "executions");
			uint64_t e1 = u64(&s, entry_at(&s, i), "executions");

			assert_true(e0 > e1 || (e0 == e1 && u64(&s, entry_at(&s, i - 1), "site") <
							    u64(&s, entry_at(&s, i), "site")));
		}
	}
	section_free(&s);
	vp_free(st);
	free(evs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_field),
		cmocka_unit_test(test_order_and_columns),
		cmocka_unit_test(test_merge_disjoint),
		cmocka_unit_test(test_with_site_table),
		cmocka_unit_test(test_many_strides_lower_bound),
		cmocka_unit_test(test_functions_and_memops),
		cmocka_unit_test(test_empty_tables),
		cmocka_unit_test(test_agrees_with_reference),
	};

	return cmocka_run_group_tests_name("value-pattern", tests, NULL, NULL);
}
