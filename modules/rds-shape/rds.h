/*
 * rds-shape's private header: the module's state (struct rds) and what its files share.
 *
 *	rds_shape.c   the profile builder: the handlers, edge_add(), traverse(), node_delete(),
 *	              and the RDS instances, a union-find with deletion
 *	rows.c        the stability factor, the rows listed, the per-site totals, the end of a run
 *	graph.c       the static shape graph: nodes, edges, types (its cyclic SCCs); merging runs
 *	section.c     the profile section declared on schema.h; what emit() and restore() add
 *	scc.c         online SCCs of the shape graph (Pearce and Kelly)
 *	tables.c      the pending edges
 *
 * Not thread-safe: one worker (shard: none).
 */
#ifndef RDS_H
#define RDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allocctx.h"
#include "map.h"
#include "objects.h"
#include "schema.h"
#include "scc.h"
#include "tables.h"

#define T_PERCENT     99      /* the stability factor's threshold t, in percent */
#define TOP_INTERVALS 64      /* interval counts kept per instance for the stability factor */
#define ROWS          1000    /* instances listed in the profile: the most traversed */
#define FIELDS        64      /* pointer fields remembered per site: offsets 0, 8, ..., 504 */

/*
 * An SSG edge looked up lately: its key (u << 32 | v) and index + 1 (0: an empty entry).  A
 * memo in front of edge_of: a pointer store finds its edge with one compare, where the map's
 * lookup takes about three times the old table's instructions (callgrind, bench hashtable), and
 * a program stores between a few site pairs over and over.  Never stale: an edge keeps its index.
 */
#define EDGE_MEMO 64
struct edge_memo {
	uint64_t key;
	uint32_t e;
};

/* Totals over instances: one type's, or those counted at one site. */
struct agg {
	uint64_t instances, nodes, edges, fwd, bwd, self, trav, dfs, bfs;
	uint64_t lifetime;              /* sum of destroyed - created, in events */
	uint64_t span;                  /* sum of the clocks of their runs at the end: lifetime's
					 * denominator, so that runs of other lengths merge */
	uint64_t rsf_sum, rsf_n, rsf_max;   /* stability factors of the traversed instances */
};

/*
 * The tables emit() writes, made from the settled state just before and freed right after
 * (section.c); restore() reads the section into them and rebuilds the state from them.
 */
struct rds_summary {
	uint64_t types;
	struct agg a;                   /* the types' totals added */
	double avg[4];                  /* nodes, size, lifetime, stability factor: not read */
};

struct rds_views {
	struct rds_summary sum;
	struct mn_vec types;            /* struct rds_type_row */
	struct mn_vec edges;            /* struct rds_edge_row */
	uint64_t listed;
	struct mn_vec rows;             /* struct rds_list_row */
};

/* An allocation site, or context (allocctx.h): a node of the static shape graph. */
struct asite {
	uint32_t site;                  /* its key in actx (a site id, or a context's key); 0:
					 * allocations no instrumented call made */
	uint64_t ptr_fields;            /* bit k: a pointer was stored at offset 8k of an object */
	struct agg ended;               /* instances that ended (died, or the run did), by site */
};

/* One SSG edge: some object of site u pointed into some object of site v. */
struct ssg_edge {
	uint32_t u, v;
	uint64_t stores;                /* edge_add events between their objects */
	uint64_t fields;                /* bit k: one of them stored at offset 8k of its source */
	uint64_t fwd, bwd;              /* of the stores, those from an older object to a younger
					 * one, and from a younger to an older (self-stores: neither) */
};

/* Adds the counts of add to e's: stores and directions add, fields unite. */
static inline void rds_edge_fold(struct ssg_edge *e, const struct ssg_edge *add)
{
	e->stores += add->stores;
	e->fields |= add->fields;
	e->fwd += add->fwd;
	e->bwd += add->bwd;
}

/* An RDS instance (live: it has live members).  What every traversal touches comes first, in the
 * record's first cache line. */
struct inst {
	uint64_t trav, dfs, bfs;        /* traversals; successive ones sharing a node, a source */
	uint64_t cur;                   /* traversals since the last alteration point */
	uint64_t last_trav;             /* clock at its last traversal; 0: none */
	uint32_t last_src, last_dst;    /* slots of its last traversal's ends; 0: none */
	uint32_t head;                  /* first live member (slot); 0: none */
	uint32_t last_thread;           /* the program thread of its last traversal */
	uint64_t id;                    /* the serial of its oldest member: its name */
	uint32_t node;                  /* a member's site (SSG node): its type, at emit */
	uint64_t created;               /* clock at its oldest member's allocation */
	uint64_t last_edge;             /* clock at its last edge; 0: none */
	uint64_t nodes, live;           /* members ever, alive */
	uint64_t edges, fwd, bwd, self; /* edge_add events inside it, by the ends' ages */
	uint64_t alterations;           /* alteration points (section 5) */
	uint64_t *top;                  /* traversals of past intervals, the largest, ntop */
	uint32_t ntop, captop;
	bool top_cut;                   /* intervals were dropped from top[] */
} __attribute__((aligned(64)));

/* An instance as listed: final, or as it stands at the end of the run. */
struct row {
	uint64_t id, created, destroyed, nodes, live, edges, fwd, bwd, self, trav, dfs, bfs;
	uint64_t alterations, rsf;
	uint64_t clock;                 /* its run's clock at the end (0 until rds_settle()) */
	uint32_t node;                  /* an SSG node of its type */
	uint32_t type;                  /* its type's number, set by emit() for the order */
	bool capped;                    /* rsf is a lower bound (top[] was cut) */
};

/* An object's neighbours in its instance's list of live members (slots, 0: none). */
struct link {
	uint32_t prev, next;
};

struct rds {
	struct mn_objects obj;          /* heap objects only, so looked up by granule, touching no
					 * record; group: SSG node; serial: from 1, in order */
	uint32_t *inst_of;              /* by slot: its instance, 0: none.  Apart from obj and
					 * links so that a traversal's two lookups touch 4 dense
					 * bytes, not two records */
	struct link *links;             /* by slot */
	uint32_t nslots;                /* inst_of[] and links[] allocated */
	uint64_t serial;                /* the last serial handed out: objects made */
	struct rds_scc ssg;
	struct asite *sites;            /* by SSG node */
	uint32_t *node_of;              /* by site id: SSG node + 1; 0: none yet */
	uint32_t nnode_of;
	struct mn_map *edge_of;         /* (u << 32 | v) -> SSG edge index + 1, MN_MAP_CONST: each
					 * key is inserted once, with the index it gets */
	uint64_t hot_key;               /* the last edge looked up, and its index + 1 (0: none), */
	uint32_t hot_edge;              /* tried before memo[] */
	struct ssg_edge *edges;
	uint32_t nedges, capedges;
	struct rds_pending pend;
	struct mn_allocctx actx;        /* the SSG nodes' allocation contexts */
	struct inst *inst;              /* by index; [0] unused; free ones have id 0 */
	uint32_t ninst, capinst, free_inst;
	struct row *rows;               /* final instances kept for the listing */
	size_t nrows, caprows;
	uint64_t now;                   /* the clock: loads, stores and heap events so far; in a
					 * merged state, the runs' clocks added */
	uint64_t pointer_stores, pointer_loads;
	uint64_t unknown_frees, nomem;
	uint32_t thread;                /* the program thread whose events come now (.thread) */
	/*
	 * The end of the run (rds_settle()): live instances are rows and counted in their sites'
	 * totals, and what emit() writes from the object and pending tables is copied here, so
	 * that restore() can set it and merge() combine it.  No event may follow.
	 */
	bool settled;
	uint64_t peak_live, live_at_end, aliased, pending, pending_dropped;
	struct edge_memo memo[EDGE_MEMO];   /* edges looked up lately, by mn_hash64() of key */
	double threshold;               /* T_PERCENT / 100: a constant the section states */
	struct rds_views view;          /* section.c: empty but while writing or reading */
};

/* A type: one cyclic SCC of the SSG. */
struct type {
	uint32_t comp;                  /* its representative node */
	uint32_t first_site;            /* its smallest site (mn_allocctx_cmp()): the types' order */
	struct agg a;
};

/* ---- rows.c: intervals, rows, totals -------------------------------------------------------- */

void rds_top_push(struct rds *r, struct inst *I, uint64_t c);     /* an interval's traversals */
struct row rds_row_of(struct rds *r, struct inst *I);              /* I's row now */
void rds_row_keep(struct rds *r, const struct row *w);             /* to its site, the listing */
void rds_agg_sum(struct agg *a, const struct agg *b);              /* a += b */
int rds_by_listing(const void *a, const void *b);                  /* qsort: the listing order */
size_t rds_listed(const struct rds *r);                            /* rows sorted: how many go */
void rds_rows_trim(struct rds *r);                                 /* sort, keep those listed */
bool rds_rows_append(struct rds *r, const struct row *w);          /* false: nomem */
void rds_rows_push(struct rds *r, const struct row *w);            /* append, trim now and then */
void rds_settle(struct rds *r);                                    /* the end of the run, once */

/* Ends the current interval of I: inline, as rds_shape.c's alter() calls it on every edge. */
static inline void close_interval(struct rds *r, struct inst *I)
{
	if (I->cur)
		rds_top_push(r, I, I->cur);
	I->cur = 0;
}

/* ---- graph.c: the static shape graph --------------------------------------------------------- */

uint32_t rds_node_of(struct rds *r, uint32_t site);                 /* UINT32_MAX: nomem */
uint32_t rds_edge_index(struct rds *r, uint64_t key);               /* index + 1, 0: none */
int rds_ssg_new_edge(struct rds *r, uint32_t u, uint32_t v, const struct ssg_edge *add);
int rds_find_types(struct rds *r, struct type **types, uint32_t **type_of, uint32_t *ntypes);
void rds_merge(void *into, void *from);                             /* mn_module.merge */

/* ---- section.c: the profile section ---------------------------------------------------------- */

extern const struct mn_schema rds_section;   /* its plain fields merge by it (rds_merge()) */
int rds_emit(void *st, struct mn_prof *p);                           /* mn_module.emit */
int rds_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		char *err, size_t errlen);                           /* mn_module.restore */

#endif /* RDS_H */
