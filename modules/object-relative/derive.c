/*
 * LEAP's post-processors: dependence frequencies and strides from LMADs (derive.h).
 *
 * The dependence replay is the plain one: every captured point, group by group, in interpolated
 * time order through a heap of LMAD cursors, with a hash map from location to its last store.
 * Its cost is the captured points times log(LMADs of the group); the paper solves LMAD pairs
 * symbolically instead, which the last-writer rule (a later store hides an earlier one) makes a
 * search over every store LMAD anyway.
 */
#include <errno.h>
#include <stdlib.h>

#include "derive.h"

/* ---- Location -> last store: open addressing on (space, object, word) -------------------- */

/* space: the group and the run, (run << 32 | group): runs of a merged profile never meet. */
struct loc {
	uint64_t object, word;
	uint64_t space;
	uint32_t store;          /* 0: empty slot (sites start at 1) */
};

struct locmap {
	struct loc *v;
	size_t n, cap;           /* cap: a power of two */
};

static size_t loc_hash(uint64_t space, uint64_t object, uint64_t word, size_t mask)
{
	uint64_t h = ((space * 0xc2b2ae3d27d4eb4fu) ^ object) * 0x9e3779b97f4a7c15u ^ word;

	return (size_t)(h * 0xff51afd7ed558ccdu >> 17) & mask;
}

static struct loc *loc_slot(struct loc *v, size_t cap, uint64_t space, uint64_t object,
			    uint64_t word)
{
	size_t i = loc_hash(space, object, word, cap - 1);

	while (v[i].store && (v[i].object != object || v[i].word != word || v[i].space != space))
		i = (i + 1) & (cap - 1);
	return &v[i];
}

static int loc_grow(struct locmap *m)
{
	size_t cap = m->cap ? 2 * m->cap : 1024;
	struct loc *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->v[i].store)
			*loc_slot(v, cap, m->v[i].space, m->v[i].object, m->v[i].word) = m->v[i];
	free(m->v);
	m->v = v;
	m->cap = cap;
	return 0;
}

static int loc_store(struct locmap *m, uint64_t space, uint64_t object, uint64_t word,
		     uint32_t store)
{
	struct loc *l;

	if (2 * (m->n + 1) > m->cap && loc_grow(m))
		return -ENOMEM;
	l = loc_slot(m->v, m->cap, space, object, word);
	if (!l->store) {
		l->space = space;
		l->object = object;
		l->word = word;
		m->n++;
	}
	l->store = store;
	return 0;
}

static uint32_t loc_last_store(const struct locmap *m, uint64_t space, uint64_t object,
			       uint64_t word)
{
	return m->cap ? loc_slot(m->v, m->cap, space, object, word)->store : 0;
}

/* ---- (store, load) -> conflicts ------------------------------------------------------------- */

struct pair {
	uint64_t key;            /* store << 32 | load, + 1; 0: empty */
	uint64_t count;
};

struct pairmap {
	struct pair *v;
	size_t n, cap;
};

static struct pair *pair_slot(struct pair *v, size_t cap, uint64_t key)
{
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15u >> 20) & (cap - 1);

	while (v[i].key && v[i].key != key)
		i = (i + 1) & (cap - 1);
	return &v[i];
}

static int pair_add(struct pairmap *m, uint32_t store, uint32_t load)
{
	uint64_t key = ((uint64_t)store << 32 | load) + 1;
	struct pair *p;

	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		struct pair *v = calloc(cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->v[i].key)
				*pair_slot(v, cap, m->v[i].key) = m->v[i];
		free(m->v);
		m->v = v;
		m->cap = cap;
	}
	p = pair_slot(m->v, m->cap, key);
	if (!p->key) {
		p->key = key;
		m->n++;
	}
	p->count++;
	return 0;
}

/* ---- The replay ----------------------------------------------------------------------------- */

/* One LMAD being replayed: its next point k and that point's time. */
struct cursor {
	const struct objrel_lmad *l;
	uint64_t k, time;
	uint32_t site;
	bool store;
	uint32_t order;          /* ties in time go in this order */
};

static uint64_t point_time(const struct objrel_lmad *l, uint64_t k)
{
	if (l->count < 2)
		return l->first;
	return l->first + (uint64_t)((unsigned __int128)(l->last - l->first) * k / (l->count - 1));
}

static bool before(const struct cursor *a, const struct cursor *b)
{
	return a->time < b->time || (a->time == b->time && a->order < b->order);
}

static void sift_down(struct cursor *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct cursor t;

		if (c >= n)
			return;
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], &h[i]))
			return;
		t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

/* Which stream of which instruction: the replay's unit of gathering, sorted by group, run. */
struct sref {
	uint32_t group, run;
	uint32_t insn, stream;
};

static int by_group(const void *a, const void *b)
{
	const struct sref *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	if (x->insn != y->insn)
		return x->insn < y->insn ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* A full store stream: after `end` it captured nothing, but its points stayed in its bounds. */
struct cloud {
	uint64_t end;
	const struct objrel_dstream *s;
};

/* Whether the lattice min + k * gran <= max of one dimension meets [lo, hi]. */
static bool lattice_meets(uint64_t min, uint64_t max, uint64_t gran, uint64_t lo, uint64_t hi)
{
	uint64_t p = min;

	if (lo > min) {
		if (!gran)
			return false;
		p = min + (lo - min + gran - 1) / gran * gran;
	}
	return p <= hi && p <= max;
}

/* Whether some later point of a cloud at or before time t could be in (object, word). */
static bool clouded(const struct cloud *c, size_t n, uint64_t t, uint64_t object, uint64_t word,
		    unsigned shift)
{
	uint64_t lo = word << shift, hi = lo + ((uint64_t)1 << shift) - 1;

	for (size_t i = 0; i < n && c[i].end < t; i++) {
		const struct objrel_dstream *s = c[i].s;

		if (lattice_meets(s->min[0], s->max[0], s->gran[0], object, object) &&
		    lattice_meets(s->min[1], s->max[1], s->gran[1], lo, hi))
			return true;
	}
	return false;
}

static int by_end(const void *a, const void *b)
{
	uint64_t x = ((const struct cloud *)a)->end, y = ((const struct cloud *)b)->end;

	return x < y ? -1 : x > y;
}

/* Replays the streams refs[0..n) (one group of one run) into pairs, counting the observed load
 * executions in observed[site]. */
static int replay_group(const struct objrel_dinsn *insns, const struct sref *refs, size_t n,
			unsigned shift, struct locmap *locs, struct pairmap *pairs,
			uint64_t *observed)
{
	uint64_t space = (uint64_t)refs[0].run << 32 | refs[0].group;
	size_t nc = 0, cap = 0, nclouds = 0;
	struct cursor *h = NULL;
	struct cloud *clouds = calloc(n ? n : 1, sizeof(*clouds));
	int err = 0;

	if (!clouds)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct objrel_dstream *s = &insns[refs[i].insn].streams[refs[i].stream];

		if (insns[refs[i].insn].store && s->full)
			clouds[nclouds++] = (struct cloud){ s->n ? s->lmads[s->n - 1].last : 0, s };
	}
	qsort(clouds, nclouds, sizeof(*clouds), by_end);
	for (size_t i = 0; i < n; i++) {
		const struct objrel_dinsn *in = &insns[refs[i].insn];
		const struct objrel_dstream *s = &in->streams[refs[i].stream];

		for (size_t j = 0; j < s->n; j++) {
			if (!s->lmads[j].count)
				continue;
			if (nc == cap) {
				struct cursor *v;

				cap = cap ? 2 * cap : 64;
				v = realloc(h, cap * sizeof(*v));
				if (!v) {
					free(h);
					free(clouds);
					return -ENOMEM;
				}
				h = v;
			}
			h[nc] = (struct cursor){ .l = &s->lmads[j], .time = s->lmads[j].first,
						 .site = in->site, .store = in->store,
						 .order = (uint32_t)nc };
			nc++;
		}
	}
	for (size_t i = nc / 2; i-- > 0;)
		sift_down(h, nc, i);
	while (nc && !err) {
		struct cursor *c = &h[0];
		const struct objrel_lmad *l = c->l;
		uint64_t object = l->start[0] + (uint64_t)l->stride[0] * c->k;
		uint64_t word = (l->start[1] + (uint64_t)l->stride[1] * c->k) >> shift;

		if (c->store) {
			err = loc_store(locs, space, object, word, c->site);
		} else if (!clouded(clouds, nclouds, c->time, object, word, shift)) {
			uint32_t st = loc_last_store(locs, space, object, word);

			observed[c->site]++;
			if (st)
				err = pair_add(pairs, st, c->site);
		}
		if (++c->k == l->count)
			h[0] = h[--nc];
		else
			c->time = point_time(l, c->k);
		sift_down(h, nc, 0);
	}
	free(h);
	free(clouds);
	return err;
}

static int by_load_store(const void *a, const void *b)
{
	const struct objrel_dep *x = a, *y = b;

	if (x->load != y->load)
		return x->load < y->load ? -1 : 1;
	return x->store < y->store ? -1 : x->store > y->store;
}

int objrel_derive_deps(const struct objrel_dinsn *insns, size_t n, unsigned granule_shift,
		       struct objrel_dep **out, size_t *nout)
{
	struct locmap locs = { 0 };
	struct pairmap pairs = { 0 };
	struct sref *refs = NULL;
	struct objrel_dep *deps = NULL;
	size_t nrefs = 0, nd = 0;
	uint64_t *observed = NULL;
	const struct objrel_dinsn **by_site = NULL;
	uint32_t max_site = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		nrefs += insns[i].n;
		if (insns[i].site > max_site)
			max_site = insns[i].site;
	}
	refs = calloc(nrefs ? nrefs : 1, sizeof(*refs));
	observed = calloc((size_t)max_site + 1, sizeof(*observed));
	by_site = calloc((size_t)max_site + 1, sizeof(*by_site));
	if (!refs || !observed || !by_site || loc_grow(&locs)) {
		err = -ENOMEM;
		goto out;
	}
	nrefs = 0;
	for (size_t i = 0; i < n; i++) {
		by_site[insns[i].site] = &insns[i];
		for (size_t j = 0; j < insns[i].n; j++)
			refs[nrefs++] = (struct sref){ insns[i].streams[j].group,
						       insns[i].streams[j].run, (uint32_t)i,
						       (uint32_t)j };
	}
	qsort(refs, nrefs, sizeof(*refs), by_group);
	for (size_t i = 0, j; i < nrefs && !err; i = j) {
		for (j = i + 1; j < nrefs && refs[j].group == refs[i].group &&
			    refs[j].run == refs[i].run; j++)
			;
		err = replay_group(insns, refs + i, j - i, granule_shift, &locs, &pairs, observed);
	}
	if (err)
		goto out;
	deps = calloc(pairs.n ? pairs.n : 1, sizeof(*deps));
	if (!deps) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < pairs.cap; i++) {
		uint64_t key = pairs.v[i].key - 1;
		uint32_t load = (uint32_t)key;

		if (!pairs.v[i].key)
			continue;
		deps[nd++] = (struct objrel_dep){ .store = (uint32_t)(key >> 32), .load = load,
						  .conflicts = pairs.v[i].count,
						  .observed = observed[load],
						  .load_accesses = by_site[load]->accesses,
						  .load_unattributed = by_site[load]->unattributed };
	}
	qsort(deps, nd, sizeof(*deps), by_load_store);
out:
	free(refs);
	free(observed);
	free(by_site);
	free(locs.v);
	free(pairs.v);
	if (err) {
		free(deps);
		deps = NULL;
		nd = 0;
	}
	*out = deps;
	*nout = nd;
	return err;
}

/* ---- Strides -------------------------------------------------------------------------------- */

struct tally {
	int64_t stride;
	uint64_t count;
};

/* Adds count to stride's tally in t[0..*n), growing it as needed. */
static int tally_add(struct tally **t, size_t *n, size_t *cap, int64_t stride, uint64_t count)
{
	for (size_t i = 0; i < *n; i++)
		if ((*t)[i].stride == stride) {
			(*t)[i].count += count;
			return 0;
		}
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct tally *v = realloc(*t, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		*t = v;
		*cap = c;
	}
	(*t)[(*n)++] = (struct tally){ stride, count };
	return 0;
}

static int by_site(const void *a, const void *b)
{
	uint32_t x = ((const struct objrel_stride *)a)->site;
	uint32_t y = ((const struct objrel_stride *)b)->site;

	return x < y ? -1 : x > y;
}

int objrel_derive_strides(const struct objrel_dinsn *insns, size_t n,
			  struct objrel_stride **out, size_t *nout)
{
	struct objrel_stride *rows = calloc(n ? n : 1, sizeof(*rows));
	struct tally *t = NULL;
	size_t nrows = 0, tcap = 0;
	int err = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		const struct objrel_dinsn *in = &insns[i];
		size_t nt = 0, best = SIZE_MAX;
		uint64_t captured = 0;

		for (size_t s = 0; s < in->n && !err; s++) {
			const struct objrel_dstream *st = &in->streams[s];

			for (size_t j = 0; j < st->n && !err; j++) {
				const struct objrel_lmad *l = &st->lmads[j], *p = j ? l - 1 : NULL;
				uint64_t p_obj, p_off;

				captured += l->count;
				if (l->count > 1 && !l->stride[0] && l->stride[1])
					err = tally_add(&t, &nt, &tcap, l->stride[1], l->count - 1);
				if (!p || err)
					continue;
				p_obj = p->start[0] + (uint64_t)p->stride[0] * (p->count - 1);
				p_off = p->start[1] + (uint64_t)p->stride[1] * (p->count - 1);
				if (p_obj == l->start[0] && l->start[1] != p_off)
					err = tally_add(&t, &nt, &tcap,
							(int64_t)(l->start[1] - p_off), 1);
			}
		}
		for (size_t k = 0; k < nt; k++)
			if (best == SIZE_MAX || t[k].count > t[best].count ||
			    (t[k].count == t[best].count && t[k].stride < t[best].stride))
				best = k;
		if (best != SIZE_MAX)
			rows[nrows++] = (struct objrel_stride){ in->site, t[best].stride,
								t[best].count, captured,
								in->accesses, in->unattributed };
	}
	free(t);
	if (err) {
		free(rows);
		*out = NULL;
		*nout = 0;
		return err;
	}
	qsort(rows, nrows, sizeof(*rows), by_site);
	*out = rows;
	*nout = nrows;
	return 0;
}
