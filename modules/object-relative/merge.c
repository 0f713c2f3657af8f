/*
 * object-relative: the end of a run, its key, and merge() (README "Merging").  A live run's state
 * is finalized once (live objects end, streams sorted); emit() and merge() then make it a state
 * of one run, keyed by a hash of everything its section holds, so that merged runs stay side by
 * side, streams apart, counts added.
 */
#define _GNU_SOURCE   /* qsort_r */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "objrel_internal.h"

/* Streams by group (site, then callers: mn_allocctx_cmp(), the same in every run), then run,
 * then thread: within an instruction a total order (one stream per triple). */
int objrel_by_group(const void *a, const void *b, void *r)
{
	const struct stream *x = a, *y = b;

	if (x->group != y->group)
		return mn_allocctx_cmp(&((const struct objrel *)r)->actx, x->group, y->group);
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/*
 * The end of the run, once: objects alive at the end live until the end (their lifetimes join
 * their groups'), and streams go in emit order.  Globals cannot be released, hence the flag.
 */
void objrel_finalize(struct objrel *r)
{
	struct insn *in;

	if (r->finalized)
		return;
	r->finalized = true;
	if (r->clocks)
		r->clocks[r->thread] = r->clock;
	for (uint32_t s = 1; s <= r->objs.n; s++)
		if (mn_obj(&r->objs, s)->live)
			objrel_end_live(r, s);
	r->clock += r->others;   /* events: every thread's */
	r->others = 0;
	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		for (uint32_t i = 0; !r->clocks && i < in->n; i++)
			in->s[i].thread = 0;   /* one thread: its streams say none */
		if (in->n > 1)   /* s is NULL while empty, and qsort's base must not be */
			qsort_r(in->s, in->n, sizeof(*in->s), objrel_by_group, r);
	}
}

/* ---- A run's key: FNV-1a 64 over its state, in emit order ---------------------------------- */

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3u;
	}
	return h;
}

/* A group's key as the profile writes it: its site, and its callers when a context (none at
 * MNEMO_ALLOC_DEPTH=1, whose keys stay those of profiles before contexts). */
static uint64_t fnv_group(uint64_t h, const struct objrel *r, uint32_t key)
{
	uint64_t callers = mn_allocctx_callers(&r->actx, key);

	h = fnv_u64(h, mn_allocctx_site(&r->actx, key));
	return callers ? fnv_u64(h, callers) : h;
}

/* Everything a live run's section holds but its key, so equal keys mean equal runs. */
static uint64_t run_key(const struct objrel *r)
{
	uint64_t h = 0xcbf29ce484222325u;
	const struct group *g;
	const struct insn *in;
	size_t n = 0;
	struct group **v = objrel_groups_sorted(r, &n);

	h = fnv_u64(h, r->clock);
	h = fnv_u64(h, r->objs.aliases);
	h = fnv_u64(h, r->nomem);
	h = fnv_u64(h, r->unknown_frees);
	for (size_t i = 0; i < n; i++) {   /* n is 0 without memory: the key leaves groups out */
		g = v[i];
		h = fnv_group(h, r, g->site);
		h = fnv_u64(h, g->kind);
		h = fnv_u64(h, g->objects);
		h = fnv_u64(h, g->bytes);
		h = fnv_u64(h, g->nlife);
		h = fnv_u64(h, g->life_min);
		h = fnv_u64(h, g->life_max);
		for (int b = 0; b < LIFE_BUCKETS; b++)
			h = fnv_u64(h, g->life_log2[b]);
	}
	free(v);
	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		h = fnv_u64(h, in->site);
		h = fnv_u64(h, in->store);
		h = fnv_u64(h, in->accesses);
		h = fnv_u64(h, in->unattributed);
		for (uint32_t i = 0; i < in->n; i++) {
			const struct objrel_lmads *l = &in->s[i].l;

			h = fnv_group(h, r, in->s[i].group);
			if (in->s[i].thread)
				h = fnv_u64(h, in->s[i].thread);
			h = fnv_u64(h, l->points);
			h = fnv_u64(h, l->captured);
			h = fnv_u64(h, l->full);
			h = fnv_u64(h, l->nomem);
			for (int d = 0; d < OBJREL_LMAD_DIMS; d++) {
				h = fnv_u64(h, l->min[d]);
				h = fnv_u64(h, l->max[d]);
				h = fnv_u64(h, l->gran[d]);
			}
			for (uint32_t k = 0; k < l->n; k++) {
				const struct objrel_lmad *m = &l->v[k];

				for (int d = 0; d < OBJREL_LMAD_DIMS; d++) {
					h = fnv_u64(h, m->start[d]);
					h = fnv_u64(h, (uint64_t)m->stride[d]);
				}
				h = fnv_u64(h, m->count);
				h = fnv_u64(h, m->first);
				h = fnv_u64(h, m->last);
			}
		}
	}
	return h;
}

/* A live run's state becomes a state of one run, with its key.  0 or -ENOMEM. */
int objrel_runs_materialize(struct objrel *r)
{
	if (r->nruns)
		return 0;
	objrel_finalize(r);
	r->runs = malloc(sizeof(*r->runs));
	if (!r->runs)
		return -ENOMEM;
	r->runs[0] = (struct run_id){ run_key(r), r->clock };
	r->nruns = 1;
	return 0;
}

/* ---- merge(): runs side by side, counts added (README "Merging") ---------------------------- */

struct run_ref {
	struct run_id id;
	uint32_t src, idx;       /* src 0: into's run idx, 1: from's */
};

static int by_run(const void *a, const void *b)
{
	const struct run_ref *x = a, *y = b;

	if (x->id.key != y->id.key)
		return x->id.key < y->id.key ? -1 : 1;
	if (x->id.events != y->id.events)
		return x->id.events < y->id.events ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * The union of both run lists, sorted: map[0][i] and map[1][i] are the new indices of into's and
 * from's run i.  Runs of equal key hold the same data (run_key()), so the tie-break by source,
 * the one thing that depends on the order of the folds, does not show in the output.
 */
static int merge_runs(struct objrel *into, struct objrel *from, uint32_t *map[2])
{
	uint32_t n = into->nruns + from->nruns;
	struct run_ref *v = calloc(n, sizeof(*v));
	struct run_id *runs = calloc(n, sizeof(*runs));

	map[0] = calloc(into->nruns, sizeof(*map[0]));
	map[1] = calloc(from->nruns, sizeof(*map[1]));
	if (!v || !runs || !map[0] || !map[1]) {
		free(v);
		free(runs);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < into->nruns; i++)
		v[i] = (struct run_ref){ into->runs[i], 0, i };
	for (uint32_t i = 0; i < from->nruns; i++)
		v[into->nruns + i] = (struct run_ref){ from->runs[i], 1, i };
	qsort(v, n, sizeof(*v), by_run);
	for (uint32_t i = 0; i < n; i++) {
		runs[i] = v[i].id;
		map[v[i].src][v[i].idx] = i;
	}
	free(v);
	free(into->runs);
	into->runs = runs;
	into->nruns = n;
	return 0;
}

static void merge_group(struct group *g, const struct group *f)
{
	if (!g->seen) {
		g->site = f->site;
		g->seen = true;
		g->kind = f->kind;
	} else if (f->kind < g->kind) {
		g->kind = f->kind;   /* a site has one kind; else the smaller, for commutativity */
	}
	g->objects += f->objects;
	g->bytes += f->bytes;
	if (f->nlife) {
		if (!g->nlife || f->life_min < g->life_min)
			g->life_min = f->life_min;
		if (!g->nlife || f->life_max > g->life_max)
			g->life_max = f->life_max;
	}
	g->nlife += f->nlife;
	for (int b = 0; b < LIFE_BUCKETS; b++)
		g->life_log2[b] += f->life_log2[b];
}

/* Moves from's streams to in, their runs renumbered by map, their groups made into's keys
 * (contexts are keyed per state, allocctx.h); 0 or -ENOMEM (nothing moved). */
static int merge_streams(struct objrel *into, const struct objrel *from, struct insn *in,
			 struct insn *f, const uint32_t *map)
{
	if (in->n + f->n > in->alloc) {
		uint32_t a = in->n + f->n;
		struct stream *s = realloc(in->s, (size_t)a * sizeof(*s));

		if (!s)
			return -ENOMEM;
		in->s = s;
		in->alloc = a;
	}
	for (uint32_t i = 0; i < f->n; i++) {
		in->s[in->n] = f->s[i];
		in->s[in->n].group = mn_allocctx_translate(&into->actx, &from->actx,
							   f->s[i].group);
		in->s[in->n++].run = map[f->s[i].run];
	}
	f->n = 0;   /* the LMAD arrays are in's now */
	return 0;
}

void objrel_merge(void *into_, void *from_)
{
	struct objrel *into = into_, *from = from_;
	uint32_t *map[2] = { NULL, NULL };
	struct group *g, *f;
	struct insn *in, *fi;
	uint32_t k;

	if (objrel_runs_materialize(into) || objrel_runs_materialize(from) ||
	    merge_runs(into, from, map)) {
		into->nomem++;
		goto out;
	}
	MN_SITEVEC_FOREACH(&into->insns, id, in)
		for (uint32_t i = 0; i < in->n; i++)
			in->s[i].run = map[0][in->s[i].run];
	MN_SITEVEC_FOREACH(&from->insns, id, fi) {
		in = mn_sitevec_get(&into->insns, (uint32_t)id);
		if (!in || merge_streams(into, from, in, fi, map[1])) {
			into->nomem++;
			continue;
		}
		in->site = fi->site;
		in->store = fi->store;
		in->accesses += fi->accesses;
		in->unattributed += fi->unattributed;
		if (in->n > 1)
			qsort_r(in->s, in->n, sizeof(*in->s), objrel_by_group, into);
	}
	MN_SITEVEC_FOREACH(&from->groups, id, f) {
		if (!f->seen)
			continue;
		k = mn_allocctx_translate(&into->actx, &from->actx, (uint32_t)id);
		g = mn_sitevec_get(&into->groups, k);
		if (!g) {
			into->nomem++;
			continue;
		}
		merge_group(g, f);
		g->site = k;
	}
	into->clock += from->clock;
	into->nomem += from->nomem;
	into->unknown_frees += from->unknown_frees;
	into->objs.aliases += from->objs.aliases;
	/* Lossless streams of two runs have no common order (README "Merging"): not complete. */
	if (into->ll)
		into->ll->broken = true;
out:
	free(map[0]);
	free(map[1]);
}
