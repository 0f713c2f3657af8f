/*
 * value-pattern: for every load and store site, whether it always sees the same value, how many
 * distinct values it sees (up to VALUE_CAP), and the dominant address stride between its
 * consecutive executions -- PROMPT's Figure 6 with LEAP's strides.  Schema: README.md.
 *
 * Strides are counted with Space-Saving (Metwally et al., 2005): STRIDE_SLOTS (stride, count, err)
 * counters per site.  While a site has at most STRIDE_SLOTS distinct strides the counts are exact;
 * beyond, a new stride evicts the smallest counter and inherits its count as err, so count - err is
 * a lower bound on the true count.  The reported stride is the one with the largest lower bound.
 *
 * Per-site state lives in a flat array indexed by site id (backend/sitevec.h), sized from the
 * site table; a site's record (about 300 bytes) is allocated when it first executes.  Sharded by
 * site: each worker sees all executions of its sites, in order, so strides are exact per worker
 * and merge() only has to move sites across.
 *
 * Two more tables serve compiler clients (mnemo-use): `functions`, the entry count of every
 * function (func_entry events), and `memops`, the length operand of memcpy, memmove and memset,
 * which arrives as the size of the store event the pass emits for the destination.  A store site
 * is a memop site when the site table names it memcpy, memmove or memset; that is looked up once,
 * when the site first executes, so other stores pay one test of a field of their own record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "module.h"
#include "sitevec.h"

#define VALUE_CAP      16   /* distinct values tracked per site */
#define STRIDE_SLOTS   8    /* Space-Saving counters per site */
#define STRONG_PERCENT 70   /* strongly strided: one stride covers >= 70% of the strides (LEAP) */
#define MEMOP_SIZES    8    /* distinct memop lengths counted exactly per site in a run */

enum memop_kind { OP_NONE, OP_MEMCPY, OP_MEMMOVE, OP_MEMSET };

static const char *const op_names[] = { "", "memcpy", "memmove", "memset" };

struct size_count {
	uint64_t size;
	uint64_t count;
};

/* A memop site's lengths: up to MEMOP_SIZES in a run, first come first counted; others in other. */
struct memop {
	enum memop_kind op;
	uint32_t nsizes;          /* sizes[0..nsizes) */
	uint32_t cap;             /* room in sizes[]: MEMOP_SIZES, more in merged states */
	uint64_t executions;
	uint64_t other;           /* executions whose length is not in sizes[] */
	struct size_count sizes[];
};

struct stride_slot {
	int64_t stride;           /* bytes from the previous execution's address */
	uint64_t count;           /* occurrences (an upper bound once evictions happened) */
	uint64_t err;             /* how much of count may belong to evicted strides */
};

struct site {
	uint32_t id;
	bool store;               /* a store site (else a load) */
	bool capped;              /* more than VALUE_CAP distinct values */
	uint8_t ndistinct;        /* values[0..ndistinct) */
	uint8_t nstrides;         /* strides[0..nstrides) */
	uint64_t executions;
	uint64_t last_addr;
	uint64_t values[VALUE_CAP];
	struct stride_slot strides[STRIDE_SLOTS];
	struct memop *memop;      /* a memcpy, memmove or memset destination store; else NULL */
};

struct func {
	uint64_t entries;
};

struct vp {
	struct mn_sitevec sites;  /* struct site by site id */
	struct mn_sitevec funcs;  /* struct func by function site id */
	const struct mn_run *run; /* its site table names the memop sites */
	uint64_t lost;            /* events dropped for lack of memory */
};

/* The bounded set of values: up to VALUE_CAP, then only "capped". */
static void value_add(struct site *s, uint64_t v)
{
	if (s->capped)
		return;
	for (unsigned i = 0; i < s->ndistinct; i++)
		if (s->values[i] == v)
			return;
	if (s->ndistinct == VALUE_CAP)
		s->capped = true;
	else
		s->values[s->ndistinct++] = v;
}

/* Space-Saving: count stride d; when it is new and the table full, it replaces the minimum. */
static void stride_add(struct site *s, int64_t d)
{
	struct stride_slot *min = NULL;

	for (unsigned i = 0; i < s->nstrides; i++) {
		struct stride_slot *c = &s->strides[i];

		if (c->stride == d) {
			c->count++;
			return;
		}
		if (!min || c->count < min->count)
			min = c;
	}
	if (s->nstrides < STRIDE_SLOTS)
		s->strides[s->nstrides++] = (struct stride_slot){ d, 1, 0 };
	else
		*min = (struct stride_slot){ d, min->count + 1, min->count };
}

/* A new memop record with room for cap sizes; NULL without memory. */
static struct memop *memop_new(enum memop_kind op, uint32_t cap)
{
	struct memop *m = calloc(1, sizeof(*m) + cap * sizeof(m->sizes[0]));

	if (m) {
		m->op = op;
		m->cap = cap;
	}
	return m;
}

/* What the site table says site id is: a memcpy, memmove or memset store, or nothing of those. */
static enum memop_kind memop_kind_of(const struct mn_run *run, uint32_t id)
{
	const struct mn_run_site *rs = mn_run_site(run, id);

	if (!rs || strcmp(rs->kind, "store"))
		return OP_NONE;
	for (unsigned k = OP_MEMCPY; k <= OP_MEMSET; k++)
		if (!strcmp(rs->name, op_names[k]))
			return (enum memop_kind)k;
	return OP_NONE;
}

/* A site's first execution: what it is, once. */
static void site_first(struct vp *vp, struct site *s, uint32_t id, bool store)
{
	enum memop_kind op;

	s->id = id;
	s->store = store;
	if (!store || (op = memop_kind_of(vp->run, id)) == OP_NONE)
		return;
	s->memop = memop_new(op, MEMOP_SIZES);
	if (!s->memop)
		vp->lost++;   /* its lengths go uncounted: the profile says incomplete */
}

/* Counts one length of a memop site: exactly for MEMOP_SIZES distinct lengths, then in other. */
static void memop_add(struct memop *m, uint64_t size)
{
	m->executions++;
	for (uint32_t i = 0; i < m->nsizes; i++)
		if (m->sizes[i].size == size) {
			m->sizes[i].count++;
			return;
		}
	if (m->nsizes < MEMOP_SIZES)
		m->sizes[m->nsizes++] = (struct size_count){ size, 1 };
	else
		m->other++;
}

/* The one handler behind load and store; returns the site's record, NULL without memory. */
static inline struct site *on_access(struct vp *vp, uint32_t id, uint64_t addr, uint64_t value,
				     bool store)
{
	struct site *s = mn_sitevec_get(&vp->sites, id);

	if (!s) {
		vp->lost++;
		return NULL;
	}
	if (s->executions++)
		stride_add(s, (int64_t)(addr - s->last_addr));
	else
		site_first(vp, s, id, store);
	s->last_addr = addr;
	value_add(s, value);
	return s;
}

static void vp_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, value, false);
}

/* size is 0 but at memop sites: there it is the call's length (saturated at 2^24 - 1). */
static void vp_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	struct site *s = on_access(st, site, addr, value, true);

	if (s && __builtin_expect(s->memop != NULL, 0))
		memop_add(s->memop, size);
}

static void vp_func_entry(void *st, uint32_t site)
{
	struct vp *vp = st;
	struct func *f = mn_sitevec_get(&vp->funcs, site);

	if (f)
		f->entries++;
	else
		vp->lost++;
}

static int vp_init(void *st, const struct mn_run *run)
{
	struct vp *vp = st;
	int err;

	vp->run = run;
	err = mn_sitevec_init(&vp->sites, sizeof(struct site), mn_run_site_count(run));
	if (!err)
		err = mn_sitevec_init(&vp->funcs, sizeof(struct func), mn_run_site_count(run));
	if (err)
		mn_sitevec_free(&vp->sites);
	return err;
}

/* Frees a site's own allocations (not the record: the sitevec does). */
static void site_free(struct site *s)
{
	free(s->memop);
	s->memop = NULL;
}

static void vp_fini(void *st)
{
	struct vp *vp = st;
	struct site *s;

	MN_SITEVEC_FOREACH(&vp->sites, id, s)
		site_free(s);
	mn_sitevec_free(&vp->sites);
	mn_sitevec_free(&vp->funcs);
}

/*
 * Sharded by site, two workers never share a site: take the other worker's.  Function entries are
 * context events, which every worker sees: into already counted them.
 */
static void vp_merge(void *into_, void *from_)
{
	struct vp *into = into_, *from = from_;
	struct site *s;

	into->lost += from->lost;
	mn_sitevec_take(&into->sites, &from->sites);
	MN_SITEVEC_FOREACH(&from->sites, id, s)   /* left behind only when memory ran out */
		into->lost += s->executions;
}

/* The stride with the largest guaranteed count (count - err); ties go to the smaller stride. */
static const struct stride_slot *dominant(const struct site *s)
{
	const struct stride_slot *best = &s->strides[0];

	for (unsigned i = 1; i < s->nstrides; i++) {
		const struct stride_slot *c = &s->strides[i];
		uint64_t cg = c->count - c->err, bg = best->count - best->err;

		if (cg > bg || (cg == bg && c->stride < best->stride))
			best = c;
	}
	return best;
}

static int by_executions(const void *a, const void *b)
{
	const struct site *x = *(const struct site *const *)a, *y = *(const struct site *const *)b;

	if (x->executions != y->executions)
		return x->executions > y->executions ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* A memop's lengths as the profile lists them: by count, descending, then by size. */
static int by_count(const void *a, const void *b)
{
	const struct size_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

static void emit_functions(struct vp *vp, struct mn_prof *p)
{
	struct func *f;

	mn_prof_key(p, "functions");
	mn_prof_seq_begin(p);
	MN_SITEVEC_FOREACH(&vp->funcs, id, f) {
		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "site", (uint32_t)id);
		mn_prof_kv_u64(p, "entries", f->entries);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
}

static int emit_memops(struct vp *vp, struct mn_prof *p)
{
	struct size_count *sorted = NULL;
	uint32_t room = 0;
	struct site *s;

	mn_prof_key(p, "memops");
	mn_prof_seq_begin(p);
	MN_SITEVEC_FOREACH(&vp->sites, id, s) {
		const struct memop *m = s->memop;

		if (!m)
			continue;
		if (m->nsizes > room) {
			free(sorted);
			room = m->nsizes;
			sorted = malloc(room * sizeof(*sorted));
			if (!sorted)
				return -ENOMEM;
		}
		if (m->nsizes)
			memcpy(sorted, m->sizes, m->nsizes * sizeof(*sorted));
		qsort(sorted, m->nsizes, sizeof(*sorted), by_count);
		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "site", s->id);
		mn_prof_kv_str(p, "op", op_names[m->op]);
		mn_prof_kv_u64(p, "executions", m->executions);
		mn_prof_key(p, "sizes");
		mn_prof_seq_begin_flow(p);
		for (uint32_t i = 0; i < m->nsizes; i++) {
			mn_prof_map_begin_flow(p);
			mn_prof_kv_u64(p, "size", sorted[i].size);
			mn_prof_kv_u64(p, "count", sorted[i].count);
			mn_prof_map_end(p);
		}
		mn_prof_seq_end(p);
		mn_prof_kv_u64(p, "other", m->other);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	free(sorted);
	return 0;
}

static int vp_emit(void *st, struct mn_prof *p)
{
	int err;
	struct vp *vp = st;
	struct site **order = malloc((vp->sites.n + 1) * sizeof(*order)), *s;
	size_t n = 0;

	if (!order)
		return -ENOMEM;
	MN_SITEVEC_FOREACH(&vp->sites, id, s)
		order[n++] = s;
	qsort(order, n, sizeof(*order), by_executions);

	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "value_cap", VALUE_CAP);
	mn_prof_kv_f64(p, "strong_stride_fraction", STRONG_PERCENT / 100.0);
	if (vp->lost)
		mn_prof_kv_u64(p, "lost_events", vp->lost);
	mn_prof_key(p, "entries");
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < n; i++) {
		bool constant;

		s = order[i];
		constant = s->ndistinct == 1 && !s->capped;

		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "site", s->id);
		mn_prof_kv_str(p, "access", s->store ? "store" : "load");
		mn_prof_kv_u64(p, "executions", s->executions);
		mn_prof_kv_bool(p, "constant", constant);
		if (constant)
			mn_prof_kv_u64(p, "value", s->values[0]);
		mn_prof_kv_u64(p, "distinct", s->ndistinct);
		mn_prof_kv_bool(p, "distinct_capped", s->capped);
		if (s->executions >= 2) {
			const struct stride_slot *d = dominant(s);
			uint64_t covered = d->count - d->err, strides = s->executions - 1;

			mn_prof_kv_i64(p, "stride", d->stride);
			mn_prof_kv_f64(p, "stride_fraction", (double)covered / (double)strides);
			mn_prof_kv_bool(p, "strongly_strided",
					covered * 100 >= strides * STRONG_PERCENT);
		}
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	free(order);
	emit_functions(vp, p);
	err = emit_memops(vp, p);
	mn_prof_map_end(p);
	return err;
}

const struct mn_module mn_module_value_pattern = {
	.name = "value-pattern",
	.doc = "constant and few-valued loads and stores, dominant address strides",
	.state_size = sizeof(struct vp),
	.shard = MN_SHARD_SITE,
	.init = vp_init,
	.fini = vp_fini,
	.load = vp_load,
	.store = vp_store,
	.func_entry = vp_func_entry,
	.merge = vp_merge,
	.emit = vp_emit,
};
