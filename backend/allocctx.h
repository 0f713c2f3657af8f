/*
 * Allocation contexts (runtime/abi.h, __mnemo_ctx_enter; events.yaml, heap_alloc's `context`):
 * an allocation site with its innermost instrumented callers, as one 32-bit group key that a
 * module keeps where it kept the allocation site.  A site without callers is its own key, so a
 * run at MNEMO_ALLOC_DEPTH=1, or an allocation no instrumented call reached, keys its group
 * exactly as the site did; a site with callers gets a key above every site id (base, base + 1,
 * ...), in the order this table first met it.
 *
 * Keys belong to one table: a profile never shows them, only the site and its callers
 * (`context: [caller, caller's caller]`, innermost first), and rows ordered by key compare them
 * with mn_allocctx_cmp(), the order of (site, callers) that does not depend on the run, the
 * thread interleaving or the worker count.  Not thread-safe: one table per module state.
 */
#ifndef MNEMO_ALLOCCTX_H
#define MNEMO_ALLOCCTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct mn_field;

struct mn_actx {
	uint32_t site;                  /* the allocation site */
	uint64_t callers;               /* innermost call site in bits 0..31, its caller's above */
};

struct mn_allocctx {
	uint32_t base;                  /* the first context key: the run's site count + 1 */
	uint32_t n, cap;                /* contexts in ctx[], its room */
	struct mn_actx *ctx;            /* by key - base */
	uint32_t *slot;                 /* open addressing: key - base + 1; 0 empty */
	uint32_t mask;                  /* slots - 1, a power of two minus one; 0: none yet */
	uint64_t nomem;                 /* contexts not interned (no memory): keyed by site alone */
};

/* An empty table for a run of site_count sites (mn_run_site_count()). */
void mn_allocctx_init(struct mn_allocctx *t, uint32_t site_count);
void mn_allocctx_fini(struct mn_allocctx *t);

/*
 * The key of site with callers (heap_alloc's `context`): site itself when callers or site is 0
 * (site 0, an allocation no instrumented call made, is one group whatever called it); else the
 * context's key, interned on first sight.  Without memory, or past 2^32 keys, site (counted in
 * nomem): the allocation is then grouped by its site, as without contexts.
 */
uint32_t mn_allocctx_key(struct mn_allocctx *t, uint32_t site, uint64_t callers);

static inline bool mn_allocctx_is_context(const struct mn_allocctx *t, uint32_t key)
{
	return key >= t->base && key - t->base < t->n;
}

/* The allocation site of key. */
static inline uint32_t mn_allocctx_site(const struct mn_allocctx *t, uint32_t key)
{
	return mn_allocctx_is_context(t, key) ? t->ctx[key - t->base].site : key;
}

/* The callers of key, innermost in bits 0..31; 0 for a site alone. */
static inline uint64_t mn_allocctx_callers(const struct mn_allocctx *t, uint32_t key)
{
	return mn_allocctx_is_context(t, key) ? t->ctx[key - t->base].callers : 0;
}

/*
 * Orders two keys of t by site, then by callers, innermost first, a site alone before its
 * contexts: <0, 0, >0.  The same in every run of the program, whatever the keys.
 */
int mn_allocctx_cmp(const struct mn_allocctx *t, uint32_t a, uint32_t b);

/*
 * The key in table `into` of key k of table `from` (mnemo merge, rds-shape's merge of runs):
 * interned in `into` when new.
 */
uint32_t mn_allocctx_translate(struct mn_allocctx *into, const struct mn_allocctx *from,
			       uint32_t k);

/*
 * Schema fields (schema.h) over a uint32_t key in a row, for a section whose top row (the
 * module's state) holds the struct mn_allocctx at offset .aux:
 *   MN_ALLOCCTX_SITE("alloc_site", T, member, table offset, reduce): the key's site
 *   MN_ALLOCCTX_CONTEXT("context", T, member, table offset): `context: [40, 77]`, written
 *	only for a context; restored after the site field, it makes the member the context's key
 *   mn_allocctx_put_chains / _take_chains: a LIST of keys (uint64_t) as `[2, [7, 40, 41]]`:
 *	a site alone as its id, a context as its chain, the site first
 */
int mn_allocctx_put_site(const struct mn_field *f, const void *row, struct mn_prof *p);
int mn_allocctx_put_context(const struct mn_field *f, const void *row, struct mn_prof *p);
bool mn_allocctx_when_context(const struct mn_field *f, const void *row);
int mn_allocctx_take_context(const struct mn_field *f, void *row, const struct mn_profile *prof,
			     const struct mn_pnode *n, char *err, size_t errlen);

#define MN_ALLOCCTX_SITE(key, T, member, table, reduce)                                      \
	MN_FIELD(key, MN_FT_SITE, offsetof(T, member), reduce, .aux = (table),               \
		 .put = mn_allocctx_put_site)
#define MN_ALLOCCTX_CONTEXT(key, T, member, table)                                           \
	MN_FIELD(key, MN_FT_SITE, offsetof(T, member), MN_R_NONE, .aux = (table),      \
		 .when = mn_allocctx_when_context, .put = mn_allocctx_put_context,           \
		 .take = mn_allocctx_take_context)

int mn_allocctx_put_chains(const struct mn_field *f, const void *row, struct mn_prof *p);
int mn_allocctx_take_chains(const struct mn_field *f, void *row, const struct mn_profile *prof,
			    const struct mn_pnode *n, char *err, size_t errlen);

/* `context: [40, 77]`, through mn_prof_site() so that the profile's `sites:` lists them. */
void mn_allocctx_emit(struct mn_prof *p, uint64_t callers);

#endif /* MNEMO_ALLOCCTX_H */
