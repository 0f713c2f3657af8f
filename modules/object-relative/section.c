/*
 * object-relative's section, declared once (backend/schema.h) as README.md describes it: emit()
 * writes a state from the tables below, restore() reads such a section back (for `mnemo merge`)
 * and checks it.  What no field type says is module code here: the runs' keys, the lifetime
 * histogram, the sample quality and losses summed over the streams, lossless mode's grammars.
 * merge() is merge.c's: runs side by side, streams renumbered, not a reduction of fields.
 */
#define _GNU_SOURCE   /* open_memstream */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objrel_internal.h"
#include "schema.h"

/* The horizontal streams of lossless mode, in the order of the profile's `lossless.streams`. */
static const char *const ll_names[LL_STREAMS] = { "instruction", "group", "object", "offset" };

/* ---- The groups' table ---------------------------------------------------------------------- */

static bool has_life(const struct mn_field *f, const void *row)
{
	return ((const struct group *)row)->nlife;
}

static void life_median(const struct mn_field *f, const void *row, void *out)
{
	*(uint64_t *)out = objrel_life_median(row);
}

/* The lifetime histogram: buckets 0 to lifetime_max's. */
static int put_life(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	const struct group *g = row;

	mn_prof_seq_begin_flow(p);
	for (unsigned b = 0; b <= life_bucket(g->life_max); b++)
		mn_prof_u64(p, g->life_log2[b]);
	mn_prof_seq_end(p);
	return 0;
}

#define LIFE_BAD(n, ...) \
	mn_pnode_errorf(prof, (n), err, errlen, "field 'lifetime_log2': " __VA_ARGS__)

/* The histogram of lifetimes min to max (read before it): the median's estimate needs them to
 * agree. */
static int take_life(const struct mn_field *f, void *row, const struct mn_profile *prof,
		     const struct mn_pnode *n, char *err, size_t errlen)
{
	struct group *g = row;

	if (mn_pnode_kind(n) != MN_PNODE_SEQ)
		return LIFE_BAD(n, "expected a sequence");
	if (mn_pnode_len(n) != life_bucket(g->life_max) + 1 || g->life_min > g->life_max)
		return LIFE_BAD(n, "expected buckets 0 to that of lifetime_max");
	for (size_t b = 0; b < mn_pnode_len(n); b++) {
		const struct mn_pnode *v = mn_pnode_at(n, b);

		if (mn_pnode_u64(v, &g->life_log2[b]))
			return LIFE_BAD(v, "expected an unsigned integer");
		if (g->nlife + g->life_log2[b] < g->nlife)
			return LIFE_BAD(v, "the counts overflow");
		g->nlife += g->life_log2[b];
	}
	if (!g->life_log2[life_bucket(g->life_min)] || !g->life_log2[life_bucket(g->life_max)])
		return LIFE_BAD(n, "empty bucket for lifetime_min or lifetime_max");
	for (unsigned b = 0; b < life_bucket(g->life_min); b++)
		if (g->life_log2[b])
			return LIFE_BAD(n, "objects below lifetime_min");
	return 0;
}

/* Written always; optional on restore (a `when` makes a field so): profiles before it lack it. */
static bool always(const struct mn_field *f, const void *row)
{
	return true;
}

static int take_nothing(const struct mn_field *f, void *row, const struct mn_profile *prof,
			const struct mn_pnode *n, char *err, size_t errlen)
{
	return 0;
}

/* A group's accesses: a count, but not kept: emit() sums them from the instructions' table. */
static int take_count(const struct mn_field *f, void *row, const struct mn_profile *prof,
		      const struct mn_pnode *n, char *err, size_t errlen)
{
	uint64_t v;

	if (mn_pnode_u64(n, &v))
		return mn_pnode_errorf(prof, n, err, errlen, "field '%s': expected an unsigned "
				       "integer", f->key);
	return 0;
}

static bool unseen(const void *row)
{
	return !((const struct group *)row)->seen;
}

/* A group the file lists is one the run saw. */
static const char *group_check(const void *top, const void *row, uint64_t key)
{
	((struct group *)row)->seen = true;   /* restore()'s own row */
	return NULL;
}

/* Groups by site, then callers (allocctx.h): the same order in every run. */
static int by_group_key(const void *a, const void *b)
{
	const struct objrel *r = mn_schema_top();

	return mn_allocctx_cmp(&r->actx, ((const struct group *)a)->site,
			       ((const struct group *)b)->site);
}

/* A heap group is an allocation context: `group: 26, context: [49, 46]` (allocctx.h), the
 * site alone without callers.  Merged by merge.c (merge_group()): the lifetimes' minimum and
 * maximum are those of runs that have lifetimes. */
#define ACTX offsetof(struct objrel, actx)
#define G(field) offsetof(struct group, field)
_Static_assert(MN_OBJ_HEAP == 0 && MN_OBJ_STACK == 1 && MN_OBJ_GLOBAL == 2, "kind's choices");
static const struct mn_field group_fields[] = {
	MN_ALLOCCTX_SITE("group", struct group, site, ACTX, MN_R_KEY),
	MN_ALLOCCTX_CONTEXT("context", struct group, site, ACTX),
	MN_FIELD("kind", MN_FT_ENUM, G(kind), MN_R_NONE, .choices = "heap|stack|global"),
	MN_FIELD("objects", MN_FT_U64, G(objects), MN_R_NONE),
	MN_FIELD("bytes", MN_FT_U64, G(bytes), MN_R_NONE),
	MN_FIELD("accesses", MN_FT_U64, G(accesses), MN_R_NONE, .when = always,
		 .take = take_count),
	MN_FIELD("lifetime_min", MN_FT_U64, G(life_min), MN_R_NONE, .when = has_life),
	MN_FIELD("lifetime_median", MN_FT_U64, 0, MN_R_NONE, .flags = MN_FF_DERIVED,
		 .when = has_life, .derive = life_median),
	MN_FIELD("lifetime_max", MN_FT_U64, G(life_max), MN_R_NONE, .when = has_life),
	MN_FIELD("lifetime_log2", MN_FT_U64, G(life_log2), MN_R_NONE, .when = has_life,
		 .put = put_life, .take = take_life),
};
static const struct mn_schema groups = MN_SCHEMA("groups", struct group, group_fields,
						 .flow = true, .order = by_group_key,
						 .skip = unseen, .check = group_check,
						 .weight = "accesses");

/* ---- The instructions' table ---------------------------------------------------------------- */

/* Why a restored row is wrong, for check(): one message at a time. */
static __attribute__((format(printf, 1, 2))) const char *say(const char *fmt, ...)
{
	static _Thread_local char why[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return why;
}

/* LMADs are written in the order they were made (time order): the stored one. */
static int stored_order(const void *a, const void *b)
{
	return a < b ? -1 : a > b;
}

static const char *lmad_check(const void *top, const void *row, uint64_t key)
{
	const struct objrel_lmad *l = row;

	if (!l->count)
		return "field 'count': an LMAD has at least one point";
	return l->last < l->first ? "field 'last_time': before first_time" : NULL;
}

/* A stream's LMADs hold its captured points; the run's parameters are the state's. */
static const char *stream_check(const void *top, const void *row, uint64_t key)
{
	const struct objrel *r = top;
	struct objrel_lmads *l = &((struct stream *)row)->l;   /* restore()'s own row */
	uint32_t run = ((const struct stream *)row)->run;
	uint64_t sum = 0;

	if (run >= r->nruns)
		return say("field 'run': %u is not a run of 'runs'", run);
	if (l->n > r->limit)
		return say("field 'lmads': %u LMADs, more than lmad_limit %u", l->n, r->limit);
	for (uint32_t k = 0; k < l->n; k++)
		sum += l->v[k].count;
	if (sum != l->captured || l->captured > l->points)
		return say("field 'captured': expected the LMADs' points (%" PRIu64 "), at most "
			   "'accesses'", sum);
	l->limit = r->limit;
	memcpy(l->first, l->min, sizeof(l->first));   /* unused: no point comes any more */
	return NULL;
}

/* Merge appends streams and emit() sorts them: a restored state's must be sorted already. */
static const char *insn_check(const void *top, const void *row, uint64_t key)
{
	const struct insn *in = row;

	if (in->unattributed > in->accesses)
		return "field 'unattributed': more than 'accesses'";
	for (uint32_t i = 1; i < in->n; i++)
		if (objrel_by_group(&in->s[i - 1], &in->s[i], (void *)top) >= 0)
			return "field 'group': streams not sorted by group, then run, then thread";
	return NULL;
}

static bool show_run(const struct mn_field *f, const void *row)
{
	return ((const struct stream *)row)->show_run;
}

/* A stream of a run of several threads names its thread (README "Threads"). */
static bool show_thread(const struct mn_field *f, const void *row)
{
	return ((const struct stream *)row)->thread != 0;
}

#define L(field) offsetof(struct objrel_lmad, field)
static const struct mn_field lmad_fields[] = {
	MN_FIELD("object", MN_FT_U64, L(start[0]), MN_R_NONE),
	MN_FIELD("offset", MN_FT_U64, L(start[1]), MN_R_NONE),
	MN_FIELD("object_stride", MN_FT_I64, L(stride[0]), MN_R_NONE),
	MN_FIELD("offset_stride", MN_FT_I64, L(stride[1]), MN_R_NONE),
	MN_FIELD("count", MN_FT_U64, L(count), MN_R_NONE),
	MN_FIELD("first_time", MN_FT_U64, L(first), MN_R_NONE),
	MN_FIELD("last_time", MN_FT_U64, L(last), MN_R_NONE),
};
static const struct mn_schema lmads = MN_SCHEMA("lmads", struct objrel_lmad, lmad_fields,
						.flow = true, .order = stored_order,
						.check = lmad_check, .weight = "count");

/* Streams never fold (merge() appends them, their runs renumbered): keys only, for the order. */
#define S(field) offsetof(struct stream, field)
static const struct mn_field stream_fields[] = {
	MN_ALLOCCTX_SITE("group", struct stream, group, ACTX, MN_R_KEY),
	MN_ALLOCCTX_CONTEXT("context", struct stream, group, ACTX),
	MN_FIELD("run", MN_FT_U32, S(run), MN_R_KEY, .when = show_run),
	MN_FIELD("thread", MN_FT_U32, S(thread), MN_R_KEY, .when = show_thread),
	MN_FIELD("accesses", MN_FT_U64, S(l.points), MN_R_NONE),
	MN_FIELD("captured", MN_FT_U64, S(l.captured), MN_R_NONE),
	MN_FIELD("full", MN_FT_BOOL, S(l.full), MN_R_NONE),
	MN_FIELD("object_min", MN_FT_U64, S(l.min[0]), MN_R_NONE),
	MN_FIELD("object_max", MN_FT_U64, S(l.max[0]), MN_R_NONE),
	MN_FIELD("object_granularity", MN_FT_U64, S(l.gran[0]), MN_R_NONE),
	MN_FIELD("offset_min", MN_FT_U64, S(l.min[1]), MN_R_NONE),
	MN_FIELD("offset_max", MN_FT_U64, S(l.max[1]), MN_R_NONE),
	MN_FIELD("offset_granularity", MN_FT_U64, S(l.gran[1]), MN_R_NONE),
	MN_FIELD("lmads", MN_FT_ROWS, S(l.v), MN_R_NONE, .sub = &lmads),
};
/* The order merge() and finalize left them in: by group (site, then callers), run, thread. */
static int stream_order(const void *a, const void *b)
{
	return objrel_by_group(a, b, (void *)mn_schema_top());
}

static const struct mn_schema streams = MN_SCHEMA("streams", struct stream, stream_fields,
						  .order = stream_order, .check = stream_check,
						  .weight = "accesses");

#define I(field) offsetof(struct insn, field)
static const struct mn_field insn_fields[] = {
	MN_FIELD("site", MN_FT_SITE, I(site), MN_R_KEY),
	MN_FIELD("access", MN_FT_ENUM, I(store), MN_R_SAME, .choices = "load|store"),
	MN_FIELD("accesses", MN_FT_U64, I(accesses), MN_R_SUM),
	MN_FIELD("unattributed", MN_FT_U64, I(unattributed), MN_R_SUM),
	MN_FIELD("streams", MN_FT_ROWS, I(s), MN_R_NONE, .sub = &streams),
};
static const struct mn_schema insns = MN_SCHEMA("instructions", struct insn, insn_fields,
						.check = insn_check, .weight = "accesses");

/* The tables above are struct mn_vec's (a pointer, then n and room as uint32_t's). */
_Static_assert(sizeof(bool) == sizeof(uint8_t), "access: an MN_FT_ENUM over a bool");
_Static_assert(offsetof(struct insn, n) == offsetof(struct insn, s) + offsetof(struct mn_vec, n) &&
	       offsetof(struct insn, alloc) == offsetof(struct insn, s) +
	       offsetof(struct mn_vec, cap), "insn streams: not an mn_vec");
_Static_assert(offsetof(struct objrel_lmads, n) == offsetof(struct mn_vec, n) &&
	       offsetof(struct objrel_lmads, alloc) == offsetof(struct mn_vec, cap) &&
	       offsetof(struct objrel_lmads, v) == 0, "lmads: not an mn_vec");

/* ---- The section's top: the run, its quality, its losses, lossless mode ---------------------- */

/* A grammar's output: the profile, and for the group stream the numbers its contexts' keys take
 * (rank[key - base]), NULL for the others' values. */
struct rules_out {
	struct mn_prof *p;
	const struct mn_allocctx *actx;
	const uint32_t *rank;
};

/* A context's key in the group stream: the site count + 1 + its rank in the groups' order, not
 * the order the run met it in (threads, MNEMO_ALLOC_DEPTH): a site's own group keeps its id. */
static uint64_t group_symbol(const struct rules_out *o, uint64_t v)
{
	if (!o->rank || v > UINT32_MAX || !mn_allocctx_is_context(o->actx, (uint32_t)v))
		return v;
	return o->actx->base + (uint64_t)o->rank[v - o->actx->base];
}

/* One rule as the text mn_seq_write() writes for it ("R1 -> 18 3 R2"), as a string of the list. */
static int emit_rule(void *arg, uint64_t id, const struct mn_seq_sym *rhs, size_t n)
{
	const struct rules_out *o = arg;
	struct mn_prof *p = o->p;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "R%" PRIu64 " ->", id);
	for (size_t i = 0; i < n; i++)
		fprintf(f, rhs[i].rule ? " R%" PRIu64 : " %" PRIu64,
			rhs[i].rule ? rhs[i].value : group_symbol(o, rhs[i].value));
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	mn_prof_str(p, text);
	free(text);
	return 0;
}

/* A grammar whose rules could not all be listed (no memory) has a list that does not parse or
 * does not give `length` symbols: `mnemo expand` refuses it. */
static void emit_grammar(struct rules_out *o, const char *name, struct mn_seq *g)
{
	struct mn_prof *p = o->p;

	mn_prof_key(p, name);
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "length", mn_seq_length(g));
	mn_prof_kv_u64(p, "rules", mn_seq_rules_count(g));
	mn_prof_kv_u64(p, "size", mn_seq_size(g));
	mn_prof_key(p, "grammar");
	mn_prof_seq_begin(p);
	mn_seq_rules(g, emit_rule, o);
	mn_prof_seq_end(p);
	mn_prof_map_end(p);
}

static bool has_ll(const struct mn_field *f, const void *row)
{
	return ((const struct objrel *)row)->ll;
}

/* The contexts' ranks in the groups' order (by key - base), for group_symbol(); NULL without
 * contexts, or memory (the keys are then written as they are). */
static uint32_t *context_ranks(const struct objrel *r)
{
	uint32_t *rank = r->actx.n ? calloc(r->actx.n, sizeof(*rank)) : NULL, next = 0;
	size_t n;
	struct group **v = rank ? objrel_groups_sorted(r, &n) : NULL;

	for (size_t i = 0; v && i < n; i++)
		if (mn_allocctx_is_context(&r->actx, v[i]->site))
			rank[v[i]->site - r->actx.base] = next++;
	if (!v) {
		free(rank);
		rank = NULL;
	}
	free(v);
	return rank;
}

static int put_lossless(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	const struct objrel *r = row;
	const struct lossless *ll = r->ll;
	uint64_t total = 0, raw = mn_seq_size(ll->raw);
	struct rules_out o = { p, &r->actx, NULL };
	uint32_t *rank = context_ranks(r);

	for (int i = 0; i < LL_STREAMS; i++)
		total += mn_seq_size(ll->g[i]);
	mn_prof_map_begin(p);
	mn_prof_kv_bool(p, "complete", !ll->broken);
	mn_prof_kv_u64(p, "accesses", mn_seq_length(ll->g[LL_INSN]));
	mn_prof_kv_u64(p, "unattributed", ll->unattributed);
	mn_prof_kv_u64(p, "grammar_size", total);
	mn_prof_kv_u64(p, "raw_address_grammar_size", raw);
	mn_prof_kv_f64(p, "size_ratio", raw ? (double)total / (double)raw : 0.0);
	mn_prof_key(p, "streams");
	mn_prof_map_begin(p);
	for (int i = 0; i < LL_STREAMS; i++) {
		o.rank = i == LL_GROUP ? rank : NULL;
		emit_grammar(&o, ll_names[i], ll->g[i]);
	}
	mn_prof_map_end(p);
	mn_prof_map_end(p);
	free(rank);
	return 0;
}

static int refuse_lossless(const struct mn_field *f, void *row, const struct mn_profile *prof,
			   const struct mn_pnode *n, char *err, size_t errlen)
{
	return mn_pnode_errorf(prof, n, err, errlen, "field 'lossless': the lossless streams of a "
			       "run cannot be merged (run without MNEMO_OBJREL_LOSSLESS=1 to merge)");
}

/* The run's parameters are the section's, whatever the settings of this process. */
static int take_limit(const struct mn_field *f, void *row, const struct mn_profile *prof,
		      const struct mn_pnode *n, char *err, size_t errlen)
{
	uint64_t v;

	if (mn_pnode_u64(n, &v) || v < 1 || v > LMADS_MAX)
		return mn_pnode_errorf(prof, n, err, errlen, "field 'lmad_limit': expected 1 to %u",
				       LMADS_MAX);
	((struct objrel *)row)->limit = (uint32_t)v;
	return 0;
}

static int put_runs(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	const struct objrel *r = row;
	char key[17];

	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < r->nruns; i++) {
		snprintf(key, sizeof(key), "%016" PRIx64, r->runs[i].key);
		mn_prof_map_begin_flow(p);
		mn_prof_kv_str(p, "key", key);
		mn_prof_kv_u64(p, "events", r->runs[i].events);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	return 0;
}

/* A violated constraint at node n: -EINVAL, "file:line:col: field 'key': ...". */
#define BAD(n, key, ...) \
	mn_pnode_errorf(prof, (n), err, errlen, "field '" key "': " __VA_ARGS__)

static int take_run(struct run_id *x, const struct mn_profile *prof, const struct mn_pnode *row,
		    char *err, size_t errlen)
{
	const char *key;
	char *end;
	int e = mn_pfield_str(prof, row, "key", &key, err, errlen);

	if (e)
		return e;
	x->key = strtoull(key, &end, 16);
	if (strlen(key) != 16 || *end || strspn(key, "0123456789abcdef") != 16)
		return BAD(mn_pnode_get(row, "key"), "key",
			   "expected 16 lowercase hex digits, found '%s'", key);
	return mn_pfield_u64(prof, row, "events", &x->events, err, errlen);
}

static int take_runs(const struct mn_field *f, void *row, const struct mn_profile *prof,
		     const struct mn_pnode *runs, char *err, size_t errlen)
{
	struct objrel *r = row;
	size_t n = mn_pnode_len(runs);
	int e;

	if (mn_pnode_kind(runs) != MN_PNODE_SEQ || !n || n > UINT32_MAX)
		return BAD(runs, "runs", "expected a sequence of at least one run");
	r->runs = calloc(n, sizeof(*r->runs));
	if (!r->runs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct run_id *x = &r->runs[i];

		if ((e = take_run(x, prof, mn_pnode_at(runs, i), err, errlen)))
			return e;
		if (i && (x->key < x[-1].key || (x->key == x[-1].key && x->events < x[-1].events)))
			return BAD(mn_pnode_at(runs, i), "runs", "not sorted by key, then events");
		r->nruns = (uint32_t)i + 1;
	}
	return 0;
}

static double fraction(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* How much of the accesses the LMADs captured, from the instructions' table. */
static int put_quality(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	const struct objrel *r = row;
	uint64_t accesses = 0, captured = 0, ninsns = 0, full_insns = 0;
	const struct insn *in;

	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		uint64_t c = 0;

		for (uint32_t i = 0; i < in->n; i++)
			c += in->s[i].l.captured;
		accesses += in->accesses;
		captured += c;
		ninsns++;
		full_insns += c == in->accesses;
	}
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "accesses", accesses);
	mn_prof_kv_u64(p, "captured_accesses", captured);
	mn_prof_kv_f64(p, "captured_fraction", fraction(captured, accesses));
	mn_prof_kv_u64(p, "instructions", ninsns);
	mn_prof_kv_u64(p, "captured_instructions", full_insns);
	mn_prof_kv_f64(p, "instruction_fraction", fraction(full_insns, ninsns));
	mn_prof_map_end(p);
	return 0;
}

/* Events lost: the state's, and those of streams whose LMADs could not grow. */
static int put_lost(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	const struct objrel *r = row;
	uint64_t nomem = r->nomem;
	const struct insn *in;

	MN_SITEVEC_FOREACH(&r->insns, id, in)
		for (uint32_t i = 0; i < in->n; i++)
			nomem += in->s[i].l.nomem;
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "aliased_granules", r->objs.aliases);
	mn_prof_kv_u64(p, "nomem", nomem);
	mn_prof_kv_u64(p, "unknown_frees", r->unknown_frees);
	mn_prof_map_end(p);
	return 0;
}

static int take_lost(const struct mn_field *f, void *row, const struct mn_profile *prof,
		     const struct mn_pnode *n, char *err, size_t errlen)
{
	struct objrel *r = row;
	int e;

	if (mn_pnode_kind(n) != MN_PNODE_MAP)
		return BAD(n, "lost", "expected a mapping");
	e = mn_pfield_u64(prof, n, "aliased_granules", &r->objs.aliases, err, errlen);
	if (!e)
		e = mn_pfield_u64(prof, n, "nomem", &r->nomem, err, errlen);
	if (!e)
		e = mn_pfield_u64(prof, n, "unknown_frees", &r->unknown_frees, err, errlen);
	return e == -ENOENT ? -EINVAL : e;   /* a missing field: the message says which */
}

/* The rows put_runs() writes, for readers. */
static const struct mn_field run_fields[] = {
	MN_FIELD("key", MN_FT_U64, MN_NO_OFFSET, MN_R_KEY),
	MN_FIELD("events", MN_FT_U64, MN_NO_OFFSET, MN_R_NONE),
};
static const struct mn_schema runs = MN_SCHEMA("runs", struct run_id, run_fields,
					       .weight = "events");

/* merge() is merge.c's (runs side by side, README "Merging"): no field folds by the schema. */
#define T(field) offsetof(struct objrel, field)
static const struct mn_field section_fields[] = {
	MN_FIELD("lmad_limit", MN_FT_U32, T(limit), MN_R_NONE, .take = take_limit),
	MN_FIELD("stack_objects", MN_FT_BOOL, T(stack), MN_R_NONE),
	MN_FIELD("events", MN_FT_U64, T(clock), MN_R_NONE),
	MN_FIELD("runs", MN_FT_U64, T(runs), MN_R_NONE, .put = put_runs, .take = take_runs,
		 .sub = &runs),
	MN_FIELD("sample_quality", MN_FT_U64, 0, MN_R_NONE, .when = always, .put = put_quality,
		 .take = take_nothing),
	MN_FIELD("lost", MN_FT_U64, 0, MN_R_NONE, .put = put_lost, .take = take_lost),
	/* Rows of r->rows, the groups' copies emit() makes and restore() moves into the table by
	 * key: a site table would hold one row per site, and a site has a group per context. */
	MN_FIELD("groups", MN_FT_ROWS, T(rows), MN_R_NONE, .sub = &groups),
	MN_FIELD("instructions", MN_FT_SITES, T(insns), MN_R_NONE, .sub = &insns),
	MN_FIELD("lossless", MN_FT_U64, T(ll), MN_R_NONE, .when = has_ll, .put = put_lossless,
		 .take = refuse_lossless),
};
const struct mn_schema objrel_section = MN_SCHEMA("object-relative", struct objrel,
						  section_fields);

/* Each group's accesses, the weight a reader ranks groups by: its streams', every run's. */
static void group_accesses(struct objrel *r)
{
	struct group *g;
	struct insn *in;

	MN_SITEVEC_FOREACH(&r->groups, id, g)
		g->accesses = 0;
	MN_SITEVEC_FOREACH(&r->insns, id, in)
		for (uint32_t i = 0; i < in->n; i++)
			if ((g = mn_sitevec_find(&r->groups, in->s[i].group)))
				g->accesses += in->s[i].l.points;
}

static int by_group_ptr(const void *a, const void *b, void *r)
{
	return mn_allocctx_cmp(&((const struct objrel *)r)->actx, (*(struct group *const *)a)->site,
			       (*(struct group *const *)b)->site);
}

struct group **objrel_groups_sorted(const struct objrel *r, size_t *n)
{
	struct group **v = malloc((r->groups.n ? r->groups.n : 1) * sizeof(*v)), *g;

	*n = 0;
	if (!v)
		return NULL;
	MN_SITEVEC_FOREACH(&r->groups, id, g)
		if (g->seen)
			v[(*n)++] = g;
	qsort_r(v, *n, sizeof(*v), by_group_ptr, (void *)r);
	return v;
}

/* The groups' rows, copies in the section's order, for the schema to write. */
static int groups_to_rows(struct objrel *r)
{
	size_t n;
	struct group **v = objrel_groups_sorted(r, &n);

	if (!v)
		return -ENOMEM;
	r->rows.n = 0;
	for (size_t i = 0; i < n; i++) {
		struct group *g = mn_vec_push(&r->rows, sizeof(*g));

		if (!g) {
			free(v);
			return -ENOMEM;
		}
		*g = *v[i];
	}
	free(v);
	return 0;
}

/* The rows restore() read, moved into the groups' table by key (restore checked they differ). */
static int rows_to_groups(struct objrel *r)
{
	const struct group *x = r->rows.v;

	for (uint32_t i = 0; i < r->rows.n; i++) {
		struct group *g = mn_sitevec_get(&r->groups, x[i].site);

		if (!g)
			return -ENOMEM;
		*g = x[i];
	}
	mn_vec_free(&r->rows);
	return 0;
}

int objrel_emit(void *st, struct mn_prof *p)
{
	struct objrel *r = st;
	struct insn *in;
	int e;

	objrel_finalize(r);
	if (objrel_runs_materialize(r))
		return -ENOMEM;
	MN_SITEVEC_FOREACH(&r->insns, id, in)
		for (uint32_t i = 0; i < in->n; i++)
			in->s[i].show_run = r->nruns > 1;
	group_accesses(r);
	e = groups_to_rows(r);
	if (!e)
		e = mn_schema_emit(&objrel_section, r, p);
	mn_vec_free(&r->rows);
	return e;
}

int objrel_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		   char *err, size_t errlen)
{
	struct objrel *r = st;
	int e;

	objrel_lossless_free(r->ll);   /* the section's mode, whatever the settings */
	r->ll = NULL;
	e = mn_schema_restore(&objrel_section, r, prof, sec, err, errlen);
	if (!e)
		e = rows_to_groups(r);
	if (!e)
		r->finalized = true;   /* a run that ended: no live objects, streams in order */
	return e == -ENOENT ? -EINVAL : e;
}
