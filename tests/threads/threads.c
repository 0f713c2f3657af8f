/*
 * A threaded program with known answers (tests/threads/threads.sh), in one of three modes:
 *
 *   pool    4 threads, all alive at once (a barrier before and after their work): each fills a
 *           private array of FILL ints in a loop (its store: 4 * FILL executions) and adds to a
 *           shared counter under a mutex ADDS times (that store: 4 * ADDS executions)
 *   churn   CHURN short threads, 4 at a time, each storing SHORT ints; prints how many fds the
 *           threads left open (0)
 *   serial  the pool's work on the main thread alone (the single-threaded twin)
 *
 * Prints the counter and the arrays' sum, so that output can be compared with a native build.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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

static void *short_worker(void *arg)
{
	int k = (int)(long)arg;

	for (int i = 0; i < SHORT; i++)
		shorts[k][i] = k + i;
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
		int before = count_fds();
		long s = 0;

		for (long k = 0; k < CHURN; k += NTHREADS) {
			for (int j = 0; j < NTHREADS; j++)
				pthread_create(&t[j], NULL, short_worker, (void *)(k + j));
			for (int j = 0; j < NTHREADS; j++)
				pthread_join(t[j], NULL);
		}
		for (int k = 0; k < CHURN; k++)
			for (int i = 0; i < SHORT; i++)
				s += shorts[k][i];
		printf("churn %d threads, sum %ld, fds left open %d\n", CHURN, s,
		       count_fds() - before);
		return 0;
	} else {
		fprintf(stderr, "threads: unknown mode %s\n", mode);
		return 2;
	}
	printf("%s: counter %ld, sum %ld\n", mode, counter, sum());
	return 0;
}
