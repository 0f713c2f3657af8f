/*
 * A threaded program with known answers (tests/threads/threads.sh), in one of three modes:
 *
 *   pool    4 threads, all alive at once (a barrier before and after their work): each fills a
 *           private array of FILL ints in a loop (its store: 4 * FILL executions) and adds to a
 *           shared counter under a mutex ADDS times (that store: 4 * ADDS executions)
 *   churn [N]  N (default and at most CHURN) short threads, 4 at a time, each storing SHORT ints;
 *           prints how many fds the threads left open (0); and on stderr, which the test does
 *           not compare with native, the process's shared memory (memfd and /dev/shm fds and
 *           mappings) before and after the threads: what per-thread buffers would leak
 *   serial  the pool's work on the main thread alone (the single-threaded twin)
 *
 * Prints the counter and the arrays' sum, so that output can be compared with a native build.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHREADS 4
#define FILL     1000
#define ADDS     250
#define CHURN    10000
#define SHORT    10

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static long counter;
static int arrays[NTHREADS][FILL];
static int shorts[CHURN][SHORT];

static void fill(int *a, int k)
{
	for (int i = 0; i < FILL; i++)
		a[i] = i * k + 1;
}

static void add(void)
{
	for (int i = 0; i < ADDS; i++) {
		pthread_mutex_lock(&mu);
		counter += 2;
		pthread_mutex_unlock(&mu);
	}
}

static void *worker(void *arg)
{
	int k = (int)(long)arg;

	pthread_barrier_wait(&bar);
	fill(arrays[k], k);
	add();
	pthread_barrier_wait(&bar);
	return NULL;
}

static long churn_sum;

/* Adds its own to the sum under the mutex: the main thread's events then do not grow with the
 * threads (its loads of their arrays would), so the backend's memory at 1,000 and at 10,000
 * threads measures what the threads themselves cost it. */
static void *short_worker(void *arg)
{
	int k = (int)(long)arg;
	long s = 0;

	for (int i = 0; i < SHORT; i++)
		shorts[k][i] = k + i;
	for (int i = 0; i < SHORT; i++)
		s += shorts[k][i];
	pthread_mutex_lock(&mu);
	churn_sum += s;
	pthread_mutex_unlock(&mu);
	return NULL;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int shared(const char *name)
{
	return !strncmp(name, "/memfd:", 7) || !strncmp(name, "/dev/shm/", 9);
}

/* Fds of the process that are shared memory objects (memfds or /dev/shm files). */
static int shared_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[64], target[256];
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t len;

		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof target - 1);
		if (len > 0) {
			target[len] = '\0';
			n += shared(target);
		}
	}
	closedir(d);
	return n;
}

/* Mappings of the process backed by shared memory objects. */
static int shared_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		char *name = strchr(line, '/');

		n += name && shared(name);
	}
	fclose(f);
	return n;
}

static long sum(void)
{
	long s = 0;

	for (int k = 0; k < NTHREADS; k++)
		for (int i = 0; i < FILL; i++)
			s += arrays[k][i];
	return s;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pool";
	pthread_t t[NTHREADS];

	if (!strcmp(mode, "serial")) {
		for (int k = 0; k < NTHREADS; k++) {
			fill(arrays[k], k);
			add();
		}
	} else if (!strcmp(mode, "pool")) {
		pthread_barrier_init(&bar, NULL, NTHREADS);
		for (long k = 0; k < NTHREADS; k++)
			pthread_create(&t[k], NULL, worker, (void *)k);
		for (int k = 0; k < NTHREADS; k++)
			pthread_join(t[k], NULL);
	} else if (!strcmp(mode, "churn")) {
		int before = count_fds(), fds0 = shared_fds(), maps0 = shared_maps();
		long n = argc > 2 ? atol(argv[2]) : CHURN, s = 0;

		if (n <= 0 || n > CHURN || n % NTHREADS) {
			fprintf(stderr, "threads: churn N: N a multiple of %d up to %d\n", NTHREADS, CHURN);
			return 2;
		}
		for (long k = 0; k < n; k += NTHREADS) {
			for (int j = 0; j < NTHREADS; j++)
				pthread_create(&t[j], NULL, short_worker, (void *)(k + j));
			for (int j = 0; j < NTHREADS; j++)
				pthread_join(t[j], NULL);
		}
		s = churn_sum;
		printf("churn %ld threads, sum %ld, fds left open %d\n", n, s, count_fds() - before);
		fprintf(stderr, "shared memory: fds %d before, %d after; mappings %d before, %d after\n",
			fds0, shared_fds(), maps0, shared_maps());
		return 0;
	} else {
		fprintf(stderr, "threads: unknown mode %s\n", mode);
		return 2;
	}
	printf("%s: counter %ld, sum %ld\n", mode, counter, sum());
	return 0;
}
