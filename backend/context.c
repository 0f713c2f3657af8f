/*
 * The context manager's out-of-line half (context.h has the contract and the hot paths): setup,
 * the intern table, the slow paths of push, pop and iter, and decoding.
 *
 * The intern table maps (parent id, site) to an id.  Nodes live in a flat array indexed by id and
 * the hash table holds only ids (open addressing, linear probing, at most half full), so a lookup
 * compares against nodes[id] and growing the table rehashes ids without touching the nodes.  Ids
 * are handed out in order of first insertion, which is what makes them the same in every worker.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "profile.h"

/* The header promises 24-byte frames, and the kind fits the low bit of inv. */
_Static_assert(sizeof(struct mn_ctx_frame) == 24, "struct mn_ctx_frame grew");
_Static_assert(sizeof(struct mn_ctx_node) == 16, "struct mn_ctx_node grew");
_Static_assert(MN_CTX_FUNCTION == 0 && MN_CTX_LOOP == 1, "one bit of kind in mn_ctx_frame.inv");

#define FRAMES_INIT  64     /* root included */
#define NODES_INIT   256
#define SLOTS_BITS_INIT 9   /* 512 slots: half full at 256 ids, when nodes[] first grows too */

/* Fibonacci hashing of the pair: the top slot_bits bits of a multiplicative hash. */
static inline size_t slot_of(const struct mn_ctx *c, uint32_t parent, uint32_t site)
{
	uint64_t k = ((uint64_t)parent << 32 | site) * UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(k >> (64 - c->slot_bits));
}

static inline size_t slot_mask(const struct mn_ctx *c)
{
	return ((size_t)1 << c->slot_bits) - 1;
}

/*
 * Doubles the hash table and reinserts every id.  Returns 0 or -ENOMEM, and then the table is
 * unchanged.
 */
static int grow_slots(struct mn_ctx *c)
{
	unsigned bits = c->slot_bits + 1;
	uint32_t *old = c->slots, *slots;
	size_t mask;

	if (bits > 32)
		return -ENOMEM;
	slots = calloc((size_t)1 << bits, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	c->slots = slots;
	c->slot_bits = bits;
	mask = slot_mask(c);
	for (uint32_t id = 1; id < c->nids; id++) {
		size_t h = slot_of(c, c->nodes[id].parent, c->nodes[id].site);

		while (slots[h])
			h = (h + 1) & mask;
		slots[h] = id;
	}
	free(old);
	return 0;
}

/* Doubles nodes[].  Returns 0 or -ENOMEM, and then nodes[] is unchanged. */
static int grow_nodes(struct mn_ctx *c)
{
	struct mn_ctx_node *nodes;
	uint32_t cap;

	if (c->node_cap > UINT32_MAX / 2)
		return -ENOMEM;
	cap = c->node_cap * 2;
	nodes = realloc(c->nodes, (size_t)cap * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	c->nodes = nodes;
	c->node_cap = cap;
	return 0;
}

/* Doubles frames[].  Returns 0 or -ENOMEM, and then frames[] is unchanged. */
static int grow_frames(struct mn_ctx *c)
{
	struct mn_ctx_frame *frames;
	unsigned cap;

	if (c->frame_cap > UINT32_MAX / 2)
		return -ENOMEM;
	cap = c->frame_cap * 2;
	frames = realloc(c->frames, (size_t)cap * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	c->frames = frames;
	c->frame_cap = cap;
	return 0;
}

int mn_ctx_create(struct mn_ctx **cp, unsigned max_depth)
{
	struct mn_ctx *c;

	*cp = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->max_depth = max_depth;
	c->frame_cap = FRAMES_INIT;
	c->node_cap = NODES_INIT;
	c->slot_bits = SLOTS_BITS_INIT;
	c->frames = calloc(c->frame_cap, sizeof(*c->frames));
	c->nodes = calloc(c->node_cap, sizeof(*c->nodes));
	c->slots = calloc((size_t)1 << c->slot_bits, sizeof(*c->slots));
	if (!c->frames || !c->nodes || !c->slots)
		goto fail;
	/* frames[0] and nodes[0], all zero, are the root: site 0, id 0, parent 0, serial 0. */
	c->nids = 1;
	*cp = c;
	return 0;
fail:
	mn_ctx_destroy(c);
	return -ENOMEM;
}

int mn_ctx_switch(struct mn_ctx *c, struct mn_ctx_stack *out, struct mn_ctx_stack *in)
{
	struct mn_ctx_stack next = *in;

	if (!next.frames) {   /* a new stack: the root frame alone, all zero */
		next = (struct mn_ctx_stack){ calloc(FRAMES_INIT, sizeof(*c->frames)), 0,
					      FRAMES_INIT, 0 };
		if (!next.frames)
			return -ENOMEM;
	}
	*out = (struct mn_ctx_stack){ c->frames, c->depth, c->frame_cap, c->lost };
	c->frames = next.frames;
	c->depth = next.depth;
	c->frame_cap = next.frame_cap;
	c->lost = next.lost;
	*in = (struct mn_ctx_stack){ 0 };
	return 0;
}

void mn_ctx_stack_free(struct mn_ctx_stack *s)
{
	free(s->frames);
	*s = (struct mn_ctx_stack){ 0 };
}

void mn_ctx_destroy(struct mn_ctx *c)
{
	if (!c)
		return;
	free(c->frames);
	free(c->nodes);
	free(c->slots);
	free(c);
}

/*
 * The id of (parent, site), assigned now if it is new, and remembered as parent's last child.  When
 * a new id cannot be stored (no memory, or all 2^32 - 1 used) returns parent and counts nomem.
 * Called by mn_ctx_push() when parent's child cache misses.
 */
__attribute__((noinline)) uint32_t mn_ctx_intern(struct mn_ctx *c, uint32_t parent, uint32_t site)
{
	size_t mask = slot_mask(c), h = slot_of(c, parent, site);
	uint32_t id;

	for (; (id = c->slots[h]) != 0; h = (h + 1) & mask)
		if (c->nodes[id].parent == parent && c->nodes[id].site == site)
			goto found;

	if (c->nids == UINT32_MAX || (c->nids == c->node_cap && grow_nodes(c))) {
		c->nomem++;
		return parent;
	}
	/* Keep the table at most half full; after growing, the pair's empty slot has moved. */
	if ((uint64_t)(c->nids + 1) * 2 > (uint64_t)1 << c->slot_bits) {
		if (grow_slots(c)) {
			c->nomem++;
			return parent;
		}
		mask = slot_mask(c);
		for (h = slot_of(c, parent, site); c->slots[h]; h = (h + 1) & mask)
			;
	}
	id = c->nids++;
	c->nodes[id] = (struct mn_ctx_node){ .parent = parent, .site = site };
	c->slots[h] = id;
found:
	c->nodes[parent].child_site = site;
	c->nodes[parent].child_id = id;
	return id;
}

/* The innermost frame of site (of kind loop when loop_only), or 0 when none is on the stack. */
static unsigned find_frame(const struct mn_ctx *c, uint32_t site, bool loop_only)
{
	for (unsigned i = c->depth; i > 0; i--) {
		const struct mn_ctx_frame *f = &c->frames[i];

		if (f->site == site && (!loop_only || (f->inv & 1) == MN_CTX_LOOP))
			return i;
	}
	return 0;
}

/* Drops the frames above frame i, counting the function frames among them as unwound. */
static void close_above(struct mn_ctx *c, unsigned i)
{
	for (unsigned j = c->depth; j > i; j--)
		if ((c->frames[j].inv & 1) == MN_CTX_FUNCTION)
			c->unwound++;
	c->depth = i;
}

/*
 * mn_ctx_push() when the stack is full, frames were lost, or a loop is invoked with a frame of its
 * site on top.  Does what mn_ctx_push() does, after making room or closing the stale loop.
 */
__attribute__((cold, noinline)) void mn_ctx_push_slow(struct mn_ctx *c, uint32_t site,
						      enum mn_ctx_kind kind)
{
	struct mn_ctx_frame *top = &c->frames[c->depth];
	uint32_t id;

	if (c->lost)
		goto lost;
	if (kind == MN_CTX_LOOP && c->depth && top->site == site && (top->inv & 1) == MN_CTX_LOOP) {
		/* A loop is never invoked inside its own body without a function frame between: the
		 * frame on top is a stale one whose loop_exit was never instrumented. */
		c->reopened++;
		c->depth--;
	}
	if (c->depth + 1 >= c->frame_cap && grow_frames(c))
		goto lost;

	top = &c->frames[c->depth];
	id = top->id;
	if (c->depth < c->max_depth) {
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
	return;
lost:
	/* Frames above a lost one cannot be stored either, or pops would take them off in the
	 * wrong order: count them all until the stack is back below the first lost one. */
	c->lost++;
	c->serial++;
	c->nomem++;
}

/* mn_ctx_pop() when the top is not a frame of site (or frames were lost). */
__attribute__((cold, noinline)) void mn_ctx_pop_slow(struct mn_ctx *c, uint32_t site)
{
	unsigned i;

	if (c->lost) {
		c->lost--;
		return;
	}
	i = find_frame(c, site, false);
	if (!i) {
		c->unmatched++;
		return;
	}
	close_above(c, i);
	c->depth = i - 1;
}

/* mn_ctx_iter() when the top is not a frame of site (or frames were lost). */
__attribute__((cold, noinline)) void mn_ctx_iter_slow(struct mn_ctx *c, uint32_t site)
{
	unsigned i;

	if (c->lost)
		return;   /* most likely the iteration of a lost loop: already counted in nomem */
	i = find_frame(c, site, true);
	if (!i) {
		c->unmatched++;
		return;
	}
	close_above(c, i);
	c->frames[i].iter++;
}

int mn_ctx_id_depth(const struct mn_ctx *c, uint32_t id)
{
	int depth = 0;

	if (id >= c->nids)
		return -EINVAL;
	for (; id; id = c->nodes[id].parent)
		depth++;
	return depth;
}

int mn_ctx_decode(const struct mn_ctx *c, uint32_t id, uint32_t *sites, unsigned max)
{
	int depth = mn_ctx_id_depth(c, id);

	if (depth < 0)
		return depth;
	/* The walk goes innermost first: the site n steps up from id is number depth - 1 - n. */
	for (unsigned k = (unsigned)depth; id; id = c->nodes[id].parent)
		if (--k < max)
			sites[k] = c->nodes[id].site;
	return depth;
}

uint32_t mn_ctx_translate(struct mn_ctx *into, const struct mn_ctx *from, uint32_t id)
{
	uint32_t buf[128], *sites = buf, t = 0;
	int depth = mn_ctx_id_depth(from, id);

	if (depth <= 0)
		return 0;
	if ((unsigned)depth > into->max_depth)
		depth = (int)into->max_depth;
	if ((size_t)depth > sizeof(buf) / sizeof(buf[0]) &&
	    !(sites = malloc((size_t)depth * sizeof(*sites))))
		return 0;
	mn_ctx_decode(from, id, sites, (unsigned)depth);
	for (int k = 0; k < depth; k++)
		t = mn_ctx_intern(into, t, sites[k]);
	if (sites != buf)
		free(sites);
	return t;
}

int mn_ctx_emit(const struct mn_ctx *c, struct mn_prof *p, uint32_t id)
{
	uint32_t buf[128], *sites = buf;
	int depth = mn_ctx_id_depth(c, id);

	if (depth < 0)
		return depth;
	if ((size_t)depth > sizeof(buf) / sizeof(buf[0])) {
		sites = malloc((size_t)depth * sizeof(*sites));
		if (!sites)
			return -ENOMEM;
	}
	mn_ctx_decode(c, id, sites, (unsigned)depth);
	mn_prof_seq_begin_flow(p);
	for (int k = 0; k < depth; k++)
		mn_prof_site(p, sites[k]);
	mn_prof_seq_end(p);
	if (sites != buf)
		free(sites);
	return 0;
}

void mn_ctx_stats(const struct mn_ctx *c, struct mn_ctx_stats *st)
{
	*st = (struct mn_ctx_stats){
		.pushes = c->serial,
		.truncated = c->truncated,
		.unwound = c->unwound,
		.unmatched = c->unmatched,
		.reopened = c->reopened,
		.nomem = c->nomem,
		.ids = c->nids,
	};
}

/* The id the table holds for (parent, site), or 0 when it has none. */
static uint32_t lookup(const struct mn_ctx *c, uint32_t parent, uint32_t site)
{
	size_t mask = slot_mask(c);
	uint32_t id;

	for (size_t h = slot_of(c, parent, site); (id = c->slots[h]) != 0; h = (h + 1) & mask)
		if (c->nodes[id].parent == parent && c->nodes[id].site == site)
			return id;
	return 0;
}

bool mn_ctx_valid(const struct mn_ctx *c)
{
	const struct mn_ctx_frame *root = &c->frames[0];
	size_t used = 0;

	/* The root frame and node. */
	if (root->site || root->id || root->iter || root->inv || c->nodes[0].parent ||
	    c->nodes[0].site)
		return false;
	if (c->depth >= c->frame_cap || c->nids < 1 || c->nids > c->node_cap)
		return false;

	/* Nodes: parents come first, every pair is in the table once, caches point at children. */
	for (uint32_t id = 1; id < c->nids; id++) {
		const struct mn_ctx_node *n = &c->nodes[id];
		int depth = mn_ctx_id_depth(c, id);

		if (n->parent >= id || lookup(c, n->parent, n->site) != id)
			return false;
		if (depth < 1 || (unsigned)depth > c->max_depth)
			return false;
	}
	for (uint32_t id = 0; id < c->nids; id++) {
		const struct mn_ctx_node *n = &c->nodes[id];

		if (n->child_id && (n->child_id >= c->nids || c->nodes[n->child_id].parent != id ||
				    c->nodes[n->child_id].site != n->child_site))
			return false;
	}
	for (size_t h = 0; h <= slot_mask(c); h++) {
		if (c->slots[h] >= c->nids)
			return false;
		used += c->slots[h] != 0;
	}
	if (used != c->nids - 1 || used * 2 > slot_mask(c) + 1)
		return false;

	/* Frames: each id extends the one below it, up to the limit; serials increase upwards. */
	for (unsigned i = 1; i <= c->depth; i++) {
		const struct mn_ctx_frame *f = &c->frames[i], *below = f - 1;

		if (f->id >= c->nids || (f->inv >> 1) <= (below->inv >> 1) ||
		    (f->inv >> 1) > c->serial)
			return false;
		if ((f->inv & 1) == MN_CTX_FUNCTION && f->iter)
			return false;
		if (i > c->max_depth) {
			if (f->id != below->id)
				return false;
		} else if (c->nodes[f->id].parent != below->id || c->nodes[f->id].site != f->site) {
			/* Only an intern that failed for want of memory leaves the parent's id. */
			if (!c->nomem || f->id != below->id)
				return false;
		}
	}
	return true;
}
