/*
 * The rds-shape module end to end on programs with known answers (tests/rds-shape/programs/): each
 * is built with mnemo-cc -m rds-shape -O1, run with mnemo run --reproducible, and its profile
 * checked against answers written by hand from the paper's definitions (modules/rds-shape/
 * README.md), never copied from output.  Types are found by their allocation site: the programs
 * mark the line of each malloc with MARK:<name>.
 *
 * Last, the memory bound: ten million nodes allocated and freed in waves of 100,000 must leave
 * the backend's peak RSS within a constant of the live set.
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
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile.h"
#include "edge_row.h"
#include "shell.h"

static char work[] = "/tmp/mnemo-rds.XXXXXX";
static const char *prog;   /* the program under test: build() sets it */
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

/* Builds programs/<name>.c with mnemo-cc -m rds-shape into the work directory. */
static void build(const char *name, const char *opt)
{
	prog = name;
	assert_int_equal(shell("%s/mnemo-cc -m rds-shape %s -g %s/%s.c -o %s/%s", BINDIR, opt,
			       progdir, name, work, name), 0);
}

/* Runs work/<prog> with args under mnemo run --reproducible -j j; returns the profile. */
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
	if (!mn_profile_module(p, "rds-shape"))
		fail_msg("%s: no rds-shape section", prog);
	return p;
}

static struct mn_profile *run(const char *args)
{
	return run_j(args, 1);
}

static const struct mn_pnode *sec(const struct mn_profile *p, const char *key)
{
	const struct mn_pnode *n = mn_pnode_get(mn_profile_module(p, "rds-shape"), key);

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

static double f64(const struct mn_pnode *n, const char *key)
{
	double v = 0;

	if (mn_pnode_f64(mn_pnode_get(n, key), &v))
		fail_msg("%s: line %u: expected a number '%s'", prog, mn_pnode_line(n), key);
	return v;
}

/* Is site id the allocation on the line marked `mark`? */
static bool alloc_at(const struct mn_profile *p, uint64_t id, const char *mark)
{
	const struct mn_site *s = mn_profile_site(p, (uint32_t)id);

	return s && (int)s->line == mark_line(mark) && !strcmp(s->kind, "alloc");
}

/* The number of the type whose sites are exactly the allocations marked marks[0..n). */
static uint64_t type_of(const struct mn_profile *p, const char *const *marks, size_t n)
{
	const struct mn_pnode *types = sec(p, "types");

	for (size_t t = 0; t < mn_pnode_len(types); t++) {
		const struct mn_pnode *sites = mn_pnode_get(mn_pnode_at(types, t), "sites");
		size_t found = 0;

		if (mn_pnode_len(sites) != n)
			continue;
		for (size_t i = 0; i < n; i++) {
			for (size_t k = 0; k < n; k++) {
				uint64_t id;

				assert_int_equal(mn_pnode_u64(mn_pnode_at(sites, k), &id), 0);
				if (alloc_at(p, id, marks[i])) {
					found++;
					break;
				}
			}
		}
		if (found == n)
			return u64(mn_pnode_at(types, t), "type");
	}
	fail_msg("%s: no type whose sites are the %zu allocations marked %s%s", prog, n, marks[0],
		 n > 1 ? ", ..." : "");
	return 0;
}

static uint64_t type_at(const struct mn_profile *p, const char *mark)
{
	return type_of(p, &mark, 1);
}

static const struct mn_pnode *type_row(const struct mn_profile *p, uint64_t t)
{
	return mn_pnode_at(sec(p, "types"), t - 1);
}

/* The instance rows of type t, up to max; returns how many. */
static size_t instances_of(const struct mn_profile *p, uint64_t t, const struct mn_pnode **rows,
			   size_t max)
{
	const struct mn_pnode *r = sec(p, "instances");
	size_t n = 0;

	for (size_t i = 0; i < mn_pnode_len(r); i++)
		if (u64(mn_pnode_at(r, i), "type") == t && n < max)
			rows[n++] = mn_pnode_at(r, i);
	return n;
}

/* The one instance of type t. */
static const struct mn_pnode *only_instance(const struct mn_profile *p, uint64_t t)
{
	const struct mn_pnode *row[2];

	assert_int_equal(u64(type_row(p, t), "instances"), 1);
	assert_int_equal(instances_of(p, t, row, 2), 1);
	return row[0];
}

static void expect_nothing_lost(const struct mn_profile *p)
{
	const struct mn_pnode *l = sec(p, "lost");

	assert_int_equal(u64(l, "aliased_granules"), 0);
	assert_int_equal(u64(l, "nomem"), 0);
	assert_int_equal(u64(l, "unknown_frees"), 0);
}

/*
 * The static shape graph's edge from the allocation marked src to the one marked dst: `stores`,
 * its source's pointer fields exactly fields[0..n) (increasing offsets), `forward` and `backward`
 * stores (from an older object to a younger one, and the other way).
 */
static void expect_edge(const struct mn_profile *p, const char *src, const char *dst,
			uint64_t stores, const uint64_t *fields, size_t n, uint64_t fwd, uint64_t bwd)
{
	const struct mn_pnode *g = sec(p, "static_shape_graph"), *e = NULL;

	for (size_t i = 0; !e && i < mn_pnode_len(g); i++)
		if (alloc_at(p, u64(mn_pnode_at(g, i), "src_site"), src) &&
		    alloc_at(p, u64(mn_pnode_at(g, i), "dst_site"), dst))
			e = mn_pnode_at(g, i);
	if (!e)
		fail_msg("%s: no edge %s -> %s in the static shape graph", prog, src, dst);
	expect_edge_row(e, stores, fields, n, fwd, bwd);
}

/* ---- The programs ---------------------------------------------------------------------------- */

/*
 * Figure 2: exactly one type, make_tree's malloc; exactly two instances, {1,2,3} and {4,5,6}:
 * three nodes and two forward edges each (parents are allocated before their children); the
 * array is in no type, and its two pointers to the roots are pending edges.  Also identical
 * with -j 1 and -j 4 (the module runs one worker whatever is asked).
 */
static void test_figure2(void **state)
{
	const struct mn_pnode *row[3];
	struct mn_profile *p;
	uint64_t t;
	char a[600], b[600];

	build("fig2", "-O1");
	p = run("");
	assert_int_equal(u64(sec(p, "summary"), "types"), 1);
	t = type_at(p, "node");
	assert_int_equal(t, 1);
	assert_int_equal(u64(type_row(p, t), "instances"), 2);
	assert_int_equal(instances_of(p, t, row, 3), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(u64(row[i], "nodes"), 3);
		assert_int_equal(u64(row[i], "edges"), 2);
		assert_int_equal(u64(row[i], "forward_edges"), 2);
		assert_int_equal(u64(row[i], "backward_edges"), 0);
	}
	/* the instances are named by their oldest node: the array is serial 1, the trees 2..7 */
	assert_int_not_equal(u64(row[0], "instance"), u64(row[1], "instance"));
	assert_true(u64(row[0], "instance") >= 2 && u64(row[1], "instance") >= 2);
	assert_int_equal(u64(sec(p, "summary"), "nodes"), 6);
	assert_int_equal(u64(mn_profile_module(p, "rds-shape"), "pending_edges"), 2);
	/* left and right (offsets 8, 16) point to younger children; arr[0], arr[1] to younger roots */
	expect_edge(p, "node", "node", 4, (const uint64_t[]){ 8, 16 }, 2, 4, 0);
	expect_edge(p, "array", "node", 2, (const uint64_t[]){ 0, 8 }, 2, 2, 0);
	expect_nothing_lost(p);
	mn_profile_close(p);

	snprintf(a, sizeof(a), "%s/fig2.j1.yaml", work);
	snprintf(b, sizeof(b), "%s/fig2.yaml", work);
	assert_int_equal(rename(b, a), 0);
	mn_profile_close(run_j("", 4));
	assert_int_equal(shell("cmp -s %s %s", a, b), 0);
}

/* Built once, walked 500 times: one instance of 100 nodes and 99 backward edges (insertion at
 * the head: the younger node points to the older), 99 traversals a walk, each continuing from
 * where the last arrived but the first of a walk: stability factor 1, depth-first. */
static void test_list_stable(void **state)
{
	const struct mn_pnode *i;
	struct mn_profile *p;
	uint64_t t;

	build("list_stable", "-O1");
	p = run("100 500");
	assert_int_equal(u64(sec(p, "summary"), "types"), 1);
	t = type_at(p, "node");
	i = only_instance(p, t);
	assert_int_equal(u64(i, "nodes"), 100);
	assert_int_equal(u64(i, "live_nodes"), 100);
	assert_int_equal(u64(i, "edges"), 99);
	assert_int_equal(u64(i, "backward_edges"), 99);
	assert_int_equal(u64(i, "forward_edges"), 0);
	assert_int_equal(u64(i, "traversals"), 99 * 500);
	assert_int_equal(u64(i, "dfs_like"), 98 * 500);
	assert_int_equal(u64(i, "bfs_like"), 0);
	assert_int_equal(u64(i, "stability_factor"), 1);
	assert_string_equal(mn_pnode_str(mn_pnode_get(i, "pattern"), NULL), "dfs");
	/* created at the first allocation, destroyed at the last traversal: nearly the whole run */
	assert_true(f64(i, "lifetime") > 0.99);
	/* next, at offset 0, of each new node points to the older head: backward */
	expect_edge(p, "node", "node", 99, (const uint64_t[]){ 0 }, 1, 0, 99);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* Insertions between walks: each phase's 50 walks are one interval holding more than 1% of the
 * traversals, so the stability factor is the number of phases: 1, 2, 4, 8. */
static void test_list_insert(void **state)
{
	static const unsigned phases[] = { 1, 2, 4, 8 };
	uint64_t last = 0;

	build("list_insert", "-O1");
	for (size_t k = 0; k < sizeof(phases) / sizeof(phases[0]); k++) {
		const struct mn_pnode *i;
		struct mn_profile *p;
		char args[16];
		uint64_t n = 100 + 10 * phases[k], trav = 0;

		snprintf(args, sizeof(args), "%u", phases[k]);
		p = run(args);
		i = only_instance(p, type_at(p, "node"));
		assert_int_equal(u64(i, "nodes"), n);
		assert_int_equal(u64(i, "edges"), n - 1);
		for (unsigned ph = 1; ph <= phases[k]; ph++)
			trav += 50 * (99 + 10 * ph);
		assert_int_equal(u64(i, "traversals"), trav);
		assert_int_equal(u64(i, "stability_factor"), phases[k]);
		assert_true(u64(i, "stability_factor") > last);
		last = u64(i, "stability_factor");
		mn_profile_close(p);
	}
}

/* 50 lists built, walked and freed one after the other: 50 instances of 20 nodes and 19 edges,
 * none alive at the end; 5 walks of 19 traversals and 19 more as the list is freed, all after the
 * last edge (stability factor 1); each lives under a fiftieth of the run, and together they cover
 * at most all of it. */
static void test_short_lists(void **state)
{
	const struct mn_pnode *row[64];
	struct mn_profile *p;
	double total = 0;
	uint64_t t;
	size_t n;

	build("short_lists", "-O1");
	p = run("50");
	t = type_at(p, "node");
	assert_int_equal(u64(type_row(p, t), "instances"), 50);
	n = instances_of(p, t, row, 64);
	assert_int_equal(n, 50);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(u64(row[i], "nodes"), 20);
		assert_int_equal(u64(row[i], "live_nodes"), 0);
		assert_int_equal(u64(row[i], "edges"), 19);
		assert_int_equal(u64(row[i], "traversals"), 6 * 19);
		/* one interval: frees are no alteration points */
		assert_int_equal(u64(row[i], "stability_factor"), 1);
		assert_true(f64(row[i], "lifetime") < 1.0 / 50);
		total += f64(row[i], "lifetime");
	}
	assert_true(total <= 1.0);
	assert_true(f64(type_row(p, t), "avg_lifetime") < 1.0 / 50);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* Two list routines, the first list's tail linked to the second's head: two types (section 3.2),
 * one instance each (10 and 30 nodes); the link between them is not an edge of either. */
static void test_two_types(void **state)
{
	struct mn_profile *p;
	uint64_t ta, tb;

	build("two_types", "-O1");
	p = run("");
	assert_int_equal(u64(sec(p, "summary"), "types"), 2);
	ta = type_at(p, "a");
	tb = type_at(p, "b");
	assert_int_not_equal(ta, tb);
	assert_int_equal(u64(only_instance(p, ta), "nodes"), 10);
	assert_int_equal(u64(only_instance(p, ta), "edges"), 9);
	assert_int_equal(u64(only_instance(p, tb), "nodes"), 30);
	assert_int_equal(u64(only_instance(p, tb), "edges"), 29);
	assert_int_equal(u64(mn_profile_module(p, "rds-shape"), "pending_edges"), 1);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* A tree built top-down has only forward edges, one built bottom-up only backward ones: 62 each
 * (full binary trees of depth 6, 63 nodes). */
static void test_trees(void **state)
{
	const struct mn_pnode *td, *bu;
	struct mn_profile *p;

	build("trees", "-O1");
	p = run("");
	assert_int_equal(u64(sec(p, "summary"), "types"), 2);
	td = only_instance(p, type_at(p, "top_down"));
	bu = only_instance(p, type_at(p, "bottom_up"));
	assert_int_equal(u64(td, "nodes"), 63);
	assert_int_equal(u64(td, "forward_edges"), 62);
	assert_int_equal(u64(td, "backward_edges"), 0);
	assert_int_equal(u64(bu, "nodes"), 63);
	assert_int_equal(u64(bu, "forward_edges"), 0);
	assert_int_equal(u64(bu, "backward_edges"), 62);
	/* the sums walk every edge once */
	assert_int_equal(u64(td, "traversals"), 62);
	assert_int_equal(u64(bu, "traversals"), 62);
	/* left and right (offsets 0, 8): to younger children top-down, to older ones bottom-up */
	expect_edge(p, "top_down", "top_down", 62, (const uint64_t[]){ 0, 8 }, 2, 62, 0);
	expect_edge(p, "bottom_up", "bottom_up", 62, (const uint64_t[]){ 0, 8 }, 2, 0, 62);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* A doubly linked list of 64 nodes: 126 edges, 63 forward (next), 63 backward (prev); walked
 * both ways: 126 traversals, each but the first continuing from where the last arrived except
 * where the walks turn (the forward walk ends at a NULL). */
static void test_dlist(void **state)
{
	const struct mn_pnode *i;
	struct mn_profile *p;

	build("dlist", "-O1");
	p = run("64");
	assert_int_equal(u64(sec(p, "summary"), "types"), 1);
	i = only_instance(p, type_at(p, "node"));
	assert_int_equal(u64(i, "nodes"), 64);
	assert_int_equal(u64(i, "edges"), 126);
	assert_int_equal(u64(i, "forward_edges"), 63);
	assert_int_equal(u64(i, "backward_edges"), 63);
	assert_int_equal(u64(i, "traversals"), 126);
	/* next (offset 0) from the older tail to the new node, prev (offset 8) back: one edge of
	 * the graph, both fields, 63 stores each way */
	expect_edge(p, "node", "node", 126, (const uint64_t[]){ 0, 8 }, 2, 63, 63);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/* Two graphs with cycles, vertices and edge records from two sites that point to each other: one
 * type of both sites; two instances (nothing links the graphs), each of 10 vertices and 20 edge
 * records, with the vertex -> record pointers stored before the cycle of sites closed revisited
 * into them (Figure 3); the arrays of vertices are in no type (10 pending pointers each). */
static void test_graph(void **state)
{
	static const char *const both[] = { "vertex", "edge" };
	const struct mn_pnode *row[3];
	struct mn_profile *p;
	uint64_t t;

	build("graph", "-O1");
	p = run("10");
	assert_int_equal(u64(sec(p, "summary"), "types"), 1);
	t = type_of(p, both, 2);
	assert_int_equal(u64(type_row(p, t), "instances"), 2);
	assert_int_equal(instances_of(p, t, row, 3), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(u64(row[i], "nodes"), 30);
		/* per edge record: vertex -> record, record -> vertex, and record -> next
		 * record but for each vertex's first: 20 + 20 + 10 */
		assert_int_equal(u64(row[i], "edges"), 50);
		assert_true(u64(row[i], "traversals") > 0);
	}
	assert_int_equal(u64(mn_profile_module(p, "rds-shape"), "pending_edges"), 20);
	expect_nothing_lost(p);
	mn_profile_close(p);
}

/*
 * Threads (threaded/threads.c): four threads, each building and walking its own list at one site,
 * each list freed by a later thread.  Every thread's events come (complete: true): one type,
 * four instances of 10, 20, 30, 40 nodes, whatever the interleaving; n - 1 backward edges each,
 * 3 (n - 1) traversals (two walks by its maker, one by the thread that frees it), 3 (n - 2) of
 * them depth-first (each walk's first starts afresh); no free of an unknown object.
 */
static void test_threads(void **state)
{
	const struct mn_pnode *row[5];
	struct mn_profile *p;
	const char *why = NULL;
	bool seen[5] = { false };
	uint64_t t;

	progdir = THREADED_DIR;
	build("threads", "-O1 -pthread");
	p = run("");
	if (!mn_profile_complete(p, &why))
		fail_msg("threads: complete: false: %s", why ? why : "?");
	assert_int_equal(u64(sec(p, "summary"), "types"), 1);
	t = type_at(p, "node");
	assert_int_equal(u64(type_row(p, t), "instances"), 4);
	assert_int_equal(u64(type_row(p, t), "nodes"), 100);
	assert_int_equal(instances_of(p, t, row, 5), 4);
	for (int i = 0; i < 4; i++) {
		uint64_t n = u64(row[i], "nodes");

		assert_true(n % 10 == 0 && n >= 10 && n <= 40 && !seen[n / 10]);
		seen[n / 10] = true;
		assert_int_equal(u64(row[i], "live_nodes"), 0);
		assert_int_equal(u64(row[i], "edges"), n - 1);
		assert_int_equal(u64(row[i], "backward_edges"), n - 1);
		assert_int_equal(u64(row[i], "traversals"), 3 * (n - 1));
		assert_int_equal(u64(row[i], "dfs_like"), 3 * (n - 2));
		assert_int_equal(u64(row[i], "bfs_like"), 0);
	}
	expect_nothing_lost(p);
	mn_profile_close(p);
	progdir = PROGRAMS_DIR;
}

/* ---- Memory ---------------------------------------------------------------------------------- */

/*
 * Ten million nodes in 100 waves of 100,000, each wave built, walked and freed (programs/waves.c):
 * the backend's peak RSS must stay within a constant of the live set, here the program's own peak
 * RSS (which holds it) twice over plus 64 MiB.  A backend that kept anything per node ever
 * allocated (48 bytes of object record alone) would need 480 MB.
 */
static void test_memory(void **state)
{
	const uint64_t mib = 1024;   /* in KiB */
	struct rusage ru;
	struct mn_profile *p;
	const struct mn_pnode *b;
	char path[600], why[512], err[4096];
	uint64_t program_kib, backend_kib = 0;
	pid_t pid;
	int st;

	build("waves", "-O2");
	assert_int_equal(shell("clang-19 -O2 %s/waves.c -o %s/waves.native", PROGRAMS_DIR, work),
			 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		snprintf(path, sizeof(path), "%s/waves.native", work);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(path, path, "100", "100000", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(wait4(pid, &st, 0, &ru), pid);
	assert_int_equal(st, 0);
	program_kib = (uint64_t)ru.ru_maxrss;

	st = shell("cd %s && %s/mnemo run -o waves.yaml -- ./waves 100 100000 >/dev/null "
		   "2>waves.err", work, BINDIR);
	snprintf(path, sizeof(path), "%s/waves.err", work);
	slurp(path, err, sizeof(err));
	if (st)
		fail_msg("waves: mnemo run failed: %s", err);
	snprintf(path, sizeof(path), "%s/waves.yaml", work);
	if (mn_profile_open(&p, path, why, sizeof(why)))
		fail_msg("profile: %s", why);
	b = mn_pnode_get(mn_pnode_get(mn_profile_root(p), "backend"), "rds-shape");
	mn_pnode_u64(mn_pnode_get(b, "peak_rss_kib"), &backend_kib);
	prog = "waves";
	assert_true(u64(sec(p, "heap"), "objects") >= 10000000);
	assert_int_equal(u64(sec(p, "summary"), "instances"), 100);
	assert_int_equal(u64(sec(p, "summary"), "nodes"), 10000000);
	mn_profile_close(p);
	print_message("waves: program %lu KiB, backend %lu KiB, budget %lu KiB\n",
		      (unsigned long)program_kib, (unsigned long)backend_kib,
		      (unsigned long)(2 * program_kib + 64 * mib));
	assert_true(backend_kib > 0);
	assert_true(backend_kib <= 2 * program_kib + 64 * mib);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure2),
		cmocka_unit_test(test_list_stable),
		cmocka_unit_test(test_list_insert),
		cmocka_unit_test(test_short_lists),
		cmocka_unit_test(test_two_types),
		cmocka_unit_test(test_trees),
		cmocka_unit_test(test_dlist),
		cmocka_unit_test(test_graph),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_memory),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
