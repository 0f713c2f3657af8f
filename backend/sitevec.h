/*
 * Per-site records for modules: a flat array indexed by site id, whose records (one fixed size per
 * vector) are allocated, zeroed, when a site is first seen.  Site ids are dense from 1
 * (runtime/abi.h), so the array is sized from the site table (mn_run_site_count()) and grows
 * for ids beyond it; code that never runs costs one pointer per site.
 *
 *	struct mn_sitevec sites;                       // in the module state, zeroed
 *	mn_sitevec_init(&sites, sizeof(struct site), mn_run_site_count(run));
 *	struct site *s = mn_sitevec_get(&sites, id);  // in a handler; NULL only without memory
 *	MN_SITEVEC_FOREACH(&sites, id, s) ...         // in emit, by increasing id
 *
 * Not thread-safe: one vector per worker, merged with mn_sitevec_take().
 */
#ifndef MNEMO_SITEVEC_H
#define MNEMO_SITEVEC_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct mn_sitevec {
	void **rec;          /* by site id; NULL until the site is first seen */
	size_t n;            /* length of rec[] */
	size_t rec_size;     /* bytes per record */
};

/* Grows rec[] to hold id; 0 or -ENOMEM (then the vector is unchanged). */
static inline int mn_sitevec_reserve(struct mn_sitevec *v, uint32_t id)
{
	size_t n = v->n ? v->n : 1024;
	void **r;

	if (id < v->n)
		return 0;
	while (n <= id)
		n *= 2;
	r = (void **)realloc(v->rec, n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	memset(r + v->n, 0, (n - v->n) * sizeof(*r));
	v->rec = r;
	v->n = n;
	return 0;
}

/* Sets up an empty vector of rec_size-byte records with room for ids 0..nsites.  0 or -ENOMEM. */
static inline int mn_sitevec_init(struct mn_sitevec *v, size_t rec_size, uint32_t nsites)
{
	v->rec = NULL;
	v->n = 0;
	v->rec_size = rec_size;
	return mn_sitevec_reserve(v, nsites);
}

/* The record of site id, allocated and zeroed on first use; NULL when out of memory. */
static inline void *mn_sitevec_get(struct mn_sitevec *v, uint32_t id)
{
	if (__builtin_expect(id < v->n && v->rec[id] != NULL, 1))
		return v->rec[id];
	if (mn_sitevec_reserve(v, id))
		return NULL;
	v->rec[id] = calloc(1, v->rec_size);
	return v->rec[id];
}

/* The record of site id, or NULL when the site was never seen. */
static inline void *mn_sitevec_find(const struct mn_sitevec *v, uint32_t id)
{
	return id < v->n ? v->rec[id] : NULL;
}

/*
 * Moves every record of `from` whose site `into` lacks over to `into` (the merge of site-sharded
 * workers, whose sites are disjoint).  Records it cannot move (the site is in both, or memory ran
 * out) stay in `from`; returns how many.
 */
static inline size_t mn_sitevec_take(struct mn_sitevec *into, struct mn_sitevec *from)
{
	size_t left = 0;

	for (size_t id = 0; id < from->n; id++) {
		if (!from->rec[id])
			continue;
		if (id > UINT32_MAX || mn_sitevec_reserve(into, (uint32_t)id) || into->rec[id]) {
			left++;
			continue;
		}
		into->rec[id] = from->rec[id];
		from->rec[id] = NULL;
	}
	return left;
}

/* Frees every record and the array; the vector is then empty. */
static inline void mn_sitevec_free(struct mn_sitevec *v)
{
	for (size_t id = 0; id < v->n; id++)
		free(v->rec[id]);
	free(v->rec);
	v->rec = NULL;
	v->n = 0;
}

/* Visits the records by increasing site id: `id` (size_t) and `r` (a record pointer) are set. */
#define MN_SITEVEC_FOREACH(v, id, r)                                                             \
	for (size_t id = 0; id < (v)->n; id++)                                                   \
		if (((r) = (v)->rec[id]) != NULL)

#endif /* MNEMO_SITEVEC_H */
