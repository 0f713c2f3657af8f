/*
 * The queue moves every record, in order, exactly once, to every consumer: under every buffer size
 * from 4 KiB to 8 MiB, around the ring many times, with 1 to 8 consumer processes, with consumers
 * slower than the producer or attaching after it started, and on a NUMA-placed queue.  The
 * producer and each consumer are separate processes (qtest.h), and every run ends with nothing of
 * the queue left in them.
 */
#include "qtest.h"

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

static void run_one(size_t buf_bytes, unsigned nbufs, unsigned nconsumers, uint64_t records)
{
	struct qt_run run = {
		.buf_bytes = buf_bytes,
		.nbufs = nbufs,
		.nconsumers = nconsumers,
		.records = records,
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	for (unsigned i = 0; i < nconsumers; i++)
		qt_expect_consumer(sh, i, records);
	QT_EXPECT_EQ("dropped", 0, sh->dropped);
	qt_expect_released(sh, nconsumers);
}

/*
 * (1) Order and no loss under every buffer size from 4 KiB (one page) to 8 MiB, two consumers,
 * two buffers (the ping-pong minimum, where the producer meets a boundary most often): at least
 * 200000 records, and for big buffers enough for three and a half laps of the ring, so every size
 * wraps around several times.  Records average 20 bytes.
 */
static void test_order_every_size(void **state)
{
	for (size_t kib = 4; kib <= 8192; kib *= 2) {
		size_t buf_bytes = kib * 1024;
		uint64_t records = buf_bytes * 7 / 20 > 200000 ? buf_bytes * 7 / 20 : 200000;
		struct qt_run run = {
			.buf_bytes = buf_bytes,
			.nbufs = 2,
			.nconsumers = 2,
			.records = records,
		};

		memset(sh, 0, sizeof(*sh));
		qt_run_stream(sh, &run, 9000);
		for (unsigned i = 0; i < 2; i++) {
			qt_expect_consumer(sh, i, records);
			if (sh->c[i].buffers < 6)
				fail_msg("%zu KiB buffers, consumer %u: expected >= 6 buffers "
					 "(3 laps), got %" PRIu64, kib, i, sh->c[i].buffers);
		}
		QT_EXPECT_EQ("dropped", 0, sh->dropped);
		qt_expect_released(sh, 2);
	}
}

/* (1) Order and no loss, records of 1..4 words, three buffer sizes. */
static void test_order_4k(void **state)
{
	run_one(4096, 4, 1, 300000);
}

static void test_order_64k(void **state)
{
	run_one(64 * 1024, 4, 1, 500000);
}

static void test_order_1m(void **state)
{
	/* About 12 MB of records: a dozen 1 MiB buffers, then the partial last one. */
	run_one(1024 * 1024, 2, 1, 600000);
}

/* (2) Wraparound: thousands of laps of a small ring, and a ring size that is not a power of 2. */
static void test_wraparound(void **state)
{
	run_one(4096, 2, 1, 1000000);  /* ~24 MB through 8 KiB: ~3000 laps */
}

static void test_wraparound_3_buffers(void **state)
{
	run_one(8192, 3, 1, 400000);
}

/*
 * (2) Wraparound with the buffers zeroed behind (mn_queue_zero_behind()), by one consumer of two
 * and then by both: every record, in order, around a small ring thousands of times, so that the
 * producer takes back buffers that a zeroing thread, not the releasing consumer, handed back.
 */
static void test_wraparound_zero_behind(void **state)
{
	for (unsigned both = 0; both < 2; both++) {
		struct qt_run run = {
			.buf_bytes = 4096,
			.nbufs = 3,
			.nconsumers = 2,
			.records = 400000,
			.copts = { { .zero_behind = true }, { .zero_behind = both } },
		};

		memset(sh, 0, sizeof(*sh));
		qt_run_stream(sh, &run, 9000);
		for (unsigned i = 0; i < 2; i++)
			qt_expect_consumer(sh, i, run.records);
		QT_EXPECT_EQ("dropped", 0, sh->dropped);
		qt_expect_released(sh, 2);
	}
}

/* (3) Several consumer processes each see every record. */
static void test_two_consumers(void **state)
{
	run_one(64 * 1024, 4, 2, 400000);
}

static void test_four_consumers(void **state)
{
	run_one(16 * 1024, 3, 4, 200000);
}

static void test_eight_consumers(void **state)
{
	run_one(32 * 1024, 4, QT_MAX_CONSUMERS, 100000);
}

/*
 * Consumers that attach after the producer filled the whole ring: it waits for them (they have
 * 20 s to attach), and they read from the first buffer ever published.
 */
static void test_late_attach(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 2,
		.records = 20000,
		.copts = { { .attach_delay_us = 200000 }, { .attach_delay_us = 300000 } },
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	qt_expect_consumer(sh, 0, run.records);
	qt_expect_consumer(sh, 1, run.records);
	qt_expect_released(sh, 2);
}

/* (4) Consumers slower than the producer: the producer waits (futex) and loses nothing. */
static void test_slow_consumers(void **state)
{
	struct qt_run run = {
		.buf_bytes = 8192,
		.nbufs = 2,
		.nconsumers = 2,
		.records = 60000,  /* ~150 buffers */
		.copts = {
			{ .sleep_every = 3, .sleep_us = 3000 },
			{ .sleep_every = 7, .sleep_us = 5000 },
		},
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	qt_expect_consumer(sh, 0, run.records);
	qt_expect_consumer(sh, 1, run.records);
}

/* The same with megabyte buffers: each consumer dawdles over every buffer or every other one. */
static void test_slow_consumers_big_buffers(void **state)
{
	struct qt_run run = {
		.buf_bytes = 1024 * 1024,
		.nbufs = 2,
		.nconsumers = 2,
		.records = 600000,  /* ~11 buffers */
		.copts = {
			{ .sleep_every = 1, .sleep_us = 10000 },
			{ .sleep_every = 2, .sleep_us = 30000 },
		},
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	qt_expect_consumer(sh, 0, run.records);
	qt_expect_consumer(sh, 1, run.records);
	qt_expect_released(sh, 2);
}

/* A queue placed on NUMA node 0 (every Linux machine has it) carries the stream as well. */
static void test_placed_on_node_0(void **state)
{
	struct qt_run run = {
		.buf_bytes = 64 * 1024,
		.nbufs = 4,
		.nconsumers = 2,
		.records = 200000,
		.place = true,
		.node = 0,
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	qt_expect_consumer(sh, 0, run.records);
	qt_expect_consumer(sh, 1, run.records);
	qt_expect_released(sh, 2);
}

/* A stream that ends inside the first buffer: finish publishes the partial buffer. */
static void test_partial_first_buffer(void **state)
{
	run_one(64 * 1024, 2, 2, 17);
}

/* A stream with no event at all: every consumer gets the end at once. */
static void test_empty_stream(void **state)
{
	run_one(4096, 2, 3, 0);
}

/*
 * A stream that ends at (or within 3 words of) a buffer boundary: the producer stops before the
 * record that would pass run->records words, so finish publishes a full buffer the slow path never
 * saw.
 */
static void produce_words(struct mn_queue *q, struct qt_shared *s, const struct qt_run *run)
{
	uint64_t w[4];

	for (uint64_t i = 0, words = 0;; i++) {
		unsigned n = qt_make(i, QT_TAG, w);

		if (words + n > run->records)
			break;
		mn_queue_push(w, n);
		words += n;
		s->pushed++;
	}
}

static void test_full_last_buffer(void **state)
{
	struct qt_run run = {
		.buf_bytes = 4096,
		.nbufs = 2,
		.nconsumers = 1,
		.records = 512 * 5,  /* words, here: five buffers' worth */
		.produce = produce_words,
	};

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	qt_expect_consumer(sh, 0, sh->pushed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_4k),
		cmocka_unit_test(test_order_64k),
		cmocka_unit_test(test_order_1m),
		cmocka_unit_test(test_order_every_size),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_wraparound_3_buffers),
		cmocka_unit_test(test_wraparound_zero_behind),
		cmocka_unit_test(test_two_consumers),
		cmocka_unit_test(test_four_consumers),
		cmocka_unit_test(test_eight_consumers),
		cmocka_unit_test(test_late_attach),
		cmocka_unit_test(test_slow_consumers),
		cmocka_unit_test(test_slow_consumers_big_buffers),
		cmocka_unit_test(test_placed_on_node_0),
		cmocka_unit_test(test_partial_first_buffer),
		cmocka_unit_test(test_empty_stream),
		cmocka_unit_test(test_full_last_buffer),
	};

	return cmocka_run_group_tests_name("queue stream", tests, setup, teardown);
}
