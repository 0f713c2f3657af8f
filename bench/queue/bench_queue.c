/*
 * bench-queue: the Mnemo queue at the throughput limit (issue "[2 of 9] Queue at the throughput
 * limit"; PROMPT section 5.2 and Table 10).
 *
 *   bench-queue RECORDING [-n EVENTS] [-r REPEATS] [-b MIB] [-k NBUFS] [-v]
 *
 * Replays a recorded event stream (recording.h, made by mnemo-record from a real run) until EVENTS
 * events (default 100 million) have moved from this process to consumer processes, through:
 *
 *   - the Mnemo queue (queue.h) with 1, 2 and 4 consumer processes, each reading every word of
 *     every buffer (a sum of all words, checked against the sum of what was sent);
 *   - Concurrency Kit's ck_ring, SPSC, records by value in 24-byte slots, in a MAP_SHARED mapping;
 *   - a ring of 24-byte slots under one process-shared pthread mutex and two condition variables,
 *     one record per lock / unlock;
 *   - the limit: the same replay loop writing the same bytes with streaming stores (movnti, as
 *     mn_queue_push()) into a wrapping buffer the size of the Mnemo ring that nobody reads;
 *
 * and, for the Mnemo queue with one consumer, the same events as fixed 16-byte and fixed 24-byte
 * records (with a limit for each).  Every row is measured in this run; with REPEATS > 1 the rows
 * are run round-robin REPEATS times and each keeps its fastest run.  It prints the tables and the
 * issue's targets with PASS / FAIL, and exits 0 whether or not a target is met (a measurement); it
 * exits 1 only when a consumer got other data than was sent, or on a set-up error.
 *
 * Time is wall-clock from the moment every consumer is attached and waiting to the moment the last
 * consumer has read the last record: first-touch page faults of each mechanism's shared memory
 * (all of them shmem, 4 KiB pages) are inside it, fork and attach are not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ck_ring.h>

#include "queue.h"
#include "recording.h"

#define PROG          "bench-queue"
#define MAX_CONSUMERS 4
#define SLOT_WORDS    3      /* the slot rings' record: the largest record of the mix */

/* Event names by code, for the mix line (the catalogue's, events.yaml). */
static const char *const event_name[MN_WIRE_MAX_EVENTS] = {
	[1] = "load", [2] = "store", [3] = "pointer_create", [4] = "heap_alloc",
	[5] = "heap_realloc", [6] = "heap_free", [7] = "stack_alloc", [8] = "stack_free",
	[9] = "global", [10] = "func_entry", [11] = "func_exit", [12] = "loop_invoke",
	[13] = "loop_iter", [14] = "loop_exit", [15] = "program_start", [16] = "program_end",
};

/* ---- The recording and the replay plan ------------------------------------------------------ */

struct stream {
	uint64_t *words;               /* the records, then SLOT_WORDS zero words of padding */
	uint8_t *lens;                 /* each record's length in words, in order */
	uint64_t nwords, nevents;
	uint8_t len[MN_WIRE_MAX_EVENTS];
	uint64_t count[MN_WIRE_MAX_EVENTS];
	unsigned max_len;
};

/*
 * How EVENTS events are replayed: `passes` times the whole recording, then its first `tail_events`
 * events.
 */
struct plan {
	uint64_t events, passes, tail_events;
};

enum fmt { FMT_VAR, FMT_FIX16, FMT_FIX24 };   /* how each event is sent */

static const char *const fmt_name[] = {
	[FMT_VAR] = "variable (as recorded)",
	[FMT_FIX16] = "fixed 16 B (cut/padded)",
	[FMT_FIX24] = "fixed 24 B (padded)",
};

/* What the consumers must see, per format: the number of words and their sum (mod 2^64). */
struct expect {
	uint64_t words, sum;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, PROG ": %s: %s\n", what, why);
	exit(1);
}

/* Loads and checks the recording; exits with a message on any error. */
static void load_recording(struct stream *st, const char *path)
{
	struct mn_rec_header h;
	size_t bytes, got = 0;
	uint64_t total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h))
		die(path, fd < 0 ? strerror(errno) : "shorter than a recording header");
	if (h.magic != MN_REC_MAGIC || h.version != MN_REC_VERSION || h.header != sizeof(h))
		die(path, "not a recording of this version (bench/queue/recording.h, MN_REC_VERSION)");
	if (!h.events || h.words > (SIZE_MAX >> 4))
		die(path, "the recording holds no events");
	bytes = (size_t)(h.words + SLOT_WORDS) * 8;
	/* 2 MiB aligned and huge pages if the kernel agrees: the replay streams through it. */
	st->words = aligned_alloc(2u << 20, (bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1));
	if (!st->words)
		die(path, strerror(ENOMEM));
	madvise(st->words, bytes, MADV_HUGEPAGE);
	while (got < h.words * 8) {
		ssize_t n = read(fd, (char *)st->words + got, h.words * 8 - got);

		if (n <= 0)
			die(path, n < 0 ? strerror(errno) : "shorter than its header says");
		got += (size_t)n;
	}
	close(fd);
	memset(st->words + h.words, 0, SLOT_WORDS * 8);
	st->nwords = h.words;
	st->nevents = h.events;
	memcpy(st->len, h.nwords, sizeof(st->len));

	/* Frame it once: every record has a length, none runs past the end, the count matches. */
	st->lens = malloc(h.events);
	if (!st->lens)
		die(path, strerror(ENOMEM));
	for (uint64_t i = 0, e = 0; i < st->nwords; e++) {
		unsigned code = st->words[i] & 0xff;
		unsigned n = code < MN_WIRE_MAX_EVENTS ? st->len[code] : 0;

		if (!n || n > st->nwords - i || e >= st->nevents)
			die(path, "corrupt: a record with no length, or past the end, or too many");
		if (n > SLOT_WORDS)
			die(path, "has records of more than 24 bytes; the slot rings here hold 24");
		st->count[code]++;
		st->lens[e] = (uint8_t)n;
		st->max_len = n > st->max_len ? n : st->max_len;
		i += n;
	}
	for (unsigned c = 0; c < MN_WIRE_MAX_EVENTS; c++)
		total += st->count[c];
	if (total != st->nevents)
		die(path, "corrupt: the header's event count does not match the records");
}

/* The words of one record as sent in format f (at most SLOT_WORDS; the rest of r zero). */
static inline __attribute__((always_inline)) unsigned convert(enum fmt f, const uint64_t *p,
							      unsigned n, uint64_t *r)
{
	/*
	 * Branch-free, with masks: p is padded, so reading 3 words is always safe.  The masks are
	 * hidden from the optimizer (empty asm), which otherwise turns them back into conditionals
	 * and those into branches, which the mix's record lengths mispredict.
	 */
	uint64_t keep1 = -(uint64_t)(n > 1), keep2 = f == FMT_FIX16 ? 0 : -(uint64_t)(n > 2);

	__asm__("" : "+r"(keep1), "+r"(keep2));

	r[0] = p[0];
	r[1] = p[1] & keep1;
	r[2] = p[2] & keep2;
	return f == FMT_VAR ? n : f == FMT_FIX16 ? 2 : 3;
}

static struct plan make_plan(const struct stream *st, uint64_t events)
{
	struct plan pl = { .events = events, .passes = events / st->nevents,
			   .tail_events = events % st->nevents };

	return pl;
}

static struct expect make_expect(const struct stream *st, const struct plan *pl, enum fmt f)
{
	struct expect whole = { 0, 0 }, tail = { 0, 0 }, x;

	for (uint64_t i = 0, e = 0; i < st->nwords; e++) {
		uint64_t r[SLOT_WORDS];
		unsigned n = st->lens[e], m = convert(f, st->words + i, n, r);

		for (unsigned j = 0; j < m; j++)
			whole.sum += r[j];
		whole.words += m;
		if (e + 1 == pl->tail_events)
			tail = whole;
		i += n;
	}
	x.words = whole.words * pl->passes + tail.words;
	x.sum = whole.sum * pl->passes + tail.sum;
	return x;
}

/*
 * Replays the plan, calling PUT(p, n) for every record (p its words in the recording, n their
 * count).  A macro so each mechanism's loop is compiled with its own put inlined, as an
 * instrumented program inlines its pushes.  Lengths come from st->lens, one byte per event read in
 * sequence: framing the records with the wire table instead (load word 0, look its length up, step)
 * is a chain of two dependent loads per event, which alone held the replay to 2.6 ns an event here,
 * a cost an instrumented program, whose every push has a length fixed at compile time, never pays.
 */
#define REPLAY(st, pl, PUT)                                                                        \
	do {                                                                                       \
		for (uint64_t pass_ = 0; pass_ <= (pl)->passes; pass_++) {                         \
			const uint64_t *p_ = (st)->words;                                          \
			const uint8_t *len_ = (st)->lens;                                          \
			const uint8_t *lend_ = len_ + (pass_ < (pl)->passes ? (st)->nevents        \
									    : (pl)->tail_events);  \
			for (; len_ < lend_; len_++) {                                             \
				unsigned n_ = *len_;                                               \
				PUT(p_, n_);                                                       \
				p_ += n_;                                                          \
			}                                                                          \
		}                                                                                  \
	} while (0)

/* ---- Shared results and consumer processes --------------------------------------------------- */

struct consumer_result {
	double end;            /* CLOCK_MONOTONIC when it had read the last record */
	uint64_t words, sum;   /* words read and their sum */
	int ok;                /* it saw the end of the stream */
	double pop, read, release;  /* Mnemo consumers: seconds in each call, for -v */
};

struct shared {
	uint32_t ready;        /* consumers attached and about to wait for records */
	uint8_t pad[60];
	struct consumer_result c[MAX_CONSUMERS];
};

static struct shared *sh;
static double produce_seconds;   /* the last run's producer, from the clock's start to its end */
static pid_t kids[MAX_CONSUMERS];  /* the running row's consumers, for the watchdog */
static unsigned nkids;

/* SIGALRM: a row overran its time (a bug, or a consumer that died where nothing notices). */
static void watchdog(int sig)
{
	static const char msg[] = PROG ": a row did not finish in its time limit; giving up\n";

	ssize_t n;

	for (unsigned i = 0; i < nkids; i++)
		kill(kids[i], SIGKILL);
	n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	_exit(1);
}

static pid_t fork_consumer(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork", strerror(errno));
	if (pid > 0)
		kids[nkids++] = pid;
	return pid;
}

static void consumer_ready(void)
{
	/* This consumer is attached (and its queue handle set up) before the producer starts the
	 * clock; pairs with the acquire load in wait_ready(). */
	mn_fetch_add_release(&sh->ready, 1);
}

static void consumer_done(unsigned i, uint64_t words, uint64_t sum, int ok)
{
	sh->c[i].end = now();
	sh->c[i].words = words;
	sh->c[i].sum = sum;
	sh->c[i].ok = ok;
	_exit(0);
}

/* Waits until n consumers are ready: they are attached, so the clock can start. */
static void wait_ready(unsigned n)
{
	/* Pairs with the release in consumer_ready(). */
	while (mn_load_acquire(&sh->ready) < n)
		usleep(100);
}

/* Reaps the consumers; the row's end is the last consumer's end.  False if any failed. */
static bool reap(const pid_t *pids, unsigned n, double *end)
{
	bool ok = true;

	*end = 0;
	for (unsigned i = 0; i < n; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			ok = false;
		if (sh->c[i].end > *end)
			*end = sh->c[i].end;
	}
	return ok;
}

/*
 * Bounded waiting for the spinning rings: pause, then yield, then sleep 50 us a try, so a waiter
 * never holds a core the other side needs for long (2-core machines).  Reset *tries on progress.
 */
static inline void backoff(unsigned *tries)
{
	if (*tries < 256)
		mn_cpu_relax();
	else if (*tries < 512)
		sched_yield();
	else
		usleep(50);
	(*tries)++;
}

/* ---- Mnemo queue ----------------------------------------------------------------------------- */

struct config {
	uint64_t events;
	unsigned repeats;
	size_t buf_bytes;
	unsigned nbufs;
	bool verbose;
};

static uint64_t fold(const uint64_t *w, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += w[i];
	return s;
}

/* Consumer i: reads every word of every buffer; times its calls (4 clock reads a buffer). */
static void mnemo_consumer(int fd, unsigned i)
{
	struct mn_queue *q;
	const uint64_t *w;
	uint64_t words = 0, sum = 0;
	double t0, t1, t2, t3, pop = 0, rd = 0, rel = 0;
	size_t n;
	int r;

	if (mn_queue_attach(&q, fd, i))
		_exit(1);
	consumer_ready();
	for (;;) {
		t0 = now();
		r = mn_queue_pop(q, &w, &n);
		t1 = now();
		pop += t1 - t0;
		if (r <= 0)
			break;
		sum += fold(w, n);
		words += n;
		t2 = now();
		mn_queue_release(q);
		t3 = now();
		rd += t2 - t1;
		rel += t3 - t2;
	}
	sh->c[i].pop = pop;
	sh->c[i].read = rd;
	sh->c[i].release = rel;
	mn_queue_detach(q);
	consumer_done(i, words, sum, r == 0);
}

#define PUT_MNEMO_VAR(p, n)                                                                        \
	do {                                                                                       \
		switch (n) {                                                                       \
		case 1: mn_queue_push(p, 1); break;                                                \
		case 2: mn_queue_push(p, 2); break;                                                \
		default: mn_queue_push(p, 3); break;                                               \
		}                                                                                  \
	} while (0)
#define PUT_MNEMO_FIX(p, n, f, m)                                                                  \
	do {                                                                                       \
		uint64_t r_[SLOT_WORDS];                                                           \
		convert(f, p, n, r_);                                                              \
		mn_queue_push(r_, m);                                                              \
	} while (0)
#define PUT_MNEMO_FIX16(p, n) PUT_MNEMO_FIX(p, n, FMT_FIX16, 2)
#define PUT_MNEMO_FIX24(p, n) PUT_MNEMO_FIX(p, n, FMT_FIX24, 3)

static __attribute__((noinline)) void produce_mnemo(const struct stream *st, const struct plan *pl,
						    enum fmt f)
{
	if (f == FMT_VAR)
		REPLAY(st, pl, PUT_MNEMO_VAR);
	else if (f == FMT_FIX16)
		REPLAY(st, pl, PUT_MNEMO_FIX16);
	else
		REPLAY(st, pl, PUT_MNEMO_FIX24);
}

/* One run through the Mnemo queue; returns seconds, or a negative number on a set-up failure. */
static double run_mnemo(const struct config *cfg, const struct stream *st, const struct plan *pl,
			enum fmt f, unsigned nconsumers)
{
	struct mn_queue_config qc = { .buf_bytes = cfg->buf_bytes, .nbufs = cfg->nbufs,
				      .nconsumers = nconsumers };
	struct mn_queue *q;
	pid_t pids[MAX_CONSUMERS];
	double t0, end;
	int err = mn_queue_create(&q, &qc);

	if (err)
		die("cannot create the Mnemo queue", strerror(-err));
	for (unsigned i = 0; i < nconsumers; i++) {
		pids[i] = fork_consumer();
		if (pids[i] == 0)
			mnemo_consumer(mn_queue_fd(q), i);
	}
	wait_ready(nconsumers);
	mn_queue_producer_start(q);
	t0 = now();
	produce_mnemo(st, pl, f);
	mn_queue_producer_finish(q);
	produce_seconds = now() - t0;
	if (!reap(pids, nconsumers, &end))
		return -1;
	mn_queue_destroy(q);
	return end - t0;
}

/* ---- The limit: the same stores, nobody reading ---------------------------------------------- */

/*
 * Like mn_queue_push() without a queue: the cursor in a register, wrapping at the end.  The wrap
 * is a branch, predicted not taken (the empty volatile asm keeps the compiler from making it a
 * conditional move, which would put three dependent instructions on the cursor each record).
 */
#define PUT_LIMIT_N(p, m)                                                                          \
	do {                                                                                       \
		if (__builtin_expect(c + (m) > end, 0)) {                                          \
			__asm__ volatile("");                                                      \
			c = base;                                                                  \
		}                                                                                  \
		for (unsigned i_ = 0; i_ < (m); i_++)                                              \
			mn_stream_store64(c + i_, (p)[i_]);                                        \
		c += (m);                                                                          \
	} while (0)
#define PUT_LIMIT_VAR(p, n)                                                                        \
	do {                                                                                       \
		switch (n) {                                                                       \
		case 1: PUT_LIMIT_N(p, 1); break;                                                  \
		case 2: PUT_LIMIT_N(p, 2); break;                                                  \
		default: PUT_LIMIT_N(p, 3); break;                                                 \
		}                                                                                  \
	} while (0)
#define PUT_LIMIT_FIX(p, n, f, m)                                                                  \
	do {                                                                                       \
		uint64_t r_[SLOT_WORDS];                                                           \
		convert(f, p, n, r_);                                                              \
		PUT_LIMIT_N(r_, m);                                                                \
	} while (0)
#define PUT_LIMIT_FIX16(p, n) PUT_LIMIT_FIX(p, n, FMT_FIX16, 2)
#define PUT_LIMIT_FIX24(p, n) PUT_LIMIT_FIX(p, n, FMT_FIX24, 3)

static __attribute__((noinline)) void produce_limit(const struct stream *st, const struct plan *pl,
						    enum fmt f, uint64_t *base, size_t nwords)
{
	uint64_t *c = base, *end = base + nwords;

	if (f == FMT_VAR)
		REPLAY(st, pl, PUT_LIMIT_VAR);
	else if (f == FMT_FIX16)
		REPLAY(st, pl, PUT_LIMIT_FIX16);
	else
		REPLAY(st, pl, PUT_LIMIT_FIX24);
	/* The stores have reached memory, as a publish would make sure. */
	mn_stream_fence();
}

static double run_limit(const struct config *cfg, const struct stream *st, const struct plan *pl,
			enum fmt f)
{
	size_t bytes = cfg->buf_bytes * cfg->nbufs;
	/* Shared anonymous memory: the same kind of pages (shmem, 4 KiB) as the queue's memfd. */
	uint64_t *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
			     0);
	double t0, t;

	if (buf == MAP_FAILED)
		die("cannot map the limit's buffer", strerror(errno));
	t0 = now();
	produce_limit(st, pl, f, buf, bytes / 8);
	t = now() - t0;
	produce_seconds = t;
	munmap(buf, bytes);
	return t;
}

/* ---- ck_ring, SPSC, 24-byte records by value ------------------------------------------------- */

struct rec24 {
	uint64_t w[SLOT_WORDS];
};
CK_RING_PROTOTYPE(rec24, rec24)

/* The ring and its slots in one MAP_SHARED mapping made before fork. */
struct ck_shared {
	struct ck_ring ring;   /* consumer and producer counters on separate lines (ck's layout) */
	uint8_t pad[256 - sizeof(struct ck_ring)];
	struct rec24 slot[];
};

static unsigned ring_slots(const struct config *cfg)
{
	/* The largest power of two of slots that fits in the Mnemo ring's bytes. */
	size_t bytes = cfg->buf_bytes * cfg->nbufs, n = 1;

	while (n * 2 * sizeof(struct rec24) <= bytes)
		n *= 2;
	return (unsigned)n;
}

static void ck_consumer(struct ck_shared *cs)
{
	struct rec24 r;
	uint64_t words = 0, sum = 0;
	unsigned tries = 0;

	consumer_ready();
	for (;;) {
		if (!ck_ring_dequeue_spsc_rec24(&cs->ring, cs->slot, &r)) {
			backoff(&tries);
			continue;
		}
		tries = 0;
		if (!r.w[0])    /* the end: word 0 of a record is never zero */
			break;
		sum += r.w[0] + r.w[1] + r.w[2];
		words += SLOT_WORDS;
	}
	consumer_done(0, words, sum, 1);
}

#define PUT_CK(p, n)                                                                               \
	do {                                                                                       \
		struct rec24 r_;                                                                   \
		unsigned tries_ = 0;                                                               \
		convert(FMT_FIX24, p, n, r_.w);                                                    \
		while (!ck_ring_enqueue_spsc_rec24(&cs->ring, cs->slot, &r_))                      \
			backoff(&tries_);                                                          \
	} while (0)

static __attribute__((noinline)) void produce_ck(const struct stream *st, const struct plan *pl,
						 struct ck_shared *cs)
{
	static const uint64_t end_mark[SLOT_WORDS];   /* all zero: no record starts with 0 */

	REPLAY(st, pl, PUT_CK);
	PUT_CK(end_mark, 1);
}

static double run_ck(const struct config *cfg, const struct stream *st, const struct plan *pl)
{
	unsigned slots = ring_slots(cfg);
	size_t bytes = sizeof(struct ck_shared) + (size_t)slots * sizeof(struct rec24);
	struct ck_shared *cs = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	double t0, end;

	if (cs == MAP_FAILED)
		die("cannot map the ck_ring", strerror(errno));
	ck_ring_init(&cs->ring, slots);
	pid = fork_consumer();
	if (pid == 0)
		ck_consumer(cs);
	wait_ready(1);
	t0 = now();
	produce_ck(st, pl, cs);
	produce_seconds = now() - t0;
	if (!reap(&pid, 1, &end))
		return -1;
	munmap(cs, bytes);
	return end - t0;
}

/* ---- Mutex and condition variables, one record per lock ------------------------------------- */

/*
 * The plain way: one process-shared mutex over the whole ring, a record per lock, and a condition
 * variable per direction, signalled only when the other side said it may be waiting.
 */
struct mutex_ring {
	pthread_mutex_t lock;
	pthread_cond_t nonempty, nonfull;
	uint64_t head, tail;        /* next slot to write, next slot to read; under lock */
	uint64_t mask;
	int prod_waiting, cons_waiting;
	uint8_t pad[64];
	struct rec24 slot[];
};

static void mutex_put(struct mutex_ring *m, const struct rec24 *r)
{
	pthread_mutex_lock(&m->lock);
	while (m->head - m->tail > m->mask) {
		m->prod_waiting = 1;
		pthread_cond_wait(&m->nonfull, &m->lock);
	}
	m->prod_waiting = 0;
	m->slot[m->head & m->mask] = *r;
	m->head++;
	if (m->cons_waiting)
		pthread_cond_signal(&m->nonempty);
	pthread_mutex_unlock(&m->lock);
}

static void mutex_get(struct mutex_ring *m, struct rec24 *r)
{
	pthread_mutex_lock(&m->lock);
	while (m->head == m->tail) {
		m->cons_waiting = 1;
		pthread_cond_wait(&m->nonempty, &m->lock);
	}
	m->cons_waiting = 0;
	*r = m->slot[m->tail & m->mask];
	m->tail++;
	if (m->prod_waiting)
		pthread_cond_signal(&m->nonfull);
	pthread_mutex_unlock(&m->lock);
}

static void mutex_consumer(struct mutex_ring *m)
{
	struct rec24 r;
	uint64_t words = 0, sum = 0;

	consumer_ready();
	for (;;) {
		mutex_get(m, &r);
		if (!r.w[0])
			break;
		sum += r.w[0] + r.w[1] + r.w[2];
		words += SLOT_WORDS;
	}
	consumer_done(0, words, sum, 1);
}

#define PUT_MUTEX(p, n)                                                                            \
	do {                                                                                       \
		struct rec24 r_;                                                                   \
		convert(FMT_FIX24, p, n, r_.w);                                                    \
		mutex_put(m, &r_);                                                                 \
	} while (0)

static __attribute__((noinline)) void produce_mutex(const struct stream *st, const struct plan *pl,
						    struct mutex_ring *m)
{
	static const uint64_t end_mark[SLOT_WORDS];   /* all zero: no record starts with 0 */

	REPLAY(st, pl, PUT_MUTEX);
	PUT_MUTEX(end_mark, 1);
}

static double run_mutex(const struct config *cfg, const struct stream *st, const struct plan *pl)
{
	unsigned slots = ring_slots(cfg);
	size_t bytes = sizeof(struct mutex_ring) + (size_t)slots * sizeof(struct rec24);
	struct mutex_ring *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	pid_t pid;
	double t0, end;

	if (m == MAP_FAILED)
		die("cannot map the mutex ring", strerror(errno));
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&m->lock, &ma);
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(&m->nonempty, &ca);
	pthread_cond_init(&m->nonfull, &ca);
	m->mask = slots - 1;
	pid = fork_consumer();
	if (pid == 0)
		mutex_consumer(m);
	wait_ready(1);
	t0 = now();
	produce_mutex(st, pl, m);
	produce_seconds = now() - t0;
	if (!reap(&pid, 1, &end))
		return -1;
	pthread_cond_destroy(&m->nonempty);
	pthread_cond_destroy(&m->nonfull);
	pthread_mutex_destroy(&m->lock);
	munmap(m, bytes);
	return end - t0;
}

/* ---- The machine: how far apart its first two CPUs are ------------------------------------- */

/*
 * Round trip of one cache line between CPU 0 and CPU 1 (two processes, pinned for this only), in
 * ns, best of 3 runs of 20000; 0 when there is no second CPU or pinning fails.  ck_ring and the
 * mutex ring hand cache lines across every few records, the Mnemo queue once a buffer.  It is
 * slow when another process holds either CPU (pinned, the thread waits its turn), and on a
 * virtual machine it changes with where the host runs the two virtual CPUs.
 */
static double round_trip_ns(void)
{
	enum { TRIPS = 20000 };
	uint64_t *line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
			      0);
	cpu_set_t old, one;
	double best = 0;
	pid_t pid;

	if (line == MAP_FAILED || sysconf(_SC_NPROCESSORS_ONLN) < 2 ||
	    sched_getaffinity(0, sizeof(old), &old) || !CPU_ISSET(0, &old) || !CPU_ISSET(1, &old))
		goto out;
	pid = fork();
	if (pid == 0) {
		CPU_ZERO(&one);
		CPU_SET(1, &one);
		sched_setaffinity(0, sizeof(one), &one);
		for (uint64_t i = 1; i <= 3 * TRIPS; i++) {
			/* Pairs with the parent's release store of the odd value. */
			while (mn_load_acquire(line) != 2 * i - 1)
				mn_cpu_relax();
			mn_store_release(line, 2 * i);
		}
		_exit(0);
	}
	if (pid < 0)
		goto out;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	for (uint64_t run = 0, i = 1; run < 3; run++) {
		double t0 = now(), t;

		for (uint64_t end = i + TRIPS; i < end; i++) {
			mn_store_release(line, 2 * i - 1);
			/* Pairs with the child's release store of the even value. */
			while (mn_load_acquire(line) != 2 * i)
				mn_cpu_relax();
		}
		t = (now() - t0) / TRIPS * 1e9;
		best = !best || t < best ? t : best;
	}
	waitpid(pid, NULL, 0);
	sched_setaffinity(0, sizeof(old), &old);
out:
	if (line != MAP_FAILED)
		munmap(line, 4096);
	return best;
}

/* ---- Rows, checks and the tables ------------------------------------------------------------- */

enum mech { MECH_MNEMO, MECH_CK, MECH_MUTEX, MECH_LIMIT };

struct row {
	enum mech mech;
	enum fmt fmt;
	unsigned consumers;
	const char *name;
	double best;           /* fastest run, seconds; 0 before the first */
	bool bad;              /* some run's consumers got other data than was sent */
	double produce;        /* the fastest run's producer seconds, for -v */
	double cpu;            /* and the CPU seconds of all its processes */
	struct consumer_result c0;  /* and its consumer 0 */
};

/* Checks what the row's consumers read against what was sent. */
static bool check(const struct row *r, const struct expect *x, const struct plan *pl)
{
	unsigned n = r->mech == MECH_LIMIT ? 0 : r->consumers;

	for (unsigned i = 0; i < n; i++) {
		const struct consumer_result *c = &sh->c[i];
		uint64_t want_words = r->mech == MECH_MNEMO ? x->words : pl->events * SLOT_WORDS;

		if (!c->ok || c->words != want_words || c->sum != x->sum) {
			fprintf(stderr, PROG ": %s, %u consumers: consumer %u expected %" PRIu64
				" words summing to %#" PRIx64 ", got %" PRIu64
				" words summing to %#" PRIx64 "%s\n", r->name, r->consumers, i,
				want_words, x->sum, c->words, c->sum,
				c->ok ? "" : " (and no clean end of stream)");
			return false;
		}
	}
	return true;
}

/* CPU seconds of this process and of its reaped children, so far. */
static double cpu_seconds(void)
{
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
			kids.ru_stime.tv_sec) +
	       (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
			kids.ru_stime.tv_usec) / 1e6;
}

static void run_row(struct row *r, const struct config *cfg, const struct stream *st,
		    const struct plan *pl, const struct expect *x)
{
	double t, cpu0 = cpu_seconds();

	memset(sh, 0, sizeof(*sh));
	nkids = 0;
	/* A minute, plus 1 us an event: the slowest row here runs at 0.05 us an event. */
	alarm(60 + (unsigned)(pl->events / 1000000));
	switch (r->mech) {
	case MECH_MNEMO: t = run_mnemo(cfg, st, pl, r->fmt, r->consumers); break;
	case MECH_CK:    t = run_ck(cfg, st, pl); break;
	case MECH_MUTEX: t = run_mutex(cfg, st, pl); break;
	default:         t = run_limit(cfg, st, pl, r->fmt); break;
	}
	alarm(0);
	if (t < 0 || !check(r, &x[r->fmt], pl)) {
		r->bad = true;
		return;
	}
	if (!r->best || t < r->best) {
		r->best = t;
		r->produce = produce_seconds;
		r->cpu = cpu_seconds() - cpu0;
		r->c0 = sh->c[0];
	}
}

/* Bytes a mechanism carries per event: the records' own, or a slot. */
static double bytes_per_event(const struct row *r, const struct expect *x, const struct plan *pl)
{
	if (r->mech == MECH_CK || r->mech == MECH_MUTEX)
		return 8.0 * SLOT_WORDS;
	return 8.0 * (double)x[r->fmt].words / (double)pl->events;
}

static double loadavg(void)
{
	double l = -1;

	if (getloadavg(&l, 1) != 1)
		l = -1;
	return l;
}

static const char *pass_fail(bool ok)
{
	return ok ? "PASS" : "FAIL";
}

/* The rows, in the order they run (round-robin) and print. */
enum { R_M1, R_M2, R_M4, R_CK, R_MUTEX, R_LIMIT, R_F16, R_F24, R_L16, R_L24, NROWS };

static struct row rows[NROWS] = {
	[R_M1] = { .mech = MECH_MNEMO, .fmt = FMT_VAR, .consumers = 1, .name = "Mnemo queue" },
	[R_M2] = { .mech = MECH_MNEMO, .fmt = FMT_VAR, .consumers = 2, .name = "Mnemo queue" },
	[R_M4] = { .mech = MECH_MNEMO, .fmt = FMT_VAR, .consumers = 4, .name = "Mnemo queue" },
	[R_CK] = { .mech = MECH_CK, .fmt = FMT_FIX24, .consumers = 1,
		   .name = "ck_ring SPSC, 24 B slots" },
	[R_MUTEX] = { .mech = MECH_MUTEX, .fmt = FMT_FIX24, .consumers = 1,
		      .name = "mutex+condvar, 24 B slots" },
	[R_LIMIT] = { .mech = MECH_LIMIT, .fmt = FMT_VAR, .name = "limit: movnti, no reader" },
	/* The record formats, Mnemo queue with one consumer, each with its own limit. */
	[R_F16] = { .mech = MECH_MNEMO, .fmt = FMT_FIX16, .consumers = 1,
		    .name = "Mnemo queue, fixed 16 B" },
	[R_F24] = { .mech = MECH_MNEMO, .fmt = FMT_FIX24, .consumers = 1,
		    .name = "Mnemo queue, fixed 24 B" },
	[R_L16] = { .mech = MECH_LIMIT, .fmt = FMT_FIX16, .name = "limit, fixed 16 B" },
	[R_L24] = { .mech = MECH_LIMIT, .fmt = FMT_FIX24, .name = "limit, fixed 24 B" },
};

static double ev[NROWS], gbs[NROWS];   /* events/s and GB/s of each row's fastest run */

static void print_header(const struct config *cfg, const struct stream *st, const char *path,
			 const struct plan *pl)
{
	printf("bench-queue: %" PRIu64 " events a row, replaying %s (%" PRIu64 " events, %.1f MB) "
	       "%.2f times; each row the best of %u run%s\n", pl->events, path, st->nevents,
	       (double)st->nwords * 8 / 1e6, (double)pl->events / (double)st->nevents, cfg->repeats,
	       cfg->repeats > 1 ? "s" : "");
	printf("mix:");
	for (unsigned k = 0; k < MN_WIRE_MAX_EVENTS; k++) {
		double pct = 100.0 * (double)st->count[k] / (double)st->nevents;

		if (!st->count[k])
			continue;
		printf(" %s ", event_name[k] ? event_name[k] : "?");
		if (pct >= 0.1)
			printf("%.1f%%", pct);
		else
			printf("x%" PRIu64, st->count[k]);
	}
	printf("\nrecords: %.2f B on average, 8 to %u B (variable length, as recorded)\n",
	       8.0 * (double)st->nwords / (double)st->nevents, 8 * st->max_len);
	printf("Mnemo queue: %u buffers x %zu MiB.  ck_ring and the mutex ring: %u slots of 24 B, "
	       "every record in a slot as large as the largest record.\n", cfg->nbufs,
	       cfg->buf_bytes >> 20, ring_slots(cfg));
	printf("limit: the Mnemo producer's replay and stores (movnti) into a %zu MiB ring nobody "
	       "reads.\n", (cfg->buf_bytes * cfg->nbufs) >> 20);
	printf("cache line round trip between CPU 0 and CPU 1: %.0f ns (slower when either CPU is "
	       "busy, or the host put them far apart)\n", round_trip_ns());
}

static void print_mechanisms(void)
{
	printf("\n%-27s %9s %8s %11s %7s %10s %9s\n", "mechanism", "consumers", "seconds",
	       "events/s", "GB/s", "vs ck_ring", "vs limit");
	for (unsigned i = R_M1; i <= R_LIMIT; i++) {
		const struct row *r = &rows[i];
		char cons[8];

		snprintf(cons, sizeof(cons), r->mech == MECH_LIMIT ? "none" : "%u", r->consumers);
		if (r->bad) {
			printf("%-27s %9s  ERROR: consumers got other data than was sent\n",
			       r->name, cons);
			continue;
		}
		printf("%-27s %9s %8.3f %11.3e %7.2f %9.2fx %9.2f\n", r->name, cons, r->best, ev[i],
		       gbs[i], ev[R_CK] ? ev[i] / ev[R_CK] : 0,
		       ev[R_LIMIT] ? ev[i] / ev[R_LIMIT] : 0);
	}
	printf("GB/s counts the bytes each mechanism carries: the records' own, 24 B a slot for "
	       "the slot rings.\n");
}

static void print_formats(const struct expect *x, const struct plan *pl)
{
	static const int pair[][2] = { { R_M1, R_LIMIT }, { R_F16, R_L16 }, { R_F24, R_L24 } };
	int best_ev = R_M1, best_gb = R_M1;

	printf("\n%-27s %9s %8s %11s %7s %14s %9s\n", "record format (Mnemo, 1 c.)", "B/event",
	       "seconds", "events/s", "GB/s", "limit events/s", "vs limit");
	for (unsigned k = 0; k < 3; k++) {
		int q = pair[k][0], l = pair[k][1];
		const struct row *r = &rows[q];

		if (r->bad || rows[l].bad) {
			printf("%-27s  ERROR: consumers got other data than was sent\n",
			       fmt_name[r->fmt]);
			continue;
		}
		printf("%-27s %9.2f %8.3f %11.3e %7.2f %14.3e %9.2f\n", fmt_name[r->fmt],
		       bytes_per_event(r, x, pl), r->best, ev[q], gbs[q], ev[l],
		       ev[l] ? ev[q] / ev[l] : 0);
		if (ev[q] > ev[best_ev])
			best_ev = q;
		if (gbs[q] > gbs[best_gb])
			best_gb = q;
	}
	printf("fastest in events/s: %s; in bytes/s: %s.\n", fmt_name[rows[best_ev].fmt],
	       fmt_name[rows[best_gb].fmt]);
	printf("(fixed 16 B cannot hold a load's or store's value or a heap_alloc's size as well "
	       "as its address: it prices the format, it is no lossless encoding.)\n");
}

static void print_times(void)
{
	printf("\n%-27s %9s %8s %6s %9s %9s %9s %9s\n", "where the time went (s)", "consumers",
	       "total", "cores", "producer", "c0 pop", "c0 read", "c0 rel.");
	for (unsigned i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];

		if (r->bad || !r->best)
			continue;
		printf("%-27s %9u %8.3f %6.2f %9.3f", r->name, r->consumers, r->best,
		       r->cpu / r->best, r->produce);
		if (r->mech == MECH_MNEMO)
			printf(" %9.3f %9.3f %9.3f", r->c0.pop, r->c0.read, r->c0.release);
		printf("\n");
	}
	printf("cores: CPU seconds of all the row's processes over its seconds (at most 2 here); "
	       "below 1.5 for a two-process row, the two shared a core much of the time.\n");
}

static void print_targets(void)
{
	double vs_ck, vs_limit, two;

	printf("\ntargets (issue \"[2 of 9] Queue at the throughput limit\"):\n");
	if (!ev[R_CK] || !ev[R_LIMIT] || !ev[R_M1] || !ev[R_M2]) {
		printf("  not checked: a row they need failed\n");
		return;
	}
	vs_ck = ev[R_M1] / ev[R_CK];
	vs_limit = ev[R_M1] / ev[R_LIMIT];
	two = ev[R_M2] / ev[R_M1];
	printf("  %s  Mnemo, 1 consumer >= 25x ck_ring's events/s:            %6.2fx\n",
	       pass_fail(vs_ck >= 25), vs_ck);
	printf("  %s  Mnemo, 1 consumer >= 30%% of the streaming-store limit:  %6.0f%%\n",
	       pass_fail(vs_limit >= 0.30), 100 * vs_limit);
	printf("  %s  Mnemo, 2 consumers >= 0.75x 1 consumer's events/s:      %6.2fx\n",
	       pass_fail(two >= 0.75), two);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " RECORDING [-n EVENTS] [-r REPEATS] [-b MIB] [-k NBUFS] [-v]\n"
		"  RECORDING   made by mnemo-record (bench/queue/run.sh makes one)\n"
		"  -n EVENTS   events each row moves (default 100000000)\n"
		"  -r REPEATS  runs per row, round-robin; each row keeps its fastest (default 3)\n"
		"  -b MIB      MiB per Mnemo queue buffer (default 4, as MNEMO_QUEUE_MB)\n"
		"  -k NBUFS    Mnemo queue buffers (default 4, as the runtime)\n"
		"  -v          also print where each row's time went\n");
}

int main(int argc, char **argv)
{
	struct config cfg = { .events = 100000000, .repeats = 3, .buf_bytes = 4u << 20,
			      .nbufs = 4 };
	struct stream st = { 0 };
	struct expect x[3];
	struct plan pl;
	double load0;
	bool bad = false;
	int c;

	while ((c = getopt(argc, argv, "n:r:b:k:vh")) != -1) {
		switch (c) {
		case 'n': cfg.events = strtoull(optarg, NULL, 0); break;
		case 'r': cfg.repeats = (unsigned)atoi(optarg); break;
		case 'b': cfg.buf_bytes = (size_t)strtoull(optarg, NULL, 0) << 20; break;
		case 'k': cfg.nbufs = (unsigned)atoi(optarg); break;
		case 'v': cfg.verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1 || !cfg.events || !cfg.repeats || !cfg.buf_bytes || cfg.nbufs < 2) {
		usage(stderr);
		return 2;
	}
	load_recording(&st, argv[optind]);
	pl = make_plan(&st, cfg.events);
	for (int f = FMT_VAR; f <= FMT_FIX24; f++)
		x[f] = make_expect(&st, &pl, (enum fmt)f);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("cannot map the results", strerror(errno));

	signal(SIGALRM, watchdog);
	load0 = loadavg();
	print_header(&cfg, &st, argv[optind], &pl);
	fflush(stdout);    /* before the forks */
	for (unsigned rep = 0; rep < cfg.repeats; rep++)
		for (unsigned i = 0; i < NROWS; i++)
			run_row(&rows[i], &cfg, &st, &pl, x);
	for (unsigned i = 0; i < NROWS; i++) {
		bad |= rows[i].bad;
		ev[i] = rows[i].best > 0 ? (double)pl.events / rows[i].best : 0;
		gbs[i] = ev[i] * bytes_per_event(&rows[i], x, &pl) / 1e9;
	}
	print_mechanisms();
	print_formats(x, &pl);
	if (cfg.verbose)
		print_times();
	print_targets();
	printf("\n(%ld cores, load average %.2f at start, %.2f at end; cache line round trip %.0f "
	       "ns at end; %s)\n", sysconf(_SC_NPROCESSORS_ONLN), load0, loadavg(), round_trip_ns(),
	       bad ? "ERRORS above: some consumer got other data than was sent"
		   : "every consumer got exactly the data sent");
	return bad ? 1 : 0;
}
