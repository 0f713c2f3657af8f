/*
 * Loop nests over the context manager (loopnest.h): the clock, its resets, and the loop frames
 * kept in step with the context stack.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "loopnest.h"

void mn_loopnest_init(struct mn_loopnest *n, struct mn_ctx *ctx, uint32_t limit,
		      const struct mn_loopnest_hooks *hooks, void *arg, uint64_t *lost)
{
	n->ctx = ctx;
	n->limit = limit;
	n->hooks = hooks;
	n->arg = arg;
	n->lost = lost;
}

/* The 32-bit clock would wrap: the caller forgets its clocks, all of the past is now clock 0. */
void mn_loopnest_reset(struct mn_loopnest *n)
{
	n->hooks->reset(n->arg);
	for (unsigned i = 0; i < n->n; i++) {
		n->loops[i].inv = 0;
		mn_starts_reset(&n->loops[i].starts, n->loops[i].starts.n);
	}
	n->clock = 0;
}

/* Drops the frames whose context frames have closed, each closing first. */
static void sync(struct mn_loopnest *n)
{
	unsigned depth = mn_ctx_depth(n->ctx);

	while (n->n) {
		struct mn_loop *l = &n->loops[n->n - 1];

		if (l->frame < depth && mn_ctx_frame_serial(n->ctx, l->frame) == l->serial)
			return;
		n->hooks->close(n->arg, n->n - 1);
		n->in_target -= l->target;
		n->n--;
	}
}

/* Site is a loop's (via()). */
static void mark_loop(struct mn_loopnest *n, uint32_t site)
{
	if (site / 64 >= n->loop_words) {
		uint32_t words = 2 * (site / 64 + 1);
		uint64_t *v = realloc(n->loop_sites, words * sizeof(*v));

		if (!v) {
			++*n->lost;
			return;
		}
		memset(v + n->loop_words, 0, (words - n->loop_words) * sizeof(*v));
		n->loop_sites = v;
		n->loop_words = words;
	}
	n->loop_sites[site / 64] |= UINT64_C(1) << site % 64;
}

void mn_loopnest_invoke(struct mn_loopnest *n, uint32_t site)
{
	mark_loop(n, site);
	mn_loopnest_tick(n);
	mn_ctx_push(n->ctx, site, MN_CTX_LOOP);
	sync(n);
}

/* A frame for the context frame on top, of loop site; NULL if that frame could not be stored. */
struct mn_loop *mn_loopnest_open(struct mn_loopnest *n, uint32_t site, bool target)
{
	unsigned top = mn_ctx_depth(n->ctx) - 1;
	struct mn_loop *l;

	if (!mn_ctx_depth(n->ctx) || mn_ctx_frame_site(n->ctx, top) != site ||
	    mn_loopnest_top(n, site))
		return NULL;
	if (n->n == n->cap) {
		unsigned cap = n->cap ? 2 * n->cap : 16;
		struct mn_loop *v = realloc(n->loops, cap * sizeof(*v));

		if (!v) {
			++*n->lost;
			return NULL;
		}
		memset(v + n->cap, 0, (cap - n->cap) * sizeof(*v));
		n->loops = v;
		n->cap = cap;
	}
	l = &n->loops[n->n++];
	l->site = site;
	l->fid = mn_ctx_frame_id(n->ctx, top);
	l->frame = top;
	l->serial = mn_ctx_frame_serial(n->ctx, top);
	l->inv = n->clock;
	l->target = target;
	l->mkey = l->fid | (uint64_t)site << 32;
	l->mhash = l->fid * 0xc2b2ae3du ^ site * 0x27d4eb2fu;
	l->dup = n->n > 1 && n->loops[n->n - 2].dup;
	for (unsigned i = 0; i + 1 < n->n && !l->dup; i++)
		l->dup = n->loops[i].site == site;
	n->in_target += l->target;
	mn_starts_reset(&l->starts, 0);
	return l;
}

void mn_loopnest_iter(struct mn_loopnest *n, uint32_t site)
{
	struct mn_loop *l;

	mn_loopnest_tick(n);
	mn_ctx_iter(n->ctx, site);
	sync(n);
	l = mn_loopnest_top(n, site);
	if (l && !mn_starts_add(&l->starts, n->clock))
		++*n->lost;
}

/* The caller checked that the clock does not pass its limit. */
void mn_loopnest_iter_n(struct mn_loopnest *n, struct mn_loop *l, uint64_t T)
{
	uint32_t inv = n->clock;

	n->clock += (uint32_t)T;
	mn_ctx_iter_n(n->ctx, l->site, T);
	if (!mn_starts_add_run(&l->starts, inv + 1, T))
		++*n->lost;
}

void mn_loopnest_exit(struct mn_loopnest *n, uint32_t site)
{
	mn_ctx_pop(n->ctx, site);
	sync(n);
}

/*
 * Sources ran in the loop's current invocation, so fid is on their path; frames the ids leave
 * out (context.h) are never met.
 */
static uint32_t via(struct mn_loopnest *n, uint32_t ctx, uint32_t fid)
{
	uint32_t v = 0;

	for (; ctx != fid; ctx = mn_ctx_id_parent(n->ctx, ctx)) {
		uint32_t site = mn_ctx_id_site(n->ctx, ctx);

		if (!ctx)
			return 0;   /* fid is not on the path: only after a failed intern */
		if (site / 64 >= n->loop_words || !(n->loop_sites[site / 64] >> site % 64 & 1))
			v = site;
	}
	return v;
}

/*
 * A recursion makes every level's accesses new contexts, and each would walk out to the frame,
 * as deep as the recursion.  An answer never changes: the ids name fixed paths, and every loop on
 * a path was invoked, so known as a loop, before the path existed.
 */
uint32_t mn_loopnest_via(struct mn_loopnest *n, uint32_t ctx, uint32_t fid)
{
	struct mn_loopnest_via *v =
		&n->vias[(ctx * 0x9e3779b1u ^ fid * 0x85ebca77u) >> (32 - MN_LOOPNEST_VIA_BITS)];

	if (v->ctx != ctx || v->fid != fid || !v->set)
		*v = (struct mn_loopnest_via){ ctx, fid, via(n, ctx, fid), true };
	return v->via;
}

int mn_loopnest_named(const struct mn_run *run, const char *want,
		      int (*mark)(void *arg, uint32_t site), void *arg)
{
	const char *colon = strrchr(want, ':');
	char *end;
	unsigned long line = strtoul(colon ? colon + 1 : want, &end, 10);
	size_t flen = colon ? (size_t)(colon - want) : 0;
	int found = 0, err;

	for (uint32_t id = 1; *want && !*end && id <= mn_run_site_count(run); id++) {
		const struct mn_run_site *rs = mn_run_site(run, id);
		size_t len = strlen(rs->file);

		if (strcmp(rs->kind, "loop") || (colon ? rs->line != line : id != line))
			continue;
		if (colon && (len < flen || memcmp(rs->file + len - flen, want, flen) ||
			      (len > flen && rs->file[len - flen - 1] != '/')))
			continue;
		if ((err = mark(arg, id)) < 0)
			return err;
		found++;
	}
	return found;
}

void mn_loopnest_close_all(struct mn_loopnest *n)
{
	for (unsigned i = n->n; i-- > 0;)
		n->hooks->close(n->arg, i);
}

int mn_loopnest_switch(struct mn_loopnest *n, struct mn_loopnest_stack *out,
		       struct mn_loopnest_stack *in)
{
	struct mn_loopnest_stack next = *in;
	int err = mn_ctx_switch(n->ctx, &out->ctx, &next.ctx);

	if (err)
		return err;
	out->loops = n->loops;
	out->n = n->n;
	out->cap = n->cap;
	out->in_target = n->in_target;
	n->loops = next.loops;
	n->n = next.n;
	n->cap = next.cap;
	n->in_target = next.in_target;
	*in = (struct mn_loopnest_stack){ 0 };
	return 0;
}

void mn_loopnest_stack_reset(struct mn_loopnest_stack *s)
{
	for (unsigned i = 0; i < s->n; i++) {
		s->loops[i].inv = 0;
		mn_starts_reset(&s->loops[i].starts, s->loops[i].starts.n);
	}
}

void mn_loopnest_stack_free(struct mn_loopnest_stack *s)
{
	for (unsigned i = 0; i < s->cap; i++)
		mn_starts_free(&s->loops[i].starts);
	free(s->loops);
	mn_ctx_stack_free(&s->ctx);
	*s = (struct mn_loopnest_stack){ 0 };
}

/* Pops the context stack's frames from the top down, then drops the loop frames (sync()). */
void mn_loopnest_end(struct mn_loopnest *n)
{
	while (mn_ctx_depth(n->ctx))
		mn_ctx_pop(n->ctx, mn_ctx_frame_site(n->ctx, mn_ctx_depth(n->ctx) - 1));
	sync(n);
}

void mn_loopnest_free(struct mn_loopnest *n)
{
	for (unsigned i = 0; i < n->cap; i++)
		mn_starts_free(&n->loops[i].starts);
	free(n->loops);
	free(n->loop_sites);
	n->loops = NULL;
	n->loop_sites = NULL;
	n->loop_words = 0;
	n->n = n->cap = n->in_target = 0;
}
