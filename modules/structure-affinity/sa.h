/*
 * structure-affinity's private header: the module's state (struct affinity) and what its files
 * share.
 *
 *	structure_affinity.c   accesses, streams and loop summaries; setup; the options table
 *	instances.c            data objects and their instances: the heap, stack and global events
 *	section.c              the profile section's schema (backend/schema.h)
 *	emit.c                 its hot data objects, their layouts and streams (put fields)
 *	restore.c              merging runs, and reading back objects and streams (take fields)
 *	affinity.c             StructSlim's arithmetic: strides, sizes, fields, affinities, clusters
 *	cache.c                the cache model of MNEMO_AFFINITY_COST=cache
 *	verified.c             the verified extents loop summaries find their objects in
 *
 * One worker (shard: none): not thread-safe.
 */
#ifndef SA_H
#define SA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "affinity.h"
#include "allocctx.h"
#include "cache.h"
#include "map.h"
#include "objects.h"
#include "sitevec.h"
#include "verified.h"

struct mn_field;
struct mn_module;
struct mn_prof;
struct mn_profile;
struct mn_pnode;
struct mn_run;
struct mn_schema;

/*
 * Settings (README "Options"), read from the program's environment at init by
 * mn_module_options() from sa_options[] (structure_affinity.c), which refuses a value out of range.
 */
enum sa_cost { SA_COST_ACCESSES, SA_COST_CACHE };   /* MNEMO_AFFINITY_COST's choices, in order */

struct options {
	uint64_t top;                /* hot data objects analysed and reported */
	uint64_t l1_bytes, l1_ways, l2_bytes, l2_ways, line;   /* cache geometry */
	uint64_t l1_latency, l2_latency, mem_latency;          /* cycles */
	uint64_t sample;             /* one access in this many is sent (the runtime samples) */
	unsigned cost;               /* enum sa_cost: 1 per access, or the modeled latency */
	double threshold;            /* affinity from which two fields go together */
};

/* A data object: every instance made at one site, or one allocation context (allocctx.h). */
struct dobj {
	uint32_t site;               /* its key in actx: the site, or an allocation context's key */
	enum mn_obj_kind kind;
	uint64_t instances, max_bytes;
	uint64_t accesses, cost;
	bool hot;                    /* in emit(): one of the top, written under `structures` */
};

/*
 * A stream as it is being built: where its last access fell, to difference the next one.  That
 * last access is its thread's (README "Threads"): the other threads' are parked in the state's
 * maps, under (id, thread).
 */
struct stream {
	struct sa_stream s;
	uint32_t dobj;               /* the data object's site */
	uint32_t last_thread;        /* the thread of the last access below; 0: none yet */
	struct dobj *d;              /* its record, once an access looked it up; NULL before */
	uint64_t last_serial;        /* the instance of its last access ... */
	uint64_t last_off;           /* ... and its offset there */
	uint32_t id;                 /* its key among parked last accesses; 0: none given yet */
};

#define SA_CORES 64   /* cache models of cost: cache, one per thread up to this many (README) */

/* The streams of one instruction, one per (loop, data object). */
struct insn {
	struct stream *v;
	uint32_t n, alloc, last;     /* last: the one used last, the cheap guess */
	uint32_t loop;               /* loop_of() the site, when placed */
	uint32_t last_slot;          /* the object its last access found, a guess for the next */
	bool placed;                 /* loop looked up (by insn_of(), not by merge or restore) */
};

struct affinity {
	struct options opt;
	const struct mn_run *run;
	struct mn_objects objs;
	struct mn_sitevec dobjs;     /* struct dobj by site (key of actx) */
	struct mn_allocctx actx;     /* heap data objects' allocation contexts */
	struct mn_sitevec insns;     /* struct insn by load or store site */
	struct sa_cache cache;       /* with cost: cache */
	struct sa_verified verified; /* extents loop summaries found their objects in */
	uint64_t serial;             /* instances made so far */
	uint64_t accesses, cost, unattributed, unattributed_cost;
	uint64_t nomem, unknown_frees;
	uint64_t aliases;            /* aliased granules of runs restored or merged in (this run's
				      * own are objs.aliases) */
	bool conflict;               /* merge() met another run's different options: emit() fails */
	/* Threads (README "Threads: what order it needs"): every thread's events come, each
	 * thread's in its order; those below follow the thread whose events come now. */
	uint32_t thread;             /* that thread (mn_module.thread); 0: never told */
	uint32_t stream_ids;         /* ids given to streams so far (struct stream's id) */
	struct mn_kv64 parked_serial, parked_off;   /* streams' last accesses of other threads */
	struct sa_cache *cores;      /* with cost: cache, the parked caches by core; NULL until a
				      * second thread comes */
	unsigned core;               /* the core a->cache models: (thread - 1) % SA_CORES */
	/* emit(): the hot data objects, by cost (the first opt.top), and those with an access */
	struct dobj **hot;
	size_t nhot;
	uint64_t data_objects;
	/* restore(): the `structures` node, whose streams are read once `objects` is */
	const struct mn_pnode *structures;
};

/* Whether the cache model prices each access (MNEMO_AFFINITY_COST=cache), else each costs 1. */
static inline bool priced(const struct affinity *a)
{
	return a->opt.cost == SA_COST_CACHE;
}

extern const struct mn_module mn_module_structure_affinity;

/* A data object's kind is its instances' (objects.h): "heap", "stack", "global". */
extern const char *const sa_kind_names[MN_OBJ_GLOBAL + 1];

/* structure_affinity.c: the stream of (loop, data object) of instruction in, added if new; NULL
 * without memory. */
struct stream *sa_stream_of(struct insn *in, uint32_t loop, uint32_t dobj);
/* structure_affinity.c: the cores' cache lines into a->cache's counts, their models freed (emit). */
void sa_cores_fold(struct affinity *a);

/* instances.c: the module's handlers of those events. */
void sa_heap_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size);
void sa_heap_alloc_context(void *st, uint32_t site, uint64_t context, uint64_t addr,
			   uint64_t size);
void sa_heap_realloc(void *st, uint32_t site, uint64_t old_addr, uint64_t addr, uint64_t size);
void sa_heap_free(void *st, uint32_t site, uint64_t addr);
void sa_stack_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size);
void sa_stack_free(void *st, uint32_t site, uint64_t addr);
void sa_global(void *st, uint32_t site, uint64_t addr, uint64_t size);

/* section.c: the section's schema, whose fields below emit.c writes and restore.c reads */
extern const struct mn_schema sa_section;
int sa_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec, char *err,
	       size_t errlen);
void sa_merge_counts(struct affinity *a, struct affinity *b);

/* emit.c */
int sa_emit(void *st, struct mn_prof *p);
int sa_put_hot(const struct mn_field *f, const void *row, struct mn_prof *p);
int sa_put_structures(const struct mn_field *f, const void *row, struct mn_prof *p);
int sa_put_objects(const struct mn_field *f, const void *row, struct mn_prof *p);
int sa_put_other_streams(const struct mn_field *f, const void *row, struct mn_prof *p);

/* restore.c */
void sa_merge(void *into, void *from);
int sa_take_structures(const struct mn_field *f, void *row, const struct mn_profile *prof,
		       const struct mn_pnode *n, char *err, size_t errlen);
int sa_take_objects(const struct mn_field *f, void *row, const struct mn_profile *prof,
		    const struct mn_pnode *n, char *err, size_t errlen);
int sa_take_other_streams(const struct mn_field *f, void *row, const struct mn_profile *prof,
			  const struct mn_pnode *n, char *err, size_t errlen);

#endif /* SA_H */
