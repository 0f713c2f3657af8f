/*
 * The session block: what the frontend runtime tells the backends about one profiled run, and what
 * they tell it back.  It lives in the queue's shared memory (mn_queue_extra()), followed by the
 * variable-length data its *_off fields point to (offsets from the start of the block).
 *
 * Shared memory is a file format: change a field and you change MN_SESSION_VERSION.
 *
 *   offset  field
 *   0       magic, version, abi             identify the block; backend refuses a mismatch
 *   ...     fixed configuration             written once by the runtime before any backend starts
 *   ...     end-of-run record               written by the runtime before mn_queue_producer_finish()
 *   ...     backend slots, profile_done     written by the backends (futex words)
 *   sizeof  site table blob, argv blob      the variable part
 *
 * Ordering: the runtime writes the configuration before spawning backends (exec orders it).  It
 * writes the end-of-run record before finishing the queue; the release in mn_queue_producer_finish()
 * and the acquire in mn_queue_pop() order it for the backends, which read it only after the stream
 * ended.  Backend slot states and profile_done are written with release stores and read with
 * acquire loads (queue/barrier.h), and waited on with futexes.
 */
#ifndef MNEMO_SESSION_H
#define MNEMO_SESSION_H

#include <stdint.h>
#include "queue.h"  /* installed side by side in include/mnemo/ */

#define MN_SESSION_MAGIC   UINT64_C(0x314e4f4953534d4e)  /* "NMSSION1" little-endian */
#define MN_SESSION_VERSION 5u  /* 2: ready_off, ready_len; 3: values_off, values_len;
				 * 4: wire.flags, one backend for every module (image,
				 * exec_ended and parent_pid took padding that was 0);
				 * 5: linked units (program_site_count .. units_len) */
#define MN_MAX_MODULES     8
#define MN_MODULE_NAME_MAX 32
#define MN_PATH_MAX        4096

/* mn_session.exec_ended */
enum {
	MN_EXEC_NONE = 0,
	MN_EXEC_ENDED = 1,       /* the image ended by exec: its profile says so */
	MN_EXEC_EMPTY = 2,       /* ... having made no event since its start: no profile */
};

/*
 * The name under which backend 0 of a session holds its profile path while it runs: an abstract
 * unix socket (no file, gone with the process), "\0mnemo-profile-", the program's pid and the
 * path's FNV-1a 64, in hex.  A program that starts with the same path while a process above it
 * holds it was started by that program (system(), posix_spawn()) and takes a path of its own
 * (runtime.c, "Sessions of a process tree"); unrelated runs of one path never see each other's.
 */
static inline unsigned mn_session_claim_name(char out[64], const char *path, int32_t pid)
{
	static const char pre[] = "mnemo-profile-", hex[] = "0123456789abcdef";
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	unsigned n = 0;

	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		h = (h ^ *c) * UINT64_C(0x100000001b3);
	out[n++] = '\0';
	for (const char *c = pre; *c; c++)
		out[n++] = *c;
	for (int i = 28; i >= 0; i -= 4)
		out[n++] = hex[((uint32_t)pid >> i) & 15];
	out[n++] = '-';
	for (int i = 60; i >= 0; i -= 4)
		out[n++] = hex[(h >> i) & 15];
	return n;   /* bytes of the name (it holds no terminating NUL) */
}

enum mn_backend_state {
	MN_BACKEND_NONE = 0,     /* not started yet */
	MN_BACKEND_RUNNING = 1,  /* attached and consuming */
	MN_BACKEND_WRITTEN = 2,  /* its module section is in section_path */
	MN_BACKEND_FAILED = 3,   /* gave up; reason in `why` */
};

/*
 * How a backend that hosts several modules splits them among its worker threads (MNEMO_WORKERS,
 * MNEMO_SPLIT): each module goes whole to one thread, or each module that shards gets a state
 * per thread and each thread the share of every such module's events it owns.  A module that
 * does not shard is always whole; a backend that hosts one module always splits by shard.
 */
enum mn_split {
	MN_SPLIT_MODULE = 0,
	MN_SPLIT_SHARD = 1,
};

enum mn_profile_state {
	MN_PROFILE_PENDING = 0,
	MN_PROFILE_WRITTEN = 1,  /* the leader renamed the complete file into place */
	MN_PROFILE_FAILED = 2,   /* the leader could not write it; it said why on stderr */
};

struct mn_session {
	uint64_t magic;
	uint32_t version;
	uint32_t abi;                       /* MNEMO_ABI_VERSION */

	/* Configuration: written by the runtime before any backend starts. */
	int32_t producer_pid;
	uint32_t nmodules;                  /* modules[]; slot backend[i] is module i's */
	uint32_t workers;                   /* worker threads per backend (MNEMO_WORKERS); 0: unset */
	uint32_t verbose;
	uint32_t site_count;
	uint32_t reproducible;              /* MNEMO_REPRODUCIBLE: no pid, times, resources */
	double start_realtime;              /* CLOCK_REALTIME seconds at program start */
	double start_monotonic;             /* CLOCK_MONOTONIC seconds at program start */
	char output[MN_PATH_MAX];           /* final profile path */
	char modules[MN_MAX_MODULES][MN_MODULE_NAME_MAX];
	struct mn_wire wire;
	uint64_t sites_off, sites_len;      /* the site table blob (runtime/abi.h format) */
	uint64_t argv_off, argv_len;        /* argv, each string NUL-terminated */
	uint32_t argc;
	/* Backend processes: 1, one hosting every module (the default), or nmodules, one per module
	 * (MNEMO_BACKENDS=per-module).  Either way backend[i] is module i's slot. */
	uint32_t nbackends;
	uint32_t split;                     /* enum mn_split: how worker threads share the modules */
	/* Which image of the run this session profiles (runtime.c, "Sessions of a process tree"):
	 * 0 the first, 1 a fork child's or a new process's, 2.. a later image of one process. */
	uint32_t image;
	/* One struct mn_value_set per site id 0..site_count (abi.h), 8-byte aligned, when a module
	 * takes `value`: the backend publishes each site's values there, the program reads them. */
	uint64_t values_off, values_len;

	/* End-of-run record: written by the runtime before mn_queue_producer_finish(). */
	uint32_t ended;                     /* 1 once the fields below are valid */
	int32_t exit_status;                /* 0-255, or -1 when killed by a signal */
	int32_t term_signal;                /* the fatal signal, or 0 */
	uint32_t exec_ended;                /* MN_EXEC_*: the image ended by exec */
	double end_monotonic;
	uint64_t dropped_thread_events;     /* events of threads that found no free lane */
	uint64_t dropped_other_events;      /* events dropped for any other reason */
	char end_reason[256];               /* "", or why events may be missing */

	/* Written by the backends. */
	struct {
		uint32_t state;             /* enum mn_backend_state; futex word */
		int32_t pid;
		uint64_t events;            /* events this backend consumed: while it runs, every
					     * thread's so far, in its first slot (stored after each
					     * buffer, for mnemo run --progress); at its end, each
					     * module's own */
		char section_path[MN_PATH_MAX];
		char why[256];
	} backend[MN_MAX_MODULES];
	uint32_t profile_done;              /* enum mn_profile_state; futex word, written by backend 0 */
	int32_t parent_pid;                 /* the forking process, for a fork child's; else 0 */

	/* Linked units (runtime/unit.h): the site table at sites_off is the program's own
	 * (program_sites_len bytes, ids 1..program_site_count) followed by the lines of every
	 * profiled shared library, at the ids its base gives; site_count counts them all.  Written
	 * with the configuration. */
	uint32_t program_site_count;
	uint32_t units_pad;
	uint64_t program_sites_len;
	uint64_t units_off, units_len;      /* one line per library that registered:
					     * "name \t path \t first \t last \t why \n"; first and
					     * last 0 and why not empty when it was not profiled */
};

static inline const char *mn_session_sites(const struct mn_session *s)
{
	return (const char *)s + s->sites_off;
}

#endif /* MNEMO_SESSION_H */
