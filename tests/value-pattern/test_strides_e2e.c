/*
 * value-pattern's strides end to end: programs/strides.c, whose every marked access has a stride
 * known from the source (its comment: +8, -8, +16, +24, +200 bytes), built with mnemo-cc -m
 * value-pattern -fno-unroll-loops -fno-vectorize -fno-slp-vectorize at -O1 and at -O2, run, and
 * its profile read with libmnemo-profile.  Each marked line must hold exactly one load or store
 * site of the expected kind (the loop is neither unrolled nor vectorized: one site per source
 * access), whose dominant stride is the source's, covering every execution: `stride` as written
 * in the source, `stride_fraction` 1, `strongly_strided`, and `executions` the loop's trip count.
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

/* No unrolling or vectorizing before instrumentation: strides are the source's. */
#define NO_UNROLL "-fno-unroll-loops -fno-vectorize -fno-slp-vectorize"

static char work[] = "/tmp/mnemo-vp-strides.XXXXXX";

/* Each marked access of programs/strides.c: its kind, stride in bytes and executions. */
static const struct {
	const char *mark, *access;
	int64_t stride;
	uint64_t executions;
} want[] = {
	{ "fwd", "load", 8, 1000 },      /* long fwd[]: i++ */
	{ "rev", "load", -8, 1000 },     /* long rev[]: i-- */
	{ "two", "store", 16, 500 },     /* long two[]: i += 2 */
	{ "aos", "store", 24, 1000 },    /* struct rec aos[]: .y, sizeof 24 */
	{ "col", "load", 200, 400 },     /* int grid[][50]: down a column */
};

static uint64_t u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_u64(mn_pnode_get(n, key), &v))
		fail_msg("line %u: expected an integer '%s'", mn_pnode_line(n), key);
	return v;
}

/* Builds programs/strides.c with flags into work/<out>, runs it; the profile. */
static struct mn_profile *build_run(const char *flags, const char *out)
{
	char path[512], why[512];
	struct mn_profile *p;

	if (shell("%s/mnemo-cc -m value-pattern %s -g %s/strides.c -o %s/%s", BINDIR, flags,
		  PROGRAMS_DIR, work, out))
		fail_msg("strides.c does not build with %s", flags);
	if (shell("cd %s && MNEMO_OUTPUT=%s/%s.yaml ./%s >/dev/null", work, work, out, out))
		fail_msg("%s failed", out);
	snprintf(path, sizeof(path), "%s/%s.yaml", work, out);
	if (mn_profile_open(&p, path, why, sizeof(why)))
		fail_msg("profile: %s", why);
	if (!mn_profile_module(p, "value-pattern"))
		fail_msg("%s: no value-pattern section", out);
	return p;
}

/* Every marked access: one site on its line, of its kind, with the source's stride. */
static void check_strides(const char *flags, const char *out)
{
	struct mn_profile *p = build_run(flags, out);
	const struct mn_pnode *sec = mn_profile_module(p, "value-pattern");
	const struct mn_pnode *rows = mn_pnode_get(sec, "entries");

	assert_int_equal(mn_pnode_kind(rows), MN_PNODE_SEQ);
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		int line = marked_line(PROGRAMS_DIR, "strides", want[w].mark);
		const struct mn_pnode *row = NULL;
		int64_t stride = 0;
		double fraction = 0;
		bool strong = false;

		assert_true(line > 0);
		for (size_t i = 0; i < mn_pnode_len(rows); i++) {
			const struct mn_pnode *r = mn_pnode_at(rows, i);
			const struct mn_site *s = mn_profile_site(p, (uint32_t)u64(r, "site"));

			assert_non_null(s);
			if (s->line != (uint32_t)line || strcmp(s->kind, want[w].access))
				continue;
			if (row)
				fail_msg("%s: strides.c:%d (MARK:%s): expected one %s site, got "
					 "several (unrolled?)", flags, line, want[w].mark,
					 want[w].access);
			row = r;
		}
		if (!row)
			fail_msg("%s: strides.c:%d (MARK:%s): no %s site", flags, line,
				 want[w].mark, want[w].access);
		if (mn_pnode_i64(mn_pnode_get(row, "stride"), &stride))
			fail_msg("%s: MARK:%s: no stride", flags, want[w].mark);
		print_message("%s: MARK:%s: %s stride %lld (expected %lld), %llu executions\n",
			      flags, want[w].mark, want[w].access, (long long)stride,
			      (long long)want[w].stride,
			      (unsigned long long)u64(row, "executions"));
		if (stride != want[w].stride)
			fail_msg("%s: MARK:%s: expected stride %lld, got %lld", flags, want[w].mark,
				 (long long)want[w].stride, (long long)stride);
		assert_int_equal(u64(row, "executions"), want[w].executions);
		assert_int_equal(mn_pnode_f64(mn_pnode_get(row, "stride_fraction"), &fraction), 0);
		if (fraction != 1.0)
			fail_msg("%s: MARK:%s: expected stride_fraction 1, got %g", flags,
				 want[w].mark, fraction);
		assert_int_equal(mn_pnode_bool(mn_pnode_get(row, "strongly_strided"), &strong), 0);
		assert_true(strong);
	}
	mn_profile_close(p);
}

static void test_strides_o1(void **state)
{
	check_strides("-O1 " NO_UNROLL, "strides_o1");
}

static void test_strides_o2(void **state)
{
	check_strides("-O2 " NO_UNROLL, "strides_o2");
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
		cmocka_unit_test(test_strides_o1),
		cmocka_unit_test(test_strides_o2),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
