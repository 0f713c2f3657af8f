/*
 * The context manager: the stack of functions and loops the profiled program is in, kept from the
 * context events (func_entry/func_exit, loop_invoke/loop_iter/loop_exit), and that stack encoded as
 * a compact 32-bit id, interned, so a module can store it in shadow memory or key a map with it and
 * decode it to a list of sites when it writes its profile (PROMPT 4.1, 5.3).
 *
 *	struct mn_ctx *ctx;                          // in the module state, one per worker
 *	mn_ctx_create(&ctx, 32);                     // in init(): ids cover the outer 32 frames
 *	mn_ctx_push(ctx, site, MN_CTX_FUNCTION);     // func_entry; MN_CTX_LOOP for loop_invoke
 *	mn_ctx_iter(ctx, site);                      // loop_iter
 *	mn_ctx_pop(ctx, site);                       // func_exit, loop_exit
 *	uint32_t id = mn_ctx_current(ctx);           // in load/store/alloc handlers
 *	mn_ctx_emit(ctx, p, id);                     // in emit(): [12, 40, 41], via mn_prof_site()
 *
 * Ids.  0 is the empty context (outside every function); every other id is one (parent id, site)
 * pair, so an id names a path from the root of the calling-context tree.  Ids are dense from 1, in
 * order of first appearance, and assigned eagerly at every push, whether or not any module ever
 * asks for them.  Hence the contract data-parallel workers rely on: two context managers fed the
 * same sequence of push, pop and iter calls (the driver gives context events to every worker)
 * hold the same stack, the same ids and the same invocation serials, so ids from one worker decode
 * in any other, merge needs no translation and profiles are deterministic.  The one exception is a
 * push that could not be interned for want of memory (mn_ctx_stats().nomem != 0): from then on
 * that worker's ids may differ from the others'.
 *
 * A site is one kind throughout (the pass numbers functions and loops from one counter), so the
 * intern key is (parent, site) and the kind is kept only in the stack frame.
 *
 * Depth limit.  The id encodes at most the outermost max_depth frames: a push deeper than that is
 * kept on the stack (its site, kind, iteration count and serial can be read, and pops match it)
 * but the id stays that of the deepest kept frame, and the push is counted as truncated.
 * Recursion gets no special treatment: each level of f -> f -> f is a new id, so a decoded context
 * is always the exact outer part of the real stack, and the limit is what bounds the ids a deep
 * recursion costs (one per level per distinct path, up to max_depth).  The stack itself costs 24
 * bytes per live frame, less than the program's own frames.
 *
 * Robust pops.  Events do not always nest: longjmp skips func_exit, a return or exception from
 * inside a loop skips loop_exit (func_exit closes the loop, events.yaml), and a non-dedicated loop
 * exit is not instrumented.  So:
 *   - mn_ctx_pop() closes the innermost frame of its site and every frame above it; loop frames so
 *     closed are normal, function frames are counted as unwound.  A pop whose site is nowhere on
 *     the stack is ignored and counted as unmatched.
 *   - mn_ctx_iter() bumps the innermost loop frame of its site, first closing the frames above
 *     it (we are back in that loop's header, so they are dead), counted as for pops; no such
 *     frame: ignored, unmatched.
 *   - mn_ctx_push() of a loop whose own frame is on top closes that stale frame first (a loop
 *     cannot be invoked inside its own body without a function frame between), counted as
 *     reopened.
 * After a longjmp the stack is too deep until a pop of a frame below the jump resynchronizes it;
 * without setjmp events nothing better is possible.
 *
 * Memory.  Growing the intern table or the stack never fails the program.  A push whose id cannot
 * be interned gets its parent's id (the frame is left out of the encoding); a push whose frame
 * cannot be stored is counted, and pops take such frames off by count before matching sites.  Both
 * count in nomem.
 *
 * Not thread-safe: one context manager per worker; once nobody pushes, any thread may decode.
 * The struct is public only so that the hot paths can be inlined: use the functions.
 */
#ifndef MNEMO_CONTEXT_H
#define MNEMO_CONTEXT_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mn_prof;   /* profile.h */

enum mn_ctx_kind {
	MN_CTX_FUNCTION = 0,
	MN_CTX_LOOP = 1,
};

/* One frame of the stack.  Read with mn_ctx_frame_*(). */
struct mn_ctx_frame {
	uint32_t site;
	uint32_t id;        /* the context id with this frame on top (beyond the limit: the deepest
			     * kept frame's; after an intern failure: the parent's) */
	uint64_t iter;      /* loops: iterations begun, 0 until the first mn_ctx_iter() */
	uint64_t inv;       /* invocation serial << 1 | kind */
};

/* One interned context: its parent and innermost site, and a one-entry cache of its children. */
struct mn_ctx_node {
	uint32_t parent;
	uint32_t site;
	uint32_t child_site;  /* the child last pushed from this context ... */
	uint32_t child_id;    /* ... and its id; 0: none yet (0 is never a child) */
};

struct mn_ctx {
	/* Touched by every push, pop and iteration. */
	struct mn_ctx_frame *frames;  /* [0] the root (id 0), [1..depth] the stack, top last */
	struct mn_ctx_node *nodes;    /* by id; [0] is the empty context */
	unsigned depth;               /* frames on the stack */
	unsigned frame_cap;           /* entries of frames[], root included */
	unsigned max_depth;           /* frames an id encodes at most */
	unsigned lost;                /* pushes above the top whose frame could not be stored */
	uint64_t serial;              /* pushes so far: the last invocation serial handed out */
	uint64_t truncated;           /* pushes deeper than max_depth */

	/* The intern table: open addressing over ids, keyed by nodes[id].parent and .site. */
	uint32_t *slots;              /* 2^slot_bits entries; 0: empty */
	unsigned slot_bits;
	uint32_t nids;                /* ids assigned, 0 included */
	uint32_t node_cap;            /* entries of nodes[] */

	uint64_t unwound, unmatched, reopened, nomem;   /* see struct mn_ctx_stats */
};

struct mn_ctx_stats {
	uint64_t pushes;      /* every push */
	uint64_t truncated;   /* pushes deeper than max_depth: on the stack, not in the id */
	uint64_t unwound;     /* function frames closed by a pop or iter of a frame below them */
	uint64_t unmatched;   /* pops and iters whose site was not on the stack: ignored */
	uint64_t reopened;    /* loops invoked with their own stale frame on top */
	uint64_t nomem;       /* pushes whose id or frame could not be stored */
	uint32_t ids;         /* ids assigned, 0 included */
};

/* ---- Setup (context.c) ----------------------------------------------------------------------- */

/*
 * Makes an empty context manager whose ids encode at most the outermost max_depth frames (0: every
 * id is 0, but the stack is still kept).  Returns 0, or -ENOMEM and then *cp is NULL.
 */
int mn_ctx_create(struct mn_ctx **cp, unsigned max_depth);
/* Frees everything; NULL is fine.  Ids it handed out mean nothing afterwards. */
void mn_ctx_destroy(struct mn_ctx *c);

/*
 * Threads (issue 22): one stack per program thread over one intern table.  A thread's stack is
 * parked while another thread's events come; ids, the intern table and invocation serials stay
 * shared, so an id means one path in every thread and serials never repeat across threads.
 */
struct mn_ctx_stack {
	struct mn_ctx_frame *frames;
	unsigned depth, frame_cap, lost;
};

/* Parks the current stack in *out and makes *in current, *in then zeroed; an all-zero *in is a new,
 * empty stack.  0, or -ENOMEM (a new stack's frames) and nothing changed. */
int mn_ctx_switch(struct mn_ctx *c, struct mn_ctx_stack *out, struct mn_ctx_stack *in);
/* A parked stack's memory; zeroed. */
void mn_ctx_stack_free(struct mn_ctx_stack *s);

/* ---- Slow paths of the inline calls (context.c); call the inline ones ------------------------ */

uint32_t mn_ctx_intern(struct mn_ctx *c, uint32_t parent, uint32_t site);
void mn_ctx_push_slow(struct mn_ctx *c, uint32_t site, enum mn_ctx_kind kind);
void mn_ctx_pop_slow(struct mn_ctx *c, uint32_t site);
void mn_ctx_iter_slow(struct mn_ctx *c, uint32_t site);

/* ---- Events: the hot paths ------------------------------------------------------------------- */

/*
 * Enters a function (func_entry) or a loop (loop_invoke): pushes a frame, interns the new context
 * (at most one hash lookup, usually none: each context caches the child last pushed from it) and
 * gives the frame the next invocation serial.  Never fails (see "Memory" above).
 */
static inline void mn_ctx_push(struct mn_ctx *c, uint32_t site, enum mn_ctx_kind kind)
{
	struct mn_ctx_frame *top = &c->frames[c->depth];
	uint32_t id = top->id;

	assert(kind == MN_CTX_FUNCTION || kind == MN_CTX_LOOP);
	if (__builtin_expect(c->depth + 1 >= c->frame_cap || c->lost ||
			     (kind == MN_CTX_LOOP && top->site == site && c->depth), 0)) {
		mn_ctx_push_slow(c, site, kind);
		return;
	}
	if (__builtin_expect(c->depth < c->max_depth, 1)) {
		const struct mn_ctx_node *n = &c->nodes[id];

		if (n->child_site == site && n->child_id)
			id = n->child_id;
		else
			id = mn_ctx_intern(c, id, site);
	} else {
		c->truncated++;
	}
	top = &c->frames[++c->depth];
	top->site = site;
	top->id = id;
	top->iter = 0;
	top->inv = ++c->serial << 1 | (uint64_t)kind;
}

/* Leaves the innermost frame of site (func_exit, loop_exit) and every frame above it. */
static inline void mn_ctx_pop(struct mn_ctx *c, uint32_t site)
{
	if (__builtin_expect(c->depth && !c->lost && c->frames[c->depth].site == site, 1)) {
		c->depth--;
		return;
	}
	mn_ctx_pop_slow(c, site);
}

/*
 * Begins an iteration of loop site (loop_iter, the first included): the innermost loop frame of
 * site counts one more iteration.
 */
static inline void mn_ctx_iter(struct mn_ctx *c, uint32_t site)
{
	struct mn_ctx_frame *top = &c->frames[c->depth];

	if (__builtin_expect(c->depth && !c->lost && top->site == site &&
			     (top->inv & 1) == MN_CTX_LOOP, 1)) {
		top->iter++;
		return;
	}
	mn_ctx_iter_slow(c, site);
}

/* n calls of mn_ctx_iter(c, site) at once (a summarized loop's iterations). */
static inline void mn_ctx_iter_n(struct mn_ctx *c, uint32_t site, uint64_t n)
{
	struct mn_ctx_frame *top = &c->frames[c->depth];

	if (n && c->depth && !c->lost && top->site == site && (top->inv & 1) == MN_CTX_LOOP) {
		top->iter += n;
		return;
	}
	while (n--)
		mn_ctx_iter(c, site);
}

/* The id of the current context: 0 outside every function. */
static inline uint32_t mn_ctx_current(const struct mn_ctx *c)
{
	return c->frames[c->depth].id;
}

/* ---- The stack, for modules that look at its frames: i = 0 is the outermost ------------------ */

/* Frames on the stack, beyond the depth limit included. */
static inline unsigned mn_ctx_depth(const struct mn_ctx *c)
{
	return c->depth;
}

/* Frame i, 0 <= i < mn_ctx_depth(); valid until the next push, pop or iter. */
static inline const struct mn_ctx_frame *mn_ctx_frame(const struct mn_ctx *c, unsigned i)
{
	assert(i < c->depth);
	return &c->frames[i + 1];
}

static inline uint32_t mn_ctx_frame_site(const struct mn_ctx *c, unsigned i)
{
	return mn_ctx_frame(c, i)->site;
}

static inline enum mn_ctx_kind mn_ctx_frame_kind(const struct mn_ctx *c, unsigned i)
{
	return (enum mn_ctx_kind)(mn_ctx_frame(c, i)->inv & 1);
}

/* Loops: iterations begun in this invocation (the current one's number from 1); 0: functions. */
static inline uint64_t mn_ctx_frame_iter(const struct mn_ctx *c, unsigned i)
{
	return mn_ctx_frame(c, i)->iter;
}

/*
 * The invocation serial: the frame was the serial-th push, counting from 1.  Unique per invocation
 * of a function or loop, so two accesses in the same loop invocation have the same serial for that
 * loop's frame and differ only in iter; the same in every worker.
 */
static inline uint64_t mn_ctx_frame_serial(const struct mn_ctx *c, unsigned i)
{
	return mn_ctx_frame(c, i)->inv >> 1;
}

/* The context id with frame i on top (the one mn_ctx_current() gave while it was). */
static inline uint32_t mn_ctx_frame_id(const struct mn_ctx *c, unsigned i)
{
	return mn_ctx_frame(c, i)->id;
}

/* ---- Ids ------------------------------------------------------------------------------------- */

/* Ids assigned so far, 0 included: valid ids are 0 .. mn_ctx_id_count() - 1. */
static inline uint32_t mn_ctx_id_count(const struct mn_ctx *c)
{
	return c->nids;
}

/* The frames an id encodes at most (create's max_depth): enough room for any decode. */
static inline unsigned mn_ctx_max_depth(const struct mn_ctx *c)
{
	return c->max_depth;
}

/* The context one frame shorter than id, and id's innermost site; 0 for id 0.  id must be valid. */
static inline uint32_t mn_ctx_id_parent(const struct mn_ctx *c, uint32_t id)
{
	return c->nodes[id].parent;
}

static inline uint32_t mn_ctx_id_site(const struct mn_ctx *c, uint32_t id)
{
	return c->nodes[id].site;
}

/* Frames id encodes (0 for the empty context), or -EINVAL for an id never assigned. */
int mn_ctx_id_depth(const struct mn_ctx *c, uint32_t id);

/*
 * Decodes id into its sites, outermost first.  Writes the outermost min(depth, max) of them into
 * sites[] and returns the depth, so a return above max means the list was cut (snprintf-like);
 * mn_ctx_max_depth() entries always suffice.  Returns -EINVAL for an id never assigned.
 */
int mn_ctx_decode(const struct mn_ctx *c, uint32_t id, uint32_t *sites, unsigned max);

/*
 * from's context id as an id of into: its sites (the outermost mn_ctx_max_depth(into) of them)
 * interned in into, outermost first.  For a merge of states whose managers assigned ids apart
 * (another run's, restored).  from's id must be valid; 0 if into ran out of memory on the way
 * (as mn_ctx_intern()).
 */
uint32_t mn_ctx_translate(struct mn_ctx *into, const struct mn_ctx *from, uint32_t id);

/*
 * Writes id to a profile as a flow sequence of sites, outermost first ([] for 0), each through
 * mn_prof_site() so that the site table lists it.  Returns 0, or -EINVAL for an id never assigned
 * (and writes nothing).
 */
int mn_ctx_emit(const struct mn_ctx *c, struct mn_prof *p, uint32_t id);

/* The counters, for a module's section or a verbose line. */
void mn_ctx_stats(const struct mn_ctx *c, struct mn_ctx_stats *st);

/* Checks every invariant of c (tests; c must not be in use by another thread). */
bool mn_ctx_valid(const struct mn_ctx *c);

#ifdef __cplusplus
}
#endif
#endif /* MNEMO_CONTEXT_H */
