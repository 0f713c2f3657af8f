/*
 * structure-affinity across runs (README "Merging"): merge() folds one run's state into another's;
 * the take fields of the section's schema (section.c) read back what emit.c's put fields write.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "module.h"
#include "sa.h"
#include "schema.h"

/* ---- Merge and restore (README "Merging") ---------------------------------------------------- */

static bool same_options(const struct options *x, const struct options *y)
{
	bool same = x->cost == y->cost && x->sample == y->sample && x->top == y->top &&
		    x->threshold == y->threshold;

	/* The geometry and latencies count only when they priced the accesses. */
	if (!same || x->cost != SA_COST_CACHE)
		return same;
	return x->l1_bytes == y->l1_bytes && x->l1_ways == y->l1_ways &&
	       x->l2_bytes == y->l2_bytes && x->l2_ways == y->l2_ways && x->line == y->line &&
	       x->l1_latency == y->l1_latency && x->l2_latency == y->l2_latency &&
	       x->mem_latency == y->mem_latency;
}

/* Folds one data object of another run into d (all zero when the site is new here). */
static void merge_dobj(struct dobj *d, const struct dobj *f)
{
	if (!d->instances && !d->accesses) {
		d->site = f->site;
		d->kind = f->kind;
	} else if (f->kind < d->kind) {
		d->kind = f->kind;   /* one site makes one kind; were it not so, still one rule */
	}
	d->instances += f->instances;
	if (f->max_bytes > d->max_bytes)
		d->max_bytes = f->max_bytes;
	d->accesses += f->accesses;
	d->cost += f->cost;
}

/*
 * Folds a stream of another run into s (fresh from sa_stream_of() when new here: site 0).  Counts
 * add, strides combine by gcd as Eq. 2-3 do within a run, the offset is the smaller (any offset of
 * the stream gives its field), the width the larger.
 */
static void merge_stream(struct sa_stream *s, const struct sa_stream *f)
{
	if (!s->site) {
		*s = *f;
		return;
	}
	s->stride = sa_gcd(s->stride, f->stride);
	if (f->offset < s->offset)
		s->offset = f->offset;
	if (f->bytes > s->bytes)
		s->bytes = f->bytes;
	s->accesses += f->accesses;
	s->cost += f->cost;
}

/*
 * Folds run `from` into `into`: every count adds, per data object and per stream, whatever their
 * sites (disjoint or overlapping).  The live instance tables are not merged: after a merge only
 * emit() is meaningful.
 */
void sa_merge(void *into, void *from)
{
	struct affinity *a = into, *b = from;
	struct dobj *f;
	struct insn *fi;

	if (!same_options(&a->opt, &b->opt) || b->conflict)
		a->conflict = true;
	sa_merge_counts(a, b);
	a->serial += b->serial;
	/* Contexts are keyed per state: b's keys become a's (allocctx.h). */
	MN_SITEVEC_FOREACH(&b->dobjs, id, f) {
		uint32_t k = mn_allocctx_translate(&a->actx, &b->actx, (uint32_t)id);
		struct dobj *d = mn_sitevec_get(&a->dobjs, k);

		if (!d) {
			a->nomem++;
			continue;
		}
		merge_dobj(d, f);
		d->site = k;
	}
	MN_SITEVEC_FOREACH(&b->insns, id, fi) {
		struct insn *in = mn_sitevec_get(&a->insns, (uint32_t)id);

		for (uint32_t i = 0; i < fi->n; i++) {
			const struct stream *x = &fi->v[i];
			uint32_t k = mn_allocctx_translate(&a->actx, &b->actx, x->dobj);
			struct stream *r = in ? sa_stream_of(in, x->s.loop, k) : NULL;

			if (!r) {
				a->nomem++;
				continue;
			}
			merge_stream(&r->s, &fi->v[i].s);
		}
	}
}

/* A size: an unsigned integer, or null for 0 (kv_size()). */
static int pfield_size(const struct mn_profile *prof, const struct mn_pnode *map, const char *key,
		       uint64_t *v, char *err, size_t errlen)
{
	const struct mn_pnode *n = mn_pfield_node(prof, map, key, MN_PNODE_SCALAR, err, errlen);

	if (!n)
		return -EINVAL;
	if (mn_pnode_is_null(n)) {
		*v = 0;
		return 0;
	}
	return mn_pfield_u64(prof, map, key, v, err, errlen);
}

/*
 * A site id the row gives under key, which the profile's site table must list; 0 (no site: a data
 * object the C library allocated, loop 0 outside every loop) where zero_ok.
 */
static int pfield_site(const struct mn_profile *prof, const struct mn_pnode *map, const char *key,
		       uint32_t *v, bool zero_ok, char *err, size_t errlen)
{
	int e = mn_pfield_u32(prof, map, key, v, err, errlen);

	if (e)
		return e == -ENOENT ? -EINVAL : e;
	if (!(zero_ok && !*v) && !mn_profile_site(prof, *v))
		return mn_pnode_errorf(prof, mn_pnode_get(map, key), err, errlen, "field '%s': "
				       "site %" PRIu32 " is not in the profile's site table", key,
				       *v);
	return 0;
}

/*
 * A data object's site under key and, when given, its callers under ctx_key (`context: [49,
 * 46]`): its key in a->actx.
 */
static int pfield_dobj(struct affinity *a, const struct mn_profile *prof,
		       const struct mn_pnode *map, const char *key, const char *ctx_key,
		       uint32_t *v, char *err, size_t errlen)
{
	const struct mn_pnode *n = mn_pnode_get(map, ctx_key);
	uint64_t callers = 0, c;
	int e = pfield_site(prof, map, key, v, true, err, errlen);

	if (e || !n)
		return e;
	if (mn_pnode_kind(n) != MN_PNODE_SEQ || !mn_pnode_len(n) || mn_pnode_len(n) > 2 || !*v)
		return mn_pnode_errorf(prof, n, err, errlen, "field '%s': expected one or two call "
				       "sites of an allocation site", ctx_key);
	for (size_t i = 0; i < mn_pnode_len(n); i++) {
		if (mn_pnode_u64(mn_pnode_at(n, i), &c) || !c || c > UINT32_MAX ||
		    !mn_profile_site(prof, (uint32_t)c))
			return mn_pnode_errorf(prof, mn_pnode_at(n, i), err, errlen, "field '%s': "
					       "expected a site id of the profile's site table",
					       ctx_key);
		callers |= c << (32 * i);
	}
	*v = mn_allocctx_key(&a->actx, *v, callers);
	return mn_allocctx_is_context(&a->actx, *v) ? 0 : -ENOMEM;
}

/* A required unsigned field; a missing one is an error, not a default. */
static int pfield_u64(const struct mn_profile *prof, const struct mn_pnode *map, const char *key,
		      uint64_t *v, char *err, size_t errlen)
{
	int e = mn_pfield_u64(prof, map, key, v, err, errlen);

	return e == -ENOENT ? -EINVAL : e;
}

/* A sequence, as the field's node. */
static int want_seq(const struct mn_field *f, const struct mn_profile *prof,
		    const struct mn_pnode *n, char *err, size_t errlen)
{
	if (mn_pnode_kind(n) == MN_PNODE_SEQ)
		return 0;
	return mn_pnode_errorf(prof, n, err, errlen, "field '%s': expected a sequence", f->key);
}

int sa_take_objects(const struct mn_field *f, void *row, const struct mn_profile *prof,
		    const struct mn_pnode *t, char *err, size_t errlen)
{
	struct affinity *a = row;
	int e;

	if ((e = want_seq(f, prof, t, err, errlen)))
		return e;
	for (size_t i = 0; i < mn_pnode_len(t); i++) {
		const struct mn_pnode *row = mn_pnode_at(t, i);
		struct dobj x = { 0 }, *d;
		const char *kind;
		size_t k;
		int e;

		if ((e = pfield_dobj(a, prof, row, "site", "context", &x.site, err, errlen)) ||
		    (e = mn_pfield_str(prof, row, "kind", &kind, err, errlen)) ||
		    (e = pfield_u64(prof, row, "instances", &x.instances, err, errlen)) ||
		    (e = pfield_u64(prof, row, "bytes", &x.max_bytes, err, errlen)) ||
		    (e = pfield_u64(prof, row, "accesses", &x.accesses, err, errlen)) ||
		    (e = pfield_u64(prof, row, "cost", &x.cost, err, errlen)))
			return e == -ENOENT ? -EINVAL : e;
		for (k = 0; k < sizeof(sa_kind_names) / sizeof(sa_kind_names[0]); k++)
			if (sa_kind_names[k] && !strcmp(kind, sa_kind_names[k]))
				break;
		if (k == sizeof(sa_kind_names) / sizeof(sa_kind_names[0]))
			return mn_pnode_errorf(prof, mn_pnode_get(row, "kind"), err, errlen,
					       "field 'kind': expected heap, stack or global, "
					       "found '%s'", kind);
		x.kind = (enum mn_obj_kind)k;
		if (!x.instances && !x.accesses)
			return mn_pnode_errorf(prof, row, err, errlen, "field 'instances': data "
					       "object %" PRIu32 " has no instance and no access",
					       x.site);
		d = mn_sitevec_get(&a->dobjs, x.site);
		if (!d)
			return -ENOMEM;
		if (d->instances || d->accesses)
			return mn_pnode_errorf(prof, mn_pnode_get(row, "site"), err, errlen,
					       "field 'site': data object %" PRIu32 " listed twice",
					       x.site);
		*d = x;
	}
	return 0;
}

/* One stream row: of data object `object` when have_object, else of the one its `object` names. */
static int restore_stream(struct affinity *a, const struct mn_profile *prof,
			  const struct mn_pnode *row, bool have_object, uint32_t object,
			  char *err, size_t errlen)
{
	struct sa_stream s = { 0 };
	const struct dobj *d;
	struct stream *r;
	struct insn *in;
	uint64_t bytes;
	int e;

	if ((!have_object && (e = pfield_dobj(a, prof, row, "object", "object_context", &object,
					      err, errlen))) ||
	    (e = pfield_site(prof, row, "site", &s.site, false, err, errlen)) ||
	    (e = pfield_site(prof, row, "loop", &s.loop, true, err, errlen)) ||
	    (e = pfield_u64(prof, row, "cost", &s.cost, err, errlen)) ||
	    (e = pfield_u64(prof, row, "accesses", &s.accesses, err, errlen)) ||
	    (e = pfield_size(prof, row, "stride", &s.stride, err, errlen)) ||
	    (e = pfield_u64(prof, row, "offset", &s.offset, err, errlen)) ||
	    (e = pfield_u64(prof, row, "bytes", &bytes, err, errlen)))
		return e;
	if (bytes > UINT32_MAX)
		return mn_pnode_errorf(prof, mn_pnode_get(row, "bytes"), err, errlen,
				       "field 'bytes': %" PRIu64 " is out of range", bytes);
	s.bytes = (uint32_t)bytes;
	d = mn_sitevec_find(&a->dobjs, object);
	if (!d || (!d->instances && !d->accesses))
		return mn_pnode_errorf(prof, row, err, errlen, "stream of site %" PRIu32 ": data "
				       "object %" PRIu32 " is not in 'objects'", s.site, object);
	in = mn_sitevec_get(&a->insns, s.site);
	r = in ? sa_stream_of(in, s.loop, object) : NULL;
	if (!r)
		return -ENOMEM;
	if (r->s.site)
		return mn_pnode_errorf(prof, row, err, errlen, "stream of site %" PRIu32 " in loop "
				       "%" PRIu32 " on data object %" PRIu32 " listed twice",
				       s.site, s.loop, object);
	r->s = s;
	return 0;
}

static int restore_streams(struct affinity *a, const struct mn_profile *prof,
			   const struct mn_pnode *t, bool have_object, uint32_t object, char *err,
			   size_t errlen)
{
	for (size_t i = 0; i < mn_pnode_len(t); i++) {
		int e = restore_stream(a, prof, mn_pnode_at(t, i), have_object, object, err,
				       errlen);

		if (e)
			return e;
	}
	return 0;
}

/* Kept for sa_take_other_streams(): the streams under it need `objects`, which comes after. */
int sa_take_structures(const struct mn_field *f, void *row, const struct mn_profile *prof,
		       const struct mn_pnode *n, char *err, size_t errlen)
{
	if (mn_pnode_kind(n) != MN_PNODE_MAP)
		return mn_pnode_errorf(prof, n, err, errlen, "field '%s': expected a mapping",
				       f->key);
	((struct affinity *)row)->structures = n;
	return 0;
}

/*
 * Every stream: those under `structures` (of the data object each names) and `other_streams`.
 * What the section derives from the integers (hot, shares, sizes, fields, affinities, clusters,
 * advice, loops) is not read: emit() computes it again.
 */
int sa_take_other_streams(const struct mn_field *f, void *row, const struct mn_profile *prof,
			  const struct mn_pnode *n, char *err, size_t errlen)
{
	struct affinity *a = row;
	const struct mn_pnode *structs = a->structures, *o, *t;
	int e;

	a->structures = NULL;
	for (size_t i = 0; structs && i < mn_pnode_len(structs); i++) {
		uint32_t object;

		o = mn_pnode_at(structs, i);
		if ((e = pfield_dobj(a, prof, o, "site", "context", &object, err, errlen)))
			return e;
		if (!(t = mn_pfield_node(prof, o, "streams", MN_PNODE_SEQ, err, errlen)))
			return -EINVAL;
		if ((e = restore_streams(a, prof, t, true, object, err, errlen)))
			return e;
	}
	if ((e = want_seq(f, prof, n, err, errlen)))
		return e;
	return restore_streams(a, prof, n, false, 0, err, errlen);
}
