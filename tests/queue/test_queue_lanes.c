/*
 * Lanes: every thread of the producing process writes its own stream.  Several producer threads
 * and the producer thread push at once; a consumer process checks that each buffer holds one
 * thread's records (mn_queue_thread()), that each thread's records arrive complete and in order,
 * that 10,000 short-lived threads reuse a few lanes without leaking, that a thread finding no free
 * lane is dropped and counted, that a thread still running at the end has its unpublished records
 * read as the lane's tail, that buffers ending at ordering points (mn_queue_order()) come in the
 * order of their tickets, and that the Lamport mode refuses lanes.
 */
#include "qtest.h"  /* first: it sets _GNU_SOURCE */

#include <pthread.h>

#define LT_MAX_TAGS 10008   /* thread tags 0..10000 (0: the producer thread) */

/* Shared with the consumer process. */
struct lt_shared {
	uint64_t count[LT_MAX_TAGS];    /* records per tag, each checked in order */
	uint32_t thread_of[LT_MAX_TAGS]; /* the queue's thread number of each tag, or 0 */
	uint64_t buffers;
	uint64_t mixed;                  /* buffers holding more than one tag */
	uint64_t out_of_order;
	uint64_t tags_shared;            /* a thread number seen with two tags */
	uint64_t no_thread;              /* buffers with thread number 0 */
	uint64_t dropped, dropped_threads;
	uint64_t last_point;             /* the last ordering point's number read */
	uint64_t points, points_out_of_order;
	int consumer_done;
	char err[256];
};

static struct lt_shared *sh;

static int setup(void **state)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return sh == MAP_FAILED ? -1 : 0;
}

static int teardown(void **state)
{
	munmap(sh, sizeof(*sh));
	return 0;
}

/* Record i of thread tag t: two words, code 1 in word 0. */
static inline void lt_push(uint64_t tag, uint64_t i)
{
	uint64_t w[2] = { 1 | tag << 8 | i << 24, i * QT_GOLDEN ^ tag };

	mn_queue_push(w, 2);
}

/* The consumer: reads every buffer until the end, checks framing, order and one tag a buffer. */
static void lt_consume(int fd)
{
	struct mn_queue *c;
	const uint64_t *w;
	size_t n;
	int r;

	if (mn_queue_attach(&c, fd, 0)) {
		snprintf(sh->err, sizeof(sh->err), "attach failed");
		_exit(1);
	}
	while ((r = mn_queue_pop(c, &w, &n)) > 0) {
		uint32_t th = mn_queue_thread(c);
		int64_t first = -1;

		sh->buffers++;
		if (!th)
			sh->no_thread++;
		for (size_t j = 0; j < n;) {
			uint64_t tag, i;

			if (!w[j]) {
				j++;
				continue;
			}
			if (j + 2 <= n && (w[j] & 0xff) == 2) {
				/* An ordering point: numbered in the order the threads took a mutex. */
				sh->points++;
				sh->points_out_of_order += w[j + 1] != sh->last_point + 1;
				sh->last_point = w[j + 1];
				j += 2;
				continue;
			}
			if (j + 2 > n || (w[j] & 0xff) != 1) {
				snprintf(sh->err, sizeof(sh->err), "bad framing at word %zu of %zu", j, n);
				break;
			}
			tag = (w[j] >> 8) & 0xffff;
			i = w[j] >> 24;
			if (tag >= LT_MAX_TAGS || w[j + 1] != (i * QT_GOLDEN ^ tag)) {
				snprintf(sh->err, sizeof(sh->err), "corrupt record at word %zu", j);
				break;
			}
			if (first < 0)
				first = (int64_t)tag;
			else if ((uint64_t)first != tag)
				sh->mixed++;
			if (sh->count[tag] != i)
				sh->out_of_order++;
			sh->count[tag] = i + 1;
			if (!sh->thread_of[tag])
				sh->thread_of[tag] = th;
			else if (sh->thread_of[tag] != th)
				sh->tags_shared++;
			j += 2;
		}
		mn_queue_release(c);
	}
	if (r < 0)
		snprintf(sh->err, sizeof(sh->err), "pop: %d", r);
	sh->consumer_done = 1;
	mn_queue_detach(c);
	_exit(0);
}

typedef void (*lt_produce_fn)(struct mn_queue *q);

/* Creates a queue with `threads` lanes besides the producer's, runs produce() in a child process
 * (the producer, which finishes), with a consumer process beside it. */
static void lt_run(unsigned threads, size_t lane_bytes, lt_produce_fn produce)
{
	struct mn_queue_config cfg = { .buf_bytes = 8192, .nbufs = 2, .nconsumers = 1,
				       .threads = threads, .lane_bytes = lane_bytes };
	struct mn_queue *q;
	pid_t prod, cons;
	int st;

	memset(sh, 0, sizeof(*sh));
	prod = fork();
	if (prod == 0) {
		if (mn_queue_create(&q, &cfg)) {
			snprintf(sh->err, sizeof(sh->err), "create failed");
			_exit(1);
		}
		cons = fork();
		if (cons == 0)
			lt_consume(mn_queue_fd(q));
		mn_queue_producer_start(q);
		produce(q);
		sh->dropped = mn_queue_dropped(q);
		sh->dropped_threads = mn_queue_dropped_threads(q);
		mn_queue_producer_finish(q);
		waitpid(cons, &st, 0);
		_exit(0);
	}
	if (qt_wait(prod, 60000) != 0)
		fail_msg("producer: expected a clean exit within 60 s");
	if (sh->err[0])
		fail_msg("%s", sh->err);
	QT_EXPECT_EQ("consumer saw the end", 1, sh->consumer_done);
	QT_EXPECT_EQ("buffers holding two threads' records", 0, sh->mixed);
	QT_EXPECT_EQ("records out of order", 0, sh->out_of_order);
	QT_EXPECT_EQ("thread numbers shared by two threads", 0, sh->tags_shared);
	QT_EXPECT_EQ("buffers of thread 0", 0, sh->no_thread);
}

/* ---- Several threads at once ------------------------------------------------------------------- */

#define LT_RECORDS 50000

static void *lt_thread(void *arg)
{
	uint64_t tag = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < LT_RECORDS; i++)
		lt_push(tag, i);
	return NULL;
}

static void produce_four(struct mn_queue *q)
{
	pthread_t t[4];

	for (uintptr_t k = 0; k < 4; k++)
		pthread_create(&t[k], NULL, lt_thread, (void *)(k + 1));
	for (uint64_t i = 0; i < LT_RECORDS; i++)
		lt_push(0, i);
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
}

static void test_four_threads(void **state)
{
	lt_run(4, 4096, produce_four);
	for (int k = 0; k <= 4; k++)
		QT_EXPECT_EQ("records of one thread", LT_RECORDS, sh->count[k]);
	QT_EXPECT_EQ("producer thread's number", 1, sh->thread_of[0]);
	QT_EXPECT_EQ("dropped", 0, sh->dropped);
}

/* ---- Churn: 10,000 short threads, 4 at a time, on 4 lanes -------------------------------------- */

#define LT_CHURN 10000
#define LT_CHURN_RECORDS 100

static void *lt_short(void *arg)
{
	uint64_t tag = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < LT_CHURN_RECORDS; i++)
		lt_push(tag, i);
	return NULL;
}

static int churn_fds;

static void produce_churn(struct mn_queue *q)
{
	int fds = qt_count_fds();

	for (uintptr_t k = 1; k <= LT_CHURN; k += 4) {
		pthread_t t[4];

		for (uintptr_t j = 0; j < 4; j++)
			pthread_create(&t[j], NULL, lt_short, (void *)(k + j));
		for (int j = 0; j < 4; j++)
			pthread_join(t[j], NULL);
	}
	lt_push(0, 0);
	churn_fds = qt_count_fds() - fds;
	sh->count[LT_MAX_TAGS - 1] = (uint64_t)churn_fds;   /* the consumer never writes it */
}

static void test_churn(void **state)
{
	uint64_t fds_left;

	lt_run(4, 4096, produce_churn);
	for (int k = 1; k <= LT_CHURN; k++)
		if (sh->count[k] != LT_CHURN_RECORDS)
			fail_msg("thread %d: expected %d records, got %" PRIu64, k, LT_CHURN_RECORDS,
				 sh->count[k]);
	fds_left = sh->count[LT_MAX_TAGS - 1];
	QT_EXPECT_EQ("fds opened by 10,000 threads", 0, fds_left);
	QT_EXPECT_EQ("dropped", 0, sh->dropped);
	QT_EXPECT_EQ("buffers (one per thread at least, few more)", 1,
		     sh->buffers >= LT_CHURN && sh->buffers <= LT_CHURN + 100);
}

/* ---- More threads than lanes ------------------------------------------------------------------- */

static pthread_barrier_t lt_bar;

static void *lt_held(void *arg)
{
	uint64_t tag = (uint64_t)(uintptr_t)arg;

	pthread_barrier_wait(&lt_bar);
	for (uint64_t i = 0; i < 1000; i++)
		lt_push(tag, i);
	pthread_barrier_wait(&lt_bar);   /* nobody exits (hands its lane back) before all pushed */
	return NULL;
}

static void produce_overflow(struct mn_queue *q)
{
	pthread_t t[3];

	pthread_barrier_init(&lt_bar, NULL, 3);
	for (uintptr_t k = 0; k < 3; k++)
		pthread_create(&t[k], NULL, lt_held, (void *)(k + 1));
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	pthread_barrier_destroy(&lt_bar);
}

static void test_more_threads_than_lanes(void **state)
{
	unsigned whole = 0;

	lt_run(1, 0, produce_overflow);
	for (int k = 1; k <= 3; k++) {
		if (sh->count[k] == 1000)
			whole++;
		else if (sh->count[k])
			fail_msg("thread %d: expected all or none of its records, got %" PRIu64, k,
				 sh->count[k]);
	}
	QT_EXPECT_EQ("threads that got the one lane", 1, whole);
	QT_EXPECT_EQ("dropped from threads beyond the lanes", 2000, sh->dropped_threads);
}

/* ---- A thread still running at the end: its buffer is the lane's tail -------------------------- */

static pthread_mutex_t lt_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lt_cv = PTHREAD_COND_INITIALIZER;
static int lt_stage;

static void *lt_running(void *arg)
{
	for (uint64_t i = 0; i < 100; i++)
		lt_push(7, i);
	pthread_mutex_lock(&lt_mu);
	lt_stage = 1;
	pthread_cond_broadcast(&lt_cv);
	while (lt_stage != 2)
		pthread_cond_wait(&lt_cv, &lt_mu);
	pthread_mutex_unlock(&lt_mu);
	return NULL;
}

static void produce_running(struct mn_queue *q)
{
	pthread_t t;
	int st;

	lt_stage = 0;
	pthread_create(&t, NULL, lt_running, NULL);
	pthread_mutex_lock(&lt_mu);
	while (lt_stage != 1)
		pthread_cond_wait(&lt_cv, &lt_mu);
	pthread_mutex_unlock(&lt_mu);
	lt_push(0, 0);
	/* The end comes while the thread still holds its lane, its records unpublished. */
	mn_queue_producer_finish(q);
	wait(&st);   /* the consumer */
	pthread_mutex_lock(&lt_mu);
	lt_stage = 2;
	pthread_cond_broadcast(&lt_cv);
	pthread_mutex_unlock(&lt_mu);
	pthread_join(t, NULL);
}

static void test_tail_of_running_thread(void **state)
{
	lt_run(2, 0, produce_running);
	QT_EXPECT_EQ("records of the running thread (its lane's tail)", 100, sh->count[7]);
	QT_EXPECT_EQ("records of the producer thread", 1, sh->count[0]);
	QT_EXPECT_EQ("its thread number", 2, sh->thread_of[7]);
}

/* ---- Ordering points: what one thread did under a mutex comes before what the next did -------- */

#define LT_POINTS 2000

static pthread_mutex_t lt_order_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t lt_point;

/* Pushes records of its own, and under the mutex the next point's number, ordered there: the
 * consumer must read the points in their numbers' order whatever lane each is in. */
static void *lt_orderer(void *arg)
{
	uint64_t tag = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < LT_POINTS; i++) {
		lt_push(tag, i);
		pthread_mutex_lock(&lt_order_mu);
		uint64_t w[2] = { 2, ++lt_point };

		mn_queue_push(w, 2);
		if (!mn_queue_order())
			sh->err[0] = sh->err[0] ? sh->err[0] : '?';   /* every point has a ticket */
		pthread_mutex_unlock(&lt_order_mu);
	}
	return NULL;
}

static void produce_ordered(struct mn_queue *q)
{
	pthread_t t[3];

	for (uintptr_t k = 0; k < 3; k++)
		pthread_create(&t[k], NULL, lt_orderer, (void *)(k + 1));
	lt_orderer((void *)0);
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
}

static void test_ordering_points(void **state)
{
	lt_point = 0;
	lt_run(4, 4096, produce_ordered);
	QT_EXPECT_EQ("ordering points read", 4 * LT_POINTS, sh->points);
	QT_EXPECT_EQ("ordering points read out of their order", 0, sh->points_out_of_order);
	for (int k = 0; k <= 3; k++)
		QT_EXPECT_EQ("records of one thread", LT_POINTS, sh->count[k]);
}

/* ---- Configurations ---------------------------------------------------------------------------- */

static void test_config(void **state)
{
	struct mn_queue_config cfg = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 1 };
	struct mn_queue *q;

	cfg.threads = MN_QUEUE_MAX_LANES;
	QT_EXPECT_EQ("lanes beyond the maximum", (unsigned)-EINVAL, (unsigned)mn_queue_create(&q, &cfg));
	cfg.threads = 2;
	cfg.lane_bytes = 100;
	QT_EXPECT_EQ("lane buffers not whole pages", (unsigned)-EINVAL,
		     (unsigned)mn_queue_create(&q, &cfg));
	cfg.lane_bytes = 0;
	cfg.lamport = true;
	QT_EXPECT_EQ("Lamport mode with lanes", (unsigned)-EINVAL, (unsigned)mn_queue_create(&q, &cfg));
	cfg.lamport = false;
	cfg.threads = 16;
	QT_EXPECT_EQ("17 lanes", 0, mn_queue_create(&q, &cfg));
	QT_EXPECT_EQ("mn_queue_lanes()", 17, mn_queue_lanes(q));
	mn_queue_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_four_threads),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_more_threads_than_lanes),
		cmocka_unit_test(test_tail_of_running_thread),
		cmocka_unit_test(test_ordering_points),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
