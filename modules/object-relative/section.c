/*
 * object-relative's section: emit() writes a state as the schema of README.md says, restore()
 * reads such a section back into a state (for `mnemo merge`), checking every constraint of the
 * schema with the place and field of a violation.
 */
#define _GNU_SOURCE   /* open_memstream */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objrel_internal.h"

/* A group's kind is its objects' (objects.h). */
static const char *const kind_names[] = {
	[MN_OBJ_HEAP] = "heap", [MN_OBJ_STACK] = "stack", [MN_OBJ_GLOBAL] = "global"
};

/* The horizontal streams of lossless mode, in the order of the profile's `lossless.streams`. */
static const char *const ll_names[LL_STREAMS] = { "instruction", "group", "object", "offset" };

/* ---- emit() ---------------------------------------------------------------------------------- */

static void emit_lmad(struct mn_prof *p, const struct objrel_lmad *l)
{
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "object", l->start[0]);
	mn_prof_kv_u64(p, "offset", l->start[1]);
	mn_prof_kv_i64(p, "object_stride", l->stride[0]);
	mn_prof_kv_i64(p, "offset_stride", l->stride[1]);
	mn_prof_kv_u64(p, "count", l->count);
	mn_prof_kv_u64(p, "first_time", l->first);
	mn_prof_kv_u64(p, "last_time", l->last);
	mn_prof_map_end(p);
}

static void emit_stream(struct mn_prof *p, const struct stream *s, bool runs)
{
	const struct objrel_lmads *l = &s->l;

	mn_prof_map_begin(p);
	mn_prof_kv_site(p, "group", s->group);
	if (runs)
		mn_prof_kv_u64(p, "run", s->run);
	mn_prof_kv_u64(p, "accesses", l->points);
	mn_prof_kv_u64(p, "captured", l->captured);
	mn_prof_kv_bool(p, "full", l->full);
	mn_prof_kv_u64(p, "object_min", l->min[0]);
	mn_prof_kv_u64(p, "object_max", l->max[0]);
	mn_prof_kv_u64(p, "object_granularity", l->gran[0]);
	mn_prof_kv_u64(p, "offset_min", l->min[1]);
	mn_prof_kv_u64(p, "offset_max", l->max[1]);
	mn_prof_kv_u64(p, "offset_granularity", l->gran[1]);
	mn_prof_key(p, "lmads");
	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < l->n; i++)
		emit_lmad(p, &l->v[i]);
	mn_prof_seq_end(p);
	mn_prof_map_end(p);
}

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

	mn_prof_key(p, "instructions");
	mn_prof_seq_begin(p);
	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		mn_prof_map_begin(p);
		mn_prof_kv_site(p, "site", in->site);
		mn_prof_kv_str(p, "access", in->store ? "store" : "load");
		mn_prof_kv_u64(p, "accesses", in->accesses);
		mn_prof_kv_u64(p, "unattributed", in->unattributed);
		mn_prof_key(p, "streams");
		mn_prof_seq_begin(p);
		for (uint32_t i = 0; i < in->n; i++)
			emit_stream(p, &in->s[i], r->nruns > 1);
		mn_prof_seq_end(p);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
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

static int restore_lmad(struct rctx *c, const struct mn_pnode *row, struct objrel_lmad *l)
{
	int e = ru64(c, row, "object", &l->start[0]);

	if (!e)
		e = ru64(c, row, "offset", &l->start[1]);
	if (!e)
		e = mn_pfield_i64(c->prof, row, "object_stride", &l->stride[0], c->err, c->errlen);
	if (!e)
		e = mn_pfield_i64(c->prof, row, "offset_stride", &l->stride[1], c->err, c->errlen);
	if (!e)
		e = ru64(c, row, "count", &l->count);
	if (!e)
		e = ru64(c, row, "first_time", &l->first);
	if (!e)
		e = ru64(c, row, "last_time", &l->last);
	if (e)
		return e;
	if (!l->count)
		return BAD(c, row, "count", "an LMAD has at least one point");
	if (l->last < l->first)
		return BAD(c, row, "last_time", "before first_time");
	return 0;
}

static int restore_stream(struct objrel *r, struct rctx *c, const struct mn_pnode *row,
			  struct stream *s)
{
	static const char *const dim[OBJREL_LMAD_DIMS] = { "object", "offset" };
	struct objrel_lmads *l = &s->l;
	const struct mn_pnode *lm;
	uint64_t sum = 0;
	size_t n;
	int e;

	objrel_lmads_init(l, r->limit);
	e = ru32(c, row, "group", &s->group);
	if (e)
		return e;
	s->run = 0;
	e = ru32(c, row, "run", &s->run);
	if (e && e != -ENOENT)
		return e;
	if (s->run >= r->nruns)
		return BAD(c, row, "run", "%u is not a run of 'runs'", s->run);
	e = ru64(c, row, "accesses", &l->points);
	if (!e)
		e = ru64(c, row, "captured", &l->captured);
	if (!e)
		e = mn_pfield_bool(c->prof, row, "full", &l->full, c->err, c->errlen);
	for (int d = 0; d < OBJREL_LMAD_DIMS && !e; d++) {
		char key[32];

		snprintf(key, sizeof(key), "%s_min", dim[d]);
		e = ru64(c, row, key, &l->min[d]);
		snprintf(key, sizeof(key), "%s_max", dim[d]);
		if (!e)
			e = ru64(c, row, key, &l->max[d]);
		snprintf(key, sizeof(key), "%s_granularity", dim[d]);
		if (!e)
			e = ru64(c, row, key, &l->gran[d]);
	}
	if (e)
		return e;
	lm = rseq(c, row, "lmads");
	if (!lm)
		return -EINVAL;
	n = mn_pnode_len(lm);
	if (n > r->limit)
		return BAD(c, lm, "lmads", "%zu LMADs, more than lmad_limit %u", n, r->limit);
	if (n) {
		l->v = calloc(n, sizeof(*l->v));
		if (!l->v)
			return -ENOMEM;
		l->alloc = (uint32_t)n;
	}
	for (size_t k = 0; k < n; k++) {
		e = restore_lmad(c, mn_pnode_at(lm, k), &l->v[k]);
		if (e)
			return e;
		l->n = (uint32_t)k + 1;
		sum += l->v[k].count;
	}
	if (sum != l->captured || l->captured > l->points)
		return BAD(c, row, "captured", "expected the LMADs' points (%" PRIu64 "), at most "
			   "'accesses'", sum);
	memcpy(l->first, l->min, sizeof(l->first));   /* unused: no point comes any more */
	return 0;
}

static int restore_insn(struct objrel *r, struct rctx *c, const struct mn_pnode *row,
			int64_t *prev)
{
	const struct mn_pnode *st;
	const char *access;
	struct insn *in;
	uint32_t site;
	size_t n;
	int e;

	e = ru32(c, row, "site", &site);
	if (e)
		return e;
	if ((int64_t)site <= *prev)
		return BAD(c, row, "site", "instructions not sorted by site, or %u twice", site);
	*prev = site;
	in = mn_sitevec_get(&r->insns, site);
	if (!in)
		return -ENOMEM;
	in->site = site;
	e = mn_pfield_str(c->prof, row, "access", &access, c->err, c->errlen);
	if (e)
		return e;
	if (strcmp(access, "load") && strcmp(access, "store"))
		return BAD(c, mn_pnode_get(row, "access"), "access",
			   "expected load or store, found '%s'", access);
	in->store = !strcmp(access, "store");
	e = ru64(c, row, "accesses", &in->accesses);
	if (!e)
		e = ru64(c, row, "unattributed", &in->unattributed);
	if (e)
		return e;
	if (in->unattributed > in->accesses)
		return BAD(c, row, "unattributed", "more than 'accesses'");
	st = rseq(c, row, "streams");
	if (!st)
		return -EINVAL;
	n = mn_pnode_len(st);
	if (n > UINT32_MAX / 2)
		return BAD(c, st, "streams", "too many streams");
	if (n) {
		in->s = calloc(n, sizeof(*in->s));
		if (!in->s)
			return -ENOMEM;
		in->alloc = (uint32_t)n;
	}
	for (size_t i = 0; i < n; i++) {
		const struct mn_pnode *srow = mn_pnode_at(st, i);

		in->n = (uint32_t)i + 1;   /* so fini frees it, whatever happens */
		e = restore_stream(r, c, srow, &in->s[i]);
		if (e)
			return e;
		if (i && objrel_by_group(&in->s[i - 1], &in->s[i]) >= 0)
			return BAD(c, srow, "group", "streams not sorted by group, then run");
	}
	return 0;
}

static int restore_section(struct objrel *r, const struct mn_profile *prof,
			   const struct mn_pnode *sec, char *err, size_t errlen)
{
	struct rctx c = { prof, err, errlen };
	const struct mn_pnode *lost, *groups, *insns, *ll;
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
	insns = rseq(&c, sec, "instructions");
	if (!insns)
		return -EINVAL;
	prev = -1;
	for (size_t i = 0; i < mn_pnode_len(insns); i++) {
		e = restore_insn(r, &c, mn_pnode_at(insns, i), &prev);
		if (e)
			return e;
	}
	r->finalized = true;   /* a run that ended: no live objects, streams in order */
	return 0;
}

int objrel_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		      char *err, size_t errlen)
{
	int e = restore_section(st, prof, sec, err, errlen);

	return e == -ENOENT ? -EINVAL : e;   /* a missing field: the message says which */
}
