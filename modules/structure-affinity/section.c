/*
 * structure-affinity's profile section declared once (README "Schema"; backend/schema.h): the
 * settings, totals, cache lines and losses are fields of the state, written and read back by the
 * schema.  The hot data objects, their structures and the streams are computed at emit from the
 * merged integers, so they stay put/take fields written by emit.c and read by restore.c.  Merge
 * is sa_merge() (restore.c), which folds the plain counts by these tables (sa_merge_counts()):
 * runs of different settings still fold, and emit() then refuses them (same_options() compares
 * the cache geometry only with cost: cache, where MN_R_SAME would always).
 */
#include <errno.h>
#include <stddef.h>

#include "module.h"
#include "profile.h"
#include "sa.h"
#include "schema.h"

#define A(member) offsetof(struct affinity, member)

/* This run's aliased granules and those of the runs restored or merged in. */
static int put_aliases(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	const struct affinity *a = row;

	(void)f;
	mn_prof_u64(p, a->objs.aliases + a->aliases);
	return 0;
}

static int take_aliases(const struct mn_field *f, void *row, const struct mn_profile *prof,
			const struct mn_pnode *n, char *err, size_t errlen)
{
	if (mn_pnode_u64(n, &((struct affinity *)row)->aliases))
		return mn_pnode_errorf(prof, n, err, errlen, "field '%s': expected an unsigned "
				       "integer", f->key);
	return 0;
}

/* Derived at emit, not read back. */
static int take_nothing(const struct mn_field *f, void *row, const struct mn_profile *prof,
			const struct mn_pnode *n, char *err, size_t errlen)
{
	(void)f, (void)row, (void)prof, (void)n, (void)err, (void)errlen;
	return 0;
}

static bool cache_cost(const struct mn_field *f, const void *row)
{
	(void)f;
	return priced(row);
}

/* Written always; optional on restore (a `when` makes a field so). */
static bool always(const struct mn_field *f, const void *row)
{
	(void)f, (void)row;
	return true;
}

static const struct mn_field cache_fields[] = {
	MN_FIELD("l1_bytes", MN_FT_U64, A(opt.l1_bytes), MN_R_SAME),
	MN_FIELD("l1_ways", MN_FT_U64, A(opt.l1_ways), MN_R_SAME),
	MN_FIELD("l2_bytes", MN_FT_U64, A(opt.l2_bytes), MN_R_SAME),
	MN_FIELD("l2_ways", MN_FT_U64, A(opt.l2_ways), MN_R_SAME),
	MN_FIELD("line", MN_FT_U64, A(opt.line), MN_R_SAME),
	MN_FIELD("l1_latency", MN_FT_U64, A(opt.l1_latency), MN_R_SAME),
	MN_FIELD("l2_latency", MN_FT_U64, A(opt.l2_latency), MN_R_SAME),
	MN_FIELD("memory_latency", MN_FT_U64, A(opt.mem_latency), MN_R_SAME),
};
static const struct mn_schema cache = MN_SCHEMA("cache", struct affinity, cache_fields,
						.flow = true);

static const struct mn_field totals_fields[] = {
	MN_FIELD("accesses", MN_FT_U64, A(accesses), MN_R_SUM),
	MN_FIELD("cost", MN_FT_U64, A(cost), MN_R_SUM),
	MN_FIELD("unattributed_accesses", MN_FT_U64, A(unattributed), MN_R_SUM),
	MN_FIELD("unattributed_cost", MN_FT_U64, A(unattributed_cost), MN_R_SUM),
	MN_FIELD("data_objects", MN_FT_U64, A(data_objects), MN_R_NONE),   /* set by sa_emit() */
};
static const struct mn_schema totals = MN_SCHEMA("totals", struct affinity, totals_fields,
						 .flow = true);

static const struct mn_field lines_fields[] = {
	MN_FIELD("l1", MN_FT_U64, A(cache.found[SA_L1]), MN_R_SUM),
	MN_FIELD("l2", MN_FT_U64, A(cache.found[SA_L2]), MN_R_SUM),
	MN_FIELD("memory", MN_FT_U64, A(cache.found[SA_MEMORY]), MN_R_SUM),
};
static const struct mn_schema lines = MN_SCHEMA("cache_lines", struct affinity, lines_fields,
						.flow = true);

static const struct mn_field lost_fields[] = {
	MN_FIELD("aliased_granules", MN_FT_U64, A(aliases), MN_R_SUM, .put = put_aliases,
		 .take = take_aliases),
	MN_FIELD("nomem", MN_FT_U64, A(nomem), MN_R_SUM),
	MN_FIELD("unknown_frees", MN_FT_U64, A(unknown_frees), MN_R_SUM),
};
static const struct mn_schema lost = MN_SCHEMA("lost", struct affinity, lost_fields,
					       .flow = true);

/*
 * The tables emit.c writes, for readers (schema.h, .sub of a put field): each row's key and
 * weight, and a structure's own tables.  Every row is weighed by its cost.
 */
#define VIEW(key, type, r) MN_FIELD(key, type, MN_NO_OFFSET, r)
#define VIEW_ROWS(name, fields) MN_SCHEMA(name, struct affinity, fields, .weight = "cost")
static const struct mn_field site_cost[] = {
	VIEW("site", MN_FT_SITE, MN_R_KEY), VIEW("cost", MN_FT_U64, MN_R_NONE),
};
static const struct mn_field offset_cost[] = {
	VIEW("offset", MN_FT_U64, MN_R_KEY), VIEW("cost", MN_FT_U64, MN_R_NONE),
};
static const struct mn_field field_cost[] = {
	VIEW("field", MN_FT_U64, MN_R_KEY), VIEW("cost", MN_FT_U64, MN_R_NONE),
};
static const struct mn_field loop_cost[] = {
	VIEW("loop", MN_FT_SITE, MN_R_KEY), VIEW("cost", MN_FT_U64, MN_R_NONE),
};
static const struct mn_field stream_cost[] = {
	VIEW("loop", MN_FT_SITE, MN_R_KEY), VIEW("site", MN_FT_SITE, MN_R_KEY),
	VIEW("cost", MN_FT_U64, MN_R_NONE),
};
static const struct mn_field object_stream_cost[] = {
	VIEW("object", MN_FT_SITE, MN_R_KEY), VIEW("loop", MN_FT_SITE, MN_R_KEY),
	VIEW("site", MN_FT_SITE, MN_R_KEY), VIEW("cost", MN_FT_U64, MN_R_NONE),
};
static const struct mn_schema hot_rows = VIEW_ROWS("hot", site_cost);
static const struct mn_schema object_rows = VIEW_ROWS("objects", site_cost);
static const struct mn_schema field_rows = VIEW_ROWS("fields", offset_cost);
static const struct mn_schema affinity_rows = VIEW_ROWS("affinity", field_cost);
static const struct mn_schema loop_rows = VIEW_ROWS("loops", loop_cost);
static const struct mn_schema stream_rows = VIEW_ROWS("streams", stream_cost);
static const struct mn_schema other_rows = VIEW_ROWS("other_streams", object_stream_cost);
static const struct mn_field structure_fields[] = {
	VIEW("site", MN_FT_SITE, MN_R_KEY),
	VIEW("cost", MN_FT_U64, MN_R_NONE),
	MN_FIELD("fields", MN_FT_ROWS, MN_NO_OFFSET, MN_R_NONE, .sub = &field_rows),
	MN_FIELD("affinity", MN_FT_ROWS, MN_NO_OFFSET, MN_R_NONE, .sub = &affinity_rows),
	MN_FIELD("loops", MN_FT_ROWS, MN_NO_OFFSET, MN_R_NONE, .sub = &loop_rows),
	MN_FIELD("streams", MN_FT_ROWS, MN_NO_OFFSET, MN_R_NONE, .sub = &stream_rows),
};
static const struct mn_schema structure_rows = VIEW_ROWS("structures", structure_fields);
#undef VIEW_ROWS
#undef VIEW

static const struct mn_field section_fields[] = {
	MN_FIELD("cost", MN_FT_CHOICE, A(opt.cost), MN_R_SAME, .choices = "accesses|cache"),
	MN_FIELD("sample_period", MN_FT_U64, A(opt.sample), MN_R_SAME),
	MN_FIELD("top", MN_FT_U64, A(opt.top), MN_R_SAME),
	MN_FIELD("threshold", MN_FT_F64, A(opt.threshold), MN_R_SAME),
	MN_FIELD("cache", MN_FT_MAP, 0, MN_R_UNION, .sub = &cache, .when = cache_cost),
	MN_FIELD("totals", MN_FT_MAP, 0, MN_R_UNION, .sub = &totals),
	MN_FIELD("cache_lines", MN_FT_MAP, 0, MN_R_UNION, .sub = &lines, .when = cache_cost),
	MN_FIELD("lost", MN_FT_MAP, 0, MN_R_UNION, .sub = &lost),
	MN_FIELD("hot", MN_FT_U64, A(hot), MN_R_NONE, .when = always, .put = sa_put_hot,
		 .take = take_nothing, .sub = &hot_rows),
	MN_FIELD("structures", MN_FT_U64, A(structures), MN_R_NONE, .put = sa_put_structures,
		 .take = sa_take_structures, .sub = &structure_rows),
	MN_FIELD("objects", MN_FT_U64, A(dobjs), MN_R_NONE, .put = sa_put_objects,
		 .take = sa_take_objects, .sub = &object_rows),
	MN_FIELD("other_streams", MN_FT_U64, A(insns), MN_R_NONE, .put = sa_put_other_streams,
		 .take = sa_take_other_streams, .sub = &other_rows),
};
const struct mn_schema sa_section = MN_SCHEMA("structure-affinity", struct affinity,
					      section_fields);

/* Merge's plain counts: totals, cache lines and losses add by their fields' reductions. */
void sa_merge_counts(struct affinity *a, struct affinity *b)
{
	mn_schema_merge(&totals, a, b, true);
	mn_schema_merge(&lines, a, b, true);
	mn_schema_merge(&lost, a, b, true);
	a->aliases += b->objs.aliases;   /* b's own run's, which its `aliases` does not hold */
}

int sa_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec, char *err,
	       size_t errlen)
{
	return mn_schema_restore(&sa_section, st, prof, sec, err, errlen);
}
