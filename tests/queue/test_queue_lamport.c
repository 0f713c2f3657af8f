/*
 * The Lamport mode (queue.h, mn_queue_push_lamport()): the overhead breakdown's conventional queue.
 * Streams of records of 1..4 words arrive complete and in order, across processes and in one,
 * through a ring small enough to wrap thousands of times (records padded at its end) and to fill
 * (the producer waits); each record is published on its own; the end of stream, a producer killed
 * (every pushed record arrives, the end within 200 ms), a consumer killed or detached (one hook
 * call, later pushes dropped and counted); other threads, fork children and pushes after the end
 * dropped and counted; pushes from a signal handler neither tear nor lose a record uncounted; and
 * more than one consumer refused.
 */
#include "qtest.h"  /* first: it sets _GNU_SOURCE */

#include <poll.h>
#include <pthread.h>

static struct qt_shared *sh;
static int gate[2];  /* the producer writes a byte here once its records are pushed */

static int setup(void **state)
{
	sh = qt_shared_new();
	return sh ? 0 : -1;
}

static int teardown(void **state)
{
	qt_shared_free(sh);
	return 0;
}

/* Every record, no torn one, a normal end; zero words are the ring end's padding. */
static void expect_complete(unsigned i, uint64_t records)
{
	const struct qt_consumer *c = &sh->c[i];

	QT_EXPECT_NO_ERR(c->err);
	QT_EXPECT_EQ("consumer finished", 1, c->done);
	QT_EXPECT_EQ("consumer records", records, c->records);
	QT_EXPECT_EQ("consumer last pop", 0, c->pop_ret);
	QT_EXPECT_EQ("consumer producer_died", 0, c->died);
	QT_EXPECT_EQ("torn records", 0, c->torn);
}

/* ---- Streams across processes -------------------------------------------------------------------- */

/* A ring of 1024 words, 500000 records of 1..4 words: ~1200 wraps, the consumer keeping up. */
static void test_stream(void **state)
{
	struct qt_run run = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 1, .records = 500000,
			      .lamport = true };

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 30000);
	expect_complete(0, run.records);
	QT_EXPECT_EQ("dropped", 0, sh->dropped);
	/* Published record by record: far more pops than a ping-pong queue's 1200 buffers. */
	if (sh->c[0].buffers < 2000)
		fail_msg("pops: expected >= 2000 for 500000 records, got %" PRIu64, sh->c[0].buffers);
	qt_expect_released(sh, 1);
}

/* A consumer that sleeps now and then and attaches late: the producer fills the ring and waits. */
static void test_stream_slow_consumer(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096, .nbufs = 2, .nconsumers = 1, .records = 100000, .lamport = true,
		.copts = { { .attach_delay_us = 50000, .sleep_every = 500, .sleep_us = 2000 } },
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 30000);
	expect_complete(0, run.records);
	QT_EXPECT_EQ("dropped", 0, sh->dropped);
	qt_expect_released(sh, 1);
}

/* The runtime's size of ring (4 x 1 MiB), a longer stream. */
static void test_stream_big_ring(void **state)
{
	struct qt_run run = { .buf_bytes = 1 << 20, .nbufs = 4, .nconsumers = 1, .records = 2000000,
			      .lamport = true };

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 30000);
	expect_complete(0, run.records);
	QT_EXPECT_EQ("dropped", 0, sh->dropped);
}

/* No record at all: the consumer sees the end at once. */
static void test_empty_stream(void **state)
{
	struct qt_run run = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 1, .records = 0,
			      .lamport = true };

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	expect_complete(0, 0);
	QT_EXPECT_EQ("pops", 0, sh->c[0].buffers);
}

/* ---- In one process ------------------------------------------------------------------------------ */

/*
 * Producer and consumer in one thread, taking turns: each pop returns exactly what was pushed
 * since the last one (published record by record, never more than up to the ring's end), records
 * never cross the ring's end, and pushes after the end are dropped and counted.
 */
static void test_in_process(void **state)
{
	struct mn_queue_config cfg = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 1,
				       .lamport = true };
	const uint64_t ring = 2 * 4096 / 8;
	struct qt_consumer r = { 0 };
	struct mn_queue *p, *c;
	const uint64_t *w;
	uint64_t rec[4], next = 0, i = 0, pos = 0;
	size_t n;
	int ret;

	QT_EXPECT_EQ("mn_queue_create", 0, mn_queue_create(&p, &cfg));
	QT_EXPECT_EQ("mn_queue_attach", 0, mn_queue_attach(&c, mn_queue_fd(p), 0));
	mn_queue_producer_start(p);
	for (unsigned round = 0; round < 5000; round++) {
		unsigned k = 1 + round % 7;  /* records this round */
		uint64_t words = 0, got = 0;

		for (unsigned j = 0; j < k; j++, i++) {
			unsigned len = qt_make(i, QT_TAG, rec);

			if (pos % ring + len > ring)
				words += ring - pos % ring, pos += ring - pos % ring;  /* padding */
			mn_queue_push_lamport(rec, len);
			words += len;
			pos += len;
		}
		/* What was pushed comes out in at most two pops (the ring's end splits it). */
		while (got < words) {
			ret = mn_queue_pop(c, &w, &n);
			if (ret != 1)
				fail_msg("round %u: pop: expected 1, got %d", round, ret);
			if (w < (const uint64_t *)mn_queue_extra(c) - ring ||
			    w + n > (const uint64_t *)mn_queue_extra(c))
				fail_msg("round %u: pop: expected words inside the ring", round);
			if (!qt_check_buffer(&r, w, n, &next, 0, false))
				fail_msg("%s", r.err);
			got += n;
			mn_queue_release(c);
		}
		QT_EXPECT_EQ("words popped", words, got);
		QT_EXPECT_EQ("records", i, r.records);
	}
	/* One record, one pop of exactly its words: nothing is held back for a batch. */
	ret = (int)qt_make(i, QT_TAG, rec);
	if (pos % ring + (unsigned)ret > ring)
		fail_msg("test set-up: record %" PRIu64 " must fit before the ring's end", i);
	mn_queue_push_lamport(rec, (unsigned)ret);
	QT_EXPECT_EQ("pop after one push", 1, mn_queue_pop(c, &w, &n));
	QT_EXPECT_EQ("words of that pop", ret, n);
	QT_EXPECT_EQ("word 0", rec[0], w[0]);
	mn_queue_release(c);

	mn_queue_producer_finish(p);
	mn_queue_push_lamport(rec, 1);
	mn_queue_push(rec, 2);  /* the inline push reaches the same place */
	QT_EXPECT_EQ("pop after the end", 0, mn_queue_pop(c, &w, &n));
	QT_EXPECT_EQ("producer_died", 0, mn_queue_producer_died(c));
	QT_EXPECT_EQ("dropped after the end", 2, mn_queue_dropped(p));
	QT_EXPECT_EQ("dropped from other threads", 0, mn_queue_dropped_threads(p));
	mn_queue_detach(c);
	mn_queue_destroy(p);
}

static struct mn_queue *thread_q;

static void *push_from_thread(void *arg)
{
	uint64_t rec[4];

	for (int i = 0; i < 10; i++)
		mn_queue_push_lamport(rec, (unsigned)(1 + i % 4));
	return NULL;
}

/* Other threads' and a fork child's pushes are dropped and counted; the stream does not see them. */
static void test_threads_and_fork(void **state)
{
	struct mn_queue_config cfg = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 1,
				       .lamport = true };
	struct qt_consumer r = { 0 };
	struct mn_queue *p, *c;
	const uint64_t *w;
	uint64_t rec[4], next = 0;
	pthread_t t;
	size_t n;
	pid_t child;
	int st;

	QT_EXPECT_EQ("mn_queue_create", 0, mn_queue_create(&p, &cfg));
	QT_EXPECT_EQ("mn_queue_attach", 0, mn_queue_attach(&c, mn_queue_fd(p), 0));
	mn_queue_producer_start(p);
	thread_q = p;
	pthread_create(&t, NULL, push_from_thread, NULL);
	pthread_join(t, NULL);
	QT_EXPECT_EQ("dropped from the other thread", 10, mn_queue_dropped_threads(p));

	child = fork();
	if (child == 0) {
		uint64_t alt[4];

		/* As the runtime's fork handler does. */
		mn_queue_producer_abandon(p);
		qt_make(0, QT_TAG_ALT, alt);
		for (int i = 0; i < 7; i++)
			mn_queue_push_lamport(alt, 1);
		_exit(mn_queue_dropped(p) - 10 == 7 ? 0 : 1);
	}
	QT_EXPECT_EQ("fork child's wait status (exit 0: its 7 pushes dropped and counted)", 0,
		     (waitpid(child, &st, 0) == child) ? st : -1);

	for (uint64_t i = 0; i < 3; i++)
		mn_queue_push_lamport(rec, qt_make(i, QT_TAG, rec));
	mn_queue_producer_finish(p);
	while (mn_queue_pop(c, &w, &n) > 0) {
		if (!qt_check_buffer(&r, w, n, &next, 0, false))
			fail_msg("%s", r.err);
		mn_queue_release(c);
	}
	QT_EXPECT_EQ("records of the producer thread", 3, r.records);
	QT_EXPECT_EQ("dropped", 10, mn_queue_dropped(p));
	mn_queue_detach(c);
	mn_queue_destroy(p);
}

/* ---- Signal handlers that push ------------------------------------------------------------------- */

static volatile uint64_t sig_next;      /* the handler's next record number */

/* The handler's records: tag QT_TAG_ALT, their own sequence. */
static void push_in_handler(int sig)
{
	uint64_t w[4];
	unsigned len = qt_make(sig_next, QT_TAG_ALT, w);

	sig_next = sig_next + 1;
	mn_queue_push_lamport(w, len);
}

static volatile int signaler_stop;

/* Interrupts the producer thread every ~50 µs (nanosleep's slack) until told to stop. */
static void *signaler(void *arg)
{
	pthread_t target = *(pthread_t *)arg;
	struct timespec ts = { 0, 10000 };

	while (!signaler_stop) {
		pthread_kill(target, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Pushes run->records records while another thread's signals make the handler push its own. */
static void produce_with_signals(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	struct sigaction sa = { .sa_handler = push_in_handler, .sa_flags = SA_RESTART };
	pthread_t self = pthread_self(), t;
	sigset_t block;

	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t, NULL, signaler, &self);
	qt_produce(run->records);
	signaler_stop = 1;
	pthread_join(t, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	s->pushed = sig_next;  /* the handler's pushes */
}

/* A consumer that checks the two interleaved sequences, each complete except for counted drops. */
static void consume_two_sequences(int fd)
{
	struct qt_consumer *r = &sh->c[0];
	struct mn_queue *q;
	const uint64_t *w;
	uint64_t next[2] = { 0, 0 }, exp[4];
	size_t n;
	int ret;

	r->pid = getpid();
	if ((r->attach_ret = mn_queue_attach(&q, fd, 0)))
		_exit(1);
	while ((ret = mn_queue_pop(q, &w, &n)) > 0) {
		for (size_t j = 0; j < n;) {
			int alt;
			unsigned len;

			if (!w[j]) {
				r->zero_skips++, j++;
				continue;
			}
			alt = (w[j] >> 48) == QT_TAG_ALT;
			if (alt)
				while (next[1] < (UINT64_C(1) << 40) &&
				       (w[j] >> 8 & UINT64_C(0xffffffffff)) > next[1])
					next[1]++, r->torn++;  /* handler records dropped: counted below */
			len = qt_make(next[alt], alt ? QT_TAG_ALT : QT_TAG, exp);
			for (unsigned k = 0; k < len; k++)
				if (j + k >= n || w[j + k] != exp[k]) {
					qt_err(r->err, sizeof(r->err), "%s record %" PRIu64 " word %u: "
					       "expected %#" PRIx64 ", got %#" PRIx64, alt ? "handler" :
					       "main", next[alt], k, exp[k], j + k < n ? w[j + k] : 0);
					goto out;
				}
			next[alt]++;
			r->records += !alt;
			r->buffers += alt;  /* here: handler records that arrived */
			j += len;
		}
		mn_queue_release(q);
	}
out:
	r->pop_ret = ret;
	mn_queue_detach(q);
	r->done = 1;
	_exit(0);
}

static void test_signal_handler_pushes(void **state)
{
	struct mn_queue_config cfg = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 1,
				       .lamport = true };
	struct qt_run run = { .records = 3000000, .lamport = true };
	struct mn_queue *q;
	pid_t p, cp;
	int st;

	memset(sh, 0, sizeof(*sh));
	qt_become_subreaper();
	p = fork();
	if (p == 0) {
		if (mn_queue_create(&q, &cfg))
			_exit(1);
		cp = fork();
		if (cp == 0)
			consume_two_sequences(mn_queue_fd(q));
		qt_lamport = true;
		mn_queue_producer_start(q);
		produce_with_signals(q, sh, &run);
		mn_queue_producer_finish(q);
		sh->dropped = mn_queue_dropped(q);
		waitpid(cp, NULL, 0);
		mn_queue_destroy(q);
		_exit(0);
	}
	st = qt_wait(p, 60000);
	qt_reap_all(sh, 2000);
	QT_EXPECT_EQ("producer wait status", 0, st);
	QT_EXPECT_NO_ERR(sh->c[0].err);
	QT_EXPECT_EQ("consumer last pop", 0, sh->c[0].pop_ret);
	QT_EXPECT_EQ("main records (never dropped)", run.records, sh->c[0].records);
	/* Handler records missing from the sequence are exactly the dropped ones; the last ones
	 * (after the final arrival) count as dropped too. */
	QT_EXPECT_EQ("handler records arrived + dropped", sh->pushed, sh->c[0].buffers + sh->dropped);
	if (sh->c[0].torn > sh->dropped)
		fail_msg("handler records missing mid-stream: expected <= %" PRIu64 " (dropped), got %"
			 PRIu64, sh->dropped, sh->c[0].torn);
	print_message("handler pushes: %" PRIu64 " arrived, %" PRIu64 " dropped\n",
		      sh->c[0].buffers, sh->dropped);
}

/* ---- Death ---------------------------------------------------------------------------------------- */

static void produce_then_wait(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	qt_produce(run->records);
	s->pushed = run->records;
	if (write(gate[1], "k", 1) != 1)
		_exit(2);
	for (;;)
		pause();
}

/* The producer is SIGKILLed after its pushes: every one of them arrives, the end within 200 ms. */
static void test_producer_killed(void **state)
{
	struct qt_run run = { .buf_bytes = 64 * 1024, .nbufs = 4, .nconsumers = 1, .records = 10007,
			      .produce = produce_then_wait, .no_finish = true, .lamport = true };
	struct pollfd pfd;
	char c;
	pid_t p;

	memset(sh, 0, sizeof(*sh));
	if (pipe(gate) < 0)
		fail_msg("pipe: expected success, got %s", strerror(errno));
	qt_become_subreaper();
	p = qt_spawn_producer(sh, &run);
	close(gate[1]);
	pfd = (struct pollfd){ .fd = gate[0], .events = POLLIN };
	if (poll(&pfd, 1, 8000) != 1 || read(gate[0], &c, 1) != 1) {
		kill(p, SIGKILL);
		qt_reap_all(sh, 2000);
		close(gate[0]);
		fail_msg("producer: expected its records pushed within 8 s, got no word from it");
	}
	close(gate[0]);
	usleep(300000);  /* the consumer has read everything and sleeps */
	sh->kill_ns = qt_now_ns();
	kill(p, SIGKILL);
	for (int64_t end = qt_now_ns() + 5000000000LL;
	     !__atomic_load_n(&sh->c[0].done, __ATOMIC_ACQUIRE) && qt_now_ns() < end;)
		usleep(500);
	qt_reap_all(sh, 2000);
	QT_EXPECT_NO_ERR(sh->c[0].err);
	QT_EXPECT_EQ("consumer records before the kill", run.records, sh->c[0].records);
	QT_EXPECT_EQ("consumer last pop", 0, sh->c[0].pop_ret);
	QT_EXPECT_EQ("consumer mn_queue_producer_died()", 1, sh->c[0].died);
	if (sh->c[0].end_ns - sh->kill_ns > 200 * 1000000LL)
		fail_msg("expected the end of stream within 200 ms of the kill, got it after %.1f ms",
			 (sh->c[0].end_ns - sh->kill_ns) / 1e6);
	qt_expect_released(sh, 1);
}

static void produce_counted(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	qt_produce(run->records);
	s->pushed = run->records;
}

/* The consumer dies: the waiting producer calls the hook once and drops the rest, counted. */
static void test_consumer_killed(void **state)
{
	struct qt_run run = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 1, .records = 50000,
			      .hook = qt_hook_count, .produce = produce_counted, .lamport = true,
			      .copts = { { .kill_after = 3 } } };
	char expected_why[64];

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	QT_EXPECT_EQ("failure hook calls", 1, sh->hook_calls);
	snprintf(expected_why, sizeof(expected_why), "backend process %d exited", (int)sh->c[0].pid);
	if (strcmp(sh->hook_why, expected_why))
		fail_msg("failure hook: expected \"%s\", got \"%s\"", expected_why, sh->hook_why);
	if (!sh->dropped)
		fail_msg("dropped: expected > 0 after the failure, got 0");
	QT_EXPECT_EQ("dropped from other threads", 0, sh->dropped_threads);
	qt_expect_released(sh, 0);
}

/* The consumer detaches: nobody frees the ring, so the queue fails once, the rest is dropped. */
static void test_consumer_detached(void **state)
{
	struct qt_run run = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 1, .records = 50000,
			      .hook = qt_hook_count, .produce = produce_counted, .lamport = true,
			      .copts = { { .detach_after = 2 } } };

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	QT_EXPECT_EQ("failure hook calls", 1, sh->hook_calls);
	if (strcmp(sh->hook_why, "every backend detached"))
		fail_msg("failure hook: expected \"every backend detached\", got \"%s\"", sh->hook_why);
	if (!sh->dropped)
		fail_msg("dropped: expected > 0 after the failure, got 0");
	QT_EXPECT_NO_ERR(sh->c[0].err);
	qt_expect_released(sh, 1);
}

/* ---- Configuration -------------------------------------------------------------------------------- */

static void test_one_consumer_only(void **state)
{
	struct mn_queue_config cfg = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 2,
				       .lamport = true };
	struct mn_queue *q = (struct mn_queue *)&cfg;

	QT_EXPECT_EQ("mn_queue_create, Lamport, 2 consumers (-EINVAL)", -EINVAL,
		     mn_queue_create(&q, &cfg));
	if (q)
		fail_msg("mn_queue_create: expected the handle NULL on failure");
	cfg.nconsumers = 1;
	QT_EXPECT_EQ("mn_queue_create, Lamport, 1 consumer", 0, mn_queue_create(&q, &cfg));
	mn_queue_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_consumer_only),
		cmocka_unit_test(test_in_process),
		cmocka_unit_test(test_threads_and_fork),
		cmocka_unit_test(test_empty_stream),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_stream_slow_consumer),
		cmocka_unit_test(test_stream_big_ring),
		cmocka_unit_test(test_signal_handler_pushes),
		cmocka_unit_test(test_producer_killed),
		cmocka_unit_test(test_consumer_killed),
		cmocka_unit_test(test_consumer_detached),
	};

	return cmocka_run_group_tests_name("queue lamport", tests, setup, teardown);
}
