/*
 * object-relative's state and what the module's files share (internal: nothing outside
 * modules/object-relative includes it).  object_relative.c says what the module does; the
 * section's schema is in README.md.
 */
#ifndef OBJREL_INTERNAL_H
#define OBJREL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "allocctx.h"
#include "backend.h"
#include "lmad.h"
#include "module.h"
#include "objects.h"
#include "schema.h"
#include "sequitur.h"
#include "sitevec.h"

#define LMADS_MAX 1000000u    /* MNEMO_OBJREL_LMADS and a section's lmad_limit: 1 to this */

/* Lifetime buckets: 0 for lifetime 0, b for lifetimes in [2^(b-1), 2^b), up to b = 64. */
#define LIFE_BUCKETS 65

struct group {
	uint32_t site;               /* its key in the state's actx: a site, or an allocation context */
	bool seen;
	uint8_t kind;                /* enum mn_obj_kind (an MN_FT_ENUM of the section) */
	uint64_t objects, bytes;     /* objects made, sum of their sizes when made */
	uint64_t accesses;           /* its streams' accesses: set by emit(), for the reader */
	/* Lifetimes of its objects so far (freed, then live at end): a log2 histogram, which adds
	 * across runs, where a list for the exact median would not merge (README "Merging"). */
	uint64_t nlife, life_min, life_max;
	uint64_t life_log2[LIFE_BUCKETS];
};

struct stream {
	uint32_t group;
	uint32_t thread;             /* its program thread (README "Threads"); 0 at the end of a run
				      * of one thread (no `thread` written) */
	uint32_t run;                /* index in the state's runs: streams of runs never join */
	bool show_run;               /* emit(): the state holds more than one run, `run` is written */
	struct objrel_lmads l;
};

/* A run the state holds: `runs:` of the section (README "Merging"). */
struct run_id {
	uint64_t key;                /* FNV-1a 64 over the run's state (run_key()) */
	uint64_t events;             /* its clock at the end */
};

struct insn {
	uint32_t site;
	bool store;
	uint64_t accesses, unattributed;
	struct stream *s;            /* s[0..n): one per group it touched, in order of first touch */
	uint32_t n, alloc;
	uint32_t last;               /* index of the stream used last: the cheap guess */
};

/* The horizontal streams of lossless mode, in the order of the profile's `lossless.streams`. */
enum { LL_INSN, LL_GROUP, LL_OBJECT, LL_OFFSET, LL_STREAMS };

struct lossless {
	struct mn_seq *g[LL_STREAMS];  /* the four streams' grammars */
	struct mn_seq *raw;            /* the raw addresses of the same accesses */
	uint64_t unattributed;         /* accesses left out: no object holds their address */
	bool broken;                   /* an append failed: appending stopped, the streams end early */
};

/*
 * What loop summaries learnt of the object in one slot, true while `epoch` is the state's: no
 * object was made, moved or released since, so every address finds what it found then.
 */
struct objcheck {
	uint64_t epoch;              /* the state's epoch when written; older: stale, start over */
	uint64_t spent;              /* addresses of it looked up one by one in that epoch */
	int8_t whole;                /* 1: each byte of it finds it; -1: some byte does not; 0: ? */
};

struct objrel {
	struct mn_objects objs;
	struct lossless *ll;         /* NULL unless MNEMO_OBJREL_LOSSLESS=1 */
	struct mn_sitevec groups;    /* struct group by key of actx (site id, or context) */
	struct mn_allocctx actx;     /* heap groups' allocation contexts (MNEMO_ALLOC_DEPTH) */
	struct mn_vec rows;          /* emit() and restore(): the groups as the section's rows */
	struct mn_sitevec insns;     /* struct insn by site id */
	uint64_t clock;
	uint32_t limit;              /* LMADs per (instruction, group) */
	bool stack;                  /* MNEMO_OBJREL_STACK=1: stack objects are objects */
	/* The settings as read (or_options); limit and stack are the run's, restore() sets them. */
	uint64_t opt_lmads;
	bool opt_lossless;
	uint64_t nomem;              /* events dropped for lack of memory */
	uint64_t unknown_frees;      /* frees and reallocs of addresses no object starts at */
	bool finalized;              /* live objects ended, streams sorted: no more events */
	/* Loop summaries: what they checked of each object (by slot), valid for one epoch. */
	uint64_t epoch;              /* bumped by every event that may change the object table */
	struct objcheck *checks;     /* by slot, checks[0..nchecks); grown on demand */
	uint32_t nchecks;
	/* The runs: none for the state of a live run (emit() makes its one), else restore()'s or
	 * merge()'s, sorted by key then events; streams' `run` index into it. */
	struct run_id *runs;
	uint32_t nruns;
	/*
	 * Threads (README "Threads: what order it needs"): clock above is the clock of `thread`,
	 * whose events come now; the others' are parked in clocks[] (by thread id), others their sum.
	 * born[] says, by slot, which thread made each object and the sum of all clocks then; both
	 * stay NULL while one thread runs.
	 */
	uint32_t thread;             /* 1 (the main thread) until mn_module.thread names another */
	uint64_t *clocks;            /* by thread id, [0, nclocks) */
	uint32_t nclocks;
	uint64_t others;
	struct born { uint32_t thread; uint64_t at; } *born;   /* by slot, [0, nborn) */
	uint32_t nborn;
};

static inline unsigned life_bucket(uint64_t life)
{
	return life ? 64 - (unsigned)__builtin_clzll(life) : 0;
}

/* ---- object_relative.c: events --------------------------------------------------------------- */

/* The group of site, marked seen; NULL without memory. */
struct group *objrel_group_get(struct objrel *r, uint32_t site);
/* Object slot s's lifetime ends now: it joins its group's. */
void objrel_end_object(struct objrel *r, uint32_t s);
/* Object slot s lives until the end of the run, its maker's clock at the end (finalize). */
void objrel_end_live(struct objrel *r, uint32_t s);
/* The stream of instruction in for group, made on first use; NULL without memory. */
struct stream *objrel_stream_of(struct objrel *r, struct insn *in, uint32_t group);
/* One load or store: translated, decomposed, compressed. */
void objrel_on_access(struct objrel *r, uint32_t site, uint64_t addr, bool store);
uint64_t objrel_life_median(const struct group *g);
void objrel_lossless_free(struct lossless *ll);

/* ---- summary.c ------------------------------------------------------------------------------- */

void objrel_loop_summary(void *st, uint32_t site, uint64_t iterations,
			 const struct mn_summary_access *acc, unsigned n);

/* ---- merge.c: the end of a run, runs, merge() ------------------------------------------------ */

int objrel_by_group(const void *a, const void *b, void *r);   /* qsort_r, r the state */
void objrel_finalize(struct objrel *r);
int objrel_runs_materialize(struct objrel *r);
void objrel_merge(void *into, void *from);

/* ---- section.c: emit() and restore() --------------------------------------------------------- */

/* The groups seen, in mn_allocctx_cmp() order (malloc'd, *n of them); NULL and *n 0 when none
 * or without memory. */
struct group **objrel_groups_sorted(const struct objrel *r, size_t *n);

int objrel_emit(void *st, struct mn_prof *p);
int objrel_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		   char *err, size_t errlen);
extern const struct mn_schema objrel_section;

#endif /* OBJREL_INTERNAL_H */
