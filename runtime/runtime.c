/*
 * The frontend runtime: the native code linked (whole-archive, as libmnemo-rt.a) into every
 * profiled program.  It starts profiling before main(), and it ends profiling on every way out of
 * the program, without ever changing what the program prints, its exit status or the signal it
 * dies of.
 *
 * Start (mn_rt_init(), a priority-101 constructor): read the MNEMO_* options, check the pass ABI,
 * choose the modules, resolve and check the profile path, create the queue with the session block
 * after it (runtime/session.h), place its buffers on the program's NUMA node, spawn one
 * mnemo-backend per module (bound to that node), install the fatal-signal handlers, start
 * producing, emit program_start and the globals.  Any failure prints one line
 * "mnemo: <what>: <why>; running unprofiled" and leaves the program exactly as if it had not been
 * built with mnemo.
 *
 * End (end_of_run(), one function for every path): exit() and return from main (on_exit()),
 * _exit()/_Exit() (defined here, so the program's and its libraries' calls bind to them), abort()
 * and fatal signals (handlers that flush, restore the default action and re-raise, kept behind the
 * program's own view of its signals by signals.c).  It writes the
 * end-of-run record, emits program_end, finishes the queue and waits for backend 0 to report the
 * profile written, for as long as backend 0 lives.
 *
 * Threads: each thread writes its own stream, in a lane of the queue (queue.h): the thread that
 * runs the constructor (the main thread) in lane 0, every other thread, at its first event, in a
 * free one of MNEMO_THREADS lanes, handed back at its exit.  A thread that finds none free has its
 * events counted and dropped by the queue, and the profile says so.
 *
 * Sessions of a process tree: every image of a run that was built with mnemo gets a session and a
 * profile of its own, numbered in session.h's `image`: the first image writes the profile path
 * it was given; a fork child starts a session of its own at the fork (image 1); an exec ends the
 * image's session first (exec.c: its profile says `exec:`, or, when the image made no event of
 * its own, none is written), and the new image, told so in MNEMO_EXEC_OF, which it takes out of
 * its environment before main, is the next image of that process; a process started some other
 * way (system(), posix_spawn()) finds the path held by the backend of a program above it
 * (mn_session_claim_name()) and is image 1 of its pid.  Their paths: mn_options_image_path().
 *
 * Everything the signal path touches is async-signal-safe; each such function says so.  This is
 * native code the pass never sees, so none of it is instrumented.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/un.h>
#include <ucontext.h>
#include <unistd.h>

#include "abi.h"
#include "barrier.h"
#include "queue.h"
#include "runtime_internal.h"
#include "session.h"

#define MN_VISIBLE __attribute__((visibility("default")))

/*
 * Buffers in the queue.  Two is the ping-pong minimum; four let the producer run up to three
 * buffers ahead of a backend that the scheduler parked for a moment, which on a 2-core machine
 * shared by the program and several backends happens all the time, for 16 MiB of memfd at the
 * default MNEMO_QUEUE_MB=4 (pages are committed only as the producer first fills them).
 */
#define MN_RT_NBUFS 4

/* How long each futex sleep of the waits below lasts before the backend is checked for life. */
#define MN_RT_POLL_NS 100000000L

/*
 * What the pass and the generated callbacks provide.  Weak, so that a program linked without them
 * (not instrumented, or callbacks missing) still links and runs, unprofiled.
 */
#pragma weak __mnemo_pass_abi
#pragma weak __mnemo_modules
#pragma weak __mnemo_backend_path
#pragma weak __mnemo_site_table
#pragma weak __mnemo_value_sets
#pragma weak __mnemo_value_sites
#pragma weak __mnemo_site_table_size
#pragma weak __mnemo_site_count
#pragma weak __mnemo_register_globals
#pragma weak __mnemo_program_start
#pragma weak __mnemo_program_end
#pragma weak __mnemo_wire
#pragma weak __mnemo_sample_var
#pragma weak __mnemo_sample_blocker

/* Defined (1) by callbacks.c of `mnemo-cc --mnemo-queue=lamport`: the queue's Lamport mode, the
 * overhead breakdown's baseline (queue.h). */
extern const unsigned char __mnemo_queue_lamport __attribute__((weak));

__thread unsigned mn_rt_quiet __attribute__((tls_model("initial-exec")));

/* The sampling periods of callbacks built with a countdown (abi.h): every access until set-up. */
MN_VISIBLE uint32_t mn_sample_lo = 1, mn_sample_span = 1;

extern char **environ;

/* rt.state */
enum {
	RT_OFF = 0,     /* unprofiled: disabled, not built for it, or set-up failed */
	RT_ACTIVE = 1,  /* producing; end_of_run() may run */
};

/*
 * The runtime's state.  Written by the constructor before any other thread of the program can
 * exist (priority-101 constructors run before main and before default-priority constructors), and
 * published by the release store of rt.state; read-only afterwards except for the fields that say
 * who writes them.
 */
static struct {
	uint32_t state;                     /* RT_*; release-stored once set-up is complete */
	pid_t pid;                          /* the profiled process (a fork child's pid differs) */
	struct mn_queue *q;
	struct mn_session *s;               /* in the queue's shared memory */
	unsigned nbackends;
	pid_t backend_pid[MN_MAX_MODULES];  /* known from the spawn, before the backend says it */
	const char *backend_path;
	int numa_node;                      /* the backends bind to it (--numa-node); -1: none */
	bool verbose;
	uint64_t dropped_at_start;          /* mn_queue_dropped() when the producer started */
	uint64_t dropped_threads_at_start;  /* mn_queue_dropped_threads() then */

	/* Written once by on_queue_failure() (any thread), read by end_of_run(). */
	uint32_t failed;                    /* release-stored after the field below */
	char failure[128];

	/* end_of_run(): the thread running it, and a futex word set once it has finished. */
	int32_t end_owner;
	uint32_t end_done;

	/* The backends' environment: ours with the `sample:` variable set to the N in effect. */
	char **backend_env;                 /* NULL: environ */

	/* Sessions of a process tree: the constructor's arguments (a fork child's set-up reads them
	 * again), which image this session profiles, and the producer's cursor once set-up's own
	 * events were pushed (an image that never moved it made no event). */
	int argc;
	char **argv;
	uint32_t image;
	pid_t parent_pid;
	uint64_t *cur_at_start;
} rt;

/* ---- Async-signal-safe output ---------------------------------------------------------------- */

/* A line built without malloc or stdio, so that every path, signal handlers included, can print. */
struct line {
	char buf[1024];
	size_t len;
};

/* Appends s, truncating at the end of the buffer.  Async-signal-safe. */
static void line_str(struct line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

/* Appends v in decimal.  Async-signal-safe. */
static void line_u64(struct line *l, uint64_t v)
{
	char d[24];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = d[--n];
}

/* Writes the line and a newline to stderr, retrying partial writes.  Async-signal-safe. */
static void line_print(struct line *l)
{
	size_t off = 0;

	l->buf[l->len++] = '\n';
	while (off < l->len) {
		ssize_t n = write(STDERR_FILENO, l->buf + off, l->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	l->len = 0;
}

/* ---- Small async-signal-safe helpers --------------------------------------------------------- */

static __attribute__((noreturn)) void raw_exit(int status)
{
	for (;;)
		syscall(SYS_exit_group, status);
}

static pid_t raw_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

static pid_t raw_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static double clock_seconds(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Sleeps on a futex word while it holds `val`, for at most ns nanoseconds (< 1 s); spurious
 * wake-ups and EINTR are the caller's loop's business.  `shared`: the word is in the queue's shared
 * memory (woken by another process), else private to this process.  Async-signal-safe.
 */
static void futex_wait_poll(uint32_t *word, uint32_t val, bool shared, long ns)
{
	struct timespec ts = { 0, ns };

	syscall(SYS_futex, word, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

/*
 * /proc/<pid>/stat into buf, and where its fields after the command name begin ("pid (comm) S
 * ppid ...": comm may hold spaces and parentheses, so after the last ')'); NULL when it cannot be
 * read.  Async-signal-safe.
 */
static const char *proc_stat(pid_t pid, char *buf, size_t len)
{
	struct line path = { .len = 0 };
	ssize_t n;
	char *c;
	int fd;

	line_str(&path, "/proc/");
	line_u64(&path, (uint64_t)pid);
	line_str(&path, "/stat");
	path.buf[path.len] = '\0';
	if ((fd = open(path.buf, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	c = strrchr(buf, ')');
	return c && c[1] == ' ' ? c + 2 : NULL;
}

/*
 * True while process `pid` exists and is not a zombie.  The backend is not our child: once it dies
 * it is reaped by init or a subreaper, and a PID 1 that never reaps (some containers) would leave a
 * zombie that still answers kill(pid, 0), hence the look at /proc.  Async-signal-safe.
 */
static bool process_alive(pid_t pid)
{
	char stat[512];
	const char *c;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return false;
	c = proc_stat(pid, stat, sizeof(stat));
	return !c || (c[0] != 'Z' && c[0] != 'X');   /* no /proc: trust kill() */
}

/* ---- End of run ------------------------------------------------------------------------------ */

/*
 * Waits until backend 0 says the profile is written (or failed), for as long as it lives.  No other
 * limit: a large profile takes as long as it takes.  Returns the final enum mn_profile_state, or
 * MN_PROFILE_PENDING when backend 0 died first.  Async-signal-safe.
 */
static uint32_t wait_for_profile(void)
{
	uint32_t *done = &rt.s->profile_done;
	uint32_t v;

	for (;;) {
		/* Pairs with backend 0's release store of profile_done after the rename. */
		v = mn_load_acquire(done);
		if (v != MN_PROFILE_PENDING)
			return v;
		futex_wait_poll(done, MN_PROFILE_PENDING, true, MN_RT_POLL_NS);
		v = mn_load_acquire(done);
		if (v != MN_PROFILE_PENDING)
			return v;
		if (!process_alive(rt.backend_pid[0]))
			return mn_load_acquire(done);
	}
}

/*
 * Appends "<n> event(s)<whose> was/were dropped<why>" to the session's end_reason, "; "-separated.
 * Async-signal-safe.
 */
static void reason_add(struct line *r, uint64_t n, const char *whose, const char *why)
{
	if (r->len)
		line_str(r, "; ");
	line_u64(r, n);
	line_str(r, n == 1 ? " event" : " events");
	line_str(r, whose);
	line_str(r, n == 1 ? " was dropped" : " were dropped");
	line_str(r, why);
}

/* Why events of threads were dropped: no lane was free for them (or, Lamport queue, none at all). */
static void threads_reason(struct line *r, uint64_t n)
{
	unsigned lanes = mn_queue_lanes(rt.q) - 1;

	if (!lanes) {
		reason_add(r, n, " from threads other than the main thread",
			   " (MNEMO_THREADS=0, or the Lamport queue)");
		return;
	}
	if (r->len)
		line_str(r, "; ");
	line_u64(r, n);
	line_str(r, n == 1 ? " event" : " events");
	line_str(r, " from threads beyond the ");
	line_u64(r, lanes);
	line_str(r, " lanes");
	line_str(r, n == 1 ? " was dropped (MNEMO_THREADS)" : " were dropped (MNEMO_THREADS)");
}

/*
 * The end of the run, for every way out: writes the end-of-run record, emits program_end, finishes
 * the queue and waits for the profile.  exit_status is 0..255 and term_signal 0, or exit_status -1
 * and term_signal the fatal signal.
 *
 * Idempotent and async-signal-safe: it runs from on_exit(), _exit() and signal handlers, on any
 * thread.  The first caller does the work; a signal that re-enters it on the same thread returns at
 * once (the handler then lets the process die); any other thread waits until the first one is done,
 * so that a concurrent _exit() cannot cut the flush short.
 *
 * From a signal handler that interrupted the producer thread: inside the queue's slow path, the
 * queue is busy, so program_end is dropped (and counted) and mn_queue_producer_finish() still ends
 * the stream; inside the inline push, program_end may land on the interrupted record, which is
 * harmless because every caller here ends the process and the interrupted push never resumes.
 */
static void end_of_run(int exit_status, int term_signal, const char *exec_path)
{
	struct mn_session *s = rt.s;
	struct line reason = { .len = 0 };
	uint64_t total, thread, other;
	int32_t owner = 0, tid;
	uint32_t done;

	/*
	 * Only loads before the pid check: a vfork child (posix_spawn, system) shares our memory
	 * and may call _exit(); it must not write a byte of it.  A fork child has state RT_OFF
	 * already (on_fork_child()), and a raw clone() child differs by pid.  Pairs with the
	 * release store of rt.state at the end of set-up.
	 */
	if (mn_load_acquire(&rt.state) != RT_ACTIVE || raw_getpid() != rt.pid)
		return;
	tid = raw_gettid();
	if (!mn_cas_acq_rel(&rt.end_owner, &owner, tid)) {
		if (owner == tid)
			return;	/* a signal during our own end of run: let it kill us */
		/* Pairs with the release store of end_done below. */
		while (!mn_load_acquire(&rt.end_done))
			futex_wait_poll(&rt.end_done, 0, false, MN_RT_POLL_NS);
		return;
	}
	mn_rt_quiet++;

	/*
	 * Drops: those before the producer started (the loader's and earlier constructors'
	 * mallocs) are not losses, hence the snapshots.  The queue counts other threads' events
	 * apart from the rest (after a failure, a signal handler's push during the slow path, a
	 * finish racing).
	 */
	total = mn_queue_dropped(rt.q) - rt.dropped_at_start;
	thread = mn_queue_dropped_threads(rt.q) - rt.dropped_threads_at_start;
	other = total > thread ? total - thread : 0;
	if (thread)
		threads_reason(&reason, thread);
	/* Pairs with the release store of rt.failed in on_queue_failure(). */
	if (other && mn_load_acquire(&rt.failed)) {
		reason_add(&reason, other, "", " after profiling stopped: ");
		line_str(&reason, rt.failure);
	} else if (other) {
		reason_add(&reason, other, " of the main thread", "");
	}
	/* Shared libraries built with mnemo that this session does not profile (units.c). */
	if (reason.len + 3 < sizeof(reason.buf)) {
		size_t at = reason.len ? reason.len + 2 : 0;
		size_t k = mn_units_reason(reason.buf + at, sizeof(reason.buf) - 1 - at);

		if (k && reason.len)
			memcpy(reason.buf + reason.len, "; ", 2);
		if (k)
			reason.len = at + k;
	}

	/*
	 * The end-of-run record.  Plain stores: the release in mn_queue_producer_finish() publishes
	 * them with the last buffer, and the backends read them only after the stream ended.
	 */
	s->exit_status = exit_status;
	s->term_signal = term_signal;
	if (exec_path)
		s->exec_ended = mn_q_cur == rt.cur_at_start ? MN_EXEC_EMPTY : MN_EXEC_ENDED;
	s->end_monotonic = clock_seconds(CLOCK_MONOTONIC);
	s->dropped_thread_events = thread;
	s->dropped_other_events = other;
	memcpy(s->end_reason, reason.buf, reason.len < sizeof(s->end_reason) - 1 ?
	       reason.len : sizeof(s->end_reason) - 1);
	s->ended = 1;

	if (__mnemo_program_end)
		__mnemo_program_end((uint32_t)rt.pid, term_signal ? 256u + (uint32_t)term_signal :
				    (uint32_t)exit_status);
	mn_queue_producer_finish(rt.q);
	done = wait_for_profile();

	if (done == MN_PROFILE_PENDING) {
		struct line l = { .len = 0 };

		line_str(&l, "mnemo: the backend (pid ");
		line_u64(&l, (uint64_t)rt.backend_pid[0]);
		line_str(&l, ") exited before writing the profile; no profile written");
		line_print(&l);
	} else if (rt.verbose) {
		struct line l = { .len = 0 };

		line_str(&l, "mnemo: end of run (");
		if (exec_path) {
			line_str(&l, "exec ");
			line_str(&l, exec_path);
		} else if (term_signal) {
			line_str(&l, "signal ");
			line_u64(&l, (uint64_t)term_signal);
		} else {
			line_str(&l, "exit status ");
			line_u64(&l, (uint64_t)exit_status);
		}
		line_str(&l, "): ");
		line_u64(&l, thread + other);
		line_str(&l, " events dropped (");
		line_u64(&l, thread);
		line_str(&l, " from other threads); profile ");
		line_str(&l, done == MN_PROFILE_WRITTEN ? "written to " : "NOT written to ");
		line_str(&l, s->output);
		line_print(&l);
	}

	mn_rt_quiet--;
	/* Publishes the end to threads waiting above; pairs with their acquire load. */
	mn_store_release(&rt.end_done, 1);
	syscall(SYS_futex, &rt.end_done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* exit() and return from main: glibc hands on_exit() handlers the exit status. */
static void on_exit_handler(int status, void *arg)
{
	end_of_run(status & 0xff, 0, NULL);
}

/*
 * _exit() and _Exit(): defined here with default visibility, so that the program's calls and its
 * shared libraries' calls (through the PLT) bind here; glibc's own internal calls (exit() after its
 * handlers, posix_spawn's child) do not, which is what we want.  Async-signal-safe, like the
 * originals.
 */
MN_VISIBLE __attribute__((noreturn)) void _exit(int status)
{
	end_of_run(status & 0xff, 0, NULL);
	raw_exit(status);
}

MN_VISIBLE __attribute__((noreturn, alias("_exit"))) void _Exit(int status);

/* ---- Fatal signals --------------------------------------------------------------------------- */

void mn_rt_end_of_run_signal(int sig)
{
	int saved_errno = errno;

	end_of_run(-1, sig, NULL);
	errno = saved_errno;
}

/*
 * Runs from signals.c's handler, whose kernel disposition has SA_RESETHAND | SA_NODEFER, so the
 * default action is normally back already and a second signal of the same kind during the flush
 * kills at once; it is set again here for the one case it is not (the program's SA_RESETHAND
 * handler, reset by signals.c).  After the flush it re-raises the signal at this thread while it is
 * blocked, and clears it from the mask the kernel restores on return: the signal is then delivered
 * as the handler returns, in the interrupted context, so the process dies of it with the same
 * core-dump behaviour, and a core shows the original faulting instruction.
 */
void mn_rt_fatal_signal(int sig, void *info, void *ctx)
{
	ucontext_t *uc = ctx;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	int saved_errno = errno;
	sigset_t set;

	(void)info;
	sigemptyset(&dfl.sa_mask);
	__sigaction(sig, &dfl, NULL);
	end_of_run(-1, sig, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigdelset(&uc->uc_sigmask, sig);
	syscall(SYS_tgkill, raw_getpid(), raw_gettid(), sig);
	errno = saved_errno;
}

/* ---- Fork children and queue failure --------------------------------------------------------- */

static int start_session(bool first);

/*
 * The image goes on in a new session, image `image` of this process: the old session's cursor
 * goes, its mapping of the queue is traded for private memory (so that a process that outlives
 * the old session does not keep its queue alive), and set-up runs again as at start.
 */
static void begin_image(uint32_t image, pid_t parent)
{
	mn_store_relaxed(&rt.state, RT_OFF);
	mn_queue_producer_abandon(rt.q);
	free(rt.backend_env);
	rt.backend_env = NULL;
	rt.q = NULL;
	rt.s = NULL;
	rt.nbackends = 0;
	rt.failed = 0;
	rt.failure[0] = '\0';
	rt.end_owner = 0;
	rt.end_done = 0;
	rt.image = image;
	rt.parent_pid = parent;
	start_session(false);
}

/*
 * A fork child profiles itself, as image 1 of its pid.  Runs in the child right after fork(),
 * single-threaded; set-up's calls are as safe here as in the constructor (glibc's fork leaves
 * malloc and stdio usable).  posix_spawn() and system() run no fork handlers: their children exec
 * at once, and are sessions of their own if what they run was built with mnemo.
 */
static void on_fork_child(void)
{
	if (mn_load_relaxed(&rt.state) != RT_ACTIVE)
		return;
	mn_signals_fork_child();
	mn_rt_threads_fork_child();
	begin_image(1, rt.pid);
}

/* exec.c, before the exec: runtime_internal.h. */
bool mn_rt_exec_begin(const char *path, char marker[MN_EXEC_MARKER_MAX])
{
	struct line m = { .len = 0 };
	pid_t pid = raw_getpid();

	/* Pairs with the release store of rt.state at the end of set-up. */
	if (mn_load_acquire(&rt.state) != RT_ACTIVE)
		return false;
	line_str(&m, "MNEMO_EXEC_OF=");
	line_u64(&m, (uint64_t)pid);
	line_str(&m, ":");
	if (pid != rt.pid) {   /* a vfork child: the session is its parent's, not its to end */
		line_str(&m, "1");
	} else {
		end_of_run(-1, 0, path);
		/* an image that made no event leaves no profile: the next one takes its number */
		line_u64(&m, rt.s->exec_ended == MN_EXEC_EMPTY ? rt.image : rt.image + 1);
	}
	m.buf[m.len] = '\0';
	memcpy(marker, m.buf, m.len + 1 < MN_EXEC_MARKER_MAX ? m.len + 1 : MN_EXEC_MARKER_MAX);
	marker[MN_EXEC_MARKER_MAX - 1] = '\0';
	return true;
}

/* exec.c, after an exec that failed: runtime_internal.h. */
void mn_rt_exec_failed(void)
{
	if (mn_load_acquire(&rt.state) != RT_ACTIVE || raw_getpid() != rt.pid ||
	    !mn_load_acquire(&rt.end_done) || !rt.s->exec_ended)
		return;
	begin_image(rt.s->exec_ended == MN_EXEC_EMPTY ? rt.image : rt.image + 1, rt.parent_pid);
}

/*
 * The queue cannot go on (a backend died or left): say so once; the program runs on unprofiled and
 * the end of run reports what was dropped after this.  Called once, by the queue's slow path, on
 * any thread; async-signal-safe as the queue requires.
 */
static void on_queue_failure(const char *why)
{
	struct line l = { .len = 0 };
	size_t n = 0;

	while (why[n] && n < sizeof(rt.failure) - 1) {
		rt.failure[n] = why[n];
		n++;
	}
	rt.failure[n] = '\0';
	/* Publishes the reason; pairs with the acquire load in end_of_run(). */
	mn_store_release(&rt.failed, 1);
	line_str(&l, "mnemo: profiling stopped: ");
	line_str(&l, why);
	line_str(&l, "; the program runs on unprofiled");
	line_print(&l);
}

/* ---- Backend launch -------------------------------------------------------------------------- */

/* Everything the children need, prepared before fork so that they allocate nothing. */
struct spawn {
	const char *path;
	char *argv[8];
	char fd_arg[16];
	char index_arg[16];
	char node_arg[16];
	int qfd;      /* the queue; close-on-exec here, inherited by the backend only */
	int devnull;  /* the backend's stdin and stdout */
	int report;   /* write end of the close-on-exec report pipe */
	int maxfd;    /* descriptors to mark close-on-exec without close_range() */
};

/* One 8-byte message on the report pipe (atomic: far below PIPE_BUF). */
struct spawn_report {
	int32_t what;   /* REPORT_* */
	int32_t value;  /* a pid or an errno */
};

enum {
	REPORT_PID = 1,         /* from the intermediate child: the backend's pid */
	REPORT_FORK_ERROR = 2,  /* from the intermediate child: its fork failed */
	REPORT_EXEC_ERROR = 3,  /* from the backend: execve failed */
};

/*
 * The grandchild: becomes the backend.  Only async-signal-safe calls: it is a copy of a process
 * whose other threads (a library constructor may have started some) held locks we would inherit
 * held.  Writes REPORT_EXEC_ERROR and exits if execve fails.
 */
static __attribute__((noreturn)) void exec_backend(const struct spawn *sp)
{
	struct sigaction dfl;
	struct spawn_report r = { REPORT_EXEC_ERROR, 0 };
	sigset_t none;

	/*
	 * Its own session: a Ctrl-C or hang-up aimed at the program's process group must not kill
	 * the backend before the program's handler has flushed and the backend has written.
	 */
	setsid();
	/* Ignored signals and the mask survive exec: give the backend a clean slate. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			__sigaction(sig, &dfl, NULL);
	dup2(sp->devnull, STDIN_FILENO);
	dup2(sp->devnull, STDOUT_FILENO);
	/*
	 * Every inherited descriptor above stderr closes at exec (the program's pipes must not be
	 * held open by a process that outlives it), the report pipe too (that EOF says exec
	 * worked), except the queue.  Order matters: close_range() first, then the queue's flag is
	 * cleared.
	 */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC))
		for (int fd = 3; fd < sp->maxfd; fd++)	/* kernels before 5.11 */
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(sp->qfd, F_SETFD, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(sp->path, sp->argv, rt.backend_env ? rt.backend_env : environ);
	r.value = errno;
	while (write(sp->report, &r, sizeof(r)) < 0 && errno == EINTR)
		;
	raw_exit(127);
}

/* Moves fd above stderr (close-on-exec), so that dup2() onto 0 and 1 cannot clobber it. */
static int fd_above_stderr(int fd)
{
	int hi;

	if (fd < 0 || fd > STDERR_FILENO)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	close(fd);
	return hi;
}

/*
 * Starts `mnemo-backend --fd N --index I [--numa-node K]` (K: rt.numa_node, if any) so that it is
 * not the program's child: fork, the child forks the backend and exits at once, and we reap that
 * child here.  The program's wait() can then never reap the backend, and the program gets no
 * SIGCHLD from it (the one from the intermediate child is consumed here unless one was already
 * pending).  The close-on-exec report pipe tells whether execve succeeded (EOF) or failed (errno).
 * Returns the backend's pid, or -errno.
 */
static pid_t spawn_backend(const char *path, int qfd, unsigned index)
{
	struct spawn sp = { .path = path, .qfd = qfd, .devnull = -1, .report = -1, .maxfd = 1024 };
	struct spawn_report rep[4];
	sigset_t all, old, pend_before, pend_after;
	pid_t child, backend = -ECHILD;
	int pipefd[2], err = 0;
	struct rlimit rl;
	size_t got = 0;

	if (!getrlimit(RLIMIT_NOFILE, &rl))
		sp.maxfd = rl.rlim_cur > 65536 ? 65536 : (int)rl.rlim_cur;
	snprintf(sp.fd_arg, sizeof(sp.fd_arg), "%d", qfd);
	snprintf(sp.index_arg, sizeof(sp.index_arg), "%u", index);
	sp.argv[0] = (char *)"mnemo-backend";
	sp.argv[1] = (char *)"--fd";
	sp.argv[2] = sp.fd_arg;
	sp.argv[3] = (char *)"--index";
	sp.argv[4] = sp.index_arg;
	sp.argv[5] = NULL;
	if (rt.numa_node >= 0) {
		snprintf(sp.node_arg, sizeof(sp.node_arg), "%d", rt.numa_node);
		sp.argv[5] = (char *)"--numa-node";
		sp.argv[6] = sp.node_arg;
		sp.argv[7] = NULL;
	}

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pipefd[0] = fd_above_stderr(pipefd[0]);
	pipefd[1] = fd_above_stderr(pipefd[1]);
	sp.devnull = fd_above_stderr(open("/dev/null", O_RDWR | O_CLOEXEC));
	sp.report = pipefd[1];
	if (pipefd[0] < 0 || pipefd[1] < 0 || sp.devnull < 0) {
		err = errno ? -errno : -EMFILE;
		goto out;
	}

	/*
	 * All signals blocked across the forks: no handler of the program may run in a child, and
	 * the intermediate child's SIGCHLD stays pending here, where we can take it back.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sigpending(&pend_before);
	/* _Fork(): no atfork handlers, async-signal-safe children (see exec_backend()). */
	child = _Fork();
	if (child == 0) {
		struct spawn_report r;
		pid_t b = _Fork();

		if (b == 0)
			exec_backend(&sp);
		r.what = b > 0 ? REPORT_PID : REPORT_FORK_ERROR;
		r.value = b > 0 ? b : errno;
		while (write(sp.report, &r, sizeof(r)) < 0 && errno == EINTR)
			;
		raw_exit(0);
	}
	if (child < 0) {
		err = -errno;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		goto out;
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	/* EOF once the intermediate child exited and the backend exec'd (or exited). */
	for (;;) {
		ssize_t n = read(pipefd[0], (char *)rep + got, sizeof(rep) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(rep))
			break;
	}
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	sigpending(&pend_after);
	if (sigismember(&pend_after, SIGCHLD) && !sigismember(&pend_before, SIGCHLD)) {
		struct timespec zero = { 0, 0 };
		sigset_t chld;

		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigtimedwait(&chld, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	for (size_t i = 0; i < got / sizeof(rep[0]); i++) {
		if (rep[i].what == REPORT_PID)
			backend = rep[i].value;
		else if (rep[i].what == REPORT_FORK_ERROR || rep[i].what == REPORT_EXEC_ERROR)
			err = -rep[i].value;
	}
	if (!err && backend < 0)
		err = -ECHILD;	/* the intermediate child died without a word */
out:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (sp.devnull >= 0)
		close(sp.devnull);
	return err ? err : backend;
}

/*
 * Waits until backend i has attached (its slot leaves MN_BACKEND_NONE) or died, so that a backend
 * that refuses the session or crashes on start turns into one message now rather than a program
 * that runs unprofiled in silence.  A backend that is alive but slow to attach is waited for at
 * most two seconds and then trusted; the end of run checks on it again.  Returns 0, or -1 after
 * printing why.
 */
static int wait_attached(unsigned i)
{
	uint32_t *state = &rt.s->backend[i].state;

	for (int polls = 0; polls < 400; polls++) {
		/* Pairs with the backend's release store of its state. */
		uint32_t st = mn_load_acquire(state);

		/* A module of one backend hosting several (it set its pid before it started them):
		 * the backend goes on with the others, and the profile says which failed. */
		if (st == MN_BACKEND_FAILED && rt.s->nbackends == 1 && rt.s->nmodules > 1 &&
		    rt.s->backend[i].pid > 0)
			return 0;
		if (st == MN_BACKEND_FAILED) {
			dprintf(STDERR_FILENO, "mnemo: backend '%s' for module '%s' failed: %.*s; "
				"running unprofiled, no profile written\n", rt.backend_path,
				rt.s->modules[i], (int)sizeof(rt.s->backend[i].why),
				rt.s->backend[i].why);
			return -1;
		}
		if (st != MN_BACKEND_NONE)
			return 0;
		if (!process_alive(rt.backend_pid[i])) {
			if (mn_load_acquire(state) != MN_BACKEND_NONE)
				continue;	/* attached, then died: decided above */
			dprintf(STDERR_FILENO, "mnemo: backend '%s' (pid %d) exited on start; "
				"running unprofiled, no profile written\n", rt.backend_path,
				(int)rt.backend_pid[i]);
			return -1;
		}
		/* Short sleeps: a backend that stores its state without a futex wake costs 5 ms. */
		futex_wait_poll(state, MN_BACKEND_NONE, true, 5000000L);
	}
	return 0;
}

/* ---- NUMA placement -------------------------------------------------------------------------- */

/*
 * MNEMO_NUMA (DESIGN "Queue": buffers near the threads that use them).  The producer's node is the
 * one that matters: it writes every byte of every buffer, with streaming stores.  So the buffers are
 * placed on the node of the CPU the program starts on (or the node MNEMO_NUMA names), and the
 * backends bind themselves to that node, where they read the buffers and keep their own state.
 * The program itself is never bound: its scheduling is not ours to change.
 *
 * Two system calls rather than libnuma: getcpu() gives the node of this CPU, and
 * get_mempolicy(MPOL_F_MEMS_ALLOWED) the memory nodes this process may use; the placement itself
 * is mn_queue_place() (an mbind()), and the backend, which does link libnuma, binds itself.
 * Linked here, libnuma would be a new DT_NEEDED of every profiled program, which then would not
 * start at all on a machine without libnuma.so.1; even loaded lazily with dlopen(), it runs a
 * constructor that allocates, and on odd systems prints warnings on the program's stderr through
 * numa_warn(), which only the executable could override (the backend does, backend.c).
 */

#define MN_NUMA_WORDS ((MN_NUMA_MAX_NODE + 1) / (8 * sizeof(unsigned long)))

/* The memory nodes this process may allocate on; {0} when the kernel has no NUMA support. */
static void numa_allowed(unsigned long mask[MN_NUMA_WORDS])
{
	memset(mask, 0, MN_NUMA_WORDS * sizeof(unsigned long));
	/* maxnode is one more than the bits the kernel writes (get_mempolicy(2)); ENOSYS when the
	 * kernel has no NUMA. */
	if (!syscall(SYS_get_mempolicy, NULL, mask, (unsigned long)MN_NUMA_MAX_NODE + 2, NULL,
		     MPOL_F_MEMS_ALLOWED))
		for (size_t i = 0; i < MN_NUMA_WORDS; i++)
			if (mask[i])
				return;
	memset(mask, 0, MN_NUMA_WORDS * sizeof(unsigned long));
	mask[0] = 1;
}

static bool numa_has(const unsigned long *mask, int node)
{
	const unsigned bits = 8 * sizeof(unsigned long);

	return node >= 0 && node <= MN_NUMA_MAX_NODE &&
	       (mask[(unsigned)node / bits] >> ((unsigned)node % bits) & 1);
}

/* "0-3,6": the nodes of mask, in ranges, truncated to fit out. */
static void numa_list(char *out, size_t outlen, const unsigned long *mask)
{
	size_t len = 0;

	out[0] = '\0';
	for (int n = 0; n <= MN_NUMA_MAX_NODE && len < outlen; n++) {
		int last = n;

		if (!numa_has(mask, n))
			continue;
		while (numa_has(mask, last + 1))
			last++;
		len += (size_t)snprintf(out + len, outlen - len, last > n ? "%s%d-%d" : "%s%d",
					len ? "," : "", n, last);
		n = last;
	}
}

/*
 * Places the queue's buffers as MNEMO_NUMA (`opt`) says, before anything touches them, and
 * returns the node the backends are to bind to, or -1 for none.  Only speed is at stake, so
 * nothing here stops profiling: in verbose mode one line says what was done or why not; a node
 * MNEMO_NUMA names that this process cannot use is reported always, as the user asked for it.
 */
static int place_queue(const char *opt)
{
	unsigned long allowed[MN_NUMA_WORDS];
	unsigned cpu, here;
	int mode = MN_NUMA_AUTO, count = 0, node, ret;
	char list[64];

	mn_options_numa(opt, &mode);  /* checked by mn_options_read() */
	if (mode == MN_NUMA_OFF) {
		if (rt.verbose)
			dprintf(STDERR_FILENO, "mnemo: NUMA: placement off (MNEMO_NUMA=off)\n");
		return -1;
	}
	numa_allowed(allowed);
	for (int n = 0; n <= MN_NUMA_MAX_NODE; n++)
		count += numa_has(allowed, n);
	if (mode >= 0 && !numa_has(allowed, mode)) {
		numa_list(list, sizeof(list), allowed);
		dprintf(STDERR_FILENO, "mnemo: MNEMO_NUMA: no memory node %d here (nodes %s); "
			"no NUMA placement\n", mode, list);
		return -1;
	}
	if (count <= 1) {
		if (rt.verbose)
			dprintf(STDERR_FILENO, "mnemo: NUMA: one node, placement is a no-op\n");
		return -1;
	}
	node = mode;
	if (node < 0) {
		if (getcpu(&cpu, &here)) {
			if (rt.verbose)
				dprintf(STDERR_FILENO, "mnemo: NUMA: cannot tell this CPU's "
					"node: %s; no placement\n", strerror(errno));
			return -1;
		}
		node = (int)here;
	}
	ret = mn_queue_place(rt.q, node);
	if (ret) {
		if (rt.verbose)
			dprintf(STDERR_FILENO, "mnemo: NUMA: cannot place the queue on node %d: "
				"%s; no placement\n", node, strerror(-ret));
		return -1;
	}
	if (rt.verbose)
		dprintf(STDERR_FILENO, "mnemo: NUMA: queue buffers on node %d (%s), backends bound "
			"to it\n", node, mode < 0 ? "the program's node" : "MNEMO_NUMA");
	return node;
}

/* ---- Set-up ---------------------------------------------------------------------------------- */

static const char *env_lookup(const char *name, void *ctx)
{
	return getenv(name);
}

/* Finds an executable regular file `name` in $PATH; 0 with the path in out, or -ENOENT. */
static int search_path(char *out, size_t outlen, const char *name)
{
	const char *p = getenv("PATH"), *end;
	struct stat st;

	if (!p)
		p = "/usr/local/bin:/usr/bin:/bin";
	for (; p; p = *end ? end + 1 : NULL) {
		size_t n;

		end = strchrnul(p, ':');
		n = (size_t)(end - p);
		/* An empty entry is the working directory, as for execvp(). */
		if ((size_t)snprintf(out, outlen, "%.*s%s%s", (int)n, p, n ? "/" : "", name) >=
		    outlen)
			continue;
		if (!access(out, X_OK) && !stat(out, &st) && S_ISREG(st.st_mode))
			return 0;
	}
	return -ENOENT;
}

/*
 * The backend executable: MNEMO_BACKEND (searched in $PATH when it has no slash), else the one the
 * program was linked against if it is still there, else mnemo-backend in $PATH.  Returns 0, or
 * -ENOENT after printing why.
 */
static int find_backend(char *out, size_t outlen, const char *opt)
{
	if (*opt) {
		if (strchr(opt, '/')) {
			snprintf(out, outlen, "%s", opt);
			return 0;	/* execve says what is wrong with it, if anything */
		}
		if (!search_path(out, outlen, opt))
			return 0;
		dprintf(STDERR_FILENO, "mnemo: cannot start backend '%s': not found in PATH; "
			"running unprofiled, no profile written\n", opt);
		return -ENOENT;
	}
	if (__mnemo_backend_path && __mnemo_backend_path[0] &&
	    !access(__mnemo_backend_path, X_OK)) {
		snprintf(out, outlen, "%s", __mnemo_backend_path);
		return 0;
	}
	if (!search_path(out, outlen, "mnemo-backend"))
		return 0;
	dprintf(STDERR_FILENO, "mnemo: cannot start backend 'mnemo-backend': not found "
		"(set MNEMO_BACKEND); running unprofiled, no profile written\n");
	return -ENOENT;
}

/* 0 when the backend will be able to write `path` (a temporary file in its directory, renamed). */
static int check_writable(const char *path)
{
	char dir[MN_PATH_MAX];
	struct stat st;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS))
			return -errno;
	} else if (errno != ENOENT) {
		return -errno;
	}
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS))
		return -errno;
	return 0;
}

/* The program's name for the default profile path: /proc/self/exe, else argv[0]. */
static void program_name(char *out, size_t outlen, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", out, outlen - 1);
	const char *del = " (deleted)";
	size_t dl = strlen(del);

	if (n > 0) {
		out[n] = '\0';
		if ((size_t)n > dl && !strcmp(out + n - dl, del))
			out[n - dl] = '\0';
		return;
	}
	snprintf(out, outlen, "%s", argv && argv[0] ? argv[0] : "a.out");
}

/*
 * argv as the session stores it: each string NUL-terminated, back to back.  From the arguments
 * glibc passes to constructors of the main program; from /proc/self/cmdline if they are missing.
 * Returns a malloc'd blob (NULL when there is nothing), its length and argc.
 */
static char *argv_blob(int argc, char **argv, size_t *len, uint32_t *count)
{
	char *blob = NULL;
	size_t n = 0;

	*len = 0;
	*count = 0;
	if (argv && argc > 0) {
		for (int i = 0; i < argc && argv[i]; i++)
			n += strlen(argv[i]) + 1;
		blob = malloc(n ? n : 1);
		if (!blob)
			return NULL;
		n = 0;
		for (int i = 0; i < argc && argv[i]; i++) {
			size_t l = strlen(argv[i]) + 1;

			memcpy(blob + n, argv[i], l);
			n += l;
			(*count)++;
		}
	} else {
		int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
		size_t cap = 0;

		if (fd < 0)
			return NULL;
		for (;;) {
			ssize_t r;

			if (n == cap) {
				char *b = realloc(blob, cap = cap ? 2 * cap : 4096);

				if (!b)
					break;
				blob = b;
			}
			r = read(fd, blob + n, cap - n);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		close(fd);
		for (size_t i = 0; i < n; i++)
			*count += !blob[i];
	}
	*len = n;
	return blob;
}

/* The lowest descriptor the queue's fd may move to: high, out of the program's usual range. */
static int high_fd_base(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1024)
		return 768;
	return rl.rlim_cur > 16 ? (int)(rl.rlim_cur * 3 / 4) : STDERR_FILENO + 1;
}

/*
 * Sampling of loads and stores (spec.h `sample:`, abi.h).  When the callbacks name a variable,
 * reads N from it; a bad value, or N > 1 in a build whose callbacks do not count down because a
 * module needs every access, gets one line on stderr and every access is profiled.  Sets the
 * callbacks' periods for the N in effect, and makes the backends' environment say that N (VAR=1
 * when every access is sent), so that a module reads it there.  Costs only accuracy, never stops
 * profiling: if the environment cannot be copied, the backends see the program's own value
 * (verbose mode says so).
 */
static void setup_sampling(void)
{
	static char assign[64 + 16];
	const char *var = &__mnemo_sample_var ? __mnemo_sample_var : "";
	const char *blocker = &__mnemo_sample_blocker ? __mnemo_sample_blocker : "";
	size_t len = strlen(var), count = 0, k = 0;
	unsigned n = 1;
	char err[256];

	if (!*var || len + 12 > sizeof(assign))
		return;
	if (mn_options_sample(var, getenv(var), &n, err, sizeof(err))) {
		dprintf(STDERR_FILENO, "mnemo: %s; profiling every access\n", err);
		n = 1;
	} else if (n > 1 && *blocker) {
		dprintf(STDERR_FILENO, "mnemo: %s=%u ignored: this program was also built for "
			"module %s, which needs every load and store; profiling every access\n",
			var, n, blocker);
		n = 1;
	} else if (n > 1 && rt.verbose) {
		dprintf(STDERR_FILENO, "mnemo: sampling one load or store in %u (%s)\n", n, var);
	}
	/* Periods uniform in [n - n/2, n + n/2]: mean n, at most 1.5e9, fit the int32_t count. */
	mn_sample_lo = n - n / 2;
	mn_sample_span = 2 * (n / 2) + 1;

	snprintf(assign, sizeof(assign), "%s=%u", var, n);
	for (char **e = environ; e && *e; e++)
		count++;
	rt.backend_env = malloc((count + 2) * sizeof(char *));
	if (!rt.backend_env) {
		if (rt.verbose)
			dprintf(STDERR_FILENO, "mnemo: out of memory: the backends see the "
				"program's %s\n", var);
		return;
	}
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, var, len) || (*e)[len] != '=')
			rt.backend_env[k++] = *e;
	rt.backend_env[k++] = assign;
	rt.backend_env[k] = NULL;
}

/*
 * What the steps of setup() hand each other, in the order they fill it.  The profile's path and
 * the backend's live on in static buffers (rt.backend_path points at the latter).
 */
struct boot {
	int argc;
	char **argv;
	struct mn_options opt;                             /* read_options() */
	char modules[MN_MAX_MODULES][MN_MODULE_NAME_MAX];  /* select_modules() */
	int nmod;
	char prog[MN_PATH_MAX];                            /* choose_output() */
	char *output;
	const char *backend;                               /* locate_backend() */
	uint64_t sites_len, values_len;                    /* size_session() */
	uint64_t program_sites_len, units_len;             /* ... linked units (units.c) */
	uint32_t site_total;
	char *args;                                        /* argv_blob(); fill_session() frees */
	size_t argv_len;
	uint32_t argc_seen;
	int nback;
	char node_arg[32];                                 /* place_on_node() */
};

/* The MNEMO_* variables.  MNEMO_DISABLE stops here without a word; a bad value with one line. */
static int read_options(struct boot *b)
{
	char err[512];
	int ret = mn_options_read(&b->opt, env_lookup, NULL, err, sizeof(err));

	if (b->opt.disable)
		return -1;
	if (ret) {
		dprintf(STDERR_FILENO, "mnemo: %s; running unprofiled\n", err);
		return -1;
	}
	rt.verbose = b->opt.verbose;
	return 0;
}

/* The program went through the mnemo pass, of this runtime's ABI. */
static int check_pass_abi(void)
{
	if (!&__mnemo_pass_abi) {
		dprintf(STDERR_FILENO, "mnemo: this program was not instrumented by the mnemo pass "
			"(no __mnemo_pass_abi); running unprofiled\n");
		return -1;
	}
	if (__mnemo_pass_abi != MNEMO_ABI_VERSION) {
		dprintf(STDERR_FILENO, "mnemo: this program was instrumented for mnemo ABI %u but "
			"links the runtime of ABI %u (rebuild it); running unprofiled\n",
			__mnemo_pass_abi, MNEMO_ABI_VERSION);
		return -1;
	}
	return 0;
}

/* The modules built in (callbacks.c), narrowed by MNEMO_MODULES. */
static int select_modules(struct boot *b)
{
	char err[512];

	b->nmod = mn_options_select_modules(b->modules, __mnemo_modules ? __mnemo_modules : "",
					    b->opt.modules, err, sizeof(err));
	if (b->nmod < 0) {
		dprintf(STDERR_FILENO, "mnemo: %s; running unprofiled\n", err);
		return -1;
	}
	return 0;
}

/* True while the backend of process pid's session holds path (session.h). */
static bool held_by(const char *path, pid_t pid)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	unsigned n = mn_session_claim_name(a.sun_path, path, pid);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool held;

	if (fd < 0)
		return false;
	/* connect(), not a bind() of our own: two programs starting at once below one shell would
	 * each find the other's probe holding the name */
	held = !connect(fd, (struct sockaddr *)&a,
			(socklen_t)(offsetof(struct sockaddr_un, sun_path) + n));
	close(fd);
	return held;
}

/* The parent of process pid, from /proc (0 when it cannot be told). */
static pid_t parent_of(pid_t pid)
{
	char stat[512];
	const char *c = proc_stat(pid, stat, sizeof(stat));
	long ppid;

	return c && sscanf(c, "%*c %ld", &ppid) == 1 ? (pid_t)ppid : 0;
}

/* True when a process above this one (a program of the run that started it, through a shell or
 * not) is writing path: this one then writes beside it. */
static bool held_above(const char *path)
{
	pid_t p = getppid();

	for (int depth = 0; p > 1 && depth < 64; depth++, p = parent_of(p))
		if (held_by(path, p))
			return true;
	return false;
}

/*
 * MNEMO_EXEC_OF=<pid>:<image>, which exec.c puts in the environment of what an image execs: this
 * is that image of process pid, or, in another process (a vfork child's exec, or a program
 * between the two), image 1 of its own.  Taken out of the environment before the program runs.
 */
static void take_exec_marker(void)
{
	const char *m = getenv("MNEMO_EXEC_OF");
	long pid;
	unsigned image;

	if (!m)
		return;
	if (sscanf(m, "%ld:%u", &pid, &image) == 2)
		rt.image = pid == (long)raw_getpid() ? image : 1;
	unsetenv("MNEMO_EXEC_OF");
}

/*
 * The profile's path (MNEMO_OUTPUT or its default), checked writable before anything starts;
 * image 1 and later of a run write beside the first's (mn_options_image_path()).
 */
static int choose_output(struct boot *b)
{
	static char output[MN_PATH_MAX];
	char cwd[MN_PATH_MAX], *cwdp;
	int ret;

	b->output = output;
	program_name(b->prog, sizeof(b->prog), b->argv);
	cwdp = getcwd(cwd, sizeof(cwd));
	ret = mn_options_output_path(output, sizeof(output), b->opt.output, b->prog,
				     (long)raw_getpid(), cwdp);
	if (ret == -EINVAL && !cwdp) {
		/* A relative path, and no working directory (deleted, too long) to resolve it. */
		ret = -errno;
		if (!mn_options_output_path(output, sizeof(output), b->opt.output, b->prog,
					    (long)raw_getpid(), "/"))
			memmove(output, output + 1, strlen(output));
	}
	if (!ret && !rt.image && held_above(output))
		rt.image = 1;   /* the program that started this one writes it (system(), ...) */
	if (!ret)
		ret = mn_options_image_path(output, sizeof(output), (long)raw_getpid(), rt.image,
					    strstr(b->opt.output, "%p") != NULL);
	if (!ret)
		ret = check_writable(output);
	if (ret) {
		dprintf(STDERR_FILENO, "mnemo: cannot write profile '%s': %s; running unprofiled\n",
			output[0] ? output : b->opt.output[0] ? b->opt.output : b->prog,
			strerror(-ret));
		return -1;
	}
	return 0;
}

/* The backend executable (MNEMO_BACKEND, or the one linked against); find_backend() says why. */
static int locate_backend(struct boot *b)
{
	static char backend[MN_PATH_MAX];

	if (find_backend(backend, sizeof(backend), b->opt.backend))
		return -1;
	b->backend = rt.backend_path = backend;
	return 0;
}

/* What the session block carries after its header (session.h), and how many backends read it. */
static void size_session(struct boot *b)
{
	uint64_t unit_sites;

	if (&__mnemo_site_table && &__mnemo_site_table_size)
		b->sites_len = __mnemo_site_table_size;
	/* The shared libraries that registered so far: their tables after the program's. */
	b->program_sites_len = b->sites_len;
	mn_units_layout(&__mnemo_site_count ? __mnemo_site_count : 0, &unit_sites, &b->units_len,
			&b->site_total);
	if (b->sites_len)
		b->sites_len += unit_sites;
	b->args = argv_blob(b->argc, b->argv, &b->argv_len, &b->argc_seen);
	/* One backend for every module, or one per module (MNEMO_BACKENDS=per-module). */
	b->nback = mn_options_choice(b->opt.backends, mn_options_backends) == 1 ? b->nmod : 1;
	/* One value set per site id, when a module takes `value` (abi.h); 7 bytes to align them. */
	b->values_len = &__mnemo_value_sets && &__mnemo_value_sites && &__mnemo_site_count ?
			((uint64_t)b->site_total + 1) * sizeof(struct mn_value_set) : 0;
}

/* The event queue, with room for the session block; in its Lamport mode when callbacks.c asks. */
static int create_queue(struct boot *b)
{
	struct mn_queue_config cfg;
	int ret;

	cfg.buf_bytes = (size_t)b->opt.queue_mb << 20;
	cfg.nbufs = MN_RT_NBUFS;
	cfg.nconsumers = (unsigned)b->nback;
	cfg.extra_bytes = sizeof(struct mn_session) + b->sites_len + b->argv_len + 7 +
			  b->values_len + b->units_len;
	cfg.lamport = &__mnemo_queue_lamport && __mnemo_queue_lamport;
	/* The Lamport queue is one ring, the main thread's: other threads' events are dropped. */
	cfg.threads = cfg.lamport ? 0 : b->opt.threads;
	cfg.lane_bytes = 0;   /* MNEMO_QUEUE_MB / 16 */
	if (cfg.lamport && b->nback > 1) {
		dprintf(STDERR_FILENO, "mnemo: the Lamport queue (--mnemo-queue=lamport) takes one "
			"backend, not %d (MNEMO_BACKENDS=per-module); running unprofiled, no profile "
			"written\n", b->nback);
		free(b->args);
		return -1;
	}
	ret = mn_queue_create(&rt.q, &cfg);
	if (ret) {
		dprintf(STDERR_FILENO, "mnemo: cannot create the event queue (%u MiB): %s; "
			"running unprofiled, no profile written\n", MN_RT_NBUFS * b->opt.queue_mb,
			strerror(-ret));
		free(b->args);
		return -1;
	}
	return 0;
}

/*
 * The session's configuration, complete before the first backend exists: the fork and exec in
 * start_backends() order these stores before anything the backend reads.
 */
static void fill_session(struct boot *b)
{
	struct mn_session *s;
	const char *workers_env;

	rt.s = s = mn_queue_extra(rt.q);
	rt.pid = raw_getpid();
	s->magic = MN_SESSION_MAGIC;
	s->version = MN_SESSION_VERSION;
	s->abi = MNEMO_ABI_VERSION;
	s->producer_pid = rt.pid;
	s->nmodules = (uint32_t)b->nmod;
	s->nbackends = (uint32_t)b->nback;
	s->split = (uint32_t)mn_options_choice(b->opt.split, mn_options_splits);
	s->image = rt.image;
	s->parent_pid = rt.parent_pid;
	/* Unset: the backend chooses (one per CPU when it hosts several modules). */
	workers_env = env_lookup("MNEMO_WORKERS", NULL);
	s->workers = workers_env && *workers_env ? b->opt.workers : 0;
	s->verbose = b->opt.verbose;
	s->reproducible = b->opt.reproducible;
	s->program_site_count = &__mnemo_site_count ? __mnemo_site_count : 0;
	s->site_count = b->site_total;
	s->start_realtime = clock_seconds(CLOCK_REALTIME);
	s->start_monotonic = clock_seconds(CLOCK_MONOTONIC);
	memcpy(s->output, b->output, sizeof(s->output));
	memcpy(s->modules, b->modules, sizeof(s->modules));
	if (&__mnemo_wire)
		s->wire = __mnemo_wire;
	s->sites_off = sizeof(*s);
	s->sites_len = b->sites_len;
	s->program_sites_len = b->program_sites_len;
	if (b->sites_len) {
		memcpy((char *)s + s->sites_off, __mnemo_site_table, b->program_sites_len);
		mn_units_copy_sites((char *)s + s->sites_off + b->program_sites_len);
	}
	s->argv_off = s->sites_off + b->sites_len;
	s->argv_len = b->argv_len;
	s->argc = b->argc_seen;
	if (b->argv_len)
		memcpy((char *)s + s->argv_off, b->args, b->argv_len);
	free(b->args);
	/* Zeroed (the queue's memory is): nothing published, every value sent until a backend
	 * publishes it.  The callbacks read them once every backend is attached (start_backends(),
	 * publish_value_sets()). */
	s->values_off = (s->argv_off + b->argv_len + 7) & ~(uint64_t)7;
	s->values_len = b->values_len;
	s->units_off = s->values_off + s->values_len;
	s->units_len = mn_units_copy_text((char *)s + s->units_off, b->units_len);
}

/* Before any backend exists (they bind to the node) and before any buffer is touched. */
static void place_on_node(struct boot *b)
{
	rt.numa_node = place_queue(b->opt.numa);
	if (rt.numa_node >= 0)
		snprintf(b->node_arg, sizeof(b->node_arg), " --numa-node %d", rt.numa_node);
}

/*
 * Starts the backends and waits until every one is attached.  They get the queue at a high,
 * close-on-exec descriptor (exec_backend() clears the flag in the backend only).  Afterwards the
 * program keeps no descriptor at all: the mapping is all the producer needs, and the program's
 * own fd numbers and exec'd children stay as they would be without mnemo.  mn_queue_destroy() is
 * therefore never called once that fd is closed.  On failure the started backends are killed
 * (they must not write a profile of a run that is not profiled); the queue is the caller's.
 */
static int start_backends(struct boot *b)
{
	int qfd = mn_queue_fd(rt.q);
	int hi = fcntl(qfd, F_DUPFD_CLOEXEC, high_fd_base());

	if (hi < 0)
		hi = fcntl(qfd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	if (hi < 0) {
		dprintf(STDERR_FILENO, "mnemo: cannot start backend '%s': %s; running unprofiled, "
			"no profile written\n", b->backend, strerror(errno));
		return -1;
	}
	for (int i = 0; i < b->nback; i++) {
		pid_t pid = spawn_backend(b->backend, hi, (unsigned)i);

		if (pid < 0) {
			dprintf(STDERR_FILENO, "mnemo: cannot start backend '%s': %s; running "
				"unprofiled, no profile written\n", b->backend, strerror(-pid));
			goto fail;
		}
		rt.backend_pid[rt.nbackends++] = pid;
		if (rt.verbose)
			dprintf(STDERR_FILENO, "mnemo: backend %s --fd %d --index %d%s (%s): "
				"pid %d\n", b->backend, hi, i, b->node_arg,
				b->nback == b->nmod ? b->modules[i] : "every module", (int)pid);
	}
	for (unsigned i = 0; i < rt.nbackends; i++)
		if (wait_attached(i))
			goto fail;
	close(hi);
	close(qfd);
	return 0;

fail:
	for (unsigned i = 0; i < rt.nbackends; i++)
		kill(rt.backend_pid[i], SIGKILL);
	rt.nbackends = 0;
	close(hi);
	return -1;
}

/* A set-up that failed once the queue existed: nothing is left but the on_exit() registration. */
static void drop_queue(void)
{
	free(rt.backend_env);
	rt.backend_env = NULL;
	mn_queue_destroy(rt.q);
	rt.q = NULL;
	rt.s = NULL;
}

static void say_profiling(const struct boot *b)
{
	if (rt.verbose)
		dprintf(STDERR_FILENO, "mnemo: profiling %s with %d module%s (%u worker%s each), "
			"queue %u x %u MiB; profile %s\n", b->prog, b->nmod, b->nmod > 1 ? "s" : "",
			b->opt.workers, b->opt.workers > 1 ? "s" : "", MN_RT_NBUFS, b->opt.queue_mb,
			b->output);
}

/*
 * The callbacks start checking values against the sets the backends publish.  Only now: a failed
 * set-up unmaps the session, which the callbacks must not read.  MNEMO_ALL_VALUES: no set to check
 * against, every value is sent.
 */
static void publish_value_sets(const struct boot *b)
{
	if (b->values_len && !b->opt.all_values) {
		__mnemo_value_sets = (struct mn_value_set *)((char *)rt.s + rt.s->values_off);
		__mnemo_value_sites = b->site_total + 1;
	}
}

/* What the running program needs from here on: its signals, its forks (once: a later image of
 * the process has them already), a failing queue. */
static void install_hooks(bool first)
{
	if (first) {
		mn_signals_install();
		pthread_atfork(NULL, NULL, on_fork_child);
	}
	mn_queue_set_failure_hook(rt.q, on_queue_failure);
}

/*
 * Everything between reading the options and producing, one step a line (the model: compiler-rt's
 * MemprofInitInternal).  Returns 0 when profiling runs; otherwise the failing step has printed why
 * (or, for MNEMO_DISABLE, deliberately not) and nothing is left behind but the on_exit()
 * registration, which then does nothing.
 */
static int setup(int argc, char **argv, bool first)
{
	struct boot b = { .argc = argc, .argv = argv };

	if (first)
		take_exec_marker();
	if (read_options(&b) || check_pass_abi() || select_modules(&b))
		return -1;
	setup_sampling();
	if (choose_output(&b) || locate_backend(&b))
		return -1;
	size_session(&b);
	if (create_queue(&b))
		return -1;
	fill_session(&b);
	place_on_node(&b);
	if (start_backends(&b)) {
		drop_queue();
		return -1;
	}
	say_profiling(&b);
	publish_value_sets(&b);
	install_hooks(first);
	return 0;
}

/*
 * The runtime's constructor.  Priority 101, the first not reserved to the implementation: it runs
 * after the shared libraries' constructors and before the program's own (default priority 65535)
 * and its C++ static constructors.  glibc passes argc, argv and envp to the main program's
 * constructors.
 */
/*
 * A session from set-up to producing: the first image's (first) from the constructor, a later
 * one's from begin_image().  0, or -1 when the image runs unprofiled (set-up said why).
 */
static int start_session(bool first)
{
	mn_rt_quiet++;
	if (setup(rt.argc, rt.argv, first)) {
		mn_rt_quiet--;
		return -1;
	}
	/*
	 * Events before this point (the loader's and earlier constructors' mallocs) went nowhere
	 * and are not losses: the end of run counts drops from here on.
	 */
	rt.dropped_at_start = mn_queue_dropped(rt.q);
	rt.dropped_threads_at_start = mn_queue_dropped_threads(rt.q);
	mn_queue_producer_start(rt.q);
	/* Publishes rt to end_of_run() on every thread; pairs with its acquire load of rt.state. */
	mn_store_release(&rt.state, RT_ACTIVE);
	mn_rt_quiet--;

	if (__mnemo_program_start)
		__mnemo_program_start((uint32_t)rt.pid);
	if (__mnemo_register_globals)
		__mnemo_register_globals();
	mn_units_start(rt.verbose);
	rt.cur_at_start = mn_q_cur;
	return 0;
}

/*
 * The runtime's constructor.  Priority 101, the first not reserved to the implementation: it runs
 * after the shared libraries' constructors and before the program's own (default priority 65535)
 * and its C++ static constructors.  glibc passes argc, argv and envp to the main program's
 * constructors.
 */
__attribute__((constructor(101))) static void mn_rt_init(int argc, char **argv, char **envp)
{
	/*
	 * First thing, before anything in this program can register an exit handler: handlers run
	 * in reverse order of registration, so ours runs after the program's atexit() handlers and
	 * its C++ static destructors (registered by the constructors that run after this one).
	 * on_exit() rather than atexit(): it is given the exit status.
	 */
	on_exit(on_exit_handler, NULL);
	rt.argc = argc;
	rt.argv = argv;
	mn_rt_exec_init();
	start_session(true);
}
