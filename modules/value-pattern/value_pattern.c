/*
 * value-pattern: per load and store site, whether it always sees the same value, how many distinct
 * values (up to VALUE_CAP), and the dominant address stride (Space-Saving counters, mn_topk) --
 * PROMPT's Figure 6 with LEAP's strides; for mnemo-use, function entry counts and memcpy, memmove
 * and memset lengths.  Sharded by site: a worker sees every execution of its sites in order.  The
 * section (README.md) is the schema at the end, which the backend writes, restores and merges.
 * Every thread's events come, each thread's in order: strides are per thread (mn_kv64_switch()).
 */
#include <string.h>

#include "backend.h"
#include "map.h"
#include "module.h"
#include "schema.h"
#include "sitevec.h"

#define VALUE_CAP      16   /* distinct values tracked per site */
#define STRIDE_SLOTS   8    /* Space-Saving counters per site */
#define STRONG_PERCENT 70   /* strongly strided: one stride covers >= 70% of the strides (LEAP) */
#define MEMOP_SIZES    8    /* distinct memop lengths counted exactly per site in a run */
#define ADDR_MASK      ((UINT64_C(1) << 48) - 1)   /* addresses are 48 bits on the wire */
#define MEMOPS         "memcpy|memmove|memset"     /* a memop's op: the index of its callee */

struct memop { uint8_t op; uint64_t executions, other; struct mn_vec sizes; /* mn_count64 */ };

struct site {
	uint32_t id, last_thread;  /* last_thread: the thread last_addr is of (0: none yet) */
	uint8_t store;            /* access: 0 load, 1 store */
	bool pointer;             /* its values are addresses (mn_run_site_pointer()) */
	uint64_t executions, last_addr;
	struct mn_set64 values;   /* the distinct values, capped beyond VALUE_CAP */
	struct mn_vec strides;    /* struct mn_topk: stride, count, err */
	struct memop *memop;      /* a memop destination store's record in vp.memops; else NULL */
};

struct vp {
	uint64_t value_cap;       /* the constants the profile states, for restore() to match */
	double strong;
	uint64_t lost;            /* events dropped for lack of memory */
	struct mn_sitevec sites, funcs, memops;   /* struct site, uint64_t, memop by site id */
	const struct mn_run *run; /* its site table names the memop sites */
	bool restored;            /* made by restore(): its function counts add in merge */
	uint32_t thread;          /* the thread whose events come now (mn_module.thread) */
	struct mn_kv64 lasts;     /* last addresses of the threads a site did not run in last */
};

static void vp_thread(void *st, uint32_t thread) { ((struct vp *)st)->thread = thread; }
static void vp_end(void *st, uint32_t t) { mn_kv64_thread_end(&((struct vp *)st)->lasts, t); }

static inline void stride_add(struct vp *vp, struct site *s, int64_t d, uint64_t c)
{
	if (__builtin_expect(mn_topk_add(&s->strides, d, c, STRIDE_SLOTS), 0))
		vp->lost += c;   /* a branch: no store to lost on every access */
}

/* A site's first execution: what it is, once; a memop store when the site table names one. */
static void site_first(struct vp *vp, struct site *s, uint32_t id, bool store)
{
	const struct mn_run_site *rs = mn_run_site(vp->run, id);
	int op = store && rs && !strcmp(rs->kind, "store") ? mn_choice_index(MEMOPS, rs->name) : -1;

	s->id = id;
	s->store = store;
	s->pointer = mn_run_site_pointer(rs);
	if (mn_vec_reserve(&s->strides, sizeof(struct mn_topk), STRIDE_SLOTS))
		vp->lost++;
	if (op >= 0 && (s->memop = mn_sitevec_get(&vp->memops, id)))
		s->memop->op = (uint8_t)op;
	else if (op >= 0)
		vp->lost++;   /* its lengths go uncounted: the profile says incomplete */
}

/* n executions of s from addr on, step bytes apart: strides from its last address in its thread. */
static inline void run(struct vp *vp, struct site *s, uint32_t id, bool store, uint64_t addr,
		       int64_t step, uint64_t n)
{
	if (__builtin_expect(s->last_thread == vp->thread, 1) ? s->executions != 0 :
	    mn_kv64_switch(&vp->lasts, id, &s->last_thread, &s->last_addr, vp->thread, &vp->lost))
		stride_add(vp, s, (int64_t)(addr - s->last_addr), 1);
	else if (!s->executions)
		site_first(vp, s, id, store);
	if (n > 1)
		stride_add(vp, s, step, n - 1);
	s->executions += n;
	s->last_addr = (addr + (n - 1) * (uint64_t)step) & ADDR_MASK;
}

/* The one handler behind load and store; returns the site's record, NULL without memory. */
static inline struct site *on_access(struct vp *vp, uint32_t id, uint64_t addr, bool store)
{
	struct site *s = mn_sitevec_get(&vp->sites, id);

	if (!s)
		return vp->lost++, NULL;
	run(vp, s, id, store, addr, 0, 1);
	return s;
}

static void vp_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, false);
}

/* size is 0 but at memop sites: there it is the call's length (saturated at 2^24 - 1).  The
 * first MEMOP_SIZES distinct lengths are counted exactly, the others in other. */
static void vp_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	struct site *s = on_access(st, site, addr, true);
	struct memop *m = s ? s->memop : NULL;

	if (__builtin_expect(m != NULL, 0)) {
		m->executions++;
		m->other += mn_count64_add(&m->sizes, size, 1, MEMOP_SIZES) != 0;
	}
}

/* A value of the site, at least once per distinct one (events.yaml `value`), perhaps before its
 * first execution arrives in a summary.  Each new one is published, so that the program stops
 * sending it; once capped, none is needed any more. */
static void vp_value(void *st, uint32_t site, uint64_t value)
{
	struct vp *vp = st;
	struct site *s = mn_sitevec_get(&vp->sites, site);
	int added = s ? mn_set64_add(&s->values, value, VALUE_CAP) : -ENOMEM;

	vp->lost += added == -ENOMEM;
	if (added == -ENOSPC)
		mn_run_value_all(vp->run, site);
	else if (added == 1)
		mn_run_value_seen(vp->run, site, value);
}

/* A loop summary (pass/README.md): per access, one stride from the site's last address, then
 * iterations - 1 times its step, in O(1).  No summary site is a memop store. */
static void vp_loop_summary(void *st, uint32_t loop, uint64_t iterations,
			    const struct mn_summary_access *acc, unsigned n)
{
	struct vp *vp = st;

	for (const struct mn_summary_access *a = acc; a < acc + n; a++) {
		struct site *s = mn_sitevec_get(&vp->sites, a->site);

		if (s)
			run(vp, s, a->site, a->store, a->start & ADDR_MASK, a->step, iterations);
		else
			vp->lost += iterations;
	}
}

static void vp_func_entry(void *st, uint32_t site)
{
	((struct vp *)st)->lost += mn_entries_add(&((struct vp *)st)->funcs, site);
}

static int vp_init(void *st, const struct mn_run *run)
{
	struct vp *vp = st;
	uint32_t n = mn_run_site_count(run);

	vp->value_cap = VALUE_CAP;
	vp->strong = STRONG_PERCENT / 100.0;
	vp->run = run;
	return mn_sitevec_init(&vp->sites, sizeof(struct site), n) ||
	       mn_sitevec_init(&vp->funcs, sizeof(uint64_t), n) ||
	       mn_sitevec_init(&vp->memops, sizeof(struct memop), n) ? -ENOMEM : 0;
}

/* ---- The section (README.md): its schema --------------------------------------------------- */

static bool unexecuted(const void *row) { return !((const struct site *)row)->executions; }

#define S(field) offsetof(struct site, field)
#define M(field) offsetof(struct memop, field)
#define V(field) offsetof(struct vp, field)
#define DERIVED(key, type, off, fn, ...) \
	MN_FIELD(key, type, off, MN_R_NONE, .flags = MN_FF_DERIVED, .derive = fn, __VA_ARGS__)
static const struct mn_field site_fields[] = {
	MN_FIELD("site", MN_FT_SITE, S(id), MN_R_KEY),
	MN_FIELD("access", MN_FT_ENUM, S(store), MN_R_MAX, .choices = "load|store"),
	MN_FIELD("executions", MN_FT_U64, S(executions), MN_R_SUM),
	DERIVED("constant", MN_FT_BOOL, S(values), mn_set64_single),
	/* The site's values are addresses: written as numbers all the same, for every reader. */
	MN_FIELD("pointer", MN_FT_BOOL, S(pointer), MN_R_MAX, .flags = MN_FF_OPT),
	MN_FIELD("value", MN_FT_LIST, S(values), MN_R_NONE, .flags = MN_FF_ONE | MN_FF_VIEW,
		 .elem = MN_FT_U64, .when = mn_set64_open, .address_if = "pointer", .bits_of = "site"),
	DERIVED("distinct", MN_FT_U64, S(values), mn_set64_count, .arg = VALUE_CAP),
	MN_FIELD("distinct_capped", MN_FT_BOOL, S(values.capped), MN_R_MAX),
	MN_FIELD("values", MN_FT_LIST, S(values), MN_R_SET, .flags = MN_FF_MANY | MN_FF_SORTED |
		 MN_FF_FLOW, .elem = MN_FT_U64, .arg = VALUE_CAP, .when = mn_set64_open,
		 .address_if = "pointer", .bits_of = "site"),
	DERIVED("stride", MN_FT_I64, S(strides), mn_topk_key, .when = mn_vec_any),
	DERIVED("stride_fraction", MN_FT_F64, S(strides), mn_topk_share, .when = mn_vec_any),
	DERIVED("strongly_strided", MN_FT_BOOL, S(strides), mn_topk_over, .arg = STRONG_PERCENT,
		.when = mn_vec_any),
	MN_FIELD("strides", MN_FT_KV, S(strides), MN_R_UNION, .flags = MN_FF_OPT,
		 .sub = &mn_topk_rows, .arg = 1),
	MN_FIELD("stride_errs", MN_FT_KV, S(strides), MN_R_NONE, .flags = MN_FF_OPT | MN_FF_VIEW |
		 MN_FF_NONZERO | MN_FF_ATTACH, .sub = &mn_topk_rows, .arg = 2),
};
static const struct mn_field size_fields[] = {
	MN_FIELD("size", MN_FT_U64, offsetof(struct mn_count64, key), MN_R_KEY),
	MN_FIELD("count", MN_FT_U64, offsetof(struct mn_count64, count), MN_R_SUM),
};
static const struct mn_schema sizes = MN_SCHEMA("sizes", struct mn_count64, size_fields,
						.flow = true, .desc = "count", .weight = "count");
static const struct mn_field memop_fields[] = {
	MN_FIELD("site", MN_FT_SITE, MN_NO_OFFSET, MN_R_KEY),
	MN_FIELD("op", MN_FT_ENUM, M(op), MN_R_MIN, .choices = MEMOPS),
	MN_FIELD("executions", MN_FT_U64, M(executions), MN_R_SUM),
	MN_FIELD("sizes", MN_FT_ROWS, M(sizes), MN_R_UNION, .flags = MN_FF_FLOW, .sub = &sizes),
	MN_FIELD("other", MN_FT_U64, M(other), MN_R_SUM),
};
static const struct mn_schema entries = MN_SCHEMA("entries", struct site, site_fields,
	.flow = true, .desc = "executions", .skip = unexecuted, .weight = "executions");
static const struct mn_schema memops = MN_SCHEMA("memops", struct memop, memop_fields,
						 .flow = true, .weight = "executions");
/* The run's settings are this module's constants: a profile with others is not taken in. */
static const struct mn_field vp_fields[] = {
	MN_FIELD("value_cap", MN_FT_U64, V(value_cap), MN_R_CONST),
	MN_FIELD("strong_stride_fraction", MN_FT_F64, V(strong), MN_R_CONST),
	MN_FIELD("lost_events", MN_FT_U64, V(lost), MN_R_SUM, .flags = MN_FF_OPT),
	MN_FIELD("entries", MN_FT_SITES, V(sites), MN_R_UNION, .sub = &entries),
	MN_FIELD("functions", MN_FT_SITES, V(funcs), MN_R_UNION, .flags = MN_FF_CONTEXT,
		 .sub = &mn_entries_rows),
	MN_FIELD("memops", MN_FT_SITES, V(memops), MN_R_UNION, .sub = &memops),
};
static const struct mn_schema vp_schema = MN_SCHEMA("value-pattern", struct vp, vp_fields);
MN_SCHEMA_CALLBACKS(vp, vp_schema, struct vp, restored, lost)

/* A site with values and no execution is the per-access build's row of an unfinished loop: lost. */
static int vp_emit(void *st, struct mn_prof *p)
{
	struct site *s;

	MN_SITEVEC_FOREACH(&((struct vp *)st)->sites, id, s)
		((struct vp *)st)->lost += !s->executions;
	return mn_schema_emit(&vp_schema, st, p);
}

/* Per-site state, each site's from its own events: a mixed loop may come whole. */
static bool vp_mixed_whole(const void *st) { return true; }

static const char *const vp_settings[] = { "value_cap", "strong_stride_fraction", NULL };

static void vp_free(void *st) { mn_kv64_free(&((struct vp *)st)->lasts); vp_fini(st); }

const struct mn_module mn_module_value_pattern = {
	.name = "value-pattern",
	.doc = "constant and few-valued loads and stores, dominant address strides",
	.state_size = sizeof(struct vp), .shard = MN_SHARD_SITE, .settings = vp_settings,
	.thread = vp_thread, .thread_end = vp_end,
	.init = vp_init, .fini = vp_free, .merge = vp_merge, .emit = vp_emit, .restore = vp_restore,
	.load = vp_load, .store = vp_store, .func_entry = vp_func_entry, .value = vp_value,
	.loop_summary = vp_loop_summary, .mixed_whole = vp_mixed_whole, .schema = &vp_schema,
};
