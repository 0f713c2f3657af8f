/*
 * structure-affinity across runs (modules/structure-affinity/README.md, "Merging"): restore(),
 * merge() and emit() driven directly, as `mnemo merge` drives them (tools/merge.c): one mn_run
 * made from the profiles' `sites:` rows, a state per profile from init() and restore(), folded
 * with merge() in input order, emitted once.  Checked:
 *   - emit(restore(p)) == p byte for byte, on real profiles of every known-answer program (also
 *     with the cache cost model, sampling and top 1);
 *   - merge is commutative and associative byte for byte on three runs with different inputs,
 *     and a merged profile merges again (the merged file is restored like any profile);
 *   - merged counts are the sums of the runs', strides the gcd, widths the maxima;
 *   - a known answer: programs/inputs.c with one input using fields {a, c} and another using
 *     {b, d} (and all four once), whose merged affinities are Eq. 7 on the summed counts,
 *     worked out below by hand, and whose advice is a split neither run alone gives in this form;
 *   - strides of different runs combine by gcd (made-up events: 48 and 32 give size 16); strides
 *     that are multiples of the declared size fold into it, in each run and merged;
 *   - runs of different options are refused; a malformed section is refused with a message
 *     naming the file, line, column and field;
 *   - `mnemo merge` itself (skipped while the tree has none) writes the section the merge by hand
 *     does, and refuses profiles of different settings.
 */
#define _GNU_SOURCE
#include <errno.h>
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

#include "backend.h"
#include "module.h"
#include "profile.h"
#include "modtest.h"
#include "shell.h"

#define MODULE "structure-affinity"

extern const struct mn_module mn_module_structure_affinity;
#define SA (&mn_module_structure_affinity)

#define MAX_IN 8

static char work[] = "/tmp/mnemo-affinity-merge.XXXXXX";

/* ---- Files and text ------------------------------------------------------------------------- */

static char *path_of(const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", work, name) < 0)
		fail_msg("out of memory");
	return p;
}

/* Builds programs/<name>.<ext> with -g and the compiler options flags into work/<out>. */
static void build_as(const char *name, const char *ext, const char *flags, const char *out)
{
	if (shell("%s/mnemo-%s -m " MODULE " %s -g %s/%s.%s -o %s/%s", BINDIR,
		  strcmp(ext, "c") ? "c++" : "cc", flags, PROGRAMS_DIR, name, ext, work, out))
		fail_msg("%s.%s (%s) does not build", name, ext, flags);
}

/* Builds programs/<name>.<ext> (-O1 -g, as test_known.c) into work/<name>. */
static void build(const char *name, const char *ext)
{
	build_as(name, ext, "-O1", name);
}

/* Runs work/<prog> ARGS with ENV (`VAR=value ` words) into work/<out>.yaml; the path. */
static char *run(const char *prog, const char *env, const char *args, const char *out)
{
	char name[256], err[4096], *path, *errpath;

	snprintf(name, sizeof(name), "%s.yaml", out);
	path = path_of(name);
	snprintf(name, sizeof(name), "%s.err", out);
	errpath = path_of(name);
	if (shell("cd %s && env %s %s/mnemo run --reproducible -o %s -- ./%s %s >/dev/null 2>%s",
		  work, env, BINDIR, path, prog, args, errpath)) {
		slurp(errpath, err, sizeof(err));
		fail_msg("%s %s: mnemo run failed: %s", prog, args, err);
	}
	free(errpath);
	return path;
}

/* The module's section of the profile at path, as emit() writes it on its own (malloc'd). */
static char *section_text(const char *path)
{
	return mt_section_text(path, MODULE);
}

/* The texts must be equal; on a difference, says where. */
static void expect_same(const char *got, const char *want, const char *what)
{
	size_t i = 0, line = 1;

	if (!strcmp(got, want))
		return;
	while (got[i] && got[i] == want[i])
		line += got[i++] == '\n';
	fail_msg("%s: differs from line %zu:\n--- got:\n%.300s\n--- expected:\n%.300s", what, line,
		 got + i - (i > 40 ? 40 : i), want + i - (i > 40 ? 40 : i));
}

/* ---- The run, states, and a merge as `mnemo merge` does it ----------------------------------- */

/* A site table blob with the sites of every profile (one binary: the same row for one id). */
static struct mn_run *run_of(struct mn_profile *const *prof, size_t n)
{
	uint32_t max = 0;
	char *blob = NULL, why[256];
	size_t len = 0;
	struct mn_run *r;
	FILE *m;

	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < mn_profile_site_count(prof[k]); i++)
			if (mn_profile_site_at(prof[k], i)->id > max)
				max = mn_profile_site_at(prof[k], i)->id;
	m = open_memstream(&blob, &len);
	assert_non_null(m);
	fprintf(m, "mnemo-sites/2\n");
	for (uint32_t id = 1; id <= max; id++) {
		const struct mn_site *s = NULL;

		for (size_t k = 0; k < n && !s; k++)
			s = mn_profile_site(prof[k], id);
		if (!s) {
			fprintf(m, "\t\t\t\t\t\t\t\t\n");
			continue;
		}
		fprintf(m, "%s\t%s\t%s\t%u\t%u\t%s\t%llu\t%u\t%s\n", s->kind, s->function, s->file,
			s->line, s->column, s->name, (unsigned long long)s->type_size, s->loop,
			s->fields);
	}
	fclose(m);
	if (mn_run_create(&r, blob, len, why, sizeof(why)))
		fail_msg("the profiles' sites do not make a site table: %s", why);
	free(blob);
	return r;
}

/* A YAML double-quoted string. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* A profile of the run's sites and the section text. */
static void write_profile(const char *path, const struct mn_run *run, const char *section)
{
	char *head = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&head, &len);

	assert_non_null(f);
	fprintf(f, "format: " MN_PROFILE_FORMAT "\nprogram: {argv: [merged], exit_status: 0, "
		   "signal: null}\ncomplete: true\nsites:\n");
	for (uint32_t id = 1; id <= mn_run_site_count(run); id++) {
		const struct mn_run_site *s = mn_run_site(run, id);

		if (!s->kind[0])
			continue;
		fprintf(f, "  %u: {kind: ", id);
		put_quoted(f, s->kind);
		fprintf(f, ", function: ");
		put_quoted(f, s->function);
		fprintf(f, ", file: ");
		put_quoted(f, s->file);
		fprintf(f, ", line: %u, column: %u, name: ", s->line, s->column);
		put_quoted(f, s->name);
		fprintf(f, ", type_size: %llu, loop: %u, fields: ",
			(unsigned long long)s->type_size, s->loop);
		put_quoted(f, s->fields);
		fprintf(f, "}\n");
	}
	fclose(f);
	mt_write_profile(path, head, MODULE, section);
	free(head);
}

/*
 * `mnemo merge -o work/<out>.yaml IN...` by hand: restore every input, fold in order, emit once.
 * Returns the merged profile's path.
 */
static char *merge(const char *out, size_t n, ...)
{
	struct mn_profile *prof[MAX_IN];
	void *st[MAX_IN];
	struct mn_run *r;
	char name[256], *path, *text;
	va_list ap;
	int e;

	assert_true(n >= 1 && n <= MAX_IN);
	va_start(ap, n);
	for (size_t k = 0; k < n; k++)
		prof[k] = mt_open(va_arg(ap, const char *), MODULE);
	va_end(ap);
	r = run_of(prof, n);
	for (size_t k = 0; k < n; k++)
		st[k] = mt_restored(SA, r, prof[k]);
	for (size_t k = 1; k < n; k++)
		mt_fold(SA, st[0], st[k]);
	text = mt_emit_text(SA, st[0], &e);
	if (!text)
		fail_msg("%s: emit() of the merged state failed: %d", out, e);
	mt_state_free(SA, st[0]);
	snprintf(name, sizeof(name), "%s.yaml", out);
	path = path_of(name);
	write_profile(path, r, text);
	free(text);
	mn_run_destroy(r);
	for (size_t k = 0; k < n; k++)
		mn_profile_close(prof[k]);
	return path;
}

/* ---- Reading sections ------------------------------------------------------------------------ */

static const struct mn_pnode *get(const struct mn_pnode *n, const char *key)
{
	const struct mn_pnode *v = mn_pnode_get(n, key);

	if (!v)
		fail_msg("line %u: expected '%s'", mn_pnode_line(n), key);
	return v;
}

static uint64_t u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_is_null(get(n, key)))
		return 0;
	if (mn_pnode_u64(get(n, key), &v))
		fail_msg("line %u: expected an integer '%s'", mn_pnode_line(n), key);
	return v;
}

static const char *str(const struct mn_pnode *n, const char *key)
{
	const char *s = mn_pnode_str(get(n, key), NULL);

	if (!s)
		fail_msg("line %u: expected a string '%s'", mn_pnode_line(n), key);
	return s;
}

/* A stream as a profile lists it, under `structures` or in `other_streams`. */
struct srow {
	uint64_t object, loop, site, accesses, cost, stride, offset, bytes;
};

/* Every stream of a profile's section into v (cap rows); how many. */
static size_t streams_of(const struct mn_profile *p, struct srow *v, size_t cap)
{
	const struct mn_pnode *sec = mn_profile_module(p, MODULE), *st = get(sec, "structures");
	const struct mn_pnode *t;
	size_t n = 0;

	for (size_t i = 0; i <= mn_pnode_len(st); i++) {
		uint64_t object = 0;

		if (i < mn_pnode_len(st)) {
			object = u64(mn_pnode_at(st, i), "site");
			t = get(mn_pnode_at(st, i), "streams");
		} else {
			t = get(sec, "other_streams");
		}
		for (size_t j = 0; j < mn_pnode_len(t); j++) {
			const struct mn_pnode *r = mn_pnode_at(t, j);

			assert_true(n < cap);
			v[n++] = (struct srow){
				.object = i < mn_pnode_len(st) ? object : u64(r, "object"),
				.loop = u64(r, "loop"), .site = u64(r, "site"),
				.accesses = u64(r, "accesses"), .cost = u64(r, "cost"),
				.stride = u64(r, "stride"), .offset = u64(r, "offset"),
				.bytes = u64(r, "bytes"),
			};
		}
	}
	return n;
}

static const struct srow *find_stream(const struct srow *v, size_t n, const struct srow *key)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].object == key->object && v[i].loop == key->loop && v[i].site == key->site)
			return &v[i];
	return NULL;
}

static const struct mn_pnode *object_row(const struct mn_profile *p, uint64_t site)
{
	const struct mn_pnode *t = get(mn_profile_module(p, MODULE), "objects");

	for (size_t i = 0; i < mn_pnode_len(t); i++)
		if (u64(mn_pnode_at(t, i), "site") == site)
			return mn_pnode_at(t, i);
	return NULL;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The merged profile m of the inputs in[0..n) holds their sums: totals, every data object's
 * instances, accesses and cost (bytes the maximum), every stream's accesses and cost (stride the
 * gcd, offset the minimum, bytes the maximum); and nothing the inputs do not.
 */
static void expect_sums(const char *merged, const char *const *in, size_t n)
{
	static const char *const totals[] = { "accesses", "cost", "unattributed_accesses",
					      "unattributed_cost" };
	static struct srow ms[4096], is[4096];
	struct mn_profile *m = mt_open(merged, MODULE), *p[MAX_IN];
	const struct mn_pnode *mo = get(mn_profile_module(m, MODULE), "objects");
	size_t nm = streams_of(m, ms, 4096), seen = 0;

	for (size_t k = 0; k < n; k++)
		p[k] = mt_open(in[k], MODULE);
	for (size_t t = 0; t < sizeof(totals) / sizeof(totals[0]); t++) {
		uint64_t sum = 0;

		for (size_t k = 0; k < n; k++)
			sum += u64(get(mn_profile_module(p[k], MODULE), "totals"), totals[t]);
		if (u64(get(mn_profile_module(m, MODULE), "totals"), totals[t]) != sum)
			fail_msg("totals.%s: expected the sum %llu", totals[t],
				 (unsigned long long)sum);
	}
	for (size_t i = 0; i < mn_pnode_len(mo); i++) {
		const struct mn_pnode *r = mn_pnode_at(mo, i);
		uint64_t site = u64(r, "site"), inst = 0, acc = 0, cost = 0, bytes = 0;

		for (size_t k = 0; k < n; k++) {
			const struct mn_pnode *x = object_row(p[k], site);

			if (!x)
				continue;
			inst += u64(x, "instances");
			acc += u64(x, "accesses");
			cost += u64(x, "cost");
			bytes = u64(x, "bytes") > bytes ? u64(x, "bytes") : bytes;
		}
		if (u64(r, "instances") != inst || u64(r, "accesses") != acc ||
		    u64(r, "cost") != cost || u64(r, "bytes") != bytes)
			fail_msg("object %llu: expected instances %llu, accesses %llu, cost %llu, "
				 "bytes %llu (sums, max)", (unsigned long long)site,
				 (unsigned long long)inst, (unsigned long long)acc,
				 (unsigned long long)cost, (unsigned long long)bytes);
	}
	for (size_t k = 0; k < n; k++) {
		const struct mn_pnode *po = get(mn_profile_module(p[k], MODULE), "objects");

		for (size_t i = 0; i < mn_pnode_len(po); i++)
			if (!object_row(m, u64(mn_pnode_at(po, i), "site")))
				fail_msg("%s: a data object missing from the merge", in[k]);
	}
	for (size_t i = 0; i < nm; i++) {
		struct srow want = { .offset = UINT64_MAX };
		bool found = false;

		for (size_t k = 0; k < n; k++) {
			size_t ni = streams_of(p[k], is, 4096);
			const struct srow *x = find_stream(is, ni, &ms[i]);

			if (!x)
				continue;
			found = true;
			seen++;
			want.accesses += x->accesses;
			want.cost += x->cost;
			want.stride = gcd(want.stride, x->stride);
			want.offset = x->offset < want.offset ? x->offset : want.offset;
			want.bytes = x->bytes > want.bytes ? x->bytes : want.bytes;
		}
		if (!found || ms[i].accesses != want.accesses || ms[i].cost != want.cost ||
		    ms[i].stride != want.stride || ms[i].offset != want.offset ||
		    ms[i].bytes != want.bytes)
			fail_msg("stream (object %llu, loop %llu, site %llu): accesses %llu cost "
				 "%llu stride %llu offset %llu bytes %llu, expected %llu %llu %llu "
				 "%llu %llu", (unsigned long long)ms[i].object,
				 (unsigned long long)ms[i].loop, (unsigned long long)ms[i].site,
				 (unsigned long long)ms[i].accesses, (unsigned long long)ms[i].cost,
				 (unsigned long long)ms[i].stride, (unsigned long long)ms[i].offset,
				 (unsigned long long)ms[i].bytes, (unsigned long long)want.accesses,
				 (unsigned long long)want.cost, (unsigned long long)want.stride,
				 (unsigned long long)want.offset, (unsigned long long)want.bytes);
	}
	/* Every input stream is in the merge: the matches counted above cover them all. */
	{
		size_t total = 0;

		for (size_t k = 0; k < n; k++)
			total += streams_of(p[k], is, 4096);
		assert_int_equal(seen, total);
	}
	for (size_t k = 0; k < n; k++)
		mn_profile_close(p[k]);
	mn_profile_close(m);
}

/* ---- Tests ----------------------------------------------------------------------------------- */

/* emit(restore(p)) == p for the profile at path; also merge(p) == p through a written file. */
static void expect_round_trip(const char *path, const char *what)
{
	struct mn_profile *p = mt_open(path, MODULE);
	struct mn_run *r = run_of(&p, 1);
	void *st = mt_restored(SA, r, p);
	char *want = section_text(path), *got = mt_emit_text(SA, st, NULL), out[256], *m, *again;

	assert_non_null(got);
	if (!strstr(want, "\nobjects:\n") || !strstr(want, "\nother_streams:"))
		fail_msg("%s: the section carries no objects or other_streams", what);
	expect_same(got, want, what);
	mt_state_free(SA, st);
	mn_run_destroy(r);
	mn_profile_close(p);
	snprintf(out, sizeof(out), "%s.self", what);
	m = merge(out, 1, path);
	again = section_text(m);
	expect_same(again, want, out);
	free(again);
	free(m);
	free(want);
	free(got);
}

/*
 * Every known-answer program's profile comes back byte for byte; hotcold also with the cache cost
 * model and with sampling, two_structs and inputs with top 1, where a data object's streams are
 * in other_streams.
 */
static void test_round_trip(void **state)
{
	static const struct {
		const char *name, *ext, *env, *args;
	} cases[] = {
		{ "fig1", "c", "", "" },
		{ "hotcold", "c", "", "" },
		{ "hotcold", "c", "MNEMO_AFFINITY_COST=cache", "" },
		{ "hotcold", "c", "MNEMO_AFFINITY_SAMPLE=7", "20" },
		{ "list", "c", "", "" },
		{ "together", "c", "", "" },
		{ "two_structs", "c", "", "" },
		{ "two_structs", "c", "MNEMO_AFFINITY_TOP=1", "" },
		{ "declared", "cpp", "", "" },
		{ "inputs", "c", "MNEMO_AFFINITY_TOP=1", "1 2 3 1" },
	};
	const char *built = "";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char what[256], *path;

		if (strcmp(built, cases[i].name))
			build(cases[i].name, cases[i].ext);
		built = cases[i].name;
		snprintf(what, sizeof(what), "rt%zu.%s", i, cases[i].name);
		path = run(cases[i].name, cases[i].env, cases[i].args, what);
		expect_round_trip(path, what);
		free(path);
	}

	/* Strides of two elements folded into the declared size (source: folded) come back too. */
	build_as("six_fields", "c", "-O1 -DUNROLL=2 -fno-unroll-loops -fno-vectorize "
		 "-fno-slp-vectorize", "six_fields_u2");
	{
		char *path = run("six_fields_u2", "", "", "rt.six_fields_u2"), *text;

		text = section_text(path);
		if (!strstr(text, "size: {inferred: 48, declared: 24, agree: true, used: 24, "
			    "source: folded}"))
			fail_msg("six_fields -DUNROLL=2: expected the size folded:\n%s", text);
		free(text);
		expect_round_trip(path, "rt.six_fields_u2");
		free(path);
	}
}

/* Commutative and associative byte for byte on three runs; the result holds the sums. */
static void check_laws(const char *p, const char *q, const char *r, const char *tag)
{
	const char *in[3] = { p, q, r };
	char name[256], *pq, *qp, *pq_r, *qr, *p_qr, *pqr, *rqp, *t[6];

#define M(var, ...) do { snprintf(name, sizeof(name), "%s.%s", tag, #var);                       \
			 var = merge(name, __VA_ARGS__); } while (0)
	M(pq, 2, p, q);
	M(qp, 2, q, p);
	M(qr, 2, q, r);
	M(pq_r, 2, pq, r);
	M(p_qr, 2, p, qr);
	M(pqr, 3, p, q, r);
	M(rqp, 3, r, q, p);
#undef M
	t[0] = section_text(pq);
	t[1] = section_text(qp);
	expect_same(t[1], t[0], "merge(q, p) against merge(p, q)");
	t[2] = section_text(pq_r);
	t[3] = section_text(p_qr);
	expect_same(t[3], t[2], "merge(p, merge(q, r)) against merge(merge(p, q), r)");
	t[4] = section_text(pqr);
	expect_same(t[4], t[2], "merge(p, q, r) against merge(merge(p, q), r)");
	t[5] = section_text(rqp);
	expect_same(t[5], t[2], "merge(r, q, p) against merge(merge(p, q), r)");
	/* Not trivially equal: the merge differs from each input. */
	for (size_t k = 0; k < 3; k++) {
		char *x = section_text(in[k]);

		assert_true(strcmp(x, t[4]) != 0);
		free(x);
	}
	expect_sums(pq, in, 2);
	expect_sums(pqr, in, 3);
	for (size_t k = 0; k < 6; k++)
		free(t[k]);
	free(pq);
	free(qp);
	free(qr);
	free(pq_r);
	free(p_qr);
	free(pqr);
	free(rqp);
}

static void test_laws(void **state)
{
	char *p, *q, *r;

	/* Top 1: table is hot, hist's streams are in other_streams, and in q hist has no access. */
	build("inputs", "c");
	p = run("inputs", "MNEMO_AFFINITY_TOP=1", "1 3 0 0", "law.inputs.p");
	q = run("inputs", "MNEMO_AFFINITY_TOP=1", "1 0 5 1", "law.inputs.q");
	r = run("inputs", "MNEMO_AFFINITY_TOP=1", "2 1 1 1", "law.inputs.r");
	check_laws(p, q, r, "inputs");
	free(p);
	free(q);
	free(r);

	/* Separately allocated nodes: instances add, sizes stay unknown. */
	build("list", "c");
	p = run("list", "", "1", "law.list.p");
	q = run("list", "", "2", "law.list.q");
	r = run("list", "", "3", "law.list.r");
	check_laws(p, q, r, "list");
	free(p);
	free(q);
	free(r);
}

static double affinity(const struct mn_pnode *s, uint64_t i, uint64_t j)
{
	const struct mn_pnode *m = get(s, "affinity");
	char col[32];
	double v = -1;

	snprintf(col, sizeof(col), "%llu", (unsigned long long)j);
	for (size_t r = 0; r < mn_pnode_len(m); r++)
		if (u64(mn_pnode_at(m, r), "field") == i &&
		    mn_pnode_f64(get(mn_pnode_at(m, r), col), &v))
			fail_msg("affinity %llu, %llu: not a number", (unsigned long long)i,
				 (unsigned long long)j);
	return v;
}

/* The structure of the global `table` in profile p (the one data object named so). */
static const struct mn_pnode *table_of(const struct mn_profile *p)
{
	const struct mn_pnode *st = get(mn_profile_module(p, MODULE), "structures");

	for (size_t i = 0; i < mn_pnode_len(st); i++)
		if (!strcmp(str(mn_pnode_at(st, i), "name"), "table"))
			return mn_pnode_at(st, i);
	fail_msg("no structure named table");
	return NULL;
}

/*
 * inputs.c, N = 1000 elements of {int a, b, c, d}.  Run P ("1 3 0 0"): 3 passes reading a and c,
 * nothing else: a and c cost 3N each, and P alone says do not split.  Run Q ("1 0 5 1"): 5 passes
 * reading b and d, 1 pass writing all four: a, c N each, b, d 6N each.  Summed: a = c = 4N,
 * b = d = 6N.  Eq. 7 on the sums: a and c share the AC loop (3N + 3N) and the ALL loop (N + N):
 * A(a, c) = 8N / 8N = 1; b and d the BD loop (5N + 5N) and ALL (N + N): A(b, d) = 12N / 12N = 1;
 * a (or c) and b (or d) only the ALL loop: A = (N + N) / (4N + 6N) = 0.2 < 0.8.  Clusters
 * {a, c} and {b, d}: "split into {a, c} and {b, d}".
 */
static void test_known_merge(void **state)
{
	const double n = 1000, a = 4 * n, b = 6 * n, c = 4 * n, d = 6 * n;
	const double want[4][4] = {
		{ 1, (n + n) / (a + b), (3 * n + 3 * n + n + n) / (a + c), (n + n) / (a + d) },
		{ 0, 1, (n + n) / (b + c), (5 * n + 5 * n + n + n) / (b + d) },
		{ 0, 0, 1, (n + n) / (c + d) },
		{ 0, 0, 0, 1 },
	};
	const uint64_t cost[4] = { 4000, 6000, 4000, 6000 };
	struct mn_profile *mp, *pp;
	const struct mn_pnode *s, *f;
	char *p, *q, *m;

	build("inputs", "c");
	p = run("inputs", "", "1 3 0 0", "known.p");
	q = run("inputs", "", "1 0 5 1", "known.q");
	pp = mt_open(p, MODULE);
	assert_string_equal(str(table_of(pp), "advice"), "do not split: all fields are used "
			    "together");
	assert_int_equal(mn_pnode_len(get(table_of(pp), "fields")), 2);
	mn_profile_close(pp);

	m = merge("known.pq", 2, p, q);
	mp = mt_open(m, MODULE);
	s = table_of(mp);
	assert_int_equal(u64(get(s, "size"), "inferred"), 16);
	f = get(s, "fields");
	assert_int_equal(mn_pnode_len(f), 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(u64(mn_pnode_at(f, i), "offset"), 4 * i);
		assert_int_equal(u64(mn_pnode_at(f, i), "cost"), cost[i]);
		assert_int_equal(u64(mn_pnode_at(f, i), "accesses"), cost[i]);
	}
	for (size_t i = 0; i < 4; i++)
		for (size_t j = i; j < 4; j++) {
			double got = affinity(s, 4 * i, 4 * j), back = affinity(s, 4 * j, 4 * i);

			if (got < want[i][j] - 1e-12 || got > want[i][j] + 1e-12 || back != got)
				fail_msg("A(%zu, %zu) = %.17g (and %.17g), expected %.17g", 4 * i,
					 4 * j, got, back, want[i][j]);
		}
	assert_int_equal(u64(s, "accesses"), 20000);
	assert_int_equal(mn_pnode_len(get(s, "loops")), 3);
	assert_string_equal(str(s, "advice"), "split into {a, c} and {b, d}");
	mn_profile_close(mp);
	free(m);
	free(p);
	free(q);
}

/* ---- Made-up runs (events, no program) ------------------------------------------------------ */

#define GLOBAL UINT64_C(0x400000)

enum { S_GLOBAL = 1, S_LOOP, S_LD1, S_LD2 };

static const char sites_v2[] =
	"mnemo-sites/2\n"
	"global\t\tg.c\t1\t0\tg\t0\t0\t\n"       /* S_GLOBAL */
	"loop\tmain\tg.c\t5\t2\t\t0\t0\t\n"      /* S_LOOP */
	"load\tmain\tg.c\t6\t3\t\t0\t2\t\n"      /* S_LD1, in S_LOOP */
	"load\tmain\tg.c\t7\t3\t\t0\t2\t\n";     /* S_LD2 */

static struct mn_run *made_up_run(void)
{
	struct mn_run *r;
	char why[256];

	if (mn_run_create(&r, sites_v2, sizeof(sites_v2) - 1, why, sizeof(why)))
		fail_msg("the made-up site table: %s", why);
	return r;
}

/* A run over a global of `bytes` bytes: LD1 at offsets o1[], LD2 at o2[] (both `size` wide). */
static void *made_up(const struct mn_run *r, uint64_t bytes, uint32_t size, const uint64_t *o1,
		     const uint64_t *o2, size_t n)
{
	void *st = mt_state_new(SA, r);

	SA->global(st, S_GLOBAL, GLOBAL, bytes);
	for (size_t i = 0; i < n; i++) {
		SA->load(st, S_LD1, GLOBAL + o1[i], 0, size);
		SA->load(st, S_LD2, GLOBAL + o2[i], 0, size);
	}
	return st;
}

/*
 * Run 1: strides 48 (offsets 0, 48, 96 and 8, 56, 104), size 48.  Run 2: strides 32 (offsets
 * 32, 64, 96 and 40, 72, 104), size 32.  Merged: strides gcd(48, 32) = 16, size 16, offsets the
 * smaller (0 and 8), fields 0 and 8; widths the larger; instances 2; bytes the larger global.
 * Either order gives the same section.
 */
static void test_strides(void **state)
{
	static const uint64_t a1[] = { 0, 48, 96 }, b1[] = { 8, 56, 104 };
	static const uint64_t a2[] = { 32, 64, 96 }, b2[] = { 40, 72, 104 };
	struct mn_run *r = made_up_run();
	void *x = made_up(r, 4800, 4, a1, b1, 3), *y = made_up(r, 9600, 8, a2, b2, 3);
	char *one = mt_emit_text(SA, x, NULL), *two = mt_emit_text(SA, y, NULL), *xy, *yx;

	assert_non_null(strstr(one, "size: {inferred: 48,"));
	assert_non_null(strstr(two, "size: {inferred: 32,"));
	xy = mt_emit_text(SA, mt_fold(SA, x, y), NULL);
	mt_state_free(SA, x);
	x = made_up(r, 4800, 4, a1, b1, 3);
	y = made_up(r, 9600, 8, a2, b2, 3);
	yx = mt_emit_text(SA, mt_fold(SA, y, x), NULL);
	mt_state_free(SA, y);
	expect_same(yx, xy, "merge(run 2, run 1) against merge(run 1, run 2)");
	if (!strstr(xy, "size: {inferred: 16, declared: null, agree: null, used: 16, "
		    "source: strides}") ||
	    !strstr(xy, "- {loop: 2, site: 3, cost: 6, accesses: 6, field: 0, stride: 16, "
		    "offset: 0, bytes: 8}") ||
	    !strstr(xy, "- {loop: 2, site: 4, cost: 6, accesses: 6, field: 8, stride: 16, "
		    "offset: 8, bytes: 8}") ||
	    !strstr(xy, "- {site: 1, kind: global, instances: 2, bytes: 9600, accesses: 12, "
		    "cost: 12}"))
		fail_msg("merged section:\n%s", xy);
	free(one);
	free(two);
	free(xy);
	free(yx);
	mn_run_destroy(r);
}

/* A global of struct six {int a, b, c, d, e, f;} with its layout in the site table. */
static const char sites_six[] =
	"mnemo-sites/2\n"
	"global\t\tg.c\t1\t0\tg\t0\t0\tsix/24:a@0,b@4,c@8,d@12,e@16,f@20\n"   /* S_GLOBAL */
	"loop\tmain\tg.c\t5\t2\t\t0\t0\t\n"      /* S_LOOP */
	"load\tmain\tg.c\t6\t3\t\t0\t2\t\n"      /* S_LD1, in S_LOOP */
	"load\tmain\tg.c\t7\t3\t\t0\t2\t\n";     /* S_LD2 */

/*
 * Folding across runs: run 1 reads a and d of every other element (LD1 at 0, 48, 96, LD2 at 12,
 * 60, 108: strides 48), run 2 of every third (LD1 at 24, 96, 168, LD2 at 36, 108, 180: strides
 * 72).  Each alone: inferred 48 or 72, a multiple of the declared 24, folded (used 24, fields 0
 * and 12, a and d).  Merged: strides gcd(48, 72) = 24, the declared size itself (source strides),
 * the same fields and names; either order gives the same section.
 */
static void test_folded_strides(void **state)
{
	static const uint64_t a1[] = { 0, 48, 96 }, b1[] = { 12, 60, 108 };
	static const uint64_t a2[] = { 24, 96, 168 }, b2[] = { 36, 108, 180 };
	static const char *const fields[] = {
		"- {offset: 0, name: a, bytes: 4, accesses: ",
		"- {offset: 12, name: d, bytes: 4, accesses: ",
	};
	struct mn_run *r;
	char why[256], *one, *two, *xy, *yx;
	void *x, *y;

	if (mn_run_create(&r, sites_six, sizeof(sites_six) - 1, why, sizeof(why)))
		fail_msg("the made-up site table: %s", why);
	x = made_up(r, 2400, 4, a1, b1, 3);
	y = made_up(r, 2400, 4, a2, b2, 3);
	one = mt_emit_text(SA, x, NULL);
	two = mt_emit_text(SA, y, NULL);
	if (!strstr(one, "size: {inferred: 48, declared: 24, agree: true, used: 24, "
		    "source: folded}") ||
	    !strstr(one, "do not split: all fields are used together") ||
	    !strstr(one, fields[0]) || !strstr(one, fields[1]))
		fail_msg("run 1, strides 48:\n%s", one);
	if (!strstr(two, "size: {inferred: 72, declared: 24, agree: true, used: 24, "
		    "source: folded}") || !strstr(two, fields[0]) || !strstr(two, fields[1]))
		fail_msg("run 2, strides 72:\n%s", two);
	xy = mt_emit_text(SA, mt_fold(SA, x, y), NULL);
	mt_state_free(SA, x);
	x = made_up(r, 2400, 4, a1, b1, 3);
	y = made_up(r, 2400, 4, a2, b2, 3);
	yx = mt_emit_text(SA, mt_fold(SA, y, x), NULL);
	mt_state_free(SA, y);
	expect_same(yx, xy, "merge(run 2, run 1) against merge(run 1, run 2)");
	if (!strstr(xy, "size: {inferred: 24, declared: 24, agree: true, used: 24, "
		    "source: strides}") || !strstr(xy, fields[0]) || !strstr(xy, fields[1]))
		fail_msg("merged section:\n%s", xy);
	free(one);
	free(two);
	free(xy);
	free(yx);
	mn_run_destroy(r);
}

/* Runs of different options do not merge: emit() fails (mnemo merge refuses them earlier). */
static void test_conflict(void **state)
{
	static const char *const env[][2] = {
		{ "MNEMO_AFFINITY_TOP", "5" },
		{ "MNEMO_AFFINITY_THRESHOLD", "0.5" },
		{ "MNEMO_AFFINITY_COST", "cache" },
	};
	static const uint64_t o[] = { 0, 16 };
	struct mn_run *r = made_up_run();

	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]) + 1; i++) {
		void *x, *y;
		int rc = 0;
		char *t;

		if (i < sizeof(env) / sizeof(env[0])) {
			setenv(env[i][0], env[i][1], 1);
		} else {   /* both cache, one with another L1 */
			setenv("MNEMO_AFFINITY_COST", "cache", 1);
			setenv("MNEMO_AFFINITY_L1_SIZE", "65536", 1);
		}
		x = made_up(r, 64, 4, o, o, 2);
		if (i < sizeof(env) / sizeof(env[0]))
			unsetenv(env[i][0]);
		else
			unsetenv("MNEMO_AFFINITY_L1_SIZE");
		y = made_up(r, 64, 4, o, o, 2);
		unsetenv("MNEMO_AFFINITY_COST");
		SA->merge(x, y);
		t = mt_emit_text(SA, x, &rc);
		if (t || rc != -EINVAL)
			fail_msg("case %zu: runs of different options merged (rc %d)", i, rc);
		mt_state_free(SA, x);
		mt_state_free(SA, y);
	}
	mn_run_destroy(r);
}

/* The 1-based line of the first occurrence of s in the file. */
static unsigned line_of(const char *path, const char *s)
{
	char *text = mt_read_file(path), *at = strstr(text, s);
	unsigned line = 1;

	if (!at)
		fail_msg("%s: no '%s'", path, s);
	for (char *c = text; c < at; c++)
		line += *c == '\n';
	free(text);
	return line;
}

/*
 * A malformed section: restore() returns -EINVAL and names the file, line and field.  Each case
 * replaces one piece of hotcold's profile (%1$u: the hot data object's site, %2$u and %3$u: the
 * loop and the site of its first stream); `at`, where the message must point: the line of this
 * text (NULL: of the replacement; "": the file only).
 */
static void test_bad_sections(void **state)
{
	static const struct {
		const char *from, *to, *want, *at;
	} cases[] = {
		{ "stride: 16, offset: 0,", "stride: sixteen, offset: 0,",
		  "field 'stride': expected an unsigned integer", NULL },
		{ "{site: %1$u, kind: global, instances:", "{site: %1$u, kind: sky, instances:",
		  "field 'kind'", NULL },
		{ "- {loop: %2$u, site: %3$u, cost: ", "- {loop: %2$u, site: %3$u, cost: -",
		  "field 'cost': expected an unsigned integer", NULL },
		{ "offset: 0, bytes: 4}", "bytes: 4}", "missing field 'offset'", NULL },
		{ "    other_streams:", "    others:", "missing field 'other_streams'", "" },
		{ "- {loop: %2$u, site: %3$u,", "- {loop: %2$u, site: 99999,",
		  "field 'site': site 99999 is not in the profile's site table", NULL },
		{ "{site: %1$u, kind: global, instances", "{site: %3$u, kind: global, instances",
		  "data object %1$u is not in 'objects'", "- {loop: %2$u, site: %3$u," },
		{ "threshold: 0.8", "threshold: high", "field 'threshold'", NULL },
	};
	char *good, *text, *at;
	const struct mn_pnode *st, *streams = NULL;
	struct mn_profile *gp;
	unsigned hot, loop, site;

	build("hotcold", "c");
	good = run("hotcold", "", "", "bad.good");
	text = mt_read_file(good);
	/* The first structure (the hottest), and the first stream listed under the structures. */
	gp = mt_open(good, MODULE);
	st = get(mn_profile_module(gp, MODULE), "structures");
	if (!mn_pnode_len(st))
		fail_msg("%s: no hot structure", good);
	hot = (unsigned)u64(mn_pnode_at(st, 0), "site");
	for (size_t i = 0; i < mn_pnode_len(st) && !mn_pnode_len(streams); i++)
		streams = get(mn_pnode_at(st, i), "streams");
	if (!mn_pnode_len(streams))
		fail_msg("%s: no stream", good);
	loop = (unsigned)u64(mn_pnode_at(streams, 0), "loop");
	site = (unsigned)u64(mn_pnode_at(streams, 0), "site");
	mn_profile_close(gp);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[64], *path, err[1024] = "", want[1200], from[256], to[256], msg[256];
		char mark[256];
		struct mn_profile *p;
		struct mn_run *r;
		FILE *f;
		void *st;
		int rc;

#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wformat-nonliteral"
		snprintf(from, sizeof(from), cases[i].from, hot, loop, site);
		snprintf(to, sizeof(to), cases[i].to, hot, loop, site);
		snprintf(msg, sizeof(msg), cases[i].want, hot, loop, site);
		snprintf(mark, sizeof(mark), cases[i].at ? cases[i].at : cases[i].to, hot, loop,
			 site);
#pragma clang diagnostic pop
		snprintf(name, sizeof(name), "bad%zu.yaml", i);
		path = path_of(name);
		at = strstr(text, from);
		if (!at)
			fail_msg("case %zu: '%s' not in the profile", i, from);
		f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
		fclose(f);
		p = mt_open(path, MODULE);
		r = run_of(&p, 1);
		rc = mt_try_restore(SA, r, p, &st, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, msg))
			fail_msg("case %zu: restore gave %d, '%s'; expected -EINVAL and '%s'", i,
				 rc, err, msg);
		/* The message begins with the file, and the line of the row at fault. */
		if (mark[0])
			snprintf(want, sizeof(want), "%s:%u:", path, line_of(path, mark));
		else
			snprintf(want, sizeof(want), "%s:", path);
		if (strncmp(err, want, strlen(want)))
			fail_msg("case %zu: '%s' does not begin with '%s'", i, err, want);
		mn_run_destroy(r);
		mn_profile_close(p);
		free(path);
	}
	free(text);
	free(good);
}

/* `mnemo merge -o work/<out>.yaml ARGS`: its exit status; stderr in err. */
static int mnemo_merge(const char *out, const char *args, char *err, size_t errlen)
{
	char name[256], *errpath;
	int rc;

	snprintf(name, sizeof(name), "%s.err", out);
	errpath = path_of(name);
	rc = shell("cd %s && %s/mnemo merge -o %s.yaml %s 2>%s", work, BINDIR, out, args, errpath);
	slurp(errpath, err, errlen);
	free(errpath);
	return rc;
}

/*
 * The tool itself (tools/merge.c) on this module: the same section as the merge above by hand, in
 * either order; merge(p) == p; profiles of different settings (top, sample_period, the cache
 * geometry) refused, naming the setting.
 */
static void test_mnemo_merge(void **state)
{
	static const struct {
		const char *env, *setting;
	} refused[] = {
		{ "MNEMO_AFFINITY_TOP=3", "setting 'top' differs" },
		{ "MNEMO_AFFINITY_TOP=1 MNEMO_AFFINITY_SAMPLE=2",
		  "setting 'sample_period' differs" },
	};
	char *p, *q, *r, *hand, *a, *b, *want, err[4096], args[2048], *c1, *c2, *x;

	if (shell("%s/mnemo merge --help >/dev/null 2>&1", BINDIR))
		skip();
	build("inputs", "c");
	p = run("inputs", "MNEMO_AFFINITY_TOP=1", "1 3 0 0", "tool.p");
	q = run("inputs", "MNEMO_AFFINITY_TOP=1", "1 0 5 1", "tool.q");
	r = run("inputs", "MNEMO_AFFINITY_TOP=1", "2 1 1 1", "tool.r");
	hand = merge("tool.hand", 3, p, q, r);
	snprintf(args, sizeof(args), "%s %s %s", p, q, r);
	if (mnemo_merge("tool.pqr", args, err, sizeof(err)))
		fail_msg("mnemo merge %s: %s", args, err);
	snprintf(args, sizeof(args), "%s %s %s", r, q, p);
	if (mnemo_merge("tool.rqp", args, err, sizeof(err)))
		fail_msg("mnemo merge %s: %s", args, err);
	want = section_text(hand);
	a = path_of("tool.pqr.yaml");
	b = path_of("tool.rqp.yaml");
	x = section_text(a);
	expect_same(x, want, "mnemo merge p q r against the merge by hand");
	free(x);
	x = section_text(b);
	expect_same(x, want, "mnemo merge r q p against the merge by hand");
	free(x);
	free(a);
	free(b);
	free(want);
	if (mnemo_merge("tool.self", p, err, sizeof(err)))
		fail_msg("mnemo merge %s: %s", p, err);
	a = path_of("tool.self.yaml");
	x = section_text(a);
	want = section_text(p);
	expect_same(x, want, "mnemo merge p against p");
	free(x);
	free(want);
	free(a);

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char out[64];

		snprintf(out, sizeof(out), "tool.other%zu", i);
		x = run("inputs", refused[i].env, "1 1 1 1", out);
		snprintf(args, sizeof(args), "%s %s", p, x);
		if (!mnemo_merge(out, args, err, sizeof(err)) || !strstr(err, refused[i].setting))
			fail_msg("mnemo merge of %s and %s: expected a refusal with \"%s\", "
				 "got '%s'", p, x, refused[i].setting, err);
		free(x);
	}
	c1 = run("inputs", "MNEMO_AFFINITY_COST=cache", "1", "tool.cache1");
	c2 = run("inputs", "MNEMO_AFFINITY_COST=cache MNEMO_AFFINITY_L1_SIZE=65536", "1",
		 "tool.cache2");
	snprintf(args, sizeof(args), "%s %s", c1, c2);
	if (!mnemo_merge("tool.cache", args, err, sizeof(err)) ||
	    !strstr(err, "setting 'cache' differs"))
		fail_msg("mnemo merge of two cache geometries: expected a refusal, got '%s'", err);
	free(c1);
	free(c2);
	free(hand);
	free(p);
	free(q);
	free(r);
}

static int setup(void **state)
{
	static const char *const vars[] = {
		"MNEMO_AFFINITY_SAMPLE", "MNEMO_AFFINITY_COST", "MNEMO_AFFINITY_TOP",
		"MNEMO_AFFINITY_THRESHOLD", "MNEMO_AFFINITY_L1_SIZE", "MNEMO_WORKERS",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	return mkdtemp(work) ? 0 : -1;
}

static int teardown(void **state)
{
	if (!getenv("MNEMO_TEST_KEEP"))
		shell("rm -rf %s", work);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strides),
		cmocka_unit_test(test_folded_strides),
		cmocka_unit_test(test_conflict),
		cmocka_unit_test(test_bad_sections),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_known_merge),
		cmocka_unit_test(test_laws),
		cmocka_unit_test(test_mnemo_merge),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
