/*
 * Tests of the object table (backend/objects.h): lookups against a plain reference (the live
 * objects in an array sorted by address, searched by bisection) on random sequences of heap
 * allocations, frees and reallocs, stack objects and globals, with the slot every allocation must
 * get predicted from a reference free list; packed globals sharing granules, every byte of each
 * found and no padding byte; slot reuse after a release; mn_objects_find_granule() against
 * mn_objects_find() on an object's last granule; and the aliases counter.
 *
 * The addresses are made up: the table never touches the program memory it describes, only its
 * shadow, so they need only lie in the regions a program's would (shadow.h) and alias nothing
 * unless a test means them to.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "objects.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

/* Regions as a PIE's: globals, then its heap; the stack near the top of the user space. */
#define GLOBALS     UINT64_C(0x555555600000)
#define HEAP        UINT64_C(0x555556000000)
#define HEAP_BYTES  (64 * MiB)
#define STACK       UINT64_C(0x7ffc00000000)
#define STACK_BYTES MiB
#define BULK        (256 * KiB)   /* objects.c's CLEAR_BULK: released by whole shadow pages */

static const char *const kind_name[] = { "heap", "stack", "global" };

/* ---- Random input ---------------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure names a seed that replays it. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

static uint64_t below(uint64_t n)
{
	return rnd() % n;
}

/* ---- The reference --------------------------------------------------------------------------- */

struct ref {
	uint64_t addr, size, serial, born;
	uint32_t slot, group;
	enum mn_obj_kind kind;
};

struct model {
	struct ref *v;           /* the live objects, by increasing address; they never overlap */
	size_t n, cap;
	uint32_t *freed;         /* released slots, the last released on top */
	size_t nfreed, capfreed;
	uint32_t slots;          /* slots handed out so far (the table's n) */
	uint64_t peak;
	uint64_t lo, hi;         /* every object ever mapped lies in [lo, hi); hi 0: none yet */
};

static uint64_t extent(uint64_t size)
{
	return size ? size : 1;
}

/* Granules [first, end) of an object, as the shadow covers it. */
static uint64_t gran_first(uint64_t addr)
{
	return addr & ~UINT64_C(7);
}

static uint64_t gran_end(uint64_t addr, uint64_t size)
{
	return (addr + extent(size) + 7) & ~UINT64_C(7);
}

/* Index of the first live object starting above a. */
static size_t upper(const struct model *m, uint64_t a)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The live object holding byte a, or NULL. */
static const struct ref *ref_find(const struct model *m, uint64_t a)
{
	size_t i = upper(m, a);

	if (i && a - m->v[i - 1].addr < extent(m->v[i - 1].size))
		return &m->v[i - 1];
	return NULL;
}

/*
 * The live heap or stack object whose granules hold a, or NULL.  Such objects share no granule,
 * so it can only be the last one starting at or below a's granule's last byte.  The table's filter
 * answers first: nothing past the end of the highest object ever mapped, even in its granule.
 */
static const struct ref *ref_find_granule(const struct model *m, uint64_t a)
{
	size_t i = upper(m, a | 7);
	const struct ref *r = i ? &m->v[i - 1] : NULL;

	if (a < m->lo || a >= m->hi)
		return NULL;
	if (r && r->kind != MN_OBJ_GLOBAL && gran_first(r->addr) <= a &&
	    a < gran_end(r->addr, r->size))
		return r;
	return NULL;
}

/* Does a lie where heap and stack objects are made, where no two share a granule? */
static bool in_arena(uint64_t a)
{
	return a - HEAP < HEAP_BYTES || a - STACK < STACK_BYTES;
}

static struct ref *ref_of_slot(struct model *m, uint32_t s)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].slot == s)
			return &m->v[i];
	fail_msg("slot %" PRIu32 ": expected a live object in the reference, got none", s);
	return NULL;
}

/*
 * Would a heap or stack object at [addr, addr + size) share a granule with a live object other
 * than slot `self`?  Allocators never make such objects, and the table's contract for them assumes
 * it; globals share granules only with globals, in their own region.
 */
static bool overlaps(const struct model *m, uint64_t addr, uint64_t size, uint32_t self)
{
	uint64_t first = gran_first(addr), end = gran_end(addr, size);

	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].slot != self && gran_first(m->v[i].addr) < end &&
		    first < gran_end(m->v[i].addr, m->v[i].size))
			return true;
	return false;
}

static void ref_insert(struct model *m, const struct ref *r)
{
	size_t i = upper(m, r->addr);

	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		assert_non_null(m->v);
	}
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
	m->v[i] = *r;
	m->n++;
	if (!m->hi || r->addr < m->lo)
		m->lo = r->addr;
	if (r->addr + extent(r->size) > m->hi)
		m->hi = r->addr + extent(r->size);
	if (m->n > m->peak)
		m->peak = m->n;
}

static struct ref ref_remove(struct model *m, uint32_t s)
{
	struct ref *r = ref_of_slot(m, s), out = *r;
	size_t i = (size_t)(r - m->v);

	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
	return out;
}

/* The slot the next allocation must get: the last released, else a new one. */
static uint32_t next_slot(const struct model *m)
{
	return m->nfreed ? m->freed[m->nfreed - 1] : m->slots + 1;
}

static void model_free(struct model *m)
{
	free(m->v);
	free(m->freed);
	memset(m, 0, sizeof(*m));
}

/* ---- Checks ---------------------------------------------------------------------------------- */

/* A guess is never wrong: when slot g holds a, mn_objects_find() finds g there. */
static void check_guess(const char *what, const struct mn_objects *o, uint64_t a, uint32_t g)
{
	if (g && mn_objects_holds(o, g, a) && mn_objects_find(o, a) != g)
		fail_msg("%s: address %#" PRIx64 ": slot %" PRIu32 " holds it, but "
			 "mn_objects_find() finds %" PRIu32, what, a, g, mn_objects_find(o, a));
}

/* mn_objects_find(o, a) against the reference, and the found object's fields. */
static void check_find(const char *what, const struct mn_objects *o, const struct model *m,
		       uint64_t a)
{
	const struct ref *r = ref_find(m, a);
	uint32_t s = mn_objects_find(o, a);
	const struct mn_obj *x;

	if (s != (r ? r->slot : 0))
		fail_msg("%s: address %#" PRIx64 ": expected slot %" PRIu32 " (%s object at %#"
			 PRIx64 " size %" PRIu64 "), got %" PRIu32, what, a, r ? r->slot : 0,
			 r ? kind_name[r->kind] : "no", r ? r->addr : 0, r ? r->size : 0, s);
	if (in_arena(a)) {
		const struct ref *g = ref_find_granule(m, a);
		uint32_t t = mn_objects_find_granule(o, a);

		if (t != (g ? g->slot : 0))
			fail_msg("%s: address %#" PRIx64 ": expected find_granule %" PRIu32
				 " (object at %#" PRIx64 " size %" PRIu64 "), got %" PRIu32, what,
				 a, g ? g->slot : 0, g ? g->addr : 0, g ? g->size : 0, t);
	}
	check_guess(what, o, a, o->n ? 1 + (uint32_t)below(o->n) : 0);
	if (!r)
		return;
	/* Objects that overlap none (globals may share a granule) are found by a guess. */
	if (!mn_objects_holds(o, s, a))
		fail_msg("%s: address %#" PRIx64 ": expected slot %" PRIu32 " to hold it (a %s "
			 "object overlapping none), got no", what, a, s, kind_name[r->kind]);
	check_guess(what, o, a, s);
	x = mn_obj(o, s);
	if (!x->live || x->addr != r->addr || x->size != r->size || x->kind != r->kind ||
	    x->serial != r->serial || x->born != r->born || x->group != r->group)
		fail_msg("%s: slot %" PRIu32 ": expected live %s [%#" PRIx64 " +%" PRIu64 "] "
			 "serial %" PRIu64 " born %" PRIu64 " group %" PRIu32 ", got live %d %s [%#"
			 PRIx64 " +%" PRIu64 "] serial %" PRIu64 " born %" PRIu64 " group %" PRIu32,
			 what, s, kind_name[r->kind], r->addr, r->size, r->serial, r->born,
			 r->group, x->live, kind_name[x->kind], x->addr, x->size, x->serial,
			 x->born, x->group);
}

/* An object's edges: its first and last byte, the rest of its last granule, its neighbours. */
static void check_edges(const char *what, const struct mn_objects *o, const struct model *m,
			uint64_t addr, uint64_t size)
{
	uint64_t end = addr + extent(size);

	check_find(what, o, m, addr);
	check_find(what, o, m, end - 1);
	check_find(what, o, m, addr - 1);
	for (uint64_t a = end; a < gran_end(addr, size) + 1; a++)
		check_find(what, o, m, a);
	if (size > 16)
		check_find(what, o, m, addr + below(size));
}

static void check_all(const char *what, const struct mn_objects *o, const struct model *m)
{
	for (size_t i = 0; i < m->n; i++)
		check_edges(what, o, m, m->v[i].addr, m->v[i].size);
	if (o->live != m->n || o->peak != m->peak || o->n != m->slots || o->aliases != 0)
		fail_msg("%s: expected live %zu peak %" PRIu64 " slots %" PRIu32 " aliases 0, got "
			 "live %" PRIu64 " peak %" PRIu64 " slots %" PRIu32 " aliases %" PRIu64,
			 what, m->n, m->peak, m->slots, o->live, o->peak, o->n, o->aliases);
}

/* ---- Operations, on the table and the reference alike ---------------------------------------- */

static uint32_t do_alloc(const char *what, struct mn_objects *o, struct model *m,
			 const struct ref *r)
{
	uint32_t want = next_slot(m);
	struct ref x = *r;

	x.slot = mn_objects_alloc(o, &(struct mn_obj){ .addr = r->addr, .size = r->size,
			.kind = r->kind, .serial = r->serial, .born = r->born, .group = r->group,
			.live = false, .next = 12345 });
	if (x.slot != want)
		fail_msg("%s: %s object at %#" PRIx64 ": expected slot %" PRIu32 " (the last "
			 "released, else a new one), got %" PRIu32, what, kind_name[r->kind],
			 r->addr, want, x.slot);
	if (m->nfreed)
		m->nfreed--;
	else
		m->slots++;
	if (mn_obj(o, x.slot)->next != 0)
		fail_msg("%s: slot %" PRIu32 ": expected next 0 in a live object, got %" PRIu32,
			 what, x.slot, mn_obj(o, x.slot)->next);
	ref_insert(m, &x);
	return x.slot;
}

static void do_release(const char *what, struct mn_objects *o, struct model *m, uint32_t s)
{
	struct ref r = *ref_of_slot(m, s);
	uint32_t at = mn_objects_at(o, r.addr);

	if (at != s)
		fail_msg("%s: mn_objects_at(%#" PRIx64 "): expected slot %" PRIu32 ", got %" PRIu32,
			 what, r.addr, s, at);
	if (r.size > 1 && mn_objects_at(o, r.addr + 1))
		fail_msg("%s: mn_objects_at(%#" PRIx64 "), inside an object but not its start: "
			 "expected 0, got %" PRIu32, what, r.addr + 1,
			 mn_objects_at(o, r.addr + 1));
	mn_objects_release(o, s);
	ref_remove(m, s);
	if (m->nfreed == m->capfreed) {
		m->capfreed = m->capfreed ? 2 * m->capfreed : 256;
		m->freed = realloc(m->freed, m->capfreed * sizeof(*m->freed));
		assert_non_null(m->freed);
	}
	m->freed[m->nfreed++] = s;
	if (mn_obj(o, s)->live)
		fail_msg("%s: slot %" PRIu32 " released: expected live false, got true", what, s);
	check_edges(what, o, m, r.addr, r.size);
}

static void do_move(const char *what, struct mn_objects *o, struct model *m, uint32_t s,
		    uint64_t addr, uint64_t size)
{
	struct ref r = ref_remove(m, s);
	uint64_t old = r.addr, old_size = r.size;

	mn_objects_move(o, s, addr, size);
	r.addr = addr;
	r.size = size;
	ref_insert(m, &r);
	check_edges(what, o, m, old, old_size);
	check_edges(what, o, m, addr, size);
}

/*
 * A random place for a heap or stack object of `size` bytes that shares no granule but with slot
 * self's; false after many tries (the arena is crowded).
 */
static bool place(const struct model *m, enum mn_obj_kind kind, uint64_t size, uint32_t self,
		  uint64_t *addr)
{
	uint64_t base = kind == MN_OBJ_STACK ? STACK : HEAP;
	uint64_t bytes = kind == MN_OBJ_STACK ? STACK_BYTES : HEAP_BYTES;
	static const uint64_t aligns[] = { 16, 16, 16, 8, 4, 1 };

	for (int tries = 0; tries < 100; tries++) {
		uint64_t align = aligns[below(sizeof(aligns) / sizeof(aligns[0]))];
		uint64_t a = base + (below(bytes - extent(size) - 16) & ~(align - 1));

		if (!overlaps(m, a, size, self)) {
			*addr = a;
			return true;
		}
	}
	return false;
}

static uint64_t random_size(enum mn_obj_kind kind)
{
	uint64_t r = below(100);

	if (r < 3)
		return 0;
	if (r < 5 && kind == MN_OBJ_HEAP)
		return BULK + below(BULK);   /* released through mn_shadow_clear() */
	if (r < 60)
		return 1 + below(32);
	return 1 + below(700);
}

/*
 * Packed globals from addr up: sizes 1 to 12 at their natural alignment, so several share a
 * granule, and some padding between them.  Returns the address past the last.
 */
static uint64_t make_globals(struct ref *g, size_t n, uint64_t addr, uint64_t *serial)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t size = 1 + below(12);
		uint64_t align = size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;

		addr = (addr + below(3) + align - 1) & ~(align - 1);
		g[i] = (struct ref){ .addr = addr, .size = size, .serial = ++*serial,
				     .group = 1000 + (uint32_t)i, .kind = MN_OBJ_GLOBAL };
		addr += size;
	}
	return addr;
}

static void shuffle(struct ref *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = below(i);
		struct ref t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* ---- Tests ----------------------------------------------------------------------------------- */

/*
 * Random sequences: globals first, in shuffled order (a few more later), then allocations, frees,
 * reallocs (in place and elsewhere, bigger and smaller) and stack objects.  After every operation
 * the edges of the objects it touched and a few random addresses are looked up; every few hundred
 * operations, the edges of every live object.
 */
static void test_random_sequences(void **state)
{
	for (uint64_t seed = 1; seed <= 8; seed++) {
		struct mn_objects o;
		struct model m = { 0 };
		struct ref g[200];
		uint64_t serial = 0, gend;
		char what[64];

		rng_state = seed * UINT64_C(0x9e3779b97f4a7c15) | 1;
		assert_int_equal(mn_objects_init(&o), 0);
		snprintf(what, sizeof(what), "seed %" PRIu64 " globals", seed);
		gend = make_globals(g, 150, GLOBALS, &serial);
		shuffle(g, 150);
		for (size_t i = 0; i < 150; i++)
			do_alloc(what, &o, &m, &g[i]);
		check_all(what, &o, &m);

		for (uint64_t op = 1; op <= 6000; op++) {
			uint64_t r = below(100), addr, size;
			enum mn_obj_kind kind = below(4) ? MN_OBJ_HEAP : MN_OBJ_STACK;
			struct ref x;

			snprintf(what, sizeof(what), "seed %" PRIu64 " op %" PRIu64, seed, op);
			if (op % 1500 == 0) {
				/* A late global (a dlopen'd library's): the sorted insert. */
				make_globals(&x, 1, gend + 64 * (op / 1500), &serial);
				do_alloc(what, &o, &m, &x);
			} else if ((r < 50 && m.n < 600) || m.n < 170) {
				size = random_size(kind);
				if (!place(&m, kind, size, 0, &addr))
					continue;
				x = (struct ref){ .addr = addr, .size = size, .serial = ++serial,
						  .born = op, .group = 1 + (uint32_t)below(40),
						  .kind = kind };
				do_alloc(what, &o, &m, &x);
			} else {
				/* A random live object: free it, or realloc a heap one. */
				const struct ref *v = &m.v[below(m.n)];
				uint32_t s = v->slot;

				if (v->kind == MN_OBJ_GLOBAL)
					continue;
				if (r < 80 || v->kind == MN_OBJ_STACK) {
					do_release(what, &o, &m, s);
				} else if (r < 88) {
					/* In place: grow into free granules, or shrink. */
					size = 1 + below(2 * extent(v->size));
					addr = v->addr;
					if (!overlaps(&m, addr, size, s))
						do_move(what, &o, &m, s, addr, size);
				} else {
					size = random_size(MN_OBJ_HEAP);
					if (place(&m, MN_OBJ_HEAP, size, s, &addr))
						do_move(what, &o, &m, s, addr, size);
				}
			}
			for (int k = 0; k < 4; k++)
				check_find(what, &o, &m, HEAP + below(HEAP_BYTES));
			check_find(what, &o, &m, STACK + below(STACK_BYTES));
			check_find(what, &o, &m, GLOBALS + below(gend - GLOBALS + 64));
			check_find(what, &o, &m, rnd() >> 17);   /* mostly outside the filter */
			if (op % 300 == 0)
				check_all(what, &o, &m);
		}
		snprintf(what, sizeof(what), "seed %" PRIu64 " end", seed);
		check_all(what, &o, &m);
		for (uint64_t a = GLOBALS - 8; a < gend + 300; a++)
			check_find(what, &o, &m, a);
		mn_objects_free(&o);
		model_free(&m);
	}
}

/*
 * Packed globals: 1-, 2- and 4-byte globals four to a granule and odd sizes across granule edges,
 * registered in every order a shuffle gives: every byte of each finds it, every padding byte finds
 * nothing, and none is ever mn_objects_at() (globals are never freed).
 */
static void test_packed_globals(void **state)
{
	static const uint64_t layout[][2] = {   /* offset, size */
		{ 0, 1 }, { 1, 1 }, { 2, 2 }, { 4, 4 },    /* four in granule 0 */
		{ 8, 4 }, { 13, 3 },                          /* granule 1, a hole at 12 */
		{ 16, 12 }, { 28, 2 },                        /* granules 2-3 */
		{ 31, 9 },                                    /* across 3-4, to 39 */
		{ 48, 1 }, { 55, 1 },                         /* granule 6, a hole between */
	};
	const size_t n = sizeof(layout) / sizeof(layout[0]);

	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct mn_objects o;
		struct model m = { 0 };
		struct ref g[sizeof(layout) / sizeof(layout[0])];
		char what[64];

		snprintf(what, sizeof(what), "packed globals, order %" PRIu64, seed);
		rng_state = seed | 1;
		for (size_t i = 0; i < n; i++)
			g[i] = (struct ref){ .addr = GLOBALS + layout[i][0], .size = layout[i][1],
					     .serial = i, .group = 7 + (uint32_t)i,
					     .kind = MN_OBJ_GLOBAL };
		shuffle(g, n);
		assert_int_equal(mn_objects_init(&o), 0);
		for (size_t i = 0; i < n; i++)
			do_alloc(what, &o, &m, &g[i]);
		for (uint64_t a = GLOBALS - 16; a < GLOBALS + 80; a++) {
			check_find(what, &o, &m, a);
			if (mn_objects_at(&o, a))
				fail_msg("%s: mn_objects_at(%#" PRIx64 "): expected 0 for a "
					 "global, got %" PRIu32, what, a, mn_objects_at(&o, a));
		}
		if (o.nglobals != n)
			fail_msg("%s: expected %zu globals, got %" PRIu32, what, n, o.nglobals);
		for (uint32_t i = 1; i < o.nglobals; i++)
			if (mn_obj(&o, o.globals[i - 1])->addr >= mn_obj(&o, o.globals[i])->addr)
				fail_msg("%s: globals[%" PRIu32 "] at %#" PRIx64 " expected above "
					 "globals[%" PRIu32 "] at %#" PRIx64, what, i,
					 mn_obj(&o, o.globals[i])->addr, i - 1,
					 mn_obj(&o, o.globals[i - 1])->addr);
		mn_objects_free(&o);
		model_free(&m);
	}
}

/*
 * Slot reuse: released slots come back last released first, with the new object's fields and
 * nothing of the old one's; then new slots go on from the highest.  A released object is found
 * nowhere, and its reused slot only at its new place.
 */
static void test_slot_reuse(void **state)
{
	struct mn_objects o;
	uint32_t a, b, c, d, e, f;

	assert_int_equal(mn_objects_init(&o), 0);
	a = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP, .size = 32, .serial = 1 });
	b = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + 64, .size = 32, .serial = 2 });
	c = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + 128, .size = 32, .serial = 3 });
	if (a != 1 || b != 2 || c != 3)
		fail_msg("expected slots 1 2 3, got %" PRIu32 " %" PRIu32 " %" PRIu32, a, b, c);
	mn_objects_release(&o, b);
	mn_objects_release(&o, a);
	if (mn_objects_find(&o, HEAP) || mn_objects_find(&o, HEAP + 64 + 31))
		fail_msg("released objects: expected no slot, got %" PRIu32 " and %" PRIu32,
			 mn_objects_find(&o, HEAP), mn_objects_find(&o, HEAP + 64 + 31));
	d = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + 256, .size = 8, .serial = 4,
						   .born = 9, .group = 5, .kind = MN_OBJ_STACK });
	e = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + 512, .size = 8, .serial = 5 });
	f = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + 768, .size = 8, .serial = 6 });
	if (d != a || e != b || f != 4)
		fail_msg("expected slots %" PRIu32 " (released last), %" PRIu32 ", then 4, got %"
			 PRIu32 " %" PRIu32 " %" PRIu32, a, b, d, e, f);
	{
		const struct mn_obj *x = mn_obj(&o, d);

		if (x->addr != HEAP + 256 || x->size != 8 || x->serial != 4 || x->born != 9 ||
		    x->group != 5 || x->kind != MN_OBJ_STACK || !x->live || x->next)
			fail_msg("reused slot %" PRIu32 ": expected the new object's fields, got "
				 "[%#" PRIx64 " +%" PRIu64 "] serial %" PRIu64 " born %" PRIu64
				 " group %" PRIu32 " kind %d live %d next %" PRIu32, d, x->addr,
				 x->size, x->serial, x->born, x->group, x->kind, x->live, x->next);
	}
	if (mn_objects_find(&o, HEAP) || mn_objects_find(&o, HEAP + 64) ||
	    mn_objects_find(&o, HEAP + 256) != d || mn_objects_find(&o, HEAP + 512) != e ||
	    mn_objects_find(&o, HEAP + 128) != c)
		fail_msg("after reuse: expected slots 0 0 %" PRIu32 " %" PRIu32 " %" PRIu32 ", got "
			 "%" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32, d, e, c,
			 mn_objects_find(&o, HEAP), mn_objects_find(&o, HEAP + 64),
			 mn_objects_find(&o, HEAP + 256), mn_objects_find(&o, HEAP + 512),
			 mn_objects_find(&o, HEAP + 128));
	if (o.live != 4 || o.peak != 4)
		fail_msg("expected live 4 peak 4, got live %" PRIu64 " peak %" PRIu64, o.live,
			 o.peak);
	mn_objects_free(&o);
}

/*
 * The last granule of an object whose size is not a multiple of 8: mn_objects_find() stops at
 * its last byte, mn_objects_find_granule() answers for the whole granule.  A malloc(0) object
 * is one byte long.  A move keeps serial, born and group, and frees the old range.
 */
static void test_granule_tail_and_move(void **state)
{
	struct mn_objects o;
	uint32_t s, z;

	assert_int_equal(mn_objects_init(&o), 0);
	s = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + 16, .size = 5, .serial = 77,
						   .born = 3, .group = 9 });
	z = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + 64, .size = 0 });
	for (uint64_t a = HEAP + 16; a < HEAP + 24; a++) {
		uint32_t want = a < HEAP + 21 ? s : 0;

		if (mn_objects_find(&o, a) != want || mn_objects_find_granule(&o, a) != s)
			fail_msg("size 5 at %#" PRIx64 ", byte %" PRIu64 ": expected find %" PRIu32
				 " find_granule %" PRIu32 ", got %" PRIu32 " %" PRIu32, HEAP + 16,
				 a - HEAP - 16, want, s, mn_objects_find(&o, a),
				 mn_objects_find_granule(&o, a));
	}
	if (mn_objects_find(&o, HEAP + 64) != z || mn_objects_find(&o, HEAP + 65) != 0)
		fail_msg("malloc(0): expected slot %" PRIu32 " at its address and 0 past it, got %"
			 PRIu32 " %" PRIu32, z, mn_objects_find(&o, HEAP + 64),
			 mn_objects_find(&o, HEAP + 65));
	mn_objects_move(&o, s, HEAP + 4096, 100);
	if (mn_objects_find(&o, HEAP + 16) || mn_objects_find(&o, HEAP + 4096 + 99) != s ||
	    mn_objects_find(&o, HEAP + 4096 + 100) || mn_obj(&o, s)->serial != 77 ||
	    mn_obj(&o, s)->born != 3 || mn_obj(&o, s)->group != 9)
		fail_msg("moved: expected old place 0, new place %" PRIu32 " to byte 99, serial 77 "
			 "born 3 group 9, got %" PRIu32 " %" PRIu32 " %" PRIu32 ", serial %" PRIu64
			 " born %" PRIu64 " group %" PRIu32, s, mn_objects_find(&o, HEAP + 16),
			 mn_objects_find(&o, HEAP + 4096 + 99),
			 mn_objects_find(&o, HEAP + 4096 + 100), mn_obj(&o, s)->serial,
			 mn_obj(&o, s)->born, mn_obj(&o, s)->group);
	mn_objects_free(&o);
}

/*
 * Two objects in one granule, which allocators never make but the table must survive: the later
 * owns the granule; releasing the earlier leaves it the later's, releasing the later clears it.
 */
static void test_release_keeps_later_owner(void **state)
{
	struct mn_objects o;
	uint32_t a, b;

	assert_int_equal(mn_objects_init(&o), 0);
	a = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP, .size = 12 });
	b = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + 12, .size = 4 });
	if (mn_objects_find(&o, HEAP + 12) != b || mn_objects_find(&o, HEAP + 4) != a ||
	    mn_objects_find(&o, HEAP + 8))
		fail_msg("expected %" PRIu32 " at byte 12, %" PRIu32 " at byte 4 and 0 at byte 8 "
			 "(granule 1 is the later's), got %" PRIu32 " %" PRIu32 " %" PRIu32, b, a,
			 mn_objects_find(&o, HEAP + 12), mn_objects_find(&o, HEAP + 4),
			 mn_objects_find(&o, HEAP + 8));
	mn_objects_release(&o, a);
	if (mn_objects_find(&o, HEAP + 12) != b || mn_objects_find(&o, HEAP + 4))
		fail_msg("earlier released: expected %" PRIu32 " at byte 12 and 0 at byte 4, got %"
			 PRIu32 " %" PRIu32, b, mn_objects_find(&o, HEAP + 12),
			 mn_objects_find(&o, HEAP + 4));
	mn_objects_release(&o, b);
	if (mn_objects_find_granule(&o, HEAP + 12))
		fail_msg("both released: expected granule 1 clear, got %" PRIu32,
			 mn_objects_find_granule(&o, HEAP + 12));
	mn_objects_free(&o);
}

/*
 * Aliases: an object one fold above another (same shadow, another window) is left unmapped, its
 * granules counted, whether it starts on a granule or not, and a lookup in it finds nothing; the
 * first object keeps its shadow.  Releasing the unmapped object counts nothing more.
 */
static void test_aliases(void **state)
{
	struct mn_objects o;
	uint64_t up;
	uint32_t s, t, u;

	assert_int_equal(mn_objects_init(&o), 0);
	up = UINT64_C(1) << mn_shadow_fold_bits(o.sh);
	s = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP, .size = 64 });
	if (o.aliases)
		fail_msg("first object: expected 0 aliases, got %" PRIu64, o.aliases);
	t = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + up, .size = 100 });
	if (o.aliases != 13)
		fail_msg("100 bytes one fold up: expected 13 aliased granules, got %" PRIu64,
			 o.aliases);
	u = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + up + 4096 + 4, .size = 8 });
	if (o.aliases != 15)
		fail_msg("8 bytes at granule offset 4 one fold up: expected 13 + 2 aliased "
			 "granules, got %" PRIu64, o.aliases);
	if (!t || !u || mn_objects_find(&o, HEAP + up) || mn_objects_find(&o, HEAP + up + 4100) ||
	    mn_objects_find(&o, HEAP) != s || mn_objects_find(&o, HEAP + 63) != s)
		fail_msg("expected slots %" PRIu32 " %" PRIu32 ", lookups 0 0 %" PRIu32 " %" PRIu32
			 ", got %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32, t, u, s, s,
			 mn_objects_find(&o, HEAP + up), mn_objects_find(&o, HEAP + up + 4100),
			 mn_objects_find(&o, HEAP), mn_objects_find(&o, HEAP + 63));
	for (uint64_t x = HEAP + up; x < HEAP + up + 100; x++)
		check_guess("aliased", &o, x, t);
	mn_objects_release(&o, t);
	if (o.aliases != 15 || mn_objects_find(&o, HEAP) != s)
		fail_msg("after releasing the aliased object: expected 15 aliases and slot %" PRIu32
			 " at the first, got %" PRIu64 " and %" PRIu32, s, o.aliases,
			 mn_objects_find(&o, HEAP));
	mn_objects_free(&o);
}

/*
 * Guesses where objects overlap, as when the program's frees are lost: every slot's guess at every
 * byte around agrees with mn_objects_find() after each step, an object that another covered in
 * part is never guessed right again (its uncovered bytes included), and a move clears that.
 */
static void test_guess_overlaps(void **state)
{
	struct mn_objects o;
	uint32_t a, b, c;
	char what[64];

	assert_int_equal(mn_objects_init(&o), 0);
	a = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP, .size = 100 });
	c = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + 104, .size = 8 });
	if (!mn_objects_holds(&o, a, HEAP) || !mn_objects_holds(&o, a, HEAP + 99) ||
	    mn_objects_holds(&o, a, HEAP + 100) || !mn_objects_holds(&o, c, HEAP + 104))
		fail_msg("apart: expected slot %" PRIu32 " to hold bytes 0 and 99 and not 100, slot %"
			 PRIu32 " byte 104", a, c);
	b = mn_objects_alloc(&o, &(struct mn_obj){ .addr = HEAP + 40, .size = 20 });
	for (int step = 0; step < 4; step++) {
		snprintf(what, sizeof(what), "overlap step %d", step);
		for (uint64_t x = HEAP - 8; x < HEAP + 200; x++)
			for (uint32_t g = 1; g <= o.n; g++)
				check_guess(what, &o, x, g);
		if (step == 0 && (mn_objects_holds(&o, a, HEAP) || mn_objects_holds(&o, b, HEAP + 40)))
			fail_msg("%s: expected neither overlapping object to hold a byte", what);
		if (step == 0 && !mn_objects_holds(&o, c, HEAP + 111))
			fail_msg("%s: expected slot %" PRIu32 ", untouched, to hold byte 111", what, c);
		if (step == 0)
			mn_objects_release(&o, b);   /* a's granules 5 to 7 are left empty */
		else if (step == 1 && mn_objects_holds(&o, a, HEAP))
			fail_msg("%s: expected slot %" PRIu32 " still not to hold a byte", what, a);
		else if (step == 1)
			mn_objects_move(&o, a, HEAP + 4096, 100);
		else if (step == 2 && !mn_objects_holds(&o, a, HEAP + 4096 + 50))
			fail_msg("%s: expected slot %" PRIu32 ", moved apart, to hold byte 50", what, a);
	}
	mn_objects_free(&o);
}

/*
 * Guesses on random sequences where objects overlap at will (lost frees, a realloc onto a live
 * object), small and bulk-cleared ones: after every operation every live slot is guessed at its
 * edges and inside, as is another at random, and the operation's range with the slot found
 * there and one at random; a guess that holds must be the lookup's.
 */
static void test_guess_random_overlaps(void **state)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct mn_objects o;
		uint32_t live[256];
		unsigned n = 0;
		char what[64];

		rng_state = seed * UINT64_C(0x51afd6ab3c1e0b2d) | 1;
		assert_int_equal(mn_objects_init(&o), 0);
		for (unsigned op = 0; op < 3000; op++) {
			uint64_t size = random_size(MN_OBJ_HEAP), addr = HEAP + below(4 * MiB);
			unsigned r = (unsigned)below(10);

			snprintf(what, sizeof(what), "seed %" PRIu64 " op %u", seed, op);
			if ((r < 5 || n < 4) && n < 256) {
				uint32_t s = mn_objects_alloc(&o, &(struct mn_obj){ .addr = addr,
					.size = size, .kind = MN_OBJ_HEAP });

				assert_true(s != 0);
				live[n++] = s;
			} else {
				unsigned i = (unsigned)below(n);

				if (r < 8) {
					mn_objects_release(&o, live[i]);
					live[i] = live[--n];
				} else {
					mn_objects_move(&o, live[i], addr, size);
				}
			}
			for (uint64_t k = 0; k < 16; k++) {
				uint64_t a = addr + k * extent(size) / 16;

				check_guess(what, &o, a, mn_objects_find(&o, a));
				check_guess(what, &o, a, n ? live[below(n)] : 0);
			}
			for (unsigned i = 0; i < n; i++) {
				const struct mn_obj *x = mn_obj(&o, live[i]);
				uint64_t e = extent(x->size);

				for (uint64_t k = 0; k < 4; k++) {
					check_guess(what, &o, x->addr + k * e / 4, live[i]);
					check_guess(what, &o, x->addr + k * e / 4, live[below(n)]);
				}
				check_guess(what, &o, x->addr + e - 1, live[i]);
			}
		}
		mn_objects_free(&o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_sequences),
		cmocka_unit_test(test_packed_globals),
		cmocka_unit_test(test_slot_reuse),
		cmocka_unit_test(test_granule_tail_and_move),
		cmocka_unit_test(test_release_keeps_later_owner),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_guess_overlaps),
		cmocka_unit_test(test_guess_random_overlaps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
