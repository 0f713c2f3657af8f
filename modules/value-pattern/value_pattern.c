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
 * and the workers' merge only has to move sites across.
 *
 * Two more tables serve compiler clients (mnemo-use): `functions`, the entry count of every
 * function (func_entry events), and `memops`, the length operand of memcpy, memmove and memset,
 * which arrives as the size of the store event the pass emits for the destination.  A store site
 * is a memop site when the site table names it memcpy, memmove or memset; that is looked up once,
 * when the site first executes, so other stores pay one test of a field of their own record.
 *
 * The section carries every counter (the values while not capped, the stride counters), so that
 * restore() rebuilds a state from it and merge() folds the states of several runs (`mnemo merge`):
 * everything written that is not a counter (constant, distinct, the dominant stride, its fraction)
 * is derived in emit() from merged integers.  Merged states may hold more than STRIDE_SLOTS strides
 * and MEMOP_SIZES lengths per site (the union of the runs'); they never see events.
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
#define ADDR_MASK      ((UINT64_C(1) << 48) - 1)   /* addresses are 48 bits on the wire */

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
	/* Merged and restored states only: more than STRIDE_SLOTS strides, all of them here (and
	 * none in strides[]); NULL otherwise.  Live sites never have it, so stride_add() need not
	 * look. */
	struct stride_slot *xstrides;
	uint32_t nxstrides;
};

struct func {
	uint64_t entries;
};

struct vp {
	struct mn_sitevec sites;  /* struct site by site id */
	struct mn_sitevec funcs;  /* struct func by function site id */
	const struct mn_run *run; /* its site table names the memop sites */
	uint64_t lost;            /* events dropped for lack of memory */
	bool restored;            /* made by restore(), from a profile: see vp_merge() */
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

/*
 * Space-Saving: count stride d c times (c >= 1); when it is new and the table full, it replaces the
 * minimum.  The same as c single counts in a row: the first puts d in the table, the others find it.
 */
static void stride_add_n(struct site *s, int64_t d, uint64_t c)
{
	struct stride_slot *min = NULL;

	for (unsigned i = 0; i < s->nstrides; i++) {
		struct stride_slot *slot = &s->strides[i];

		if (slot->stride == d) {
			slot->count += c;
			return;
		}
		if (!min || slot->count < min->count)
			min = slot;
	}
	if (s->nstrides < STRIDE_SLOTS)
		s->strides[s->nstrides++] = (struct stride_slot){ d, c, 0 };
	else
		*min = (struct stride_slot){ d, min->count + c, min->count };
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

/* A site's stride counters, wherever they are. */
static const struct stride_slot *strides_of(const struct site *s, uint32_t *n)
{
	if (s->xstrides) {
		*n = s->nxstrides;
		return s->xstrides;
	}
	*n = s->nstrides;
	return s->strides;
}

/* Makes slots[0..n) a site's stride counters: inline when they fit, else slots itself (taken). */
static void strides_set(struct site *s, struct stride_slot *slots, uint32_t n)
{
	free(s->xstrides);
	s->xstrides = NULL;
	s->nxstrides = 0;
	if (n <= STRIDE_SLOTS) {
		if (n)
			memcpy(s->strides, slots, n * sizeof(*slots));
		s->nstrides = (uint8_t)n;
		free(slots);
	} else {
		s->nstrides = 0;
		s->xstrides = slots;
		s->nxstrides = n;
	}
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
static inline struct site *on_access(struct vp *vp, uint32_t id, uint64_t addr, bool store)
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
	return s;
}

static void vp_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, false);
}

/* size is 0 but at memop sites: there it is the call's length (saturated at 2^24 - 1). */
static void vp_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	struct site *s = on_access(st, site, addr, true);

	if (s && __builtin_expect(s->memop != NULL, 0))
		memop_add(s->memop, size);
}

/*
 * A value of the site, at least once per distinct one (events.yaml `value`), perhaps before the
 * site's first execution arrives in a summary.  Each new value is published, so that the program
 * stops sending it; once capped, none is needed any more.
 */
static void vp_value(void *st, uint32_t site, uint64_t value)
{
	struct vp *vp = st;
	struct site *s = mn_sitevec_get(&vp->sites, site);
	unsigned before;

	if (!s) {
		vp->lost++;
		return;
	}
	if (s->capped)
		return;
	before = s->ndistinct;
	value_add(s, value);
	if (s->capped)
		mn_run_value_all(vp->run, site);
	else if (s->ndistinct != before)
		mn_run_value_seen(vp->run, site, value);
}

/*
 * A loop summary (pass/README.md): per access, one stride from the site's last address, then
 * iterations - 1 times its step, in O(1).  Its values come as `value` events (vp_value()).  No
 * summary site is a memop store (a memory intrinsic keeps its loop per access).
 */
static void vp_loop_summary(void *st, uint32_t loop, uint64_t iterations,
			    const struct mn_summary_access *acc, unsigned n)
{
	struct vp *vp = st;

	for (unsigned j = 0; j < n; j++) {
		const struct mn_summary_access *a = &acc[j];
		struct site *s = mn_sitevec_get(&vp->sites, a->site);
		uint64_t first = a->start & ADDR_MASK;

		if (!s) {
			vp->lost += iterations;
			continue;
		}
		if (s->executions)
			stride_add(s, (int64_t)(first - s->last_addr));
		else
			site_first(vp, s, a->site, a->store);
		if (iterations > 1)
			stride_add_n(s, a->step, iterations - 1);
		s->executions += iterations;
		s->last_addr = (a->start + (iterations - 1) * (uint64_t)a->step) & ADDR_MASK;
	}
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
	free(s->xstrides);
	s->xstrides = NULL;
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

/* ---- Merging --------------------------------------------------------------------------------- */

static int by_stride(const void *a, const void *b)
{
	const struct stride_slot *x = a, *y = b;

	return x->stride < y->stride ? -1 : x->stride > y->stride;
}

static int by_size(const void *a, const void *b)
{
	const struct size_count *x = a, *y = b;

	return x->size < y->size ? -1 : x->size > y->size;
}

/* Values: the union up to VALUE_CAP; one more distinct value and the site is capped. */
static void values_fold(struct site *t, const struct site *s)
{
	if (s->capped)
		t->capped = true;
	for (unsigned i = 0; i < s->ndistinct && !t->capped; i++)
		value_add(t, s->values[i]);
	if (t->capped)
		t->ndistinct = VALUE_CAP;   /* what distinct says of a capped site */
}

/* Strides: every stride of the union, counts and errs added.  0 or -ENOMEM (t unchanged). */
static int strides_fold(struct site *t, const struct site *s)
{
	uint32_t nt, ns, n = 0;
	const struct stride_slot *a = strides_of(t, &nt), *b = strides_of(s, &ns);
	struct stride_slot *u;

	if (!ns)
		return 0;
	u = malloc((nt + ns) * sizeof(*u));
	if (!u)
		return -ENOMEM;
	memcpy(u, a, nt * sizeof(*u));
	memcpy(u + nt, b, ns * sizeof(*u));
	qsort(u, nt + ns, sizeof(*u), by_stride);
	for (uint32_t i = 0; i < nt + ns; i++) {
		if (n && u[n - 1].stride == u[i].stride) {
			u[n - 1].count += u[i].count;
			u[n - 1].err += u[i].err;
		} else {
			u[n++] = u[i];
		}
	}
	strides_set(t, u, n);
	return 0;
}

/* Memop lengths: every length of the union, counts added; executions and other add. */
static int memop_fold(struct site *t, struct site *s)
{
	struct memop *a = t->memop, *b = s->memop, *m;
	uint32_t n = 0, all;

	if (!b)
		return 0;
	if (!a) {
		t->memop = b;
		s->memop = NULL;
		return 0;
	}
	all = a->nsizes + b->nsizes;
	m = memop_new(a->op < b->op ? a->op : b->op, all > MEMOP_SIZES ? all : MEMOP_SIZES);
	if (!m)
		return -ENOMEM;
	memcpy(m->sizes, a->sizes, a->nsizes * sizeof(m->sizes[0]));
	memcpy(m->sizes + a->nsizes, b->sizes, b->nsizes * sizeof(m->sizes[0]));
	qsort(m->sizes, all, sizeof(m->sizes[0]), by_size);
	for (uint32_t i = 0; i < all; i++) {
		if (n && m->sizes[n - 1].size == m->sizes[i].size)
			m->sizes[n - 1].count += m->sizes[i].count;
		else
			m->sizes[n++] = m->sizes[i];
	}
	m->nsizes = n;
	m->executions = a->executions + b->executions;
	m->other = a->other + b->other;
	free(a);
	t->memop = m;
	return 0;
}

/*
 * Folds site s of another run into t, the same site here.  Every rule is a union or a sum, so
 * the result does not depend on the order of folds.  Returns 0 or -ENOMEM (then t may hold part
 * of s: the caller counts s's executions lost, and the profile says incomplete).
 */
static int site_fold(struct site *t, struct site *s)
{
	t->executions += s->executions;
	t->store |= s->store;
	values_fold(t, s);
	if (strides_fold(t, s))
		return -ENOMEM;
	return memop_fold(t, s);
}

/*
 * Two callers (module.h).  Site-sharded workers of one run own disjoint sites: their records
 * move across.  States restored from several runs' profiles share sites: those fold.  Function
 * entries are context events, which every worker sees, so a worker's counts are into's already
 * and only restored states' add.
 */
static void vp_merge(void *into_, void *from_)
{
	struct vp *into = into_, *from = from_;
	struct site *s;
	struct func *f;

	into->lost += from->lost;
	mn_sitevec_take(&into->sites, &from->sites);
	MN_SITEVEC_FOREACH(&from->sites, id, s) {   /* sites both have, or no memory to move */
		struct site *t = mn_sitevec_find(&into->sites, (uint32_t)id);

		if (!t || site_fold(t, s))
			into->lost += s->executions;
	}
	if (!from->restored)
		return;
	MN_SITEVEC_FOREACH(&from->funcs, id, f) {
		struct func *g = mn_sitevec_get(&into->funcs, (uint32_t)id);

		if (g)
			g->entries += f->entries;
		else
			into->lost += f->entries;
	}
}

/* ---- Emitting -------------------------------------------------------------------------------- */

/* Stride counters as the profile lists them: the largest lower bound (count - err) first, then
 * the smaller stride; the first is the dominant stride. */
static int by_dominance(const void *a, const void *b)
{
	const struct stride_slot *x = a, *y = b;
	uint64_t gx = x->count - x->err, gy = y->count - y->err;

	if (gx != gy)
		return gx > gy ? -1 : 1;
	return x->stride < y->stride ? -1 : x->stride > y->stride;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int by_executions(const void *a, const void *b)
{
	const struct site *x = *(const struct site *const *)a, *y = *(const struct site *const *)b;

	if (x->executions != y->executions)
		return x->executions > y->executions ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* One row of entries.  Returns 0 or -ENOMEM. */
static int emit_entry(const struct site *s, struct mn_prof *p)
{
	bool constant = s->ndistinct == 1 && !s->capped;
	uint64_t values[VALUE_CAP], strides = 0;
	const struct stride_slot *slots;
	struct stride_slot *sorted;
	uint32_t n, errs = 0;

	mn_prof_map_begin_flow(p);
	mn_prof_kv_site(p, "site", s->id);
	mn_prof_kv_str(p, "access", s->store ? "store" : "load");
	mn_prof_kv_u64(p, "executions", s->executions);
	mn_prof_kv_bool(p, "constant", constant);
	if (constant)
		mn_prof_kv_u64(p, "value", s->values[0]);
	mn_prof_kv_u64(p, "distinct", s->ndistinct);
	mn_prof_kv_bool(p, "distinct_capped", s->capped);
	if (!s->capped && s->ndistinct > 1) {   /* one value: `value` says it */
		memcpy(values, s->values, s->ndistinct * sizeof(values[0]));
		qsort(values, s->ndistinct, sizeof(values[0]), by_value);
		mn_prof_key(p, "values");
		mn_prof_seq_begin_flow(p);
		for (unsigned i = 0; i < s->ndistinct; i++)
			mn_prof_u64(p, values[i]);
		mn_prof_seq_end(p);
	}
	slots = strides_of(s, &n);
	for (uint32_t i = 0; i < n; i++)
		strides += slots[i].count;   /* each stride counted once: executions - 1 in a run */
	if (n) {
		uint64_t covered;

		sorted = malloc(n * sizeof(*sorted));
		if (!sorted)
			return -ENOMEM;
		memcpy(sorted, slots, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), by_dominance);
		covered = sorted[0].count - sorted[0].err;
		mn_prof_kv_i64(p, "stride", sorted[0].stride);
		mn_prof_kv_f64(p, "stride_fraction", (double)covered / (double)strides);
		mn_prof_kv_bool(p, "strongly_strided", covered * 100 >= strides * STRONG_PERCENT);
		/* The counters, stride: count, then stride: err where err is not 0. */
		mn_prof_key(p, "strides");
		mn_prof_map_begin_flow(p);
		for (uint32_t i = 0; i < n; i++) {
			mn_prof_i64(p, sorted[i].stride);
			mn_prof_u64(p, sorted[i].count);
		}
		mn_prof_map_end(p);
		for (uint32_t i = 0; i < n; i++)
			errs += sorted[i].err != 0;
		if (errs) {
			mn_prof_key(p, "stride_errs");
			mn_prof_map_begin_flow(p);
			for (uint32_t i = 0; i < n; i++)
				if (sorted[i].err) {
					mn_prof_i64(p, sorted[i].stride);
					mn_prof_u64(p, sorted[i].err);
				}
			mn_prof_map_end(p);
		}
		free(sorted);
	}
	mn_prof_map_end(p);
	return 0;
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
	struct vp *vp = st;
	struct site **order = malloc((vp->sites.n + 1) * sizeof(*order)), *s;
	size_t n = 0;
	int err = 0;

	if (!order)
		return -ENOMEM;
	/* A site with values but no execution: the program ended inside its loop, whose summary
	 * never came; the per-access build would list it, so the profile says incomplete. */
	MN_SITEVEC_FOREACH(&vp->sites, id, s) {
		if (s->executions)
			order[n++] = s;
		else
			vp->lost++;
	}
	qsort(order, n, sizeof(*order), by_executions);

	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "value_cap", VALUE_CAP);
	mn_prof_kv_f64(p, "strong_stride_fraction", STRONG_PERCENT / 100.0);
	if (vp->lost)
		mn_prof_kv_u64(p, "lost_events", vp->lost);
	mn_prof_key(p, "entries");
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < n && !err; i++)
		err = emit_entry(order[i], p);
	mn_prof_seq_end(p);
	free(order);
	emit_functions(vp, p);
	if (!err)
		err = emit_memops(vp, p);
	mn_prof_map_end(p);
	return err;
}

/* ---- Restoring ------------------------------------------------------------------------------- */

/* Where restore() reads one profile, and where it says what is wrong. */
struct rd {
	const struct mn_profile *prof;
	char *err;
	size_t errlen;
};

/* A missing required field is a section not following the schema: -EINVAL. */
static int req(int e)
{
	return e == -ENOENT ? -EINVAL : e;
}

/* An optional field: 0 and *v untouched when absent. */
static int opt_u64(struct rd *r, const struct mn_pnode *map, const char *key, uint64_t *v)
{
	if (!mn_pnode_get(map, key))
		return 0;
	return mn_pfield_u64(r->prof, map, key, v, r->err, r->errlen);
}

/*
 * The values of a row that is not capped: `value` for one (constant), else `values: [...]`, 2 to
 * VALUE_CAP of them, ascending, as emit() writes them.
 */
static int restore_values(struct rd *r, const struct mn_pnode *row, struct site *s,
			  uint64_t distinct)
{
	const struct mn_pnode *vals;
	size_t n;

	if (distinct == 1) {
		s->ndistinct = 1;
		return req(mn_pfield_u64(r->prof, row, "value", &s->values[0], r->err, r->errlen));
	}
	vals = mn_pfield_node(r->prof, row, "values", MN_PNODE_SEQ, r->err, r->errlen);
	if (!vals)
		return -EINVAL;
	n = mn_pnode_len(vals);
	if (n != distinct || n < 2 || n > VALUE_CAP)
		return mn_pnode_errorf(r->prof, vals, r->err, r->errlen, "field 'values': %zu "
				       "values, but distinct is %llu (value_cap %d, not capped)", n,
				       (unsigned long long)distinct, VALUE_CAP);
	for (size_t i = 0; i < n; i++) {
		const struct mn_pnode *v = mn_pnode_at(vals, i);

		if (mn_pnode_u64(v, &s->values[i]))
			return mn_pnode_errorf(r->prof, v, r->err, r->errlen, "field 'values': "
					       "expected an unsigned integer, found '%.40s'",
					       mn_pnode_str(v, NULL) ? mn_pnode_str(v, NULL) : "");
		if (i && s->values[i] <= s->values[i - 1])
			return mn_pnode_errorf(r->prof, v, r->err, r->errlen, "field 'values': not "
					       "in ascending order, or repeated");
	}
	s->ndistinct = (uint8_t)n;
	return 0;
}

/* The stride of a key of `strides` or `stride_errs`. */
static int stride_key(struct rd *r, const struct mn_pnode *map, size_t i, const char *key,
		      int64_t *stride)
{
	const struct mn_pnode *k = mn_pnode_key_node(map, i);

	if (mn_pnode_i64(k, stride))
		return mn_pnode_errorf(r->prof, k, r->err, r->errlen, "field '%s': expected a "
				       "stride (an integer) as key, found '%.40s'", key,
				       mn_pnode_str(k, NULL) ? mn_pnode_str(k, NULL) : "");
	return 0;
}

/* The value of the i-th entry of `strides` or `stride_errs`, a count. */
static int stride_count(struct rd *r, const struct mn_pnode *map, size_t i, const char *key,
			uint64_t *v)
{
	const struct mn_pnode *n = mn_pnode_at(map, i);

	if (mn_pnode_u64(n, v))
		return mn_pnode_errorf(r->prof, n, r->err, r->errlen, "field '%s': expected an "
				       "unsigned integer, found '%.40s'", key,
				       mn_pnode_str(n, NULL) ? mn_pnode_str(n, NULL) : "");
	return 0;
}

/* `strides: {stride: count, ...}` and `stride_errs: {stride: err, ...}`, absent for a site that
 * executed once. */
static int restore_strides(struct rd *r, const struct mn_pnode *row, struct site *s)
{
	const struct mn_pnode *map, *errs = NULL;
	struct stride_slot *slots;
	size_t n;
	int e;

	if (!mn_pnode_get(row, "strides"))
		return 0;
	map = mn_pfield_node(r->prof, row, "strides", MN_PNODE_MAP, r->err, r->errlen);
	if (!map)
		return -EINVAL;
	if (mn_pnode_get(row, "stride_errs")) {
		errs = mn_pfield_node(r->prof, row, "stride_errs", MN_PNODE_MAP, r->err,
				      r->errlen);
		if (!errs)
			return -EINVAL;
	}
	n = mn_pnode_len(map);
	if (!n || n > UINT32_MAX)
		return mn_pnode_errorf(r->prof, map, r->err, r->errlen, "field 'strides': %zu "
				       "strides", n);
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if ((e = stride_key(r, map, i, "strides", &slots[i].stride)) ||
		    (e = stride_count(r, map, i, "strides", &slots[i].count)))
			goto fail;
		for (size_t j = 0; j < i; j++)
			if (slots[j].stride == slots[i].stride) {
				e = mn_pnode_errorf(r->prof, mn_pnode_key_node(map, i), r->err,
						    r->errlen, "field 'strides': stride %lld "
						    "is listed twice", (long long)slots[i].stride);
				goto fail;
			}
	}
	for (size_t i = 0; i < mn_pnode_len(errs); i++) {
		int64_t stride;
		uint64_t err;
		size_t j = 0;

		if ((e = stride_key(r, errs, i, "stride_errs", &stride)) ||
		    (e = stride_count(r, errs, i, "stride_errs", &err)))
			goto fail;
		while (j < n && slots[j].stride != stride)
			j++;
		if (j == n || slots[j].err || err > slots[j].count) {
			e = mn_pnode_errorf(r->prof, mn_pnode_key_node(errs, i), r->err, r->errlen,
					    "field 'stride_errs': stride %lld: not a stride of "
					    "'strides', listed twice, or more than its count",
					    (long long)stride);
			goto fail;
		}
		slots[j].err = err;
	}
	strides_set(s, slots, (uint32_t)n);
	return 0;
fail:
	free(slots);
	return e;
}

static int restore_entry(struct rd *r, struct vp *vp, const struct mn_pnode *row)
{
	const char *access;
	uint64_t distinct;
	struct site *s;
	uint32_t id;
	int e;

	if ((e = req(mn_pfield_u32(r->prof, row, "site", &id, r->err, r->errlen))))
		return e;
	if (mn_sitevec_find(&vp->sites, id))
		return mn_pnode_errorf(r->prof, mn_pnode_get(row, "site"), r->err, r->errlen,
				       "site %u has two entries", id);
	s = mn_sitevec_get(&vp->sites, id);
	if (!s)
		return -ENOMEM;
	s->id = id;
	if ((e = req(mn_pfield_str(r->prof, row, "access", &access, r->err, r->errlen))))
		return e;
	if (strcmp(access, "load") && strcmp(access, "store"))
		return mn_pnode_errorf(r->prof, mn_pnode_get(row, "access"), r->err, r->errlen,
				       "field 'access': expected load or store, found '%.40s'",
				       access);
	s->store = !strcmp(access, "store");
	if ((e = req(mn_pfield_u64(r->prof, row, "executions", &s->executions, r->err,
				   r->errlen))) ||
	    (e = req(mn_pfield_bool(r->prof, row, "distinct_capped", &s->capped, r->err,
				    r->errlen))) ||
	    (e = req(mn_pfield_u64(r->prof, row, "distinct", &distinct, r->err, r->errlen))))
		return e;
	if (s->capped ? distinct != VALUE_CAP : !distinct || distinct > VALUE_CAP)
		return mn_pnode_errorf(r->prof, mn_pnode_get(row, "distinct"), r->err, r->errlen,
				       "field 'distinct': %llu with value_cap %d and "
				       "distinct_capped %s", (unsigned long long)distinct,
				       VALUE_CAP, s->capped ? "true" : "false");
	if (s->capped)
		s->ndistinct = VALUE_CAP;
	else if ((e = restore_values(r, row, s, distinct)))
		return e;
	return restore_strides(r, row, s);
}

static int restore_memop(struct rd *r, struct vp *vp, const struct mn_pnode *row)
{
	const struct mn_pnode *sizes;
	enum memop_kind op = OP_NONE;
	const char *name;
	struct memop *m;
	struct site *s;
	uint32_t id;
	size_t n;
	int e;

	if ((e = req(mn_pfield_u32(r->prof, row, "site", &id, r->err, r->errlen))) ||
	    (e = req(mn_pfield_str(r->prof, row, "op", &name, r->err, r->errlen))))
		return e;
	s = mn_sitevec_find(&vp->sites, id);
	if (!s || !s->store)
		return mn_pnode_errorf(r->prof, mn_pnode_get(row, "site"), r->err, r->errlen,
				       "memop site %u has no store entry", id);
	if (s->memop)
		return mn_pnode_errorf(r->prof, mn_pnode_get(row, "site"), r->err, r->errlen,
				       "memop site %u is listed twice", id);
	for (unsigned k = OP_MEMCPY; k <= OP_MEMSET; k++)
		if (!strcmp(name, op_names[k]))
			op = (enum memop_kind)k;
	if (op == OP_NONE)
		return mn_pnode_errorf(r->prof, mn_pnode_get(row, "op"), r->err, r->errlen,
				       "field 'op': expected memcpy, memmove or memset, found "
				       "'%.40s'", name);
	sizes = mn_pfield_node(r->prof, row, "sizes", MN_PNODE_SEQ, r->err, r->errlen);
	if (!sizes)
		return -EINVAL;
	n = mn_pnode_len(sizes);
	if (n > UINT32_MAX)
		return mn_pnode_errorf(r->prof, sizes, r->err, r->errlen, "too many sizes");
	m = memop_new(op, n > MEMOP_SIZES ? (uint32_t)n : MEMOP_SIZES);
	if (!m)
		return -ENOMEM;
	s->memop = m;   /* freed with the site, whatever happens below */
	if ((e = req(mn_pfield_u64(r->prof, row, "executions", &m->executions, r->err,
				   r->errlen))) ||
	    (e = req(mn_pfield_u64(r->prof, row, "other", &m->other, r->err, r->errlen))))
		return e;
	for (size_t i = 0; i < n; i++) {
		const struct mn_pnode *c = mn_pnode_at(sizes, i);

		if ((e = req(mn_pfield_u64(r->prof, c, "size", &m->sizes[i].size, r->err,
					   r->errlen))) ||
		    (e = req(mn_pfield_u64(r->prof, c, "count", &m->sizes[i].count, r->err,
					   r->errlen))))
			return e;
		for (size_t j = 0; j < i; j++)
			if (m->sizes[j].size == m->sizes[i].size)
				return mn_pnode_errorf(r->prof, c, r->err, r->errlen,
						       "size %llu is listed twice",
						       (unsigned long long)m->sizes[i].size);
	}
	m->nsizes = (uint32_t)n;
	return 0;
}

static int restore_function(struct rd *r, struct vp *vp, const struct mn_pnode *row)
{
	struct func *f;
	uint32_t id;
	int e;

	if ((e = req(mn_pfield_u32(r->prof, row, "site", &id, r->err, r->errlen))))
		return e;
	if (mn_sitevec_find(&vp->funcs, id))
		return mn_pnode_errorf(r->prof, mn_pnode_get(row, "site"), r->err, r->errlen,
				       "function %u is listed twice", id);
	f = mn_sitevec_get(&vp->funcs, id);
	if (!f)
		return -ENOMEM;
	return req(mn_pfield_u64(r->prof, row, "entries", &f->entries, r->err, r->errlen));
}

/* Calls fn on every row of the list at key (a sequence of mappings). */
static int restore_list(struct rd *r, struct vp *vp, const struct mn_pnode *sec, const char *key,
			int (*fn)(struct rd *, struct vp *, const struct mn_pnode *))
{
	const struct mn_pnode *list = mn_pfield_node(r->prof, sec, key, MN_PNODE_SEQ, r->err,
						     r->errlen);
	int e;

	if (!list)
		return -EINVAL;
	for (size_t i = 0; i < mn_pnode_len(list); i++) {
		const struct mn_pnode *row = mn_pnode_at(list, i);

		if (mn_pnode_kind(row) != MN_PNODE_MAP)
			return mn_pnode_errorf(r->prof, row, r->err, r->errlen, "%s: expected a "
					       "mapping for each row", key);
		if ((e = fn(r, vp, row)))
			return e;
	}
	return 0;
}

static int vp_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		      char *err, size_t errlen)
{
	struct vp *vp = st;
	struct rd r = { prof, err, errlen };
	uint64_t cap;
	double strong;
	int e;

	vp->restored = true;
	if (mn_pnode_kind(sec) != MN_PNODE_MAP)
		return mn_pnode_errorf(prof, sec, err, errlen, "value-pattern: expected a mapping");
	/* The run's settings are this module's constants: another cap or threshold would be
	 * written back as this one's, so such a profile cannot be taken in. */
	if ((e = req(mn_pfield_u64(prof, sec, "value_cap", &cap, err, errlen))) ||
	    (e = req(mn_pfield_f64(prof, sec, "strong_stride_fraction", &strong, err, errlen))))
		return e;
	if (cap != VALUE_CAP)
		return mn_pnode_errorf(prof, mn_pnode_get(sec, "value_cap"), err, errlen,
				       "value_cap %llu: this value-pattern tracks %d values",
				       (unsigned long long)cap, VALUE_CAP);
	if (strong != STRONG_PERCENT / 100.0)
		return mn_pnode_errorf(prof, mn_pnode_get(sec, "strong_stride_fraction"), err,
				       errlen, "strong_stride_fraction %g: this value-pattern's "
				       "is %g", strong, STRONG_PERCENT / 100.0);
	if ((e = opt_u64(&r, sec, "lost_events", &vp->lost)) ||
	    (e = restore_list(&r, vp, sec, "entries", restore_entry)) ||
	    (e = restore_list(&r, vp, sec, "functions", restore_function)) ||
	    (e = restore_list(&r, vp, sec, "memops", restore_memop)))
		return e;
	return 0;
}

static const char *const vp_settings[] = { "value_cap", "strong_stride_fraction", NULL };

/* Per-site state, each site's from its own events: a mixed loop may come whole. */
static bool vp_mixed_whole(const void *st)
{
	return true;
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
	.value = vp_value,
	.loop_summary = vp_loop_summary,
	.mixed_whole = vp_mixed_whole,
	.merge = vp_merge,
	.emit = vp_emit,
	.restore = vp_restore,
	.settings = vp_settings,
};
