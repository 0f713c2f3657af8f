/*
 * The rds-shape module driven directly with event sequences (synthetic addresses, no program),
 * whose answers follow from the paper's definitions and modules/rds-shape/README.md: Figure 3
 * event by event and what happens when its two sites later join one SCC, pending edges, realloc,
 * frees, the stability factor on intervals of known sizes, edge removal, traversal patterns.  The
 * section is emitted, wrapped in a minimal profile and read back with libmnemo-profile.
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

#include "module.h"
#include "profile.h"
#include "edge_row.h"

extern const struct mn_module mn_module_rds_shape;
#define RDS (&mn_module_rds_shape)

/* Synthetic heap: object k of a test at BASE + k * 64. */
#define BASE UINT64_C(0x200000000)
#define OBJ(k) (BASE + (uint64_t)(k) * 64)

/* ---- Driving the module ---------------------------------------------------------------------- */

static void *rds_new(void)
{
	void *st = calloc(1, RDS->state_size);

	assert_non_null(st);
	assert_int_equal(RDS->init(st, NULL), 0);
	return st;
}

static void alloc(void *st, uint32_t site, unsigned k)
{
	RDS->heap_alloc(st, site, OBJ(k), 24);
}

/* Object k's field at off now points to object j (into its first byte). */
static void link_(void *st, unsigned k, unsigned off, unsigned j)
{
	RDS->store(st, 0, OBJ(k) + off, OBJ(j), 8);
}

static void traverse(void *st, unsigned k, unsigned off, unsigned j)
{
	RDS->load(st, 0, OBJ(k) + off, OBJ(j), 8);
}

/*
 * Emits the section, wraps it in a profile, reads it back; finalizes the state.  The caller
 * closes the profile.
 */
static struct mn_profile *finish(void *st)
{
	char path[] = "/tmp/mnemo-rds-events.XXXXXX", *text = NULL, why[512];
	struct mn_profile *prof;
	struct mn_prof *p;
	size_t len = 0;
	FILE *f;
	int fd;

	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(mn_prof_open(&p, f), 0);
	assert_int_equal(RDS->emit(st, p), 0);
	assert_int_equal(mn_prof_close(p), 0);
	fclose(f);
	RDS->fini(st);
	free(st);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "format: mnemo-profile/1\nprogram: {argv: [t], exit_status: 0, signal: null}\n"
		   "complete: true\nsites: {}\nmodules:\n  rds-shape:\n");
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if (strcmp(line, "---") && strcmp(line, "..."))
			fprintf(f, "    %s\n", line);
	fclose(f);
	free(text);
	if (mn_profile_open(&prof, path, why, sizeof(why)))
		fail_msg("the section does not read back: %s", why);
	unlink(path);
	return prof;
}

static const struct mn_pnode *sec(const struct mn_profile *p, const char *key)
{
	const struct mn_pnode *n = mn_pnode_get(mn_profile_module(p, "rds-shape"), key);

	if (!n)
		fail_msg("expected '%s' in the section", key);
	return n;
}

static uint64_t u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_u64(mn_pnode_get(n, key), &v))
		fail_msg("line %u: expected an integer '%s'", mn_pnode_line(n), key);
	return v;
}

/* The instance row named id (the serial of its oldest object). */
static const struct mn_pnode *instance(const struct mn_profile *p, uint64_t id)
{
	const struct mn_pnode *rows = sec(p, "instances");

	for (size_t i = 0; i < mn_pnode_len(rows); i++)
		if (u64(mn_pnode_at(rows, i), "instance") == id)
			return mn_pnode_at(rows, i);
	fail_msg("expected an instance %lu, got none", (unsigned long)id);
	return NULL;
}

/* Type t (1-based)'s sites are exactly sites[0..n). */
static void expect_type_sites(const struct mn_profile *p, unsigned t, const uint64_t *sites,
			      size_t n)
{
	const struct mn_pnode *s = mn_pnode_get(mn_pnode_at(sec(p, "types"), t - 1), "sites");

	assert_int_equal(mn_pnode_len(s), n);
	for (size_t i = 0; i < n; i++) {
		uint64_t v;

		assert_int_equal(mn_pnode_u64(mn_pnode_at(s, i), &v), 0);
		assert_int_equal(v, sites[i]);
	}
}

/*
 * Row i of the static shape graph: `stores`, its pointer fields exactly fields[0..n) (offsets,
 * increasing), `forward` and `backward` stores.
 */
static void expect_edge(const struct mn_profile *p, size_t i, uint64_t stores,
			const uint64_t *fields, size_t n, uint64_t fwd, uint64_t bwd)
{
	expect_edge_row(mn_pnode_at(sec(p, "static_shape_graph"), i), stores, fields, n, fwd, bwd);
}

/* ---- Figure 3 -------------------------------------------------------------------------------- */

/*
 * Figure 3, event by event.  Objects: the array (site A = 1, serial 1), then the paper's nodes
 * 1..6 (site T = 2, serials 2..7).  One type, {T}; two instances, named 2 and 5, of three nodes
 * and two forward edges each; the array's two edges wait in the queue.
 */
static void figure3(void *st)
{
	alloc(st, 1, 0);        /* dynid 0: the array */
	alloc(st, 2, 1);
	alloc(st, 2, 2);
	link_(st, 1, 8, 2);     /* 7: st8 [r14] = r8: merge(1,2) */
	alloc(st, 2, 3);
	link_(st, 1, 16, 3);    /* 10: merge(1,3) */
	link_(st, 0, 0, 1);     /* 15: queued: T and A are not one SCC */
	alloc(st, 2, 4);
	alloc(st, 2, 5);
	link_(st, 4, 8, 5);     /* merge(4,5) */
	alloc(st, 2, 6);
	link_(st, 4, 16, 6);    /* merge(4,6) */
	link_(st, 0, 8, 4);     /* 17: queued */
}

static void test_figure3(void **state)
{
	static const uint64_t t_only[] = { 2 };
	void *st = rds_new();
	struct mn_profile *p;
	const struct mn_pnode *ssg;

	figure3(st);
	p = finish(st);
	assert_int_equal(u64(sec(p, "summary"), "types"), 1);
	expect_type_sites(p, 1, t_only, 1);
	assert_int_equal(u64(sec(p, "summary"), "instances"), 2);
	assert_int_equal(mn_pnode_len(sec(p, "instances")), 2);
	for (uint64_t id = 2; id <= 5; id += 3) {
		assert_int_equal(u64(instance(p, id), "nodes"), 3);
		assert_int_equal(u64(instance(p, id), "edges"), 2);
		assert_int_equal(u64(instance(p, id), "forward_edges"), 2);
		assert_int_equal(u64(instance(p, id), "backward_edges"), 0);
	}
	assert_int_equal(u64(mn_profile_module(p, "rds-shape"), "pending_edges"), 2);
	ssg = sec(p, "static_shape_graph");
	assert_int_equal(mn_pnode_len(ssg), 2);
	assert_int_equal(u64(mn_pnode_at(ssg, 0), "src_site"), 1);
	assert_int_equal(u64(mn_pnode_at(ssg, 0), "dst_site"), 2);
	assert_int_equal(u64(mn_pnode_at(ssg, 0), "stores"), 2);
	assert_int_equal(u64(mn_pnode_at(ssg, 1), "src_site"), 2);
	assert_int_equal(u64(mn_pnode_at(ssg, 1), "dst_site"), 2);
	assert_int_equal(u64(mn_pnode_at(ssg, 1), "stores"), 4);
	/* the array's fields 0 and 8 point to younger roots; the nodes' 8 and 16 to younger kids */
	expect_edge(p, 0, 2, (const uint64_t[]){ 0, 8 }, 2, 2, 0);
	expect_edge(p, 1, 4, (const uint64_t[]){ 8, 16 }, 2, 4, 0);
	mn_profile_close(p);
}

/*
 * Figure 3, then a T object points back into the array: A and T become one SCC, the queued edges
 * are revisited (section 3.2: "if T and A become part of the same SCC, we can merge the nodes 0
 * and 1"), and all seven objects are one instance of the type {A, T}, with every edge: 4 + 2
 * queued + 1.
 */
static void test_figure3_joined(void **state)
{
	static const uint64_t a_and_t[] = { 1, 2 };
	void *st = rds_new();
	struct mn_profile *p;

	figure3(st);
	link_(st, 3, 0, 0);     /* node 3's first field -> the array */
	p = finish(st);
	assert_int_equal(u64(sec(p, "summary"), "types"), 1);
	expect_type_sites(p, 1, a_and_t, 2);
	assert_int_equal(u64(sec(p, "summary"), "instances"), 1);
	assert_int_equal(u64(instance(p, 1), "nodes"), 7);
	assert_int_equal(u64(instance(p, 1), "edges"), 7);
	assert_int_equal(u64(instance(p, 1), "forward_edges"), 6);   /* the array is the oldest */
	assert_int_equal(u64(instance(p, 1), "backward_edges"), 1);
	assert_int_equal(u64(mn_profile_module(p, "rds-shape"), "pending_edges"), 0);
	/* node 3 (younger) -> the array: T -> A, backward, from field 0 */
	assert_int_equal(u64(mn_pnode_at(sec(p, "static_shape_graph"), 1), "src_site"), 2);
	assert_int_equal(u64(mn_pnode_at(sec(p, "static_shape_graph"), 1), "dst_site"), 1);
	expect_edge(p, 1, 1, (const uint64_t[]){ 0 }, 1, 0, 1);
	mn_profile_close(p);
}

/* A lone object of a site with no self-loop is no instance; a self-pointer makes one. */
static void test_self_loop(void **state)
{
	void *st = rds_new();
	struct mn_profile *p;

	alloc(st, 1, 0);
	alloc(st, 2, 1);
	link_(st, 1, 0, 1);
	p = finish(st);
	assert_int_equal(u64(sec(p, "summary"), "types"), 1);
	assert_int_equal(u64(instance(p, 2), "nodes"), 1);
	assert_int_equal(u64(instance(p, 2), "self_edges"), 1);
	/* a self-store is neither forward nor backward */
	expect_edge(p, 0, 1, (const uint64_t[]){ 0 }, 1, 0, 0);
	mn_profile_close(p);
}

/* The graph's fields are the offsets 0, 8, ..., 504 stored into: an unaligned offset or one past
 * 504 counts as a store but is not listed. */
static void test_edge_fields(void **state)
{
	void *st = rds_new();
	struct mn_profile *p;

	RDS->heap_alloc(st, 1, OBJ(0), 1024);
	RDS->heap_alloc(st, 1, OBJ(100), 24);
	RDS->store(st, 0, OBJ(0) + 512, OBJ(100), 8);
	RDS->store(st, 0, OBJ(0) + 4, OBJ(100), 8);
	RDS->store(st, 0, OBJ(0) + 504, OBJ(100), 8);
	RDS->store(st, 0, OBJ(100) + 16, OBJ(0), 8);
	p = finish(st);
	expect_edge(p, 0, 4, (const uint64_t[]){ 16, 504 }, 2, 3, 1);
	mn_profile_close(p);
}

/* ---- Objects --------------------------------------------------------------------------------- */

/* realloc keeps the object (serial, site, instance); its old address maps to nothing. */
static void test_reallocs(void **state)
{
	void *st = rds_new();
	struct mn_profile *p;

	alloc(st, 1, 0);                     /* serial 1 */
	alloc(st, 1, 1);                     /* serial 2 */
	link_(st, 0, 0, 1);                  /* forward */
	RDS->heap_realloc(st, 0, OBJ(0), OBJ(5), 48);
	link_(st, 1, 0, 5);                  /* into the moved object: backward */
	link_(st, 1, 8, 0);                  /* its old place: no object, no edge */
	traverse(st, 5, 0, 1);               /* from the moved object */
	p = finish(st);
	assert_int_equal(u64(sec(p, "heap"), "objects"), 2);
	assert_int_equal(u64(sec(p, "heap"), "pointer_stores"), 2);
	assert_int_equal(u64(sec(p, "summary"), "instances"), 1);
	assert_int_equal(u64(instance(p, 1), "nodes"), 2);
	assert_int_equal(u64(instance(p, 1), "forward_edges"), 1);
	assert_int_equal(u64(instance(p, 1), "backward_edges"), 1);
	assert_int_equal(u64(instance(p, 1), "traversals"), 1);
	mn_profile_close(p);
}

/* An address anywhere inside an object finds it; one past its end does not. */
static void test_interior(void **state)
{
	void *st = rds_new();
	struct mn_profile *p;

	alloc(st, 1, 0);
	alloc(st, 1, 1);
	RDS->store(st, 0, OBJ(0) + 16, OBJ(1) + 20, 8);   /* inside both: an edge */
	RDS->store(st, 0, OBJ(0) + 8, OBJ(1) + 24, 8);    /* past object 1's 24 bytes: none */
	p = finish(st);
	assert_int_equal(u64(sec(p, "heap"), "pointer_stores"), 1);
	assert_int_equal(u64(instance(p, 1), "edges"), 1);
	mn_profile_close(p);
}

/* An instance whose objects are all freed is final: no live nodes, one instance; the type's
 * lifetime is its first allocation to its last traversal; a free of no object is counted. */
static void test_frees(void **state)
{
	void *st = rds_new();
	struct mn_profile *p;
	double lifetime;

	alloc(st, 1, 0);          /* clock 1 */
	alloc(st, 1, 1);          /* 2 */
	link_(st, 0, 0, 1);       /* 3 */
	traverse(st, 0, 0, 1);    /* 4: the last traversal */
	RDS->heap_free(st, 0, OBJ(0));   /* 5 */
	RDS->heap_free(st, 0, OBJ(1));   /* 6 */
	RDS->heap_free(st, 0, OBJ(7));   /* 7: unknown */
	RDS->heap_free(st, 0, OBJ(1));   /* 8: twice: unknown */
	p = finish(st);
	assert_int_equal(u64(instance(p, 1), "live_nodes"), 0);
	assert_int_equal(u64(instance(p, 1), "created"), 1);
	assert_int_equal(u64(instance(p, 1), "destroyed"), 4);
	assert_int_equal(mn_pnode_f64(mn_pnode_get(instance(p, 1), "lifetime"), &lifetime), 0);
	assert_true(lifetime == 3.0 / 8.0);
	assert_int_equal(u64(sec(p, "lost"), "unknown_frees"), 2);
	assert_int_equal(u64(sec(p, "heap"), "live_at_end"), 0);
	mn_profile_close(p);
}

/*
 * A pending edge whose destination dies is dropped: when the sites later join one SCC, the dead
 * object's instance is not revived and the live ones join only through live edges.
 */
static void test_pending_dead(void **state)
{
	void *st = rds_new();
	struct mn_profile *p;

	alloc(st, 1, 0);          /* the container, site 1 */
	alloc(st, 2, 1);          /* an element, site 2 */
	link_(st, 0, 0, 1);       /* pending */
	RDS->heap_free(st, 0, OBJ(1));
	alloc(st, 2, 2);          /* serial 3 */
	link_(st, 2, 0, 0);       /* 2 -> 1 makes {1, 2}: the dead edge is dropped */
	p = finish(st);
	assert_int_equal(u64(sec(p, "summary"), "instances"), 1);
	assert_int_equal(u64(instance(p, 1), "nodes"), 2);
	assert_int_equal(u64(instance(p, 1), "edges"), 1);
	assert_int_equal(u64(sec(p, "lost"), "pending_dropped"), 1);
	mn_profile_close(p);
}

/* A later store into the same field replaces a pending edge (one per pointer field). */
static void test_pending_replaced(void **state)
{
	void *st = rds_new();
	struct mn_profile *p;

	alloc(st, 1, 0);
	alloc(st, 2, 1);
	alloc(st, 2, 2);
	link_(st, 0, 0, 1);
	link_(st, 0, 0, 2);       /* the field now points to 2 */
	link_(st, 0, 8, 2);       /* another field */
	p = finish(st);
	assert_int_equal(u64(mn_profile_module(p, "rds-shape"), "pending_edges"), 2);
	mn_profile_close(p);
}

/* ---- Stability, patterns --------------------------------------------------------------------- */

/* Two objects linked, then intervals of n[0], n[1], ... traversals between re-stores of the link
 * (each an alteration point); returns the stability factor. */
static uint64_t stability_of(const unsigned *n, size_t k)
{
	void *st = rds_new();
	struct mn_profile *p;
	uint64_t s;

	alloc(st, 1, 0);
	alloc(st, 1, 1);
	for (size_t i = 0; i < k; i++) {
		link_(st, 0, 0, 1);
		for (unsigned j = 0; j < n[i]; j++)
			traverse(st, 0, 0, 1);
	}
	p = finish(st);
	s = u64(instance(p, 1), "stability_factor");
	mn_profile_close(p);
	return s;
}

static void test_stability(void **state)
{
	static const unsigned one[] = { 500 }, two[] = { 990, 10 }, three[] = { 50, 30, 20 },
			      skewed[] = { 5, 900, 4, 3, 88 }, never[] = { 0, 0 };

	assert_int_equal(stability_of(one, 1), 1);
	assert_int_equal(stability_of(two, 2), 1);       /* 990 of 1000 is 99% */
	assert_int_equal(stability_of(three, 3), 3);     /* 50 + 30 < 99 */
	assert_int_equal(stability_of(skewed, 5), 3);    /* 900 + 88 + 5 = 993 >= 990 */
	assert_int_equal(stability_of(never, 2), 0);
}

/* A NULL stored into a pointer field of an instance's node removes an edge: an alteration point.
 * One stored into a field no pointer was ever stored to is data: nothing. */
static void test_removal(void **state)
{
	void *st = rds_new();
	struct mn_profile *p;

	alloc(st, 1, 0);
	alloc(st, 1, 1);
	link_(st, 0, 0, 1);                        /* alteration 1 */
	for (int i = 0; i < 60; i++)
		traverse(st, 0, 0, 1);
	RDS->store(st, 0, OBJ(0) + 8, 0, 8);       /* data */
	for (int i = 0; i < 30; i++)
		traverse(st, 0, 0, 1);
	RDS->store(st, 0, OBJ(0), 0, 8);           /* removal: alteration 2 */
	for (int i = 0; i < 10; i++)
		traverse(st, 0, 0, 1);
	p = finish(st);
	assert_int_equal(u64(instance(p, 1), "alterations"), 2);
	assert_int_equal(u64(instance(p, 1), "stability_factor"), 2);   /* 90 + 10 */
	mn_profile_close(p);
}

/* a -> b -> c walked as a chain: depth-first; then a's two children in turn: breadth-first. */
static void test_patterns(void **state)
{
	void *st = rds_new();
	struct mn_profile *p;

	for (unsigned k = 0; k < 3; k++)
		alloc(st, 1, k);
	link_(st, 0, 0, 1);
	link_(st, 1, 0, 2);
	link_(st, 0, 8, 2);
	traverse(st, 0, 0, 1);
	traverse(st, 1, 0, 2);   /* from where the last arrived: dfs */
	traverse(st, 0, 0, 1);   /* unrelated */
	traverse(st, 0, 8, 2);   /* from where the last left: bfs */
	traverse(st, 0, 0, 1);   /* bfs */
	traverse(st, 0, 8, 2);   /* bfs: 3 of the 5 successive pairs, most of them */
	p = finish(st);
	assert_int_equal(u64(instance(p, 1), "dfs_like"), 1);
	assert_int_equal(u64(instance(p, 1), "bfs_like"), 3);
	assert_string_equal(mn_pnode_str(mn_pnode_get(instance(p, 1), "pattern"), NULL), "bfs");
	mn_profile_close(p);
}

/* Two lists of different sites linked one way: two types (section 3.2), the link pending. */
static void test_two_types(void **state)
{
	void *st = rds_new();
	struct mn_profile *p;

	for (unsigned k = 0; k < 3; k++)
		alloc(st, 1, k);
	for (unsigned k = 3; k < 6; k++)
		alloc(st, 2, k);
	link_(st, 0, 0, 1);
	link_(st, 1, 0, 2);
	link_(st, 3, 0, 4);
	link_(st, 4, 0, 5);
	link_(st, 2, 0, 3);
	p = finish(st);
	assert_int_equal(u64(sec(p, "summary"), "types"), 2);
	assert_int_equal(u64(sec(p, "summary"), "instances"), 2);
	assert_int_equal(u64(instance(p, 1), "nodes"), 3);
	assert_int_equal(u64(instance(p, 4), "nodes"), 3);
	assert_int_equal(u64(mn_profile_module(p, "rds-shape"), "pending_edges"), 1);
	mn_profile_close(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure3),
		cmocka_unit_test(test_figure3_joined),
		cmocka_unit_test(test_self_loop),
		cmocka_unit_test(test_edge_fields),
		cmocka_unit_test(test_reallocs),
		cmocka_unit_test(test_interior),
		cmocka_unit_test(test_frees),
		cmocka_unit_test(test_pending_dead),
		cmocka_unit_test(test_pending_replaced),
		cmocka_unit_test(test_stability),
		cmocka_unit_test(test_removal),
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_two_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
