/*
 * The dependence module end to end on programs with known answers (tests/dependence/programs/):
 * each is built with mnemo-cc -m dependence, run with mnemo run, and its profile checked against
 * answers written by hand from the rules of modules/dependence/README.md, never copied from output.
 * Every program's profile must also be byte-identical with -j 1, 2 and 4.
 *
 * Sites are found by source line: the programs mark lines with MARK:<name>, and a check names a
 * line and a site kind (load, store, loop, function).  The checks add up every row whose sites
 * are on the named lines, so they hold whatever the optimizer duplicated.
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
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile.h"
#include "shell.h"

static char work[] = "/tmp/mnemo-dep.XXXXXX";
static const char *prog;   /* the program under test: build() sets it */
static const char *progdir = PROGRAMS_DIR;   /* where it is */

static int mark_line(const char *program, const char *mark)
{
	int n = marked_line(progdir, program, mark);

	if (!n)
		fail_msg("%s.c: no line marked MARK:%s", program, mark);
	return n;
}

/* Builds dir/<name>.c with mnemo-cc -m dependence into the work directory. */
static void build_in(const char *dir, const char *name, const char *opt)
{
	assert_int_equal(shell("%s/mnemo-cc -m dependence %s -g %s/%s.c -o %s/%s", BINDIR, opt, dir,
			       name, work, name), 0);
}

static void build(const char *name)
{
	prog = name;
	progdir = PROGRAMS_DIR;
	build_in(PROGRAMS_DIR, name, "-O1");
}

/*
 * Runs work/<name> under `mnemo run --reproducible -j J` with the environment additions env
 * ("" for none) into work/<name>.<tag>.yaml; returns mnemo run's exit status, stderr in err.
 */
static int run(const char *name, const char *env, unsigned j, const char *tag, char *err,
	       size_t errlen)
{
	char path[600];
	int st;

	st = shell("cd %s && env -u MNEMO_DEP_LOOP -u MNEMO_DEP_CONTEXT -u MNEMO_DEP_CLOCK_LIMIT "
		   "%s %s/mnemo run --reproducible -j %u -o %s.%s.yaml -- ./%s >%s.out 2>%s.err",
		   work, env, BINDIR, j, name, tag, name, name, name);
	snprintf(path, sizeof(path), "%s/%s.err", work, name);
	if (err)
		slurp(path, err, errlen);
	return st;
}

/* Profiles name with -j 1, 2 and 4, checks the three identical, returns the -j 1 profile. */
static struct mn_profile *profile(const char *name, const char *env)
{
	char err[4096], path[600], why[512];
	struct mn_profile *p;

	for (unsigned j = 1; j <= 4; j *= 2) {
		char tag[16];

		snprintf(tag, sizeof(tag), "j%u", j);
		if (run(name, env, j, tag, err, sizeof(err)))
			fail_msg("%s -j %u: mnemo run failed: %s", name, j, err);
	}
	for (unsigned j = 2; j <= 4; j *= 2)
		if (shell("cmp -s %s/%s.j1.yaml %s/%s.j%u.yaml", work, name, work, name, j))
			fail_msg("%s: the profile with -j %u differs from -j 1", name, j);
	snprintf(path, sizeof(path), "%s/%s.j1.yaml", work, name);
	if (mn_profile_open(&p, path, why, sizeof(why)))
		fail_msg("profile: %s", why);
	assert_non_null(mn_profile_module(p, "dependence"));
	return p;
}

static uint64_t u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_u64(mn_pnode_get(n, key), &v))
		fail_msg("row at line %u: no integer '%s'", mn_pnode_line(n), key);
	return v;
}

/* Is site id on the line marked `mark` of the program under test, of the given kind? */
static bool at(const struct mn_profile *p, uint64_t id, const char *mark, const char *kind)
{
	const struct mn_site *s = mn_profile_site(p, (uint32_t)id);

	return s && (int)s->line == mark_line(prog, mark) && !strcmp(s->kind, kind);
}

/* The same for an access given as "kind:mark", e.g. "store:body". */
static bool at_access(const struct mn_profile *p, uint64_t id, const char *access)
{
	char kind[32];
	const char *colon = strchr(access, ':');

	assert_non_null(colon);
	snprintf(kind, sizeof(kind), "%.*s", (int)(colon - access), access);
	return at(p, id, colon + 1, kind);
}

/* A via of a row: absent when want is NULL, else the function marked want. */
static bool via_is(const struct mn_profile *p, const struct mn_pnode *e, const char *key,
		  const char *want)
{
	const struct mn_pnode *v = mn_pnode_get(e, key);

	return want ? v && at(p, u64(e, key), want, "function") : !v;
}

static const struct mn_pnode *rows(const struct mn_profile *p, const char *key)
{
	const struct mn_pnode *n = mn_pnode_get(mn_profile_module(p, "dependence"), key);

	assert_int_equal(mn_pnode_kind(n), MN_PNODE_SEQ);
	return n;
}

/*
 * Asserts the rows of loop `loop` (a mark, or NULL for loop 0) of the given kind from access src
 * to access dst ("kind:mark"), carried or not, whose src_via and dst_via are the functions marked
 * so (NULL: no via): together, count dynamic accesses and, carried, distances dmin to dmax.
 */
static void expect_dep(const struct mn_profile *p, const char *loop, const char *kind,
		       const char *src, const char *dst, bool carried, const char *src_via,
		       const char *dst_via, uint64_t count, uint64_t dmin, uint64_t dmax)
{
	const struct mn_pnode *r = rows(p, "dependences");
	uint64_t n = 0, lo = UINT64_MAX, hi = 0;
	int found = 0;

	for (size_t i = 0; i < mn_pnode_len(r); i++) {
		const struct mn_pnode *e = mn_pnode_at(r, i);
		bool c = false;

		assert_int_equal(mn_pnode_bool(mn_pnode_get(e, "carried"), &c), 0);
		if ((loop ? !at(p, u64(e, "loop"), loop, "loop") : u64(e, "loop") != 0) ||
		    strcmp(mn_pnode_str(mn_pnode_get(e, "kind"), NULL), kind) || c != carried ||
		    !at_access(p, u64(e, "src"), src) || !at_access(p, u64(e, "dst"), dst) ||
		    !via_is(p, e, "src_via", src_via) || !via_is(p, e, "dst_via", dst_via))
			continue;
		found++;
		n += u64(e, "count");
		if (carried) {
			lo = u64(e, "min_distance") < lo ? u64(e, "min_distance") : lo;
			hi = u64(e, "max_distance") > hi ? u64(e, "max_distance") : hi;
		}
	}
	if (!found)
		fail_msg("%s: expected a %s row %s -> %s in loop %s, got none", prog, kind, src,
			 dst, loop ? loop : "0");
	assert_int_equal(n, count);
	if (carried) {
		assert_int_equal(lo, dmin);
		assert_int_equal(hi, dmax);
	}
}

/* Rows whose loop is on the line marked `loop` (NULL: loop 0). */
static int rows_of_loop(const struct mn_profile *p, const char *loop)
{
	const struct mn_pnode *r = rows(p, "dependences");
	int n = 0;

	for (size_t i = 0; i < mn_pnode_len(r); i++) {
		uint64_t l = u64(mn_pnode_at(r, i), "loop");

		n += loop ? at(p, l, loop, "loop") : l == 0;
	}
	return n;
}

/* The loop on the line marked `loop`: its invocations and iterations, summed over its sites. */
static void expect_loop(const struct mn_profile *p, const char *loop, uint64_t invocations,
			uint64_t iterations)
{
	const struct mn_pnode *r = rows(p, "loops");
	uint64_t inv = 0, it = 0;
	int n = 0;

	for (size_t i = 0; i < mn_pnode_len(r); i++) {
		const struct mn_pnode *e = mn_pnode_at(r, i);

		if (!at(p, u64(e, "loop"), loop, "loop"))
			continue;
		n++;
		inv += u64(e, "invocations");
		it += u64(e, "iterations");
	}
	if (!n)
		fail_msg("%s: the loop marked %s is not in loops:", prog, loop);
	assert_int_equal(inv, invocations);
	assert_int_equal(it, iterations);
}

/* lost: must be all zero in these programs. */
static void expect_nothing_lost(const struct mn_profile *p)
{
	const struct mn_pnode *l = mn_pnode_get(mn_profile_module(p, "dependence"), "lost");

	assert_int_equal(u64(l, "aliases"), 0);
	assert_int_equal(u64(l, "nomem"), 0);
	assert_int_equal(u64(l, "clipped"), 0);
	assert_int_equal(u64(l, "clock_resets"), 0);
}

/* ---- The programs ---------------------------------------------------------------------------- */

/*
 * Per iteration, on the heap and then on the stack (2 x 100 iterations): st8 writes the last 4
 * bytes of one page and the first 4 of the next, ld4 reads the second page's 4, ld16 one word
 * on each side.  In the loop: raw st8 -> ld4 and st8 -> ld16 inside each iteration (200 each:
 * ld16 once per access though both its words found st8), waw st8 -> st8 and war ld16 -> st8
 * (ld16 read both words after ld4) at distance 1 (2 x 99).  Nothing clipped.
 */
static void test_straddle(void **state)
{
	struct mn_profile *p;

	build("straddle");
	p = profile("straddle", "");
	expect_loop(p, "loop", 2, 200);
	expect_dep(p, "loop", "raw", "store:st8", "load:ld4", false, NULL, NULL, 200, 0, 0);
	expect_dep(p, "loop", "raw", "store:st8", "load:ld16", false, NULL, NULL, 200, 0, 0);
	expect_dep(p, "loop", "waw", "store:st8", "store:st8", true, NULL, NULL, 198, 1, 1);
	expect_dep(p, "loop", "war", "load:ld16", "store:st8", true, NULL, NULL, 198, 1, 1);
	assert_int_equal(rows_of_loop(p, "loop"), 4);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* a[i] = a[i - 1] + 1 for i in 1..99: 98 carried reads at distance 1 (a[0] is never written). */
static void test_carried(void **state)
{
	struct mn_profile *p;

	build("carried");
	p = profile("carried", "");
	expect_loop(p, "loop", 1, 99);
	expect_dep(p, "loop", "raw", "store:body", "load:body", true, NULL, NULL, 98, 1, 1);
	assert_int_equal(rows_of_loop(p, "loop"), 1);
	/* the printf reads a[99], written by an invocation that is over: loop 0 */
	expect_dep(p, NULL, "raw", "store:body", "load:print", false, NULL, NULL, 1, 0, 0);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* a[i] = a[i] * 2: one write-after-read per iteration, inside it; b[i] = i; s += b[i]: one
 * read-after-write per iteration, inside it.  What a[] held came from another loop: loop 0. */
static void test_intra(void **state)
{
	struct mn_profile *p;

	build("intra");
	p = profile("intra", "");
	expect_loop(p, "twice", 1, 100);
	expect_dep(p, "twice", "war", "load:twice_body", "store:twice_body", false,
		   NULL, NULL, 100, 0, 0);
	assert_int_equal(rows_of_loop(p, "twice"), 1);
	expect_dep(p, "use", "raw", "store:use_store", "load:use_load", false,
		   NULL, NULL, 100, 0, 0);
	assert_int_equal(rows_of_loop(p, "use"), 1);
	assert_int_equal(rows_of_loop(p, "init"), 0);
	expect_dep(p, NULL, "raw", "store:init_body", "load:twice_body", false,
		   NULL, NULL, 100, 0, 0);
	expect_dep(p, NULL, "waw", "store:init_body", "store:twice_body", false,
		   NULL, NULL, 100, 0, 0);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* a[i] = b[i], run twice: nothing in the loop; the second copy overwrites the first (loop 0). */
static void test_copy(void **state)
{
	struct mn_profile *p;

	build("copy");
	p = profile("copy", "");
	expect_loop(p, "loop", 2, 200);
	assert_int_equal(rows_of_loop(p, "loop"), 0);
	expect_dep(p, NULL, "raw", "store:init_body", "load:body", false, NULL, NULL, 200, 0, 0);
	expect_dep(p, NULL, "waw", "store:body", "store:body", false, NULL, NULL, 100, 0, 0);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* *s += a[i], 100 iterations: on *s, raw and waw carried at distance 1 in iterations 2..100, war
 * inside every iteration; the zeroing before and the printf after meet the loop's first and last
 * access under loop 0. */
static void test_sum(void **state)
{
	struct mn_profile *p;

	build("sum");
	p = profile("sum", "");
	expect_loop(p, "loop", 1, 100);
	expect_dep(p, "loop", "raw", "store:body", "load:body", true, NULL, NULL, 99, 1, 1);
	expect_dep(p, "loop", "waw", "store:body", "store:body", true, NULL, NULL, 99, 1, 1);
	expect_dep(p, "loop", "war", "load:body", "store:body", false, NULL, NULL, 100, 0, 0);
	assert_int_equal(rows_of_loop(p, "loop"), 3);
	expect_dep(p, NULL, "raw", "store:zero", "load:body", false, NULL, NULL, 1, 0, 0);
	expect_dep(p, NULL, "waw", "store:zero", "store:body", false, NULL, NULL, 1, 0, 0);
	expect_dep(p, NULL, "raw", "store:body", "load:print", false, NULL, NULL, 1, 0, 0);
	assert_int_equal(rows_of_loop(p, NULL), 3);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* a[i + 4] = a[i] for i in 0..99: iterations 4..99 read what iteration i - 4 wrote. */
static void test_dist4(void **state)
{
	struct mn_profile *p;

	build("dist4");
	p = profile("dist4", "");
	expect_dep(p, "loop", "raw", "store:body", "load:body", true, NULL, NULL, 96, 4, 4);
	assert_int_equal(rows_of_loop(p, "loop"), 1);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* 50 nodes, 3 walks updating each: the walk carries nothing and has a war inside each
 * iteration (150); the rounds loop carries raw and waw at distance 1 (rounds 2 and 3: 100) and
 * has the same war inside its iterations; the next pointers come from the build (loop 0). */
static void test_list(void **state)
{
	struct mn_profile *p;

	build("list");
	p = profile("list", "");
	expect_loop(p, "rounds", 1, 3);
	expect_loop(p, "walk", 3, 150);
	expect_dep(p, "walk", "war", "load:update", "store:update", false, NULL, NULL, 150, 0, 0);
	assert_int_equal(rows_of_loop(p, "walk"), 1);
	expect_dep(p, "rounds", "raw", "store:update", "load:update", true, NULL, NULL, 100, 1, 1);
	expect_dep(p, "rounds", "waw", "store:update", "store:update", true, NULL, NULL, 100, 1, 1);
	expect_dep(p, "rounds", "war", "load:update", "store:update", false, NULL, NULL, 150, 0, 0);
	assert_int_equal(rows_of_loop(p, "rounds"), 3);
	expect_dep(p, NULL, "raw", "store:build_next", "load:walk", false, NULL, NULL, 150, 0, 0);
	expect_dep(p, NULL, "raw", "store:build_val", "load:update", false, NULL, NULL, 50, 0, 0);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* b[i][j] = b[i - 1][j] + 1, i in 1..9, j in 0..9: rows 2..9 read the row before (80 reads),
 * carried by the outer loop at distance 1; the inner loop has nothing. */
static void test_nested(void **state)
{
	struct mn_profile *p;

	build("nested");
	p = profile("nested", "");
	expect_loop(p, "outer", 1, 9);
	expect_loop(p, "inner", 9, 90);
	expect_dep(p, "outer", "raw", "store:body", "load:body", true, NULL, NULL, 80, 1, 1);
	assert_int_equal(rows_of_loop(p, "outer"), 1);
	assert_int_equal(rows_of_loop(p, "inner"), 0);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* Through calls: bump() carries raw and waw on x (99, distance 1) and has a war inside each
 * iteration (100), all via bump on both sides; y[i] written in the body, read by get(): raw
 * inside each iteration, dst_via get. */
static void test_call(void **state)
{
	struct mn_profile *p;

	build("call");
	p = profile("call", "");
	expect_loop(p, "loop", 1, 100);
	expect_dep(p, "loop", "raw", "store:bump_body", "load:bump_body", true,
		   "bump", "bump", 99, 1, 1);
	expect_dep(p, "loop", "waw", "store:bump_body", "store:bump_body", true,
		   "bump", "bump", 99, 1, 1);
	expect_dep(p, "loop", "war", "load:bump_body", "store:bump_body", false,
		   "bump", "bump", 100, 0, 0);
	expect_dep(p, "loop", "raw", "store:put", "load:get_body", false, NULL, "get", 100, 0, 0);
	assert_int_equal(rows_of_loop(p, "loop"), 4);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* n = 10 iterations each calling outer() -> middle(3) -> 3 x leaf(), which does x += 1: of the 29
 * reads with a source, the first of each iteration but the first (9) reads the previous
 * iteration's write, the other 20 one of the same iteration; for middle's loop those 20 are
 * carried at distance 1 and the 9 come from an earlier invocation (not its rows).  Each loop
 * sees the accesses through the outermost call of its body: outer for main's loop, leaf for
 * middle's. */
static void test_deep(void **state)
{
	struct mn_profile *p;

	build("deep");
	p = profile("deep", "");
	expect_loop(p, "loop", 1, 10);
	expect_loop(p, "mloop", 10, 30);
	expect_dep(p, "loop", "raw", "store:leaf_body", "load:leaf_body", true,
		   "outer", "outer", 9, 1, 1);
	expect_dep(p, "loop", "raw", "store:leaf_body", "load:leaf_body", false,
		   "outer", "outer", 20, 0, 0);
	expect_dep(p, "loop", "waw", "store:leaf_body", "store:leaf_body", true,
		   "outer", "outer", 9, 1, 1);
	expect_dep(p, "loop", "waw", "store:leaf_body", "store:leaf_body", false,
		   "outer", "outer", 20, 0, 0);
	expect_dep(p, "loop", "war", "load:leaf_body", "store:leaf_body", false,
		   "outer", "outer", 30, 0, 0);
	assert_int_equal(rows_of_loop(p, "loop"), 5);
	expect_dep(p, "mloop", "raw", "store:leaf_body", "load:leaf_body", true,
		   "leaf", "leaf", 20, 1, 1);
	expect_dep(p, "mloop", "waw", "store:leaf_body", "store:leaf_body", true,
		   "leaf", "leaf", 20, 1, 1);
	expect_dep(p, "mloop", "war", "load:leaf_body", "store:leaf_body", false,
		   "leaf", "leaf", 30, 0, 0);
	assert_int_equal(rows_of_loop(p, "mloop"), 3);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* Checks a context list: the sites on the lines marked marks[i], of kinds kinds[i]. */
static void expect_context(const struct mn_profile *p, const struct mn_pnode *ctx,
			   const char *const *marks, const char *const *kinds, size_t n)
{
	assert_int_equal(mn_pnode_kind(ctx), MN_PNODE_SEQ);
	assert_int_equal(mn_pnode_len(ctx), n);
	for (size_t i = 0; i < n; i++) {
		uint64_t id;

		assert_int_equal(mn_pnode_u64(mn_pnode_at(ctx, i), &id), 0);
		if (!at(p, id, marks[i], kinds[i]))
			fail_msg("context item %zu: expected the %s marked %s, got site %lu", i,
				 kinds[i], marks[i], (unsigned long)id);
	}
}

/* With MNEMO_DEP_CONTEXT=1 every row has its two contexts, decoded to sites, outermost first. */
static void test_call_context(void **state)
{
	static const char *const in_bump[] = { "main", "loop", "bump" };
	static const char *const in_get[] = { "main", "loop", "get" };
	static const char *const fn_loop_fn[] = { "function", "loop", "function" };
	const struct mn_pnode *r;
	struct mn_profile *p;
	bool context = false;
	int seen = 0;

	build("call");
	p = profile("call", "MNEMO_DEP_CONTEXT=1");
	assert_int_equal(mn_pnode_bool(mn_pnode_get(mn_profile_module(p, "dependence"), "context"),
				       &context), 0);
	assert_true(context);
	r = rows(p, "dependences");
	for (size_t i = 0; i < mn_pnode_len(r); i++) {
		const struct mn_pnode *e = mn_pnode_at(r, i);

		assert_non_null(mn_pnode_get(e, "src_context"));
		assert_non_null(mn_pnode_get(e, "dst_context"));
		if (!at(p, u64(e, "loop"), "loop", "loop"))
			continue;
		if (at(p, u64(e, "src"), "bump_body", "store")) {
			expect_context(p, mn_pnode_get(e, "src_context"), in_bump, fn_loop_fn, 3);
			expect_context(p, mn_pnode_get(e, "dst_context"), in_bump, fn_loop_fn, 3);
			seen++;
		} else if (at(p, u64(e, "src"), "put", "store")) {
			expect_context(p, mn_pnode_get(e, "src_context"), in_get, fn_loop_fn, 2);
			expect_context(p, mn_pnode_get(e, "dst_context"), in_get, fn_loop_fn, 3);
			seen++;
		}
	}
	assert_int_equal(seen, 3);   /* bump's raw and waw, put -> get's raw */
	/* the counts do not change with contexts: each context pair is one per access here */
	expect_dep(p, "loop", "raw", "store:bump_body", "load:bump_body", true,
		   "bump", "bump", 99, 1, 1);
	mn_profile_close(p);
}

/* A loop that never ran is listed with 0 invocations; one that ran without dependences has its
 * invocations; neither has a row. */
static void test_never(void **state)
{
	struct mn_profile *p;

	build("never");
	p = profile("never", "");
	expect_loop(p, "never", 0, 0);
	expect_loop(p, "ran", 1, 10);
	assert_int_equal(mn_pnode_len(rows(p, "dependences")), 0);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* MNEMO_DEP_LOOP=file:line: only that loop, its rows and its dynamic extent. */
static void test_target_file_line(void **state)
{
	struct mn_profile *p;
	char env[128];

	build("nested");
	snprintf(env, sizeof(env), "MNEMO_DEP_LOOP=nested.c:%d", mark_line("nested", "outer"));
	p = profile("nested", env);
	assert_int_equal(mn_pnode_len(rows(p, "loops")), 1);
	expect_loop(p, "outer", 1, 9);
	expect_dep(p, "outer", "raw", "store:body", "load:body", true, NULL, NULL, 80, 1, 1);
	assert_int_equal(mn_pnode_len(rows(p, "dependences")), 1);   /* no loop 0: the print */
	mn_profile_close(p);
}

/* MNEMO_DEP_LOOP=<site id>: the inner loop, which has no dependence of its own. */
static void test_target_id(void **state)
{
	const struct mn_pnode *loops;
	struct mn_profile *p;
	uint64_t inner = 0;
	char env[128];

	build("nested");
	p = profile("nested", "");
	loops = rows(p, "loops");
	for (size_t i = 0; i < mn_pnode_len(loops); i++)
		if (at(p, u64(mn_pnode_at(loops, i), "loop"), "inner", "loop"))
			inner = u64(mn_pnode_at(loops, i), "loop");
	mn_profile_close(p);
	assert_true(inner != 0);
	snprintf(env, sizeof(env), "MNEMO_DEP_LOOP=%lu", (unsigned long)inner);
	p = profile("nested", env);
	assert_int_equal(mn_pnode_len(rows(p, "loops")), 1);
	expect_loop(p, "inner", 9, 90);
	assert_int_equal(mn_pnode_len(rows(p, "dependences")), 0);
	mn_profile_close(p);
}

/* A target that names no loop: the backend says so, naming the value; the program is unchanged. */
static void test_target_unknown(void **state)
{
	char err[4096], out[256], path[600];

	build("nested");
	run("nested", "MNEMO_DEP_LOOP=nosuch.c:3", 1, "bad", err, sizeof(err));
	if (!strstr(err, "MNEMO_DEP_LOOP=nosuch.c:3"))
		fail_msg("expected stderr to name MNEMO_DEP_LOOP=nosuch.c:3, got: %s", err);
	snprintf(path, sizeof(path), "%s/nested.out", work);
	slurp(path, out, sizeof(out));
	assert_string_equal(out, "9\n");
}

/* ---- Memory ---------------------------------------------------------------------------------- */

/*
 * Backend peak memory at most twice the program's peak RSS plus 256 MiB, with 1 and 4 workers,
 * on a program that touches 128 MiB (mem.c): the shadow is 16 bytes per 8-byte word.
 */
static void test_memory(void **state)
{
	const uint64_t mib = 1024;   /* in KiB */
	struct rusage ru;
	char path[600], why[512], err[4096];
	uint64_t program_kib;
	pid_t pid;
	int st;

	build_in(MEM_DIR, "mem", "-O2");
	assert_int_equal(shell("clang-19 -O2 %s/mem.c -o %s/mem.native", MEM_DIR, work), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		snprintf(path, sizeof(path), "%s/mem.native", work);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(wait4(pid, &st, 0, &ru), pid);
	assert_int_equal(st, 0);
	program_kib = (uint64_t)ru.ru_maxrss;
	for (unsigned j = 1; j <= 4; j += 3) {
		struct mn_profile *p;
		const struct mn_pnode *b;
		uint64_t backend_kib = 0;

		st = shell("cd %s && env -u MNEMO_DEP_LOOP %s/mnemo run -j %u -o mem.yaml -- ./mem "
			   ">/dev/null 2>mem.err", work, BINDIR, j);
		snprintf(path, sizeof(path), "%s/mem.err", work);
		slurp(path, err, sizeof(err));
		if (st)
			fail_msg("mem -j %u: mnemo run failed: %s", j, err);
		snprintf(path, sizeof(path), "%s/mem.yaml", work);
		if (mn_profile_open(&p, path, why, sizeof(why)))
			fail_msg("profile: %s", why);
		b = mn_pnode_get(mn_pnode_get(mn_profile_root(p), "backend"), "dependence");
		mn_pnode_u64(mn_pnode_get(b, "peak_rss_kib"), &backend_kib);
		mn_profile_close(p);
		print_message("mem -j %u: program %lu KiB, backend %lu KiB, budget %lu KiB\n", j,
			      (unsigned long)program_kib, (unsigned long)backend_kib,
			      (unsigned long)(2 * program_kib + 256 * mib));
		assert_true(backend_kib > 0);
		assert_true(backend_kib <= 2 * program_kib + 256 * mib);
	}
}

static int setup(void **state)
{
	if (!mkdtemp(work))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	if (!getenv("MNEMO_KEEP"))
		shell("rm -rf %s", work);
	return 0;
}

/* ---- Threads (README, "Threads"): threaded/pcount.c, its comment has the answers ----------- */

#define T_THREADS 4
#define T_FILL    1000
#define T_ADDS    200

/* The cross-thread rows from access src to dst ("kind:mark") of the given kind: count and ordered
 * summed; also ordered summed over all of the section's rows, in *any_ordered. */
static uint64_t cross_rows(const struct mn_profile *p, const char *kind, const char *src,
			   const char *dst, uint64_t *ordered, uint64_t *any_ordered)
{
	const struct mn_pnode *r = rows(p, "cross_thread");
	uint64_t n = 0;

	*ordered = *any_ordered = 0;
	for (size_t i = 0; i < mn_pnode_len(r); i++) {
		const struct mn_pnode *e = mn_pnode_at(r, i);

		assert_int_equal(u64(e, "ordered") + u64(e, "unordered"), u64(e, "count"));
		*any_ordered += u64(e, "ordered");
		if (strcmp(mn_pnode_str(mn_pnode_get(e, "kind"), NULL), kind) ||
		    !at_access(p, u64(e, "src"), src) || !at_access(p, u64(e, "dst"), dst))
			continue;
		n += u64(e, "count");
		*ordered += u64(e, "ordered");
	}
	return n;
}

/* The counter's raws: within a thread (the add loop's, carried at distance 1) and across, every
 * load but the first in all; ordered by the mutex, or none in the race. */
static void expect_counter(const struct mn_profile *p, bool race)
{
	const struct mn_pnode *r = rows(p, "dependences");
	uint64_t within = 0, cross, ordered, any;

	for (size_t i = 0; i < mn_pnode_len(r); i++) {
		const struct mn_pnode *e = mn_pnode_at(r, i);

		if (!strcmp(mn_pnode_str(mn_pnode_get(e, "kind"), NULL), "raw") &&
		    at_access(p, u64(e, "src"), "store:count") &&
		    at_access(p, u64(e, "dst"), "load:count")) {
			assert_true(at(p, u64(e, "loop"), "add", "loop"));
			assert_int_equal(u64(e, "max_distance"), 1);
			within += u64(e, "count");
		}
	}
	cross = cross_rows(p, "raw", "store:count", "load:count", &ordered, &any);
	assert_int_equal(within + cross, T_THREADS * T_ADDS - 1);
	assert_true(cross >= T_THREADS - 1);   /* each thread's first load but the very first */
	assert_int_equal(ordered, race ? 0 : cross);
	/* main's store of `locked`, read in every iteration, is ordered by the creates either way */
	assert_true(any >= T_THREADS * T_ADDS);
}

static void test_threads(void **state)
{
	char err[4096], path[600], why[512];
	struct mn_profile *p;

	prog = "pcount";
	progdir = THREADED_DIR;
	build_in(THREADED_DIR, "pcount", "-O1 -pthread");
	for (unsigned race = 0; race < 2; race++) {
		for (unsigned j = 1; j <= 2; j++) {
			int st = shell("cd %s && env -u MNEMO_DEP_LOOP -u MNEMO_DEP_CONTEXT "
				       "-u MNEMO_DEP_CLOCK_LIMIT %s/mnemo run -j %u -o pcount.yaml -- "
				       "./pcount %s >pcount.out 2>pcount.err", work, BINDIR, j,
				       race ? "race" : "lock");

			snprintf(path, sizeof(path), "%s/pcount.err", work);
			slurp(path, err, sizeof(err));
			if (st)
				fail_msg("pcount -j %u: mnemo run failed: %s", j, err);
			snprintf(path, sizeof(path), "%s/pcount.yaml", work);
			if (mn_profile_open(&p, path, why, sizeof(why)))
				fail_msg("profile: %s", why);
			/* each thread's loops as one thread's, summed */
			expect_loop(p, "fill", T_THREADS, T_THREADS * T_FILL);
			expect_loop(p, "chain", T_THREADS, T_THREADS * (T_FILL - 1));
			expect_dep(p, "chain", "raw", "store:chain_body", "load:chain_body", true,
				   NULL, NULL, T_THREADS * (T_FILL - 2), 1, 1);
			assert_int_equal(rows_of_loop(p, "chain"), 1);
			assert_int_equal(rows_of_loop(p, "fill"), 0);
			expect_dep(p, NULL, "waw", "store:fill_store", "store:chain_body", false,
				   NULL, NULL, T_THREADS * (T_FILL - 1), 0, 0);
			expect_dep(p, NULL, "raw", "store:fill_store", "load:chain_body", false,
				   NULL, NULL, T_THREADS, 0, 0);
			expect_counter(p, race);
			expect_nothing_lost(p);
			mn_profile_close(p);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_carried),
		cmocka_unit_test(test_straddle),
		cmocka_unit_test(test_intra),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_sum),
		cmocka_unit_test(test_dist4),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_call),
		cmocka_unit_test(test_call_context),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_never),
		cmocka_unit_test(test_target_file_line),
		cmocka_unit_test(test_target_id),
		cmocka_unit_test(test_target_unknown),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
