/* alloc-sizes: per heap allocation site, how many allocations, their bytes, the smallest and the
 * largest, and a histogram by powers of two.  README.md's "Writing a module" walks through it. */
#include "backend.h"
#include "module.h"
#include "schema.h"
#include "sitevec.h"

struct site {
	uint64_t count, bytes, min, max;
	struct mn_vec log2;         /* struct mn_count64: 2^k, the sizes in [2^k, 2^(k+1)) */
};

struct as {
	uint64_t lost;              /* allocations not counted for lack of memory */
	struct mn_sitevec sites;    /* struct site by allocation site */
	bool restored;              /* made by restore(): see MN_SCHEMA_CALLBACKS */
};

static void as_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	struct as *as = st;
	struct site *s = mn_sitevec_get(&as->sites, site);
	uint64_t pow2 = size ? UINT64_C(1) << (63 - __builtin_clzll(size)) : 0;

	if (!s || mn_count64_add(&s->log2, pow2, 1, 65)) {
		as->lost++;
		return;
	}
	s->min = !s->count++ || size < s->min ? size : s->min;
	s->max = size > s->max ? size : s->max;
	s->bytes += size;
}

/* A realloc is an allocation of its new size, at its own site. */
static void as_realloc(void *st, uint32_t site, uint64_t old, uint64_t addr, uint64_t size)
{
	as_alloc(st, site, addr, size);
}

static int as_init(void *st, const struct mn_run *run)
{
	return mn_sitevec_init(&((struct as *)st)->sites, sizeof(struct site),
			       mn_run_site_count(run));
}

/* The mean size, from the merged sums: derived when written, checked when restored. */
static void mean(const struct mn_field *f, const void *row, void *out)
{
	const struct site *s = row;

	*(double *)out = (double)s->bytes / (double)s->count;
}

#define S(field) offsetof(struct site, field)
static const struct mn_field site_fields[] = {
	MN_FIELD("site", MN_FT_SITE, MN_NO_OFFSET, MN_R_KEY),
	MN_FIELD("count", MN_FT_U64, S(count), MN_R_SUM),
	MN_FIELD("bytes", MN_FT_U64, S(bytes), MN_R_SUM),
	MN_FIELD("min", MN_FT_U64, S(min), MN_R_MIN),
	MN_FIELD("max", MN_FT_U64, S(max), MN_R_MAX),
	MN_FIELD("mean", MN_FT_F64, 0, MN_R_NONE, .flags = MN_FF_DERIVED, .derive = mean),
	MN_FIELD("log2", MN_FT_KV, S(log2), MN_R_UNION, .sub = &mn_count64_rows, .arg = 1),
};
static const struct mn_schema sites = MN_SCHEMA("sites", struct site, site_fields, .flow = true,
						.desc = "bytes", .weight = "bytes");
static const struct mn_field as_fields[] = {
	MN_FIELD("lost", MN_FT_U64, offsetof(struct as, lost), MN_R_SUM, .flags = MN_FF_OPT),
	MN_FIELD("sites", MN_FT_SITES, offsetof(struct as, sites), MN_R_UNION, .sub = &sites),
};
static const struct mn_schema as_schema = MN_SCHEMA("alloc-sizes", struct as, as_fields);
MN_SCHEMA_CALLBACKS(as, as_schema, struct as, restored, lost)

const struct mn_module mn_module_alloc_sizes = {
	.name = "alloc-sizes",
	.doc = "allocation sizes per allocation site (count, bytes, min, max, log2 histogram)",
	.state_size = sizeof(struct as), .shard = MN_SHARD_SITE, .init = as_init, .fini = as_fini,
	.thread = mn_thread_sums,   /* counts per site: every thread's, in any order */
	.heap_alloc = as_alloc, .heap_realloc = as_realloc,
	.merge = as_merge, .emit = as_write, .restore = as_restore, .schema = &as_schema,
};
