/* Allocation contexts (allocctx.h): a small open-addressing table of (site, callers). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocctx.h"
#include "map.h"      /* mn_hash64() */
#include "schema.h"

void mn_allocctx_init(struct mn_allocctx *t, uint32_t site_count)
{
	*t = (struct mn_allocctx){ .base = site_count + 1 };
}

void mn_allocctx_fini(struct mn_allocctx *t)
{
	free(t->ctx);
	free(t->slot);
	*t = (struct mn_allocctx){ .base = t->base };
}

static uint64_t hash(uint32_t site, uint64_t callers)
{
	return mn_hash64(callers * UINT64_C(0x9e3779b97f4a7c15) ^ site);
}

/* Doubles the slots (rehashing every context); 0 or -ENOMEM. */
static int grow_slots(struct mn_allocctx *t)
{
	uint32_t mask = t->mask ? 2 * t->mask + 1 : 63;
	uint32_t *slot = calloc((size_t)mask + 1, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		uint64_t h = hash(t->ctx[i].site, t->ctx[i].callers);

		while (slot[h & mask])
			h++;
		slot[h & mask] = i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->mask = mask;
	return 0;
}

/* Appends (site, callers) as a new context; its index, or UINT32_MAX. */
static uint32_t append(struct mn_allocctx *t, uint32_t site, uint64_t callers)
{
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 64;
		struct mn_actx *v = realloc(t->ctx, (size_t)cap * sizeof(*v));

		if (!v)
			return UINT32_MAX;
		t->ctx = v;
		t->cap = cap;
	}
	t->ctx[t->n] = (struct mn_actx){ site, callers };
	return t->n++;
}

uint32_t mn_allocctx_key(struct mn_allocctx *t, uint32_t site, uint64_t callers)
{
	uint64_t h;
	uint32_t i;

	/* Site 0 is code built without the pass (a library's strdup): its callers are not where
	 * it allocated, and it stays one group, as without contexts. */
	if (!callers || !site)
		return site;
	if (t->mask) {
		for (h = hash(site, callers); (i = t->slot[h & t->mask]); h++)
			if (t->ctx[i - 1].site == site && t->ctx[i - 1].callers == callers)
				return t->base + i - 1;
	}
	/* Half full at most, so that a miss ends soon. */
	if ((uint64_t)t->n + 1 > (uint64_t)UINT32_MAX - t->base ||
	    (2 * ((uint64_t)t->n + 1) > (uint64_t)t->mask + 1 && grow_slots(t)) ||
	    (i = append(t, site, callers)) == UINT32_MAX) {
		t->nomem++;
		return site;
	}
	for (h = hash(site, callers); t->slot[h & t->mask]; h++)
		;
	t->slot[h & t->mask] = i + 1;
	return t->base + i;
}

int mn_allocctx_cmp(const struct mn_allocctx *t, uint32_t a, uint32_t b)
{
	uint32_t sa = mn_allocctx_site(t, a), sb = mn_allocctx_site(t, b);
	uint64_t ca = mn_allocctx_callers(t, a), cb = mn_allocctx_callers(t, b);

	if (sa != sb)
		return sa < sb ? -1 : 1;
	/* Innermost first: a chain [x] sorts before [x, y], and callers 0 before any. */
	for (int k = 0; k < 64; k += 32) {
		uint32_t xa = (uint32_t)(ca >> k), xb = (uint32_t)(cb >> k);

		if (xa != xb)
			return xa < xb ? -1 : 1;
	}
	return 0;
}

uint32_t mn_allocctx_translate(struct mn_allocctx *into, const struct mn_allocctx *from,
			       uint32_t k)
{
	if (!mn_allocctx_is_context(from, k))
		return k;
	return mn_allocctx_key(into, mn_allocctx_site(from, k), mn_allocctx_callers(from, k));
}

void mn_allocctx_emit(struct mn_prof *p, uint64_t callers)
{
	mn_prof_seq_begin_flow(p);
	for (; callers; callers >>= 32)
		mn_prof_site(p, (uint32_t)callers);
	mn_prof_seq_end(p);
}

static const struct mn_allocctx *table_of(const struct mn_field *f)
{
	return (const struct mn_allocctx *)((const char *)mn_schema_top() + f->aux);
}

static uint32_t key_of(const struct mn_field *f, const void *row)
{
	return *(const uint32_t *)((const char *)row + f->offset);
}

int mn_allocctx_put_site(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	mn_prof_site(p, mn_allocctx_site(table_of(f), key_of(f, row)));
	return 0;
}

bool mn_allocctx_when_context(const struct mn_field *f, const void *row)
{
	return mn_allocctx_is_context(table_of(f), key_of(f, row));
}

int mn_allocctx_put_context(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	mn_allocctx_emit(p, mn_allocctx_callers(table_of(f), key_of(f, row)));
	return 0;
}

int mn_allocctx_take_context(const struct mn_field *f, void *row, const struct mn_profile *prof,
			     const struct mn_pnode *n, char *err, size_t errlen)
{
	struct mn_allocctx *t = (struct mn_allocctx *)table_of(f);
	uint32_t *key = (uint32_t *)((char *)row + f->offset);
	size_t len = mn_pnode_len(n);
	uint64_t callers = 0, v;

	if (mn_pnode_kind(n) != MN_PNODE_SEQ || len < 1 || len > 2)
		return mn_pnode_errorf(prof, n, err, errlen, "field 'context': expected a list of "
				       "one or two call sites");
	for (size_t i = 0; i < len; i++) {
		if (mn_pnode_u64(mn_pnode_at(n, i), &v) || !v || v > UINT32_MAX)
			return mn_pnode_errorf(prof, mn_pnode_at(n, i), err, errlen, "field "
					       "'context': expected a site id");
		callers |= v << (32 * i);
	}
	if (!*key || mn_allocctx_is_context(t, *key))
		return mn_pnode_errorf(prof, n, err, errlen, "field 'context': %s", *key ?
				       "the site is already a context" : "site 0 has no context");
	*key = mn_allocctx_key(t, *key, callers);
	if (!mn_allocctx_is_context(t, *key))
		return -ENOMEM;
	return 0;
}

int mn_allocctx_put_chains(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	const struct mn_allocctx *t = table_of(f);
	const struct mn_vec *v = (const struct mn_vec *)((const char *)row + f->offset);
	const uint64_t *k = v->v;

	mn_prof_seq_begin_flow(p);
	for (uint32_t i = 0; i < v->n; i++) {
		uint32_t key = (uint32_t)k[i];
		uint64_t callers = mn_allocctx_callers(t, key);

		if (!callers) {
			mn_prof_site(p, key);
			continue;
		}
		mn_prof_seq_begin_flow(p);
		mn_prof_site(p, mn_allocctx_site(t, key));
		for (; callers; callers >>= 32)
			mn_prof_site(p, (uint32_t)callers);
		mn_prof_seq_end(p);
	}
	mn_prof_seq_end(p);
	return 0;
}

/* One element of a chain list: a site id, or [site, caller(, caller)]; its key in t. */
static int take_chain(struct mn_allocctx *t, const struct mn_pnode *n, uint64_t *key)
{
	uint64_t v, site, callers = 0;
	size_t len;

	if (mn_pnode_kind(n) != MN_PNODE_SEQ)
		return mn_pnode_u64(n, key) || *key > UINT32_MAX ? -EINVAL : 0;
	len = mn_pnode_len(n);
	if (len < 2 || len > 3 || mn_pnode_u64(mn_pnode_at(n, 0), &site) || !site ||
	    site > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 1; i < len; i++) {
		if (mn_pnode_u64(mn_pnode_at(n, i), &v) || !v || v > UINT32_MAX)
			return -EINVAL;
		callers |= v << (32 * (i - 1));
	}
	*key = mn_allocctx_key(t, (uint32_t)site, callers);
	return mn_allocctx_is_context(t, (uint32_t)*key) ? 0 : -ENOMEM;
}

int mn_allocctx_take_chains(const struct mn_field *f, void *row, const struct mn_profile *prof,
			    const struct mn_pnode *n, char *err, size_t errlen)
{
	struct mn_allocctx *t = (struct mn_allocctx *)table_of(f);
	struct mn_vec *v = (struct mn_vec *)((char *)row + f->offset);
	size_t len = mn_pnode_len(n);
	int rc;

	if (mn_pnode_kind(n) != MN_PNODE_SEQ)
		return mn_pnode_errorf(prof, n, err, errlen, "field '%s': expected a list", f->key);
	for (size_t i = 0; i < len; i++) {
		uint64_t *k = mn_vec_push(v, sizeof(*k));

		if (!k)
			return -ENOMEM;
		if ((rc = take_chain(t, mn_pnode_at(n, i), k)) == -EINVAL)
			return mn_pnode_errorf(prof, mn_pnode_at(n, i), err, errlen, "field '%s': "
					       "expected a site id or a list [site, caller] or "
					       "[site, caller, caller]", f->key);
		if (rc)
			return rc;
	}
	return 0;
}
