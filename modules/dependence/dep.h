/*
 * The dependence module's state (module-internal): dependence.c is README's rules, its settings
 * and the module, on backend/loopnest.h, nestrows.h and lastaccess.h; dep_io.c its section.
 */
#ifndef MNEMO_DEP_H
#define MNEMO_DEP_H

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "accesses.h"
#include "backend.h"
#include "lastaccess.h"   /* and loopnest.h, nestrows.h, map.h, shadow.h, spans.h, context.h */
#include "sitevec.h"
#include "hb.h"

/* The key of README's schema (the rows: a row map, map.h). */
enum dep_kind { DEP_RAW = MN_DEP_RAW, DEP_WAR = MN_DEP_WAR, DEP_WAW = MN_DEP_WAW };

/* One row's key, all decoded values (never module-local ids), so that the workers' rows merge
 * without translation.  32 bytes, no implicit padding: a row map's MN_ROWS_KEY_WORDS words. */
struct dep_key {
	uint32_t loop;               /* loop site; 0: the source and destination share no loop */
	uint32_t src, dst;           /* access sites */
	uint32_t src_via, dst_via;   /* function entered from the loop's body; 0: none */
	uint32_t src_ctx, dst_ctx;   /* context ids with --context, else 0 */
	uint8_t kind;                /* enum dep_kind */
	uint8_t carried;
	uint16_t pad;                /* 0 */
};
_Static_assert(sizeof(struct dep_key) == 32, "dep_key is a row map's key of four words");

/* A cross-thread row's key (README, "Threads"): decoded values, 32 bytes, a row map's key; its
 * struct mn_row's count is `count`, its max `ordered` (min: the stamp of the destination access
 * that counted `ordered`, not in the profile). */
struct dep_xkey {
	uint32_t src, dst;           /* access sites */
	uint32_t loop;               /* the destination thread's innermost loop; 0: none */
	uint8_t kind;                /* enum dep_kind */
	uint8_t pad[3];
	uint32_t pad2[4];            /* 0 */
};
_Static_assert(sizeof(struct dep_xkey) == 32, "dep_xkey is a row map's key of four words");

/* A program thread's loop frames, context stack and what its frames owe, parked while other
 * threads' events come (loopnest.h, nestrows.h). */
struct dep_thread {
	struct mn_loopnest_stack nest;
	struct mn_nestrows_owed *owed;
	unsigned owed_cap;
	bool ended;                  /* its thread_end came: freed when another thread's come */
	uint8_t tag;                 /* its access ids' tag (struct dep), 0: none */
	uint32_t tag_from;
};

/* A cross-thread row found by the access ids of its source and destination, its kind and loop:
 * valid while its map's gen is (map.h), so that most instances skip the key's hash and probe. */
struct dep_xcache {
	uint32_t src, dst, loop;
	uint8_t kind;
	unsigned gen;
	struct mn_row *row;
};

#define DEP_XCACHE 512u      /* entries, a power of two */

/* The run (lastaccess.h) a thread's earlier sources were found in last, by the tag of their ids:
 * [lo, lo + span) of its clocks, whose thread and whether they happen before now; valid while
 * gen is struct dep's xgen (it changes at every synchronization, switch and clock reset). */
struct dep_xrun {
	uint32_t gen, lo, span;
	bool foreign, ordered;
};

#define DEP_MODE_TARGET  1u  /* struct dep.mode: MNEMO_DEP_LOOP */
#define DEP_MODE_THREADS 2u  /* a second program thread appeared (and its runs were made) */

#define CTX_DEPTH  64        /* context ids encode the outermost 64 frames */
/* Access ids (accesses.h) as the shadow holds them: the id, and in the top bits the tag of the
 * thread that made the access (struct dep, tag), so that a source's thread is known without a
 * lookup.  Ids above DEP_AID_MASK (67 million accesses) are lost, and counted. */
#define DEP_TAG_SHIFT 26
#define DEP_AID_MASK  ((UINT32_C(1) << DEP_TAG_SHIFT) - 1)
#define DEP_TAGS      64        /* tags 1 .. DEP_TAGS - 1 (0: none) */
_Static_assert(DEP_TAGS == 1u << (32 - DEP_TAG_SHIFT) && DEP_TAGS <= MN_LASTACCESS_HINTS,
	       "a tag fills the id's top bits and names a run lookup's hint slot");

/* Per site: an access site's last context, tag and id (a one-entry cache), or a loop's counts. */
struct site {
	uint32_t ctx, aid;
	uint8_t tag;
	uint64_t invocations, iterations;
	bool loop, target;
};

struct dep {
	struct mn_ctx *ctx;
	struct mn_shadow *sh;      /* struct mn_lastaccess_word per word; NULL without memory */
	struct mn_sitevec sites;   /* struct site */
	const struct mn_run *run;
	struct mn_accesses acc;
	struct mn_rows deps;       /* the rows: struct dep_key -> count, distances */
	bool context, target_mode;
	bool restored;             /* a whole run's, from its profile (`mnemo merge`) */
	const char *loop_opt;      /* MNEMO_DEP_LOOP: "" or the target loops (README rule 8) */
	uint64_t clock_opt;        /* MNEMO_DEP_CLOCK_LIMIT: the clock's limit, smaller in tests */
	bool tags_opt;             /* MNEMO_DEP_TAGS: thread tags in access ids (0 in tests) */
	uint64_t aliases, nomem, resets;
	uint64_t clipped;          /* only from profiles written when accesses were clipped */
	uint64_t closed, expanded;  /* loop summaries taken in closed form, and expanded */
	struct mn_spans span_rows; /* rows counted by accesses that span workers (nestrows.h) */
	struct mn_loopnest nest;
	struct mn_lastaccess last;
	struct mn_nestrows rows;   /* deps through its memo */
	/* Threads (README, "Threads"): all zero until a second program thread appears. */
	uint8_t mode;              /* DEP_MODE_*: the access handler's rare paths */
	bool threads;              /* a second thread appeared: the section has cross_thread */
	uint32_t thread;           /* the program thread whose events come (1: the main thread) */
	struct dep_thread **parked;   /* by thread id, [nparked]: the other threads' */
	uint32_t nparked;
	struct mn_hb *hb;          /* happens-before (hb.h) */
	struct mn_rows cross;      /* cross-thread rows: struct dep_xkey -> count, ordered */
	struct dep_xcache *xcache; /* [DEP_XCACHE] recent cross rows by access ids (cross()) */
	struct mn_spans cross_spans;   /* those counted by accesses that span workers */
	/* The current thread's tag, interned with its accesses (accesses.h) from clock tag_from on,
	 * so that a source's id names its thread without a lookup of its run (lastaccess.h): each
	 * live thread holds one while one is free (tags_used, bit 0 always set); 0: none. */
	uint8_t tag;
	uint32_t tag_from;
	uint64_t tags_used;
	struct dep_xrun xrun[DEP_TAGS];   /* by tag */
	uint32_t xgen;
};

/* The access (accesses.h) of a shadow's access id. */
static inline const struct mn_access *access_of(const struct dep *d, uint32_t aid)
{
	return &d->acc.acc[aid & DEP_AID_MASK];
}

/* Every count still owed or pending into the rows, every thread's: before they are read (merge,
 * emit). */
void dep_flush(struct dep *d);

/* dep_io.c */
void dep_merge(void *into, void *from);
int dep_emit(void *st, struct mn_prof *p);
int dep_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *section,
		char *err, size_t errlen);
extern const struct mn_schema dep_schema;

extern const struct mn_module mn_module_dependence;   /* dependence.c */

#endif /* MNEMO_DEP_H */
