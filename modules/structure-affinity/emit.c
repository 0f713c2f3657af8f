/*
 * structure-affinity's profile section (README "Schema"): the hot data objects (Eq. 1), each
 * one's structure size, fields, affinities, clusters and advice (affinity.c), its loops and
 * streams; and the integers they come from, so that restore.c can rebuild the state: the put
 * fields of the section's schema (section.c), which writes the rest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "module.h"
#include "sa.h"
#include "schema.h"

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/*
 * The type in an allocation site's name "callee:type" (the pass joins them with one colon; either
 * may hold "::"), or NULL.
 */
static const char *type_name(const char *name)
{
	for (const char *c = strchr(name, ':'); c; c = strchr(c + 2, ':')) {
		if (c[1] != ':')
			return c + 1;
	}
	return NULL;
}

/* The structure size the site table declares for data object site, or 0. */
static uint64_t declared_size(const struct affinity *a, uint32_t site)
{
	const struct mn_run_site *s = mn_run_site(a->run, site);

	/*
	 * An allocation whose type the pass recorded ("callee:type", operator new) gives its
	 * type_size.  Otherwise the structure layout from debug info (`fields`, any kind of site)
	 * gives the element type's size; a global's or a stack object's type_size is the whole
	 * variable's, an array of structures included, so it is not a structure size.
	 */
	if (!s)
		return 0;
	if (s->type_size && type_name(s->name) &&
	    (!strcmp(s->kind, "alloc") || !strcmp(s->kind, "realloc")))
		return s->type_size;
	return sa_fields_size(s->fields);
}

/* Data objects in an order that does not depend on the run: their sites, then callers. */
static int by_key(const struct affinity *a, uint32_t x, uint32_t y)
{
	return mn_allocctx_cmp(&a->actx, x, y);
}

static int by_cost(const void *x, const void *y, void *st)
{
	const struct dobj *a = *(const struct dobj *const *)x, *b = *(const struct dobj *const *)y;

	if (a->cost != b->cost)
		return a->cost > b->cost ? -1 : 1;
	return by_key(st, a->site, b->site);
}

static int by_dobj(const void *x, const void *y, void *st)
{
	const struct dobj *a = *(const struct dobj *const *)x, *b = *(const struct dobj *const *)y;

	return by_key(st, a->site, b->site);
}

static int by_loop_site(const void *x, const void *y)
{
	const struct sa_stream *a = x, *b = y;

	if (a->loop != b->loop)
		return a->loop < b->loop ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

/* Site ids go through mn_prof_site(); loop 0 (outside every loop) is no site. */
static void kv_loop(struct mn_prof *p, uint32_t loop)
{
	if (loop)
		mn_prof_kv_site(p, "loop", loop);
	else
		mn_prof_kv_u64(p, "loop", 0);
}

/* A data object's site: 0 for memory allocated where no site is (the C library's own). */
static void kv_object(struct mn_prof *p, const char *key, uint32_t site)
{
	if (site)
		mn_prof_kv_site(p, key, site);
	else
		mn_prof_kv_u64(p, key, 0);
}

/* A data object: its site under key, and under ctx_key its callers when it is a context. */
static void kv_dobj(struct mn_prof *p, const struct affinity *a, const char *key,
		    const char *ctx_key, uint32_t dobj)
{
	uint64_t callers = mn_allocctx_callers(&a->actx, dobj);

	kv_object(p, key, mn_allocctx_site(&a->actx, dobj));
	if (callers) {
		mn_prof_key(p, ctx_key);
		mn_allocctx_emit(p, callers);
	}
}

static void kv_size(struct mn_prof *p, const char *key, uint64_t v)
{
	if (v)
		mn_prof_kv_u64(p, key, v);
	else {
		mn_prof_key(p, key);
		mn_prof_null(p);
	}
}

static void emit_size(struct mn_prof *p, const struct sa_layout *l, uint64_t instances)
{
	static const char *const sources[] = {
		[SA_SIZE_STRIDES] = "strides", [SA_SIZE_FOLDED] = "folded",
		[SA_SIZE_DECLARED] = "declared", [SA_SIZE_OBJECT] = "object",
	};

	mn_prof_key(p, "size");
	mn_prof_map_begin_flow(p);
	kv_size(p, "inferred", l->inferred);
	kv_size(p, "declared", l->declared);
	/* Equal, or inferred a multiple of declared (folded into it): the strides are whole
	 * elements of the declared structure. */
	mn_prof_key(p, "agree");
	if (l->inferred && l->declared)
		mn_prof_bool(p, sa_layout_agree(l));
	else
		mn_prof_null(p);
	kv_size(p, "used", l->used);
	mn_prof_kv_str(p, "source", sources[l->source]);
	mn_prof_map_end(p);
	if (l->inferred)
		return;
	if (instances > 1)
		mn_prof_kv_str(p, "unknown_because", "no stream touched one instance at two "
			       "addresses: each access fell in another instance (as when every "
			       "node is allocated on its own)");
	else
		mn_prof_kv_str(p, "unknown_because", "no stream touched two addresses: one "
			       "element or a scalar");
}

static void emit_fields(struct mn_prof *p, const struct sa_layout *l, uint64_t cost)
{
	char key[32];

	mn_prof_key(p, "fields");
	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < l->nfields; i++) {
		mn_prof_map_begin_flow(p);
		mn_prof_kv_u64(p, "offset", l->field[i].offset);
		/* Only where the site table declares the structure: offsets are the analysis,
		 * names a reading aid. */
		if (l->field[i].name[0])
			mn_prof_kv_str(p, "name", l->field[i].name);
		mn_prof_kv_u64(p, "bytes", l->field[i].bytes);
		mn_prof_kv_u64(p, "accesses", l->field[i].accesses);
		mn_prof_kv_u64(p, "cost", l->field[i].cost);
		mn_prof_kv_f64(p, "share", share(l->field[i].cost, cost));
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);

	/* One row per field, one column per field offset: `mnemo report` prints it as a table. */
	mn_prof_key(p, "affinity");
	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < l->nfields; i++) {
		mn_prof_map_begin_flow(p);
		mn_prof_kv_u64(p, "field", l->field[i].offset);
		mn_prof_kv_u64(p, "cost", l->field[i].cost);   /* its weight, for readers */
		for (uint32_t j = 0; j < l->nfields; j++) {
			snprintf(key, sizeof(key), "%" PRIu64, l->field[j].offset);
			mn_prof_kv_f64(p, key, l->affinity[i][j]);
		}
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);

	mn_prof_key(p, "clusters");
	mn_prof_seq_begin(p);
	for (uint32_t c = 0; c < l->nclusters; c++) {
		mn_prof_seq_begin_flow(p);
		for (uint32_t i = 0; i < l->nfields; i++)
			if (l->cluster[i] == c)
				mn_prof_u64(p, l->field[i].offset);
		mn_prof_seq_end(p);
	}
	mn_prof_seq_end(p);
	if (l->nrare) {   /* below SA_RARE_SHARE of the cost: in no cluster, not in the advice */
		mn_prof_key(p, "rare_fields");
		mn_prof_seq_begin_flow(p);
		for (uint32_t i = 0; i < l->nfields; i++)
			if (l->cluster[i] == SA_NO_CLUSTER)
				mn_prof_u64(p, l->field[i].offset);
		mn_prof_seq_end(p);
	}
}

/* Code-centric: per loop, its cost on this object and the fields it touches. */
static void emit_loops(struct mn_prof *p, const struct sa_layout *l, const struct sa_stream *s,
		       size_t n)
{
	mn_prof_key(p, "loops");
	mn_prof_seq_begin(p);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t cost = 0, accesses = 0;
		bool seen[SA_FIELDS_MAX] = { false };

		for (j = i; j < n && s[j].loop == s[i].loop; j++) {
			int k = sa_layout_field(l, sa_layout_offset(l, &s[j]));

			cost += s[j].cost;
			accesses += s[j].accesses;
			if (k >= 0)
				seen[k] = true;
		}
		mn_prof_map_begin_flow(p);
		kv_loop(p, s[i].loop);
		mn_prof_kv_u64(p, "accesses", accesses);
		mn_prof_kv_u64(p, "cost", cost);
		mn_prof_key(p, "fields");
		mn_prof_seq_begin_flow(p);
		for (uint32_t k = 0; k < l->nfields; k++)
			if (seen[k])
				mn_prof_u64(p, l->field[k].offset);
		mn_prof_seq_end(p);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
}

static void emit_streams(struct mn_prof *p, const struct sa_layout *l, const struct sa_stream *s,
			 size_t n)
{
	mn_prof_key(p, "streams");
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < n; i++) {
		mn_prof_map_begin_flow(p);
		kv_loop(p, s[i].loop);
		mn_prof_kv_site(p, "site", s[i].site);
		mn_prof_kv_u64(p, "cost", s[i].cost);
		mn_prof_kv_u64(p, "accesses", s[i].accesses);
		mn_prof_kv_u64(p, "field", sa_layout_offset(l, &s[i]));
		kv_size(p, "stride", s[i].stride);
		/* What field is computed from, and the width: for restore() and merge(). */
		mn_prof_kv_u64(p, "offset", s[i].offset);
		mn_prof_kv_u64(p, "bytes", s[i].bytes);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
}

/* One hot data object: Eq. 1 share, then its layout.  -ENOMEM when its streams cannot be listed. */
static int emit_object(struct mn_prof *p, struct affinity *a, const struct dobj *d,
		       struct sa_layout *l)
{
	uint32_t site = mn_allocctx_site(&a->actx, d->site);
	uint64_t callers = mn_allocctx_callers(&a->actx, d->site);
	const struct mn_run_site *rs = mn_run_site(a->run, site);
	struct sa_stream *s = NULL;
	size_t n = 0, cap = 0;
	struct insn *in;
	char advice[512], key[48];

	MN_SITEVEC_FOREACH(&a->insns, id, in)
		for (uint32_t i = 0; i < in->n; i++) {
			if (in->v[i].dobj != d->site)
				continue;
			if (n == cap) {
				size_t c = cap ? 2 * cap : 16;
				struct sa_stream *v = realloc(s, c * sizeof(*v));

				if (!v) {
					free(s);
					return -ENOMEM;
				}
				s = v;
				cap = c;
			}
			s[n++] = in->v[i].s;
		}
	if (n)   /* with no stream, s is NULL, which qsort's base must not be */
		qsort(s, n, sizeof(*s), by_loop_site);
	sa_layout_build(l, s, n, declared_size(a, site), rs ? rs->fields : NULL, a->opt.threshold);
	if (rs)
		sa_layout_name(l, rs->fields);
	sa_layout_advice(l, advice, sizeof(advice));

	/* Keyed, not a list: `mnemo report` prints a mapping of sections each as a section, where
	 * a list of mappings would become one table of unreadable nested cells. */
	/* A context's key adds its callers: site_26_49_46. */
	snprintf(key, sizeof(key), "site_%" PRIu32, site);
	for (uint64_t c = callers; c; c >>= 32)
		snprintf(key + strlen(key), sizeof(key) - strlen(key), "_%" PRIu32, (uint32_t)c);
	mn_prof_key(p, key);
	mn_prof_map_begin(p);
	kv_dobj(p, a, "site", "context", d->site);
	mn_prof_kv_str(p, "kind", sa_kind_names[d->kind]);
	mn_prof_kv_str(p, "name", rs ? rs->name : "");
	if (l->type[0])           /* the layout's name, from debug info */
		mn_prof_kv_str(p, "type", l->type);
	else if (l->declared && rs && type_name(rs->name))
		mn_prof_kv_str(p, "type", type_name(rs->name));
	mn_prof_kv_u64(p, "instances", d->instances);
	mn_prof_kv_u64(p, "bytes", d->max_bytes);
	mn_prof_kv_u64(p, "accesses", d->accesses);
	mn_prof_kv_u64(p, "cost", d->cost);
	mn_prof_kv_f64(p, "share", share(d->cost, a->cost));
	emit_size(p, l, d->instances);
	if (l->dropped_streams)
		mn_prof_kv_u64(p, "streams_beyond_field_limit", l->dropped_streams);
	mn_prof_kv_str(p, "advice", advice);
	emit_fields(p, l, d->cost);
	emit_loops(p, l, s, n);
	emit_streams(p, l, s, n);
	mn_prof_map_end(p);
	free(s);
	return 0;
}

/*
 * Every data object with an instance, by site: the integers the hot set (Eq. 1) and the structures'
 * rows are computed from, so that a merged profile can recompute them (README "Merging").
 */
static int emit_objects(struct mn_prof *p, struct affinity *a)
{
	struct dobj *d, **v = NULL;
	size_t n = 0, cap = 0;

	MN_SITEVEC_FOREACH(&a->dobjs, id, d) {
		if (!d->instances && !d->accesses)
			continue;
		if (n == cap) {
			size_t c = cap ? 2 * cap : 64;
			struct dobj **w = realloc(v, c * sizeof(*w));

			if (!w) {
				free(v);
				return -ENOMEM;
			}
			v = w;
			cap = c;
		}
		v[n++] = d;
	}
	if (n)
		qsort_r(v, n, sizeof(*v), by_dobj, a);
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < n; i++) {
		d = v[i];
		mn_prof_map_begin_flow(p);
		kv_dobj(p, a, "site", "context", d->site);
		mn_prof_kv_str(p, "kind", sa_kind_names[d->kind]);
		mn_prof_kv_u64(p, "instances", d->instances);
		mn_prof_kv_u64(p, "bytes", d->max_bytes);
		mn_prof_kv_u64(p, "accesses", d->accesses);
		mn_prof_kv_u64(p, "cost", d->cost);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	free(v);
	return 0;
}

static int by_object_loop_site(const void *x, const void *y, void *st)
{
	const struct stream *a = *(const struct stream *const *)x;
	const struct stream *b = *(const struct stream *const *)y;

	if (a->dobj != b->dobj)
		return by_key(st, a->dobj, b->dobj);
	return by_loop_site(&a->s, &b->s);
}

/*
 * The streams of the data objects that are not hot (not under `structures`), by object, loop and
 * instruction: in another run's company one of those objects may be.  -ENOMEM.
 */
static int emit_other_streams(struct mn_prof *p, struct affinity *a)
{
	const struct stream **v = NULL;
	size_t n = 0, cap = 0;
	struct insn *in;

	MN_SITEVEC_FOREACH(&a->insns, id, in)
		for (uint32_t i = 0; i < in->n; i++) {
			const struct dobj *d = mn_sitevec_find(&a->dobjs, in->v[i].dobj);

			if (d && d->hot)
				continue;
			if (n == cap) {
				size_t c = cap ? 2 * cap : 64;
				const struct stream **w = realloc(v, c * sizeof(*w));

				if (!w) {
					free(v);
					return -ENOMEM;
				}
				v = w;
				cap = c;
			}
			v[n++] = &in->v[i];
		}
	if (n)
		qsort_r(v, n, sizeof(*v), by_object_loop_site, a);
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < n; i++) {
		const struct sa_stream *s = &v[i]->s;

		mn_prof_map_begin_flow(p);
		kv_dobj(p, a, "object", "object_context", v[i]->dobj);
		kv_loop(p, s->loop);
		mn_prof_kv_site(p, "site", s->site);
		mn_prof_kv_u64(p, "cost", s->cost);
		mn_prof_kv_u64(p, "accesses", s->accesses);
		kv_size(p, "stride", s->stride);
		mn_prof_kv_u64(p, "offset", s->offset);
		mn_prof_kv_u64(p, "bytes", s->bytes);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	free(v);
	return 0;
}

/* The hot data objects' rows: Eq. 1 shares of the cost. */
int sa_put_hot(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	const struct affinity *a = row;

	(void)f;
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < a->nhot; i++) {
		mn_prof_map_begin_flow(p);
		kv_dobj(p, a, "site", "context", a->hot[i]->site);
		mn_prof_kv_str(p, "kind", sa_kind_names[a->hot[i]->kind]);
		mn_prof_kv_u64(p, "cost", a->hot[i]->cost);
		mn_prof_kv_f64(p, "share", share(a->hot[i]->cost, a->cost));
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	return 0;
}

/* Each hot data object's structure, keyed by its site.  -ENOMEM. */
int sa_put_structures(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	struct affinity *a = (struct affinity *)row;   /* emit()'s state, not const there */
	struct sa_layout *l = malloc(sizeof(*l));
	int err = l ? 0 : -ENOMEM;

	(void)f;
	mn_prof_map_begin(p);
	for (size_t i = 0; i < a->nhot && !err; i++)
		err = emit_object(p, a, a->hot[i], l);
	mn_prof_map_end(p);
	free(l);
	return err;
}

int sa_put_objects(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	(void)f;
	return emit_objects(p, (struct affinity *)row);
}

int sa_put_other_streams(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	(void)f;
	return emit_other_streams(p, (struct affinity *)row);
}

/* Marks the hot data objects (Eq. 1: the top by cost) and lists them in a->hot.  -ENOMEM. */
static int rank(struct affinity *a)
{
	struct dobj **hot = NULL, *d;
	size_t n = 0, cap = 0;

	MN_SITEVEC_FOREACH(&a->dobjs, id, d) {
		d->hot = false;
		if (!d->accesses)
			continue;
		if (n == cap) {
			size_t c = cap ? 2 * cap : 64;
			struct dobj **v = realloc(hot, c * sizeof(*v));

			if (!v) {
				free(hot);
				return -ENOMEM;
			}
			hot = v;
			cap = c;
		}
		hot[n++] = d;
	}
	if (n)   /* with no data object, hot is NULL, which qsort's base must not be */
		qsort_r(hot, n, sizeof(*hot), by_cost, a);
	a->data_objects = n;
	a->nhot = n < a->opt.top ? n : a->opt.top;
	for (size_t i = 0; i < a->nhot; i++)
		hot[i]->hot = true;
	a->hot = hot;
	return 0;
}

int sa_emit(void *st, struct mn_prof *p)
{
	struct affinity *a = st;
	int err;

	if (a->conflict) {
		fprintf(stderr, "mnemo: structure-affinity: the profiles were made with "
			"different options (cost, sample_period, top, threshold or cache "
			"geometry): their counts do not add\n");
		return -EINVAL;
	}
	sa_cores_fold(a);   /* with threads, the cache lines every core found */
	if ((err = rank(a)))
		return err;
	err = mn_schema_emit(&sa_section, a, p);
	free(a->hot);
	a->hot = NULL;
	a->nhot = 0;
	return err;
}
