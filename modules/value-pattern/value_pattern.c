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
 * Per-site state lives in a flat array indexed by site id (ids are dense), sized from the site
 * table; entries are allocated when the site first executes, so code that never runs costs a
 * pointer.  Sharded by site: each worker sees all executions of its sites, in order, so strides are
 * exact per worker and merge() only has to move sites across.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "module.h"

#define VALUE_CAP      16   /* distinct values tracked per site */
#define STRIDE_SLOTS   8    /* Space-Saving counters per site */
#define STRONG_PERCENT 70   /* strongly strided: one stride covers >= 70% of the strides (LEAP) */

enum access { ACCESS_LOAD = 1, ACCESS_STORE = 2 };

struct stride_slot {
	int64_t stride;           /* bytes from the previous execution's address */
	uint64_t count;           /* occurrences (an upper bound once evictions happened) */
	uint64_t err;             /* how much of count may belong to evicted strides */
};

struct site {
	uint32_t id;
	uint8_t access;           /* enum access */
	uint8_t ndistinct;        /* values[0..ndistinct) */
	uint8_t nstrides;         /* strides[0..nstrides) */
	bool capped;              /* more than VALUE_CAP distinct values */
	uint64_t executions;
	uint64_t last_addr;
	uint64_t values[VALUE_CAP];
	struct stride_slot strides[STRIDE_SLOTS];
};

struct vp {
	struct site **sites;      /* by site id; NULL until the site executes */
	size_t nsites;            /* length of sites[] */
	uint64_t lost;            /* events dropped for lack of memory */
};

/* The array entry for site id, growing the array as needed; NULL when out of memory. */
static struct site **slot(struct vp *vp, uint32_t id)
{
	if (id >= vp->nsites) {
		size_t n = vp->nsites ? 2 * vp->nsites : 1024;
		struct site **s;

		while (n <= id)
			n *= 2;
		s = realloc(vp->sites, n * sizeof(*s));
		if (!s)
			return NULL;
		memset(s + vp->nsites, 0, (n - vp->nsites) * sizeof(*s));
		vp->sites = s;
		vp->nsites = n;
	}
	return &vp->sites[id];
}

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

/* Space-Saving insert of n occurrences of stride d (err: their own overestimate, for merge). */
static void stride_add(struct site *s, int64_t d, uint64_t n, uint64_t err)
{
	struct stride_slot *min = NULL;

	for (unsigned i = 0; i < s->nstrides; i++) {
		struct stride_slot *c = &s->strides[i];

		if (c->stride == d) {
			c->count += n;
			c->err += err;
			return;
		}
		if (!min || c->count < min->count)
			min = c;
	}
	if (s->nstrides < STRIDE_SLOTS)
		s->strides[s->nstrides++] = (struct stride_slot){ d, n, err };
	else
		*min = (struct stride_slot){ d, min->count + n, min->count + err };
}

/* The one handler behind load and store. */
static void on_access(struct vp *vp, uint32_t id, uint64_t addr, uint64_t value, uint8_t access)
{
	struct site **e = slot(vp, id), *s;

	if (!e || (!*e && !(*e = calloc(1, sizeof(**e))))) {
		vp->lost++;
		return;
	}
	s = *e;
	s->id = id;
	s->access = access;
	if (s->executions++)
		stride_add(s, (int64_t)(addr - s->last_addr), 1, 0);
	s->last_addr = addr;
	value_add(s, value);
}

static void vp_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, value, ACCESS_LOAD);
}

static void vp_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, value, ACCESS_STORE);
}

static int vp_init(void *st, const struct mn_run *run)
{
	struct vp *vp = st;

	return slot(vp, mn_run_site_count(run)) ? 0 : -ENOMEM;
}

static void vp_fini(void *st)
{
	struct vp *vp = st;

	for (size_t i = 0; i < vp->nsites; i++)
		free(vp->sites[i]);
	free(vp->sites);
}

/*
 * Sharded by site, two workers never share a site: take the other worker's.  Should one ever be
 * shared, fold it (counts add up; the one stride between the two halves is not known).
 */
static void vp_merge(void *into_, void *from_)
{
	struct vp *into = into_, *from = from_;

	into->lost += from->lost;
	for (size_t id = 0; id < from->nsites; id++) {
		struct site *f = from->sites[id], **e;

		if (!f)
			continue;
		e = slot(into, (uint32_t)id);
		if (!e) {
			into->lost += f->executions;
		} else if (!*e) {
			*e = f;
			from->sites[id] = NULL;
		} else {
			(*e)->executions += f->executions;
			for (unsigned i = 0; i < f->ndistinct; i++)
				value_add(*e, f->values[i]);
			(*e)->capped |= f->capped;
			for (unsigned i = 0; i < f->nstrides; i++)
				stride_add(*e, f->strides[i].stride, f->strides[i].count,
					   f->strides[i].err);
		}
	}
}

/* The stride with the largest guaranteed count (count - err); ties go to the smaller stride. */
static const struct stride_slot *dominant(const struct site *s)
{
	const struct stride_slot *best = NULL;

	for (unsigned i = 0; i < s->nstrides; i++) {
		const struct stride_slot *c = &s->strides[i];

		if (!best || c->count - c->err > best->count - best->err ||
		    (c->count - c->err == best->count - best->err && c->stride < best->stride))
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

static int vp_emit(void *st, struct mn_prof *p)
{
	struct vp *vp = st;
	struct site **order;
	size_t n = 0;

	order = malloc((vp->nsites ? vp->nsites : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t id = 0; id < vp->nsites; id++)
		if (vp->sites[id])
			order[n++] = vp->sites[id];
	qsort(order, n, sizeof(*order), by_executions);

	mn_prof_map_begin(p);
	mn_prof_key(p, "value_cap");
	mn_prof_u64(p, VALUE_CAP);
	mn_prof_key(p, "strong_stride_fraction");
	mn_prof_f64(p, STRONG_PERCENT / 100.0);
	if (vp->lost) {
		mn_prof_key(p, "lost_events");
		mn_prof_u64(p, vp->lost);
	}
	mn_prof_key(p, "entries");
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < n; i++) {
		const struct site *s = order[i];
		bool constant = s->ndistinct == 1 && !s->capped;

		mn_prof_map_begin_flow(p);
		mn_prof_key(p, "site");
		mn_prof_site(p, s->id);
		mn_prof_key(p, "access");
		mn_prof_str(p, s->access == ACCESS_STORE ? "store" : "load");
		mn_prof_key(p, "executions");
		mn_prof_u64(p, s->executions);
		mn_prof_key(p, "constant");
		mn_prof_bool(p, constant);
		if (constant) {
			mn_prof_key(p, "value");
			mn_prof_u64(p, s->values[0]);
		}
		mn_prof_key(p, "distinct");
		mn_prof_u64(p, s->ndistinct);
		mn_prof_key(p, "distinct_capped");
		mn_prof_bool(p, s->capped);
		if (s->executions >= 2) {
			const struct stride_slot *d = dominant(s);
			uint64_t covered = d->count - d->err, strides = s->executions - 1;

			mn_prof_key(p, "stride");
			mn_prof_i64(p, d->stride);
			mn_prof_key(p, "stride_fraction");
			mn_prof_f64(p, (double)covered / (double)strides);
			mn_prof_key(p, "strongly_strided");
			mn_prof_bool(p, covered * 100 >= strides * STRONG_PERCENT);
		}
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	mn_prof_map_end(p);
	free(order);
	return 0;
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
	.merge = vp_merge,
	.emit = vp_emit,
};
