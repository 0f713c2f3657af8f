/*
 * The object-relative module end to end on programs with known answers (programs/): built with
 * mnemo-cc -m object-relative -O1, run with mnemo run --reproducible, the profile checked against
 * answers written by hand from the paper (Wu et al., Figure 3), never copied from output.
 * Instructions and groups are found by their source line: the programs mark them MARK:<name>.
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

static char work[] = "/tmp/mnemo-objrel.XXXXXX";
static const char *prog;
/* Where build() finds it: programs/, or threaded/ (threaded programs, apart so that the scripts
 * that run every program of programs/ twice and compare need not know of interleavings) */
static const char *progdir = PROGRAMS_DIR;

static int mark_line(const char *mark)
{
	int n = marked_line(progdir, prog, mark);

	if (!n)
		fail_msg("%s.c: no line marked MARK:%s", prog, mark);
	return n;
}

static void build(const char *name, const char *opt)
{
	prog = name;
	assert_int_equal(shell("%s/mnemo-cc -m object-relative %s -g %s/%s.c -o %s/%s", BINDIR,
			       opt, progdir, name, work, name), 0);
}

static struct mn_profile *run_j(const char *args, unsigned j)
{
	char err[4096], path[600], why[512];
	struct mn_profile *p;

	if (shell("cd %s && %s/mnemo run --reproducible -j %u -o %s.yaml -- ./%s %s >%s.out "
		  "2>%s.err", work, BINDIR, j, prog, prog, args, prog, prog)) {
		snprintf(path, sizeof(path), "%s/%s.err", work, prog);
		slurp(path, err, sizeof(err));
		fail_msg("%s %s: mnemo run failed: %s", prog, args, err);
	}
	snprintf(path, sizeof(path), "%s/%s.yaml", work, prog);
	if (mn_profile_open(&p, path, why, sizeof(why)))
		fail_msg("profile: %s", why);
	if (!mn_profile_module(p, "object-relative"))
		fail_msg("%s: no object-relative section", prog);
	return p;
}

static const struct mn_pnode *sec(const struct mn_profile *p, const char *key)
{
	const struct mn_pnode *n = mn_pnode_get(mn_profile_module(p, "object-relative"), key);

	if (!n)
		fail_msg("%s: no '%s' in the section", prog, key);
	return n;
}

static uint64_t u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_u64(mn_pnode_get(n, key), &v))
		fail_msg("%s: line %u: expected an integer '%s'", prog, mn_pnode_line(n), key);
	return v;
}

static int64_t i64(const struct mn_pnode *n, const char *key)
{
	int64_t v = 0;

	if (mn_pnode_i64(mn_pnode_get(n, key), &v))
		fail_msg("%s: line %u: expected an integer '%s'", prog, mn_pnode_line(n), key);
	return v;
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
				fail_msg("%s: two %s sites on the line marked %s", prog, kind, mark);
			found = s->id;
		}
	}
	if (!found)
		fail_msg("%s: no %s site on the line marked %s", prog, kind, mark);
	return found;
}

static const struct mn_pnode *row_with(const struct mn_pnode *seq, const char *key, uint64_t v)
{
	for (size_t i = 0; i < mn_pnode_len(seq); i++)
		if (u64(mn_pnode_at(seq, i), key) == v)
			return mn_pnode_at(seq, i);
	fail_msg("%s: no row with %s %llu", prog, key, (unsigned long long)v);
	return NULL;
}

/*
 * Figure 3: the load of `data` and the load of `key` each touch the three nodes (one group, the
 * malloc marked node) in allocation order: one stream each, one LMAD each, starting at object 0
 * and offset 0 (data) or 4 (key), object stride 1, offset stride 0, 3 points; every access
 * captured.  The group: 3 heap objects of 16 bytes, all freed.  Identical with -j 1 and -j 4.
 */
static void test_figure3(void **state)
{
	static const char *const marks[] = { "data", "key" };
	static const uint64_t offsets[] = { 0, 4 };
	struct mn_profile *p;
	uint32_t group;
	char a[600], b[600];

	build("fig3", "-O1");
	p = run_j("", 1);
	group = site_at(p, "alloc", "node");
	for (int k = 0; k < 2; k++) {
		const struct mn_pnode *in, *streams, *s, *lmads, *l;

		in = row_with(sec(p, "instructions"), "site", site_at(p, "load", marks[k]));
		assert_string_equal(mn_pnode_str(mn_pnode_get(in, "access"), NULL), "load");
		assert_int_equal(u64(in, "accesses"), 3);
		assert_int_equal(u64(in, "unattributed"), 0);
		streams = mn_pnode_get(in, "streams");
		assert_int_equal(mn_pnode_len(streams), 1);
		s = mn_pnode_at(streams, 0);
		assert_int_equal(u64(s, "group"), group);
		assert_int_equal(u64(s, "accesses"), 3);
		assert_int_equal(u64(s, "captured"), 3);
		lmads = mn_pnode_get(s, "lmads");
		assert_int_equal(mn_pnode_len(lmads), 1);
		l = mn_pnode_at(lmads, 0);
		assert_int_equal(u64(l, "object"), 0);
		assert_int_equal(u64(l, "offset"), offsets[k]);
		assert_int_equal(i64(l, "object_stride"), 1);
		assert_int_equal(i64(l, "offset_stride"), 0);
		assert_int_equal(u64(l, "count"), 3);
		assert_int_equal(u64(s, "object_min"), 0);
		assert_int_equal(u64(s, "object_max"), 2);
		assert_int_equal(u64(s, "offset_min"), offsets[k]);
		assert_int_equal(u64(s, "offset_max"), offsets[k]);
	}
	{
		const struct mn_pnode *g = row_with(sec(p, "groups"), "group", group);

		assert_string_equal(mn_pnode_str(mn_pnode_get(g, "kind"), NULL), "heap");
		assert_int_equal(u64(g, "objects"), 3);
		assert_int_equal(u64(g, "bytes"), 48);
		assert_true(u64(g, "lifetime_min") > 0);
		assert_true(u64(g, "lifetime_min") <= u64(g, "lifetime_median"));
		assert_true(u64(g, "lifetime_median") <= u64(g, "lifetime_max"));
		/* The histogram (README "Merging"): the 3 lifetimes, in the buckets from that of
		 * the minimum (2^(b-1) <= min < 2^b) to that of the maximum, which ends the list. */
		{
			const struct mn_pnode *h = mn_pnode_get(g, "lifetime_log2");
			uint64_t n = 0, lo = u64(g, "lifetime_min"), hi = u64(g, "lifetime_max");
			size_t nb = mn_pnode_len(h);

			assert_true(nb > 1);
			assert_true(hi >> (nb - 2) == 1);
			for (size_t b = 0; b < nb; b++) {
				uint64_t v;

				assert_int_equal(mn_pnode_u64(mn_pnode_at(h, b), &v), 0);
				if (v)   /* bucket b holds lifetimes below 2^b: min among them */
					assert_true(b >= 1 && lo >> b == 0);
				n += v;
			}
			assert_int_equal(n, 3);
		}
	}
	{
		/* One run, whose clock is the section's. */
		const struct mn_pnode *runs = sec(p, "runs");
		const char *key;

		assert_int_equal(mn_pnode_len(runs), 1);
		assert_int_equal(u64(mn_pnode_at(runs, 0), "events"),
				 u64(mn_profile_module(p, "object-relative"), "events"));
		key = mn_pnode_str(mn_pnode_get(mn_pnode_at(runs, 0), "key"), NULL);
		assert_non_null(key);
		assert_int_equal(strlen(key), 16);
	}
	assert_int_equal(u64(sec(p, "lost"), "nomem"), 0);
	assert_int_equal(u64(sec(p, "lost"), "unknown_frees"), 0);
	mn_profile_close(p);

	snprintf(a, sizeof(a), "%s/fig3.j1.yaml", work);
	snprintf(b, sizeof(b), "%s/fig3.yaml", work);
	assert_int_equal(rename(b, a), 0);
	mn_profile_close(run_j("", 4));
	assert_int_equal(shell("cmp -s %s %s", a, b), 0);
}

/*
 * Threads (threaded/threads.c): four threads make 10, 20, 30, 40 nodes at one site and set their
 * keys; each frees half its nodes, the main thread the other half.  Every thread's events come
 * (complete: true): the group's 100 objects and 1600 bytes, 100 lifetimes; the key store's 100
 * executions in four streams, one per thread (`thread:` 2 to 5, which thread made which list
 * depending on which started first), of 10, 20, 30 and 40 accesses; nothing lost, no unknown free.
 */
static void test_threads(void **state)
{
	const struct mn_pnode *in, *streams, *g, *h;
	struct mn_profile *p;
	const char *why = NULL;
	bool sizes[5] = { false }, threads[6] = { false };
	uint32_t group;
	uint64_t n = 0, v;

	progdir = THREADED_DIR;
	build("threads", "-O1 -pthread");
	p = run_j("", 1);
	if (!mn_profile_complete(p, &why))
		fail_msg("threads: complete: false: %s", why ? why : "?");
	group = site_at(p, "alloc", "node");
	g = row_with(sec(p, "groups"), "group", group);
	assert_int_equal(u64(g, "objects"), 100);
	assert_int_equal(u64(g, "bytes"), 1600);
	h = mn_pnode_get(g, "lifetime_log2");
	for (size_t b = 0; b < mn_pnode_len(h); b++) {
		assert_int_equal(mn_pnode_u64(mn_pnode_at(h, b), &v), 0);
		n += v;
	}
	assert_int_equal(n, 100);
	in = row_with(sec(p, "instructions"), "site", site_at(p, "store", "set"));
	assert_int_equal(u64(in, "accesses"), 100);
	assert_int_equal(u64(in, "unattributed"), 0);
	streams = mn_pnode_get(in, "streams");
	assert_int_equal(mn_pnode_len(streams), 4);
	for (size_t i = 0; i < 4; i++) {
		const struct mn_pnode *s = mn_pnode_at(streams, i);
		uint64_t a = u64(s, "accesses"), t = u64(s, "thread");

		assert_int_equal(u64(s, "group"), group);
		assert_true(a % 10 == 0 && a >= 10 && a <= 40 && !sizes[a / 10]);
		sizes[a / 10] = true;
		assert_true(t >= 2 && t <= 5 && !threads[t]);
		threads[t] = true;
	}
	assert_int_equal(u64(sec(p, "lost"), "nomem"), 0);
	assert_int_equal(u64(sec(p, "lost"), "unknown_frees"), 0);
	assert_int_equal(u64(mn_pnode_at(sec(p, "runs"), 0), "events"),
			 u64(mn_profile_module(p, "object-relative"), "events"));
	mn_profile_close(p);
	progdir = PROGRAMS_DIR;
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
		cmocka_unit_test(test_figure3),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
