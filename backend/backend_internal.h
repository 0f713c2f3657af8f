/*
 * Backend internals shared by backend.c, driver.c, leader.c and run.c; never installed.
 */
#ifndef MNEMO_BACKEND_INTERNAL_H
#define MNEMO_BACKEND_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <yaml.h>

#include "abi.h"      /* struct mn_value_set */
#include "backend.h"
#include "barrier.h"
#include "module.h"
#include "profile.h"
#include "profile_internal.h"   /* the writer's extras: mn_prof_emit_event() */
#include "queue.h"
#include "registry.h"
#include "session.h"

/* Event codes of the catalogue (events.yaml `code:`); never renumbered. */
enum mn_event_code {
	MN_EV_LOAD = 1,
	MN_EV_STORE = 2,
	MN_EV_POINTER_CREATE = 3,
	MN_EV_HEAP_ALLOC = 4,
	MN_EV_HEAP_REALLOC = 5,
	MN_EV_HEAP_FREE = 6,
	MN_EV_STACK_ALLOC = 7,
	MN_EV_STACK_FREE = 8,
	MN_EV_GLOBAL = 9,
	MN_EV_FUNC_ENTRY = 10,
	MN_EV_FUNC_EXIT = 11,
	MN_EV_LOOP_INVOKE = 12,
	MN_EV_LOOP_ITER = 13,
	MN_EV_LOOP_EXIT = 14,
	MN_EV_PROGRAM_START = 15,
	MN_EV_PROGRAM_END = 16,
	MN_EV_LOOP_SUMMARY_LOAD = 17,
	MN_EV_LOOP_SUMMARY_STORE = 18,
	MN_EV_LOOP_SUMMARY = 19,
	MN_EV_LOOP_SUMMARY_OPEN = 20,
	MN_EV_MIXED_LOAD = 21,
	MN_EV_MIXED_STORE = 22,
	MN_EV_LOOP_SUMMARY_AT = 23,
	MN_EV_LOOP_SUMMARY_CLOSE = 24,
	MN_EV_VALUE = 25,
	MN_EV_SYNC_ACQUIRE = 26,
	MN_EV_SYNC_RELEASE = 27,
	MN_EV_THREAD_START = 28,
	MN_EV_THREAD_END = 29,
};

/* ---- The run (run.c) ------------------------------------------------------------------------- */

struct mn_run {
	char *blob;                  /* our copy of the site table; sites[] point into it */
	struct mn_run_site *sites;   /* [0..count]; [0] unused */
	uint32_t count;
	unsigned workers;
	bool verbose;
	/* FNV-1a 64 of the blob as the binary carries it: the profile's `binary:` identity. */
	uint64_t blob_hash;
	/* The session's value sets, one per site id 0..count (mn_run_value_seen()), or NULL. */
	struct mn_value_set *values;
};

/* Points run at the session's value sets (nbytes of them); too few for its sites: none. */
void mn_run_values_attach(struct mn_run *run, struct mn_value_set *sets, size_t nbytes);

/* FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3) of len bytes. */
uint64_t mn_fnv1a64(const void *data, size_t len);

/* ---- The registry (registry.c, from modules/modules.def): registry.h ------------------------- */

/* ---- The driver (driver.c) ------------------------------------------------------------------- */

struct mn_mixed_frame;   /* one open mixed loop (driver.c) */

/*
 * One worker: a module state and the share of the events it owns.  Data parallelism (PROMPT 4.2):
 * with N workers, every worker reads every record and handles those whose shard key it owns
 * (execute_if_mine); context events reach all.  backend.c runs N of them (MNEMO_WORKERS) on a
 * thread pool, one job per popped buffer, and merges them in worker order at the end.
 */
struct mn_worker {
	const struct mn_module *mod;
	void *state;                 /* mod->state_size bytes, zeroed, then mod->init() */
	unsigned id;                 /* 0..nworkers-1 */
	unsigned nworkers;
	bool told;                   /* mod->shard_worker() was called (driver.c); zero to start */

	/*
	 * The pending stack of loop summaries (driver.c): loop_summary_load/store records push,
	 * a loop_summary record pops the top n.  It lives across buffers, since a summary's records
	 * may straddle two.  The logical stack is pending[0..npending) then `unstored` entries
	 * that did not fit (growth failed, or pending_max reached) and are known only by their
	 * number; while unstored > 0 every push is unstored, so those always sit on top.  Zero
	 * these fields to start; mn_worker_finish() frees the stack.
	 */
	struct mn_summary_access *pending;
	size_t npending, pending_cap;
	size_t unstored;
	size_t pending_max;          /* at most this many stored entries; 0: MN_PENDING_MAX */

	/*
	 * The open mixed loops (driver.c), innermost last: loop_summary_open pushes a frame,
	 * loop_summary_close pops it.  A frame's summarized accesses stay on the pending stack
	 * until its close, and what is pushed while it is open sits above them.  Opens that found
	 * the frame stack full (frames_max reached, or realloc failed) are known only by their
	 * number, frames_over, and are lost; while frames_over > 0 every open is one of them, so
	 * they always sit on top.  Zero these fields to start; mn_worker_finish() frees the frames.
	 */
	struct mn_mixed_frame *frames;
	size_t nframes, frames_cap;
	size_t frames_over;
	size_t frames_max;           /* at most this many frames; 0: MN_FRAMES_MAX */

	/*
	 * Threads of the program (queue.h, mn_queue_thread()): the pending stack and the open
	 * mixed loops above are the current thread's, `thread` (0 before the first buffer);
	 * other threads' non-empty ones are parked here until a buffer of theirs comes
	 * (mn_worker_thread()).  Zero these to start; mn_worker_finish() frees them.
	 */
	uint32_t thread;
	struct mn_parked *parked;
	size_t nparked, parked_cap;
} __attribute__((aligned(64)));   /* MN_CACHE_LINE: workers on other threads write theirs */

/* Data that threads write often sits on cache lines of its own (no false sharing). */
#define MN_CACHE_LINE 64

/* size bytes (not zeroed) on whole cache lines of their own, or NULL; free() frees them. */
static inline void *mn_lines_alloc(size_t size)
{
	size_t len = (size + MN_CACHE_LINE - 1) & ~(size_t)(MN_CACHE_LINE - 1);

	return aligned_alloc(MN_CACHE_LINE, len ? len : MN_CACHE_LINE);
}

/* The default bound of a worker's pending stack, in entries (24 bytes each): 16 Mi entries,
 * 256 times the largest summary; more means a stream of summary records nobody closes. */
#define MN_PENDING_MAX ((size_t)1 << 24)

/* The default bound of a worker's open mixed loops: loops nest only when a signal handler runs
 * one inside another, so more means loop_summary_close records that never came. */
#define MN_FRAMES_MAX ((size_t)1 << 12)

/* What decoding saw, over every buffer. */
struct mn_decode_stats {
	uint64_t events;             /* well-formed records, but `value` ones: the profile's
				      * `events`, the same in every run of the same input */
	uint64_t values;             /* `value` records, whose number depends on timing */
	uint64_t corrupt;            /* corrupt records (each ends its buffer's decoding) */
	uint64_t summarized;         /* accesses that arrived as loop summaries: iterations * n of
				      * every summary expanded or handed to loop_summary, and of
				      * every mixed loop closed */
	uint64_t lost_summaries;     /* loop_summary records, and mixed loops, whose accesses
				      * were not all on the pending stack: neither expanded nor
				      * counted in summarized; also mixed records that no open
				      * mixed loop took, and mixed loops closed out of turn */
	uint64_t lost_pending;       /* summarized accesses pushed but never closed: by the end,
				      * or by the close of the mixed loop they were pushed in */
} __attribute__((aligned(64)));   /* MN_CACHE_LINE: one worker's, written by its thread */

/* Checks a wire format from the session: lengths and argument positions in range. */
bool mn_wire_valid(const struct mn_wire *w, char *why, size_t whylen);
/*
 * Decodes the records of one buffer (nwords words; a zero word where a record would start is
 * skipped) and calls w's handlers for the ones it owns.  A record with an unknown code or a length
 * that overruns the buffer is corruption: counted, and the rest of the buffer skipped.
 */
void mn_worker_run(struct mn_worker *w, const struct mn_wire *wire, const uint64_t *words,
		   size_t nwords, struct mn_decode_stats *st);
/*
 * One decode for several modules (a lane, run by one thread): decodes the buffer's records once
 * and calls, for each, the handler of every worker ws[0..n) that takes the event and owns it, in
 * that order; st[k] is ws[k]'s.  Each worker sees exactly what mn_worker_run() would show it.
 * n == 1 is mn_worker_run().  n is at most MN_LANE_MAX.
 */
#define MN_LANE_MAX MN_MAX_MODULES
void mn_lane_run(struct mn_worker *const *ws, unsigned n, const struct mn_wire *wire,
		 const uint64_t *words, size_t nwords, struct mn_decode_stats *const *st);
/*
 * Makes w's pending stack and open mixed loops those of program thread `thread`, before a buffer of
 * that thread's records: per-thread order is what a summary's records keep, and a loop of one
 * thread never closes another's.  Parks the current thread's if they are not empty, and tells the
 * module (mn_module.thread).  Returns 0,
 * or -ENOMEM when they could not be parked: then they are dropped as mn_worker_finish() drops
 * them (counted in st->lost_pending).
 */
int mn_worker_thread(struct mn_worker *w, uint32_t thread, struct mn_decode_stats *st);
/*
 * Ends w's stream: entries still on its pending stacks, every thread's (summary records that no
 * loop_summary closed, and the summarized accesses of mixed loops left open) are added to
 * st->lost_pending, and the stacks and the open mixed loops are freed.  st may be NULL (a worker being torn down
 * after a failure: nothing counted).  Safe to call twice.
 */
void mn_worker_finish(struct mn_worker *w, struct mn_decode_stats *st);

/* ---- Shared-memory words: slot states and profile_done --------------------------------------- */

/*
 * Slot states and profile_done are futex words in the session (session.h, "Ordering").  They are
 * stored with mn_store_release() (barrier.h), which publishes what the writer did before (a
 * section file, the slot's why and events), and read with mn_load_acquire() by whoever waits: the
 * leader for slots, the runtime for profile_done.  Every call site names its pair.
 */
/* Wakes every waiter on w, in any process (a shared futex: no FUTEX_PRIVATE_FLAG). */
void mn_word_wake(uint32_t *w);
/* Sleeps while *w == v, at most timeout_ms; returns early on a wake or a change. */
void mn_word_wait(uint32_t *w, uint32_t v, unsigned timeout_ms);

/* ---- Section files (backend.c) --------------------------------------------------------------- */

/*
 * Each backend writes its section to a file of its own run, next to the profile:
 *
 *   <dir>/.<profile name>.<program pid>.<index>.XXXXXX.section     (mkostemps(3) fills XXXXXX)
 *
 * so that runs writing the same profile path never share one (a run is named by its program's
 * pid, and the suffix keeps runs apart that share a pid number, as in two pid namespaces).
 */
#define MN_SECTION_SUFFIX ".section"
/*
 * Writes "<dir>/.<profile name>.<program pid>.<index>." to buf; returns its length, or
 * -ENAMETOOLONG when it does not fit in len bytes with the rest of the name.
 */
int mn_section_prefix(const struct mn_session *s, unsigned index, char *buf, size_t len);
/*
 * True when path is a whole name of backend index's section file in this run (the leader checks a
 * slot's path before removing the file of a backend that died, maybe while writing the path).
 */
bool mn_section_path_ours(const struct mn_session *s, unsigned index, const char *path);

/* ---- The leader (leader.c) ------------------------------------------------------------------- */

/* A thread of the program as a backend saw it (backend.c), by the queue's thread number. */
/* Threads the profile lists (`threads: list:`), by number; the others are counted only. */
#define MN_THREADS_LISTED 64

struct mn_thread_row {
	uint64_t events;             /* records of its buffers, but `value` ones */
	uint64_t buffers;            /* 0: no such thread (a number given to no buffer seen) */
	uint32_t creator;            /* its thread_start's creator (0: unknown) */
	uint32_t site;               /* and the pthread_create call's site (0: unknown) */
	bool started;                /* its first record was a thread_start */
};

struct mn_leader_input {
	struct mn_session *s;
	/* [MN_THREADS_LISTED + 1] by thread number, 0 unused: the threads the profile lists */
	const struct mn_thread_row *threads;
	uint32_t nthreads;           /* threads that sent events; 0: the main thread alone did */
	const struct mn_run *run;    /* the site table, for `sites:` */
	unsigned index;              /* the leader's own index, 0 */
	uint64_t events;             /* events the leader consumed */
	bool stream_ended;           /* pop returned 0 (so the end-of-run record may be read) */
	bool producer_died;
	double stream_end_monotonic; /* when the leader saw the end */
};

/*
 * Waits for every other backend, writes the profile (renamed into place whole), removes this run's
 * section files and sets profile_done.  Returns 0 or -errno (the message is printed).
 */
int mn_leader_finish(const struct mn_leader_input *in);

/* True when process pid is gone: no such process, or a zombie nobody reaped yet. */
bool mn_pid_dead(int pid);

/* Prints "mnemo-backend: <fmt>\n" on stderr. */
void mn_backend_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* MNEMO_BACKEND_INTERNAL_H */
