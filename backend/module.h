/*
 * What a profiling module is: one handler per event it declared in its events.yaml, a merge for
 * data-parallel workers, and an emit that writes its section of the profile (PROMPT Figure 6).
 *
 * A module lives in modules/<name>/ as events.yaml + C sources defining one
 * `const struct mn_module mn_module_<c_name>`, registered by one line in modules/modules.def.
 * Handlers for events the module did not declare stay NULL; arguments it did not declare arrive as 0.
 *
 * Threading: the driver gives each worker thread its own state (state_size bytes, zeroed, then
 * init()).  With shard == MN_SHARD_SITE a worker sees only events whose site it owns; with
 * MN_SHARD_ADDRESS only accesses whose address (>> shard_shift) it owns (and, with shard_worker,
 * every access that spans keys); context events (function, loop, program) reach every worker.
 * At the end merge() folds every worker's state into worker 0's, in worker order, and emit() runs
 * on that state alone.
 *
 * Loop summaries (issue 17): the pass may replace the accesses of a simple loop by
 * one record per access and one closing record at the loop's exit.  The driver turns those back
 * into exactly the loop_invoke, loop_iter, load, store and loop_exit calls the per-access build
 * would have made (value 0), so a module sees no difference unless it sets loop_summary.  A loop
 * that also holds accesses that cannot be summarized (a mixed loop) sends those as they run, with
 * their place in the loop, and the driver interleaves the summarized ones with them: the module
 * sees the per-access calls, loop_summary or not.
 */
#ifndef MNEMO_MODULE_H
#define MNEMO_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct mn_schema;  /* backend/schema.h */
struct mn_shadow;  /* backend/shadow.h */
struct mn_run;  /* the run being profiled: site table, options; see mn_run_* in backend.h */

enum mn_shard {
	MN_SHARD_NONE = 0,    /* one worker only */
	MN_SHARD_SITE,        /* by site id */
	MN_SHARD_ADDRESS,     /* by address >> shard_shift */
};

/*
 * One access of a summarized loop: in iteration k (0-based) it touches size bytes at
 * (start + k * step) & (2^48 - 1).  The accesses of one summary come in the order they execute
 * within an iteration.
 */
struct mn_summary_access {
	uint64_t start;            /* its address in iteration 0 */
	int64_t step;              /* bytes per iteration; negative or 0 allowed */
	uint32_t site;             /* the load or store site */
	uint32_t size;             /* bytes */
	bool store;                /* a store (else a load) */
};

/*
 * A module's settings: environment variables of the profiled program (the backend inherits its
 * environment), declared in one table so that `mnemo --help` prints them with the runtime's and
 * every module parses and refuses values alike.  The module's init() calls mn_module_options()
 * (backend.h) first, which stores each value, or its default, in the state at offset.  A table
 * ends with a row whose env is NULL.
 */
enum mn_option_type {
	MN_OPT_UINT,      /* uint64_t, an integer from min to max */
	MN_OPT_REAL,      /* double, a number from min to max */
	MN_OPT_BOOL,      /* bool: 1 or 0 */
	MN_OPT_CHOICE,    /* unsigned: the index of the value among choices, "accesses|cache" */
	MN_OPT_TEXT,      /* const char *: the text as given (the environment's, or def), for a
			   * value only the module can check, such as a name looked up in the run's
			   * site table; def "" for none */
};

struct mn_option {
	const char *env;          /* MNEMO_AFFINITY_TOP */
	enum mn_option_type type;
	size_t offset;            /* of the field in the module's state (offsetof) */
	const char *def;          /* the default, as a user writes it: "3", "0.8", "cache" */
	double min, max;          /* UINT and REAL */
	const char *choices;      /* CHOICE */
	const char *doc;          /* one line for `mnemo --help`; NULL for a setting only tests use */
};

struct mn_module {
	const char *name;          /* as on the command line and in the profile: "value-pattern" */
	const char *doc;           /* one line for `mnemo --help` */
	size_t state_size;
	enum mn_shard shard;
	unsigned shard_shift;
	/* events.yaml `accesses: pointer`: it hears only the loads and stores whose value is a
	 * pointer (queue.h, MN_WIRE_POINTER).  The module-specs test holds the two together. */
	bool pointer_only;
	/*
	 * Set by a module that takes every thread's events: each thread's in its order, the buffers
	 * of different threads interleaved (queue.h, mn_queue_thread()).  The driver calls it before
	 * a buffer of program thread `thread` (1: the main thread) whenever the worker's last buffer
	 * was another thread's (and before the first), so that what the module keeps per thread (a
	 * site's last address) follows.  NULL: the module gets only the main thread's events, and
	 * the profile says the other threads were left out.  A module that keeps a stack of calls
	 * or loops keeps one per thread and swaps it here (mn_ctx_switch(), mn_loopnest_switch());
	 * one whose state is sums only sets mn_thread_sums (backend.h).
	 */
	void (*thread)(void *st, uint32_t thread);

	/* Returns 0 or -errno; the backend reports a failure and writes no section. */
	int (*init)(void *st, const struct mn_run *run);
	void (*fini)(void *st);

	void (*load)(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size);
	void (*store)(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size);
	void (*pointer_create)(void *st, uint32_t site, uint64_t addr, uint32_t type);
	void (*heap_alloc)(void *st, uint32_t site, uint64_t addr, uint64_t size);
	/*
	 * heap_alloc with the allocation's callers, for a module that lists heap_alloc's `context`
	 * (events.yaml: the innermost call site in bits 0..31, its caller's in 32..63, 0 for none),
	 * which sets this instead of heap_alloc; allocctx.h makes (site, context) a group key.
	 */
	void (*heap_alloc_context)(void *st, uint32_t site, uint64_t context, uint64_t addr,
				   uint64_t size);
	void (*heap_realloc)(void *st, uint32_t site, uint64_t old_addr, uint64_t addr, uint64_t size);
	void (*heap_free)(void *st, uint32_t site, uint64_t addr);
	void (*stack_alloc)(void *st, uint32_t site, uint64_t addr, uint64_t size);
	void (*stack_free)(void *st, uint32_t site, uint64_t addr);
	void (*global)(void *st, uint32_t site, uint64_t addr, uint64_t size);
	void (*func_entry)(void *st, uint32_t site);
	void (*func_exit)(void *st, uint32_t site);
	void (*loop_invoke)(void *st, uint32_t site);
	void (*loop_iter)(void *st, uint32_t site);
	void (*loop_exit)(void *st, uint32_t site);
	void (*program_start)(void *st, uint32_t pid);
	void (*program_end)(void *st, uint32_t pid, uint32_t status);
	/*
	 * Threads (issue 22), for a module that sets .thread: every handler below runs on the
	 * thread .thread last named.
	 *
	 * thread_start: the thread's first event; creator is the thread that called pthread_create
	 * (0: unknown, the main thread's own start, or a thread the program did not create through
	 * pthread_create).  thread_end: its last (it returned, called pthread_exit, or the program
	 * ended with it running); a later thread may reuse nothing of it but its lane.
	 *
	 * sync_acquire / sync_release: a synchronization on `object` (an address: the mutex, the
	 * condition variable, the barrier, the atomic's word, or a key the runtime makes for a
	 * thread's creation and its join), with acquire or release meaning as ThreadSanitizer gives
	 * them: a release's thread's earlier events happen before the events that follow an acquire
	 * of the same object that comes after it.  Order: whatever the interleaving of threads'
	 * buffers, the backend delivers every release before each acquire that came after it in the
	 * program (the queue orders such points by a global ticket), so a module may keep vector
	 * clocks (backend/hb.h) as the events come.  Sent only while the program runs more than one
	 * thread; never to a module whose events.yaml does not list them.
	 */
	void (*thread_start)(void *st, uint32_t thread, uint32_t creator);
	void (*thread_end)(void *st, uint32_t thread);
	void (*sync_acquire)(void *st, uint64_t object);
	void (*sync_release)(void *st, uint64_t object);
	/* A site's value, at least once per distinct value (events.yaml `value`, backend.h). */
	void (*value)(void *st, uint32_t site, uint64_t value);
	/*
	 * Optional, and NULL in every module so far: a summarized loop, whole.  When set, it is
	 * called instead of the driver's expansion, which is, in this order: loop_invoke(site);
	 * iterations times { loop_iter(site); for j in [0, n): load or store(acc[j].site,
	 * (acc[j].start + k * acc[j].step) & (2^48 - 1), 0, acc[j].size) }; loop_exit(site), the
	 * loop events only when the wire sends them (the module's YAML lists them).  Contract: the
	 * state it leaves, and so the profile, must be exactly the one the expansion would have
	 * left.  It is called only for a worker that owns every event (one worker), or, with
	 * shard_worker below, for every worker, which then handles the accesses on its own keys
	 * and every access that spans keys, as shard_worker says.  Otherwise, with several workers,
	 * the driver expands, each worker handling the accesses it owns, because a handler does not
	 * know which share of the addresses or sites its worker owns.  acc[] lives only
	 * for the call.  iterations is as the record says (>= 1 from the pass); n may be 0 (a loop
	 * whose accesses all send nothing: only its loop events).  Called for a mixed loop (one
	 * whose other accesses come as they run) only with mixed_whole below.
	 */
	void (*loop_summary)(void *st, uint32_t site, uint64_t iterations,
			     const struct mn_summary_access *acc, unsigned n);
	/*
	 * Optional: true when the state st leaves after a mixed loop does not depend on where the
	 * loop's summarized accesses fall among its other accesses: the module keeps per-site state
	 * that depends on that site's events alone (as sharding by site assumes), or only counts.
	 * The driver then hands such a loop's summarized accesses to loop_summary at the loop's
	 * close, after its other accesses, which come one by one as they ran (one worker only, as
	 * above).  Asked at each mixed loop's open, so that a setting which models the order of all
	 * accesses (structure-affinity's cache) can say no.
	 */
	bool (*mixed_whole)(const void *st);

	/*
	 * Optional, MN_SHARD_ADDRESS only: tells a worker's state that it is worker id of nworkers
	 * (key k, address >> shard_shift, is its own when k % nworkers == id).  When set, an access
	 * whose bytes lie on more than one key goes to every worker, whole, not only to the owner
	 * of its first byte's key: the module handles the bytes on its own keys, and every worker
	 * sees every such access, in stream order, so that they can number them alike.  Called by
	 * the driver once per state before its first event; never when one worker runs alone
	 * (then the state owns every key).
	 */
	void (*shard_worker)(void *st, unsigned id, unsigned nworkers);

	/*
	 * Optional: the shadow memory (backend/shadow.h) in which the load and store handlers look
	 * up the metadata of the address accessed, if any.  The driver then prefetches that
	 * metadata a few records before it calls the handler, so that the cache misses of accesses
	 * that jump about (pointer chasing) overlap instead of stalling the handler one by one.
	 * Asked once per buffer; a shadow that the module replaces in the middle of one (a reset)
	 * gets stale hints, which cost nothing but the hint: a prefetch never faults.
	 */
	struct mn_shadow *(*shadow)(void *st);

	/*
	 * Folds `from` into `into`; `from` is finalized right after.  Two callers: the data-parallel
	 * workers of one run (their sites or addresses are disjoint) and `mnemo merge`, which folds
	 * the states restore() rebuilt from several runs' profiles (the same sites recur).  For the
	 * second, the result, as emit() writes it, must not depend on the order of the folds:
	 * commutative and associative, byte for byte.  Derived figures (fractions, averages,
	 * advice) are therefore computed in emit() from merged integers, never merged themselves.
	 */
	void (*merge)(void *into, void *from);
	/*
	 * Writes the module's section: the value of the key `<name>:` under `modules:`, as one YAML
	 * mapping.  Every site id it writes goes through mn_prof_site() so the site table lists it.
	 * Returns 0 or -errno.
	 */
	int (*emit)(void *st, struct mn_prof *p);

	/*
	 * For `mnemo merge` (tools/merge.c): rebuilds a state, fresh from init(), from the module's
	 * own section of a profile as emit() wrote it, so that runs fold with merge() and are
	 * written by emit().  emit() of a restored state gives the section back byte for byte.
	 * Returns 0; -EINVAL for a section that does not follow the module's schema, with one line
	 * in err naming the file, line and field at fault (mn_pfield_*(), mn_pnode_errorf()); or
	 * -ENOMEM.  NULL when the module's profiles cannot be merged.
	 */
	int (*restore)(void *st, const struct mn_profile *prof, const struct mn_pnode *section,
		       char *err, size_t errlen);
	/*
	 * The keys of the section's top-level scalars that are settings of the run (value_cap,
	 * granularity, ...): `mnemo merge` refuses profiles whose settings differ, naming both.
	 * NULL-terminated; NULL for none.
	 */
	const char *const *settings;
	/* Settings read from the environment (above); NULL for none. */
	const struct mn_option *options;
	/*
	 * The section's schema (schema.h) when the module declares one, for readers: `mnemo report`
	 * takes each table's weight (struct mn_schema.weight) and its address columns from it.
	 * NULL for a section with no table.
	 */
	const struct mn_schema *schema;
};

#endif /* MNEMO_MODULE_H */
