/*
 * Loop nests over the context manager (context.h): a logical clock that counts loop events, and
 * one frame per live loop invocation on the context stack, outermost first, each with the clock at
 * its invoke and at each of its iteration starts (starts.h).  A clock read at some access then
 * says, for every loop around a later access, whether the first ran in the loop's current
 * invocation and how many iterations before.  Not thread-safe: one per worker.
 *
 *	mn_loopnest_init(&n, ctx, UINT32_MAX, &hooks, st, &lost);
 *	mn_loopnest_invoke(&n, site); mn_loopnest_open(&n, site, target);   // loop_invoke
 *	mn_loopnest_iter(&n, site); ... mn_loopnest_exit(&n, site);   // loop_iter, loop_exit
 *	i = mn_loopnest_holding(&n, clock);   // frames [0, i) were invoked at or before clock
 *	mn_loopnest_free(&n);
 *
 * The caller owns the context manager and pushes nothing itself: the nest's calls push and pop.
 * The caller's hooks (struct mn_loopnest_hooks) hear of clock resets and of frames that end.
 * Allocation failures are counted in *lost.
 */
#ifndef MNEMO_LOOPNEST_H
#define MNEMO_LOOPNEST_H

#include <stdbool.h>
#include <stdint.h>

#include "context.h"
#include "starts.h"

/* A live loop invocation: one per loop frame of the context stack. */
struct mn_loop {
	uint32_t site, fid;        /* the loop; the context id with its frame on top */
	unsigned frame;            /* its index in the context stack */
	uint64_t serial;           /* its invocation serial */
	uint32_t inv;              /* clock at its invoke */
	bool target;               /* the caller's mark (mn_loopnest_open()) */
	bool dup;                  /* some frame at or below it is of the same loop as another */
	uint64_t mkey;             /* fid | site << 32: its part of a memo key (nestrows.h) */
	uint32_t mhash;            /* its part of a memo slot's hash */
	struct mn_starts starts;   /* clocks at its iteration starts */
};

#define MN_LOOPNEST_VIA_BITS 12

struct mn_loopnest_via {
	uint32_t ctx, fid, via;
	bool set;
};

/* The caller's hooks, each called with the caller's arg. */
struct mn_loopnest_hooks {
	/* The 32-bit clock would wrap: it starts again at 0 after this call, which forgets every
	 * clock the caller keeps (the frames' own become 0). */
	void (*reset)(void *arg);
	/* Frame i is about to end (or mn_loopnest_close_all()): for what it owes. */
	void (*close)(void *arg, unsigned i);
};

struct mn_loopnest {
	struct mn_ctx *ctx;        /* the caller's context manager */
	uint32_t clock, limit;     /* the clock, reset when it would pass limit */
	const struct mn_loopnest_hooks *hooks;
	void *arg;
	uint64_t *lost;
	struct mn_loop *loops;     /* [n], and idle ones up to cap with their memory */
	unsigned n, cap;
	unsigned in_target;        /* target frames among loops[] */
	uint64_t *loop_sites;      /* a bit per site invoked as a loop: [loop_words] */
	uint32_t loop_words;
	struct mn_loopnest_via vias[1u << MN_LOOPNEST_VIA_BITS];
};

/* An empty nest over ctx, its clock reset when it would pass limit. */
void mn_loopnest_init(struct mn_loopnest *n, struct mn_ctx *ctx, uint32_t limit,
		      const struct mn_loopnest_hooks *hooks, void *arg, uint64_t *lost);

/* One tick of the clock (a loop event), reset first if it would pass the limit. */
void mn_loopnest_reset(struct mn_loopnest *n);
static inline void mn_loopnest_tick(struct mn_loopnest *n)
{
	if (__builtin_expect(n->clock >= n->limit, 0))
		mn_loopnest_reset(n);
	n->clock++;
}

/* loop_invoke: ticks and pushes the loop's frame on the context stack; then open() gives it a
 * loop frame (the caller may decide in between, and not open it). */
void mn_loopnest_invoke(struct mn_loopnest *n, uint32_t site);
struct mn_loop *mn_loopnest_open(struct mn_loopnest *n, uint32_t site, bool target);
/* loop_iter: ticks and starts an iteration of the top frame, if of site. */
void mn_loopnest_iter(struct mn_loopnest *n, uint32_t site);
/* T iterations of the top frame of site at once (a loop summary), clocks inv + 1 .. inv + T. */
void mn_loopnest_iter_n(struct mn_loopnest *n, struct mn_loop *l, uint64_t T);
/* loop_exit, func_exit (the frames closed end: close()), func_entry. */
void mn_loopnest_exit(struct mn_loopnest *n, uint32_t site);
static inline void mn_loopnest_func_entry(struct mn_loopnest *n, uint32_t site)
{
	mn_ctx_push(n->ctx, site, MN_CTX_FUNCTION);
}

/* The loop frame on top of the context stack, if its site is `site`. */
static inline struct mn_loop *mn_loopnest_top(struct mn_loopnest *n, uint32_t site)
{
	struct mn_loop *l = n->n ? &n->loops[n->n - 1] : NULL;

	return l && l->site == site && l->frame + 1 == mn_ctx_depth(n->ctx) ? l : NULL;
}

/* The frames whose invocation began at or before sclock: [0, i).  Invokes only grow outward in;
 * a deep stack (a recursion with loops) is searched, not walked. */
static inline unsigned mn_loopnest_holding(const struct mn_loopnest *n, uint32_t sclock)
{
	unsigned i = n->n, lo = 0;

	if (i > 8 && n->loops[i - 8].inv > sclock) {
		/* the first frame of [lo, lo + k) invoked after sclock */
		for (unsigned k = i - 8; k > 0;) {
			unsigned half = k / 2;

			if (n->loops[lo + half].inv <= sclock) {
				lo += half + 1;
				k -= half + 1;
			} else {
				k = half;
			}
		}
		return lo;
	}
	while (i > 0 && n->loops[i - 1].inv > sclock)
		i--;
	return i;
}

/* Walking from context ctx out to loop frame fid, the last function frame met (the one nearest
 * the loop), or 0: a site is a loop's once invoked.  Cached: an answer never changes. */
uint32_t mn_loopnest_via(struct mn_loopnest *n, uint32_t ctx, uint32_t fid);

struct mn_run;
/* The loop sites of run that want names: a loop site id, or file:line with the file as in the
 * site table or its last path components.  mark(arg, site) for each (a negative return stops,
 * and is returned); the number found. */
int mn_loopnest_named(const struct mn_run *run, const char *want,
		      int (*mark)(void *arg, uint32_t site), void *arg);

/*
 * Threads (issue 22): each program thread has its own loop frames and context stack (context.h,
 * mn_ctx_switch()); the clock, the via cache and the loop sites stay shared.  The caller keeps a
 * parked struct mn_loopnest_stack per thread and swaps on a thread switch: the frames' arrays
 * change hands, nothing is copied, and the hot paths read the nest as before.
 */
struct mn_loopnest_stack {
	struct mn_loop *loops;
	unsigned n, cap, in_target;
	struct mn_ctx_stack ctx;
};

/* Parks the current thread's frames and context stack in *out and makes *in's current, *in then
 * zeroed (all zero: a new thread, no frames).  0, or -ENOMEM and nothing changed. */
int mn_loopnest_switch(struct mn_loopnest *n, struct mn_loopnest_stack *out,
		       struct mn_loopnest_stack *in);
/* A clock reset for a parked thread's frames (as mn_loopnest_reset() does for the current's). */
void mn_loopnest_stack_reset(struct mn_loopnest_stack *s);
/* A parked stack's memory; zeroed. */
void mn_loopnest_stack_free(struct mn_loopnest_stack *s);
/* The current thread ended: every frame closes (close()), innermost first, and goes, and the
 * context stack empties. */
void mn_loopnest_end(struct mn_loopnest *n);

/* Every frame closes, innermost first (close()), and stays: before results are read. */
void mn_loopnest_close_all(struct mn_loopnest *n);
void mn_loopnest_free(struct mn_loopnest *n);

#endif /* MNEMO_LOOPNEST_H */
