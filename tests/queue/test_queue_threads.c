/*
 * Who may push.  Only the producer thread writes records: other threads' events and a fork child's
 * are dropped and counted, never written; a fork child cannot end its parent's stream; a signal
 * handler that pushes on the producer thread neither corrupts a record it interrupted nor loses its
 * own (unless it lands in the slow path, where it is dropped and counted); the slow path preserves
 * errno.
 */
#include "qtest.h"  /* first: it sets _GNU_SOURCE */

#include <pthread.h>
#include <sys/time.h>

static struct qt_shared *sh;

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

/* ---- Other threads ------------------------------------------------------------------------------- */

#define THREAD_PUSHES 100000

static void *push_from_thread(void *arg)
{
	uint64_t w[4];

	for (uint64_t i = 0; i < THREAD_PUSHES; i++)
		mn_queue_push(w, qt_make(i, QT_TAG_ALT, w));
	return NULL;
}

/* Main thread: half the records, then 4 other threads push (all dropped), then the rest; errno is
 * checked across every push. */
static void produce_with_threads(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	pthread_t t[4];
	uint64_t w[4];

	for (uint64_t i = 0; i < run->records; i++) {
		if (i == run->records / 2) {
			for (int k = 0; k < 4; k++)
				pthread_create(&t[k], NULL, push_from_thread, NULL);
			for (int k = 0; k < 4; k++)
				pthread_join(t[k], NULL);
		}
		errno = EDOM;
		mn_queue_push(w, qt_make(i, QT_TAG, w));
		if (errno != EDOM)
			qt_err(s->producer_err, sizeof(s->producer_err), "errno after push %" PRIu64
			       ": expected EDOM (%d), got %d", i, EDOM, errno);
	}
}

static void test_other_threads_dropped(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 1,
		.records = 100000,
		.produce = produce_with_threads,
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	qt_expect_consumer(sh, 0, run.records);  /* a QT_TAG_ALT record would have failed it */
	QT_EXPECT_EQ("dropped from other threads", 4 * THREAD_PUSHES, sh->dropped_threads);
	QT_EXPECT_EQ("dropped in all", 4 * THREAD_PUSHES, sh->dropped);
}

/* ---- Fork children ------------------------------------------------------------------------------- */

static void produce_with_fork(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	uint64_t w[4];
	pid_t child;

	for (uint64_t i = 0; i < run->records; i++) {
		if (i == run->records / 2) {
			child = fork();
			if (child == 0) {
				uint64_t before;

				/* As the runtime's atfork handler does; finish must not end the
				 * parent's stream, with or without abandon. */
				mn_queue_producer_finish(q);
				mn_queue_producer_abandon(q);
				before = mn_queue_dropped(q);
				for (uint64_t k = 0; k < 1000; k++)
					mn_queue_push(w, qt_make(k, QT_TAG_ALT, w));
				s->child_dropped = mn_queue_dropped(q) - before;
				mn_queue_producer_finish(q);
				/* The child let go of the memfd: a child that outlives the
				 * program must not keep the queue's memory. */
				s->child_maps = qt_count_queue_maps();
				_exit(0);
			}
			waitpid(child, NULL, 0);
		}
		mn_queue_push(w, qt_make(i, QT_TAG, w));
	}
}

static void test_fork_child_abandons(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 2,
		.records = 100000,
		.produce = produce_with_fork,
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	qt_expect_consumer(sh, 0, run.records);
	qt_expect_consumer(sh, 1, run.records);
	QT_EXPECT_EQ("dropped in the fork child", 1000, sh->child_dropped);
	QT_EXPECT_EQ("memfd mappings left in the fork child", 0, sh->child_maps);
	QT_EXPECT_EQ("dropped in the parent", 0, sh->dropped);
}

/* ---- Signal handlers that push ------------------------------------------------------------------ */

static volatile uint64_t handler_pushes;

static void on_alarm(int sig)
{
	uint64_t w[4], i = handler_pushes;

	mn_queue_push(w, qt_make(i, QT_TAG_ALT, w));
	handler_pushes = i + 1;
}

static void produce_with_signals(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { .it_interval = { 0, 50 }, .it_value = { 0, 50 } };
	uint64_t w[4];

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (uint64_t i = 0; i < run->records; i++)
		mn_queue_push(w, qt_make(i, QT_TAG, w));
	it = (struct itimerval){ { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &it, NULL);
	s->pushed = handler_pushes;  /* the handler's records */
}

/*
 * Consumer for two interleaved sequences (the program's and the handler's).  Each must arrive in
 * order and intact; the handler's may have gaps where its events were dropped.  One program
 * record may go missing only where a handler's push crossed a buffer boundary while that record
 * was reserved but not yet (completely) written (queue.h, the losses of mn_queue_push()): it is
 * then the last program record of its buffer, left as zeros, or with word 0 written and each
 * other word written or zero (streaming stores land in any order), and only the handler's own
 * records (those it pushed until the buffer was full) and zeros follow it in that buffer.
 */
/* From w[k] to the buffer's end, only zero words and whole handler records? */
static bool only_handler_records(const uint64_t *w, size_t k, size_t n)
{
	while (k < n) {
		unsigned len = (unsigned)(w[k] & 0xff);

		if (!w[k]) {
			k++;
			continue;
		}
		if (w[k] >> 48 != QT_TAG_ALT || len < 1 || len > 4 || k + len > n)
			return false;
		k += len;
	}
	return true;
}

/*
 * Is the program record at w[j] (exp, len words, not intact) the torn one: word 0 written, each
 * other word as expected or zero, and only handler records after it?
 */
static bool torn(const uint64_t *w, size_t j, size_t n, const uint64_t *exp, unsigned len)
{
	if (j + len > n || w[j] != exp[0] || len < 2)
		return false;
	for (unsigned k = 1; k < len; k++)
		if (w[j + k] && w[j + k] != exp[k])
			return false;
	return only_handler_records(w, j + len, n);
}

static void consume_two_streams(struct qt_shared *s, int fd)
{
	struct qt_consumer *r = &s->c[0];
	uint64_t next[2] = { 0, 0 }, lost = 0;
	bool prev_hole = false;  /* the previous buffer's last program record was followed by a
				  * zero gap (handler records may follow the gap) */
	const uint64_t *w;
	struct mn_queue *q;
	size_t n;
	int ret;

	r->pid = getpid();
	if (mn_queue_attach(&q, fd, 0))
		_exit(1);
	while ((ret = mn_queue_pop(q, &w, &n)) > 0) {
		bool first_program = true, hole = false;
		size_t j = 0;

		while (j < n && !r->err[0]) {
			uint64_t exp[4], i;
			int which;
			unsigned len;

			if (!w[j]) {
				r->zero_skips++;
				hole = true;
				j++;
				continue;
			}
			which = (w[j] >> 48) == QT_TAG_ALT;
			i = next[which];
			/* The handler's sequence has gaps: events it pushed while the slow path was
			 * busy were dropped (and counted).  Its numbers must still increase. */
			if (which && ((w[j] >> 8) & UINT64_C(0xffffffffff)) > i)
				i = (w[j] >> 8) & UINT64_C(0xffffffffff);
			if (!which && first_program && prev_hole) {
				uint64_t next_exp[4];

				/* qt_make() returns the length; the words are what it fills in. */
				qt_make(i, QT_TAG, exp);
				qt_make(i + 1, QT_TAG, next_exp);
				if (w[j] != exp[0] && w[j] == next_exp[0]) {
					lost++;
					i++;
				}
			}
			len = qt_make(i, which ? QT_TAG_ALT : QT_TAG, exp);
			if ((j + len > n || memcmp(w + j, exp, len * 8)) && !which &&
			    torn(w, j, n, exp, len)) {
				lost++;   /* word 0 written, then a handler published the buffer */
				next[0] = i + 1;
				j += len;
				continue;
			}
			if (j + len > n || memcmp(w + j, exp, len * 8)) {
				qt_err(r->err, sizeof(r->err), "%s record %" PRIu64 ": expected %#" PRIx64
				       " (%u words), got %#" PRIx64, which ? "handler" : "program", i,
				       exp[0], len, w[j]);
				break;
			}
			if (which) {
				r->torn++;  /* here: handler records received */
			} else {
				/* A gap before this record is no loss: it was the handler's. */
				hole = false;
				first_program = false;
				r->records++;
			}
			next[which] = i + 1;
			j += len;
		}
		prev_hole = hole;
		mn_queue_release(q);
	}
	r->pop_ret = ret;
	r->buffers = lost;  /* reused: program records lost to the hole case */
	mn_queue_detach(q);
	r->done = 1;
	_exit(0);
}

static void test_signal_handler_pushes(void **state)
{
	struct mn_queue_config cfg = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 1 };
	const uint64_t records = 400000;
	struct mn_queue *q;
	pid_t p, c;
	int st;

	memset(sh, 0, sizeof(*sh));
	qt_become_subreaper();
	p = fork();
	if (p == 0) {
		struct qt_run run = { .records = records };

		if (mn_queue_create(&q, &cfg))
			_exit(1);
		c = fork();
		if (c == 0)
			consume_two_streams(sh, mn_queue_fd(q));
		mn_queue_producer_start(q);
		produce_with_signals(q, sh, &run);
		mn_queue_producer_finish(q);
		sh->dropped = mn_queue_dropped(q);
		waitpid(c, NULL, 0);
		_exit(0);
	}
	st = qt_wait(p, 9000);
	qt_reap_all(sh, 2000);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("producer: expected exit status 0, got wait status %#x", st);
	QT_EXPECT_NO_ERR(sh->c[0].err);
	QT_EXPECT_EQ("consumer finished", 1, sh->c[0].done);
	QT_EXPECT_EQ("program records received + lost at a boundary", records,
		     sh->c[0].records + sh->c[0].buffers);
	/* Handler records pushed in the window between a push's load and store of the cursor are
	 * overwritten, uncounted (queue.h); every other one arrives or is counted. */
	if (sh->c[0].torn + sh->dropped > sh->pushed)
		fail_msg("handler records received + dropped: expected at most the %" PRIu64 " pushed, "
			 "got %" PRIu64, sh->pushed, sh->c[0].torn + sh->dropped);
	if (!sh->pushed)
		fail_msg("handler pushes: expected some (timer every 50 us), got 0");
	print_message("[          ] %" PRIu64 " handler pushes: %" PRIu64 " received, %" PRIu64
		      " dropped in the slow path, %" PRIu64 " overwritten in the window; %" PRIu64
		      " program records lost at a boundary\n", sh->pushed, sh->c[0].torn, sh->dropped,
		      sh->pushed - sh->c[0].torn - sh->dropped, sh->c[0].buffers);
}

/*
 * The interleaving a signal handler can cause, played out deterministically: a push loads the
 * cursor; a "handler" pushes until it has published that buffer and moved on; the push then stores
 * its stale cursor (into the published buffer).  Its re-check sends it to the slow path, which
 * repairs the cursor and pushes the record into the new buffer; nothing is lost or corrupted.
 */
#define STALE_AT 100
#define STALE_RECORDS 20000

static void produce_stale_cursor(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	uint64_t w[4], *c, *b;
	uint64_t j = 0;

	for (uint64_t i = 0; i < STALE_RECORDS; i++) {
		unsigned n = qt_make(i, QT_TAG, w);

		if (i != STALE_AT) {
			mn_queue_push(w, n);
			continue;
		}
		c = mn_q_cur;  /* the interrupted push's load */
		b = mn_q_base;
		while (mn_q_base == b) {
			uint64_t h[4];

			mn_queue_push(h, qt_make(j++, QT_TAG_ALT, h));
		}
		for (int k = 0; k < 2; k++) {
			uint64_t h[4];

			mn_queue_push(h, qt_make(j++, QT_TAG_ALT, h));
		}
		mn_q_cur = c + n;  /* its store, of a cursor into the published buffer */
		mn_queue_push(w, n);  /* its re-check fails alike: on to the slow path */
	}
	s->pushed = j;
}

static void test_stale_cursor_repaired(void **state)
{
	struct mn_queue_config cfg = { .buf_bytes = 4096, .nbufs = 3, .nconsumers = 1 };
	struct mn_queue *q;
	pid_t p, c;
	int st;

	memset(sh, 0, sizeof(*sh));
	qt_become_subreaper();
	p = fork();
	if (p == 0) {
		if (mn_queue_create(&q, &cfg))
			_exit(1);
		c = fork();
		if (c == 0)
			consume_two_streams(sh, mn_queue_fd(q));
		mn_queue_producer_start(q);
		produce_stale_cursor(q, sh, NULL);
		mn_queue_producer_finish(q);
		sh->dropped = mn_queue_dropped(q);
		waitpid(c, NULL, 0);
		_exit(0);
	}
	st = qt_wait(p, 9000);
	qt_reap_all(sh, 2000);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("producer: expected exit status 0, got wait status %#x", st);
	QT_EXPECT_NO_ERR(sh->c[0].err);
	QT_EXPECT_EQ("consumer finished", 1, sh->c[0].done);
	QT_EXPECT_EQ("program records received", STALE_RECORDS, sh->c[0].records);
	QT_EXPECT_EQ("program records lost", 0, sh->c[0].buffers);
	QT_EXPECT_EQ("handler records received", sh->pushed, sh->c[0].torn);
	QT_EXPECT_EQ("dropped", 0, sh->dropped);
	if (sh->c[0].zero_skips > MN_WIRE_MAX_WORDS - 1)
		fail_msg("zero words skipped after the repair: expected at most %d, got %" PRIu64,
			 MN_WIRE_MAX_WORDS - 1, sh->c[0].zero_skips);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_threads_dropped),
		cmocka_unit_test(test_fork_child_abandons),
		cmocka_unit_test(test_signal_handler_pushes),
		cmocka_unit_test(test_stale_cursor_repaired),
	};

	return cmocka_run_group_tests_name("queue threads", tests, setup, teardown);
}
