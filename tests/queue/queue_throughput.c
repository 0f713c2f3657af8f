/*
 * Sanity throughput check: events per second moved from a producer process to one consumer
 * process (which reads every word), for 16-byte and 24-byte records, 4 x 1 MiB buffers.  Not the
 * benchmark (bench/queue); it prints numbers and fails only if the stream is wrong.
 *
 *   queue-throughput [EVENTS]     (default 50 million per record size)
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "queue.h"

struct result {
	uint64_t events;
	uint64_t sum;
	double end;
	int ok;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Record i: word 0 = i << 8 | code 1, then i in each argument word. */
static __attribute__((noinline)) void produce(uint64_t n, unsigned words)
{
	if (words == 2) {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t w[2] = { i << 8 | 1, i };

			mn_queue_push(w, 2);
		}
	} else {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t w[3] = { i << 8 | 1, i, i };

			mn_queue_push(w, 3);
		}
	}
}

static void consume(int fd, unsigned words, struct result *r)
{
	struct mn_queue *q;
	const uint64_t *w;
	uint64_t events = 0, sum = 0;
	size_t n;
	int ret;

	if (mn_queue_attach(&q, fd, 0))
		_exit(1);
	while ((ret = mn_queue_pop(q, &w, &n)) > 0) {
		for (size_t j = 0; j + words <= n; j += words) {
			sum += w[j + 1];
			events++;
		}
		mn_queue_release(q);
	}
	r->end = now();
	r->events = events;
	r->sum = sum;
	r->ok = ret == 0;
	mn_queue_detach(q);
	_exit(0);
}

static int run(uint64_t n, unsigned words)
{
	struct mn_queue_config cfg = { .buf_bytes = 1 << 20, .nbufs = 4, .nconsumers = 1 };
	struct result *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				-1, 0);
	struct mn_queue *q;
	double t0, t_push;
	pid_t c;

	if (r == MAP_FAILED || mn_queue_create(&q, &cfg)) {
		fprintf(stderr, "queue-throughput: cannot create the queue\n");
		return 1;
	}
	memset(r, 0, sizeof(*r));
	c = fork();
	if (c == 0)
		consume(mn_queue_fd(q), words, r);
	mn_queue_producer_start(q);
	t0 = now();
	produce(n, words);
	mn_queue_producer_finish(q);
	t_push = now() - t0;
	waitpid(c, NULL, 0);
	mn_queue_destroy(q);
	if (!r->ok || r->events != n || r->sum != n * (n - 1) / 2) {
		fprintf(stderr, "queue-throughput: %u-byte records: expected %" PRIu64 " events (sum "
			"%" PRIu64 "), got %" PRIu64 " (sum %" PRIu64 ")\n", words * 8, n,
			n * (n - 1) / 2, r->events, r->sum);
		return 1;
	}
	printf("%2u-byte records: %" PRIu64 " events in %.3f s end to end: %.1f M events/s, "
	       "%.2f GB/s (producer alone %.1f M events/s)\n", words * 8, n, r->end - t0,
	       n / (r->end - t0) / 1e6, n * words * 8.0 / (r->end - t0) / 1e9, n / t_push / 1e6);
	munmap(r, sizeof(*r));
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 50000000;

	return run(n, 2) || run(n, 3);
}
