/*
 * The object table: the objects the profiled program has live (heap objects, stack objects,
 * globals), and the lookup from any address inside one to it, for the modules that attribute
 * accesses to objects (rds-shape's OID manager, object-relative's object database,
 * structure-affinity's data-centric attribution).  One table, so that the shadow layout, the
 * handling of shared granules and the alias accounting are written and tested once.
 *
 *	struct mn_objects objs;                          // in the module state
 *	mn_objects_init(&objs);                          // init
 *	s = mn_objects_alloc(&objs, &(struct mn_obj){ .addr = a, .size = n, .kind = MN_OBJ_HEAP,
 *			     .group = site, .serial = k, .born = now });   // heap_alloc, global
 *	s = mn_objects_at(&objs, a);                     // heap_free, heap_realloc: then
 *	mn_objects_release(&objs, s);                    //   free
 *	mn_objects_move(&objs, s, b, m);                 //   realloc
 *	s = mn_objects_find(&objs, addr);                // load, store: mn_obj(&objs, s)->serial
 *	if (!mn_objects_holds(&objs, guess, addr)) ...   //   or check a guess first: same answer
 *	mn_objects_free(&objs);                          // fini
 *
 * Slots.  An object is a slot of one array (1, 2, ...; 0 is "none"), reused after its release,
 * the last released first: which slot an object gets depends only on the sequence of calls, so a
 * module may iterate by slot and stay deterministic.  The slot is the module's handle.  A module
 * that keeps more per object than struct mn_obj keeps it in its own array indexed by slot, grown
 * before each mn_objects_alloc() to hold slot n + 1, the largest that call can return.
 *
 * Lookup.  Every 8-byte granule of a live object holds its slot in a shadow memory of 4 bytes per
 * granule (backend/shadow.h), written at allocation and cleared at release, behind a cheap
 * filter: every object ever mapped lies in [lo, lo + span), so an address outside is nobody's
 * without touching the shadow.  A lookup is a range check, a tag compare and a load: O(1)
 * whatever the sizes, where a balanced tree (the papers' AVL tree) costs O(log live) dependent
 * cache misses.
 *
 * Shared granules.  Globals are packed (two 4-byte globals in one granule) and an object's size
 * need not be a multiple of 8, so a granule may hold the ends of two objects; the object mapped
 * last owns it.  mn_objects_find() checks that the address lies inside the owner and, when it
 * does not, searches the globals (sorted by address; there are few, registered before main), so
 * every global is found in every byte of it.  A heap or stack object that lost a granule to a later
 * one is not found there.  Heap allocators never put two live objects in one granule (glibc keeps
 * 16-byte alignment and a header between chunks), so a table of heap objects only may use
 * mn_objects_find_granule(), which returns the owner unchecked and touches no record.
 *
 * Guesses.  An access often falls in the object the same instruction's last access found (a loop
 * over an array, a histogram's bins).  mn_objects_holds() checks such a guess in the object's own
 * record, which that last access left in the cache, and skips the shadow.  It answers yes only for
 * an object none of whose granules any other object or alias ever touched (`shared` false): all
 * its granules hold its slot, so mn_objects_find() would return it for every byte of it.  Heap and
 * stack objects share no granule unless the program lost a free.  Packed globals that only share a
 * granule are not marked: the globals' search finds each of them in every byte of it anyway.
 *
 * Aliases.  A granule whose shadow slice another window of the address space owns (shadow.h) is
 * left unmapped and counted in `aliases`: lookups in it find no object.  That costs accuracy, never
 * correctness; a module reports the count in its profile.
 *
 * Memory: 48 bytes per slot (the array keeps its peak size) and 4 per global, plus half the bytes
 * that live objects cover, as shadow.  A released object of 256 KiB or more that shares no granule
 * gives its whole shadow pages back; a smaller one, or one that shares, zeroes its own entries in
 * place, so its pages stay for the next objects there.  Nothing here aborts: without memory,
 * mn_objects_alloc() returns 0 and the program's object goes untracked, which the module counts.
 *
 * Not thread-safe: one table per module state (per data-parallel worker).  The struct is public so
 * the lookups can be inline: read its fields, change them only through the functions, but for the
 * fields of struct mn_obj marked "the module's", which the table stores and never reads.
 */
#ifndef MNEMO_OBJECTS_H
#define MNEMO_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#include "shadow.h" /* installed side by side in include/mnemo/ */

#ifdef __cplusplus
extern "C" {
#endif

enum mn_obj_kind {
	MN_OBJ_HEAP,     /* malloc and friends: moved by realloc, released by free */
	MN_OBJ_STACK,    /* an alloca's lifetime: released when it ends */
	MN_OBJ_GLOBAL,   /* never moved or released; searched for in shared granules */
};

struct mn_obj {
	uint64_t addr, size;     /* [addr, addr + size); size 0 is given one byte */
	uint64_t serial;         /* the module's: its name for the object; kept by a move */
	uint64_t born;           /* the module's: its clock at the allocation */
	uint32_t group;          /* the module's: the object's class (site, shape-graph node) */
	uint32_t next;           /* a free slot: the next free one, 0: none */
	uint8_t kind;            /* enum mn_obj_kind */
	bool live;               /* false: a free slot, whose other fields are stale */
	bool shared;             /* a granule of it is or was another's too, or aliased */
};

struct mn_objects {
	struct mn_shadow *sh;    /* uint32_t slot per 8-byte granule */
	struct mn_obj *v;        /* by slot; v[0] unused */
	uint32_t n, cap;         /* slots used so far (free ones included), allocated */
	uint32_t free;           /* first free slot, 0: none */
	uint32_t nglobals, gcap; /* globals[] used, allocated */
	uint32_t *globals;       /* slots of globals, by increasing address */
	uint64_t lo, span;       /* every object ever mapped lies in [lo, lo + span): the filter */
	uint64_t live, peak;     /* live objects now, at most */
	uint64_t aliases;        /* granules left unmapped because their shadow aliased */
};

/* Creates an empty table.  Returns 0, or the -errno of mn_shadow_create(). */
int mn_objects_init(struct mn_objects *o);
/* Frees the table and its shadow (a zeroed or freed table is fine).  Every slot dies with it. */
void mn_objects_free(struct mn_objects *o);

/*
 * A new live object, a copy of *x (addr, size, kind and the module's fields; live and next are
 * ignored), mapped in the shadow over any object there; a global also joins the sorted globals.
 * Returns its slot, or 0 without memory for the table (then no object changed).
 */
uint32_t mn_objects_alloc(struct mn_objects *o, const struct mn_obj *x);

/*
 * Moves live object s to [addr, addr + size) (realloc): unmaps the old range, maps the new one,
 * keeps every other field.  Not for globals, whose sorted place would go stale.
 */
void mn_objects_move(struct mn_objects *o, uint32_t s, uint64_t addr, uint64_t size);

/* Unmaps live heap or stack object s and frees its slot, to be reused by the next allocation. */
void mn_objects_release(struct mn_objects *o, uint32_t s);

/* The searched half of mn_objects_find(): the global holding a, or 0.  Call it through that. */
uint32_t mn_objects_find_global(const struct mn_objects *o, uint64_t a);

/* Object s (a slot 1 .. n); valid until the next mn_objects_alloc(), which may move the array. */
static inline struct mn_obj *mn_obj(const struct mn_objects *o, uint32_t s)
{
	return &o->v[s];
}

/*
 * The slot the shadow holds for a's granule, or 0: the object mapped last over that granule,
 * which a need not lie inside (past the end of an object whose size is not a multiple of 8, or in
 * a global another global's granule hides); but 0 past the end of the highest object ever mapped,
 * where the filter stops.  For tables whose objects never share a granule, as heap objects do not:
 * there it is mn_objects_find() at the cost of the shadow alone.
 */
static inline uint32_t mn_objects_find_granule(const struct mn_objects *o, uint64_t a)
{
	const uint32_t *m;

	if (a - o->lo >= o->span)
		return 0;
	m = (const uint32_t *)mn_shadow_peek(o->sh, a);
	return m ? *m : 0;
}

/* The slot of the live object holding address a, or 0.  The hot path of every load and store. */
static inline uint32_t mn_objects_find(const struct mn_objects *o, uint64_t a)
{
	uint32_t s;

	/* Here too, so that an address outside every object skips the globals' search. */
	if (a - o->lo >= o->span)
		return 0;
	s = mn_objects_find_granule(o, a);
	if (s) {
		const struct mn_obj *x = &o->v[s];

		if (a - x->addr < (x->size ? x->size : 1))
			return s;
	}
	return o->nglobals ? mn_objects_find_global(o, a) : 0;
}

/*
 * Does live object s (a slot 1 .. n, live or not) hold address a, so that mn_objects_find(o, a)
 * would return s?  False when s shares a granule (see Guesses): then ask mn_objects_find().
 */
static inline bool mn_objects_holds(const struct mn_objects *o, uint32_t s, uint64_t a)
{
	const struct mn_obj *x = &o->v[s];

	return x->live && !x->shared && a - x->addr < (x->size ? x->size : 1);
}

/*
 * The live heap or stack object that starts at addr, or 0: the one a free, a realloc or the end
 * of a stack object names (globals are never released, so never named).
 */
static inline uint32_t mn_objects_at(const struct mn_objects *o, uint64_t addr)
{
	uint32_t s = mn_objects_find(o, addr);

	return s && o->v[s].addr == addr && o->v[s].kind != MN_OBJ_GLOBAL ? s : 0;
}

#ifdef __cplusplus
}
#endif
#endif /* MNEMO_OBJECTS_H */
