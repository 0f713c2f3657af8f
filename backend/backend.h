/*
 * What the backend offers its modules: the run being profiled (struct mn_run), chiefly its site
 * table, so a module can size per-site arrays and say what a site is.
 *
 * A module gets the run in init() (module.h) and may keep the pointer: the run outlives every
 * module state.  Tests and tools make their own with mn_run_create().  Every mn_run_* accessor
 * accepts a NULL run and answers as for an empty site table, so a module can be driven without one.
 *
 * The site table comes from the profiled binary (runtime/abi.h): ids are dense from 1, so
 * mn_run_site_count() is also the highest id, and a flat array of site_count + 1 entries indexed by
 * id holds per-site state.  Ids above the count can still arrive (a corrupt record, or code whose
 * table was not loaded): grow, or ignore, but never index blindly.
 */
#ifndef MNEMO_BACKEND_H
#define MNEMO_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mn_run;

/* One line of the site table.  (struct mn_site, in profile.h, is the profile reader's row.) */
struct mn_run_site {
	const char *kind;       /* load, store, pointer, alloc, realloc, free, stack, global,
				 * function, loop (runtime/abi.h) */
	const char *function;   /* enclosing function, demangled */
	const char *file;       /* "" without debug info */
	uint32_t line, column;  /* 0 without debug info */
	const char *name;       /* callee, variable or type name; "" when none; "ptr" for a load
				 * or store whose value is a pointer (mn_run_site_pointer()),
				 * "double" or "float" for one whose value is one */
	uint64_t type_size;     /* bytes of the allocated or declared type; 0 when unknown */
	uint32_t loop;          /* load, store: site of the innermost loop holding it in its
				 * function; 0 outside every loop, and in mnemo-sites/1 tables */
	const char *fields;     /* alloc, realloc, stack, global: the structure's layout,
				 * "Name/size:field@offset,..." (pass/README.md); "" when none */
	bool line_nearest;      /* line, column: the nearest located instruction's, the site's
				 * own having no line (mnemo-sites/3) */
	const char *inlined_into; /* inlined code: the function holding the instruction, while
				   * function is the one the line belongs to; "" otherwise */
	const char *inlined_at; /* inlined code: the inlining calls, "file:line:col < ..." */
};

/*
 * Parses a site table blob (len bytes, "mnemo-sites/3\n" then one line of 12 fields per id, or
 * "mnemo-sites/2\n" and lines of 9, or "mnemo-sites/1\n" and lines of 7, from older passes)
 * into a new run.  An empty blob (len 0)
 * gives a run with no sites.  Returns 0, -ENOMEM, or -EINVAL for a malformed blob, and then, when
 * why is not NULL, writes the reason into why[0..whylen), e.g.
 * "site table line 7: 6 fields, expected 9".
 */
int mn_run_create(struct mn_run **rp, const char *blob, size_t len, char *why, size_t whylen);
void mn_run_destroy(struct mn_run *run);

struct mn_site;  /* a row of a profile's `sites:` (profile.h) */

/*
 * A run for the site table a profile tells (mnemo merge, which restores modules' sections on it):
 * a mnemo-sites/3 table of count lines, made from rows (sorted by increasing id; ids 0 and above
 * count are left out, and of rows with one id the first counts), with an "unknown" line for every
 * id the rows do not have.  Tabs and newlines in a row's strings become spaces.  Returns what
 * mn_run_create() does; the table costs about 16 bytes per unknown id, so callers bound count.
 */
int mn_run_from_sites(struct mn_run **rp, const struct mn_site *const *rows, size_t n,
		      uint32_t count, char *why, size_t whylen);

/* The highest site id (ids are 1..count); 0 for no table. */
uint32_t mn_run_site_count(const struct mn_run *run);
/* The site table's line for site, or NULL for 0 and for ids the table does not have. */
const struct mn_run_site *mn_run_site(const struct mn_run *run, uint32_t site);
/* Its kind ("load", "store", ...), or "" for ids the table does not have. */
const char *mn_run_site_kind(const struct mn_run *run, uint32_t site);

/* Whether s (NULL: no site) is a load or store whose value is a pointer, an address. */
static inline bool mn_run_site_pointer(const struct mn_run_site *s)
{
	return s && (!strcmp(s->kind, "load") || !strcmp(s->kind, "store")) &&
	       !strcmp(s->name, "ptr");
}

/*
 * For a module that takes the `value` event (events.yaml): the program sends a site's value only
 * while the site's published set lacks it (runtime/abi.h, struct mn_value_set), so the
 * module sees every distinct value of a site at least once, and must publish each value it has
 * seen, or its values keep coming.  mn_run_value_seen() publishes one value of load or store site
 * `site` (up to MN_VALUE_SET_MAX; a value already there, or one past that, changes nothing);
 * mn_run_value_all() says the module needs no more of the site's values.  Publish only values the
 * module has seen: the program stops sending what is published.  A site's events all reach one
 * worker (the module shards by site, or not at all: spec.h), which is the only writer of its slot.
 * No-ops when the program's modules take no `value`, and with a NULL run (unit tests).
 */
void mn_run_value_seen(const struct mn_run *run, uint32_t site, uint64_t value);
void mn_run_value_all(const struct mn_run *run, uint32_t site);

/* Worker threads per backend process (MNEMO_WORKERS), at least 1. */
unsigned mn_run_workers(const struct mn_run *run);
/* MNEMO_VERBOSE: modules may say what they do on stderr, one line per thing. */
bool mn_run_verbose(const struct mn_run *run);

struct mn_module;
struct mn_option;
/*
 * Reads the module's settings (m->options, module.h) from the environment into its state st:
 * each value, or its default when the variable is unset or empty.  Returns 0, or -EINVAL after
 * one line on stderr naming the variable, its value and what was expected:
 *   mnemo: structure-affinity: MNEMO_AFFINITY_TOP='x': expected an integer from 1 to 1000000
 */
int mn_module_options(const struct mn_module *m, void *st);
/* Writes "NAME=N" (or "=1", "=a|b") for option o into buf, for help texts. */
void mn_option_usage(const struct mn_option *o, char *buf, size_t len);

/*
 * A .thread hook (module.h) for a module whose state does not depend on the order of its events
 * across threads, only on each one's count (sums per site, per word): it keeps nothing per thread,
 * and takes every thread's events.
 */
void mn_thread_sums(void *st, uint32_t thread);

#ifdef __cplusplus
}
#endif
#endif /* MNEMO_BACKEND_H */
