/* Reading an object-relative section's LMADs back (objrel_load.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objrel_load.h"

void objrel_loaded_free(struct objrel_loaded *l)
{
	free(l->insns);
	free(l->streams);
	free(l->lmads);
	memset(l, 0, sizeof(*l));
}

static int read_lmad(const struct mn_profile *p, const struct mn_pnode *row,
		     struct objrel_lmad *l, char *err, size_t errlen)
{
	int e = mn_pfield_u64(p, row, "object", &l->start[0], err, errlen);

	if (!e)
		e = mn_pfield_u64(p, row, "offset", &l->start[1], err, errlen);
	if (!e)
		e = mn_pfield_i64(p, row, "object_stride", &l->stride[0], err, errlen);
	if (!e)
		e = mn_pfield_i64(p, row, "offset_stride", &l->stride[1], err, errlen);
	if (!e)
		e = mn_pfield_u64(p, row, "count", &l->count, err, errlen);
	if (!e)
		e = mn_pfield_u64(p, row, "first_time", &l->first, err, errlen);
	if (!e)
		e = mn_pfield_u64(p, row, "last_time", &l->last, err, errlen);
	if (!e && (!l->count || l->last < l->first)) {
		mn_pnode_errorf(p, row, err, errlen, "field 'count', 'last_time': an LMAD needs "
				"count >= 1 and last_time >= first_time");
		e = -EINVAL;
	}
	return e;
}

/* The allocation contexts a profile's streams name, (site, callers) by number. */
struct ctx_names {
	uint64_t (*v)[2];
	size_t n, cap;
};

/* Above every site id: the number of a stream's group that is the context named i. */
#define CONTEXT_GROUP 0x80000000u

/*
 * A stream's group: its site, or for `group: 26, context: [49, 46]` (an allocation context,
 * allocctx.h) a number of its own above every site (CONTEXT_GROUP + i), so that two contexts of
 * one site are two groups.
 */
static int read_group(const struct mn_profile *p, const struct mn_pnode *row,
		      struct ctx_names *t, uint32_t *group, char *err, size_t errlen)
{
	const struct mn_pnode *c = mn_pnode_get(row, "context");
	uint64_t callers = 0, v;
	size_t i;

	if (mn_pfield_u32(p, row, "group", group, err, errlen))
		return -EINVAL;
	if (!c)
		return 0;
	if (mn_pnode_kind(c) != MN_PNODE_SEQ || !mn_pnode_len(c) || mn_pnode_len(c) > 2 ||
	    *group >= CONTEXT_GROUP)
		return mn_pnode_errorf(p, c, err, errlen, "field 'context': expected one or two "
				       "call sites of a site below %u", CONTEXT_GROUP);
	for (i = 0; i < mn_pnode_len(c); i++) {
		if (mn_pnode_u64(mn_pnode_at(c, i), &v) || !v || v > UINT32_MAX)
			return mn_pnode_errorf(p, mn_pnode_at(c, i), err, errlen,
					       "field 'context': expected a site id");
		callers |= v << (32 * i);
	}
	for (i = 0; i < t->n && (t->v[i][0] != *group || t->v[i][1] != callers); i++)
		;
	if (i == t->n) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 16;
			uint64_t (*w)[2] = realloc(t->v, cap * sizeof(*w));

			if (!w || cap >= CONTEXT_GROUP)
				return -ENOMEM;
			t->v = w;
			t->cap = cap;
		}
		t->v[t->n][0] = *group;
		t->v[t->n++][1] = callers;
	}
	*group = CONTEXT_GROUP + (uint32_t)i;
	return 0;
}

static int expect_seq(const struct mn_profile *p, const struct mn_pnode *row, const char *key,
		      char *err, size_t errlen)
{
	return mn_pfield_node(p, row, key, MN_PNODE_SEQ, err, errlen) ? 0 : -EINVAL;
}

int objrel_load(const struct mn_profile *p, const char *module, struct objrel_loaded *out,
		char *err, size_t errlen)
{
	const struct mn_pnode *sec = mn_profile_module(p, module), *insns;
	size_t ns = 0, nl = 0, si = 0, li = 0;
	struct ctx_names ctx = { 0 };
	int e;

	memset(out, 0, sizeof(*out));
	if (!sec) {
		snprintf(err, errlen, "%s: no '%s' section", mn_profile_path(p), module);
		return -EINVAL;
	}
	insns = mn_pnode_get(sec, "instructions");
	e = expect_seq(p, sec, "instructions", err, errlen);
	if (e)
		return e;
	/* Sizes first, so every array is one allocation. */
	for (size_t i = 0; i < mn_pnode_len(insns); i++) {
		const struct mn_pnode *st = mn_pnode_get(mn_pnode_at(insns, i), "streams");

		e = expect_seq(p, mn_pnode_at(insns, i), "streams", err, errlen);
		if (e)
			return e;
		ns += mn_pnode_len(st);
		for (size_t j = 0; j < mn_pnode_len(st); j++) {
			const struct mn_pnode *lm = mn_pnode_get(mn_pnode_at(st, j), "lmads");

			e = expect_seq(p, mn_pnode_at(st, j), "lmads", err, errlen);
			if (e)
				return e;
			nl += mn_pnode_len(lm);
		}
	}
	out->n = mn_pnode_len(insns);
	out->insns = calloc(out->n ? out->n : 1, sizeof(*out->insns));
	out->streams = calloc(ns ? ns : 1, sizeof(*out->streams));
	out->lmads = calloc(nl ? nl : 1, sizeof(*out->lmads));
	if (!out->insns || !out->streams || !out->lmads) {
		objrel_loaded_free(out);
		snprintf(err, errlen, "%s: %s", mn_profile_path(p), strerror(ENOMEM));
		return -ENOMEM;
	}
	for (size_t i = 0; i < out->n && !e; i++) {
		const struct mn_pnode *row = mn_pnode_at(insns, i);
		const struct mn_pnode *st = mn_pnode_get(row, "streams");
		struct objrel_dinsn *in = &out->insns[i];
		const char *access = NULL;
		uint32_t site;

		e = mn_pfield_u32(p, row, "site", &site, err, errlen) ? -EINVAL : 0;
		if (!e)
			e = mn_pfield_u64(p, row, "accesses", &in->accesses, err, errlen);
		if (!e)
			e = mn_pfield_u64(p, row, "unattributed", &in->unattributed, err, errlen);
		if (!e && in->unattributed > in->accesses) {
			mn_pnode_errorf(p, row, err, errlen,
					"field 'unattributed': exceeds 'accesses'");
			e = -EINVAL;
		}
		if (!e && mn_pfield_str(p, row, "access", &access, err, errlen))
			e = -EINVAL;
		if (!e && strcmp(access, "load") && strcmp(access, "store")) {
			mn_pnode_errorf(p, mn_pnode_get(row, "access"), err, errlen,
					"field 'access': expected load or store, found '%s'",
					access);
			e = -EINVAL;
		}
		if (e)
			break;
		in->site = site;
		in->store = !strcmp(access, "store");
		in->streams = &out->streams[si];
		in->n = mn_pnode_len(st);
		for (size_t j = 0; j < in->n && !e; j++) {
			const struct mn_pnode *srow = mn_pnode_at(st, j);
			const struct mn_pnode *lm = mn_pnode_get(srow, "lmads");
			struct objrel_dstream *s = &out->streams[si++];
			int r;

			e = read_group(p, srow, &ctx, &s->group, err, errlen);
			/* run: only in a merged profile (README "Merging"); 0 without it. */
			s->run = 0;
			if (!e && (r = mn_pfield_u32(p, srow, "run", &s->run, err, errlen)) &&
			    r != -ENOENT)
				e = -EINVAL;
			/* thread: only in a profile of several threads; 0 without it. */
			s->thread = 0;
			if (!e && (r = mn_pfield_u32(p, srow, "thread", &s->thread, err, errlen)) &&
			    r != -ENOENT)
				e = -EINVAL;
			if (!e && mn_pfield_bool(p, srow, "full", &s->full, err, errlen))
				e = -EINVAL;
			for (int d = 0; d < OBJREL_LMAD_DIMS && !e; d++) {
				static const char *const dim[] = { "object", "offset" };
				char key[32];

				snprintf(key, sizeof(key), "%s_min", dim[d]);
				e = mn_pfield_u64(p, srow, key, &s->min[d], err, errlen);
				snprintf(key, sizeof(key), "%s_max", dim[d]);
				if (!e)
					e = mn_pfield_u64(p, srow, key, &s->max[d], err, errlen);
				snprintf(key, sizeof(key), "%s_granularity", dim[d]);
				if (!e)
					e = mn_pfield_u64(p, srow, key, &s->gran[d], err, errlen);
			}
			s->lmads = &out->lmads[li];
			s->n = mn_pnode_len(lm);
			for (size_t k = 0; k < s->n && !e; k++)
				e = read_lmad(p, mn_pnode_at(lm, k), &out->lmads[li++], err,
					      errlen);
		}
	}
	free(ctx.v);
	if (e)
		objrel_loaded_free(out);
	if (e == -ENOMEM)
		snprintf(err, errlen, "%s: %s", mn_profile_path(p), strerror(ENOMEM));
	return e == -ENOENT ? -EINVAL : e;   /* a missing field: err names it */
}
