/*
 * value-pattern's memops and functions tables end to end: programs/memops.c built with
 * `mnemo-cc -m value-pattern -O2`, run, and its profile read with libmnemo-profile.  The answers
 * are the program's by construction (its comment): per marked source line, the lengths of every
 * memop row whose site is on that line, summed (the optimizer may unroll a loop into several
 * sites of one line).  Then `mnemo merge` of three runs with different inputs: every count the sum
 * of the runs', and merge(p) == p for the section, byte for byte.
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

#include <cmocka.h>

#include "profile.h"
#include "modtest.h"
#include "shell.h"

static char work[] = "/tmp/mnemo-vp-memops.XXXXXX";

/* What the memop rows of one source line say, summed. */
struct line_sizes {
	unsigned rows;
	uint64_t executions, other;
	uint64_t size[4], count[4];   /* the distinct lengths, in order of first appearance */
	unsigned nsizes;
};

static uint64_t u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_u64(mn_pnode_get(n, key), &v))
		fail_msg("line %u: expected an integer '%s'", mn_pnode_line(n), key);
	return v;
}

static int mark_line(const char *mark)
{
	int n = marked_line(PROGRAMS_DIR, "memops", mark);

	if (!n)
		fail_msg("memops.c: no line marked MARK:%s", mark);
	return n;
}

static struct mn_profile *run(const char *args, const char *out)
{
	char path[512], why[512];
	struct mn_profile *p;

	if (shell("cd %s && MNEMO_OUTPUT=%s/%s ./memops %s >/dev/null", work, work, out, args))
		fail_msg("memops %s failed", args);
	snprintf(path, sizeof(path), "%s/%s", work, out);
	if (mn_profile_open(&p, path, why, sizeof(why)))
		fail_msg("profile: %s", why);
	return p;
}

static struct line_sizes sizes_at(const struct mn_profile *p, const char *mark, const char *op)
{
	const struct mn_pnode *rows = mn_pnode_get(mn_profile_module(p, "value-pattern"), "memops");
	struct line_sizes r = { 0 };
	int line = mark_line(mark);

	assert_int_equal(mn_pnode_kind(rows), MN_PNODE_SEQ);
	for (size_t i = 0; i < mn_pnode_len(rows); i++) {
		const struct mn_pnode *row = mn_pnode_at(rows, i), *sz = mn_pnode_get(row, "sizes");
		const struct mn_site *s = mn_profile_site(p, (uint32_t)u64(row, "site"));

		assert_non_null(s);
		if (s->line != (uint32_t)line)
			continue;
		/* The row's site is the intrinsic's destination store, named after it. */
		assert_string_equal(s->kind, "store");
		assert_string_equal(s->name, op);
		assert_string_equal(mn_pnode_str(mn_pnode_get(row, "op"), NULL), op);
		r.rows++;
		r.executions += u64(row, "executions");
		r.other += u64(row, "other");
		for (size_t k = 0; k < mn_pnode_len(sz); k++) {
			uint64_t size = u64(mn_pnode_at(sz, k), "size");
			unsigned j = 0;

			while (j < r.nsizes && r.size[j] != size)
				j++;
			if (j == r.nsizes) {
				assert_true(r.nsizes < 4);
				r.size[r.nsizes++] = size;
			}
			r.count[j] += u64(mn_pnode_at(sz, k), "count");
		}
	}
	if (!r.rows)
		fail_msg("no memops row on memops.c:%d (MARK:%s)", line, mark);
	return r;
}

static uint64_t count_of(const struct line_sizes *r, uint64_t size)
{
	for (unsigned j = 0; j < r->nsizes; j++)
		if (r->size[j] == size)
			return r->count[j];
	return 0;
}

/* The entries of main, the only function. */
static uint64_t main_entries(const struct mn_profile *p)
{
	const struct mn_pnode *rows = mn_pnode_get(mn_profile_module(p, "value-pattern"),
						   "functions");
	uint64_t n = 0;

	for (size_t i = 0; i < mn_pnode_len(rows); i++) {
		const struct mn_site *s = mn_profile_site(p, (uint32_t)u64(mn_pnode_at(rows, i),
									    "site"));

		assert_non_null(s);
		assert_string_equal(s->kind, "function");
		if (!strcmp(s->function, "main"))
			n += u64(mn_pnode_at(rows, i), "entries");
	}
	return n;
}

static int setup(void **state)
{
	if (!mkdtemp(work))
		return -1;
	return shell("%s/mnemo-cc -m value-pattern -O2 -g %s/memops.c -o %s/memops", BINDIR,
		     PROGRAMS_DIR, work);
}

static int teardown(void **state)
{
	return shell("rm -rf %s", work);
}

/* No argument: memcpy always 16 bytes, memset 8 and 24, memmove 3. */
static void test_sizes(void **state)
{
	struct mn_profile *p = run("", "one.yaml");
	struct line_sizes copy = sizes_at(p, "copy", "memcpy");
	struct line_sizes fill = sizes_at(p, "fill", "memset");
	struct line_sizes move = sizes_at(p, "move", "memmove");

	assert_int_equal(copy.executions, 1000);
	assert_int_equal(copy.nsizes, 1);
	assert_int_equal(count_of(&copy, 16), 1000);
	assert_int_equal(copy.other, 0);
	assert_int_equal(fill.executions, 400);
	assert_int_equal(fill.nsizes, 2);
	assert_int_equal(count_of(&fill, 8), 300);
	assert_int_equal(count_of(&fill, 24), 100);
	assert_int_equal(move.executions, 50);
	assert_int_equal(count_of(&move, 3), 50);
	assert_int_equal(main_entries(p), 1);
	mn_profile_close(p);
}

/* The value-pattern section of the profile work/<name>, as text (malloc'd). */
static char *section_text(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", work, name);
	return mt_section_text(path, "value-pattern");
}

/* The executions of every entry, by site (0 for a site a profile lacks). */
static void executions(const struct mn_profile *p, uint64_t *by_site, size_t n)
{
	const struct mn_pnode *sec = mn_profile_module(p, "value-pattern");
	const struct mn_pnode *rows = mn_pnode_get(sec, "entries");

	memset(by_site, 0, n * sizeof(*by_site));
	for (size_t i = 0; i < mn_pnode_len(rows); i++) {
		uint64_t site = u64(mn_pnode_at(rows, i), "site");

		assert_true(site < n);
		by_site[site] = u64(mn_pnode_at(rows, i), "executions");
	}
}

/* merge(p) == p: the section of one profile merged alone comes back byte for byte. */
static void test_merge_one_is_identity(void **state)
{
	char *a, *b;

	mn_profile_close(run("", "one.yaml"));
	assert_int_equal(shell("%s/mnemo merge -o %s/alone.yaml %s/one.yaml", BINDIR, work, work),
			 0);
	a = section_text("one.yaml");
	b = section_text("alone.yaml");
	if (strcmp(a, b))
		fail_msg("merge(p) != p\n--- p:\n%s\n--- merge(p):\n%s", a, b);
	free(a);
	free(b);
}

/*
 * Three inputs (no argument, one, two: memcpy 16, 32 and 48 bytes, memmove 3, 4 and 5): merged,
 * each length's count, every entry's executions and main's entries are the sums of the runs'; and
 * merging in another order gives the same section.
 */
static void test_merge_sums(void **state)
{
	enum { N = 4096 };
	static const char *const args[] = { "", "x", "x y" }, *const names[] = { "r1.yaml",
										 "r2.yaml",
										 "r3.yaml" };
	uint64_t *sum = calloc(N, sizeof(uint64_t)), *one = calloc(N, sizeof(uint64_t));
	struct mn_profile *p;
	struct line_sizes copy, fill, move;
	char path[512], why[512], *a, *b;

	for (int i = 0; i < 3; i++) {
		p = run(args[i], names[i]);
		executions(p, one, N);
		for (size_t s = 0; s < N; s++)
			sum[s] += one[s];
		mn_profile_close(p);
	}
	assert_int_equal(shell("%s/mnemo merge -o %s/m123.yaml %s/r1.yaml %s/r2.yaml %s/r3.yaml",
			       BINDIR, work, work, work, work), 0);
	assert_int_equal(shell("%s/mnemo merge -o %s/m312.yaml %s/r3.yaml %s/r1.yaml %s/r2.yaml",
			       BINDIR, work, work, work, work), 0);
	snprintf(path, sizeof(path), "%s/m123.yaml", work);
	if (mn_profile_open(&p, path, why, sizeof(why)))
		fail_msg("merged profile: %s", why);
	copy = sizes_at(p, "copy", "memcpy");
	fill = sizes_at(p, "fill", "memset");
	move = sizes_at(p, "move", "memmove");
	assert_int_equal(copy.executions, 3000);
	assert_int_equal(copy.nsizes, 3);
	assert_int_equal(count_of(&copy, 16), 1000);
	assert_int_equal(count_of(&copy, 32), 1000);
	assert_int_equal(count_of(&copy, 48), 1000);
	assert_int_equal(fill.executions, 1200);
	assert_int_equal(count_of(&fill, 8), 900);
	assert_int_equal(count_of(&fill, 24), 300);
	assert_int_equal(move.executions, 150);
	assert_int_equal(count_of(&move, 3), 50);
	assert_int_equal(count_of(&move, 4), 50);
	assert_int_equal(count_of(&move, 5), 50);
	assert_int_equal(main_entries(p), 3);
	executions(p, one, N);
	for (size_t s = 0; s < N; s++)
		if (one[s] != sum[s])
			fail_msg("site %zu: merged executions %llu, the runs' sum %llu", s,
				 (unsigned long long)one[s], (unsigned long long)sum[s]);
	mn_profile_close(p);
	a = section_text("m123.yaml");
	b = section_text("m312.yaml");
	if (strcmp(a, b))
		fail_msg("merge(r1, r2, r3) != merge(r3, r1, r2)\n%s\n---\n%s", a, b);
	free(a);
	free(b);
	free(sum);
	free(one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_merge_one_is_identity),
		cmocka_unit_test(test_merge_sums),
	};

	return cmocka_run_group_tests_name("value-pattern memops e2e", tests, setup, teardown);
}
