/*
 * Death of either side.  A producer SIGKILLed mid-buffer (or mid-record): every consumer gets every
 * record written before the kill, the stream ends within 200 ms, and mn_queue_producer_died() says
 * why.  A consumer SIGKILLed: the producer stops waiting for it, calls the failure hook once, and
 * drops and counts every later event.  A consumer that detaches, or that the producer forgets, is
 * simply no longer waited for.  Whoever survives holds nothing of the queue afterwards.
 */
#include "qtest.h"  /* first: it sets _GNU_SOURCE */

#include <poll.h>

static struct qt_shared *sh;
static int gate[2];  /* the producer writes a byte here once its records are written */

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

/* ---- Producer killed ----------------------------------------------------------------------------- */

/* Writes run->records complete records, says so, and waits to be killed. */
static void produce_then_wait(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	qt_produce(run->records);
	s->pushed = run->records;
	if (write(gate[1], "k", 1) != 1)
		_exit(2);
	for (;;)
		pause();
}

/*
 * Writes run->records complete records, then the first two words of a four-word record, as a push
 * killed between its stores leaves it (the reservation made, arguments 2 and 3 still zero); says
 * so, and waits to be killed.
 */
static void produce_torn_then_wait(struct mn_queue *q, struct qt_shared *s,
				   const struct qt_run *run)
{
	uint64_t w[4], *c;

	qt_produce(run->records);
	qt_make(run->records, QT_TAG, w);
	c = mn_q_cur;
	if (qt_len(run->records) != 4 || mn_q_end - c < 4) {
		snprintf(s->producer_err, sizeof(s->producer_err), "test set-up: record %" PRIu64
			 " must be 4 words long and fit the buffer", run->records);
		_exit(1);
	}
	mn_q_cur = c + 4;  /* the reservation, as mn_queue_push() makes it */
	mn_stream_store64(c, w[0]);
	mn_stream_store64(c + 1, w[1]);
	s->pushed = run->records + 1;
	if (write(gate[1], "k", 1) != 1)
		_exit(2);
	for (;;)
		pause();
}

/*
 * Fills every buffer of the ring (the consumers are asleep), says so, then pushes one more record:
 * that push publishes the last buffer and blocks waiting for the first one, and is killed there.
 */
static void produce_until_blocked(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	uint64_t w[4], i = 0;
	unsigned switches = 0;
	uint64_t *end = mn_q_end;

	for (;; i++) {
		unsigned n = qt_make(i, QT_TAG, w);

		if (switches == run->nbufs - 1 && (size_t)(mn_q_end - mn_q_cur) < n)
			break;  /* the next push publishes the last buffer and must wait */
		mn_queue_push(w, n);
		if (mn_q_end != end) {
			end = mn_q_end;
			switches++;
		}
	}
	s->pushed = i;
	if (write(gate[1], "k", 1) != 1)
		_exit(2);
	qt_make(i, QT_TAG, w);
	mn_queue_push(w, qt_len(i));  /* blocks: never returns before the kill */
	for (;;)
		pause();
}

/* Waits until the consumers that were spawned say they are done, up to timeout_ms. */
static void wait_consumers_done(unsigned n, uint32_t skip, int timeout_ms)
{
	int64_t end = qt_now_ns() + (int64_t)timeout_ms * 1000000;

	for (unsigned i = 0; i < n; i++)
		while (!(skip & (1u << i)) && !__atomic_load_n(&sh->c[i].done, __ATOMIC_ACQUIRE) &&
		       qt_now_ns() < end)
			usleep(500);
}

/*
 * Runs a stream whose producer gets SIGKILLed once it writes to the gate (after kill_delay_ms),
 * and returns the kill time.  The producer stays a zombie until the consumers are done, as it would
 * if the program's parent were slow to reap it.
 */
static void run_killed(const struct qt_run *run, int kill_delay_ms)
{
	struct pollfd pfd;
	char c;
	pid_t p;

	memset(sh, 0, sizeof(*sh));
	if (pipe(gate) < 0)
		fail_msg("pipe: expected success, got %s", strerror(errno));
	qt_become_subreaper();
	p = qt_spawn_producer(sh, run);
	close(gate[1]);
	pfd = (struct pollfd){ .fd = gate[0], .events = POLLIN };
	if (poll(&pfd, 1, 8000) != 1 || read(gate[0], &c, 1) != 1) {
		kill(p, SIGKILL);
		qt_reap_all(sh, 2000);
		close(gate[0]);
		QT_EXPECT_NO_ERR(sh->producer_err);
		fail_msg("producer: expected its records written within 8 s, got no word from it");
	}
	close(gate[0]);
	if (kill_delay_ms)
		usleep(kill_delay_ms * 1000);
	sh->kill_ns = qt_now_ns();
	kill(p, SIGKILL);
	wait_consumers_done(run->nconsumers, run->skip_mask, 5000);
	qt_reap_all(sh, 2000);
	QT_EXPECT_NO_ERR(sh->producer_err);
}

static void expect_after_death(unsigned i, uint64_t records, bool check_latency)
{
	const struct qt_consumer *c = &sh->c[i];
	char what[80];

	QT_EXPECT_NO_ERR(c->err);
	snprintf(what, sizeof(what), "consumer %u finished", i);
	QT_EXPECT_EQ(what, 1, c->done);
	snprintf(what, sizeof(what), "consumer %u records before the kill", i);
	QT_EXPECT_EQ(what, records, c->records);
	snprintf(what, sizeof(what), "consumer %u last pop", i);
	QT_EXPECT_EQ(what, 0, c->pop_ret);
	snprintf(what, sizeof(what), "consumer %u mn_queue_producer_died()", i);
	QT_EXPECT_EQ(what, 1, c->died);
	if (check_latency && c->end_ns - sh->kill_ns > 200 * 1000000LL)
		fail_msg("consumer %u: expected the end of stream within 200 ms of the kill, got it "
			 "after %.1f ms", i, (c->end_ns - sh->kill_ns) / 1e6);
}

/* (5) Killed with several buffers published and a partial one: consumers get all of it, fast. */
static void test_producer_killed_mid_buffer(void **state)
{
	struct qt_run run = {
		.buf_bytes = 64 * 1024,
		.nbufs = 4,
		.nconsumers = 2,
		.records = 10007,  /* ~3 buffers published, the 4th partly written */
		.produce = produce_then_wait,
		.no_finish = true,
	};

	run_killed(&run, 0);
	expect_after_death(0, run.records, true);
	expect_after_death(1, run.records, true);
	qt_expect_released(sh, 2);
}

/*
 * (5) The same, with both consumers zeroing behind (mn_queue_zero_behind()) and a ring of two 4 KiB
 * buffers, so that the partial last buffer is on its hundredth lap or so: the words after the last
 * record must read zero there as in a fresh buffer, whichever thread zeroed them.
 */
static void test_producer_killed_mid_buffer_zero_behind(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 2,
		.records = 20011,
		.produce = produce_then_wait,
		.no_finish = true,
		.copts = { { .zero_behind = true }, { .zero_behind = true } },
	};

	run_killed(&run, 0);
	expect_after_death(0, run.records, true);
	expect_after_death(1, run.records, true);
	qt_expect_released(sh, 2);
}

/*
 * Killed in the middle of a record: the consumers get every whole record and then the torn one,
 * its unwritten arguments zero (queue.h, mn_queue_pop()), and nothing after it.
 */
static void test_producer_killed_mid_record(void **state)
{
	struct qt_run run = {
		.buf_bytes = 64 * 1024,
		.nbufs = 4,
		.nconsumers = 2,
		.produce = produce_torn_then_wait,
		.no_finish = true,
		.copts = { { .tolerate_torn_last = true }, { .tolerate_torn_last = true } },
	};

	/* About three buffers published, the fourth partly written; the torn record i must be four
	 * words long and have a non-zero argument 2 (i % 5 != 2), which the kill leaves at zero. */
	for (run.records = 10007; qt_len(run.records) != 4 || run.records % 5 == 2; run.records++)
		;
	run_killed(&run, 0);
	for (unsigned i = 0; i < 2; i++) {
		char what[64];

		expect_after_death(i, run.records + 1, true);
		snprintf(what, sizeof(what), "consumer %u torn records", i);
		QT_EXPECT_EQ(what, 1, sh->c[i].torn);
	}
	qt_expect_released(sh, 2);
}

/* Killed before its first buffer was ever published: the whole stream is the tail. */
static void test_producer_killed_in_first_buffer(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 1,
		.records = 150,
		.produce = produce_then_wait,
		.no_finish = true,
	};

	run_killed(&run, 0);
	expect_after_death(0, run.records, true);
	qt_expect_released(sh, 1);
}

/* Killed before any event: the stream ends empty, and says the producer died. */
static void test_producer_killed_before_any_event(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 2,
		.records = 0,
		.produce = produce_then_wait,
		.no_finish = true,
	};

	run_killed(&run, 0);
	expect_after_death(0, 0, true);
	expect_after_death(1, 0, true);
	qt_expect_released(sh, 2);
}

/*
 * Killed while blocked on a full ring (the consumers were asleep): they wake later and get every
 * buffer; the slot the producer was waiting for holds nothing new.
 */
static void test_producer_killed_while_waiting(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 3,
		.nconsumers = 2,
		.produce = produce_until_blocked,
		.no_finish = true,
		.copts = { { .start_sleep_us = 300000 }, { .start_sleep_us = 400000 } },
	};

	run_killed(&run, 50);
	expect_after_death(0, sh->pushed, false);
	expect_after_death(1, sh->pushed, false);
	qt_expect_released(sh, 2);
}

/* ---- Consumer killed, detached, forgotten --------------------------------------------------------- */

static void produce_counted(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	qt_produce(run->records);
	s->pushed = run->records;
}

/* (6) A consumer dies holding a buffer: one hook call, later pushes dropped and counted. */
static void test_consumer_killed(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 2,
		.records = 50000,  /* ~250 buffers */
		.hook = qt_hook_count,
		.produce = produce_counted,
		.copts = { [1] = { .kill_after = 3 } },
	};
	char expected_why[64];

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	QT_EXPECT_EQ("failure hook calls", 1, sh->hook_calls);
	snprintf(expected_why, sizeof(expected_why), "backend process %d exited", (int)sh->c[1].pid);
	if (strcmp(sh->hook_why, expected_why))
		fail_msg("failure hook: expected \"%s\", got \"%s\"", expected_why, sh->hook_why);
	if (!sh->dropped)
		fail_msg("dropped: expected > 0 after the failure, got 0");
	/* Consumer 0 saw every published record; the rest were dropped, none lost otherwise. */
	QT_EXPECT_NO_ERR(sh->c[0].err);
	QT_EXPECT_EQ("consumer 0 records + dropped", run.records, sh->c[0].records + sh->dropped);
	QT_EXPECT_EQ("consumer 0 last pop", 0, sh->c[0].pop_ret);
	QT_EXPECT_EQ("consumer 0 producer_died", 0, sh->c[0].died);
	QT_EXPECT_EQ("dropped from other threads", 0, sh->dropped_threads);
	/* The producer and consumer 0 let go of the queue all the same. */
	qt_expect_released(sh, 2);
}

/* A consumer that detaches mid-stream is no longer waited for; the others get everything. */
static void test_consumer_detaches(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 3,
		.records = 50000,
		.hook = qt_hook_count,
		.copts = { [1] = { .detach_after = 5 }, [2] = { .detach_after = 1 } },
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	QT_EXPECT_EQ("failure hook calls", 0, sh->hook_calls);
	QT_EXPECT_EQ("dropped", 0, sh->dropped);
	qt_expect_consumer(sh, 0, run.records);
	QT_EXPECT_NO_ERR(sh->c[1].err);
	QT_EXPECT_NO_ERR(sh->c[2].err);
	qt_expect_released(sh, 3);
}

/* A consumer the producer forgets (its backend never started) is not waited for. */
static void test_forgotten_consumer(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 2,
		.records = 50000,
		.skip_mask = 1u << 1,
		.hook = qt_hook_count,
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	QT_EXPECT_EQ("failure hook calls", 0, sh->hook_calls);
	QT_EXPECT_EQ("dropped", 0, sh->dropped);
	qt_expect_consumer(sh, 0, run.records);
}

/* Every consumer detached: nobody would hand a buffer back, so the queue fails once. */
static void test_every_consumer_detached(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 1,
		.records = 50000,
		.hook = qt_hook_count,
		.copts = { { .detach_after = 2 } },
	};

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_producer_killed_mid_buffer),
		cmocka_unit_test(test_producer_killed_mid_buffer_zero_behind),
		cmocka_unit_test(test_producer_killed_mid_record),
		cmocka_unit_test(test_producer_killed_in_first_buffer),
		cmocka_unit_test(test_producer_killed_before_any_event),
		cmocka_unit_test(test_producer_killed_while_waiting),
		cmocka_unit_test(test_consumer_killed),
		cmocka_unit_test(test_consumer_detaches),
		cmocka_unit_test(test_forgotten_consumer),
		cmocka_unit_test(test_every_consumer_detached),
	};

	return cmocka_run_group_tests_name("queue death", tests, setup, teardown);
}
