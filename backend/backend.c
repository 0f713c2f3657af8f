/*
 * mnemo-backend: one process per profiling module.  The profiled program's runtime (or `mnemo run`)
 * starts it as `mnemo-backend --fd N --index I [--numa-node K]`: it attaches to the event queue in
 * the inherited memfd as consumer I, binds itself to NUMA node K (where the runtime placed the
 * queue's buffers), runs module session.modules[I] over every event, writes the module's section
 * to a temporary file of its own run (mn_section_prefix()), and reports through its slot in the
 * session block (frontend-lib/session.h).  Backend 0 is the leader: it then gathers every section
 * into the profile (leader.c).
 *
 * Life of one backend (docs/internals.md, "Backend"):
 *
 *   attach ── validate session ── slot: pid, RUNNING ── [bind to node] ── find module ── init
 *     ── pop/decode/dispatch ── stream ended ── emit section ── slot: WRITTEN ── fini
 *     ── [leader: profile] [others: wait for the profile, remove the section] ── detach
 *
 * Failure anywhere after the slot is known sets it FAILED with a reason, prints one line, and
 * leaves the queue so the producer never waits for a consumer that stopped.  The one exception is
 * the leader when other modules run: it goes on draining the queue (without a module) so that it
 * still sees the end of the stream and can write the other modules' sections into the profile.
 *
 * Nothing here can hang: the queue ends the stream when the producer dies, and the leader's wait
 * for the others treats a dead backend as failed.
 */
#define _GNU_SOURCE   /* mkostemps */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include <numa.h>

#include "abi.h"
#include "backend_internal.h"
#include "pool.h"

#ifndef MNEMO_VERSION
#define MNEMO_VERSION "unknown"
#endif

#define WAIT_SLICE_MS     100   /* futex wait between liveness checks */
#define START_TIMEOUT_S   10.0  /* as the leader's: a leader not started by then never will */

void mn_backend_msg(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* One write, so lines of concurrent backends do not interleave. */
	dprintf(STDERR_FILENO, "mnemo-backend: %s\n", buf);
}

static double monotonic_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- NUMA ------------------------------------------------------------------------------------ */

/* Whether libnuma's complaints are printed: the session's verbose flag, known before binding. */
static bool numa_verbose;

/*
 * libnuma reports failed calls through these two functions, which a program may define in its
 * place (numa(3)); libnuma's own print "libnuma: ..." on stderr, which is the profiled program's.
 * A binding that fails costs only speed, so ours speak only in verbose mode.  Default visibility:
 * libnuma's calls must bind to them.
 */
__attribute__((visibility("default"), format(printf, 2, 3)))
void numa_warn(int num, char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (!numa_verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mn_backend_msg("NUMA: %s", buf);
}

__attribute__((visibility("default"))) void numa_error(char *where)
{
	if (numa_verbose)
		mn_backend_msg("NUMA: %s: %s", where, strerror(errno));
}

/*
 * Binds this process to the CPUs of NUMA node `node` (the worker threads it starts later inherit
 * that) and prefers the node's memory for everything it allocates from now on: module state,
 * shadow memory, maps.  The queue's buffers are there already (mn_queue_place() in the runtime).
 * Only speed is at stake: on failure it says why in verbose mode and runs unbound.
 */
static void bind_to_node(const char *name, int node, bool verbose)
{
	numa_verbose = verbose;
	if (numa_available() < 0) {
		if (verbose)
			mn_backend_msg("%s: NUMA node %d: the kernel has no NUMA support; running "
				       "unbound", name, node);
		return;
	}
	if (node > numa_max_node() || !numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)node)) {
		if (verbose)
			mn_backend_msg("%s: NUMA node %d: not a memory node this process may use; "
				       "running unbound", name, node);
		return;
	}
	if (numa_run_on_node(node)) {
		if (verbose)
			mn_backend_msg("%s: cannot run on NUMA node %d: %s; running unbound", name,
				       node, strerror(errno));
		return;
	}
	numa_set_preferred(node);
	if (verbose)
		mn_backend_msg("%s: bound to NUMA node %d", name, node);
}

/* ---- One backend's run ----------------------------------------------------------------------- */

struct backend {
	struct mn_queue *q;
	struct mn_session *s;
	unsigned index;
	char name[MN_MODULE_NAME_MAX + 1];   /* session.modules[index], NUL-terminated */
	const struct mn_module *mod;          /* NULL: unknown, or failed and draining */
	struct mn_run *run;
	struct mn_worker *workers;            /* [nworkers]: one module state each */
	struct mn_decode_stats *wstats;       /* [nworkers]: what each one decoded */
	unsigned nworkers;
	unsigned ninit;                       /* workers[0..ninit) passed init() */
	struct mn_pool *pool;                 /* nworkers - 1 threads; worker 0 is the main thread */
	bool failed;                          /* the slot says FAILED */
	struct mn_decode_stats stats;         /* what the stream held (worker 0's view) */
};

/* Finalizes and frees every worker's state, the workers and the pool. */
static void workers_free(struct backend *b)
{
	mn_pool_destroy(b->pool);
	b->pool = NULL;
	for (unsigned i = 0; b->workers && i < b->nworkers; i++) {
		mn_worker_finish(&b->workers[i], NULL);
		if (i < b->ninit && b->mod->fini)
			b->mod->fini(b->workers[i].state);
		free(b->workers[i].state);
	}
	free(b->workers);
	free(b->wstats);
	b->workers = NULL;
	b->wstats = NULL;
	b->nworkers = b->ninit = 0;
}

/*
 * Marks this backend's slot FAILED with a reason and prints "mnemo-backend: <module>: <why>".
 * The module, if any, stops receiving events; its state is finalized.
 */
static void fail(struct backend *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct backend *b, const char *fmt, ...)
{
	__typeof__(b->s->backend[0]) *slot = &b->s->backend[b->index];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(slot->why, sizeof(slot->why), fmt, ap);
	va_end(ap);
	mn_backend_msg("%s: %s", b->name[0] ? b->name : "(no module)", slot->why);
	if (b->mod)
		workers_free(b);
	b->mod = NULL;
	b->failed = true;
	/* Publishes `why`; pairs with the acquire load in the leader's wait (leader.c). */
	mn_store_release(&slot->state, MN_BACKEND_FAILED);
	mn_word_wake(&slot->state);
}

/* Does [off, off + len) lie in the extra region, after the session block? */
static bool blob_in(const struct mn_session *s, uint64_t off, uint64_t len, size_t extra)
{
	return !len || (off >= sizeof(*s) && off <= extra && len <= extra - off);
}

/*
 * Checks the session block (in extra bytes of shared memory); false with a reason when this
 * backend cannot work with it.
 */
static bool session_valid(const struct mn_session *s, size_t extra, unsigned index, char *why,
			  size_t whylen)
{
	char wire_why[160];

	if (extra < sizeof(*s)) {
		snprintf(why, whylen, "the queue's session block is %zu bytes, expected %zu",
			 extra, sizeof(*s));
		return false;
	}

	if (s->magic != MN_SESSION_MAGIC) {
		snprintf(why, whylen, "the queue carries no Mnemo session (bad magic %#llx)",
			 (unsigned long long)s->magic);
		return false;
	}
	if (s->version != MN_SESSION_VERSION || s->abi != MNEMO_ABI_VERSION) {
		snprintf(why, whylen,
			 "session version %u, ABI %u; this backend speaks version %u, ABI %u "
			 "(the program and mnemo-backend come from different Mnemo builds)",
			 s->version, s->abi, MN_SESSION_VERSION, MNEMO_ABI_VERSION);
		return false;
	}
	if (s->nmodules == 0 || s->nmodules > MN_MAX_MODULES || index >= s->nmodules) {
		snprintf(why, whylen, "consumer index %u, but the session has %u modules "
			 "(at most %d)", index, s->nmodules, MN_MAX_MODULES);
		return false;
	}
	if (!memchr(s->output, '\0', sizeof(s->output)) || !s->output[0]) {
		snprintf(why, whylen, "the session names no output path");
		return false;
	}
	if (!blob_in(s, s->sites_off, s->sites_len, extra) ||
	    !blob_in(s, s->argv_off, s->argv_len, extra) ||
	    !blob_in(s, s->values_off, s->values_len, extra) || s->values_off % 8) {
		snprintf(why, whylen, "corrupt session: the site table, argv or value sets lie "
			 "outside it");
		return false;
	}
	if (!mn_wire_valid(&s->wire, wire_why, sizeof(wire_why))) {
		snprintf(why, whylen, "corrupt wire format: %s", wire_why);
		return false;
	}
	return true;
}

/* Finds the module, loads the site table and initializes the worker; fail() on any error. */
static void start_module(struct backend *b)
{
	const struct mn_session *s = b->s;
	char why[200] = "";
	int err;

	b->mod = mn_module_find(b->name);
	if (!b->mod) {
		char known[160] = "";
		size_t len = 0;

		for (size_t i = 0; i < mn_module_count() && len < sizeof(known); i++)
			len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
						i ? ", " : "", mn_module_at(i)->name);
		fail(b, "unknown module (this mnemo-backend has: %s)", known);
		return;
	}
	err = mn_run_create(&b->run, s->sites_len ? mn_session_sites(s) : NULL, s->sites_len, why,
			    sizeof(why));
	if (err) {
		fail(b, "cannot load the site table: %s", err == -EINVAL ? why : strerror(-err));
		return;
	}
	if (s->values_len)
		mn_run_values_attach(b->run, (struct mn_value_set *)((char *)s + s->values_off),
				     s->values_len);
	b->run->verbose = s->verbose != 0;
	b->run->workers = s->workers ? s->workers : 1;
	if (s->site_count && s->site_count != b->run->count && s->verbose)
		mn_backend_msg("%s: the session says %u sites, the table has %u", b->name,
			       s->site_count, b->run->count);

	/*
	 * Data parallelism (PROMPT 4.2): nworkers states, each fed every buffer by its own thread and
	 * handling the events it owns (driver.c); merged in worker order at the end.  A module that
	 * does not shard, or cannot merge, runs one worker whatever was asked.
	 */
	unsigned n = mn_run_workers(b->run);
	if (n > 1 && (b->mod->shard == MN_SHARD_NONE || !b->mod->merge)) {
		if (s->verbose)
			mn_backend_msg("%s: the module does not shard its events; running 1 worker, "
				       "not %u", b->name, n);
		n = 1;
	}
	b->workers = calloc(n, sizeof(*b->workers));
	b->wstats = calloc(n, sizeof(*b->wstats));
	if (!b->workers || !b->wstats) {
		fail(b, "cannot allocate %u workers: %s", n, strerror(ENOMEM));
		return;
	}
	b->nworkers = n;
	for (unsigned i = 0; i < n; i++) {
		struct mn_worker *w = &b->workers[i];

		*w = (struct mn_worker){ .mod = b->mod, .id = i, .nworkers = n };
		w->state = calloc(1, b->mod->state_size ? b->mod->state_size : 1);
		if (!w->state) {
			fail(b, "cannot allocate its state: %s", strerror(ENOMEM));
			return;
		}
		err = b->mod->init ? b->mod->init(w->state, b->run) : 0;
		if (err) {
			fail(b, "cannot start: %s", strerror(err < 0 ? -err : err));
			return;
		}
		b->ninit = i + 1;
	}
	err = mn_pool_create(&b->pool, n - 1);
	if (err) {
		fail(b, "cannot start %u worker threads: %s", n - 1, strerror(-err));
		return;
	}
}

/* Worker i's share of one buffer: it decodes every record and handles the ones it owns. */
struct job {
	struct backend *b;
	const uint64_t *words;
	size_t n;
};

static void job_run(void *arg, unsigned i)
{
	const struct job *j = arg;

	mn_worker_run(&j->b->workers[i], &j->b->s->wire, j->words, j->n, &j->b->wstats[i]);
}

/* Folds every worker into worker 0, in worker order, and frees them (not worker 0). */
static void workers_merge(struct backend *b)
{
	for (unsigned i = 1; i < b->nworkers; i++) {
		b->mod->merge(b->workers[0].state, b->workers[i].state);
		if (b->mod->fini)
			b->mod->fini(b->workers[i].state);
		free(b->workers[i].state);
		b->workers[i].state = NULL;
	}
	b->ninit = b->nworkers ? 1 : 0;
	mn_pool_destroy(b->pool);
	b->pool = NULL;
}

/* Pops every buffer until the stream ends; returns 0 or the queue's -errno. */
static int consume(struct backend *b)
{
	const uint64_t *words;
	size_t n;
	int r;

	while ((r = mn_queue_pop(b->q, &words, &n)) > 0) {
		if (b->mod && b->nworkers == 1) {
			mn_worker_run(&b->workers[0], &b->s->wire, words, n, &b->wstats[0]);
		} else if (b->mod) {
			struct job j = { b, words, n };

			/* Every worker is done with the buffer before it goes back to the queue. */
			mn_pool_run(b->pool, job_run, &j);
		}
		mn_queue_release(b->q);
	}
	/* The stream is over: what is still pending will never be closed.  Every worker decoded the
	 * same records: worker 0 speaks for the stream (summaries counted once, not per worker). */
	if (b->mod) {
		for (unsigned i = 0; i < b->nworkers; i++)
			mn_worker_finish(&b->workers[i], &b->wstats[i]);
		b->stats = b->wstats[0];
	}
	return r;
}

/* ---- The section file ------------------------------------------------------------------------ */

int mn_section_prefix(const struct mn_session *s, unsigned index, char *buf, size_t len)
{
	const char *out = s->output, *slash = strrchr(out, '/');
	int n;

	if (slash)
		n = snprintf(buf, len, "%.*s/.%s.%d.%u.", (int)(slash - out), out, slash + 1,
			     (int)s->producer_pid, index);
	else
		n = snprintf(buf, len, ".%s.%d.%u.", out, (int)s->producer_pid, index);
	if (n < 0 || (size_t)n + sizeof("XXXXXX" MN_SECTION_SUFFIX) > len)
		return -ENAMETOOLONG;
	return n;
}

bool mn_section_path_ours(const struct mn_session *s, unsigned index, const char *path)
{
	char prefix[MN_PATH_MAX];
	int n = mn_section_prefix(s, index, prefix, sizeof(prefix));
	size_t len = strnlen(path, MN_PATH_MAX);

	return n > 0 && len == (size_t)n + strlen("XXXXXX" MN_SECTION_SUFFIX) &&
	       !strncmp(path, prefix, (size_t)n) && !strcmp(path + n + 6, MN_SECTION_SUFFIX);
}

/*
 * Creates this backend's section file, its name (mn_section_prefix()) written straight into
 * path, the slot's section_path, so that the leader can remove the file whatever happens to this
 * backend next.  Returns the open descriptor (mode 0600), or -errno.
 */
static int section_create(const struct backend *b, char *path, size_t len)
{
	int n = mn_section_prefix(b->s, b->index, path, len);
	int fd;

	if (n < 0)
		return n;
	memcpy(path + n, "XXXXXX" MN_SECTION_SUFFIX, sizeof("XXXXXX" MN_SECTION_SUFFIX));
	fd = mkostemps(path, (int)strlen(MN_SECTION_SUFFIX), O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		/* The message names the template, not the last name tried. */
		memcpy(path + n, "XXXXXX", 6);
	}
	return fd;
}

/*
 * Writes the section file to fd, the open file path (section_create()), and closes it; returns 0,
 * or -errno with the file removed.  The file is a small frame around the module's own section,
 * from which the leader takes the section verbatim and the site ids it references (the leader
 * parses the file twice: sites_used comes last because it is known only once emit() returned).
 *
 *   format: mnemo-section/1
 *   module: value-pattern
 *   events: 123456          # records this backend decoded
 *   corrupt: 0              # buffers cut short by a corrupt record
 *   summarized: 0           # accesses that arrived as loop summaries
 *   lost_summaries: 0       # loop summaries lost: their accesses were not all pending
 *   lost_pending: 0         # summarized accesses no loop summary closed
 *   section: {...}          # what emit() wrote
 *   peak_rss_kib: 5120      # this backend's peak resident memory, emit included
 *   cpu_us: 81234           # its user + system CPU time
 *   sites_used: [3, 12]
 */
static int write_section(struct backend *b, int fd, const char *path)
{
	struct mn_prof *p;
	const uint64_t *bits;
	struct rusage ru;
	size_t nbits;
	FILE *f;
	int err, err2;

	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(path);
		return err;
	}
	err = mn_prof_open(&p, f);
	if (err) {
		fclose(f);
		unlink(path);
		return err;
	}
	mn_prof_map_begin(p);
	mn_prof_kv_str(p, "format", "mnemo-section/1");
	mn_prof_kv_str(p, "module", b->name);
	mn_prof_kv_u64(p, "events", b->stats.events);
	mn_prof_kv_u64(p, "corrupt", b->stats.corrupt);
	mn_prof_kv_u64(p, "summarized", b->stats.summarized);
	mn_prof_kv_u64(p, "lost_summaries", b->stats.lost_summaries);
	mn_prof_kv_u64(p, "lost_pending", b->stats.lost_pending);
	mn_prof_key(p, "section");
	if (b->mod->emit) {
		err = b->mod->emit(b->workers[0].state, p);
	} else {
		mn_prof_map_begin(p);
		mn_prof_map_end(p);
	}
	if (!getrusage(RUSAGE_SELF, &ru)) {
		mn_prof_kv_u64(p, "peak_rss_kib", (uint64_t)ru.ru_maxrss);
		mn_prof_kv_u64(p, "cpu_us", (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
					    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec));
	}
	mn_prof_key(p, "sites_used");
	mn_prof_seq_begin_flow(p);
	bits = mn_prof_sites_used(p, &nbits);
	for (size_t w = 0; bits && w < nbits / 64; w++)
		for (uint64_t m = bits[w]; m; m &= m - 1)
			mn_prof_u64(p, w * 64 + (unsigned)__builtin_ctzll(m));
	mn_prof_seq_end(p);
	mn_prof_map_end(p);
	err2 = mn_prof_close(p);
	if (!err)
		err = err2;
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		unlink(path);
	return err;
}

/*
 * The folder of path, to name it in a slot's `why` (256 bytes) ahead of the cause: at most
 * WHY_PATH_MAX bytes of it, its end after "..." when it is longer.  Returns buf.
 */
#define WHY_PATH_MAX 120
static const char *why_dir(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (!slash)
		snprintf(buf, len, ".");
	else if (!n)
		snprintf(buf, len, "/");
	else if (n <= WHY_PATH_MAX)
		snprintf(buf, len, "%.*s", (int)n, path);
	else
		snprintf(buf, len, "...%.*s", WHY_PATH_MAX, slash - WHY_PATH_MAX);
	return buf;
}

/*
 * Waits until the leader has written the profile (or given up), or is gone: dead, or not started
 * while the program is gone or START_TIMEOUT_S after this call.  For a backend other than the
 * leader, once its section is written.
 */
static void await_profile(struct mn_session *s)
{
	double start = monotonic_now();

	for (;;) {
		/* Pairs with the leader's release store once it removed the sections (leader.c). */
		uint32_t done = mn_load_acquire(&s->profile_done);
		/* Pairs with the leader's release store of its state, which publishes its pid. */
		uint32_t st = mn_load_acquire(&s->backend[0].state);
		int pid = s->backend[0].pid;

		if (done != MN_PROFILE_PENDING)
			return;
		if (st == MN_BACKEND_NONE ? mn_pid_dead(s->producer_pid) ||
					    monotonic_now() - start > START_TIMEOUT_S
					  : pid <= 0 || mn_pid_dead(pid))
			return;
		mn_word_wait(&s->profile_done, MN_PROFILE_PENDING, WAIT_SLICE_MS);
	}
}

/* numa_node: the node to bind to, or -1. */
static int run_backend(int fd, unsigned index, int numa_node)
{
	struct backend b = { .index = index };
	__typeof__(b.s->backend[0]) *slot;
	struct mn_leader_input lin = { 0 };
	char why[300];
	double ended_at;
	int r, status = 0;

	r = mn_queue_attach(&b.q, fd, index);
	if (r) {
		mn_backend_msg("cannot attach to the event queue (fd %d, consumer %u): %s", fd,
			       index, strerror(-r));
		return 1;
	}
	b.s = mn_queue_extra(b.q);
	if (!b.s || !session_valid(b.s, mn_queue_extra_bytes(b.q), index, why, sizeof(why))) {
		mn_backend_msg("%s", b.s ? why : "the queue has no session block");
		/* The slot layout is known only when magic and version match. */
		if (b.s && mn_queue_extra_bytes(b.q) >= sizeof(*b.s) &&
		    b.s->magic == MN_SESSION_MAGIC && b.s->version == MN_SESSION_VERSION) {
			slot = &b.s->backend[index];
			snprintf(slot->why, sizeof(slot->why), "%s", why);
			/* Publishes why; pairs with the runtime's acquire load of the state. */
			mn_store_release(&slot->state, MN_BACKEND_FAILED);
			mn_word_wake(&slot->state);
		}
		mn_queue_detach(b.q);
		return 1;
	}
	slot = &b.s->backend[index];
	/* Buffers zeroed off the decoding thread; without that thread (Lamport mode, no memory),
	 * mn_queue_release() zeroes them itself. */
	(void)mn_queue_zero_behind(b.q);
	memcpy(b.name, b.s->modules[index], MN_MODULE_NAME_MAX);
	b.name[MN_MODULE_NAME_MAX] = '\0';
	slot->pid = (int32_t)getpid();
	/* Publishes pid; the leader reads it after an acquire load of state. */
	mn_store_release(&slot->state, MN_BACKEND_RUNNING);
	mn_word_wake(&slot->state);

	/* Before the module allocates its state: that memory then comes from the node too. */
	if (numa_node >= 0)
		bind_to_node(b.name, numa_node, b.s->verbose != 0);
	start_module(&b);
	if (b.failed && (index != 0 || b.s->nmodules == 1)) {
		/* Nobody needs this consumer any more: leave, so the producer stops waiting. */
		if (index == 0) {
			/* Said why above (and in the slot); nothing more to write. */
			mn_store_release(&b.s->profile_done, MN_PROFILE_FAILED);
			mn_word_wake(&b.s->profile_done);
		}
		mn_run_destroy(b.run);
		mn_queue_detach(b.q);
		return 1;
	}
	if (b.s->verbose)
		mn_backend_msg("%s: consumer %u running, pid %d", b.name, index, (int)getpid());

	r = consume(&b);
	ended_at = monotonic_now();
	slot->events = b.stats.events;
	if (!b.failed && b.mod)
		workers_merge(&b);
	if (r < 0 && !b.failed)
		fail(&b, "cannot read the event queue: %s", strerror(-r));

	if (!b.failed) {
		int fd = section_create(&b, slot->section_path, sizeof(slot->section_path));
		int err = fd < 0 ? fd : write_section(&b, fd, slot->section_path);

		if (err == -EINVAL && fd >= 0) {
			fail(&b, "its emit() wrote a malformed section (a key without a value, "
				 "a value where a key belongs, or an unclosed collection)");
		} else if (err) {
			/* The folder, not the file's name: the file is gone, the folder is what the
			 * user can act on (free space, permissions). */
			char dir[WHY_PATH_MAX + 4];

			fail(&b, "cannot write its section file in '%s': %s",
			     why_dir(b.s->output, dir, sizeof(dir)), strerror(-err));
		}
	}
	if (!b.failed) {
		if (b.s->verbose)
			mn_backend_msg("%s: %llu events, %llu corrupt records; section in '%s'",
				       b.name, (unsigned long long)b.stats.events,
				       (unsigned long long)b.stats.corrupt, slot->section_path);
		/* Publishes the section file and events; pairs with the leader's acquire load. */
		mn_store_release(&slot->state, MN_BACKEND_WRITTEN);
		mn_word_wake(&slot->state);
		workers_free(&b);
	}

	if (index == 0) {
		if (!b.run && b.s->sites_len)   /* failed early: still symbolize */
			mn_run_create(&b.run, mn_session_sites(b.s), b.s->sites_len, NULL, 0);
		lin.s = b.s;
		lin.run = b.run;
		lin.index = index;
		lin.events = b.stats.events;
		lin.stream_ended = r == 0;
		lin.producer_died = r == 0 && mn_queue_producer_died(b.q);
		lin.stream_end_monotonic = ended_at;
		if (mn_leader_finish(&lin))
			status = 1;
	} else if (!b.failed) {
		/*
		 * The leader removes the section once the profile is written; should it die first,
		 * or never start, nobody would.  The name is this run's alone, so removing it again
		 * after the leader did harms nobody.
		 */
		await_profile(b.s);
		unlink(slot->section_path);
	}
	if (b.failed)
		status = 1;
	mn_run_destroy(b.run);
	mn_queue_detach(b.q);
	return status;
}

/* ---- Command line ---------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mnemo-backend --fd N --index I [--numa-node K]\n"
		"       mnemo-backend --list-modules | --help | --version\n"
		"\n"
		"The backend of the Mnemo memory profiler.  The profiled program (or\n"
		"`mnemo run`) starts one per module; it attaches to the event queue in the\n"
		"inherited file descriptor N as consumer I, runs the I-th module of the session\n"
		"over every event, and writes that module's part of the profile.  Consumer 0\n"
		"then writes the profile.\n"
		"\n"
		"  --fd N           the queue's shared-memory file descriptor\n"
		"  --index I        this backend's consumer index (which module it runs)\n"
		"  --numa-node K    run on the CPUs of NUMA node K and prefer its memory\n"
		"  --list-modules   print the modules built in, one per line with its description\n"
		"  --help           print this help\n"
		"  --version        print the version\n");
}

static bool parse_uint(const char *s, unsigned max, unsigned *v)
{
	char *end;
	unsigned long x;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || *end || x > max)
		return false;
	*v = (unsigned)x;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fd", required_argument, NULL, 'f' },
		{ "index", required_argument, NULL, 'i' },
		{ "numa-node", required_argument, NULL, 'n' },
		{ "list-modules", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned fd = 0, index = 0, node = 0;
	bool have_fd = false, have_index = false, have_node = false;
	int c, devnull;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!parse_uint(optarg, INT_MAX, &fd)) {
				mn_backend_msg("--fd: '%s' is not a file descriptor", optarg);
				return 2;
			}
			have_fd = true;
			break;
		case 'i':
			if (!parse_uint(optarg, MN_MAX_MODULES - 1, &index)) {
				mn_backend_msg("--index: '%s' is not a consumer index (0 to %d)",
					       optarg, MN_MAX_MODULES - 1);
				return 2;
			}
			have_index = true;
			break;
		case 'n':
			if (!parse_uint(optarg, 1023, &node)) {
				mn_backend_msg("--numa-node: '%s' is not a NUMA node number (0 to "
					       "1023)", optarg);
				return 2;
			}
			have_node = true;
			break;
		case 'l': {
			int w = 0;

			for (size_t i = 0; i < mn_module_count(); i++)
				if ((int)strlen(mn_module_at(i)->name) > w)
					w = (int)strlen(mn_module_at(i)->name);
			for (size_t i = 0; i < mn_module_count(); i++)
				printf("%-*s  %s\n", w, mn_module_at(i)->name,
				       mn_module_at(i)->doc ? mn_module_at(i)->doc : "");
			return 0;
		}
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mnemo-backend (Mnemo) %s\n", MNEMO_VERSION);
			return 0;
		default:
			mn_backend_msg("unknown option '%s' (try --help)", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		mn_backend_msg("unexpected argument '%s' (try --help)", argv[optind]);
		return 2;
	}
	if (!have_fd || !have_index) {
		mn_backend_msg("missing --%s: it is started by the profiled program or by "
			       "`mnemo run` (try --help)", have_fd ? "index" : "fd");
		return 2;
	}

	/*
	 * The program's terminal signals are not ours: on ^C the program flushes and dies, and the
	 * backend must live on to write the profile.  It never reads stdin or writes stdout, so it
	 * lets go of them (a pipeline `./prog | head` must not wait for it).
	 */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		if (devnull != STDIN_FILENO)
			dup2(devnull, STDIN_FILENO);
		if (devnull != STDOUT_FILENO)
			dup2(devnull, STDOUT_FILENO);
		if (devnull > STDERR_FILENO)
			close(devnull);
	}
	return run_backend((int)fd, index, have_node ? (int)node : -1);
}
