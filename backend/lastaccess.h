/*
 * Last accesses per word: the shadow (shadow.h) of every 8-byte word holds its last store and the
 * last load since, an access id (accesses.h) and a loop clock (loopnest.h) each, from which a new
 * access finds its memory dependences: read after write, write after write, write after read.
 * Words are sharded among workers a 4 KiB page at a time.  And loop summaries (module.h) in closed
 * form: the dependences of a summarized loop's T iterations counted into rows per loop frame
 * (nestrows.h) at once, and the words' last accesses after it written, as T iterations of single
 * accesses would have; or, where the closed form does not apply, expanded into those accesses.
 * Not thread-safe: one per worker.
 *
 *	mn_lastaccess_shadow(&sh);                       // init: a shadow of last accesses
 *	struct mn_lastaccess la = { &sh, &nest, &rows, aid, &mn_module_x, st };
 *	if (!mn_lastaccess_closed(&la, top, T, acc, n))  // loop_summary, its frame on top
 *		mn_lastaccess_expand(&la, site, T, acc, n);
 */
#ifndef MNEMO_LASTACCESS_H
#define MNEMO_LASTACCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "loopnest.h"
#include "module.h"
#include "nestrows.h"
#include "shadow.h"

#define MN_LASTACCESS_PAGE_SHIFT 12   /* workers own whole 4 KiB pages */

/* The kinds of dependence, as a nestrows kind. */
enum mn_dep_kind { MN_DEP_RAW, MN_DEP_WAR, MN_DEP_WAW };

/* One 8-byte word's shadow. */
struct mn_lastaccess_word {
	uint32_t writer, wclock;   /* the last store's access id (0: never written) and clock */
	uint32_t reader, rclock;   /* the last load since: access id (0: none) and clock */
};

#define MN_LASTACCESS_HINTS 64   /* run_of()'s `which`: slots of lookups that find one run */

struct mn_lastaccess {
	struct mn_shadow **sh;     /* the caller's shadow (a clock reset may replace it) */
	struct mn_loopnest *nest;
	struct mn_nestrows *rows;
	/* A summary's access at site in the current context: its access id, 0 without memory. */
	uint32_t (*aid)(void *arg, uint32_t site);
	const struct mn_module *module;   /* the expansion: its loop_iter, load and store */
	void *arg;                 /* the module's state */
	unsigned wid, nw;          /* this worker, of nw (0: alone) */
	/* Threads (issue 22): none until a second program thread appears (mn_lastaccess_threads()) */
	struct mn_lastaccess_run *runs;   /* [nruns], room for cap; clocks ascending */
	uint32_t nruns, runs_cap;
	uint32_t run_clock;        /* runs[nruns - 1].clock: the current run's first clock */
	uint32_t thread;           /* the current run's thread */
	uint32_t hint[MN_LASTACCESS_HINTS];   /* the runs mn_lastaccess_run_of() found last, by
					       * `which` */
	uint32_t *first;           /* [nbuckets]: per 2^MN_LASTACCESS_BUCKET_SHIFT clocks, the last
				    * run begun at or before the bucket's first clock */
	uint32_t nbuckets, buckets_cap;
};

/*
 * Threads (issue 22): once a second program thread appears, a word's last store and load are
 * told apart by thread, and a cross-thread one needs the happens-before stamp (hb.h) its thread
 * had then.  Both are constant over a RUN: the events of one thread between two changes of its
 * stamp or of the current thread (a switch, a release, a thread's start or end).  So instead of
 * a shadow of stamps, a list of runs, each with the clock (loopnest.h) it began at: a word's
 * clock names its access's run.  mn_lastaccess_run() begins a new run with a tick of the clock,
 * so that no clock is shared by two runs (a tick changes no row: the clock only orders events
 * against frames).  The clock only goes up between resets, so the list is sorted; at a reset
 * (mn_lastaccess_forget()) every word is forgotten and only the current run stays, from clock 0.
 * 16 bytes a run, every run kept (one per switch or release of the program's), and an index of
 * 4 bytes per 1024 clocks up to the last lookup's (at most 16 MiB at a 2^32 clock) that narrows
 * a lookup to the runs of one bucket.
 */
#define MN_LASTACCESS_BUCKET_SHIFT 10   /* clocks a bucket of the runs' index: 1024 */

struct mn_lastaccess_run {
	uint32_t clock;            /* its first clock */
	uint32_t thread;           /* its program thread */
	uint64_t stamp;            /* mn_hb_now() over it */
};

/* The first run: thread's, from clock 0 (every word accessed so far is its), stamped stamp.  0 or
 * -errno. */
int mn_lastaccess_threads(struct mn_lastaccess *la, uint32_t thread, uint64_t stamp);

/* Out of line: a new run (thread, stamp), at a tick of the clock. */
void mn_lastaccess_run_begin(struct mn_lastaccess *la, uint32_t thread, uint64_t stamp);

/* The current thread's stamp is `stamp` now: a new run if the thread or stamp changed. */
static inline void mn_lastaccess_run(struct mn_lastaccess *la, uint32_t thread, uint64_t stamp)
{
	const struct mn_lastaccess_run *r = la->nruns ? &la->runs[la->nruns - 1] : NULL;

	if (r && (r->thread != thread || r->stamp != stamp))
		mn_lastaccess_run_begin(la, thread, stamp);
}

/* The run of an access at clock c (threads begun: nruns > 0).  Out of line: the hot path first
 * asks whether c is the current run's (c >= run_clock).  The run found last for `which` (below
 * MN_LASTACCESS_HINTS: lookups that tend to find one run share one, such as a last store's, or
 * one thread's accesses) is tried first (sources met one after another often share one), then
 * the runs of c's bucket. */
const struct mn_lastaccess_run *mn_lastaccess_run_of(struct mn_lastaccess *la, uint32_t c,
						     unsigned which);

/* Clocks in run r (of mn_lastaccess_run_of()): [r->clock, r->clock + this). */
static inline uint32_t mn_lastaccess_run_span(const struct mn_lastaccess *la,
					      const struct mn_lastaccess_run *r)
{
	return (r + 1 < la->runs + la->nruns ? r[1].clock : la->run_clock) - r->clock;
}

/*
 * Threads and loop summaries: the closed form counts every source as a source of the same thread.
 * So a summary goes in closed form only when mn_lastaccess_mine() finds every word it touches on
 * this worker's pages last stored and loaded by the current thread, or not at all (then the closed
 * form counts what the expansion would).  The words it writes then have the loop's clocks, the
 * current run's.
 */
bool mn_lastaccess_mine(struct mn_lastaccess *la, uint64_t T,
			const struct mn_summary_access *acc, unsigned n);

static inline void mn_lastaccess_threads_free(struct mn_lastaccess *la)
{
	free(la->runs);
	free(la->first);
	la->runs = NULL;
	la->first = NULL;
	la->nruns = la->runs_cap = la->nbuckets = la->buckets_cap = 0;
}

/* A shadow of struct mn_lastaccess_word per word (all zeros: never accessed).  0 or -errno. */
static inline int mn_lastaccess_shadow(struct mn_shadow **sh)
{
	return mn_shadow_create(sh, 8, sizeof(struct mn_lastaccess_word));
}

/* Forgets every word's last accesses (a new shadow: NULL without memory); the old shadow's
 * aliases (shadow.h) returned. */
uint64_t mn_lastaccess_forget(struct mn_lastaccess *la);

/* With several workers: is word w (address >> 3) on one of this worker's pages? */
static inline bool mn_lastaccess_owns(const struct mn_lastaccess *la, int64_t w)
{
	return la->nw <= 1 || ((uint64_t)w >> (MN_LASTACCESS_PAGE_SHIFT - 3)) % la->nw == la->wid;
}

/* One word's shadow w, of the word at address a, of an access by access id aid (spanning pages:
 * one is false). */
typedef void mn_lastaccess_word_fn(void *arg, struct mn_lastaccess_word *w, uint64_t a,
				   uint32_t aid, bool store, bool one);

/*
 * An access [addr, end) by aid that spans pages: word(arg, ...) on each of its words on this
 * worker's pages.  With several workers each counts the rows its words found and logs them by
 * the access's serial (la->rows->span, which the caller numbers: every worker sees every such
 * access), so that merge() counts each row once per access (spans.h).
 */
void mn_lastaccess_span(struct mn_lastaccess *la, uint32_t aid, uint64_t addr, uint64_t end,
			bool store, mn_lastaccess_word_fn *word, void *arg);

/*
 * A summary of T iterations of loop frame l (on top; NULL: none) in closed form: its iterations
 * (mn_loopnest_iter_n()), its dependences and its words' last accesses.  False, having done
 * nothing but intern access ids, when the closed form does not apply: then expand it.
 */
bool mn_lastaccess_closed(struct mn_lastaccess *la, struct mn_loop *l, uint64_t T,
			  const struct mn_summary_access *acc, unsigned n);
/* The summary's iterations and accesses as the driver would send them to this worker: the
 * module's loop_iter, load and store (value 0). */
void mn_lastaccess_expand(struct mn_lastaccess *la, uint32_t site, uint64_t T,
			  const struct mn_summary_access *acc, unsigned n);

#endif /* MNEMO_LASTACCESS_H */
