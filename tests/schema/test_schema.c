/*
 * Section schemas (backend/schema.h), driven through a module of the test's own whose section has
 * a field of every type: what emit writes, exactly; emit(restore(text)) == text; merge by every
 * reduction; and restore's messages for sections that do not follow the schema.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "backend.h"
#include "context.h"
#include "module.h"
#include "profile.h"
#include "schema.h"
#include "sitevec.h"
#include "modtest.h"

struct pair { int64_t key; uint64_t count, err; };
struct item { uint64_t id; uint64_t bytes; };
struct func { uint64_t calls; };

struct cell {
	uint32_t site;
	uint8_t kind;             /* load|store|call */
	bool has_depth;           /* depth is null when not */
	int64_t depth;
	uint64_t count, lo, hi;
	uint32_t width;
	struct mn_set64 vals;     /* at most 3 */
	struct mn_vec pairs;      /* struct pair */
	struct mn_vec items;      /* struct item */
};

struct top {
	uint64_t version;         /* a constant: 3 */
	uint32_t granularity;     /* a setting: must agree */
	uint64_t lost;
	double scale;
	bool flag;
	struct mn_sitevec cells;  /* struct cell */
	struct mn_sitevec funcs;  /* struct func */
	struct mn_vec log;        /* int64_t, folded by concatenation */
	bool restored;
};

static void d_span(const struct mn_field *f, const void *row, void *out)
{
	const struct cell *c = row;

	*(uint64_t *)out = c->hi - c->lo;
}

static void d_half(const struct mn_field *f, const void *row, void *out)
{
	*(double *)out = (double)((const struct cell *)row)->count / 2;
}

static int log_fold(void *into, const void *from)
{
	const struct mn_vec *f = from;

	for (uint32_t i = 0; i < f->n; i++) {
		int64_t *e = mn_vec_push(into, sizeof(*e));

		if (!e)
			return -ENOMEM;
		*e = ((const int64_t *)f->v)[i];
	}
	return 0;
}

static const char *cell_check(const void *top, const void *row, uint64_t id)
{
	return ((const struct cell *)row)->lo > ((const struct cell *)row)->hi ? "lo above hi" : NULL;
}

#define F(t, f) offsetof(t, f)
static const struct mn_field pair_fields[] = {
	MN_FIELD("key", MN_FT_I64, F(struct pair, key), MN_R_KEY),
	MN_FIELD("count", MN_FT_U64, F(struct pair, count), MN_R_SUM),
	MN_FIELD("err", MN_FT_U64, F(struct pair, err), MN_R_SUM),
};
static const struct mn_schema pairs = MN_SCHEMA("pairs", struct pair, pair_fields);
static const struct mn_field item_fields[] = {
	MN_FIELD("id", MN_FT_U64, F(struct item, id), MN_R_KEY),
	MN_FIELD("bytes", MN_FT_U64, F(struct item, bytes), MN_R_MAX),
};
static const struct mn_schema items = MN_SCHEMA("items", struct item, item_fields, .flow = true);
static const struct mn_field cell_fields[] = {
	MN_FIELD("site", MN_FT_SITE, F(struct cell, site), MN_R_KEY),
	MN_FIELD("kind", MN_FT_ENUM, F(struct cell, kind), MN_R_MAX, .choices = "load|store|call"),
	MN_FIELD("depth", MN_FT_I64, F(struct cell, depth), MN_R_MIN, .flags = MN_FF_NULL,
		 .aux = F(struct cell, has_depth)),
	MN_FIELD("count", MN_FT_U64, F(struct cell, count), MN_R_SUM),
	MN_FIELD("lo", MN_FT_U64, F(struct cell, lo), MN_R_MIN),
	MN_FIELD("hi", MN_FT_U64, F(struct cell, hi), MN_R_MAX),
	MN_FIELD("span", MN_FT_U64, 0, MN_R_NONE, .flags = MN_FF_DERIVED, .derive = d_span),
	MN_FIELD("half", MN_FT_F64, 0, MN_R_NONE, .flags = MN_FF_DERIVED, .derive = d_half),
	MN_FIELD("width", MN_FT_U32, F(struct cell, width), MN_R_MAX, .flags = MN_FF_OPT),
	MN_FIELD("val", MN_FT_LIST, F(struct cell, vals), MN_R_NONE,
		 .flags = MN_FF_ONE | MN_FF_VIEW, .elem = MN_FT_U64, .when = mn_set64_open),
	MN_FIELD("capped", MN_FT_BOOL, F(struct cell, vals.capped), MN_R_MAX),
	MN_FIELD("vals", MN_FT_LIST, F(struct cell, vals), MN_R_SET,
		 .flags = MN_FF_MANY | MN_FF_SORTED | MN_FF_FLOW, .elem = MN_FT_U64, .arg = 3,
		 .when = mn_set64_open),
	MN_FIELD("nvals", MN_FT_U64, F(struct cell, vals), MN_R_NONE, .flags = MN_FF_DERIVED,
		 .derive = mn_set64_count, .arg = 3),
	MN_FIELD("pairs", MN_FT_KV, F(struct cell, pairs), MN_R_UNION, .flags = MN_FF_OPT,
		 .sub = &pairs, .arg = 1),
	MN_FIELD("errs", MN_FT_KV, F(struct cell, pairs), MN_R_NONE,
		 .flags = MN_FF_OPT | MN_FF_VIEW | MN_FF_NONZERO | MN_FF_ATTACH, .sub = &pairs,
		 .arg = 2),
	MN_FIELD("items", MN_FT_ROWS, F(struct cell, items), MN_R_UNION, .flags = MN_FF_FLOW,
		 .sub = &items),
};
static const struct mn_schema cells = MN_SCHEMA("cells", struct cell, cell_fields,
						.check = cell_check);
static const struct mn_field func_fields[] = {
	MN_FIELD("site", MN_FT_SITE, MN_NO_OFFSET, MN_R_KEY),
	MN_FIELD("calls", MN_FT_U64, F(struct func, calls), MN_R_SUM),
};
static const struct mn_schema funcs = MN_SCHEMA("funcs", struct func, func_fields, .flow = true);
static const struct mn_field top_fields[] = {
	MN_FIELD("version", MN_FT_U64, F(struct top, version), MN_R_CONST),
	MN_FIELD("granularity", MN_FT_U32, F(struct top, granularity), MN_R_SAME),
	MN_FIELD("lost", MN_FT_U64, F(struct top, lost), MN_R_SUM, .flags = MN_FF_OPT),
	MN_FIELD("scale", MN_FT_F64, F(struct top, scale), MN_R_SUM),
	MN_FIELD("flag", MN_FT_BOOL, F(struct top, flag), MN_R_MAX),
	MN_FIELD("cells", MN_FT_SITES, F(struct top, cells), MN_R_UNION, .sub = &cells),
	MN_FIELD("funcs", MN_FT_SITES, F(struct top, funcs), MN_R_UNION, .flags = MN_FF_CONTEXT,
		 .sub = &funcs),
	MN_FIELD("log", MN_FT_LIST, F(struct top, log), MN_R_FOLD, .elem = MN_FT_I64,
		 .fold = log_fold),
};
static const struct mn_schema top = MN_SCHEMA("every-type", struct top, top_fields);

/* ---- The module around the schema ------------------------------------------------------------ */

static int t_init(void *st, const struct mn_run *run)
{
	struct top *t = st;

	t->version = 3;
	if (mn_sitevec_init(&t->cells, sizeof(struct cell), 8) ||
	    mn_sitevec_init(&t->funcs, sizeof(struct func), 8))
		return -ENOMEM;
	return 0;
}

static void t_fini(void *st) { mn_schema_release(&top, st); }
static int t_emit(void *st, struct mn_prof *p) { return mn_schema_emit(&top, st, p); }

static int merge_rc;
static void t_merge(void *into, void *from)
{
	merge_rc = mn_schema_merge(&top, into, from, ((struct top *)from)->restored);
}

static int t_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		     char *err, size_t errlen)
{
	((struct top *)st)->restored = true;
	return mn_schema_restore(&top, st, prof, sec, err, errlen);
}

static const struct mn_module T = {
	.name = "every-type", .state_size = sizeof(struct top), .init = t_init, .fini = t_fini,
	.merge = t_merge, .emit = t_emit, .restore = t_restore,
};

static char tmpdir[] = "/tmp/mnemo-schema-test.XXXXXX";
static int nfile;

static int try_restore(const char *section, void **stp, char *err, size_t errlen)
{
	char path[256];
	struct mn_profile *prof;
	int e;

	snprintf(path, sizeof(path), "%s/p%d.yaml", tmpdir, nfile++);
	mt_write_profile(path, MT_HEAD, T.name, section);
	prof = mt_open(path, T.name);
	e = mt_try_restore(&T, NULL, prof, stp, err, errlen);
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

/* ---- The tests ------------------------------------------------------------------------------- */

/* A state built by hand: every field, as a module's handlers would fill it. */
static void *built(void)
{
	void *st = mt_state_new(&T, NULL);
	struct top *t = st;
	struct cell *c = mn_sitevec_get(&t->cells, 2), *d = mn_sitevec_get(&t->cells, 5);
	struct pair *p;
	struct item *it;

	t->granularity = 8;
	t->scale = 0.1;
	*c = (struct cell){ .site = 2, .kind = 1, .count = 5, .lo = 1, .hi = 9 };
	mn_set64_add(&c->vals, 7, 3);
	p = mn_vec_push(&c->pairs, sizeof(*p));
	*p = (struct pair){ 16, 2, 1 };
	p = mn_vec_push(&c->pairs, sizeof(*p));
	*p = (struct pair){ -8, 3, 0 };
	it = mn_vec_push(&c->items, sizeof(*it));
	*it = (struct item){ 4, 2 };
	it = mn_vec_push(&c->items, sizeof(*it));
	*it = (struct item){ 1, 10 };
	*d = (struct cell){ .site = 5, .kind = 2, .has_depth = true, .depth = -3, .count = 4,
			    .lo = 2, .hi = 2, .width = 64 };
	mn_set64_add(&d->vals, 1, 3);
	d->vals.capped = true;
	mn_sitevec_get(&t->funcs, 3);
	((struct func *)mn_sitevec_get(&t->funcs, 3))->calls = 11;
	*(int64_t *)mn_vec_push(&t->log, 8) = -1;
	*(int64_t *)mn_vec_push(&t->log, 8) = 2;
	return st;
}

static const char *const WRITTEN =
	"version: 3\n"
	"granularity: 8\n"
	"scale: 0.1\n"
	"flag: false\n"
	"cells:\n"
	"- site: 2\n"
	"  kind: store\n"
	"  depth: null\n"
	"  count: 5\n"
	"  lo: 1\n"
	"  hi: 9\n"
	"  span: 8\n"
	"  half: 2.5\n"
	"  val: 7\n"
	"  capped: false\n"
	"  nvals: 1\n"
	"  pairs: {-8: 3, 16: 2}\n"
	"  errs: {16: 1}\n"
	"  items: [{id: 1, bytes: 10}, {id: 4, bytes: 2}]\n"
	"- site: 5\n"
	"  kind: call\n"
	"  depth: -3\n"
	"  count: 4\n"
	"  lo: 2\n"
	"  hi: 2\n"
	"  span: 0\n"
	"  half: 2.0\n"
	"  width: 64\n"
	"  capped: true\n"
	"  nvals: 3\n"
	"  items: []\n"
	"funcs:\n"
	"- {site: 3, calls: 11}\n"
	"log:\n"
	"- -1\n"
	"- 2\n";

static void expect_text(const char *what, const char *want, void *st)
{
	char *got = mt_emit_text(&T, st, NULL);

	if (strcmp(got, want))
		fail_msg("%s:\n--- want:\n%s--- got:\n%s", what, want, got);
	free(got);
}

static void test_emit_every_type(void **state)
{
	void *st = built();

	expect_text("emit", WRITTEN, st);
	mt_state_free(&T, st);
}

static void test_round_trip(void **state)
{
	void *st = restored(WRITTEN);

	expect_text("emit(restore(text))", WRITTEN, st);
	mt_state_free(&T, st);
}

/* Two runs: sums double, min and max stay, sets unite and cap, tables unite, context adds. */
static void test_merge(void **state)
{
	const char *other =
		"version: 3\ngranularity: 8\nlost: 2\nscale: 0.25\nflag: true\ncells:\n"
		"- {site: 2, kind: load, depth: 4, count: 1, lo: 0, hi: 3, val: 8, capped: false,"
		" pairs: {16: 5, 24: 1}, errs: {24: 1}, items: [{id: 4, bytes: 7}]}\n"
		"- {site: 6, kind: load, depth: null, count: 1, lo: 0, hi: 0, capped: false,"
		" vals: [1, 2], items: []}\n"
		"funcs:\n- {site: 3, calls: 1}\n- {site: 4, calls: 2}\nlog: [5]\n";
	const char *want =
		"version: 3\ngranularity: 8\nlost: 2\nscale: 0.35\nflag: true\ncells:\n"
		"- site: 2\n  kind: store\n  depth: 4\n  count: 6\n  lo: 0\n  hi: 9\n  span: 9\n"
		"  half: 3.0\n  capped: false\n  vals: [7, 8]\n  nvals: 2\n  pairs: {-8: 3, 16: 7, 24: 1}\n"
		"  errs: {16: 1, 24: 1}\n  items: [{id: 1, bytes: 10}, {id: 4, bytes: 7}]\n"
		"- site: 5\n  kind: call\n  depth: -3\n  count: 4\n  lo: 2\n  hi: 2\n  span: 0\n"
		"  half: 2.0\n  width: 64\n  capped: true\n  nvals: 3\n  items: []\n"
		"- site: 6\n  kind: load\n  depth: null\n  count: 1\n  lo: 0\n  hi: 0\n  span: 0\n"
		"  half: 0.5\n  capped: false\n  vals: [1, 2]\n  nvals: 2\n  items: []\n"
		"funcs:\n- {site: 3, calls: 12}\n- {site: 4, calls: 2}\nlog:\n- -1\n- 2\n- 5\n";
	void *a = mt_fold(&T, restored(WRITTEN), restored(other));
	char *t;

	assert_int_equal(merge_rc, 0);
	expect_text("merge", want, a);
	/* Site 2 has 7, 8; three more values and one is too many: capped. */
	mt_fold(&T, a, restored("version: 3\ngranularity: 8\nscale: 0\nflag: false\ncells:\n"
				"- {site: 2, kind: load, depth: null, count: 0, lo: 5, hi: 5, "
				"capped: false, vals: [1, 2, 3], items: []}\nfuncs: []\nlog: []\n"));
	t = mt_emit_text(&T, a, NULL);
	assert_non_null(strstr(t, "  count: 6\n  lo: 0\n  hi: 9\n  span: 9\n  half: 3.0\n"
				  "  capped: true\n  nvals: 3\n  pairs: {-8: 3"));
	free(t);
	mt_state_free(&T, a);
}

/* A worker of the same run (not restored) counted the context rows too: they do not add. */
static void test_merge_context_and_settings(void **state)
{
	void *a = restored(WRITTEN), *w = built();
	char *t;

	mt_fold(&T, a, w);
	t = mt_emit_text(&T, a, NULL);
	assert_non_null(strstr(t, "- {site: 3, calls: 11}\n"));
	free(t);
	w = built();
	((struct top *)w)->granularity = 4;
	((struct top *)w)->restored = true;
	mt_fold(&T, a, w);
	assert_int_equal(merge_rc, -EINVAL);
	mt_state_free(&T, a);
}

static void test_restore_errors(void **state)
{
	static const char *const head = "version: 3\ngranularity: 8\nscale: 0\nflag: false\n";
	static const struct {
		const char *rest, *message;
	} bad[] = {
		{ "cells: []\nfuncs: []\n", ":6:5: missing field 'log'" },
		{ "cells:\n- {site: 2, kind: jump, depth: 1, count: 1, lo: 1, hi: 1, capped: false, "
		  "items: []}\nfuncs: []\nlog: []\n",
		  ":11:23: field 'kind': expected one of load|store|call, found 'jump'" },
		{ "cells:\n- {site: 2, kind: load, depth: x, count: 1, lo: 1, hi: 1, capped: false, "
		  "items: []}\nfuncs: []\nlog: []\n",
		  ":11:36: field 'depth': expected an integer, found 'x'" },
		{ "cells:\n- {site: 2, kind: load, depth: 1, count: -1, lo: 1, hi: 1, capped: false, "
		  "items: []}\nfuncs: []\nlog: []\n",
		  ":11:46: field 'count': expected an unsigned integer, found '-1'" },
		{ "cells:\n- {site: 2, kind: load, depth: 1, count: 1, lo: 1, hi: 1, capped: false, "
		  "vals: [3, 1], items: []}\nfuncs: []\nlog: []\n",
		  ":11:88: field 'vals': not in ascending order, or repeated" },
		{ "cells:\n- {site: 2, kind: load, depth: 1, count: 1, lo: 1, hi: 1, capped: false, "
		  "vals: [1, 2, 3, 4], items: []}\nfuncs: []\nlog: []\n",
		  "field 'vals': more than 3 values" },
		{ "cells:\n- {site: 2, kind: load, depth: 1, count: 1, lo: 1, hi: 1, capped: false, "
		  "pairs: {1: 1, 1: 2}, items: []}\nfuncs: []\nlog: []\n",
		  "field 'pairs': key 1 is listed twice" },
		{ "cells:\n- {site: 2, kind: load, depth: 1, count: 1, lo: 1, hi: 1, capped: false, "
		  "pairs: {1: 1}, errs: {2: 1}, items: []}\nfuncs: []\nlog: []\n",
		  "field 'errs': key 2 is not in 'pairs'" },
		{ "cells:\n- {site: 2, kind: load, depth: 1, count: 1, lo: 1, hi: 4, span: 2, "
		  "capped: false, items: []}\nfuncs: []\nlog: []\n",
		  ":11:69: field 'span': 2, but the row's other fields make it 3" },
		{ "cells:\n- {site: 2, kind: load, depth: 1, count: 1, lo: 5, hi: 4, capped: false, "
		  "items: []}\nfuncs: []\nlog: []\n",
		  ":11:7: lo above hi" },
		{ "cells:\n- {site: 2, kind: load, depth: 1, count: 1, lo: 1, hi: 1, capped: false, "
		  "items: [{id: 1, bytes: 1}, {id: 1, bytes: 2}]}\nfuncs: []\nlog: []\n",
		  "items: two rows with the same key" },
		{ "cells: []\nfuncs:\n- {site: 3, calls: 1}\n- {site: 3, calls: 1}\nlog: []\n",
		  ":13:14: field 'site': site 3 is listed twice" },
		{ "cells: []\nfuncs: {}\nlog: []\n", ":11:12: field 'funcs': expected a sequence" },
		{ "cells: []\nfuncs: [3]\nlog: []\n", "funcs: expected a mapping for each row" },
	};
	char err[512], text[1024];
	void *st;

	snprintf(text, sizeof(text), "version: 4\ngranularity: 8\nscale: 0\nflag: false\n"
		 "cells: []\nfuncs: []\nlog: []\n");
	assert_int_equal(try_restore(text, &st, err, sizeof(err)), -EINVAL);
	if (!strstr(err, ":6:14: field 'version': 4, but this every-type's is 3"))
		fail_msg("got '%s'", err);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", head, bad[i].rest);
		assert_int_equal(try_restore(text, &st, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].message) || strncmp(err, tmpdir, strlen(tmpdir)))
			fail_msg("case %zu: expected '<file>%s', got '%s'", i, bad[i].message, err);
	}
}

/* ---- MN_FT_MAP: a nested struct, and members of the row itself, as one mapping each ---------- */

struct nest {
	uint64_t events, objects, peak;     /* objects and peak written under `heap:` */
	struct { uint64_t nomem, frees; } lost;
};
static const struct mn_field heap_fields[] = {
	MN_FIELD("objects", MN_FT_U64, F(struct nest, objects), MN_R_SUM),
	MN_FIELD("peak", MN_FT_U64, F(struct nest, peak), MN_R_MAX),
};
static const struct mn_schema heap = MN_SCHEMA("heap", struct nest, heap_fields, .flow = true);
static const struct mn_field lost_fields[] = {
	MN_FIELD("nomem", MN_FT_U64, F(struct nest, lost.nomem) - F(struct nest, lost), MN_R_SUM),
	MN_FIELD("frees", MN_FT_U64, F(struct nest, lost.frees) - F(struct nest, lost), MN_R_SUM),
};
static const struct mn_schema lost = MN_SCHEMA("lost", struct nest, lost_fields);
static const struct mn_field nest_fields[] = {
	MN_FIELD("events", MN_FT_U64, F(struct nest, events), MN_R_SUM),
	MN_FIELD("heap", MN_FT_MAP, 0, MN_R_UNION, .sub = &heap),
	MN_FIELD("lost", MN_FT_MAP, F(struct nest, lost), MN_R_UNION, .sub = &lost),
};
static const struct mn_schema nest = MN_SCHEMA("nest", struct nest, nest_fields);

static int n_emit(void *st, struct mn_prof *p) { return mn_schema_emit(&nest, st, p); }
static void n_merge(void *into, void *from) { merge_rc = mn_schema_merge(&nest, into, from, 1); }
static int n_init(void *st, const struct mn_run *run) { return 0; }
static void n_fini(void *st) { mn_schema_release(&nest, st); }
static int n_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		     char *err, size_t errlen)
{
	return mn_schema_restore(&nest, st, prof, sec, err, errlen);
}

static const struct mn_module N = {
	.name = "nest", .state_size = sizeof(struct nest), .init = n_init, .fini = n_fini, .merge = n_merge,
	.emit = n_emit, .restore = n_restore,
};

static int n_try(const char *section, void **stp, char *err, size_t errlen)
{
	char path[256];
	struct mn_profile *prof;
	int e;

	snprintf(path, sizeof(path), "%s/n%d.yaml", tmpdir, nfile++);
	mt_write_profile(path, MT_HEAD, N.name, section);
	prof = mt_open(path, N.name);
	e = mt_try_restore(&N, NULL, prof, stp, err, errlen);
	mn_profile_close(prof);
	return e;
}

/* Written, restored, merged (sum and max inside), and a mapping wanted. */
static void test_nested_map(void **state)
{
	static const char *const text =
		"events: 4\nheap: {objects: 2, peak: 7}\nlost:\n  nomem: 1\n  frees: 0\n";
	static const char *const twice =
		"events: 8\nheap: {objects: 4, peak: 7}\nlost:\n  nomem: 2\n  frees: 0\n";
	char err[512], *got;
	void *a, *b;

	assert_int_equal(n_try(text, &a, err, sizeof(err)), 0);
	got = mt_emit_text(&N, a, NULL);
	assert_string_equal(got, text);
	free(got);
	assert_int_equal(n_try(text, &b, err, sizeof(err)), 0);
	a = mt_fold(&N, a, b);
	assert_int_equal(merge_rc, 0);
	got = mt_emit_text(&N, a, NULL);
	assert_string_equal(got, twice);
	free(got);
	mt_state_free(&N, a);
	assert_int_equal(n_try("events: 1\nheap: [1]\nlost: {nomem: 0, frees: 0}\n", &a, err,
			       sizeof(err)), -EINVAL);
	if (!strstr(err, "field 'heap': expected a mapping"))
		fail_msg("got '%s'", err);
	assert_int_equal(n_try("events: 1\nheap: {objects: 1, peak: 1}\nlost: {nomem: 0}\n", &a,
			       err, sizeof(err)), -EINVAL);
	if (!strstr(err, "missing field 'frees'"))
		fail_msg("got '%s'", err);
}

/* ---- MN_FT_CHOICE: a module setting's choice, an unsigned ------------------------------------ */

struct chosen {
	unsigned mode;                      /* as MN_OPT_CHOICE writes it */
	uint64_t n;
};
static const struct mn_field chosen_fields[] = {
	MN_FIELD("mode", MN_FT_CHOICE, F(struct chosen, mode), MN_R_SAME,
		 .choices = "fast|slow|exact"),
	MN_FIELD("count", MN_FT_U64, F(struct chosen, n), MN_R_SUM),
};
static const struct mn_schema chosen = MN_SCHEMA("chosen", struct chosen, chosen_fields);

static int c_emit(void *st, struct mn_prof *p) { return mn_schema_emit(&chosen, st, p); }
static int c_init(void *st, const struct mn_run *run) { (void)st, (void)run; return 0; }
static void c_fini(void *st) { mn_schema_release(&chosen, st); }
static void c_merge(void *into, void *from)
{
	merge_rc = mn_schema_merge(&chosen, into, from, 1);
}
static int c_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		     char *err, size_t errlen)
{
	return mn_schema_restore(&chosen, st, prof, sec, err, errlen);
}

static const struct mn_module C = {
	.name = "chosen", .state_size = sizeof(struct chosen), .init = c_init, .fini = c_fini,
	.merge = c_merge, .emit = c_emit, .restore = c_restore,
};

static int c_try(const char *section, void **stp, char *err, size_t errlen)
{
	char path[256];
	struct mn_profile *prof;
	int e;

	snprintf(path, sizeof(path), "%s/c%d.yaml", tmpdir, nfile++);
	mt_write_profile(path, MT_HEAD, C.name, section);
	prof = mt_open(path, C.name);
	e = mt_try_restore(&C, NULL, prof, stp, err, errlen);
	mn_profile_close(prof);
	return e;
}

/* The choice is read into all of an unsigned, written back by name; merge wants the same. */
static void test_choice(void **state)
{
	static const char *const text = "mode: exact\ncount: 3\n";
	char err[512], *got;
	void *a, *b;

	assert_int_equal(c_try(text, &a, err, sizeof(err)), 0);
	assert_int_equal(((struct chosen *)a)->mode, 2);
	got = mt_emit_text(&C, a, NULL);
	assert_string_equal(got, text);
	free(got);
	assert_int_equal(c_try("mode: slow\ncount: 1\n", &b, err, sizeof(err)), 0);
	a = mt_fold(&C, a, b);
	assert_int_equal(merge_rc, -EINVAL);
	mt_state_free(&C, a);
	assert_int_equal(c_try("mode: quick\ncount: 1\n", &a, err, sizeof(err)), -EINVAL);
	if (!strstr(err, "field 'mode': expected one of fast|slow|exact, found 'quick'"))
		fail_msg("got '%s'", err);
}

/* ---- MN_FT_ROWMAP and MN_FT_CTX: a row map keyed by sites and a context, hidden state ------- */

struct rkey {
	uint32_t a, b, ctx, pad;
	uint64_t zero[2];
};
struct rview {                   /* a row of the map as the schema sees it */
	struct rkey k;
	struct mn_row r;
};
struct rtop {
	struct mn_ctx *ctx;
	struct mn_rows rows;
	uint64_t marks;          /* hidden: each restore sets it to 5, merge adds */
	uint32_t hide;           /* rows of this a are not written (a skip that reads the top) */
	bool restored;
};

static bool has_b(const struct mn_field *f, const void *row)
{
	return ((const struct rview *)row)->k.b != 0;
}

static bool r_skip(const void *row)
{
	return ((const struct rview *)row)->k.a == ((const struct rtop *)mn_schema_top())->hide;
}

#define RK(m) offsetof(struct rview, k.m)
static const struct mn_field rrow_fields[] = {
	MN_FIELD("a", MN_FT_SITE, RK(a), MN_R_KEY),
	MN_FIELD("b", MN_FT_U32, RK(b), MN_R_KEY),
	MN_FIELD("count", MN_FT_U64, MN_ROWMAP_ROW(count), MN_R_SUM),
	MN_FIELD("min", MN_FT_U64, MN_ROWMAP_ROW(min), MN_R_MIN, .when = has_b,
		 .flags = MN_FF_REQUIRED),
	MN_FIELD("max", MN_FT_U64, MN_ROWMAP_ROW(max), MN_R_MAX, .when = has_b,
		 .flags = MN_FF_REQUIRED),
	MN_FIELD("ctx", MN_FT_CTX, RK(ctx), MN_R_KEY, .arg = offsetof(struct rtop, ctx)),
};
static const struct mn_schema rrows = MN_ROWMAP_SCHEMA("rows", rrow_fields, .flow = true,
						       .skip = r_skip,
						       .by = (const char *const[]){ "ctx", NULL });
_Static_assert(sizeof(struct rview) == MN_ROWS_KEY_WORDS * 8 + sizeof(struct mn_row), "a view");
static const struct mn_field rtop_fields[] = {
	MN_FIELD("granularity", MN_FT_U64, MN_NO_OFFSET, MN_R_CONST, .arg = 8),
	MN_FIELD("rows", MN_FT_ROWMAP, offsetof(struct rtop, rows), MN_R_UNION, .sub = &rrows),
	MN_FIELD("", MN_FT_U64, offsetof(struct rtop, marks), MN_R_SUM, .flags = MN_FF_HIDDEN,
		 .arg = 5),
};
static const struct mn_schema rtop = MN_SCHEMA("rowmap", struct rtop, rtop_fields);

static int r_emit(void *st, struct mn_prof *p) { return mn_schema_emit(&rtop, st, p); }
static int r_init(void *st, const struct mn_run *run)
{
	return mn_ctx_create(&((struct rtop *)st)->ctx, 3);   /* contexts of 3 frames at most */
}
static void r_fini(void *st)
{
	mn_schema_release(&rtop, st);
	mn_ctx_destroy(((struct rtop *)st)->ctx);
}
static void r_merge(void *into, void *from)
{
	merge_rc = mn_schema_merge(&rtop, into, from, ((struct rtop *)from)->restored);
}
static int r_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		     char *err, size_t errlen)
{
	((struct rtop *)st)->restored = true;
	return mn_schema_restore(&rtop, st, prof, sec, err, errlen);
}

static const struct mn_module R = {
	.name = "rowmap", .state_size = sizeof(struct rtop), .init = r_init, .fini = r_fini,
	.merge = r_merge, .emit = r_emit, .restore = r_restore,
};

static int r_try(const char *section, void **stp, char *err, size_t errlen)
{
	char path[256];
	struct mn_profile *prof;
	int e;

	snprintf(path, sizeof(path), "%s/r%d.yaml", tmpdir, nfile++);
	mt_write_profile(path, MT_HEAD, R.name, section);
	prof = mt_open(path, R.name);
	e = mt_try_restore(&R, NULL, prof, stp, err, errlen);
	mn_profile_close(prof);
	return e;
}

static void r_expect(const char *what, const char *want, void *st)
{
	char *got = mt_emit_text(&R, st, NULL);

	if (strcmp(got, want))
		fail_msg("%s:\n--- want:\n%s--- got:\n%s", what, want, got);
	free(got);
}

/* A row counted by hand, as a handler would. */
static void r_count(struct rtop *t, uint32_t a, uint32_t b, uint32_t ctx, uint64_t n,
		    uint64_t v)
{
	struct rkey k = { .a = a, .b = b, .ctx = ctx };
	struct mn_row *e = mn_rows_get(&t->rows, (const uint64_t *)&k);

	assert_non_null(e);
	e->count += n;
	e->min = v < e->min ? v : e->min;
	e->max = v > e->max ? v : e->max;
}

static const char *const RTEXT =
	"granularity: 8\nrows:\n"
	"- {a: 2, b: 4, count: 3, min: 1, max: 7, ctx: []}\n"
	"- {a: 1, b: 0, count: 1, ctx: [2]}\n"
	"- {a: 1, b: 0, count: 2, ctx: [3, 1]}\n";

/* Rows ordered by their contexts' sites, not by the ids a run gave them ([3, 1] came first). */
static void test_rowmap_emit(void **state)
{
	struct rtop *t = mt_state_new(&R, NULL);
	uint32_t c31 = mn_ctx_intern(t->ctx, mn_ctx_intern(t->ctx, 0, 3), 1);
	uint32_t c2 = mn_ctx_intern(t->ctx, 0, 2);
	char err[512];
	void *back;

	r_count(t, 1, 0, c31, 2, 0);
	r_count(t, 1, 0, c2, 1, 0);
	r_count(t, 2, 4, 0, 2, 1);
	r_count(t, 2, 4, 0, 1, 7);
	r_expect("emit", RTEXT, t);
	t->hide = 2;
	r_expect("skip", "granularity: 8\nrows:\n- {a: 1, b: 0, count: 1, ctx: [2]}\n"
		 "- {a: 1, b: 0, count: 2, ctx: [3, 1]}\n", t);
	mt_state_free(&R, t);
	assert_int_equal(r_try(RTEXT, &back, err, sizeof(err)), 0);
	r_expect("emit(restore(text))", RTEXT, back);
	assert_int_equal(((struct rtop *)back)->marks, 5);
	mt_state_free(&R, back);
}

/* A key given twice adds; runs fold by key, their context ids translated; hidden state adds. */
static void test_rowmap_merge(void **state)
{
	static const char *const other =
		"granularity: 8\nrows:\n"
		"- {a: 1, b: 0, count: 4, ctx: [3, 1]}\n"
		"- {a: 2, b: 4, count: 1, min: 9, max: 9, ctx: []}\n"
		"- {a: 2, b: 4, count: 1, min: 0, max: 2, ctx: []}\n"
		"- {a: 1, b: 0, count: 1, min: 6, ctx: [3]}\n";
	void *a = NULL, *b = NULL;
	char err[512];

	assert_int_equal(r_try(RTEXT, &a, err, sizeof(err)), 0);
	assert_int_equal(r_try(other, &b, err, sizeof(err)), 0);
	a = mt_fold(&R, a, b);
	assert_int_equal(merge_rc, 0);
	r_expect("merge", "granularity: 8\nrows:\n"
		 "- {a: 2, b: 4, count: 5, min: 0, max: 9, ctx: []}\n"
		 "- {a: 1, b: 0, count: 1, ctx: [2]}\n"
		 "- {a: 1, b: 0, count: 1, ctx: [3]}\n"
		 "- {a: 1, b: 0, count: 6, ctx: [3, 1]}\n", a);
	assert_int_equal(((struct rtop *)a)->marks, 10);
	mt_state_free(&R, a);
}

static void test_rowmap_errors(void **state)
{
	static const struct {
		const char *text, *message;
	} bad[] = {
		{ "granularity: 9\nrows: []\n",
		  "field 'granularity': 9, but this rowmap's is 8" },
		{ "rows: []\n", "missing field 'granularity'" },
		{ "granularity: 8\nrows: {}\n", "field 'rows': expected a sequence" },
		{ "granularity: 8\nrows: [1]\n", "rows: expected a mapping for each row" },
		{ "granularity: 8\nrows:\n- {a: 1, b: 2, count: 1, max: 3, ctx: []}\n",
		  "missing field 'min'" },
		{ "granularity: 8\nrows:\n- {a: 1, b: 0, count: 1}\n", "missing field 'ctx'" },
		{ "granularity: 8\nrows:\n- {a: 1, b: 0, count: 1, ctx: [1, 2, 3, 4]}\n",
		  "field 'ctx': more than 3 frames" },
		{ "granularity: 8\nrows:\n- {a: 1, b: 0, count: 1, ctx: [1, 0]}\n",
		  "field 'ctx': expected a site id" },
		{ "granularity: 8\nrows:\n- {a: 1, b: 0, count: 1, ctx: 3}\n",
		  "field 'ctx': expected a sequence" },
	};
	char err[512];
	void *st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(r_try(bad[i].text, &st, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].message) || strncmp(err, tmpdir, strlen(tmpdir)))
			fail_msg("case %zu: expected '<file>%s', got '%s'", i, bad[i].message, err);
	}
}

/* ---- MN_FF_IDS and MN_FF_PRESENT: a table's marked rows as a list of ids, when it is on ----- */

struct isite {
	uint64_t n;
	bool picked;
};
struct itop {
	bool picking;            /* `picked:` is written, and was there */
	struct mn_sitevec sites;
};

static const struct mn_field pick_fields[] = {
	MN_FIELD("", MN_FT_BOOL, offsetof(struct isite, picked), MN_R_MAX, .flags = MN_FF_HIDDEN,
		 .arg = 1),
};
static const struct mn_schema picks = MN_SCHEMA("picked", struct isite, pick_fields);
static const struct mn_field isite_fields[] = {
	MN_FIELD("site", MN_FT_SITE, MN_NO_OFFSET, MN_R_KEY, .flags = MN_FF_NONZERO),
	MN_FIELD("count", MN_FT_U64, offsetof(struct isite, n), MN_R_SUM),
	MN_FIELD("", MN_FT_BOOL, offsetof(struct isite, picked), MN_R_MAX, .flags = MN_FF_HIDDEN),
};
static const struct mn_schema isites = MN_SCHEMA("sites", struct isite, isite_fields,
						 .flow = true);
static const struct mn_field itop_fields[] = {
	MN_FIELD("picked", MN_FT_SITES, offsetof(struct itop, sites), MN_R_NONE, .sub = &picks,
		 .flags = MN_FF_IDS | MN_FF_VIEW | MN_FF_PRESENT,
		 .aux = offsetof(struct itop, picking)),
	MN_FIELD("sites", MN_FT_SITES, offsetof(struct itop, sites), MN_R_UNION, .sub = &isites),
};
static const struct mn_schema itop = MN_SCHEMA("ids", struct itop, itop_fields);

static int i_emit(void *st, struct mn_prof *p) { return mn_schema_emit(&itop, st, p); }
static int i_init(void *st, const struct mn_run *run)
{
	return mn_sitevec_init(&((struct itop *)st)->sites, sizeof(struct isite), 4);
}
static void i_fini(void *st) { mn_schema_release(&itop, st); }
static void i_merge(void *into, void *from) { merge_rc = mn_schema_merge(&itop, into, from, 1); }
static int i_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		     char *err, size_t errlen)
{
	return mn_schema_restore(&itop, st, prof, sec, err, errlen);
}

static const struct mn_module I = {
	.name = "ids", .state_size = sizeof(struct itop), .init = i_init, .fini = i_fini,
	.merge = i_merge, .emit = i_emit, .restore = i_restore,
};

static int i_try(const char *section, void **stp, char *err, size_t errlen)
{
	char path[256];
	struct mn_profile *prof;
	int e;

	snprintf(path, sizeof(path), "%s/i%d.yaml", tmpdir, nfile++);
	mt_write_profile(path, MT_HEAD, I.name, section);
	prof = mt_open(path, I.name);
	e = mt_try_restore(&I, NULL, prof, stp, err, errlen);
	mn_profile_close(prof);
	return e;
}

/* Written back as read; absent, the list stays off; picked rows merge as marks. */
static void test_ids_present(void **state)
{
	static const char *const text = "picked: [2, 5]\nsites:\n- {site: 2, count: 1}\n"
					"- {site: 3, count: 4}\n- {site: 5, count: 0}\n";
	static const char *const plain = "sites:\n- {site: 3, count: 1}\n- {site: 4, count: 2}\n";
	char err[512], *got;
	void *a, *b;

	assert_int_equal(i_try(text, &a, err, sizeof(err)), 0);
	assert_true(((struct itop *)a)->picking);
	got = mt_emit_text(&I, a, NULL);
	assert_string_equal(got, text);
	free(got);
	assert_int_equal(i_try(plain, &b, err, sizeof(err)), 0);
	assert_false(((struct itop *)b)->picking);
	got = mt_emit_text(&I, b, NULL);
	assert_string_equal(got, plain);
	free(got);
	a = mt_fold(&I, a, b);
	got = mt_emit_text(&I, a, NULL);
	assert_string_equal(got, "picked: [2, 5]\nsites:\n- {site: 2, count: 1}\n- {site: 3, count: 5}\n"
			    "- {site: 4, count: 2}\n- {site: 5, count: 0}\n");
	free(got);
	mt_state_free(&I, a);
	assert_int_equal(i_try("picked: [3, 0]\nsites: []\n", &a, err, sizeof(err)), -EINVAL);
	if (!strstr(err, "field 'picked': expected a site id") ||
	    strncmp(err, tmpdir, strlen(tmpdir)))
		fail_msg("got '%s'", err);
	assert_int_equal(i_try("sites:\n- {site: 0, count: 1}\n", &a, err, sizeof(err)), -EINVAL);
	if (!strstr(err, "field 'site': expected a site id, not 0"))
		fail_msg("got '%s'", err);
	assert_int_equal(i_try("picked: {}\nsites: []\n", &a, err, sizeof(err)), -EINVAL);
	if (!strstr(err, "field 'picked': expected a sequence"))
		fail_msg("got '%s'", err);
}

/* ---- A site table with .choices: every site of a kind in the run's table, met or not --------- */

struct ksite {
	uint64_t n;
	bool listed;             /* a mark: restore() sets it, and so does emit for loop sites */
};
struct ktop {
	const struct mn_run *run;
	struct mn_sitevec sites;
};

static bool unlisted(const void *row)
{
	return !((const struct ksite *)row)->listed;
}

static const struct mn_field ksite_fields[] = {
	MN_FIELD("site", MN_FT_SITE, MN_NO_OFFSET, MN_R_KEY),
	MN_FIELD("count", MN_FT_U64, offsetof(struct ksite, n), MN_R_SUM),
	MN_FIELD("", MN_FT_BOOL, offsetof(struct ksite, listed), MN_R_MAX, .flags = MN_FF_HIDDEN,
		 .arg = 1),
};
static const struct mn_schema ksites = MN_SCHEMA("loops", struct ksite, ksite_fields,
						 .flow = true, .skip = unlisted);
static const struct mn_field ktop_fields[] = {
	MN_FIELD("loops", MN_FT_SITES, offsetof(struct ktop, sites), MN_R_UNION, .sub = &ksites,
		 .choices = "loop", .arg = offsetof(struct ktop, run)),
};
static const struct mn_schema ktop = MN_SCHEMA("kinds", struct ktop, ktop_fields);

static int k_emit(void *st, struct mn_prof *p) { return mn_schema_emit(&ktop, st, p); }
static int k_init(void *st, const struct mn_run *run)
{
	((struct ktop *)st)->run = run;
	return mn_sitevec_init(&((struct ktop *)st)->sites, sizeof(struct ksite), 4);
}
static void k_fini(void *st) { mn_schema_release(&ktop, st); }

static const struct mn_module K = {
	.name = "kinds", .state_size = sizeof(struct ktop), .init = k_init, .fini = k_fini,
	.emit = k_emit,
};

/* Loop sites 2 and 3 written though only 3 was met; the load's row (1) and site 5, met but not
 * a loop nor restored, are not. */
static void test_sites_of_kind(void **state)
{
	static const struct mn_site s1 = { 1, "load", "f", "a.c", 1, 1, "", 0, 0, "", "" },
				    s2 = { 2, "loop", "f", "a.c", 2, 1, "", 0, 0, "", "" },
				    s3 = { 3, "loop", "f", "a.c", 3, 1, "", 0, 0, "", "" },
				    s4 = { 4, "function", "f", "a.c", 4, 1, "", 0, 0, "", "" };
	const struct mn_site *rows[] = { &s1, &s2, &s3, &s4 };
	struct mn_run *run;
	struct ktop *t;
	char why[256], *got;

	assert_int_equal(mn_run_from_sites(&run, rows, 4, 4, why, sizeof(why)), 0);
	t = mt_state_new(&K, run);
	((struct ksite *)mn_sitevec_get(&t->sites, 1))->n = 1;
	((struct ksite *)mn_sitevec_get(&t->sites, 3))->n = 5;
	((struct ksite *)mn_sitevec_get(&t->sites, 5))->n = 2;
	got = mt_emit_text(&K, t, NULL);
	assert_string_equal(got, "loops:\n- {site: 2, count: 0}\n- {site: 3, count: 5}\n");
	free(got);
	assert_false(((struct ksite *)mn_sitevec_find(&t->sites, 3))->listed);   /* emit reads */
	assert_null(mn_sitevec_find(&t->sites, 2));
	mt_state_free(&K, t);
	mn_run_destroy(run);
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emit_every_type),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_context_and_settings),
		cmocka_unit_test(test_restore_errors),
		cmocka_unit_test(test_nested_map),
		cmocka_unit_test(test_choice),
		cmocka_unit_test(test_rowmap_emit),
		cmocka_unit_test(test_rowmap_merge),
		cmocka_unit_test(test_rowmap_errors),
		cmocka_unit_test(test_ids_present),
		cmocka_unit_test(test_sites_of_kind),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
