/*
 * The online SCCs of modules/rds-shape/scc.c against a slow, obviously correct twin: after every
 * edge of a random sequence, Tarjan's algorithm from scratch on the whole graph must give the same
 * partition into components, the same cyclic components (two or more nodes, or a self-loop), and
 * rds_scc_add_edge() must have said "changed" exactly when the partition or a cyclic flag did.
 * Known answers first: small graphs written by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scc.h"

#define MAXN 64

/* ---- The twin: Tarjan on an adjacency matrix ------------------------------------------------- */

struct twin {
	unsigned n;
	bool adj[MAXN][MAXN];
	int comp[MAXN];        /* component number, by Tarjan's finishing order */
	bool cyclic[MAXN];     /* per node: its component is cyclic */
	/* Tarjan's state */
	int index[MAXN], low[MAXN], stack[MAXN], sp, next, ncomp;
	bool on[MAXN];
};

static void strong(struct twin *t, int v)
{
	t->index[v] = t->low[v] = t->next++;
	t->stack[t->sp++] = v;
	t->on[v] = true;
	for (unsigned w = 0; w < t->n; w++) {
		if (!t->adj[v][w])
			continue;
		if (t->index[w] < 0) {
			strong(t, w);
			t->low[v] = t->low[w] < t->low[v] ? t->low[w] : t->low[v];
		} else if (t->on[w]) {
			t->low[v] = t->index[w] < t->low[v] ? t->index[w] : t->low[v];
		}
	}
	if (t->low[v] == t->index[v]) {
		int w, size = 0, first = t->sp;

		do {
			w = t->stack[--t->sp];
			t->on[w] = false;
			t->comp[w] = t->ncomp;
			size++;
		} while (w != v);
		for (int i = t->sp; i < first; i++) {
			int m = t->stack[i];

			t->cyclic[m] = size > 1 || t->adj[m][m];
		}
		t->ncomp++;
	}
}

static void tarjan(struct twin *t)
{
	t->sp = t->next = t->ncomp = 0;
	for (unsigned v = 0; v < t->n; v++) {
		t->index[v] = -1;
		t->on[v] = false;
	}
	for (unsigned v = 0; v < t->n; v++)
		if (t->index[v] < 0)
			strong(t, v);
}

/* ---- Comparing ------------------------------------------------------------------------------- */

/* The fast graph agrees with the twin: same partition, same cyclic flags, and valid. */
static void expect_same(const struct rds_scc *g, const struct twin *t, const char *what)
{
	for (unsigned u = 0; u < t->n; u++) {
		if (rds_scc_cyclic(g, u) != t->cyclic[u])
			fail_msg("%s: node %u: expected cyclic %d (Tarjan), got %d", what, u,
				 t->cyclic[u], rds_scc_cyclic(g, u));
		for (unsigned v = 0; v < t->n; v++) {
			bool fast = rds_scc_comp(g, u) == rds_scc_comp(g, v);
			bool slow = t->comp[u] == t->comp[v];

			if (fast != slow)
				fail_msg("%s: nodes %u, %u: expected same component %d "
					 "(Tarjan), got %d",
					 what, u, v, slow, fast);
		}
	}
	if (!rds_scc_valid(g))
		fail_msg("%s: rds_scc_valid() failed", what);
}

/* A snapshot of the twin's partition and flags, to tell whether an edge changed them. */
static bool same_partition(const struct twin *a, const int *comp, const bool *cyclic)
{
	for (unsigned u = 0; u < a->n; u++) {
		if (a->cyclic[u] != cyclic[u])
			return false;
		for (unsigned v = 0; v < a->n; v++)
			if ((a->comp[u] == a->comp[v]) != (comp[u] == comp[v]))
				return false;
	}
	return true;
}

/* Adds u -> v to both and checks them, and the changed answer. */
static void add(struct rds_scc *g, struct twin *t, unsigned u, unsigned v)
{
	int comp[MAXN];
	bool cyclic[MAXN];
	char what[64];
	int changed;

	memcpy(comp, t->comp, sizeof(comp));
	memcpy(cyclic, t->cyclic, sizeof(cyclic));
	changed = rds_scc_add_edge(g, u, v);
	assert_true(changed >= 0);
	t->adj[u][v] = true;
	tarjan(t);
	snprintf(what, sizeof(what), "after %u -> %u", u, v);
	expect_same(g, t, what);
	if (changed != !same_partition(t, comp, cyclic))
		fail_msg("%s: expected changed %d, got %d", what, !same_partition(t, comp, cyclic),
			 changed);
}

static void setup_graph(struct rds_scc *g, struct twin *t, unsigned n)
{
	rds_scc_init(g);
	memset(t, 0, sizeof(*t));
	t->n = n;
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(rds_scc_add_node(g), i);
	tarjan(t);
	expect_same(g, t, "no edges");
}

/* ---- Known answers --------------------------------------------------------------------------- */

/* A lone node is no SCC; its self-loop makes it one (the paper's footnote 1). */
static void test_self_loop(void **state)
{
	struct rds_scc g;
	struct twin t;

	setup_graph(&g, &t, 2);
	assert_false(rds_scc_cyclic(&g, 0));
	add(&g, &t, 0, 0);
	assert_true(rds_scc_cyclic(&g, 0));
	assert_false(rds_scc_cyclic(&g, 1));
	assert_int_equal(rds_scc_add_edge(&g, 0, 0), 0);   /* a repeat changes nothing */
	rds_scc_free(&g);
}

/* Figure 1's SSG: A -> T, T -> T: T one SCC, A none, never together. */
static void test_figure1(void **state)
{
	struct rds_scc g;
	struct twin t;

	setup_graph(&g, &t, 2);
	add(&g, &t, 1, 1);
	add(&g, &t, 0, 1);
	assert_true(rds_scc_cyclic(&g, 1));
	assert_false(rds_scc_cyclic(&g, 0));
	assert_int_not_equal(rds_scc_comp(&g, 0), rds_scc_comp(&g, 1));
	rds_scc_free(&g);
}

/* A chain 0 -> 1 -> 2 -> 3 closed by 3 -> 0 (against the order): one component of four; then
 * a second cycle 4 <-> 5 joined to it in both directions: all six. */
static void test_cycles_merge(void **state)
{
	struct rds_scc g;
	struct twin t;

	setup_graph(&g, &t, 6);
	add(&g, &t, 0, 1);
	add(&g, &t, 1, 2);
	add(&g, &t, 2, 3);
	assert_false(rds_scc_cyclic(&g, 0));
	add(&g, &t, 3, 0);
	assert_true(rds_scc_cyclic(&g, 2));
	assert_int_equal(rds_scc_comp(&g, 0), rds_scc_comp(&g, 3));
	add(&g, &t, 5, 4);
	add(&g, &t, 4, 5);
	add(&g, &t, 2, 4);
	assert_int_not_equal(rds_scc_comp(&g, 0), rds_scc_comp(&g, 4));
	add(&g, &t, 5, 1);
	for (unsigned u = 1; u < 6; u++)
		assert_int_equal(rds_scc_comp(&g, 0), rds_scc_comp(&g, u));
	rds_scc_free(&g);
}

/* Edges against the order that close no cycle: the order is repaired, nothing merges. */
static void test_reorder(void **state)
{
	struct rds_scc g;
	struct twin t;

	setup_graph(&g, &t, 5);
	add(&g, &t, 4, 3);
	add(&g, &t, 3, 2);
	add(&g, &t, 2, 1);
	add(&g, &t, 1, 0);
	add(&g, &t, 4, 0);
	for (unsigned u = 0; u < 5; u++)
		assert_false(rds_scc_cyclic(&g, u));
	rds_scc_free(&g);
}

/* ---- Random sequences ------------------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15;

static unsigned next(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* Many graphs of 2 to 40 nodes, each edge at most once, sparse to dense, checked edge by edge. */
static void test_random(void **state)
{
	unsigned graphs = 0, edges = 0, merges = 0;

	for (unsigned round = 0; round < 400; round++) {
		unsigned n = 2 + next(39), m = next(3 * n + 1);
		struct rds_scc g;
		struct twin t;

		setup_graph(&g, &t, n);
		for (unsigned i = 0; i < m; i++) {
			unsigned u = next(n), v = next(n);

			if (t.adj[u][v])
				continue;
			/* sometimes a self-loop on purpose: they are rare otherwise */
			if (next(16) == 0)
				v = u;
			if (t.adj[u][v])
				continue;
			add(&g, &t, u, v);
			edges++;
		}
		merges += (unsigned)g.merges;
		graphs++;
		rds_scc_free(&g);
	}
	print_message("%u graphs, %u edges, %u component merges: all agree with Tarjan\n", graphs,
		      edges, merges);
	assert_true(merges > 100);
}

/* Nodes added after edges: the graph grows in both ways at once. */
static void test_random_growing(void **state)
{
	for (unsigned round = 0; round < 100; round++) {
		struct rds_scc g;
		struct twin t;

		setup_graph(&g, &t, 1);
		for (unsigned i = 0; i < 120; i++) {
			if (t.n < MAXN && next(4) == 0) {
				assert_int_equal(rds_scc_add_node(&g), t.n);
				t.n++;
				tarjan(&t);
				expect_same(&g, &t, "after a node");
			} else {
				unsigned u = next(t.n), v = next(t.n);

				if (!t.adj[u][v])
					add(&g, &t, u, v);
			}
		}
		rds_scc_free(&g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_loop),
		cmocka_unit_test(test_figure1),
		cmocka_unit_test(test_cycles_merge),
		cmocka_unit_test(test_reorder),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_random_growing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
