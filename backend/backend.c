/*
 * mnemo-backend: the process that hosts the profiling modules.  The profiled program's runtime (or
 * `mnemo run`) starts it as `mnemo-backend --fd N --index I [--numa-node K]`: it attaches to the
 * event queue in the inherited memfd as consumer I, binds itself to NUMA node K (where the runtime
 * placed the queue's buffers), and runs every module of the session (session.nbackends 1: one
 * process for all, each record decoded once per thread, docs/internals.md "Backend") or module
 * session.modules[I] alone (MNEMO_BACKENDS=per-module) over every event.  Each module writes its
 * section to a temporary file of its own run (mn_section_prefix()) and reports through its slot in
 * the session block (runtime/session.h).  Backend 0 is the leader: it then gathers every
 * section into the profile (leader.c).
 *
 * Life of one backend (docs/internals.md, "Backend"):
 *
 *   attach ── validate session ── slots: pid, RUNNING ── [bind to node] ── each module: find, init
 *     ── lanes, threads ── pop/decode/dispatch ── stream ended ── each module: merge, emit
 *     section, slot: WRITTEN, fini ── [leader: profile] [others: wait for the profile, remove the
 *     section] ── detach
 *
 * A module's failure sets its slot FAILED with a reason and prints one line; the others run on.
 * When none is left, the backend leaves the queue so the producer never waits for a consumer that
 * stopped; the one exception is the leader when other modules run elsewhere or failed beside it:
 * it goes on draining the queue (without a module) so that it still sees the end of the stream
 * and can write the profile.
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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <numa.h>

#include "abi.h"
#include "backend_internal.h"
#include "map.h"         /* mn_bits_has(), mn_bits_set() */
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

/* ---- The modules a backend hosts ------------------------------------------------------------ */

/* One hosted module: its slot in the session, its workers, what it decoded. */
struct backend {
	struct mn_session *s;
	unsigned index;                       /* its slot, session.modules[index] */
	char name[MN_MODULE_NAME_MAX + 1];    /* session.modules[index], NUL-terminated */
	const struct mn_module *mod;          /* NULL: unknown, or failed */
	struct mn_worker *workers;            /* [nworkers]: one module state each */
	struct mn_decode_stats *wstats;       /* [nworkers]: what each one decoded */
	unsigned nworkers;
	unsigned ninit;                       /* workers[0..ninit) passed init() */
	bool failed;                          /* the slot says FAILED */
	struct mn_decode_stats stats;         /* what the stream held (worker 0's view) */
	uint32_t threads_left_out;            /* threads whose events it did not get (no .thread) */
	double cost;                          /* CPU seconds a buffer, smoothed (balance()) */
};

/* The workers one thread feeds from one decode of each buffer (mn_lane_run()). */
struct lane {
	struct mn_worker *ws[MN_LANE_MAX];
	struct mn_decode_stats *st[MN_LANE_MAX];
	struct backend *of[MN_LANE_MAX];      /* the module each worker belongs to */
	unsigned n;
};

#define LANES_MAX 16   /* MNEMO_WORKERS' maximum (runtime/options.def) */

/*
 * A backend process: the queue it consumes, and the modules it hosts, mods[0..nmods): every
 * module of the session (session.nbackends 1), or the one of its consumer index.  Each buffer is
 * decoded once per lane; lane 0 runs on the main thread, the others on the pool.  A buffer of the
 * program's main thread goes to lanes[], one of another thread to tlanes[]: the same lanes with
 * only the workers of modules that take every thread's events (mn_module.thread).
 */
struct host {
	struct mn_queue *q;
	struct mn_session *s;
	unsigned index;                       /* consumer index */
	struct mn_run *run;                   /* the site table, shared by the modules */
	struct backend mods[MN_MAX_MODULES];
	unsigned nmods;
	struct lane lanes[LANES_MAX];
	struct lane tlanes[LANES_MAX];
	unsigned nlanes;
	struct mn_thread_row threads[MN_THREADS_LISTED + 1];  /* by the queue's thread number */
	uint64_t *seen;                       /* a bit per thread number that sent a buffer */
	size_t seen_words;
	uint32_t nthreads_seen;               /* threads that sent a buffer */
	uint64_t threads_events;              /* records of every thread's buffers */
	uint32_t other_threads;               /* threads but the main one that sent a buffer */
	struct mn_pool *pool;                 /* nlanes - 1 threads */
	bool balanced;                        /* whole modules on several threads: balance() */
	uint64_t buffers;                     /* popped so far */
};

/* Every BALANCE_EVERY buffers (the first included) each module's cost is measured and the modules
 * are dealt to the threads anew (balance()). */
#define BALANCE_EVERY 32
/* A buffer this short (words) is decoded by every lane in turn on the leader's thread: waking the
 * pool costs more than its records, as with the few a thread writes between two ordering points
 * (queue.h, mn_queue_order()). */
#define POOL_WORDS 4096

/* Finalizes and frees every worker's state and the workers. */
static void workers_free(struct backend *b)
{
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
 * Marks this module's slot FAILED with a reason and prints "mnemo-backend: <module>: <why>".
 * The module stops receiving events; its state is finalized.  Only before the lanes are made,
 * or after the stream: the lanes point into its workers.
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

/* Every hosted module that has not failed yet fails for the same reason. */
static void fail_all(struct host *h, const char *why)
{
	for (unsigned i = 0; i < h->nmods; i++)
		if (!h->mods[i].failed)
			fail(&h->mods[i], "%s", why);
}

/* True while some hosted module still runs. */
static bool any_running(const struct host *h)
{
	for (unsigned i = 0; i < h->nmods; i++)
		if (h->mods[i].mod)
			return true;
	return false;
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
	if ((s->nbackends != 1 && s->nbackends != s->nmodules) || index >= s->nbackends) {
		snprintf(why, whylen, "consumer index %u, but the session has %u backends for %u "
			 "modules (1, or one per module)", index, s->nbackends, s->nmodules);
		return false;
	}
	if (s->split != MN_SPLIT_SHARD && s->split != MN_SPLIT_MODULE) {
		snprintf(why, whylen, "corrupt session: unknown worker split %u", s->split);
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

/*
 * Worker threads when MNEMO_WORKERS is unset: one for one module; for several, one per CPU this
 * process may run on (after its NUMA binding), at most one per module, as many as one process
 * per module would have kept busy.
 */
static unsigned auto_threads(const struct host *h)
{
	cpu_set_t cpus;
	unsigned n = 1;

	if (h->nmods > 1 && !sched_getaffinity(0, sizeof(cpus), &cpus))
		n = (unsigned)CPU_COUNT(&cpus);
	if (n > h->nmods)
		n = h->nmods;
	return n < LANES_MAX ? (n ? n : 1) : LANES_MAX;
}

/* The site table, shared by every hosted module; fail_all() when it does not load. */
static void load_run(struct host *h)
{
	const struct mn_session *s = h->s;
	char why[200] = "", msg[260];
	int err;

	err = mn_run_create(&h->run, s->sites_len ? mn_session_sites(s) : NULL, s->sites_len, why,
			    sizeof(why));
	if (err) {
		snprintf(msg, sizeof(msg), "cannot load the site table: %s",
			 err == -EINVAL ? why : strerror(-err));
		fail_all(h, msg);
		return;
	}
	if (s->values_len)
		mn_run_values_attach(h->run, (struct mn_value_set *)((char *)s + s->values_off),
				     s->values_len);
	/* The program's own table only, as its binary carries it (linked units follow it). */
	if (s->program_sites_len && s->program_sites_len <= s->sites_len)
		h->run->blob_hash = mn_fnv1a64(mn_session_sites(s), s->program_sites_len);
	h->run->verbose = s->verbose != 0;
	h->run->workers = s->workers ? s->workers : auto_threads(h);
	if (s->site_count && s->site_count != h->run->count && s->verbose)
		mn_backend_msg("the session says %u sites, the table has %u", s->site_count,
			       h->run->count);
}

/*
 * How many states module b gets: one per worker thread when it shards and workers split the
 * work by shard (MN_SPLIT_SHARD, or a module alone in its process), else one.
 */
static unsigned module_workers(const struct host *h, const struct backend *b)
{
	unsigned n = mn_run_workers(h->run);

	if (n == 1 || (h->nmods > 1 && h->s->split == MN_SPLIT_MODULE))
		return 1;   /* whole, on one thread at a time (balance()) */
	if (b->mod->shard == MN_SHARD_NONE || !b->mod->merge) {
		if (h->s->verbose)
			mn_backend_msg("%s: the module does not shard its events; running 1 worker, "
				       "not %u", b->name, n);
		return 1;
	}
	return n;
}

/* size zeroed bytes on cache lines of their own (mn_lines_alloc()), or NULL. */
static void *lines_zalloc(size_t size)
{
	void *p = mn_lines_alloc(size);

	if (p)
		memset(p, 0, size);
	return p;
}

/* Finds module b and initializes its workers; fail() on any error. */
static void start_module(struct host *h, struct backend *b)
{
	unsigned n;
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
	/* Data parallelism (PROMPT 4.2): n states, each handling the events it owns (driver.c),
	 * merged in worker order at the end. */
	n = module_workers(h, b);
	/* Lines of their own: the workers of other modules run on other threads. */
	b->workers = lines_zalloc(n * sizeof(*b->workers));
	b->wstats = lines_zalloc(n * sizeof(*b->wstats));
	if (!b->workers || !b->wstats) {
		fail(b, "cannot allocate %u workers: %s", n, strerror(ENOMEM));
		return;
	}
	b->nworkers = n;
	for (unsigned i = 0; i < n; i++) {
		struct mn_worker *w = &b->workers[i];

		*w = (struct mn_worker){ .mod = b->mod, .id = i, .nworkers = n };
		w->state = lines_zalloc(b->mod->state_size);
		if (!w->state) {
			fail(b, "cannot allocate its state: %s", strerror(ENOMEM));
			return;
		}
		err = b->mod->init ? b->mod->init(w->state, h->run) : 0;
		if (err) {
			fail(b, "cannot start: %s", strerror(err < 0 ? -err : err));
			return;
		}
		b->ninit = i + 1;
	}
}

static void lane_add(struct lane *l, struct backend *b, unsigned i)
{
	l->ws[l->n] = &b->workers[i];
	l->st[l->n] = &b->wstats[i];
	l->of[l->n++] = b;
}

/* tlanes[]: lanes[] without the workers of modules that take the main thread's events only. */
static void filter_lanes(struct host *h)
{
	for (unsigned i = 0; i < h->nlanes; i++) {
		const struct lane *l = &h->lanes[i];
		struct lane *t = &h->tlanes[i];

		t->n = 0;
		for (unsigned k = 0; k < l->n; k++) {
			if (!l->of[k]->mod->thread)
				continue;
			t->ws[t->n] = l->ws[k];
			t->st[t->n] = l->st[k];
			t->of[t->n++] = l->of[k];
		}
	}
}

/* The lane holding the fewest workers, the first of them on a tie. */
static struct lane *emptiest(struct host *h)
{
	struct lane *l = &h->lanes[0];

	for (unsigned i = 1; i < h->nlanes; i++)
		if (h->lanes[i].n < l->n)
			l = &h->lanes[i];
	return l;
}

/*
 * Puts every running module's workers in lanes, one lane per worker thread: worker i of a module
 * with several in lane i (split by shard), a module with one worker in the emptiest lane (split
 * by module, and the modules that do not shard), in module order.  Then starts the pool.
 * Returns 0, or -errno when the pool cannot start (every module fails then).
 */
static int make_lanes(struct host *h)
{
	unsigned threads = mn_run_workers(h->run);
	char why[120];
	int err;

	h->nlanes = threads < LANES_MAX ? threads : LANES_MAX;
	for (unsigned m = 0; m < h->nmods; m++) {
		struct backend *b = &h->mods[m];

		for (unsigned i = 0; b->mod && i < b->nworkers; i++)
			lane_add(b->nworkers > 1 ? &h->lanes[i] : emptiest(h), b, i);
	}
	while (h->nlanes > 1 && !h->lanes[h->nlanes - 1].n)
		h->nlanes--;
	/* Modules whole, one worker each, on several threads: balance() may deal them anew. */
	h->balanced = h->nlanes > 1;
	for (unsigned m = 0; m < h->nmods; m++)
		if (h->mods[m].mod && h->mods[m].nworkers > 1)
			h->balanced = false;
	filter_lanes(h);
	err = mn_pool_create(&h->pool, h->nlanes - 1);
	if (err) {
		snprintf(why, sizeof(why), "cannot start %u worker threads: %s", h->nlanes - 1,
			 strerror(-err));
		memset(h->lanes, 0, sizeof(h->lanes));   /* they point into the workers */
		memset(h->tlanes, 0, sizeof(h->tlanes));
		h->nlanes = 0;
		fail_all(h, why);
	}
	return err;
}

/* Lane i's share of one buffer, of program thread `thread`. */
struct job {
	struct host *h;
	const uint64_t *words;
	size_t n;
	const struct lane *lanes;             /* h->lanes, or h->tlanes */
	uint32_t thread;
};

/* Each worker of lane l takes up the thread's loop summaries where its last buffer left them. */
static inline void lane_thread(const struct lane *l, uint32_t thread)
{
	for (unsigned k = 0; k < l->n; k++)
		if (__builtin_expect(l->ws[k]->thread != thread, 0))
			mn_worker_thread(l->ws[k], thread, l->st[k]);
}

static void job_run(void *arg, unsigned i)
{
	const struct job *j = arg;
	const struct lane *l = &j->lanes[i];

	lane_thread(l, j->thread);
	if (l->n)
		mn_lane_run(l->ws, l->n, &j->h->s->wire, j->words, j->n, l->st);
}

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* job_run() one module at a time, each module's CPU time measured: what balance() deals by.
 * Each module sees the same calls as in job_run(); only their interleaving differs. */
static void job_timed(void *arg, unsigned i)
{
	const struct job *j = arg;
	const struct lane *l = &j->lanes[i];

	lane_thread(l, j->thread);
	for (unsigned k = 0; k < l->n; k++) {
		struct backend *b = l->of[k];
		double t = thread_cpu_seconds();

		mn_worker_run(l->ws[k], &j->h->s->wire, j->words, j->n, l->st[k]);
		t = thread_cpu_seconds() - t;
		b->cost = b->cost > 0 ? (b->cost + t) / 2 : t;
	}
}

/*
 * Deals the modules (one worker each) to the lanes anew, the costliest first, each to the lane
 * with the least cost so far (the first on a tie): the threads then finish each buffer at about
 * the same time.  Which thread runs a module changes nothing in its profile.
 */
static void balance(struct host *h)
{
	struct backend *order[MN_MAX_MODULES];
	double load[LANES_MAX] = { 0 };
	unsigned n = 0;

	for (unsigned m = 0; m < h->nmods; m++)
		if (h->mods[m].mod)
			order[n++] = &h->mods[m];
	for (unsigned a = 1; a < n; a++)   /* insertion sort, costliest first, stable */
		for (unsigned b = a; b > 0 && order[b]->cost > order[b - 1]->cost; b--) {
			struct backend *t = order[b];

			order[b] = order[b - 1];
			order[b - 1] = t;
		}
	for (unsigned i = 0; i < h->nlanes; i++)
		h->lanes[i].n = 0;
	for (unsigned k = 0; k < n; k++) {
		unsigned best = 0;

		for (unsigned i = 1; i < h->nlanes; i++)
			if (load[i] < load[best])
				best = i;
		lane_add(&h->lanes[best], order[k], 0);
		load[best] += order[k]->cost;
	}
	filter_lanes(h);
}

/* Folds every worker of b into worker 0, in worker order, and frees them (not worker 0). */
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
}

/* Verbose mode: which thread ran which modules last, and their measured costs. */
static void say_lanes(const struct host *h)
{
	for (unsigned i = 0; i < h->nlanes; i++) {
		char buf[512];
		size_t len = 0;

		for (unsigned k = 0; k < h->lanes[i].n && len < sizeof(buf); k++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %s (%.2f ms a buffer)",
						h->lanes[i].of[k]->name,
						h->lanes[i].of[k]->cost * 1e3);
		mn_backend_msg("thread %u:%s", i, len ? buf : " nothing");
	}
}

/* ---- Threads of the program ------------------------------------------------------------------ */

/* Records of one buffer, framed as the driver frames them, but `value` ones: for a buffer no
 * hosted module decoded (another thread's, when none takes every thread's events). */
static uint64_t count_records(const struct mn_wire *wire, const uint64_t *words, size_t n)
{
	uint64_t events = 0;

	for (size_t i = 0; i < n;) {
		unsigned code = (unsigned)(words[i] & 0xff), len = wire->nwords[code];

		if (!words[i]) {
			i++;
			continue;
		}
		if (!len || len > n - i)
			break;   /* corrupt: the decoders say so */
		events += code != MN_EV_VALUE;
		i += len;
	}
	return events;
}

/* The decode statistics of some worker that reads every record of buffers sent to lanes, or
 * NULL when no worker does. */
static struct mn_decode_stats *buffer_stats(const struct host *h, const struct lane *lanes)
{
	for (unsigned i = 0; i < h->nlanes; i++)
		if (lanes[i].n)
			return lanes[i].st[0];
	return NULL;
}

/* Thread numbers counted: more than a program makes in a day. */
#define THREADS_MAX (UINT32_C(1) << 26)

/* Marks thread t as having sent a buffer; true the first time.  A bit per thread number, so that
 * 10,000 short threads cost 1.25 KiB here.  Out of memory it says false: the count only, the
 * modules are not affected. */
static bool thread_seen(struct host *h, uint32_t t)
{
	return !mn_bits_has(h->seen, h->seen_words, t) && mn_bits_set(&h->seen, &h->seen_words, t);
}

/* Counts `events` records of a buffer of thread t (1: the main thread), words[0..n) its records;
 * a listed thread's first record, if a thread_start, names its creator.  Rows are kept for the
 * threads the profile lists (MN_THREADS_LISTED), counts for all. */
static void thread_count(struct host *h, uint32_t t, uint64_t events, const uint64_t *words,
			 size_t n)
{
	struct mn_thread_row *row = t <= MN_THREADS_LISTED ? &h->threads[t] : NULL;

	if (t >= THREADS_MAX)
		return;   /* NEVER: the producer numbers threads from 1 */
	if (thread_seen(h, t)) {
		h->nthreads_seen++;
		h->other_threads += t > 1;
	}
	h->threads_events += events;
	if (!row)
		return;
	row->buffers++;
	if (!row->events && n && (words[0] & 0xff) == MN_EV_THREAD_START &&
	    h->s->wire.nwords[MN_EV_THREAD_START]) {
		row->started = true;
		row->creator = (uint32_t)mn_wire_get(&h->s->wire, words, MN_EV_THREAD_START, 0);
		row->site = (uint32_t)mn_wire_get(&h->s->wire, words, MN_EV_THREAD_START, 1);
	}
	row->events += events;
}

/*
 * Pops every buffer until the stream ends, each decoded by every lane (none when every module
 * failed: the leader still drains, to see the end); returns 0 or the queue's -errno.  A buffer of
 * a thread other than the main one reaches only the modules that take every thread's events.
 */
static int consume(struct host *h)
{
	const uint64_t *words;
	size_t n;
	int r;

	while ((r = mn_queue_pop(h->q, &words, &n)) > 0) {
		uint32_t t = mn_queue_thread(h->q);
		struct job j = { h, words, n, h->lanes, t ? t : 1 };
		bool pooled = h->nlanes > 1 && n >= POOL_WORDS;
		bool timed = pooled && h->balanced && h->buffers++ % BALANCE_EVERY == 0;
		struct mn_decode_stats *st;
		uint64_t before;

		if (j.thread != 1)
			j.lanes = h->tlanes;
		st = buffer_stats(h, j.lanes);
		before = st ? st->events : 0;
		/* Every lane is done with the buffer before it goes back to the queue. */
		if (pooled)
			mn_pool_run(h->pool, timed ? job_timed : job_run, &j);
		else
			for (unsigned i = 0; i < (h->nlanes ? h->nlanes : 1); i++)
				job_run(&j, i);
		thread_count(h, j.thread, st ? st->events - before :
				      count_records(&h->s->wire, words, n), words, n);
		/* One store a buffer, for `mnemo run --progress`, which reads it once a second;
		 * nothing orders it (a count on a status line). */
		mn_store_relaxed(&h->s->backend[h->mods[0].index].events, h->threads_events);
		mn_queue_release(h->q);
		if (timed)
			balance(h);
	}
	if (h->balanced && h->s->verbose)
		say_lanes(h);
	mn_pool_destroy(h->pool);
	h->pool = NULL;
	/* The stream is over: what is still pending will never be closed.  Every worker decoded the
	 * same records: worker 0 speaks for the stream (summaries counted once, not per worker). */
	for (unsigned m = 0; m < h->nmods; m++) {
		struct backend *b = &h->mods[m];

		if (!b->mod)
			continue;
		for (unsigned i = 0; i < b->nworkers; i++)
			mn_worker_finish(&b->workers[i], &b->wstats[i]);
		b->stats = b->wstats[0];
		b->threads_left_out = b->mod->thread ? 0 : h->other_threads;
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
	if (b->threads_left_out)
		mn_prof_kv_u64(p, "threads_left_out", b->threads_left_out);
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

/*
 * Attaches as consumer index and checks the session; NULL-free h->s on success.  On failure it
 * says why, and marks the slot FAILED when the slot layout is known; returns false.
 */
static bool attach(struct host *h, int fd, unsigned index)
{
	char why[300];
	int r;

	r = mn_queue_attach(&h->q, fd, index);
	if (r) {
		mn_backend_msg("cannot attach to the event queue (fd %d, consumer %u): %s", fd,
			       index, strerror(-r));
		return false;
	}
	h->s = mn_queue_extra(h->q);
	if (h->s && session_valid(h->s, mn_queue_extra_bytes(h->q), index, why, sizeof(why)))
		return true;
	mn_backend_msg("%s", h->s ? why : "the queue has no session block");
	/* The slot layout is known only when magic and version match. */
	if (h->s && mn_queue_extra_bytes(h->q) >= sizeof(*h->s) &&
	    h->s->magic == MN_SESSION_MAGIC && h->s->version == MN_SESSION_VERSION &&
	    index < MN_MAX_MODULES) {
		__typeof__(h->s->backend[0]) *slot = &h->s->backend[index];

		snprintf(slot->why, sizeof(slot->why), "%s", why);
		/* Publishes why; pairs with the runtime's acquire load of the state. */
		mn_store_release(&slot->state, MN_BACKEND_FAILED);
		mn_word_wake(&slot->state);
	}
	mn_queue_detach(h->q);
	return false;
}

/* Claims the slots of the modules this process hosts: every one, or its consumer index's. */
/*
 * Backend 0 holds the profile path for as long as it runs (session.h, mn_session_claim_name()):
 * a process the program starts with the same path then writes a profile of its own beside it.
 * Only a courtesy to them: without a socket, nothing changes for this run.
 */
static void hold_output(const struct mn_session *s)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	unsigned n = mn_session_claim_name(a.sun_path, s->output, s->producer_pid);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a,
			    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)))
		close(fd);   /* held already (pid reuse?): only the courtesy is lost */
}

static void claim_slots(struct host *h)
{
	if (h->index == 0)
		hold_output(h->s);
	const struct mn_session *s = h->s;
	unsigned first = s->nbackends == 1 ? 0 : h->index;

	h->nmods = s->nbackends == 1 ? s->nmodules : 1;
	for (unsigned i = 0; i < h->nmods; i++) {
		struct backend *b = &h->mods[i];
		__typeof__(h->s->backend[0]) *slot = &h->s->backend[first + i];

		*b = (struct backend){ .s = h->s, .index = first + i };
		memcpy(b->name, s->modules[first + i], MN_MODULE_NAME_MAX);
		b->name[MN_MODULE_NAME_MAX] = '\0';
		slot->pid = (int32_t)getpid();
		/* Publishes pid; the leader reads it after an acquire load of state. */
		mn_store_release(&slot->state, MN_BACKEND_RUNNING);
		mn_word_wake(&slot->state);
	}
}

/* Merges b's workers and writes its section file; its slot then says WRITTEN, or FAILED. */
static void finish_module(struct backend *b, int r)
{
	__typeof__(b->s->backend[0]) *slot = &b->s->backend[b->index];

	slot->events = b->stats.events;
	if (!b->failed && b->mod)
		workers_merge(b);
	if (r < 0 && !b->failed)
		fail(b, "cannot read the event queue: %s", strerror(-r));
	if (!b->failed) {
		int fd = section_create(b, slot->section_path, sizeof(slot->section_path));
		int err = fd < 0 ? fd : write_section(b, fd, slot->section_path);

		if (err == -EINVAL && fd >= 0) {
			fail(b, "its emit() wrote a malformed section (a key without a value, "
				"a value where a key belongs, or an unclosed collection)");
		} else if (err) {
			/* The folder, not the file's name: the file is gone, the folder is what the
			 * user can act on (free space, permissions). */
			char dir[WHY_PATH_MAX + 4];

			fail(b, "cannot write its section file in '%s': %s",
			     why_dir(b->s->output, dir, sizeof(dir)), strerror(-err));
		}
	}
	if (b->failed)
		return;
	if (b->s->verbose)
		mn_backend_msg("%s: %llu events, %llu corrupt records; section in '%s'", b->name,
			       (unsigned long long)b->stats.events,
			       (unsigned long long)b->stats.corrupt, slot->section_path);
	/* Publishes the section file and events; pairs with the leader's acquire load. */
	mn_store_release(&slot->state, MN_BACKEND_WRITTEN);
	mn_word_wake(&slot->state);
	workers_free(b);
}

/* What the stream held, as the first module that ran saw it (every one decodes every record). */
static uint64_t host_events(const struct host *h)
{
	for (unsigned i = 0; i < h->nmods; i++)
		if (!h->mods[i].failed)
			return h->mods[i].stats.events;
	return 0;
}

/* numa_node: the node to bind to, or -1. */
static int run_backend(int fd, unsigned index, int numa_node)
{
	struct host h = { .index = index };
	struct mn_leader_input lin = { 0 };
	bool failed = false;
	double ended_at;
	int r, status = 0;

	if (!attach(&h, fd, index))
		return 1;
	/* Buffers zeroed off the decoding thread; without that thread (Lamport mode, no memory),
	 * mn_queue_release() zeroes them itself. */
	(void)mn_queue_zero_behind(h.q);
	claim_slots(&h);

	/* Before the modules allocate their state: that memory then comes from the node too. */
	if (numa_node >= 0)
		bind_to_node(h.mods[0].name, numa_node, h.s->verbose != 0);
	load_run(&h);
	for (unsigned i = 0; i < h.nmods && h.run; i++)
		start_module(&h, &h.mods[i]);
	if (any_running(&h))
		make_lanes(&h);
	if (!any_running(&h) && (index != 0 || h.s->nmodules == 1)) {
		/* Nobody needs this consumer any more: leave, so the producer stops waiting. */
		if (index == 0) {
			/* Said why above (and in the slot); nothing more to write. */
			mn_store_release(&h.s->profile_done, MN_PROFILE_FAILED);
			mn_word_wake(&h.s->profile_done);
		}
		mn_run_destroy(h.run);
		mn_queue_detach(h.q);
		return 1;
	}
	if (h.s->verbose)
		mn_backend_msg("consumer %u running %u module%s on %u thread%s, pid %d", index,
			       h.nmods, h.nmods > 1 ? "s" : "", h.nlanes, h.nlanes > 1 ? "s" : "",
			       (int)getpid());

	r = consume(&h);
	ended_at = monotonic_now();
	for (unsigned i = 0; i < h.nmods; i++) {
		finish_module(&h.mods[i], r);
		failed |= h.mods[i].failed;
	}

	if (index == 0) {
		if (!h.run && h.s->sites_len)   /* failed early: still symbolize */
			mn_run_create(&h.run, mn_session_sites(h.s), h.s->sites_len, NULL, 0);
		lin.s = h.s;
		lin.run = h.run;
		lin.index = index;
		lin.events = host_events(&h);
		lin.threads = h.threads;
		lin.nthreads = h.other_threads ? h.nthreads_seen : 0;
		if (h.other_threads && h.threads_events > lin.events)
			lin.events = h.threads_events;   /* every thread's, whichever module took them */
		lin.stream_ended = r == 0;
		lin.producer_died = r == 0 && mn_queue_producer_died(h.q);
		lin.stream_end_monotonic = ended_at;
		if (mn_leader_finish(&lin))
			status = 1;
	} else if (!h.mods[0].failed) {
		/*
		 * The leader removes the section once the profile is written; should it die first,
		 * or never start, nobody would.  The name is this run's alone, so removing it again
		 * after the leader did harms nobody.
		 */
		await_profile(h.s);
		unlink(h.s->backend[index].section_path);
	}
	if (failed)
		status = 1;
	free(h.seen);
	mn_run_destroy(h.run);
	mn_queue_detach(h.q);
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
		"`mnemo run`) starts one; it attaches to the event queue in the inherited\n"
		"file descriptor N as consumer I, runs every module of the session over every\n"
		"event, decoding each once, and writes the profile.  With\n"
		"MNEMO_BACKENDS=per-module the program starts one per module instead: consumer\n"
		"I runs the I-th module alone, and consumer 0 writes the profile.\n"
		"\n"
		"  --fd N           the queue's shared-memory file descriptor\n"
		"  --index I        this backend's consumer index (0, or the module it runs)\n"
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
