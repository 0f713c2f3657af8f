/*
 * value-pattern's memops and functions tables end to end: programs/memops.c built with
 * `mnemo-cc -m value-pattern -O2`, run, and its profile read with libmnemo-profile.  The answers
 * are the program's by construction (its comment): per marked source line, the lengths of every
 * memop row whose site is on that line, summed (the optimizer may unroll a loop into several
 * sites of one line).
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
	};

	return cmocka_run_group_tests_name("value-pattern memops e2e", tests, setup, teardown);
}
