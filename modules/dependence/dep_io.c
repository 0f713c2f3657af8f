/*
 * The dependence module's section (README, "Profile"): restore (`mnemo merge`), merge and emit.  To be
 * generated from a declared schema (backend's section schemas); by hand until then.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxrank.h"
#include "dep.h"

static const char *const kind_name[] = { "raw", "war", "waw" };

/* ---- Restore (`mnemo merge`) ----------------------------------------------------------------- */

/* A context list of a row (`src_context`, `dst_context`): its sites interned into an id. */
static int restore_ctx(struct dep *d, const struct mn_profile *prof, const struct mn_pnode *row,
		       const char *key, uint32_t *id, char *err, size_t errlen)
{
	const struct mn_pnode *seq = mn_pfield_node(prof, row, key, MN_PNODE_SEQ, err, errlen);
	uint32_t t = 0;

	if (!seq)
		return -EINVAL;
	if (mn_pnode_len(seq) > CTX_DEPTH)
		return mn_pnode_errorf(prof, seq, err, errlen, "field '%s': more than %d frames",
				       key, CTX_DEPTH);
	for (size_t i = 0; i < mn_pnode_len(seq); i++) {
		uint64_t site;

		if (mn_pnode_u64(mn_pnode_at(seq, i), &site) || !site || site > UINT32_MAX)
			return mn_pnode_errorf(prof, mn_pnode_at(seq, i), err, errlen,
					       "field '%s': expected a site id", key);
		t = mn_ctx_intern(d->ctx, t, (uint32_t)site);
	}
	*id = t;
	return 0;
}

/* mn_pfield_*() for a field the schema requires: a missing one is malformed too. */
#define REQUIRED(call) ({ int r_ = (call); r_ == -ENOENT ? -EINVAL : r_; })

static int restore_row(struct dep *d, const struct mn_profile *prof, const struct mn_pnode *row,
		       char *err, size_t errlen)
{
	struct dep_key k = { 0 };
	struct mn_row *e;
	const char *kind;
	uint64_t count, dmin = UINT64_MAX, dmax = 0;
	bool carried;
	int ret, r;

	if ((ret = REQUIRED(mn_pfield_u32(prof, row, "loop", &k.loop, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_str(prof, row, "kind", &kind, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u32(prof, row, "src", &k.src, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u32(prof, row, "dst", &k.dst, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_bool(prof, row, "carried", &carried, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u64(prof, row, "count", &count, err, errlen))))
		return ret;
	for (r = 0; r < 3 && strcmp(kind, kind_name[r]); r++)
		;
	if (r == 3)
		return mn_pnode_errorf(prof, mn_pnode_get(row, "kind"), err, errlen,
				       "field 'kind': expected raw, war or waw, found '%s'", kind);
	if (!count)
		return mn_pnode_errorf(prof, mn_pnode_get(row, "count"), err, errlen,
				       "field 'count': a row counts at least 1");
	k.kind = (uint8_t)r;
	k.carried = carried;
	if ((ret = mn_pfield_u32(prof, row, "src_via", &k.src_via, err, errlen)) && ret != -ENOENT)
		return ret;
	if ((ret = mn_pfield_u32(prof, row, "dst_via", &k.dst_via, err, errlen)) && ret != -ENOENT)
		return ret;
	if (carried &&
	    ((ret = REQUIRED(mn_pfield_u64(prof, row, "min_distance", &dmin, err, errlen))) ||
	     (ret = REQUIRED(mn_pfield_u64(prof, row, "max_distance", &dmax, err, errlen)))))
		return ret;
	if (d->context &&
	    ((ret = restore_ctx(d, prof, row, "src_context", &k.src_ctx, err, errlen)) ||
	     (ret = restore_ctx(d, prof, row, "dst_context", &k.dst_ctx, err, errlen))))
		return ret;
	if (!(e = rows_find(&d->deps, &k)))
		return -ENOMEM;
	e->count += count;   /* a row twice (only by hand) adds, as merge would */
	e->min = dmin < e->min ? dmin : e->min;
	e->max = dmax > e->max ? dmax : e->max;
	return 0;
}

/* The section back into a state fresh from dep_init(): the section's settings, not the env's. */
int dep_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *section,
		char *err, size_t errlen)
{
	struct dep *d = st;
	const struct mn_pnode *loops, *rows, *lost, *target;
	uint64_t gran;
	int ret;

	if ((ret = REQUIRED(mn_pfield_u64(prof, section, "granularity", &gran, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_bool(prof, section, "context", &d->context, err, errlen))))
		return ret;
	if (gran != 8)
		return mn_pnode_errorf(prof, mn_pnode_get(section, "granularity"), err, errlen,
				       "field 'granularity': expected 8, found %llu",
				       (unsigned long long)gran);
	for (uint32_t id = 0; id < d->sites.n; id++) {   /* MNEMO_DEP_LOOP of this process */
		struct site *s = mn_sitevec_find(&d->sites, id);

		if (s)
			s->target = false;
	}
	d->target_mode = false;
	target = mn_pnode_get(section, "target");
	if (target && !mn_pfield_node(prof, section, "target", MN_PNODE_SEQ, err, errlen))
		return -EINVAL;
	for (size_t i = 0; target && i < mn_pnode_len(target); i++) {
		uint64_t id;
		struct site *s;

		if (mn_pnode_u64(mn_pnode_at(target, i), &id) || !id || id > UINT32_MAX)
			return mn_pnode_errorf(prof, mn_pnode_at(target, i), err, errlen,
					       "field 'target': expected a loop site id");
		if (!(s = mn_sitevec_get(&d->sites, (uint32_t)id)))
			return -ENOMEM;
		s->target = true;
	}
	d->target_mode = target != NULL;

	if (!(loops = mn_pfield_node(prof, section, "loops", MN_PNODE_SEQ, err, errlen)) ||
	    !(rows = mn_pfield_node(prof, section, "dependences", MN_PNODE_SEQ, err, errlen)) ||
	    !(lost = mn_pfield_node(prof, section, "lost", MN_PNODE_MAP, err, errlen)))
		return -EINVAL;
	for (size_t i = 0; i < mn_pnode_len(loops); i++) {
		const struct mn_pnode *row = mn_pnode_at(loops, i);
		uint32_t id;
		uint64_t inv, iter;
		struct site *s;

		if ((ret = REQUIRED(mn_pfield_u32(prof, row, "loop", &id, err, errlen))) ||
		    (ret = REQUIRED(mn_pfield_u64(prof, row, "invocations", &inv, err, errlen))) ||
		    (ret = REQUIRED(mn_pfield_u64(prof, row, "iterations", &iter, err, errlen))))
			return ret;
		if (!id)
			return mn_pnode_errorf(prof, mn_pnode_get(row, "loop"), err, errlen,
					       "field 'loop': expected a loop site id");
		if (!(s = mn_sitevec_get(&d->sites, id)))
			return -ENOMEM;
		s->loop = true;
		s->invocations += inv;
		s->iterations += iter;
	}
	for (size_t i = 0; i < mn_pnode_len(rows); i++)
		if ((ret = restore_row(d, prof, mn_pnode_at(rows, i), err, errlen)))
			return ret;
	if ((ret = REQUIRED(mn_pfield_u64(prof, lost, "aliases", &d->aliases, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u64(prof, lost, "nomem", &d->nomem, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u64(prof, lost, "clipped", &d->clipped, err, errlen))) ||
	    (ret = REQUIRED(mn_pfield_u64(prof, lost, "clock_resets", &d->resets, err, errlen))))
		return ret;
	d->restored = true;
	return 0;
}

/* ---- Merge (workers, and restored runs) ---------------------------------------------------------- */

/* A row both workers counted for the same n accesses that span them: once each (rule 6). */
static void span_dup(void *arg, const uint64_t *k, uint64_t n)
{
	struct mn_row *e = mn_rows_get(&((struct dep *)arg)->deps, k);

	if (e && e->count > n)
		e->count -= n;
}

/*
 * Workers own disjoint words: their dependences add up, but for accesses that span workers,
 * which count a row once for all their words.  Loops and contexts: all saw the same.
 * A restored `from` is another run (`mnemo merge`, README "Merging"): its loop counts and clock
 * resets add too, and its context ids, its own, are interned anew in into's context manager.
 */
void dep_merge(void *into_, void *from_)
{
	struct dep *into = into_, *from = from_;
	const struct mn_row *f;

	dep_flush(into);
	dep_flush(from);
	into->aliases += from->aliases + (from->sh ? mn_shadow_aliases(from->sh) : 0);
	into->nomem += from->nomem;
	into->clipped += from->clipped;
	into->closed += from->closed;
	into->expanded += from->expanded;
	if (from->restored) {
		struct mn_ctx_stats cs;

		mn_ctx_stats(from->ctx, &cs);
		into->nomem += cs.nomem;
		into->resets += from->resets;
		into->target_mode |= from->target_mode;
		for (uint32_t id = 0; id < from->sites.n; id++) {
			const struct site *f = mn_sitevec_find(&from->sites, id);
			struct site *t;

			if (!f || !(f->loop || f->target || f->invocations || f->iterations))
				continue;
			if (!(t = mn_sitevec_get(&into->sites, id))) {
				into->nomem++;
				continue;
			}
			t->loop |= f->loop;
			t->target |= f->target;
			t->invocations += f->invocations;
			t->iterations += f->iterations;
		}
	}
	for (struct mn_rows_cursor c = { 0 }; (f = mn_rows_next(&from->deps, &c));) {
		struct dep_key k = key_of(f);
		struct mn_row *e;

		if (from->restored && from->context) {
			k.src_ctx = mn_ctx_translate(into->ctx, from->ctx, k.src_ctx);
			k.dst_ctx = mn_ctx_translate(into->ctx, from->ctx, k.dst_ctx);
		}
		e = rows_find(&into->deps, &k);
		if (!e) {
			into->nomem += f->count;
			continue;
		}
		e->count += f->count;
		e->min = f->min < e->min ? f->min : e->min;
		e->max = f->max > e->max ? f->max : e->max;
	}
	if (mn_spans_merge(&into->span_rows, &from->span_rows, span_dup, into))
		into->nomem++;
}

/* ---- Emit ------------------------------------------------------------------------------------ */

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

/* The rows' order (mn_rows_sorted()): loop, src, dst, kind, carried, src_via, dst_via, then the
 * contexts by rank[id] when rank is not NULL (ctx_ranks()), else by id. */
static int by_key(const void *a_, const void *b_, void *rank_)
{
	struct dep_key a = key_of(*(struct mn_row *const *)a_);
	struct dep_key b = key_of(*(struct mn_row *const *)b_);
	const uint32_t *rank = rank_;
	int c;

	if ((c = cmp_u32(a.loop, b.loop)) || (c = cmp_u32(a.src, b.src)) ||
	    (c = cmp_u32(a.dst, b.dst)) || (c = cmp_u32(a.kind, b.kind)) ||
	    (c = cmp_u32(a.carried, b.carried)) || (c = cmp_u32(a.src_via, b.src_via)) ||
	    (c = cmp_u32(a.dst_via, b.dst_via)))
		return c;
	if (rank && ((c = cmp_u32(rank[a.src_ctx], rank[b.src_ctx])) ||
		     (c = cmp_u32(rank[a.dst_ctx], rank[b.dst_ctx]))))
		return c;
	if ((c = cmp_u32(a.src_ctx, b.src_ctx)))
		return c;
	return cmp_u32(a.dst_ctx, b.dst_ctx);
}

/* The contexts the rows use, ranked by their sites (backend/ctxrank.h): a merged profile must not
 * depend on which run came first.  rank[id]; NULL without memory. */
static uint32_t *ctx_ranks(const struct dep *d)
{
	uint32_t nids = mn_ctx_id_count(d->ctx), *rank;
	uint8_t *used = calloc(nids ? nids : 1, 1);
	const struct mn_row *e;

	if (!used)
		return NULL;
	for (struct mn_rows_cursor c = { 0 }; (e = mn_rows_next(&d->deps, &c));) {
		struct dep_key k = key_of(e);

		if (k.src_ctx < nids && k.dst_ctx < nids)
			used[k.src_ctx] = used[k.dst_ctx] = 1;
	}
	rank = mn_ctx_ranks(d->ctx, used);
	free(used);
	return rank;
}

static void emit_via(struct mn_prof *p, const char *key, uint32_t via)
{
	if (via)
		mn_prof_kv_site(p, key, via);
}

static void emit_ctx(const struct dep *d, struct mn_prof *p, const char *key, uint32_t ctx)
{
	mn_prof_key(p, key);
	mn_ctx_emit(d->ctx, p, ctx);
}

int dep_emit(void *st, struct mn_prof *p)
{
	struct dep *d = st;
	uint32_t *rank;

	dep_flush(d);
	rank = d->context ? ctx_ranks(d) : NULL;
	struct mn_row **v = d->context && !rank ? NULL : mn_rows_sorted(&d->deps, by_key, rank);
	uint32_t nsites = (uint32_t)(d->sites.n ? d->sites.n - 1 : 0);
	struct mn_ctx_stats cs;

	free(rank);
	if (!v)
		return -ENOMEM;
	if (d->run && mn_run_verbose(d->run) && (d->closed || d->expanded))
		fprintf(stderr, "mnemo: dependence: %" PRIu64 " loop summaries in closed form, %"
			PRIu64 " expanded\n", d->closed, d->expanded);
	mn_ctx_stats(d->ctx, &cs);
	if (nsites < mn_run_site_count(d->run))
		nsites = mn_run_site_count(d->run);
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "granularity", 8);
	mn_prof_kv_bool(p, "context", d->context);
	if (d->target_mode) {
		mn_prof_key(p, "target");
		mn_prof_seq_begin_flow(p);
		for (uint32_t id = 1; id <= nsites; id++) {
			const struct site *s = mn_sitevec_find(&d->sites, id);

			if (s && s->target)
				mn_prof_site(p, id);
		}
		mn_prof_seq_end(p);
	}
	mn_prof_key(p, "loops");
	mn_prof_seq_begin(p);
	for (uint32_t id = 1; id <= nsites; id++) {
		const struct site *s = mn_sitevec_find(&d->sites, id);

		if (d->target_mode ? !(s && s->target) :
		    !(s && s->loop) && strcmp(mn_run_site_kind(d->run, id), "loop"))
			continue;
		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "loop", id);
		mn_prof_kv_u64(p, "invocations", s ? s->invocations : 0);
		mn_prof_kv_u64(p, "iterations", s ? s->iterations : 0);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	mn_prof_key(p, "dependences");
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < d->deps.n; i++) {
		const struct mn_row *e = v[i];
		struct dep_key k = key_of(e);

		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "loop", k.loop);
		mn_prof_kv_str(p, "kind", kind_name[k.kind]);
		mn_prof_kv_site(p, "src", k.src);
		emit_via(p, "src_via", k.src_via);
		mn_prof_kv_site(p, "dst", k.dst);
		emit_via(p, "dst_via", k.dst_via);
		mn_prof_kv_bool(p, "carried", k.carried);
		mn_prof_kv_u64(p, "count", e->count);
		if (k.carried) {
			mn_prof_kv_u64(p, "min_distance", e->min);
			mn_prof_kv_u64(p, "max_distance", e->max);
		}
		if (d->context) {
			emit_ctx(d, p, "src_context", k.src_ctx);
			emit_ctx(d, p, "dst_context", k.dst_ctx);
		}
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	mn_prof_key(p, "lost");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "aliases", d->aliases + (d->sh ? mn_shadow_aliases(d->sh) : 0));
	mn_prof_kv_u64(p, "nomem", d->nomem + cs.nomem);
	mn_prof_kv_u64(p, "clipped", d->clipped);
	mn_prof_kv_u64(p, "clock_resets", d->resets);
	mn_prof_map_end(p);
	mn_prof_map_end(p);
	free(v);
	return 0;
}

/* What the run tracked (README, "Merging"): profiles merge only with the same. */
