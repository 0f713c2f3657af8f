/*
 * Strongly connected components of a directed graph that only grows, kept up to date one edge at a
 * time: Pearce and Kelly's online topological order (2003), extended to components as in their
 * report's second half.  rds-shape keeps its static shape graph (allocation sites, one edge per
 * site pair that a pointer store ever linked) in one, and asks after every new edge whether two
 * sites are in one component.
 *
 * The components form a DAG; every component has an order number, ord, and ord(a) < ord(b) for
 * every edge between components a -> b.  An edge that respects the order costs nothing more.  One
 * that goes against it, u -> v with ord(v) < ord(u), searches forward from v and backward from u,
 * only among components whose ord lies between the two: the nodes found are re-ordered into the
 * order numbers they held (those that reach u first), and when the forward search reaches u the
 * new edge closed a cycle: every component on a path v ~> u merges into one.
 *
 * A component is "cyclic" when it has two or more nodes, or one node with an edge to itself: the
 * paper's SCC (Raman and August, footnote 1: "a single node without a self-loop" is none).
 *
 * Not thread-safe.  Functions returning int return 0 (or what they say) or -errno.
 */
#ifndef RDS_SCC_H
#define RDS_SCC_H

#include <stdbool.h>
#include <stdint.h>

#define RDS_SCC_NONE UINT32_MAX

struct rds_scc_adj {
	uint32_t *v;
	uint32_t n, cap;
};

/* One node; the fields below `rep only` are the component's, valid at its representative. */
struct rds_scc_node {
	uint32_t comp;                /* the representative node of its component */
	uint32_t next;                /* the next member of its component; RDS_SCC_NONE: last */
	struct rds_scc_adj out, in;   /* its edges, each once per add_edge() call */
	/* rep only: */
	uint32_t last;                /* the component's last member */
	uint32_t size;                /* its members */
	uint32_t ord;                 /* its place in the topological order of the components */
	uint32_t fmark, bmark;        /* epoch of the last forward / backward search to find it */
	bool cyclic;                  /* an SCC in the paper's sense (above) */
};

struct rds_scc {
	struct rds_scc_node *v;
	uint32_t n, cap;
	uint32_t next_ord;            /* the order number a new node gets */
	uint32_t epoch;               /* of the current search */
	uint64_t merges;              /* component merges so far */
	/* search scratch, each up to n long */
	uint32_t *stack, *pool;       /* components to visit; pooled order numbers */
	uint64_t *fwd, *bwd;          /* found: ord << 32 | component */
	uint32_t scratch_cap;
};

/* An empty graph in g (zeroed by the caller or not).  Never fails. */
void rds_scc_init(struct rds_scc *g);
void rds_scc_free(struct rds_scc *g);

/* Adds a node alone in its own (acyclic) component; returns its index (0, 1, 2, ...) or -ENOMEM. */
int64_t rds_scc_add_node(struct rds_scc *g);

/*
 * Adds the edge u -> v (both existing nodes).  Returns 1 when the components changed (some merged,
 * or u == v made a lone node cyclic), 0 when they did not, -ENOMEM with the graph unchanged.  The
 * caller adds each distinct edge once: a repeat is harmless but costs memory.
 */
int rds_scc_add_edge(struct rds_scc *g, uint32_t u, uint32_t v);

/* The representative of u's component: equal for two nodes exactly when they share one. */
static inline uint32_t rds_scc_comp(const struct rds_scc *g, uint32_t u)
{
	return g->v[u].comp;
}

static inline bool rds_scc_cyclic(const struct rds_scc *g, uint32_t u)
{
	return g->v[g->v[u].comp].cyclic;
}

/*
 * Checks every invariant of a graph nobody is changing: component lists and sizes agree with comp,
 * every edge between components goes up the order, order numbers are distinct.  Returns true when
 * all hold (for tests: cheap it is not).
 */
bool rds_scc_valid(const struct rds_scc *g);

#endif /* RDS_SCC_H */
