/*
 * Tests of the value-pattern module: its handlers are driven directly with synthetic event streams,
 * its section is emitted, read back with libmnemo-profile (as a profile file holding only that
 * section) and checked field by field; and it agrees with a brute-force reference (every event
 * kept in a list) on random streams.
 */
#define _GNU_SOURCE
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

#include "backend.h"
#include "module.h"
#include "profile.h"
#include "modtest.h"

extern const struct mn_module mn_module_value_pattern;
#define VP (&mn_module_value_pattern)

/* ---- Driving the module ---------------------------------------------------------------------- */

/* As the program sends an access: its record, then its value (which a published set may skip). */
static void load(void *st, uint32_t site, uint64_t addr, uint64_t value)
{
	VP->load(st, site, addr, 0, 8);
	VP->value(st, site, value);
}

static void store(void *st, uint32_t site, uint64_t addr, uint64_t value)
{
	VP->store(st, site, addr, 0, 8);
	VP->value(st, site, value);
}

static char tmpdir[] = "/tmp/mnemo-vp-test.XXXXXX";

/* A profile file holding section (as emit() wrote it) as value-pattern's, opened. */
static struct mn_profile *as_profile(const char *section)
{
	static unsigned n;
	char path[128], err[512];
	struct mn_profile *prof;

	snprintf(path, sizeof(path), "%s/p%u.yaml", tmpdir, n++);
	mt_write_profile(path, MT_HEAD, VP->name, section);
	if (mn_profile_open(&prof, path, err, sizeof(err)))
		fail_msg("the section does not load: %s\n%s", err, section);
	return prof;
}

/* A section loaded as a profile's, and the site ids the writer was told about. */
struct section {
	char *text;
	struct mn_profile *prof;
	const struct mn_pnode *root;
	uint64_t sites_used[128]; /* bitmap of ids < 8192 */
};

static void emit(void *st, struct section *s)
{
	struct mn_prof *p;
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

	s->prof = as_profile(s->text);
	s->root = mn_profile_module(s->prof, "value-pattern");
	assert_non_null(s->root);
	assert_int_equal(mn_pnode_kind(s->root), MN_PNODE_MAP);
}

static void section_free(struct section *s)
{
	mn_profile_close(s->prof);
	free(s->text);
}

static const struct mn_pnode *find(const struct mn_pnode *map, const char *key)
{
	return mn_pnode_get(map, key);
}

static const char *str(struct section *s, const struct mn_pnode *map, const char *key)
{
	char err[512];
	const struct mn_pnode *n = mn_pfield_node(s->prof, map, key, MN_PNODE_SCALAR, err,
						  sizeof(err));

	if (!n)
		fail_msg("expected key '%s' in the row, a scalar: %s", key, err);
	return mn_pnode_str(n, NULL);
}

static uint64_t u64(struct section *s, const struct mn_pnode *map, const char *key)
{
	char err[512];
	uint64_t v;

	if (mn_pfield_u64(s->prof, map, key, &v, err, sizeof(err)))
		fail_msg("expected key '%s' in the row, an unsigned integer: %s", key, err);
	return v;
}

static double f64(struct section *s, const struct mn_pnode *map, const char *key)
{
	char err[512];
	double v;

	if (mn_pfield_f64(s->prof, map, key, &v, err, sizeof(err)))
		fail_msg("expected key '%s' in the row, a number: %s", key, err);
	return v;
}

static const struct mn_pnode *entries(struct section *s)
{
	char err[512];
	const struct mn_pnode *e = mn_pfield_node(s->prof, s->root, "entries", MN_PNODE_SEQ, err,
						  sizeof(err));

	if (!e)
		fail_msg("expected a sequence 'entries': %s", err);
	return e;
}

static size_t nentries(struct section *s)
{
	return mn_pnode_len(entries(s));
}

static const struct mn_pnode *entry_at(struct section *s, size_t i)
{
	const struct mn_pnode *e = mn_pnode_at(entries(s), i);

	assert_non_null(e);
	return e;
}

static const struct mn_pnode *entry(struct section *s, uint32_t site)
{
	for (size_t i = 0; i < nentries(s); i++)
		if (u64(s, entry_at(s, i), "site") == site)
			return entry_at(s, i);
	fail_msg("no entry for site %u", site);
	return NULL;
}

/*
 * The character of the profile file at which node n starts.  The reader does not say a node's
 * style, but libyaml starts a flow mapping's node at its '{', a block mapping's at its first key.
 */
static int char_at(const struct section *s, const struct mn_pnode *n)
{
	FILE *f = fopen(mn_profile_path(s->prof), "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int c = EOF;

	assert_non_null(f);
	for (unsigned l = 1; (len = getline(&line, &cap, f)) >= 0; l++)
		if (l == mn_pnode_line(n)) {
			if (mn_pnode_column(n) >= 1 && mn_pnode_column(n) <= (size_t)len)
				c = line[mn_pnode_column(n) - 1];
			break;
		}
	free(line);
	fclose(f);
	return c;
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
	const struct mn_pnode *e = entry(s, w->site);
	char buf[32];

	assert_string_equal(str(s, e, "access"), w->access);
	assert_int_equal(u64(s, e, "executions"), w->executions);
	assert_string_equal(str(s, e, "constant"), w->constant ? "true" : "false");
	if (w->constant)
		assert_int_equal(u64(s, e, "value"), w->value);
	else
		assert_null(find(e, "value"));
	assert_int_equal(u64(s, e, "distinct"), w->distinct);
	assert_string_equal(str(s, e, "distinct_capped"), w->capped ? "true" : "false");
	if (w->executions < 2) {
		assert_null(find(e, "stride"));
		assert_null(find(e, "stride_fraction"));
		assert_null(find(e, "strongly_strided"));
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
	void *st = mt_state_new(VP, NULL);
	struct section s;

	feed(st);
	emit(st, &s);
	assert_string_equal(str(&s, s.root, "value_cap"), "16");
	assert_string_equal(str(&s, s.root, "strong_stride_fraction"), "0.7");
	assert_int_equal(nentries(&s), sizeof(wants) / sizeof(wants[0]));
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		check(&s, &wants[i]);
	section_free(&s);
	mt_state_free(VP, st);
}

/* Sorted by executions, descending, then by site id; executions is the first numeric column. */
static void test_order_and_columns(void **state)
{
	static const uint32_t order[] = { S_CONST, S_MIX70, S_MIX60, S_VARYING, S_ARRAY8, S_ARRAY24,
					  S_SIXTEEN, S_NEG, S_ONCE };
	void *st = mt_state_new(VP, NULL);
	struct section s;

	feed(st);
	emit(st, &s);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const struct mn_pnode *e = entry_at(&s, i);

		assert_int_equal(u64(&s, e, "site"), order[i]);
		/* A flow mapping: one row, one line. */
		assert_int_equal(mn_pnode_kind(e), MN_PNODE_MAP);
		assert_int_equal(char_at(&s, e), '{');
		assert_non_null(mn_pnode_key(e, 1));
		assert_non_null(mn_pnode_key(e, 2));
		assert_string_equal(mn_pnode_key(e, 1), "access");
		assert_string_equal(mn_pnode_key(e, 2), "executions");
	}
	section_free(&s);
	mt_state_free(VP, st);
}

/* Two workers owning disjoint sites, merged, say what one worker says. */
static void test_merge_disjoint(void **state)
{
	void *w0 = mt_state_new(VP, NULL), *w1 = mt_state_new(VP, NULL);
	void *all = mt_state_new(VP, NULL);
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
	mt_fold(VP, w0, w1);
	emit(w0, &a);
	emit(all, &b);
	assert_string_equal(a.text, b.text);
	section_free(&a);
	section_free(&b);
	mt_state_free(VP, w0);
	mt_state_free(VP, all);
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
	st = mt_state_new(VP, run);
	load(st, 1, 0x100, 7);
	store(st, 2, 0x200, 8);
	load(st, 5000, 0x300, 9);
	emit(st, &s);
	assert_int_equal(nentries(&s), 3);
	assert_int_equal(u64(&s, entry(&s, 5000), "value"), 9);
	section_free(&s);
	mt_state_free(VP, st);
	mn_run_destroy(run);
}

/*
 * More than 8 distinct strides: Space-Saving keeps the heavy stride and reports a lower bound of
 * its count, never more than the truth.
 */
static void test_many_strides_lower_bound(void **state)
{
	void *st = mt_state_new(VP, NULL);
	uint64_t addr = 0x100000, heavy = 0;
	struct section s;
	const struct mn_pnode *e;
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
	frac = f64(&s, e, "stride_fraction");
	assert_true(frac <= (double)heavy / 9999.0);
	assert_true(frac > 0.3);   /* the bound is useful: err is at most 9999 / 8 */
	section_free(&s);
	mt_state_free(VP, st);
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
	VP->store(st, site, addr, 0, size);
	VP->value(st, site, value);
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
	st = mt_state_new(VP, run);
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
		"- {site: 3, op: memcpy, executions: 1000, sizes: [{size: 16, count: 1000}], "
		"other: 0}\n"
		"- {site: 4, op: memset, executions: 19, sizes: [{size: 100, count: 7}, "
		"{size: 200, count: 3}, {size: 1, count: 1}, {size: 2, count: 1}, {size: 3, "
		"count: 1}, {size: 4, count: 1}, {size: 5, count: 1}, {size: 6, count: 1}], "
		"other: 3}\n"
		"- {site: 5, op: memmove, executions: 1, sizes: [{size: 16777215, count: 1}], "
		"other: 0}\n");
	/* The memop stores are value-pattern entries like any store. */
	assert_int_equal(u64(&s, entry(&s, 3), "executions"), 1000);
	assert_int_equal(u64(&s, entry(&s, 4), "executions"), 19);
	assert_int_equal(u64(&s, entry(&s, 6), "executions"), 1);
	for (uint32_t id = 1; id <= 8; id++)
		if (id != 2 && id != 6 && id != 7)   /* memop and function sites are in sites: */
			assert_true(s.sites_used[0] >> id & 1);
	section_free(&s);
	mt_state_free(VP, st);
	mn_run_destroy(run);
}

/* Without a site table, or with no memop and no function, both tables are there, empty. */
static void test_empty_tables(void **state)
{
	void *st = mt_state_new(VP, NULL);
	struct section s;

	store_sized(st, 3, 0x1000, 0, 16);   /* no table: site 3 is no memop */
	emit(st, &s);
	assert_string_equal(tail_from(&s, "functions:"), "functions: []\nmemops: []\n");
	section_free(&s);
	mt_state_free(VP, st);
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
	void *st = mt_state_new(VP, NULL);
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
			const struct mn_pnode *e;
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
			assert_true(f64(&s, e, "stride_fraction") ==
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
	mt_state_free(VP, st);
	free(evs);
}

/* ---- The counters in the section ------------------------------------------------------------- */

/* The text of site's row in entries (one line), copied. */
static char *row_line(const struct section *s, uint32_t site)
{
	char key[32];
	const char *b, *e;

	snprintf(key, sizeof(key), "- {site: %u,", site);
	b = strstr(s->text, key);
	if (!b)
		fail_msg("no row for site %u in:\n%s", site, s->text);
	e = strchr(b, '\n');
	return strndup(b, (size_t)(e - b));
}

static void expect_row_has(const struct section *s, uint32_t site, const char *part)
{
	char *row = row_line(s, site);

	if (!strstr(row, part))
		fail_msg("site %u: expected '%s' in the row\n  %s", site, part, row);
	free(row);
}

static void expect_row_lacks(const struct section *s, uint32_t site, const char *part)
{
	char *row = row_line(s, site);

	if (strstr(row, part))
		fail_msg("site %u: expected no '%s' in the row\n  %s", site, part, row);
	free(row);
}

/* The values (while not capped) and the stride counters are in the rows: what merge needs. */
static void test_counters_listed(void **state)
{
	void *st = mt_state_new(VP, NULL);
	struct section s;

	feed(st);
	emit(st, &s);
	/* S_MIX70: values i % 3, strides 70 of 8 then 30 of 16. */
	expect_row_has(&s, S_MIX70, "distinct: 3, distinct_capped: false, values: [0, 1, 2], "
		       "stride: 8, stride_fraction: 0.7, strongly_strided: true, "
		       "strides: {8: 70, 16: 30}}");
	/* S_MIX60: 3 of every 5 strides are 4, the others 12. */
	expect_row_has(&s, S_MIX60, "strides: {4: 60, 12: 40}}");
	/* One value: `value` says it, no list; capped: no list. */
	expect_row_has(&s, S_CONST, "value: 42, distinct: 1, distinct_capped: false, stride: 0");
	expect_row_lacks(&s, S_CONST, "values");
	expect_row_lacks(&s, S_VARYING, "values");
	/* Exactly 16 distinct values, walking backwards: the list, sorted, and a negative key. */
	expect_row_has(&s, S_SIXTEEN, "values: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, "
		       "15], stride: 0");
	expect_row_has(&s, S_NEG, "strides: {-4: 31}}");
	expect_row_lacks(&s, S_ONCE, "strides");
	expect_row_lacks(&s, S_CONST, "stride_errs");
	section_free(&s);
	mt_state_free(VP, st);
}

/*
 * Space-Saving with evictions writes its err terms: 9 strides in turn, each new one evicting the
 * smallest counter.  Strides 1..8 once each (counts 1), then 9 evicts the smallest (the first of
 * the ties, stride 1) and inherits its count: {9: 2, err 1}.
 */
static void test_stride_errs_listed(void **state)
{
	void *st = mt_state_new(VP, NULL);
	uint64_t addr = 0x1000;
	struct section s;

	load(st, 1, addr, 0);
	for (int d = 1; d <= 9; d++) {
		addr += (uint64_t)d;
		load(st, 1, addr, 0);
	}
	emit(st, &s);
	/* Lower bounds: 2..8 are 1, 9 is 2 - 1 = 1: all 1, so by stride. */
	expect_row_has(&s, 1, "stride: 2, stride_fraction: 0.1111111111111111, "
		       "strongly_strided: false, strides: {2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1, "
		       "8: 1, 9: 2}, stride_errs: {9: 1}}");
	section_free(&s);
	mt_state_free(VP, st);
}

/* ---- Restore and merge ----------------------------------------------------------------------- */

/* A state restored from section, or the failure and its message. */
static int try_restore(const char *section, void **stp, char *err, size_t errlen)
{
	struct mn_profile *prof = as_profile(section);
	int e = mt_try_restore(VP, NULL, prof, stp, err, errlen);

	mn_profile_close(prof);
	return e;
}

static void *restored(const char *section)
{
	char err[512];
	void *st;

	if (try_restore(section, &st, err, sizeof(err)))
		fail_msg("restore: %s\n%s", err, section);
	return st;
}

/* emit(restore(text)) must be text, byte for byte. */
static void expect_round_trip(const char *text)
{
	void *st = restored(text);
	char *again = mt_emit_text(VP, st, NULL);

	if (strcmp(again, text))
		fail_msg("emit(restore(s)) != s\n--- s:\n%s\n--- emit(restore(s)):\n%s", text,
			 again);
	free(again);
	mt_state_free(VP, st);
}

/* Sites 1..40 are loads and stores (31..40 memcpy, memmove and memset stores), 41..45 functions. */
static char *random_blob(size_t *len)
{
	static const char *const ops[] = { "memcpy", "memmove", "memset" };
	char *b = NULL;
	FILE *f = open_memstream(&b, len);

	fputs("mnemo-sites/2\n", f);
	for (unsigned id = 1; id <= 45; id++)
		if (id > 40)
			fprintf(f, "function\tf%u\tr.c\t%u\t0\t\t0\t0\t\n", id, id);
		else
			fprintf(f, "%s\tf\tr.c\t%u\t3\t%s\t0\t0\t\n", id % 2 && id <= 30 ? "load" :
				"store", id, id > 30 ? ops[id % 3] : "");
	fclose(f);
	return b;
}

/*
 * A run's state from a random stream: sites chosen from a window of the 40 (runs overlap in some
 * sites, not all), up to 12 strides per site (so Space-Saving evicts), value ranges up to 24 (some
 * sites cap), memop lengths from up to 12 (some spill to other), function entries.
 */
static void *random_run(const struct mn_run *run, uint64_t seed, unsigned first, unsigned nev)
{
	void *st = mt_state_new(VP, run);
	uint64_t x = seed, addr[41] = { 0 };

	for (unsigned i = 0; i < nev; i++) {
		uint32_t site = 1 + (first + (uint32_t)(rng(&x) % 28)) % 40;
		uint64_t value = rng(&x) % (1 + site % 24);
		int64_t d = (int64_t)(rng(&x) % (1 + site % 12)) * 8 - 16;

		addr[site] += (uint64_t)d;
		if (site % 2 && site <= 30)
			load(st, site, addr[site], value);
		else
			store_sized(st, site, addr[site], value,
				    (uint32_t)(rng(&x) % (2 + site % 11)));
		if (rng(&x) % 16 == 0)
			VP->func_entry(st, 41 + (uint32_t)(rng(&x) % 5));
	}
	return st;
}

static void test_restore_round_trip(void **state)
{
	size_t len;
	char *blob = random_blob(&len), *text;
	struct mn_run *run;
	void *st;

	assert_int_equal(mn_run_create(&run, blob, len, NULL, 0), 0);
	/* The synthetic stream, the brute-force test's, a random run, memops, an empty state. */
	st = mt_state_new(VP, NULL);
	feed(st);
	text = mt_emit_text(VP, st, NULL);
	expect_round_trip(text);
	free(text);
	mt_state_free(VP, st);

	for (uint64_t seed = 1; seed <= 4; seed++) {
		st = random_run(run, seed * 0x9e3779b97f4a7c15u, (unsigned)seed * 5, 20000);
		text = mt_emit_text(VP, st, NULL);
		assert_non_null(strstr(text, "stride_errs"));   /* evictions are covered */
		assert_non_null(strstr(text, "distinct_capped: true"));
		assert_non_null(strstr(text, "op: memset"));
		expect_round_trip(text);
		free(text);
		mt_state_free(VP, st);
	}

	st = mt_state_new(VP, NULL);
	text = mt_emit_text(VP, st, NULL);
	expect_round_trip(text);
	free(text);
	mt_state_free(VP, st);
	mn_run_destroy(run);
	free(blob);
}

/* merge() into a restored state of text a, the restored states of texts b, c (if not NULL). */
static char *merged(const char *a, const char *b, const char *c)
{
	void *m = mt_fold(VP, restored(a), restored(b));
	char *t;

	if (c)
		mt_fold(VP, m, restored(c));
	t = mt_emit_text(VP, m, NULL);
	mt_state_free(VP, m);
	return t;
}

static void expect_same(const char *what, const char *a, const char *b)
{
	if (strcmp(a, b))
		fail_msg("%s differ\n--- one:\n%s\n--- other:\n%s", what, a, b);
}

/*
 * The merge laws, byte for byte, on three random runs over overlapping sites: every order of
 * folding three, both groupings (also through a merged profile, as `mnemo merge` of merged
 * profiles does), and an empty profile as identity.
 */
static void test_merge_laws(void **state)
{
	size_t len;
	char *blob = random_blob(&len), *t[3], *ref, *x, *bc, *empty;
	static const int perm[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
					{ 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	struct mn_run *run;
	void *st, *a, *b;

	assert_int_equal(mn_run_create(&run, blob, len, NULL, 0), 0);
	for (int i = 0; i < 3; i++) {
		st = random_run(run, 0x1234567u + (uint64_t)i * 77, (unsigned)i * 6 + 1, 6000);
		t[i] = mt_emit_text(VP, st, NULL);
		mt_state_free(VP, st);
	}
	ref = merged(t[0], t[1], t[2]);
	for (int k = 1; k < 6; k++) {
		x = merged(t[perm[k][0]], t[perm[k][1]], t[perm[k][2]]);
		expect_same("merges of three in two orders", ref, x);
		free(x);
	}
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			char *ij = merged(t[i], t[j], NULL), *ji = merged(t[j], t[i], NULL);

			if (i != j)
				expect_same("merge(p, q) and merge(q, p)", ij, ji);
			free(ij);
			free(ji);
		}

	/* a + (b + c), with b + c a state, and with b + c written and read back. */
	a = restored(t[0]);
	b = restored(t[1]);
	st = restored(t[2]);
	mt_fold(VP, a, mt_fold(VP, b, st));
	x = mt_emit_text(VP, a, NULL);
	mt_state_free(VP, a);
	expect_same("(a + b) + c and a + (b + c)", ref, x);
	free(x);
	bc = merged(t[1], t[2], NULL);
	expect_round_trip(bc);
	x = merged(t[0], bc, NULL);
	expect_same("(a + b) + c and a + merged(b, c)", ref, x);
	free(x);
	free(bc);
	expect_round_trip(ref);

	st = mt_state_new(VP, NULL);
	empty = mt_emit_text(VP, st, NULL);
	mt_state_free(VP, st);
	x = merged(t[0], empty, NULL);
	expect_same("merge(p, empty) and p", t[0], x);
	free(x);
	x = merged(empty, t[0], NULL);
	expect_same("merge(empty, p) and p", t[0], x);
	free(x);

	free(empty);
	free(ref);
	for (int i = 0; i < 3; i++)
		free(t[i]);
	mn_run_destroy(run);
	free(blob);
}

/*
 * Known answers of merging two runs, by construction: executions add; constant only when both
 * saw the one same value; values unite up to the cap, and one more caps; stride counters add and
 * every stride is kept; memop lengths add and every length is kept; function entries add.
 */
static void test_merge_known(void **state)
{
	struct mn_run *run;
	void *x, *y, *z;
	char *tx, *ty, *tz, *m, *m3;
	struct section s;

	assert_int_equal(mn_run_create(&run, memop_blob, sizeof(memop_blob) - 1, NULL, 0), 0);
	x = mt_state_new(VP, run);
	y = mt_state_new(VP, run);
	z = mt_state_new(VP, run);
	/* Site 2 (a load): x reads 42 ten times at one address, y five times; z 43 once. */
	for (int i = 0; i < 10; i++)
		load(x, 2, 0x100, 42);
	for (int i = 0; i < 5; i++)
		load(y, 2, 0x100, 42);
	load(z, 2, 0x100, 43);
	/* Site 7 (a load): x values 0..9 with strides 8 (9 of them), y values 5..14 with strides
	 * 1..9 (one each, so Space-Saving evicts: 9 strides, 8 counters). */
	for (uint64_t v = 0; v < 10; v++)
		load(x, 7, 0x1000 + 8 * v, v);
	{
		uint64_t a = 0x2000;

		for (uint64_t v = 5; v < 15; v++) {
			load(y, 7, a, v);
			a += v - 4;
		}
	}
	/* z: values 15 and 16 take the union to 17: capped. */
	load(z, 7, 0x3000, 15);
	load(z, 7, 0x3000, 16);
	/* Site 4, the memset: x lengths 1..8 (one each) then 9 twice (other), y 9..12 once each,
	 * and 1 three times. */
	for (uint32_t n = 1; n <= 8; n++)
		store_sized(x, 4, 0x5000, 0, n);
	store_sized(x, 4, 0x5000, 0, 9);
	store_sized(x, 4, 0x5000, 0, 9);
	for (uint32_t n = 9; n <= 12; n++)
		store_sized(y, 4, 0x5000, 0, n);
	for (int i = 0; i < 3; i++)
		store_sized(y, 4, 0x5000, 0, 1);
	/* Functions: 1 entered 3 + 4 times, 8 only in y. */
	for (int i = 0; i < 3; i++)
		VP->func_entry(x, 1);
	for (int i = 0; i < 4; i++)
		VP->func_entry(y, 1);
	VP->func_entry(y, 8);

	tx = mt_emit_text(VP, x, NULL);
	ty = mt_emit_text(VP, y, NULL);
	tz = mt_emit_text(VP, z, NULL);
	m = merged(tx, ty, NULL);
	s.text = m;
	expect_row_has(&s, 2, "executions: 15, constant: true, value: 42, distinct: 1, "
		       "distinct_capped: false, stride: 0, stride_fraction: 1.0, "
		       "strongly_strided: true, strides: {0: 13}}");
	/* Strides of 7: x's 9 of 8; y's Space-Saving table after 1..9: {2..8: 1, 9: 2 err 1}.
	 * Union: 8 gets 9 + 1, of 9 + 9 strides in all. */
	expect_row_has(&s, 7, "executions: 20, constant: false, distinct: 15, "
		       "distinct_capped: false, values: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
		       "13, 14], stride: 8, stride_fraction: 0.5555555555555556, "
		       "strongly_strided: false, "
		       "strides: {8: 10, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 9: 2}, "
		       "stride_errs: {9: 1}}");
	assert_non_null(strstr(m, "functions:\n- {site: 1, entries: 7}\n"
			       "- {site: 8, entries: 1}\n"));
	/* Every length of the union, by count then size; the 9s of x's other stay in other. */
	assert_non_null(strstr(m, "- {site: 4, op: memset, executions: 17, sizes: [{size: 1, "
			       "count: 4}, {size: 2, count: 1}, {size: 3, count: 1}, {size: 4, "
			       "count: 1}, {size: 5, count: 1}, {size: 6, count: 1}, {size: 7, "
			       "count: 1}, {size: 8, count: 1}, {size: 9, count: 1}, {size: 10, "
			       "count: 1}, {size: 11, count: 1}, {size: 12, count: 1}], "
			       "other: 2}\n"));
	m3 = merged(tx, ty, tz);
	s.text = m3;
	expect_row_has(&s, 2, "executions: 16, constant: false, distinct: 2, "
		       "distinct_capped: false, values: [42, 43]");
	expect_row_has(&s, 7, "executions: 22, constant: false, distinct: 16, "
		       "distinct_capped: true, stride: 8");
	expect_row_lacks(&s, 7, "values");
	free(m3);
	free(m);
	free(tx);
	free(ty);
	free(tz);
	mt_state_free(VP, x);
	mt_state_free(VP, y);
	mt_state_free(VP, z);
	mn_run_destroy(run);
}

/* Workers of one run all see every function entry: merged, they count them once. */
static void test_worker_merge_functions_once(void **state)
{
	void *w0 = mt_state_new(VP, NULL), *w1 = mt_state_new(VP, NULL);
	char *t;

	for (int i = 0; i < 3; i++) {
		VP->func_entry(w0, 5);
		VP->func_entry(w1, 5);
	}
	mt_fold(VP, w0, w1);
	t = mt_emit_text(VP, w0, NULL);
	assert_non_null(strstr(t, "functions:\n- {site: 5, entries: 3}\n"));
	free(t);
	mt_state_free(VP, w0);
}

/* A section that does not follow the schema: -EINVAL and the place and field at fault. */
static void test_restore_errors(void **state)
{
	static const struct {
		const char *section, *message;
	} bad[] = {
		{ "value_cap: 8\nstrong_stride_fraction: 0.7\nentries: []\nfunctions: []\n"
		  "memops: []\n",
		  ":6:16: field 'value_cap': 8, but this value-pattern's is 16" },
		{ "value_cap: 16\nstrong_stride_fraction: 0.7\nentries:\n- {site: 3, access: load, "
		  "executions: many, constant: true, value: 1, distinct: 1, "
		  "distinct_capped: false}\n"
		  "functions: []\nmemops: []\n",
		  ":9:43: field 'executions': expected an unsigned integer, found 'many'" },
		{ "value_cap: 16\nstrong_stride_fraction: 0.7\nentries:\n- {site: 3, access: load, "
		  "executions: 2, constant: false, distinct: 2, distinct_capped: false, "
		  "values: [5, 4], strides: {8: 1}}\nfunctions: []\nmemops: []\n",
		  ":9:112: field 'values': not in ascending order, or repeated" },
		{ "value_cap: 16\nstrong_stride_fraction: 0.7\nentries:\n- {site: 3, access: load, "
		  "executions: 2, constant: true, value: 1, distinct: 1, distinct_capped: false, "
		  "strides: {x: 1}}\nfunctions: []\nmemops: []\n",
		  ":9:119: field 'strides': expected an integer, found 'x'" },
		{ "value_cap: 16\nstrong_stride_fraction: 0.7\nentries: []\nfunctions: []\n"
		  "memops:\n- {site: 3, op: strcpy, executions: 1, sizes: [], other: 1}\n",
		  ":11:21: field 'op': expected one of memcpy|memmove|memset, found 'strcpy'" },
		{ "value_cap: 16\nstrong_stride_fraction: 0.7\nentries: []\nfunctions:\n"
		  "- {site: 3}\nmemops: []\n",
		  ":10:7: missing field 'entries'" },
		{ "value_cap: 16\nstrong_stride_fraction: 0.7\nentries: []\nfunctions: []\n",
		  ":6:5: missing field 'memops'" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[512];
		void *st;

		assert_int_equal(try_restore(bad[i].section, &st, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].message) || strncmp(err, tmpdir, strlen(tmpdir)))
			fail_msg("case %zu: expected '<file>%s', got '%s'", i, bad[i].message, err);
	}
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
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
		cmocka_unit_test(test_counters_listed),
		cmocka_unit_test(test_stride_errs_listed),
		cmocka_unit_test(test_restore_round_trip),
		cmocka_unit_test(test_merge_laws),
		cmocka_unit_test(test_merge_known),
		cmocka_unit_test(test_worker_merge_functions_once),
		cmocka_unit_test(test_restore_errors),
	};

	return cmocka_run_group_tests_name("value-pattern", tests, setup, teardown);
}
