/* The dependence module's section (README, "Section schema") on backend/schema.h, which writes,
 * restores and merges it; here the counts its components keep. */
#include "dep.h"
#include "schema.h"

/* `loops:` the target loops in target mode, else every loop, of the site table or restored. */
static bool unlisted(const void *row)
{
	const struct site *s = row;

	return ((const struct dep *)mn_schema_top())->target_mode ? !s->target : !s->loop;
}

/* `lost:` aliases and nomem count what the shadow and the context manager lost too. */
static int put_lost(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	const struct dep *d = row;
	struct mn_ctx_stats cs;

	mn_ctx_stats(d->ctx, &cs);
	mn_prof_u64(p, f->arg ? d->nomem + cs.nomem :
		    d->aliases + (d->sh ? mn_shadow_aliases(d->sh) : 0));
	return 0;
}

#define V(m) offsetof(struct dep_key, m)
#define D(m) offsetof(struct dep, m)
#define CTX(key, m) MN_FIELD(key, MN_FT_CTX, V(m), MN_R_KEY, .arg = D(ctx), .when = mn_top_flag, \
			     .aux = D(context), .flags = MN_FF_REQUIRED)
#define DISTANCE(key, m, r) MN_FIELD(key, MN_FT_U64, MN_ROWMAP_ROW(m), r, .when = mn_flag, \
				     .aux = V(carried), .flags = MN_FF_REQUIRED)
static const struct mn_field row_fields[] = {
	MN_FIELD("loop", MN_FT_SITE, V(loop), MN_R_KEY),
	MN_FIELD("kind", MN_FT_ENUM, V(kind), MN_R_KEY, .choices = "raw|war|waw"),
	MN_FIELD("src", MN_FT_SITE, V(src), MN_R_KEY),
	MN_FIELD("src_via", MN_FT_SITE, V(src_via), MN_R_KEY, .flags = MN_FF_OPT),
	MN_FIELD("dst", MN_FT_SITE, V(dst), MN_R_KEY),
	MN_FIELD("dst_via", MN_FT_SITE, V(dst_via), MN_R_KEY, .flags = MN_FF_OPT),
	MN_FIELD("carried", MN_FT_BOOL, V(carried), MN_R_KEY),
	MN_FIELD("count", MN_FT_U64, MN_ROWMAP_ROW(count), MN_R_SUM),
	DISTANCE("min_distance", min, MN_R_MIN),
	DISTANCE("max_distance", max, MN_R_MAX),
	CTX("src_context", src_ctx),
	CTX("dst_context", dst_ctx),
};
static const struct mn_schema rows = MN_ROWMAP_SCHEMA("dependences", row_fields,
	.flow = true, .by = (const char *const[]){ "loop", "src", "dst", "kind", "carried",
	"src_via", "dst_via", "src_context", "dst_context", NULL }, .weight = "count");

/* `cross_thread:` (README, "Threads"): count and ordered stored, unordered derived. */
static void unordered(const struct mn_field *f, const void *row, void *out)
{
	const struct mn_row *e = (const void *)((const char *)row + MN_ROWS_KEY_WORDS * 8);

	*(uint64_t *)out = e->count - e->max;
}

#define X(m) offsetof(struct dep_xkey, m)
static const struct mn_field xrow_fields[] = {
	MN_FIELD("kind", MN_FT_ENUM, X(kind), MN_R_KEY, .choices = "raw|war|waw"),
	MN_FIELD("src", MN_FT_SITE, X(src), MN_R_KEY),
	MN_FIELD("dst", MN_FT_SITE, X(dst), MN_R_KEY),
	MN_FIELD("loop", MN_FT_SITE, X(loop), MN_R_KEY),
	MN_FIELD("count", MN_FT_U64, MN_ROWMAP_ROW(count), MN_R_SUM),
	MN_FIELD("ordered", MN_FT_U64, MN_ROWMAP_ROW(max), MN_R_SUM),
	MN_FIELD("unordered", MN_FT_U64, MN_ROWMAP_ROW(count), MN_R_NONE, .flags = MN_FF_DERIVED,
		 .derive = unordered),
};

/* A row is ordered at most as many times as counted. */
static const char *xrow_check(const void *top, const void *row, uint64_t key)
{
	const struct mn_row *e = (const void *)((const char *)row + MN_ROWS_KEY_WORDS * 8);

	return e->max > e->count ? "cross_thread: ordered is more than count" : NULL;
}

static const struct mn_schema xrows = MN_ROWMAP_SCHEMA("cross_thread", xrow_fields,
	.flow = true, .check = xrow_check,
	.by = (const char *const[]){ "src", "dst", "kind", "loop", NULL }, .weight = "count");

#define S(m) offsetof(struct site, m)
static const struct mn_field loop_fields[] = {
	MN_FIELD("loop", MN_FT_SITE, MN_NO_OFFSET, MN_R_KEY, .flags = MN_FF_NONZERO),
	MN_FIELD("invocations", MN_FT_U64, S(invocations), MN_R_SUM),
	MN_FIELD("iterations", MN_FT_U64, S(iterations), MN_R_SUM),
	MN_FIELD("", MN_FT_BOOL, S(loop), MN_R_MAX, .flags = MN_FF_HIDDEN, .arg = 1),
	MN_FIELD("", MN_FT_BOOL, S(target), MN_R_MAX, .flags = MN_FF_HIDDEN),
};
static const struct mn_schema loops = MN_SCHEMA("loops", struct site, loop_fields, .flow = true,
						.skip = unlisted, .weight = "iterations");
static const struct mn_field target_fields[] = {
	MN_FIELD("", MN_FT_BOOL, S(target), MN_R_MAX, .flags = MN_FF_HIDDEN, .arg = 1),
};
static const struct mn_schema targets = MN_SCHEMA("target", struct site, target_fields);

static const struct mn_field lost_fields[] = {
	MN_FIELD("aliases", MN_FT_U64, D(aliases), MN_R_SUM, .put = put_lost),
	MN_FIELD("nomem", MN_FT_U64, D(nomem), MN_R_SUM, .put = put_lost, .arg = 1),
	MN_FIELD("clipped", MN_FT_U64, D(clipped), MN_R_SUM),
	MN_FIELD("clock_resets", MN_FT_U64, D(resets), MN_R_SUM, .flags = MN_FF_CONTEXT),
};
static const struct mn_schema lost = MN_SCHEMA("lost", struct dep, lost_fields, .flow = true);
static const struct mn_field dep_fields[] = {
	MN_FIELD("granularity", MN_FT_U64, MN_NO_OFFSET, MN_R_CONST, .arg = 8),
	MN_FIELD("context", MN_FT_BOOL, D(context), MN_R_SAME),
	MN_FIELD("target", MN_FT_SITES, D(sites), MN_R_NONE, .sub = &targets, .aux = D(target_mode),
		 .flags = MN_FF_IDS | MN_FF_VIEW | MN_FF_PRESENT),   /* MNEMO_DEP_LOOP's loops */
	MN_FIELD("", MN_FT_BOOL, D(target_mode), MN_R_MAX, .flags = MN_FF_HIDDEN | MN_FF_CONTEXT),
	MN_FIELD("loops", MN_FT_SITES, D(sites), MN_R_UNION, .flags = MN_FF_CONTEXT, .sub = &loops,
		 .choices = "loop", .arg = D(run)),
	MN_FIELD("dependences", MN_FT_ROWMAP, D(deps), MN_R_UNION, .sub = &rows,
		 .flags = MN_FF_SPANS, .aux = D(span_rows)),   /* accesses spanning workers */
	/* only when some thread's access found another thread's source */
	MN_FIELD("cross_thread", MN_FT_ROWMAP, D(cross), MN_R_UNION, .sub = &xrows,
		 .flags = MN_FF_SPANS | MN_FF_OPT, .aux = D(cross_spans)),
	MN_FIELD("lost", MN_FT_MAP, 0, MN_R_UNION, .sub = &lost),
	MN_FIELD("", MN_FT_U64, D(closed), MN_R_SUM, .flags = MN_FF_HIDDEN),
	MN_FIELD("", MN_FT_U64, D(expanded), MN_R_SUM, .flags = MN_FF_HIDDEN),
};
const struct mn_schema dep_schema = MN_SCHEMA("dependence", struct dep, dep_fields);

/* Into a state fresh from init(): the section's settings, not this process's. */
MN_SCHEMA_RESTORE(dep_restore, dep_schema, struct dep, restored)

/* Workers own disjoint words: rows add up (MN_FF_SPANS); loops and contexts all saw alike
 * (MN_FF_CONTEXT).  A restored run (`mnemo merge`) adds its own. */
void dep_merge(void *into_, void *from_)
{
	struct dep *into = into_, *from = from_;
	struct mn_ctx_stats cs;

	dep_flush(into);
	dep_flush(from);
	mn_ctx_stats(from->ctx, &cs);
	into->aliases += from->sh ? mn_shadow_aliases(from->sh) : 0;
	into->nomem += from->restored ? cs.nomem : 0;
	if (mn_schema_merge(&dep_schema, into, from, from->restored) == -ENOMEM)
		into->nomem++;
}

int dep_emit(void *st, struct mn_prof *p)
{
	struct dep *d = st;
	struct mn_row *e;

	dep_flush(d);
	/* two workers that counted one access across pages each ordered it: merge took back the
	 * count only */
	for (struct mn_rows_cursor c = { 0 }; (e = mn_rows_next(&d->cross, &c));)
		e->max = e->max < e->count ? e->max : e->count;
	if (d->run && mn_run_verbose(d->run) && (d->closed || d->expanded))
		fprintf(stderr, "mnemo: dependence: %" PRIu64 " loop summaries in closed form, %"
			PRIu64 " expanded\n", d->closed, d->expanded);
	return mn_schema_emit(&dep_schema, d, p);
}
