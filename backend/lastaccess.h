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

#include "hb.h"
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

struct mn_lastaccess {
	struct mn_shadow **sh;     /* the caller's shadow (a clock reset may replace it) */
	struct mn_loopnest *nest;
	struct mn_nestrows *rows;
	/* A summary's access at site in the current context: its access id, 0 without memory. */
	uint32_t (*aid)(void *arg, uint32_t site);
	const struct mn_module *module;   /* the expansion: its loop_iter, load and store */
	void *arg;                 /* the module's state */
	unsigned wid, nw;          /* this worker, of nw (0: alone) */
	/* Threads (issue 22): NULL until a second program thread appears (mn_lastaccess_threads()) */
	struct mn_shadow *stamp;   /* struct mn_lastaccess_stamp per word */
	struct mn_hb *hb;          /* the caller's happens-before clocks */
	uint64_t stamp0;           /* the stamp of a word's accesses from before then */
};

/*
 * Threads (issue 22): once a second program thread appears, each word's last store and last load
 * since also keep the happens-before stamp (hb.h) of the thread that made it, in a shadow of its
 * own made then, so that a single-threaded run neither makes nor reads it.  A stamp tells its
 * thread too: mn_hb_mine() is true of the current thread's own stamps only.  0 (a word last
 * accessed before then; mn_hb_now() is never 0): stamp0, the main thread's stamp at that point.
 * Written with the word's struct mn_lastaccess_word, and read only where that names an access.
 */
struct mn_lastaccess_stamp {
	uint64_t wstamp, rstamp;
};

/* Makes the shadow of stamps, stamp0 the stamp of what came before, over the caller's hb.  0 or
 * -errno. */
static inline int mn_lastaccess_threads(struct mn_lastaccess *la, struct mn_hb *hb,
					uint64_t stamp0)
{
	la->hb = hb;
	la->stamp0 = stamp0;
	return mn_shadow_create(&la->stamp, 8, sizeof(struct mn_lastaccess_stamp));
}

/* A word's stamp as kept (0: from before the second thread). */
static inline uint64_t mn_lastaccess_stamp_of(const struct mn_lastaccess *la, uint64_t stamp)
{
	return stamp ? stamp : la->stamp0;
}

/* The aliases of the shadow of stamps (shadow.h); then it is freed. */
static inline uint64_t mn_lastaccess_threads_aliases(const struct mn_lastaccess *la)
{
	return la->stamp ? mn_shadow_aliases(la->stamp) : 0;
}

/*
 * Threads and loop summaries: the closed form counts every source as a source of the same thread.
 * So a summary goes in closed form only when mn_lastaccess_mine() finds every word it touches on
 * this worker's pages last stored and loaded by the current thread, or not at all (then the closed
 * form counts what the expansion would); after it, mn_lastaccess_claim() gives the words whose
 * last store or load the loop made (their clock is past inv, the loop's invoke) the current
 * thread's stamp, as the expansion's accesses would have.
 */
bool mn_lastaccess_mine(const struct mn_lastaccess *la, uint64_t T,
			const struct mn_summary_access *acc, unsigned n);
void mn_lastaccess_claim(struct mn_lastaccess *la, uint32_t inv, uint64_t T,
			 const struct mn_summary_access *acc, unsigned n);

static inline void mn_lastaccess_threads_free(struct mn_lastaccess *la)
{
	mn_shadow_destroy(la->stamp);
	la->stamp = NULL;
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
