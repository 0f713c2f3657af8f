/*
 * object-relative's section: emit() writes a state as the schema of README.md says, restore()
 * reads such a section back into a state (for `mnemo merge`), checking every constraint of the
 * schema with the place and field of a violation.
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

/* A group's kind is its objects' (objects.h). */
static const char *const kind_names[] = {
	[MN_OBJ_HEAP] = "heap", [MN_OBJ_STACK] = "stack", [MN_OBJ_GLOBAL] = "global"
};

/* The horizontal streams of lossless mode, in the order of the profile's `lossless.streams`. */
static const char *const ll_names[LL_STREAMS] = { "instruction", "group", "object", "offset" };

/* ---- The instructions' table, declared once: written, restored and checked from it ----------- */

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
		if (objrel_by_group(&in->s[i - 1], &in->s[i]) >= 0)
			return "field 'group': streams not sorted by group, then run";
	return NULL;
}

static bool show_run(const struct mn_field *f, const void *row)
{
	return ((const struct stream *)row)->show_run;
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
						.check = lmad_check);

/* Streams never fold (merge() appends them, their runs renumbered): keys only, for the order. */
#define S(field) offsetof(struct stream, field)
static const struct mn_field stream_fields[] = {
	MN_FIELD("group", MN_FT_SITE, S(group), MN_R_KEY),
	MN_FIELD("run", MN_FT_U32, S(run), MN_R_KEY, .when = show_run),
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
static const struct mn_schema streams = MN_SCHEMA("streams", struct stream, stream_fields,
						  .check = stream_check);

#define I(field) offsetof(struct insn, field)
static const struct mn_field insn_fields[] = {
	MN_FIELD("site", MN_FT_SITE, I(site), MN_R_KEY),
	MN_FIELD("access", MN_FT_ENUM, I(store), MN_R_SAME, .choices = "load|store"),
	MN_FIELD("accesses", MN_FT_U64, I(accesses), MN_R_SUM),
	MN_FIELD("unattributed", MN_FT_U64, I(unattributed), MN_R_SUM),
	MN_FIELD("streams", MN_FT_ROWS, I(s), MN_R_NONE, .sub = &streams),
};
static const struct mn_schema insns = MN_SCHEMA("instructions", struct insn, insn_fields,
						.check = insn_check);

/* The section's fields on the schema, after the hand-written ones (see objrel_emit()). */
static const struct mn_field tail_fields[] = {
	MN_FIELD("instructions", MN_FT_SITES, offsetof(struct objrel, insns), MN_R_NONE,
		 .sub = &insns),
};
static const struct mn_schema tail = MN_SCHEMA("object-relative", struct objrel, tail_fields);

/* The tables above are struct mn_vec's (a pointer, then n and room as uint32_t's). */
_Static_assert(sizeof(bool) == sizeof(uint8_t), "access: an MN_FT_ENUM over a bool");
_Static_assert(offsetof(struct insn, n) == offsetof(struct insn, s) + offsetof(struct mn_vec, n) &&
	       offsetof(struct insn, alloc) == offsetof(struct insn, s) +
	       offsetof(struct mn_vec, cap), "insn streams: not an mn_vec");
_Static_assert(offsetof(struct objrel_lmads, n) == offsetof(struct mn_vec, n) &&
	       offsetof(struct objrel_lmads, alloc) == offsetof(struct mn_vec, cap) &&
	       offsetof(struct objrel_lmads, v) == 0, "lmads: not an mn_vec");

/* ---- emit() ---------------------------------------------------------------------------------- */

/* One rule as the text mn_seq_write() writes for it ("R1 -> 18 3 R2"), as a string of the list. */
static int emit_rule(void *arg, uint64_t id, const struct mn_seq_sym *rhs, size_t n)
{
	struct mn_prof *p = arg;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "R%" PRIu64 " ->", id);
	for (size_t i = 0; i < n; i++)
		fprintf(f, rhs[i].rule ? " R%" PRIu64 : " %" PRIu64, rhs[i].value);
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
static void emit_grammar(struct mn_prof *p, const char *name, struct mn_seq *g)
{
	mn_prof_key(p, name);
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "length", mn_seq_length(g));
	mn_prof_kv_u64(p, "rules", mn_seq_rules_count(g));
	mn_prof_kv_u64(p, "size", mn_seq_size(g));
	mn_prof_key(p, "grammar");
	mn_prof_seq_begin(p);
	mn_seq_rules(g, emit_rule, p);
	mn_prof_seq_end(p);
	mn_prof_map_end(p);
}

static void emit_lossless(struct mn_prof *p, struct objrel *r)
{
	struct lossless *ll = r->ll;
	uint64_t total = 0, raw = mn_seq_size(ll->raw);

	for (int i = 0; i < LL_STREAMS; i++)
		total += mn_seq_size(ll->g[i]);
	mn_prof_key(p, "lossless");
	mn_prof_map_begin(p);
	mn_prof_kv_bool(p, "complete", !ll->broken);
	mn_prof_kv_u64(p, "accesses", mn_seq_length(ll->g[LL_INSN]));
	mn_prof_kv_u64(p, "unattributed", ll->unattributed);
	mn_prof_kv_u64(p, "grammar_size", total);
	mn_prof_kv_u64(p, "raw_address_grammar_size", raw);
	mn_prof_kv_f64(p, "size_ratio", raw ? (double)total / (double)raw : 0.0);
	mn_prof_key(p, "streams");
	mn_prof_map_begin(p);
	for (int i = 0; i < LL_STREAMS; i++)
		emit_grammar(p, ll_names[i], ll->g[i]);
	mn_prof_map_end(p);
	mn_prof_map_end(p);
}

static double fraction(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

int objrel_emit(void *st, struct mn_prof *p)
{
	struct objrel *r = st;
	uint64_t accesses = 0, captured = 0, ninsns = 0, full_insns = 0, nomem = r->nomem;
	struct group *g;
	struct insn *in;
	char key[17];

	objrel_finalize(r);
	if (objrel_runs_materialize(r))
		return -ENOMEM;
	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		uint64_t c = 0;

		for (uint32_t i = 0; i < in->n; i++) {
			c += in->s[i].l.captured;
			nomem += in->s[i].l.nomem;
			in->s[i].show_run = r->nruns > 1;
		}
		accesses += in->accesses;
		captured += c;
		ninsns++;
		full_insns += c == in->accesses;
	}

	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "lmad_limit", r->limit);
	mn_prof_kv_bool(p, "stack_objects", r->stack);
	mn_prof_kv_u64(p, "events", r->clock);
	mn_prof_key(p, "runs");
	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < r->nruns; i++) {
		snprintf(key, sizeof(key), "%016" PRIx64, r->runs[i].key);
		mn_prof_map_begin_flow(p);
		mn_prof_kv_str(p, "key", key);
		mn_prof_kv_u64(p, "events", r->runs[i].events);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	mn_prof_key(p, "sample_quality");
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "accesses", accesses);
	mn_prof_kv_u64(p, "captured_accesses", captured);
	mn_prof_kv_f64(p, "captured_fraction", fraction(captured, accesses));
	mn_prof_kv_u64(p, "instructions", ninsns);
	mn_prof_kv_u64(p, "captured_instructions", full_insns);
	mn_prof_kv_f64(p, "instruction_fraction", fraction(full_insns, ninsns));
	mn_prof_map_end(p);
	mn_prof_key(p, "lost");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "aliased_granules", r->objs.aliases);
	mn_prof_kv_u64(p, "nomem", nomem);
	mn_prof_kv_u64(p, "unknown_frees", r->unknown_frees);
	mn_prof_map_end(p);

	mn_prof_key(p, "groups");
	mn_prof_seq_begin(p);
	MN_SITEVEC_FOREACH(&r->groups, id, g) {
		if (!g->seen)
			continue;
		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "group", g->site);
		mn_prof_kv_str(p, "kind", kind_names[g->kind]);
		mn_prof_kv_u64(p, "objects", g->objects);
		mn_prof_kv_u64(p, "bytes", g->bytes);
		if (g->nlife) {
			unsigned last = life_bucket(g->life_max);

			mn_prof_kv_u64(p, "lifetime_min", g->life_min);
			mn_prof_kv_u64(p, "lifetime_median", objrel_life_median(g));
			mn_prof_kv_u64(p, "lifetime_max", g->life_max);
			mn_prof_key(p, "lifetime_log2");
			mn_prof_seq_begin_flow(p);
			for (unsigned b = 0; b <= last; b++)
				mn_prof_u64(p, g->life_log2[b]);
			mn_prof_seq_end(p);
		}
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);

	if (mn_schema_emit_fields(&tail, r, p))
		return -ENOMEM;
	if (r->ll)
		emit_lossless(p, r);
	mn_prof_map_end(p);
	return 0;
}

/* ---- restore(): a state from a section as objrel_emit() wrote it --------------------------- */

struct rctx {
	const struct mn_profile *prof;
	char *err;
	size_t errlen;
};

static int ru64(struct rctx *c, const struct mn_pnode *m, const char *key, uint64_t *v)
{
	return mn_pfield_u64(c->prof, m, key, v, c->err, c->errlen);
}

static int ru32(struct rctx *c, const struct mn_pnode *m, const char *key, uint32_t *v)
{
	return mn_pfield_u32(c->prof, m, key, v, c->err, c->errlen);
}

static const struct mn_pnode *rseq(struct rctx *c, const struct mn_pnode *m, const char *key)
{
	return mn_pfield_node(c->prof, m, key, MN_PNODE_SEQ, c->err, c->errlen);
}

/* A violated constraint of the schema at node n: -EINVAL, "file:line:col: field 'key': ...". */
#define BAD(c, n, key, ...)                                                                     \
	mn_pnode_errorf((c)->prof, (n), (c)->err, (c)->errlen, "field '" key "': " __VA_ARGS__)

static int restore_runs(struct objrel *r, struct rctx *c, const struct mn_pnode *sec)
{
	const struct mn_pnode *runs = rseq(c, sec, "runs");
	size_t n = mn_pnode_len(runs);
	int e;

	if (!runs)
		return -EINVAL;
	if (!n)
		return BAD(c, runs, "runs", "expected at least one run");
	r->runs = calloc(n, sizeof(*r->runs));
	if (!r->runs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct mn_pnode *row = mn_pnode_at(runs, i);
		struct run_id *x = &r->runs[i];
		const char *key;
		char *end;

		e = mn_pfield_str(c->prof, row, "key", &key, c->err, c->errlen);
		if (e)
			return e;
		x->key = strtoull(key, &end, 16);
		if (strlen(key) != 16 || *end || strspn(key, "0123456789abcdef") != 16)
			return BAD(c, mn_pnode_get(row, "key"), "key",
				   "expected 16 lowercase hex digits, found '%s'", key);
		e = ru64(c, row, "events", &x->events);
		if (e)
			return e;
		if (i && (x->key < x[-1].key || (x->key == x[-1].key && x->events < x[-1].events)))
			return BAD(c, row, "runs", "not sorted by key, then events");
		r->nruns = (uint32_t)i + 1;
	}
	if (n > UINT32_MAX)
		return BAD(c, runs, "runs", "too many runs");
	return 0;
}

static int restore_group(struct objrel *r, struct rctx *c, const struct mn_pnode *row,
			 int64_t *prev)
{
	const struct mn_pnode *hist;
	const char *kind;
	struct group *g;
	uint32_t site;
	int e, k;

	e = ru32(c, row, "group", &site);
	if (e)
		return e;
	if ((int64_t)site <= *prev)
		return BAD(c, row, "group", "groups not sorted by group, or %u twice", site);
	*prev = site;
	g = objrel_group_get(r, site);
	if (!g)
		return -ENOMEM;
	e = mn_pfield_str(c->prof, row, "kind", &kind, c->err, c->errlen);
	if (e)
		return e;
	for (k = 0; k < 3 && strcmp(kind, kind_names[k]); k++)
		;
	if (k == 3)
		return BAD(c, mn_pnode_get(row, "kind"), "kind",
			   "expected heap, stack or global, found '%s'", kind);
	g->kind = (enum mn_obj_kind)k;
	e = ru64(c, row, "objects", &g->objects);
	if (!e)
		e = ru64(c, row, "bytes", &g->bytes);
	if (e || !mn_pnode_get(row, "lifetime_log2"))
		return e;
	hist = mn_pfield_node(c->prof, row, "lifetime_log2", MN_PNODE_SEQ, c->err, c->errlen);
	if (!hist)
		return -EINVAL;
	e = ru64(c, row, "lifetime_min", &g->life_min);
	if (!e)
		e = ru64(c, row, "lifetime_max", &g->life_max);
	if (e)
		return e;
	if (mn_pnode_len(hist) != life_bucket(g->life_max) + 1 || g->life_min > g->life_max)
		return BAD(c, hist, "lifetime_log2", "expected buckets 0 to that of lifetime_max");
	for (size_t b = 0; b < mn_pnode_len(hist); b++) {
		const struct mn_pnode *v = mn_pnode_at(hist, b);

		if (mn_pnode_u64(v, &g->life_log2[b]))
			return BAD(c, v, "lifetime_log2", "expected an unsigned integer");
		if (g->nlife + g->life_log2[b] < g->nlife)
			return BAD(c, v, "lifetime_log2", "the counts overflow");
		g->nlife += g->life_log2[b];
	}
	/* The median's estimate needs the histogram to agree with min and max. */
	if (!g->life_log2[life_bucket(g->life_min)] || !g->life_log2[life_bucket(g->life_max)])
		return BAD(c, hist, "lifetime_log2",
			   "empty bucket for lifetime_min or lifetime_max");
	for (unsigned b = 0; b < life_bucket(g->life_min); b++)
		if (g->life_log2[b])
			return BAD(c, hist, "lifetime_log2", "objects below lifetime_min");
	return 0;
}

static int restore_section(struct objrel *r, const struct mn_profile *prof,
			   const struct mn_pnode *sec, char *err, size_t errlen)
{
	struct rctx c = { prof, err, errlen };
	const struct mn_pnode *lost, *groups, *ll;
	int64_t prev = -1;   /* the last group or site read */
	int e;

	if (mn_pnode_kind(sec) != MN_PNODE_MAP)
		return mn_pnode_errorf(prof, sec, err, errlen, "expected a mapping for the "
				       "object-relative section");
	ll = mn_pnode_get(sec, "lossless");
	if (ll)
		return BAD(&c, ll, "lossless", "the lossless streams of a run cannot be merged "
			   "(run without MNEMO_OBJREL_LOSSLESS=1 to merge)");
	/* The run's parameters are the section's, whatever the environment of this process. */
	objrel_lossless_free(r->ll);
	r->ll = NULL;
	e = ru32(&c, sec, "lmad_limit", &r->limit);
	if (e)
		return e;
	if (r->limit < 1 || r->limit > LMADS_MAX)
		return BAD(&c, mn_pnode_get(sec, "lmad_limit"), "lmad_limit",
			   "expected 1 to %u", LMADS_MAX);
	e = mn_pfield_bool(prof, sec, "stack_objects", &r->stack, err, errlen);
	if (!e)
		e = ru64(&c, sec, "events", &r->clock);
	if (!e)
		e = restore_runs(r, &c, sec);
	if (e)
		return e;
	lost = mn_pfield_node(prof, sec, "lost", MN_PNODE_MAP, err, errlen);
	if (!lost)
		return -EINVAL;
	e = ru64(&c, lost, "aliased_granules", &r->objs.aliases);
	if (!e)
		e = ru64(&c, lost, "nomem", &r->nomem);
	if (!e)
		e = ru64(&c, lost, "unknown_frees", &r->unknown_frees);
	if (e)
		return e;
	groups = rseq(&c, sec, "groups");
	if (!groups)
		return -EINVAL;
	for (size_t i = 0; i < mn_pnode_len(groups); i++) {
		e = restore_group(r, &c, mn_pnode_at(groups, i), &prev);
		if (e)
			return e;
	}
	e = mn_schema_restore_fields(&tail, r, prof, sec, err, errlen);
	if (e)
		return e;
	r->finalized = true;   /* a run that ended: no live objects, streams in order */
	return 0;
}

int objrel_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		      char *err, size_t errlen)
{
	int e = restore_section(st, prof, sec, err, errlen);

	return e == -ENOENT ? -EINVAL : e;   /* a missing field: the message says which */
}
