/*
 * LEAP's post-processors: dependence frequencies and strides from LMADs (derive.h).
 *
 * The dependence replay is the plain one: every captured point, group by group, in interpolated
 * time order through a heap of LMAD cursors, with a hash map from location to its last store.
 * Its cost is the captured points times log(LMADs of the group); the paper solves LMAD pairs
 * symbolically instead, which the last-writer rule (a later store hides an earlier one) makes a
 * search over every store LMAD anyway.
 *
 * The conflicts of each (load, store) and the tallies of an instruction's strides are reduction
 * maps (backend/map.h): a count and a sum.  The last store of a location is not: its key is three
 * words, and the replay overwrites and reads it in time order.
 */
#include <errno.h>
#include <stdlib.h>

#include "derive.h"
#include "map.h"

/* ---- Location -> last store: open addressing on (space, object, word) -------------------- */

/* space: the (group, run, thread) replayed, numbered from 1: runs of a merged profile and threads
 * of a run never meet. */
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

/* Which stream of which instruction: the replay's unit, sorted by group, run, thread. */
struct sref {
	uint32_t group, run, thread;
	uint32_t insn, stream;
};

static int by_group(const void *a, const void *b)
{
	const struct sref *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
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

/* Replays the streams refs[0..n) (one group of one run and thread, numbered space) into pairs (a
 * count by (load, store)), counting the observed load executions in observed[site]. */
static int replay_group(const struct objrel_dinsn *insns, const struct sref *refs, size_t n,
			uint64_t space, unsigned shift, struct locmap *locs, struct mn_map *pairs,
			uint64_t *observed)
{
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
				mn_map_count_insert(pairs, mn_map_key(c->site, st));
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

/* objrel_derive_deps()'s rows, from the pairs' counts in key order: by load, then store. */
struct deps_out {
	struct objrel_dep *v;
	size_t n;
	const uint64_t *observed;
	const struct objrel_dinsn *const *by_site;
};

static int dep_row(void *arg, uint64_t key, const struct mn_map_value *v)
{
	struct deps_out *o = arg;
	uint32_t load = mn_map_key_hi(key);

	o->v[o->n++] = (struct objrel_dep){ .store = mn_map_key_lo(key), .load = load,
					    .conflicts = v->value, .observed = o->observed[load],
					    .load_accesses = o->by_site[load]->accesses,
					    .load_unattributed = o->by_site[load]->unattributed };
	return 0;
}

int objrel_derive_deps(const struct objrel_dinsn *insns, size_t n, unsigned granule_shift,
		       struct objrel_dep **out, size_t *nout)
{
	struct locmap locs = { 0 };
	struct mn_map *pairs = NULL;
	struct sref *refs = NULL;
	struct deps_out d = { 0 };
	size_t nrefs = 0;
	uint64_t *observed = NULL;
	const struct objrel_dinsn **by_site = NULL;
	uint32_t max_site = 0;
	int err;

	for (size_t i = 0; i < n; i++) {
		nrefs += insns[i].n;
		if (insns[i].site > max_site)
			max_site = insns[i].site;
	}
	/* Batched on this thread: the replay inserts a pair per observed load. */
	err = mn_map_create(&pairs, MN_MAP_COUNT, 0, 0, 4096);
	refs = calloc(nrefs ? nrefs : 1, sizeof(*refs));
	observed = calloc((size_t)max_site + 1, sizeof(*observed));
	by_site = calloc((size_t)max_site + 1, sizeof(*by_site));
	if (err || !refs || !observed || !by_site || loc_grow(&locs)) {
		err = -ENOMEM;
		goto out;
	}
	nrefs = 0;
	for (size_t i = 0; i < n; i++) {
		by_site[insns[i].site] = &insns[i];
		for (size_t j = 0; j < insns[i].n; j++)
			refs[nrefs++] = (struct sref){ insns[i].streams[j].group,
						       insns[i].streams[j].run,
						       insns[i].streams[j].thread, (uint32_t)i,
						       (uint32_t)j };
	}
	qsort(refs, nrefs, sizeof(*refs), by_group);
	for (size_t i = 0, j, space = 1; i < nrefs && !err; i = j, space++) {
		for (j = i + 1; j < nrefs && refs[j].group == refs[i].group &&
			    refs[j].run == refs[i].run && refs[j].thread == refs[i].thread; j++)
			;
		err = replay_group(insns, refs + i, j - i, space, granule_shift, &locs, pairs,
				   observed);
	}
	d = (struct deps_out){ NULL, 0, observed, by_site };
	if (!err && mn_map_lost(pairs))
		err = -ENOMEM;
	if (!err) {
		d.v = calloc(mn_map_size(pairs) ? mn_map_size(pairs) : 1, sizeof(*d.v));
		err = d.v ? mn_map_foreach(pairs, dep_row, &d) : -ENOMEM;
	}
out:
	free(refs);
	free(observed);
	free(by_site);
	free(locs.v);
	mn_map_destroy(pairs);
	if (err) {
		free(d.v);
		d.v = NULL;
		d.n = 0;
	}
	*out = d.v;
	*nout = d.n;
	return err;
}

/* ---- Strides -------------------------------------------------------------------------------- */

/* The most frequent stride of a tally (the smaller of equal counts), as the map's foreach sees
 * them: strides are signed, keys not, so the tie-break compares them itself. */
struct best {
	bool found;
	int64_t stride;
	uint64_t count;
};

static int best_stride(void *arg, uint64_t key, const struct mn_map_value *v)
{
	struct best *b = arg;
	int64_t stride = (int64_t)key;

	if (!b->found || v->value > b->count || (v->value == b->count && stride < b->stride))
		*b = (struct best){ true, stride, v->value };
	return 0;
}

/*
 * Tallies in t (a sum by stride) the strides of instruction in, and returns how many points it
 * captured.  A map per instruction: map.h has no way to empty one.
 */
static uint64_t tally_strides(struct mn_map *t, const struct objrel_dinsn *in)
{
	uint64_t captured = 0;

	for (size_t s = 0; s < in->n; s++) {
		const struct objrel_dstream *st = &in->streams[s];

		for (size_t j = 0; j < st->n; j++) {
			const struct objrel_lmad *l = &st->lmads[j], *p = j ? l - 1 : NULL;
			uint64_t p_obj, p_off;

			captured += l->count;
			if (l->count > 1 && !l->stride[0] && l->stride[1])
				mn_map_insert(t, (uint64_t)l->stride[1], l->count - 1);
			if (!p)
				continue;
			p_obj = p->start[0] + (uint64_t)p->stride[0] * (p->count - 1);
			p_off = p->start[1] + (uint64_t)p->stride[1] * (p->count - 1);
			if (p_obj == l->start[0] && l->start[1] != p_off)
				mn_map_insert(t, l->start[1] - p_off, 1);
		}
	}
	return captured;
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
	size_t nrows = 0;
	int err = rows ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && !err; i++) {
		const struct objrel_dinsn *in = &insns[i];
		struct mn_map *t = NULL;
		struct best b = { 0 };
		uint64_t captured;

		err = mn_map_create(&t, MN_MAP_SUM, 0, 0, 0);
		if (err)
			break;
		captured = tally_strides(t, in);
		err = mn_map_foreach(t, best_stride, &b);
		if (!err && mn_map_lost(t))
			err = -ENOMEM;
		mn_map_destroy(t);
		if (!err && b.found)
			rows[nrows++] = (struct objrel_stride){ in->site, b.stride, b.count, captured,
								in->accesses, in->unattributed };
	}
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
