/*
 * rds-shape's restore() and merge() (modules/rds-shape/README.md, Merging), driven as `mnemo
 * merge` drives them: per profile a state from init() and restore(), folded with merge() in input
 * order, written by emit().  On real profiles of programs built with mnemo-cc -m rds-shape and run
 * with mnemo run:
 *
 * - emit(restore(p)) is p's section byte for byte, for every known-answer program (and a listing
 *   cut at 1000 rows), and so for merged sections;
 * - merge is commutative and associative byte for byte on three runs of programs/union.c with
 *   different inputs, whether the inner merge is a state or a merged profile read back, and on
 *   copies of a run whose listing is cut at 1000 rows (ties at the cut);
 * - the merged counts are the sums of the runs' (peak_live the largest), and the merged types are
 *   the cyclic SCCs of the union of the runs' static shape graphs, computed here from the merged
 *   edges: union.c's list input makes type {a}, its tree input type {b}, the union type {a, b}
 *   (known by construction);
 * - the graph's edges merge with their pointer fields united and forward and backward stores
 *   added, and a section written before those keys existed reads as none known;
 * - a section that does not follow the schema is refused with its file, line and field;
 * - `mnemo merge` writes the same section as this test's own folding;
 * - a state fresh from events emits the same twice, and merges as its profile restored does.
 */
#define _GNU_SOURCE
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
#include <unistd.h>

#include <cmocka.h>

#include "module.h"
#include "profile.h"
#include "modtest.h"
#include "shell.h"

extern const struct mn_module mn_module_rds_shape;
#define RDS (&mn_module_rds_shape)

static char work[] = "/tmp/mnemo-rds-merge.XXXXXX";
static const char *prog;   /* the program under test: build() sets it */
static unsigned nfiles;    /* files made in work/, for unique names */

/* ---- Programs and profiles ------------------------------------------------------------------- */

/* Builds programs/<name>.c with mnemo-cc -m rds-shape into the work directory. */
static void build(const char *name)
{
	prog = name;
	assert_int_equal(shell("%s/mnemo-cc -m rds-shape -O1 -g %s/%s.c -o %s/%s", BINDIR,
			       PROGRAMS_DIR, name, work, name), 0);
}

/* Runs work/<prog> with args under mnemo run; returns the profile's path (malloc'd). */
static char *run(const char *args)
{
	char *path, err[4096], errpath[600];

	if (asprintf(&path, "%s/p%u.yaml", work, nfiles++) < 0)
		fail_msg("no memory");
	if (shell("cd %s && %s/mnemo run --reproducible -o %s -- ./%s %s >/dev/null 2>%s.err",
		  work, BINDIR, path, prog, args, path)) {
		snprintf(errpath, sizeof(errpath), "%s.err", path);
		slurp(errpath, err, sizeof(err));
		fail_msg("%s %s: mnemo run failed: %s", prog, args, err);
	}
	return path;
}

/* The rds-shape section of the profile at path, as emit() writes it (malloc'd). */
static char *section_text(const char *path)
{
	return mt_section_text(path, RDS->name);
}

/* Writes section text as the only section of a minimal profile; returns its path (malloc'd). */
static char *wrap(const char *section)
{
	char *path;

	if (asprintf(&path, "%s/m%u.yaml", work, nfiles++) < 0)
		fail_msg("no memory");
	mt_write_profile(path, MT_HEAD, RDS->name, section);
	return path;
}

/* The profiles at paths[order[0]], ... restored and folded in that order, emitted. */
static char *merged(char *const *paths, const unsigned *order, unsigned n)
{
	void *into = mt_restored_path(RDS, NULL, paths[order[0]]);
	char *text;

	for (unsigned i = 1; i < n; i++)
		mt_fold(RDS, into, mt_restored_path(RDS, NULL, paths[order[i]]));
	text = mt_emit_text(RDS, into, NULL);
	mt_state_free(RDS, into);
	return text;
}

static char *merged2(const char *a, const char *b)
{
	char *paths[] = { (char *)a, (char *)b };
	static const unsigned order[] = { 0, 1 };

	return merged(paths, order, 2);
}

/* emit(restore(path)) must be the section of path, also emitted twice from one state. */
static void expect_round_trip(const char *path)
{
	char *want = section_text(path), *got, *again;
	void *st = mt_restored_path(RDS, NULL, path);

	got = mt_emit_text(RDS, st, NULL);
	again = mt_emit_text(RDS, st, NULL);
	mt_state_free(RDS, st);
	if (strcmp(got, want)) {
		print_message("--- p\n%s--- emit(restore(p))\n%s", want, got);
		fail_msg("%s: emit(restore(p)) differs from p (above)", path);
	}
	assert_string_equal(again, got);
	free(want);
	free(got);
	free(again);
}

/* ---- Reading sections ------------------------------------------------------------------------ */

static const struct mn_pnode *sec(const struct mn_profile *p, const char *key)
{
	const struct mn_pnode *n = mn_pnode_get(mn_profile_module(p, "rds-shape"), key);

	if (!n)
		fail_msg("no '%s' in the section", key);
	return n;
}

static uint64_t u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_u64(mn_pnode_get(n, key), &v))
		fail_msg("line %u: expected an integer '%s'", mn_pnode_line(n), key);
	return v;
}

/* The stores of edge src -> dst of the static shape graph; 0 when it has none. */
static uint64_t edge_stores(const struct mn_profile *p, uint64_t src, uint64_t dst)
{
	const struct mn_pnode *g = sec(p, "static_shape_graph");

	for (size_t i = 0; i < mn_pnode_len(g); i++)
		if (u64(mn_pnode_at(g, i), "src_site") == src &&
		    u64(mn_pnode_at(g, i), "dst_site") == dst)
			return u64(mn_pnode_at(g, i), "stores");
	return 0;
}

/* The row of edge src -> dst of the static shape graph; NULL when there is none. */
static const struct mn_pnode *edge_row(const struct mn_profile *p, uint64_t src, uint64_t dst)
{
	const struct mn_pnode *g = sec(p, "static_shape_graph");

	for (size_t i = 0; i < mn_pnode_len(g); i++)
		if (u64(mn_pnode_at(g, i), "src_site") == src &&
		    u64(mn_pnode_at(g, i), "dst_site") == dst)
			return mn_pnode_at(g, i);
	return NULL;
}

/* An edge row's `fields` as a mask (bit k: offset 8k); they must be increasing multiples of 8. */
static uint64_t fields_mask(const struct mn_pnode *e)
{
	const struct mn_pnode *f = mn_pnode_get(e, "fields");
	uint64_t m = 0, v, last = 0;

	assert_non_null(f);
	for (size_t k = 0; k < mn_pnode_len(f); k++) {
		assert_int_equal(mn_pnode_u64(mn_pnode_at(f, k), &v), 0);
		assert_true(v % 8 == 0 && v < 512 && (!k || v > last));
		m |= UINT64_C(1) << (v / 8);
		last = v;
	}
	return m;
}

/* The site of the allocation on the line marked `mark` of programs/<prog>.c, in profile p. */
static uint64_t site_at(const struct mn_profile *p, const char *mark)
{
	int line = marked_line(PROGRAMS_DIR, prog, mark);

	for (size_t i = 0; i < mn_profile_site_count(p); i++) {
		const struct mn_site *s = mn_profile_site_at(p, i);

		if (!strcmp(s->kind, "alloc") && (int)s->line == line)
			return s->id;
	}
	fail_msg("%s: no allocation site on the line marked %s", prog, mark);
	return 0;
}

/* The sites of each type of p as a bitmask over sites[0..n) ("a" = bit 0, ...), by type. */
static size_t type_masks(const struct mn_profile *p, const uint64_t *sites, size_t n,
			 unsigned *mask, size_t max)
{
	const struct mn_pnode *t = sec(p, "types");

	assert_true(mn_pnode_len(t) <= max);
	for (size_t i = 0; i < mn_pnode_len(t); i++) {
		const struct mn_pnode *s = mn_pnode_get(mn_pnode_at(t, i), "sites");

		mask[i] = 0;
		for (size_t k = 0; k < mn_pnode_len(s); k++) {
			uint64_t id;
			size_t j = 0;

			assert_int_equal(mn_pnode_u64(mn_pnode_at(s, k), &id), 0);
			while (j < n && sites[j] != id)
				j++;
			if (j == n)
				fail_msg("type %zu: site %lu is none of the program's", i + 1,
					 (unsigned long)id);
			mask[i] |= 1u << j;
		}
	}
	return mn_pnode_len(t);
}

/*
 * The cyclic SCCs of the graph in p's static_shape_graph, computed here from scratch (transitive
 * closure): as bitmasks over sites[0..n), by smallest member.  The module's types must be these.
 */
static size_t union_sccs(const struct mn_profile *p, const uint64_t *sites, size_t n,
			 unsigned *mask)
{
	const struct mn_pnode *g = sec(p, "static_shape_graph");
	bool reach[8][8] = { { false } };
	unsigned done = 0;
	size_t k = 0;

	assert_true(n <= 8);
	for (size_t i = 0; i < mn_pnode_len(g); i++) {
		uint64_t s = u64(mn_pnode_at(g, i), "src_site"), d = u64(mn_pnode_at(g, i),
									 "dst_site");
		size_t a = 0, b = 0;

		while (a < n && sites[a] != s)
			a++;
		while (b < n && sites[b] != d)
			b++;
		if (a < n && b < n)
			reach[a][b] = true;
	}
	for (size_t m = 0; m < n; m++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++)
				reach[i][j] |= reach[i][m] && reach[m][j];
	for (size_t i = 0; i < n; i++) {
		unsigned c = 0;

		if (done >> i & 1 || !reach[i][i])   /* on no cycle: in no type */
			continue;
		for (size_t j = 0; j < n; j++)
			if (reach[i][j] && reach[j][i])
				c |= 1u << j;
		done |= c;
		mask[k++] = c;
	}
	return k;
}

/* ---- Tests ----------------------------------------------------------------------------------- */

/* emit(restore(p)) == p on every known-answer program of test_known.c, and on a run whose listing
 * is cut at 1000 rows (1200 short lists). */
static void test_round_trip(void **state)
{
	static const struct {
		const char *name, *args;
	} runs[] = {
		{ "fig2", "" }, { "list_stable", "100 50" }, { "list_insert", "4" },
		{ "short_lists", "50" }, { "short_lists", "1200" }, { "two_types", "" },
		{ "trees", "" }, { "dlist", "64" }, { "graph", "10" }, { "union", "list 10" },
		{ "union", "tree 4" },
	};

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char *path;

		if (!prog || strcmp(prog, runs[i].name))
			build(runs[i].name);
		path = run(runs[i].args);
		expect_round_trip(path);
		if (!strcmp(runs[i].args, "1200")) {
			struct mn_profile *p = mt_open(path, NULL);

			/* the cut happened: 1200 instances, 1000 listed */
			assert_int_equal(u64(sec(p, "summary"), "instances"), 1200);
			assert_int_equal(u64(mn_profile_module(p, "rds-shape"), "instances_listed"),
					 1000);
			mn_profile_close(p);
		}
		free(path);
	}
}

static char *paths[3];   /* union.c: list 10, tree 3, list 25 (5 walks) */

static void union_runs(void)
{
	if (paths[0])
		return;
	build("union");
	paths[0] = run("list 10");
	paths[1] = run("tree 3");
	paths[2] = run("list 25 5");
}

/* Every order of the three runs folds to the same bytes; so does every grouping, the inner merge
 * written as a profile and read back (as `mnemo merge` of merged profiles does); merging one
 * profile gives it back; a merged profile round-trips. */
static void test_laws(void **state)
{
	static const unsigned perm[6][3] = {
		{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
	};
	char *all, *pq, *qr, *pr, *left, *right, *mid, *t;

	union_runs();
	all = merged(paths, perm[0], 3);
	for (int i = 1; i < 6; i++) {
		t = merged(paths, perm[i], 3);
		if (strcmp(t, all)) {
			print_message("--- 0 1 2\n%s--- %u %u %u\n%s", all, perm[i][0], perm[i][1],
				      perm[i][2], t);
			fail_msg("fold order %u %u %u differs from 0 1 2 (above)", perm[i][0],
				 perm[i][1], perm[i][2]);
		}
		free(t);
	}
	/* commutative on two */
	t = merged2(paths[1], paths[0]);
	pq = merged2(paths[0], paths[1]);
	assert_string_equal(t, pq);
	free(t);
	/* associative through profiles: (p q) r == p (q r) == (p r) q == p q r */
	qr = merged2(paths[1], paths[2]);
	pr = merged2(paths[0], paths[2]);
	{
		char *wpq = wrap(pq), *wqr = wrap(qr), *wpr = wrap(pr);

		left = merged2(wpq, paths[2]);
		right = merged2(paths[0], wqr);
		mid = merged2(wpr, paths[1]);
		assert_string_equal(left, all);
		assert_string_equal(right, all);
		assert_string_equal(mid, all);
		/* merged profiles round-trip too (rows with run_events) */
		expect_round_trip(wpq);
		t = wrap(all);
		expect_round_trip(t);
		free(t);
		free(wpq);
		free(wqr);
		free(wpr);
	}
	/* merge(p) == p */
	for (int i = 0; i < 3; i++)
		expect_round_trip(paths[i]);
	free(all);
	free(pq);
	free(qr);
	free(pr);
	free(left);
	free(right);
	free(mid);
}

/* merge(p, p): every row twice; the merged section is still a listing that round-trips and folds
 * the same either way with a third copy. */
static void test_self(void **state)
{
	char *pp, *wpp, *a, *b;
	struct mn_profile *m;

	union_runs();
	pp = merged2(paths[0], paths[0]);
	wpp = wrap(pp);
	expect_round_trip(wpp);
	m = mt_open(wpp, NULL);
	assert_int_equal(u64(mn_profile_module(m, "rds-shape"), "instances_listed"), 2);
	assert_int_equal(u64(sec(m, "summary"), "instances"), 2);
	mn_profile_close(m);
	a = merged2(wpp, paths[0]);
	b = merged2(paths[0], wpp);
	assert_string_equal(a, b);
	free(pp);
	free(wpp);
	free(a);
	free(b);
}

/* The merged counts are the runs' sums; the types are the union graph's cyclic SCCs: {a} in the
 * list runs, {b} in the tree run, {a, b} merged, holding the three runs' instances. */
static void test_sums_and_types(void **state)
{
	static const char *const top[] = { "events", "pending_edges" };
	static const char *const heap[] = { "objects", "live_at_end", "pointer_stores",
					    "pointer_loads" };
	static const char *const sum[] = { "instances", "nodes", "edges", "forward_edges",
					   "backward_edges", "self_edges", "lifetime_events",
					   "run_events", "traversals", "traversed_instances",
					   "stability_factor_sum", "dfs_like", "bfs_like" };
	static const unsigned order[] = { 0, 1, 2 };
	struct mn_profile *in[3], *m;
	uint64_t sites[2], peak = 0, rows = 0;
	unsigned mask[8], scc[8];
	char *text, *path;
	size_t nt, ns;

	union_runs();
	for (int i = 0; i < 3; i++)
		in[i] = mt_open(paths[i], NULL);
	sites[0] = site_at(in[0], "a");
	sites[1] = site_at(in[0], "b");
	/* the same binary: the same sites in every run */
	for (int i = 1; i < 3; i++) {
		assert_int_equal(site_at(in[i], "a"), sites[0]);
		assert_int_equal(site_at(in[i], "b"), sites[1]);
	}
	/* each run alone: the list runs have type {a}, the tree run type {b} */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(type_masks(in[i], sites, 2, mask, 8), 1);
		assert_int_equal(mask[0], i == 1 ? 2u : 1u);
	}

	text = merged(paths, order, 3);
	path = wrap(text);
	m = mt_open(path, NULL);
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
		assert_int_equal(u64(mn_profile_module(m, "rds-shape"), top[k]),
				 u64(mn_profile_module(in[0], "rds-shape"), top[k]) +
				 u64(mn_profile_module(in[1], "rds-shape"), top[k]) +
				 u64(mn_profile_module(in[2], "rds-shape"), top[k]));
	for (size_t k = 0; k < sizeof(heap) / sizeof(heap[0]); k++)
		assert_int_equal(u64(sec(m, "heap"), heap[k]),
				 u64(sec(in[0], "heap"), heap[k]) + u64(sec(in[1], "heap"), heap[k]) +
				 u64(sec(in[2], "heap"), heap[k]));
	for (int i = 0; i < 3; i++) {
		uint64_t pk = u64(sec(in[i], "heap"), "peak_live");

		peak = pk > peak ? pk : peak;
		rows += mn_pnode_len(sec(in[i], "instances"));
	}
	assert_int_equal(u64(sec(m, "heap"), "peak_live"), peak);
	for (size_t k = 0; k < sizeof(sum) / sizeof(sum[0]); k++)
		assert_int_equal(u64(sec(m, "summary"), sum[k]),
				 u64(sec(in[0], "summary"), sum[k]) +
				 u64(sec(in[1], "summary"), sum[k]) +
				 u64(sec(in[2], "summary"), sum[k]));
	/* every edge of the union, with the runs' stores added */
	for (int s = 0; s < 2; s++) {
		for (int d = 0; d < 2; d++) {
			uint64_t want = edge_stores(in[0], sites[s], sites[d]) +
					edge_stores(in[1], sites[s], sites[d]) +
					edge_stores(in[2], sites[s], sites[d]);

			assert_true(want > 0);   /* by construction, all four edges */
			assert_int_equal(edge_stores(m, sites[s], sites[d]), want);
		}
	}
	/* and their fields united, their directions added */
	for (int s = 0; s < 2; s++) {
		for (int d = 0; d < 2; d++) {
			const struct mn_pnode *e = edge_row(m, sites[s], sites[d]);
			uint64_t fields = 0, fwd = 0, bwd = 0;

			for (int i = 0; i < 3; i++) {
				const struct mn_pnode *x = edge_row(in[i], sites[s], sites[d]);

				if (!x)
					continue;
				fields |= fields_mask(x);
				fwd += u64(x, "forward");
				bwd += u64(x, "backward");
			}
			assert_int_equal(fields_mask(e), fields);
			assert_int_equal(u64(e, "forward"), fwd);
			assert_int_equal(u64(e, "backward"), bwd);
		}
	}
	/* by construction (union.c): a->next (offset 0) to the older head, 9 + 24 stores; b->up
	 * (16) and a->down (8) from the holder, made first; b->kid[0], kid[1] (0, 8) top-down */
	assert_int_equal(fields_mask(edge_row(m, sites[0], sites[0])), 1);
	assert_int_equal(u64(edge_row(m, sites[0], sites[0]), "backward"), 33);
	assert_int_equal(u64(edge_row(m, sites[0], sites[0]), "forward"), 0);
	assert_int_equal(fields_mask(edge_row(m, sites[1], sites[0])), 4);
	assert_int_equal(u64(edge_row(m, sites[1], sites[0]), "forward"), 2);
	assert_int_equal(fields_mask(edge_row(m, sites[0], sites[1])), 2);
	assert_int_equal(u64(edge_row(m, sites[0], sites[1]), "forward"), 1);
	assert_int_equal(fields_mask(edge_row(m, sites[1], sites[1])), 3);
	assert_int_equal(u64(edge_row(m, sites[1], sites[1]), "forward"), 6);
	assert_int_equal(u64(edge_row(m, sites[1], sites[1]), "backward"), 0);
	assert_int_equal(mn_pnode_len(sec(m, "static_shape_graph")), 4);
	/* the types are the union graph's cyclic SCCs: one, {a, b} */
	nt = type_masks(m, sites, 2, mask, 8);
	ns = union_sccs(m, sites, 2, scc);
	assert_int_equal(nt, ns);
	for (size_t i = 0; i < nt; i++)
		assert_int_equal(mask[i], scc[i]);
	assert_int_equal(nt, 1);
	assert_int_equal(mask[0], 3u);
	assert_int_equal(u64(mn_pnode_at(sec(m, "types"), 0), "instances"), 3);
	for (size_t i = 0; i < mn_pnode_len(sec(m, "static_shape_graph")); i++) {
		bool same = false;

		assert_int_equal(mn_pnode_bool(mn_pnode_get(mn_pnode_at(sec(m,
			"static_shape_graph"), i), "same_type"), &same), 0);
		assert_true(same);
	}
	/* every run's instance is listed, of the merged type, normalized over its run's clock */
	assert_int_equal(mn_pnode_len(sec(m, "instances")), rows);
	assert_int_equal(rows, 3);
	for (size_t i = 0; i < rows; i++) {
		const struct mn_pnode *w = mn_pnode_at(sec(m, "instances"), i);
		bool found = false;

		assert_int_equal(u64(w, "type"), 1);
		for (int k = 0; k < 3; k++) {
			const struct mn_pnode *x = mn_pnode_at(sec(in[k], "instances"), 0);

			found |= u64(w, "run_events") == u64(mn_profile_module(in[k], "rds-shape"),
							     "events") &&
				 u64(w, "traversals") == u64(x, "traversals") &&
				 u64(w, "nodes") == u64(x, "nodes") &&
				 u64(w, "created") == u64(x, "created");
		}
		assert_true(found);
	}
	for (int i = 0; i < 3; i++)
		mn_profile_close(in[i]);
	mn_profile_close(m);
	free(text);
	free(path);
}

/* Replaces the first `from` in text by `to`; fails when text has none. */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	char *out;

	if (!at)
		fail_msg("no '%s' to edit", from);
	if (asprintf(&out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)) < 0)
		fail_msg("no memory");
	return out;
}

/* A broken section: restore() returns -EINVAL, with "<path>:<line>:<col>: " and `want` said. */
static void expect_refused(const char *good, const char *from, const char *to, const char *want)
{
	char *text = edit(good, from, to), *path = wrap(text), err[1024], prefix[600];
	int rc = mt_try_restore_path(RDS, NULL, path, err, sizeof(err));

	if (rc != -EINVAL || !strstr(err, want))
		fail_msg("'%s' -> '%s': rc %d, message '%s', expected '%s'", from, to, rc, err,
			 want);
	snprintf(prefix, sizeof(prefix), "%s:", path);
	if (strncmp(err, prefix, strlen(prefix)) || !strchr(err + strlen(prefix), ':'))
		fail_msg("message '%s' names no place in %s", err, path);
	free(text);
	free(path);
}

/* text without the line holding the first `needle` after `anchor`. */
static char *drop_line(const char *text, const char *anchor, const char *needle)
{
	const char *a = strstr(text, anchor), *at = a ? strstr(a, needle) : NULL, *b, *e;
	char *out;

	if (!at)
		fail_msg("no '%s' after '%s' to drop", needle, anchor);
	for (b = at; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(at, '\n');
	e = e ? e + 1 : at + strlen(at);
	if (asprintf(&out, "%.*s%s", (int)(b - text), text, e) < 0)
		fail_msg("no memory");
	return out;
}

static void test_refused(void **state)
{
	char *good, *two, *from, *to, *t, *path, err[1024];
	const char *rows;
	uint64_t events, run_events = 0;
	struct mn_profile *m;
	bool have = false;
	int rc;

	union_runs();
	good = section_text(paths[0]);   /* list 10: type {a} with one instance; a -> a, b -> a */
	expect_refused(good, "threshold: 0.99", "threshold: 0.9", "field 'threshold'");
	expect_refused(good, ", stores: ", ", stores: many",
		       "field 'stores': expected an unsigned integer, found 'many");
	/* a profile written before the field existed */
	expect_refused(good, "lifetime_events: ", "lifetime_evts: ",
		       "missing field 'lifetime_events'");
	expect_refused(good, "same_type: true", "same_type: false", "field 'same_type'");
	expect_refused(good, "fields: [0]", "fields: [4]", "field 'fields': 4 is no offset");
	expect_refused(good, "fields: [0]", "fields: [512]", "field 'fields': 512 is no offset");
	expect_refused(good, "fields: [0]", "fields: [8, 0]", "field 'fields': not in ascending");
	expect_refused(good, "forward: 0,", "forward: many,", "field 'forward'");
	expect_refused(good, "instances_listed: 1", "instances_listed: 2",
		       "field 'instances_listed'");
	expect_refused(good, "sites: [", "sites: [1, ", "field 'sites'");
	expect_refused(good, "summary: {types: 1, instances: 1,",
		       "summary: {types: 1, instances: 2,", "field 'instances'");
	expect_refused(good, "pattern: ", "stability_capped: false, pattern: ",
		       "field 'stability_capped'");
	expect_refused(good, "- {instance: 2, type: 1,", "- {instance: 2, type: 2,",
		       "field 'type': no type 2");
	/* without the list's self-loop the graph has no cyclic component, but a type is listed */
	t = drop_line(good, "static_shape_graph:", "same_type: true");
	expect_refused(t, "static_shape_graph:", "static_shape_graph:", "types: 1 rows");
	free(t);
	/* the unedited section restores (the failures above are the edits') */
	path = wrap(good);
	rc = mt_try_restore_path(RDS, NULL, path, err, sizeof(err));
	assert_int_equal(rc, 0);
	free(path);

	/* a merged row's run_events equal to the section's clock would not have been written */
	two = merged2(paths[0], paths[1]);
	rows = strstr(two, "\ninstances:\n");
	assert_non_null(rows);
	/* the section's clock, and the first run_events of the instances' rows */
	path = wrap(two);
	m = mt_open(path, NULL);
	events = u64(mn_profile_module(m, "rds-shape"), "events");
	for (size_t i = 0; !have && i < mn_pnode_len(sec(m, "instances")); i++) {
		const struct mn_pnode *row = mn_pnode_at(sec(m, "instances"), i);

		if ((have = mn_pnode_get(row, "run_events") != NULL))
			run_events = u64(row, "run_events");
	}
	assert_true(have);
	mn_profile_close(m);
	free(path);
	assert_true(run_events != events);
	if (asprintf(&from, "run_events: %" PRIu64 ",", run_events) < 0)
		fail_msg("no memory");
	if (asprintf(&to, "run_events: %" PRIu64 ",", events) < 0)
		fail_msg("no memory");
	/* edit the rows' first run_events (the types' come first in the text) */
	{
		size_t off = (size_t)(rows - two);
		char *tail = edit(two + off, from, to), *whole;

		if (asprintf(&whole, "%.*s%s", (int)off, two, tail) < 0)
			fail_msg("no memory");
		expect_refused(whole, "threshold: 0.99", "threshold: 0.99", "field 'run_events'");
		free(tail);
		free(whole);
	}
	free(from);
	free(to);
	free(two);
	free(good);
}

/* text without the keys `fields`, `forward` and `backward` of the static shape graph's rows: a
 * section written before they existed. */
static char *without_directions(const char *text)
{
	char *out = strdup(text), *a, *b;

	assert_non_null(out);
	while ((a = strstr(out, ", fields: ["))) {
		b = strstr(a, ", same_type: ");
		assert_non_null(b);
		memmove(a, b, strlen(b) + 1);
	}
	return out;
}

/*
 * The graph's fields and directions merge: the fields of one edge in two profiles unite, its
 * forward and backward stores add.  A section written before they existed (no such keys) reads
 * as none known, writes `fields: [], forward: 0, backward: 0`, and merged with a newer one adds
 * nothing to them.
 */
static void test_fields_fold(void **state)
{
	char *good, *other, *old, *pg, *po, *pold, *text, *path;
	struct mn_profile *in, *m;
	uint64_t a, b;

	union_runs();
	good = section_text(paths[0]);   /* list 10: a -> a from next (0), b -> a from up (16) */
	other = edit(good, "fields: [0]", "fields: [8]");
	pg = wrap(good);
	po = wrap(other);
	in = mt_open(paths[0], NULL);   /* with its sites: table */
	a = site_at(in, "a");
	b = site_at(in, "b");
	assert_int_equal(fields_mask(edge_row(in, a, a)), 1);
	assert_int_equal(u64(edge_row(in, a, a), "backward"), 9);

	text = merged2(pg, po);
	path = wrap(text);
	m = mt_open(path, NULL);
	assert_int_equal(fields_mask(edge_row(m, a, a)), 3);   /* [0, 8] */
	assert_int_equal(u64(edge_row(m, a, a), "stores"), 18);
	assert_int_equal(u64(edge_row(m, a, a), "backward"), 18);
	assert_int_equal(u64(edge_row(m, a, a), "forward"), 0);
	assert_int_equal(fields_mask(edge_row(m, b, a)), 4);    /* [16] */
	assert_int_equal(u64(edge_row(m, b, a), "forward"), 2);
	mn_profile_close(m);
	free(text);
	free(path);

	old = without_directions(good);
	assert_null(strstr(old, "forward: "));
	pold = wrap(old);
	text = merged2(pold, pold);   /* restores, and merges */
	assert_non_null(strstr(text, "stores: 18, fields: [], forward: 0, backward: 0, "));
	free(text);
	text = merged2(pold, pg);
	path = wrap(text);
	m = mt_open(path, NULL);
	assert_int_equal(u64(edge_row(m, a, a), "stores"), 18);
	assert_int_equal(fields_mask(edge_row(m, a, a)), 1);
	assert_int_equal(u64(edge_row(m, a, a), "backward"), 9);
	assert_int_equal(u64(edge_row(m, b, a), "forward"), 1);
	mn_profile_close(m);
	mn_profile_close(in);
	free(text);
	free(path);
	free(pold);
	free(old);
	free(pg);
	free(po);
	free(other);
	free(good);
}

/*
 * The listing's cut with rows of several runs: 1200 short lists, 1000 listed (the oldest, all
 * equally traversed).  Merged with itself every row comes twice: the 500 first pairs are listed;
 * three times, every row with fewer than 1000 before it: 334 triples, 1002 rows, whatever the
 * grouping.
 */
static void test_cut(void **state)
{
	static const unsigned order[] = { 0, 1, 2 };
	char *p, *pp, *wpp, *left, *right, *all, *w;
	char *three[3];
	struct mn_profile *m;

	build("short_lists");
	p = run("1200");
	three[0] = three[1] = three[2] = p;
	pp = merged2(p, p);
	wpp = wrap(pp);
	m = mt_open(wpp, NULL);
	assert_int_equal(u64(mn_profile_module(m, "rds-shape"), "instances_listed"), 1000);
	assert_int_equal(u64(sec(m, "summary"), "instances"), 2400);
	for (size_t i = 0; i < 1000; i += 2)
		assert_int_equal(u64(mn_pnode_at(sec(m, "instances"), i), "instance"),
				 u64(mn_pnode_at(sec(m, "instances"), i + 1), "instance"));
	mn_profile_close(m);
	expect_round_trip(wpp);
	all = merged(three, order, 3);
	left = merged2(wpp, p);
	right = merged2(p, wpp);
	assert_string_equal(left, all);
	assert_string_equal(right, all);
	w = wrap(all);
	m = mt_open(w, NULL);
	assert_int_equal(u64(mn_profile_module(m, "rds-shape"), "instances_listed"), 1002);
	assert_int_equal(u64(sec(m, "summary"), "instances"), 3600);
	mn_profile_close(m);
	expect_round_trip(w);
	free(w);
	free(all);
	free(left);
	free(right);
	free(pp);
	free(wpp);
	free(p);
}

/*
 * `mnemo merge` (tools/merge.c) gives the same section as restore/merge/emit driven here, for
 * every order of the three runs; one profile merges into itself byte for byte, the whole file.
 */
static void test_mnemo_merge(void **state)
{
	static const unsigned order[] = { 0, 1, 2 };
	char *want, *got, out[600];

	union_runs();
	want = merged(paths, order, 3);
	snprintf(out, sizeof(out), "%s/merged.yaml", work);
	assert_int_equal(shell("%s/mnemo merge -o %s %s %s %s", BINDIR, out, paths[2], paths[0],
			       paths[1]), 0);
	got = section_text(out);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(shell("%s/mnemo merge -o %s %s %s %s", BINDIR, out, paths[1], paths[2],
			       paths[0]), 0);
	got = section_text(out);
	assert_string_equal(got, want);
	free(got);
	free(want);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(shell("%s/mnemo merge -o %s %s", BINDIR, out, paths[i]), 0);
		assert_int_equal(shell("cmp -s %s %s", out, paths[i]), 0);
	}
}

/* ---- States of live runs (events, no program) ------------------------------------------------ */

#define OBJ(k) (UINT64_C(0x200000000) + (uint64_t)(k) * 64)

/*
 * A run driven with events: a list of `n` objects of site `s` (each pointing to the last made),
 * hung off one object of site `h` (h -> s), walked twice; then a second list of site s made,
 * walked once and freed (an instance that ends before the run does).  Objects from `base` on.
 */
static void *live_run(uint32_t s, uint32_t h, unsigned n, unsigned base)
{
	void *st = mt_state_new(RDS, NULL);
	unsigned k;

	RDS->heap_alloc(st, h, OBJ(base), 24);
	for (k = 1; k <= n; k++) {
		RDS->heap_alloc(st, s, OBJ(base + k), 24);
		if (k > 1)
			RDS->store(st, 0, OBJ(base + k), OBJ(base + k - 1), 8);
	}
	RDS->store(st, 0, OBJ(base) + 8, OBJ(base + n), 8);
	for (int w = 0; w < 2; w++)
		for (k = n; k > 1; k--)
			RDS->load(st, 0, OBJ(base + k), OBJ(base + k - 1), 8);
	for (k = 1; k <= 3; k++) {
		RDS->heap_alloc(st, s, OBJ(base + 100 + k), 24);
		if (k > 1)
			RDS->store(st, 0, OBJ(base + 100 + k), OBJ(base + 100 + k - 1), 8);
	}
	RDS->load(st, 0, OBJ(base + 103), OBJ(base + 102), 8);
	for (k = 1; k <= 3; k++)
		RDS->heap_free(st, 0, OBJ(base + 100 + k));
	return st;
}

/*
 * A state fresh from its events reads as its profile restored: emitted twice it gives the same
 * section (the end of the run is taken once), and two such runs merged give what their profiles,
 * restored, give merged.  The runs: site 1 lists hung off site 2 (type {1}), site 2 lists hung off
 * site 1 (type {2}); merged, one type {1, 2} of four instances.
 */
static void test_live_states(void **state)
{
	void *a = live_run(1, 2, 5, 0), *b = live_run(2, 1, 7, 1000), *x;
	char *ta = mt_emit_text(RDS, a, NULL), *tb = mt_emit_text(RDS, b, NULL);
	char *wa, *wb, *direct, *restored, *again;
	struct mn_profile *m;

	again = mt_emit_text(RDS, a, NULL);
	assert_string_equal(again, ta);
	free(again);
	mt_state_free(RDS, a);
	mt_state_free(RDS, b);
	wa = wrap(ta);
	wb = wrap(tb);
	expect_round_trip(wa);
	expect_round_trip(wb);
	/* one run: its rows are over the section's clock (no run_events), and the types' run_events
	 * are that clock once per instance */
	m = mt_open(wa, NULL);
	assert_int_equal(u64(sec(m, "summary"), "instances"), 2);
	assert_int_equal(u64(sec(m, "summary"), "run_events"),
			 2 * u64(mn_profile_module(m, "rds-shape"), "events"));
	assert_int_equal(mn_pnode_len(sec(m, "instances")), 2);
	for (size_t i = 0; i < 2; i++)
		assert_null(mn_pnode_get(mn_pnode_at(sec(m, "instances"), i), "run_events"));
	mn_profile_close(m);

	a = live_run(1, 2, 5, 0);
	b = live_run(2, 1, 7, 1000);
	mt_fold(RDS, a, b);   /* two live runs, settled by merge() */
	direct = mt_emit_text(RDS, a, NULL);
	mt_state_free(RDS, a);
	restored = merged2(wa, wb);
	assert_string_equal(direct, restored);
	x = wrap(restored);
	m = mt_open(x, NULL);
	assert_int_equal(u64(sec(m, "summary"), "types"), 1);
	assert_int_equal(u64(sec(m, "summary"), "instances"), 4);
	assert_int_equal(u64(sec(m, "summary"), "nodes"), 5 + 3 + 7 + 3);
	mn_profile_close(m);
	free(x);
	free(ta);
	free(tb);
	free(wa);
	free(wb);
	free(direct);
	free(restored);
}

static int setup(void **state)
{
	if (!mkdtemp(work))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	for (int i = 0; i < 3; i++)
		free(paths[i]);
	if (!getenv("MNEMO_KEEP"))
		shell("rm -rf %s", work);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_laws),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_sums_and_types),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_fields_fold),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_mnemo_merge),
		cmocka_unit_test(test_live_states),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
