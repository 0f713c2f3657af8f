/*
 * The structure-affinity module end to end on programs with known answers (programs/): built with
 * mnemo-cc -m structure-affinity -O1 (no vectorizer: a vectorized loop reads several fields in one
 * wide access), run with mnemo run --reproducible, the profile checked against answers worked out
 * by hand from StructSlim's equations and written in each program's opening comment, never copied
 * from output.  Data objects are found by the source line of their allocation, global or array:
 * the programs mark them MARK:<name>.  programs/six_fields.c is also built at -O2, without and with
 * -fno-unroll-loops -fno-vectorize -fno-slp-vectorize, and with its loops unrolled by a pragma:
 * the same answer, its strides of several elements folded into the declared size.
 */
#define _GNU_SOURCE
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

#include "profile.h"
#include "shell.h"

#define MODULE "structure-affinity"

/* No unrolling or vectorizing before instrumentation: strides are the source's (README, Limits). */
#define NO_UNROLL "-fno-unroll-loops -fno-vectorize -fno-slp-vectorize"

static char work[] = "/tmp/mnemo-affinity.XXXXXX";
static const char *prog, *prog_ext, *exe;
/* Where build_as() finds it: programs/, or threaded/ (threaded programs, apart so that the
 * scripts that run every program of programs/ and compare need not know of interleavings) */
static const char *progdir = PROGRAMS_DIR;

/* Builds programs/<name>.<ext> with the compiler options flags into work/<out>, run next. */
static void build_as(const char *name, const char *ext, const char *flags, const char *out)
{
	prog = name;
	prog_ext = ext;
	exe = out;
	assert_int_equal(shell("%s/mnemo-%s -m " MODULE " %s -g %s/%s.%s -o %s/%s", BINDIR,
			       strcmp(ext, "c") ? "c++" : "cc", flags, progdir, name, ext,
			       work, out), 0);
}

static void build(const char *name, const char *ext)
{
	build_as(name, ext, "-O1", name);
}

/* Runs the program built last with env (a prefix of `VAR=value ` words, or "") in its
 * environment; returns the profile, whose section must be there. */
static struct mn_profile *run_env(const char *env)
{
	char err[4096], path[600], why[512];
	struct mn_profile *p;

	if (shell("cd %s && %s %s/mnemo run --reproducible -o %s.yaml -- ./%s >%s.out 2>%s.err",
		  work, env, BINDIR, exe, exe, exe, exe)) {
		snprintf(path, sizeof(path), "%s/%s.err", work, exe);
		slurp(path, err, sizeof(err));
		fail_msg("%s: mnemo run failed: %s", exe, err);
	}
	snprintf(path, sizeof(path), "%s/%s.yaml", work, exe);
	if (mn_profile_open(&p, path, why, sizeof(why)))
		fail_msg("profile: %s", why);
	if (!mn_profile_module(p, MODULE))
		fail_msg("%s: no " MODULE " section", exe);
	return p;
}

static struct mn_profile *run(void)
{
	return run_env("");
}

static const struct mn_pnode *get(const struct mn_pnode *n, const char *key)
{
	const struct mn_pnode *v = mn_pnode_get(n, key);

	if (!v)
		fail_msg("%s: line %u: expected '%s'", exe, mn_pnode_line(n), key);
	return v;
}

static uint64_t u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_u64(get(n, key), &v))
		fail_msg("%s: line %u: expected an integer '%s'", exe, mn_pnode_line(n), key);
	return v;
}

static double f64(const struct mn_pnode *n, const char *key)
{
	double v = 0;

	if (mn_pnode_f64(get(n, key), &v))
		fail_msg("%s: line %u: expected a number '%s'", exe, mn_pnode_line(n), key);
	return v;
}

static const char *str(const struct mn_pnode *n, const char *key)
{
	const char *s = mn_pnode_str(get(n, key), NULL);

	if (!s)
		fail_msg("%s: line %u: expected a string '%s'", exe, mn_pnode_line(n), key);
	return s;
}

static void expect_near(double got, double want, const char *what)
{
	if (got < want - 1e-9 || got > want + 1e-9)
		fail_msg("%s: %s: expected %.12g, got %.12g", exe, what, want, got);
}

/*
 * The 1-based line of the program built last that ends a comment with MARK:<mark> (as
 * marked_line() of shell.h, which knows only .c files).
 */
static int mark_line(const char *mark)
{
	char path[512], line[512], tag[64];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.%s", progdir, prog, prog_ext);
	snprintf(tag, sizeof(tag), "MARK:%s */", mark);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot read %s", path);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, tag)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("%s: no line marked MARK:%s", path, mark);
	return 0;
}

/* The one site of kind `kind` on the line marked `mark`. */
static uint32_t site_at(const struct mn_profile *p, const char *kind, const char *mark)
{
	int line = mark_line(mark);
	uint32_t found = 0;

	for (size_t i = 0; i < mn_profile_site_count(p); i++) {
		const struct mn_site *s = mn_profile_site_at(p, i);

		if ((int)s->line == line && !strcmp(s->kind, kind)) {
			if (found)
				fail_msg("%s: two %s sites on the line marked %s", exe, kind,
					 mark);
			found = s->id;
		}
	}
	if (!found)
		fail_msg("%s: no %s site on the line marked %s (line %d)", exe, kind, mark, line);
	return found;
}

/* The analysis of the data object of kind `kind` marked `mark`: it must be among the hot ones. */
static const struct mn_pnode *structure(const struct mn_profile *p, const char *kind,
					const char *mark)
{
	char key[32];

	snprintf(key, sizeof(key), "site_%u", site_at(p, kind, mark));
	return get(get(mn_profile_module(p, MODULE), "structures"), key);
}

/* Size: inferred (0: must be null, unknown), declared (0: null), the source used. */
static void expect_size(const struct mn_pnode *s, uint64_t inferred, uint64_t declared,
			const char *source)
{
	const struct mn_pnode *z = get(s, "size");

	if (inferred)
		assert_int_equal(u64(z, "inferred"), inferred);
	else if (!mn_pnode_is_null(get(z, "inferred")))
		fail_msg("%s: size.inferred: expected null (unknown), got %s", exe,
			 mn_pnode_str(get(z, "inferred"), NULL));
	if (declared)
		assert_int_equal(u64(z, "declared"), declared);
	else
		assert_true(mn_pnode_is_null(get(z, "declared")));
	assert_string_equal(str(z, "source"), source);
}

/* The fields' offsets are exactly off[0..n). */
static void expect_fields(const struct mn_pnode *s, const uint64_t *off, size_t n)
{
	const struct mn_pnode *f = get(s, "fields");

	if (mn_pnode_len(f) != n)
		fail_msg("%s: expected %zu fields, got %zu", exe, n, mn_pnode_len(f));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(u64(mn_pnode_at(f, i), "offset"), off[i]);
}

/*
 * The fields' names are exactly name[0..n) (NULL: no name), and the structure is declared as
 * type: the site table's `fields` of the data object's site (pass/README.md).
 */
static void expect_names(const struct mn_pnode *s, const char *type, const char *const *name,
			 size_t n)
{
	const struct mn_pnode *f = get(s, "fields");

	assert_string_equal(str(s, "type"), type);
	if (mn_pnode_len(f) != n)
		fail_msg("%s: expected %zu fields, got %zu", exe, n, mn_pnode_len(f));
	for (size_t i = 0; i < n; i++) {
		const struct mn_pnode *got = mn_pnode_get(mn_pnode_at(f, i), "name");

		if (!name[i] && got)
			fail_msg("%s: field %zu: expected no name, got '%s'", exe, i,
				 mn_pnode_str(got, NULL));
		if (name[i] && !got)
			fail_msg("%s: field %zu: expected name '%s', got none", exe, i, name[i]);
		if (name[i])
			assert_string_equal(mn_pnode_str(got, NULL), name[i]);
	}
}

static const struct mn_pnode *field(const struct mn_pnode *s, uint64_t off)
{
	const struct mn_pnode *f = get(s, "fields");

	for (size_t i = 0; i < mn_pnode_len(f); i++)
		if (u64(mn_pnode_at(f, i), "offset") == off)
			return mn_pnode_at(f, i);
	fail_msg("%s: no field at offset %llu", exe, (unsigned long long)off);
	return NULL;
}

/* A(i, j) from the matrix: the row of field i, the column named j. */
static double affinity(const struct mn_pnode *s, uint64_t i, uint64_t j)
{
	const struct mn_pnode *m = get(s, "affinity");
	char col[32];

	snprintf(col, sizeof(col), "%llu", (unsigned long long)j);
	for (size_t r = 0; r < mn_pnode_len(m); r++)
		if (u64(mn_pnode_at(m, r), "field") == i)
			return f64(mn_pnode_at(m, r), col);
	fail_msg("%s: no affinity row for field %llu", exe, (unsigned long long)i);
	return 0;
}

static void expect_advice(const struct mn_pnode *s, const char *want)
{
	assert_string_equal(str(s, "advice"), want);
}

/*
 * Figure 1: size 16, fields 0, 4, 8, 12 of 4 bytes, 8000 accesses each (4 rounds of a write and a
 * read loop over 1000 elements); A = 1 within {0, 8} and {4, 12}, 0 across.  The loop marked
 * loop_ac touches exactly 0 and 8.  The fields are named a, b, c, d: the pass finds C malloc's
 * type from the pointer variable `struct type *arr` its result is assigned to.
 */
static void test_figure1(void **state)
{
	static const uint64_t off[] = { 0, 4, 8, 12 };
	static const char *const names[] = { "a", "b", "c", "d" };
	const struct mn_pnode *s, *loops, *c;
	struct mn_profile *p;
	uint32_t loop_ac;
	bool seen = false;

	build("fig1", "c");
	p = run();
	s = structure(p, "alloc", "arr");
	assert_string_equal(str(s, "kind"), "heap");
	assert_int_equal(u64(s, "instances"), 1);
	assert_int_equal(u64(s, "bytes"), 16000);
	expect_near(f64(s, "share"), 1.0, "share");
	expect_size(s, 16, 16, "strides");
	expect_fields(s, off, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(u64(field(s, off[i]), "bytes"), 4);
		assert_int_equal(u64(field(s, off[i]), "cost"), 8000);
		for (int j = 0; j < 4; j++)
			expect_near(affinity(s, off[i], off[j]), (i & 1) == (j & 1) ? 1.0 : 0.0,
				    "affinity");
	}
	c = get(s, "clusters");
	assert_int_equal(mn_pnode_len(c), 2);
	expect_names(s, "type", names, 4);
	expect_advice(s, "split into {a, c} and {b, d}");

	/* The profile's sites carry the static loops and the layout the module used. */
	assert_string_equal(mn_profile_site(p, site_at(p, "alloc", "arr"))->fields,
			    "type/16:a@0,b@4,c@8,d@12");
	loop_ac = site_at(p, "loop", "loop_ac");
	for (size_t i = 0; i < mn_pnode_len(get(s, "streams")); i++) {
		const struct mn_pnode *r = mn_pnode_at(get(s, "streams"), i);

		assert_int_equal(mn_profile_site(p, (uint32_t)u64(r, "site"))->loop,
				 u64(r, "loop"));
	}
	loops = get(s, "loops");
	for (size_t i = 0; i < mn_pnode_len(loops); i++) {
		const struct mn_pnode *l = mn_pnode_at(loops, i), *f = get(l, "fields");
		uint64_t a, b;

		if (u64(l, "loop") != loop_ac)
			continue;
		seen = true;
		assert_int_equal(mn_pnode_len(f), 2);
		assert_int_equal(mn_pnode_u64(mn_pnode_at(f, 0), &a), 0);
		assert_int_equal(mn_pnode_u64(mn_pnode_at(f, 1), &b), 0);
		assert_int_equal(a, 0);
		assert_int_equal(b, 8);
	}
	assert_true(seen);
	mn_profile_close(p);
}

/*
 * The cache model: the same advice; every access costs at least the L1 latency; the total is
 * the modeled levels' latencies times the lines found there (16000 bytes fit the 32 KiB L1, so
 * after the first round everything hits: at least 250 cold lines, the rest L1).
 */
static void test_figure1_cache(void **state)
{
	const struct mn_pnode *sec, *lines, *s;
	struct mn_profile *p;
	uint64_t l1, l2, mem;

	build("fig1", "c");
	p = run_env("MNEMO_AFFINITY_COST=cache");
	sec = mn_profile_module(p, MODULE);
	assert_string_equal(str(sec, "cost"), "cache");
	lines = get(sec, "cache_lines");
	l1 = u64(lines, "l1");
	l2 = u64(lines, "l2");
	mem = u64(lines, "memory");
	assert_int_equal(u64(get(sec, "totals"), "cost"), 4 * l1 + 12 * l2 + 200 * mem);
	assert_true(mem >= 250);
	assert_int_equal(l1 + l2 + mem, u64(get(sec, "totals"), "accesses"));
	s = structure(p, "alloc", "arr");
	expect_size(s, 16, 16, "strides");
	expect_advice(s, "split into {a, c} and {b, d}");
	mn_profile_close(p);

	/* Other latencies and threshold, read from the environment. */
	p = run_env("MNEMO_AFFINITY_COST=cache MNEMO_AFFINITY_L1_LATENCY=1 "
		    "MNEMO_AFFINITY_L2_LATENCY=0 MNEMO_AFFINITY_MEMORY_LATENCY=0 "
		    "MNEMO_AFFINITY_THRESHOLD=0");
	sec = mn_profile_module(p, MODULE);
	assert_int_equal(u64(get(sec, "totals"), "cost"), u64(get(sec, "cache_lines"), "l1"));
	expect_advice(structure(p, "alloc", "arr"), "do not split: all fields are used together");
	mn_profile_close(p);
}

/* A bad option is a clear error, and no profile. */
static void test_bad_option(void **state)
{
	char path[600], err[4096];

	build("fig1", "c");
	shell("cd %s && MNEMO_AFFINITY_TOP=0 %s/mnemo run --reproducible -o bad.yaml -- ./fig1 "
	      ">bad.out 2>bad.err", work, BINDIR);
	snprintf(path, sizeof(path), "%s/bad.err", work);
	slurp(path, err, sizeof(err));
	if (!strstr(err, "MNEMO_AFFINITY_TOP='0': expected an integer from 1 to"))
		fail_msg("expected the bad MNEMO_AFFINITY_TOP named on stderr, got: %s", err);
	snprintf(path, sizeof(path), "%s/bad.yaml", work);
	assert_int_not_equal(access(path, F_OK), 0);
}

/* Always used together (a stack array): size 24, fields 0, 8, 16 (x, y, z), every affinity 1. */
static void test_together(void **state)
{
	static const uint64_t off[] = { 0, 8, 16 };
	static const char *const names[] = { "x", "y", "z" };
	const struct mn_pnode *s;
	struct mn_profile *p;

	build("together", "c");
	p = run();
	s = structure(p, "stack", "pts");
	assert_string_equal(str(s, "kind"), "stack");
	expect_size(s, 24, 24, "strides");
	expect_fields(s, off, 3);
	expect_names(s, "point", names, 3);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			expect_near(affinity(s, off[i], off[j]), 1.0, "affinity");
	assert_int_equal(mn_pnode_len(get(s, "clusters")), 1);
	expect_advice(s, "do not split: all fields are used together");
	mn_profile_close(p);
}

/* Hot and cold pairs (a global): costs 10N, 10N, N, N; A(hot, cold) = 2/11. */
static void test_hot_cold(void **state)
{
	static const uint64_t off[] = { 0, 4, 8, 12 }, cost[] = { 10000, 10000, 1000, 1000 };
	static const char *const names[] = { "hot1", "hot2", "cold1", "cold2" };
	const struct mn_pnode *s;
	struct mn_profile *p;

	build("hotcold", "c");
	p = run();
	s = structure(p, "global", "table");
	assert_string_equal(str(s, "kind"), "global");
	expect_size(s, 16, 16, "strides");
	expect_fields(s, off, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(u64(field(s, off[i]), "cost"), cost[i]);
		expect_near(f64(field(s, off[i]), "share"), cost[i] / 22000.0, "field share");
	}
	expect_near(affinity(s, 0, 4), 1.0, "A(hot1, hot2)");
	expect_near(affinity(s, 8, 12), 1.0, "A(cold1, cold2)");
	expect_near(affinity(s, 0, 8), 2.0 / 11, "A(hot1, cold1)");
	expect_near(affinity(s, 12, 4), 2.0 / 11, "A(cold2, hot2)");
	expect_names(s, "rec", names, 4);
	expect_advice(s, "split into {hot1, hot2} and {cold1, cold2}");
	mn_profile_close(p);
}

/* Records walked char by char (named.c): size 32, not 1; the rotated walk is one field, name. */
static void test_named(void **state)
{
	static const uint64_t off[] = { 0, 4, 16, 24 }, cost[] = { 11000, 23000, 11000, 11000 };
	static const char *const names[] = { "id", "name", "v", "w" };
	const struct mn_pnode *s;
	struct mn_profile *p;

	build("named", "c");
	p = run();
	s = structure(p, "global", "recs");
	expect_size(s, 32, 32, "strides");
	expect_fields(s, off, 4);
	expect_names(s, "rec", names, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(u64(field(s, off[i]), "cost"), cost[i]);
	expect_near(affinity(s, 0, 16), 10.0 / 11, "A(id, v)");
	expect_near(affinity(s, 0, 4), 0, "A(id, name)");
	expect_near(affinity(s, 4, 24), 0, "A(name, w)");
	expect_advice(s, "split into {id, v}, {name} and {w}");
	mn_profile_close(p);
}

/*
 * Threads (threaded/threads.c): hotcold.c's work over four threads, each on an array of its own
 * that the main thread frees.  Every thread's accesses come (complete: true) and give hotcold.c's
 * answers: one heap data object of four instances and 22000 accesses, size 16 from strides (no
 * declared type: fields by offset), the same costs, affinities and advice.  With cost: cache (a cache model per thread) too, complete
 * and every access counted.
 */
static void test_threads(void **state)
{
	static const uint64_t off[] = { 0, 4, 8, 12 }, cost[] = { 10000, 10000, 1000, 1000 };
	const struct mn_pnode *s;
	struct mn_profile *p;
	const char *why = NULL;

	progdir = THREADED_DIR;
	build_as("threads", "c", "-O1 -pthread", "threads");
	p = run();
	if (!mn_profile_complete(p, &why))
		fail_msg("threads: complete: false: %s", why ? why : "?");
	s = structure(p, "alloc", "table");
	assert_int_equal(u64(s, "instances"), 4);
	assert_int_equal(u64(s, "accesses"), 22000);
	expect_size(s, 16, 0, "strides");
	expect_fields(s, off, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(u64(field(s, off[i]), "cost"), cost[i]);
	expect_near(affinity(s, 0, 4), 1.0, "A(hot1, hot2)");
	expect_near(affinity(s, 8, 12), 1.0, "A(cold1, cold2)");
	expect_near(affinity(s, 0, 8), 2.0 / 11, "A(hot1, cold1)");
	expect_advice(s, "split into {0, 4} and {8, 12}");
	mn_profile_close(p);

	p = run_env("MNEMO_AFFINITY_COST=cache");
	if (!mn_profile_complete(p, &why))
		fail_msg("threads, cost: cache: complete: false: %s", why ? why : "?");
	s = structure(p, "alloc", "table");
	assert_int_equal(u64(s, "accesses"), 22000);
	expect_size(s, 16, 0, "strides");
	expect_fields(s, off, 4);
	mn_profile_close(p);
	progdir = PROGRAMS_DIR;
}

/*
 * A linked list: nodes from one malloc give size 24 from strides; separately allocated nodes
 * give no stride, an explicit unknown size, and fields by offset from each node.  Both: key and
 * next together, val apart (A = 0.5).
 */
static void test_list(void **state)
{
	static const uint64_t off[] = { 0, 8, 16 };
	const struct mn_pnode *s;
	struct mn_profile *p;

	build("list", "c");
	p = run();
	s = structure(p, "alloc", "contig");
	assert_int_equal(u64(s, "instances"), 1);
	expect_size(s, 24, 24, "strides");
	expect_fields(s, off, 3);
	expect_near(affinity(s, 0, 16), 1.0, "contig A(key, next)");
	expect_near(affinity(s, 0, 8), 0.5, "contig A(key, val)");
	expect_advice(s, "split into {key, next} and {val}");

	s = structure(p, "alloc", "separate");
	assert_int_equal(u64(s, "instances"), 1000);
	expect_size(s, 0, 0, "object");
	assert_true(mn_pnode_is_null(get(get(s, "size"), "used")));
	assert_non_null(strstr(str(s, "unknown_because"), "no stream touched one instance"));
	expect_fields(s, off, 3);
	expect_near(affinity(s, 0, 16), 1.0, "separate A(key, next)");
	expect_near(affinity(s, 8, 16), 0.5, "separate A(val, next)");
	/* nodes[j] = malloc(...): a store into an array element tells the pass no type, so the
	 * fields have no names (pass/README.md, "The site table"). */
	assert_null(mn_pnode_get(s, "type"));
	expect_advice(s, "split into {0, 16} and {8}");
	mn_profile_close(p);
}

/* Two structures in the same loops, each analysed on its own. */
static void test_two_structs(void **state)
{
	static const uint64_t off_a[] = { 0, 4, 8 }, off_b[] = { 0, 8, 16 };
	const struct mn_pnode *s;
	struct mn_profile *p;

	build("two_structs", "c");
	p = run();
	s = structure(p, "alloc", "pa");
	expect_size(s, 12, 12, "strides");
	expect_fields(s, off_a, 3);
	expect_near(affinity(s, 0, 8), 1.0, "a3 A(a, c)");
	expect_near(affinity(s, 0, 4), 0.0, "a3 A(a, b)");
	expect_advice(s, "split into {a, c} and {b}");
	s = structure(p, "alloc", "pb");
	expect_size(s, 24, 24, "strides");
	expect_fields(s, off_b, 3);
	expect_near(affinity(s, 0, 16), 1.0, "b3 A(x, z)");
	expect_near(affinity(s, 8, 16), 0.0, "b3 A(y, z)");
	expect_advice(s, "split into {x, z} and {y}");
	mn_profile_close(p);
}

/* C++ new[]: the site table declares the type (16 bytes), reported beside the inferred 16. */
static void test_declared(void **state)
{
	const struct mn_pnode *s;
	struct mn_profile *p;
	bool agree = false;

	build("declared", "cpp");
	p = run();
	s = structure(p, "alloc", "arr");
	expect_size(s, 16, 16, "strides");
	assert_int_equal(mn_pnode_bool(get(get(s, "size"), "agree"), &agree), 0);
	assert_true(agree);
	assert_string_equal(str(s, "type"), "type");
	expect_advice(s, "split into {a, c} and {b, d}");
	mn_profile_close(p);
}

/* The fields of programs/six_fields.c by the loop that touches them: {a, d}, {b, e, f}, {c}. */
static const uint64_t six_group[3][3] = { { 0, 12 }, { 4, 16, 20 }, { 8 } };
static const size_t six_group_len[3] = { 2, 3, 1 };

static int six_group_of(uint64_t off)
{
	for (int g = 0; g < 3; g++)
		for (size_t k = 0; k < six_group_len[g]; k++)
			if (six_group[g][k] == off)
				return g;
	return -1;
}

/*
 * six_fields built with flags into out: used size 24 whatever the strides, six fields a to f at
 * 0 to 20, each named once, 2400 accesses each; A = 1 within a group, 0 across; three clusters,
 * the groups; every loop touches exactly one group, every group has a loop.  inferred: the
 * expected inferred size, 24 (source strides) or a multiple of it (source folded); 0: whatever
 * multiple of 24 the optimizer's strides give.
 */
static void check_six(const char *flags, const char *out, uint64_t inferred)
{
	static const uint64_t off[] = { 0, 4, 8, 12, 16, 20 };
	static const char *const names[] = { "a", "b", "c", "d", "e", "f" };
	const struct mn_pnode *s, *z, *loops, *c;
	bool agree = false, seen[3] = { false };
	struct mn_profile *p;
	uint64_t got;

	build_as("six_fields", "c", flags, out);
	p = run();
	s = structure(p, "alloc", "arr");
	z = get(s, "size");
	got = u64(z, "inferred");
	print_message("six_fields %s: size inferred %llu, used %llu, source %s; advice: %s\n",
		      flags, (unsigned long long)got, (unsigned long long)u64(z, "used"),
		      str(z, "source"), str(s, "advice"));
	if (inferred && got != inferred)
		fail_msg("six_fields %s: size.inferred: expected %llu, got %llu", flags,
			 (unsigned long long)inferred, (unsigned long long)got);
	if (!got || got % 24)
		fail_msg("six_fields %s: size.inferred: expected a multiple of 24, got %llu", flags,
			 (unsigned long long)got);
	expect_size(s, got, 24, got == 24 ? "strides" : "folded");
	assert_int_equal(u64(z, "used"), 24);
	assert_int_equal(mn_pnode_bool(get(z, "agree"), &agree), 0);
	assert_true(agree);
	expect_fields(s, off, 6);
	expect_names(s, "six", names, 6);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(u64(field(s, off[i]), "cost"), 2400);
		for (int j = 0; j < 6; j++)
			expect_near(affinity(s, off[i], off[j]),
				    six_group_of(off[i]) == six_group_of(off[j]) ? 1.0 : 0.0,
				    "affinity");
	}
	c = get(s, "clusters");
	assert_int_equal(mn_pnode_len(c), 3);
	for (int g = 0; g < 3; g++) {
		const struct mn_pnode *cl = mn_pnode_at(c, (size_t)g);

		assert_int_equal(mn_pnode_len(cl), six_group_len[g]);
		for (size_t k = 0; k < six_group_len[g]; k++) {
			assert_int_equal(mn_pnode_u64(mn_pnode_at(cl, k), &got), 0);
			assert_int_equal(got, six_group[g][k]);
		}
	}
	expect_advice(s, "split into {a, d}, {b, e, f} and {c}");

	/* Unrolled or not, a loop's fields are one group (the optimizer may make several loops of
	 * one source loop: a remainder, a prologue). */
	loops = get(s, "loops");
	for (size_t i = 0; i < mn_pnode_len(loops); i++) {
		const struct mn_pnode *f = get(mn_pnode_at(loops, i), "fields");
		uint64_t first;
		int g;

		assert_true(mn_pnode_len(f) > 0);
		assert_int_equal(mn_pnode_u64(mn_pnode_at(f, 0), &first), 0);
		g = six_group_of(first);
		assert_true(g >= 0);
		if (mn_pnode_len(f) != six_group_len[g])
			fail_msg("six_fields %s: loop row %zu: expected the %zu fields of one "
				 "group, got %zu", flags, i, six_group_len[g], mn_pnode_len(f));
		for (size_t k = 0; k < six_group_len[g]; k++) {
			assert_int_equal(mn_pnode_u64(mn_pnode_at(f, k), &got), 0);
			assert_int_equal(got, six_group[g][k]);
		}
		seen[g] = true;
	}
	assert_true(seen[0] && seen[1] && seen[2]);
	/* Every stream's field is its offset folded modulo 24. */
	for (size_t i = 0; i < mn_pnode_len(get(s, "streams")); i++) {
		const struct mn_pnode *r = mn_pnode_at(get(s, "streams"), i);

		assert_int_equal(u64(r, "field"), u64(r, "offset") % 24);
	}
	mn_profile_close(p);
}

/*
 * Six fields, three loops (programs/six_fields.c): size 24 and every field named once, whether the
 * strides are one element (-O1; -O2 with or without the options that keep loops as written) or
 * several because the loops were unrolled (`unroll_count`: strides 48 and 72, folded into the
 * declared 24).
 */
static void test_six_fields(void **state)
{
	check_six("-O1", "six_o1", 24);
	check_six("-O2 " NO_UNROLL, "six_o2", 24);
	check_six("-O2", "six_o2_opt", 0);
	check_six("-O1 -DUNROLL=2 " NO_UNROLL, "six_u2", 48);
	check_six("-O2 -DUNROLL=3 " NO_UNROLL, "six_u3", 72);
	check_six("-O2 -DUNROLL=2", "six_u2_opt", 0);
}

static int setup(void **state)
{
	return mkdtemp(work) ? 0 : -1;
}

static int teardown(void **state)
{
	if (!getenv("MNEMO_KEEP"))
		shell("rm -rf %s", work);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure1),
		cmocka_unit_test(test_figure1_cache),
		cmocka_unit_test(test_bad_option),
		cmocka_unit_test(test_together),
		cmocka_unit_test(test_hot_cold),
		cmocka_unit_test(test_named),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_two_structs),
		cmocka_unit_test(test_declared),
		cmocka_unit_test(test_six_fields),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
