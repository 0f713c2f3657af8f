/*
 * Shared plumbing for the queue tests: a record pattern that catches loss, reordering, double
 * consumption and torn records (ck's validate style), a consumer that checks it, and process
 * helpers.  The producer always runs in a forked process, as in real use; results travel back in an
 * anonymous shared mapping, and the CMocka assertions run only in the test process.
 *
 * Topology of a run: the test process (a child subreaper, so orphans come back to it) forks the
 * producer P; P creates the queue and forks the consumers, which inherit the memfd, as the runtime's
 * backends do.  P produces, finishes, and waits for its consumers.
 */
#ifndef MNEMO_TESTS_QTEST_H
#define MNEMO_TESTS_QTEST_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include "queue.h"

/* ---- The record pattern ------------------------------------------------------------------------ */

#define QT_TAG      UINT64_C(0xc0de)   /* word 0 bits 48..63 */
#define QT_TAG_ALT  UINT64_C(0xbad0)   /* records that must never arrive (dropped threads, forks) */
#define QT_GOLDEN   UINT64_C(0x9e3779b97f4a7c15)

/* Record i is 1..4 words long, pseudo-randomly; word 0 = tag | i | length (the "event code"). */
static inline unsigned qt_len(uint64_t i)
{
	return 1 + (unsigned)((i * QT_GOLDEN) >> 62);
}

/* Fills w with record i; returns its length.  Some arguments are zero on purpose. */
static inline unsigned qt_make(uint64_t i, uint64_t tag, uint64_t *w)
{
	unsigned n = qt_len(i);

	w[0] = tag << 48 | (i & UINT64_C(0xffffffffff)) << 8 | n;
	w[1] = i * QT_GOLDEN;                      /* 0 for i == 0 */
	w[2] = i % 5 == 2 ? 0 : ~i;
	w[3] = i ^ UINT64_C(0x5555555555555555);
	return n;
}

/* ---- Results, shared between the processes of a run -------------------------------------------- */

#define QT_MAX_CONSUMERS 8

struct qt_consumer {
	int32_t pid;
	int32_t pop_ret;            /* what the last mn_queue_pop() returned */
	int32_t died;               /* mn_queue_producer_died() at the end */
	int32_t done;
	int32_t attach_ret;
	int32_t fds_before, fds_after;
	int32_t maps_before;        /* queue mappings before mn_queue_attach() (the producer's,
				     * inherited by fork: a real backend execs and has none) */
	int32_t maps_after;         /* ... and after mn_queue_detach() */
	uint64_t records;           /* records checked and found right */
	uint64_t buffers;
	uint64_t zero_skips;        /* zero words skipped where a record would start */
	uint64_t torn;              /* tolerated torn final records */
	int64_t end_ns;             /* CLOCK_MONOTONIC when pop returned 0 */
	char err[256];              /* first error, "" if none */
};

struct qt_shared {
	struct qt_consumer c[QT_MAX_CONSUMERS];
	uint64_t pushed;
	uint64_t dropped;
	uint64_t dropped_threads;
	uint64_t child_dropped;
	int32_t child_maps;         /* a fork child's queue mappings after it abandoned the queue */
	int32_t hook_calls;
	int32_t producer_ret;       /* 0, or a setup step that failed (negative errno) */
	int32_t producer_fds_before, producer_fds_after;
	int32_t producer_maps_after;  /* queue mappings after mn_queue_destroy(); -1: not reached */
	int64_t kill_ns;
	int64_t hook_ns;
	int64_t block_start_ns;
	char hook_why[160];
	char producer_err[256];
};

static inline struct qt_shared *qt_shared_new(void)
{
	void *p = mmap(NULL, sizeof(struct qt_shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static inline void qt_shared_free(struct qt_shared *s)
{
	munmap(s, sizeof(*s));
}

static inline int64_t qt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void qt_err(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (buf[0])
		return;  /* keep the first */
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* Open fds of this process. */
static inline int qt_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;  /* the directory's own fd */
}

/* The memfd's name, as /proc/PID/maps and /proc/PID/fd show it ("/memfd:mnemo-queue (deleted)"). */
#define QT_MEMFD_NAME "memfd:mnemo-queue"

/* Mappings of this process that belong to a queue's memfd. */
static inline int qt_count_queue_maps(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, QT_MEMFD_NAME) != NULL;
	fclose(f);
	return n;
}

/* Entries of /dev/shm whose name mentions mnemo (the queue is a memfd: there must be none). */
static inline int qt_count_shm_mnemo(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += strstr(e->d_name, "mnemo") != NULL;
	closedir(d);
	return n;
}

/* Entries in /dev/shm (-1 if it does not exist). */
static inline int qt_count_shm(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* ---- The checking consumer ---------------------------------------------------------------------- */

struct qt_consume_opts {
	unsigned attach_delay_us;   /* sleep this long before attaching (the producer goes first) */
	unsigned start_sleep_us;    /* sleep this long after attaching, before the first pop */
	unsigned sleep_every;       /* sleep sleep_us after every this many buffers (0: never) */
	unsigned sleep_us;
	unsigned kill_after;        /* SIGKILL itself while holding buffer number kill_after (0: never) */
	unsigned detach_after;      /* detach after releasing this many buffers (0: never) */
	bool tolerate_torn_last;    /* the final record may have unwritten arguments */
	bool zero_behind;           /* mn_queue_zero_behind() right after attaching */
};

/*
 * Checks the records of one buffer against the pattern, expecting *next first.  Returns false on
 * the first mismatch (error in r->err).
 */
static inline bool qt_check_buffer(struct qt_consumer *r, const uint64_t *w, size_t n,
				   uint64_t *next, unsigned index, bool tolerate_torn)
{
	size_t j = 0;

	while (j < n) {
		uint64_t exp[4], i = *next;
		unsigned len;

		if (!w[j]) {
			r->zero_skips++;
			j++;
			continue;
		}
		len = qt_make(i, QT_TAG, exp);
		if (w[j] != exp[0]) {
			qt_err(r->err, sizeof(r->err), "consumer %u, buffer %" PRIu64 ", word %zu: "
			       "expected word 0 of record %" PRIu64 " = %#" PRIx64 ", got %#" PRIx64,
			       index, r->buffers, j, i, exp[0], w[j]);
			return false;
		}
		if (j + len > n) {
			qt_err(r->err, sizeof(r->err), "consumer %u: record %" PRIu64 " (%u words) "
			       "runs past the buffer's %zu words", index, i, len, n);
			return false;
		}
		for (unsigned k = 1; k < len; k++) {
			if (w[j + k] == exp[k])
				continue;
			if (tolerate_torn && w[j + k] == 0) {
				r->torn++;
				break;
			}
			qt_err(r->err, sizeof(r->err), "consumer %u: record %" PRIu64 " word %u: "
			       "expected %#" PRIx64 ", got %#" PRIx64, index, i, k, exp[k], w[j + k]);
			return false;
		}
		r->records++;
		*next = i + 1;
		j += len;
	}
	return true;
}

/*
 * Runs consumer `index` to the end of the stream and records what it saw.  In the consumer
 * process, which it leaves with _exit().
 */
static inline void qt_consumer_main(struct qt_shared *sh, int fd, unsigned index,
				    const struct qt_consume_opts *o)
{
	struct qt_consumer *r = &sh->c[index];
	struct mn_queue *q;
	const uint64_t *w;
	uint64_t next = 0;
	size_t n;
	bool ok = true;
	int ret;

	r->pid = getpid();
	if (o && o->attach_delay_us)
		usleep(o->attach_delay_us);
	r->fds_before = qt_count_fds();
	r->maps_before = qt_count_queue_maps();
	r->attach_ret = mn_queue_attach(&q, fd, index);
	if (r->attach_ret) {
		qt_err(r->err, sizeof(r->err), "consumer %u: mn_queue_attach: expected 0, got %d",
		       index, r->attach_ret);
		r->done = 1;
		_exit(1);
	}
	if (o && o->zero_behind && (ret = mn_queue_zero_behind(q)) != 0) {
		qt_err(r->err, sizeof(r->err), "consumer %u: mn_queue_zero_behind: expected 0, got %d",
		       index, ret);
		r->done = 1;
		_exit(1);
	}
	if (o && o->start_sleep_us)
		usleep(o->start_sleep_us);
	while ((ret = mn_queue_pop(q, &w, &n)) > 0) {
		r->buffers++;
		if (o && o->kill_after && r->buffers == o->kill_after)
			raise(SIGKILL);
		/* Keep popping after an error, so the producer is not held up. */
		if (ok)
			ok = qt_check_buffer(r, w, n, &next, index, o && o->tolerate_torn_last);
		mn_queue_release(q);
		if (o && o->detach_after && r->buffers == o->detach_after)
			break;
		if (o && o->sleep_every && r->buffers % o->sleep_every == 0)
			usleep(o->sleep_us);
	}
	r->end_ns = qt_now_ns();
	r->pop_ret = ret;
	r->died = mn_queue_producer_died(q);
	if (ret < 0)
		qt_err(r->err, sizeof(r->err), "consumer %u: mn_queue_pop: expected >= 0, got %d",
		       index, ret);
	if (o && o->tolerate_torn_last && r->torn > 1)
		qt_err(r->err, sizeof(r->err), "consumer %u: expected at most 1 torn record, got %"
		       PRIu64, index, r->torn);
	mn_queue_detach(q);
	r->fds_after = qt_count_fds();
	r->maps_after = qt_count_queue_maps();
	r->done = 1;
	_exit(0);
}

/* ---- Processes ---------------------------------------------------------------------------------- */

/* Orphans (consumers whose producer died) are reparented to the test process. */
static inline void qt_become_subreaper(void)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/*
 * Waits for pid up to timeout_ms; kills it if it overstays.  Returns its wait status, or -1 when
 * it had to be killed.
 */
static inline int qt_wait(pid_t pid, int timeout_ms)
{
	int64_t end = qt_now_ns() + (int64_t)timeout_ms * 1000000;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0)
			return -1;
		if (qt_now_ns() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(1000);
	}
}

/*
 * Reaps every remaining child (consumers reparented to us); SIGKILLs the consumers still running
 * after timeout_ms (never in a passing run).
 */
static inline void qt_reap_all(struct qt_shared *sh, int timeout_ms)
{
	int64_t end = qt_now_ns() + (int64_t)timeout_ms * 1000000;
	bool killed = false;

	for (;;) {
		pid_t r = waitpid(-1, NULL, WNOHANG);

		if (r < 0 && errno == ECHILD)
			return;
		if (r > 0)
			continue;
		if (!killed && qt_now_ns() > end) {
			for (int i = 0; i < QT_MAX_CONSUMERS; i++)
				if (sh->c[i].pid > 0)
					kill(sh->c[i].pid, SIGKILL);
			killed = true;
		}
		usleep(1000);
	}
}

/* CMocka check with a message that says what was expected and what came. */
#define QT_EXPECT_EQ(what, expected, got)                                                         \
	do {                                                                                       \
		unsigned long long e_ = (unsigned long long)(expected);                            \
		unsigned long long g_ = (unsigned long long)(got);                                 \
		if (e_ != g_)                                                                      \
			fail_msg("%s: expected %llu, got %llu", (what), e_, g_);                   \
	} while (0)

#define QT_EXPECT_NO_ERR(err)                                                                     \
	do {                                                                                       \
		if ((err)[0])                                                                      \
			fail_msg("%s", (err));                                                     \
	} while (0)

/* The producer's queue is in the Lamport mode: push with mn_queue_push_lamport(). */
static bool qt_lamport;

/* Producer side of a standard run: push records 0..n-1 of the pattern. */
static inline void qt_produce(uint64_t n)
{
	uint64_t w[4];

	for (uint64_t i = 0; i < n; i++) {
		unsigned len = qt_make(i, QT_TAG, w);

		if (qt_lamport)
			mn_queue_push_lamport(w, len);
		else
			mn_queue_push(w, len);
	}
}

/* ---- A standard run ------------------------------------------------------------------------------ */

struct qt_run;
typedef void (*qt_produce_fn)(struct mn_queue *q, struct qt_shared *sh, const struct qt_run *run);

struct qt_run {
	size_t buf_bytes;
	unsigned nbufs;
	unsigned nconsumers;
	uint64_t records;                     /* for the default producer */
	uint32_t skip_mask;                   /* consumers not spawned (and forgotten) */
	void (*hook)(const char *why);        /* failure hook, or NULL */
	qt_produce_fn produce;                /* NULL: qt_produce(records) */
	bool no_finish;                       /* leave the stream open (the producer gets killed) */
	bool place;                           /* mn_queue_place(q, node) before producing */
	bool lamport;                         /* the queue's Lamport mode */
	int node;
	struct qt_consume_opts copts[QT_MAX_CONSUMERS];
};

/* The shared area of the current run, for failure hooks (which get no context argument). */
static struct qt_shared *qt_cur;

static inline void qt_hook_count(const char *why)
{
	size_t n = strlen(why);

	if (n >= sizeof(qt_cur->hook_why))
		n = sizeof(qt_cur->hook_why) - 1;
	memcpy(qt_cur->hook_why, why, n);
	qt_cur->hook_ns = qt_now_ns();
	__atomic_fetch_add(&qt_cur->hook_calls, 1, __ATOMIC_RELAXED);
}

/* Forks the producer process of a run; returns its pid. */
static inline pid_t qt_spawn_producer(struct qt_shared *sh, const struct qt_run *run)
{
	struct mn_queue_config cfg = {
		.buf_bytes = run->buf_bytes,
		.nbufs = run->nbufs,
		.nconsumers = run->nconsumers,
		.extra_bytes = 4096,
		.lamport = run->lamport,
	};
	pid_t cp[QT_MAX_CONSUMERS] = { 0 };
	struct mn_queue *q;
	pid_t p = fork();
	int ret;

	if (p)
		return p;
	qt_cur = sh;
	qt_lamport = run->lamport;
	sh->producer_fds_before = qt_count_fds();
	sh->producer_maps_after = -1;
	ret = mn_queue_create(&q, &cfg);
	if (ret) {
		sh->producer_ret = ret;
		snprintf(sh->producer_err, sizeof(sh->producer_err),
			 "mn_queue_create: expected 0, got %d", ret);
		_exit(1);
	}
	if (run->place && (ret = mn_queue_place(q, run->node))) {
		sh->producer_ret = ret;
		snprintf(sh->producer_err, sizeof(sh->producer_err),
			 "mn_queue_place(node %d): expected 0, got %d", run->node, ret);
		_exit(1);
	}
	for (unsigned i = 0; i < run->nconsumers; i++) {
		if (run->skip_mask & (1u << i)) {
			mn_queue_forget_consumer(q, i);
			continue;
		}
		cp[i] = fork();
		if (cp[i] == 0)
			qt_consumer_main(sh, mn_queue_fd(q), i, &run->copts[i]);
	}
	if (run->hook)
		mn_queue_set_failure_hook(q, run->hook);
	mn_queue_producer_start(q);
	if (run->produce)
		run->produce(q, sh, run);
	else
		qt_produce(run->records);
	if (!run->no_finish)
		mn_queue_producer_finish(q);
	sh->dropped = mn_queue_dropped(q);
	sh->dropped_threads = mn_queue_dropped_threads(q);
	for (unsigned i = 0; i < run->nconsumers; i++)
		if (cp[i] > 0)
			waitpid(cp[i], NULL, 0);
	mn_queue_destroy(q);
	sh->producer_fds_after = qt_count_fds();
	sh->producer_maps_after = qt_count_queue_maps();
	_exit(0);
}

/* Runs a whole stream and waits for every process; fails the test if the producer misbehaved. */
static inline void qt_run_stream(struct qt_shared *sh, const struct qt_run *run, int timeout_ms)
{
	pid_t p;
	int st;

	qt_become_subreaper();
	p = qt_spawn_producer(sh, run);
	if (p < 0)
		fail_msg("fork: expected a producer process, got %s", strerror(errno));
	st = qt_wait(p, timeout_ms);
	qt_reap_all(sh, 2000);
	QT_EXPECT_NO_ERR(sh->producer_err);
	if (st == -1)
		fail_msg("producer: expected to finish within %d ms, got killed", timeout_ms);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("producer: expected exit status 0, got wait status %#x", st);
}

/* The checks every complete run ends with: consumer i saw `expected` records and a normal end. */
static inline void qt_expect_consumer(const struct qt_shared *sh, unsigned i, uint64_t expected)
{
	const struct qt_consumer *c = &sh->c[i];
	char what[64];

	QT_EXPECT_NO_ERR(c->err);
	snprintf(what, sizeof(what), "consumer %u finished", i);
	QT_EXPECT_EQ(what, 1, c->done);
	snprintf(what, sizeof(what), "consumer %u records", i);
	QT_EXPECT_EQ(what, expected, c->records);
	snprintf(what, sizeof(what), "consumer %u last pop", i);
	QT_EXPECT_EQ(what, 0, c->pop_ret);
	snprintf(what, sizeof(what), "consumer %u producer_died", i);
	QT_EXPECT_EQ(what, 0, c->died);
	snprintf(what, sizeof(what), "consumer %u zero words skipped", i);
	QT_EXPECT_EQ(what, 0, c->zero_skips);
}

/*
 * Nothing of the queue is left in the processes that outlived a run: the producer (if it lived to
 * mn_queue_destroy()) holds no more fds than before and no mapping of the memfd, every consumer
 * that got to mn_queue_detach() neither more fds nor more mappings than before it attached, and
 * /dev/shm never holds a queue.
 */
static inline void qt_expect_released(const struct qt_shared *sh, unsigned nconsumers)
{
	char what[80];

	if (sh->producer_maps_after >= 0) {
		QT_EXPECT_EQ("producer's open fds after mn_queue_destroy()",
			     sh->producer_fds_before, sh->producer_fds_after);
		QT_EXPECT_EQ("producer's memfd mappings after mn_queue_destroy()", 0,
			     sh->producer_maps_after);
	}
	for (unsigned i = 0; i < nconsumers; i++) {
		if (!sh->c[i].done || sh->c[i].attach_ret)
			continue;
		snprintf(what, sizeof(what), "consumer %u's open fds after mn_queue_detach()", i);
		QT_EXPECT_EQ(what, sh->c[i].fds_before, sh->c[i].fds_after);
		snprintf(what, sizeof(what), "consumer %u's memfd mappings after detaching", i);
		QT_EXPECT_EQ(what, sh->c[i].maps_before, sh->c[i].maps_after);
	}
	QT_EXPECT_EQ("/dev/shm entries named mnemo", 0, qt_count_shm_mnemo());
}

#endif /* MNEMO_TESTS_QTEST_H */
