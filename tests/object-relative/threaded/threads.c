/* Four threads, all alive at once: thread k makes 10 * (k + 1) nodes of 16 bytes at one site (one
 * group of 100 objects, 1600 bytes), sets each node's key (the store marked set: 100 executions,
 * one stream per thread with that thread's 10 * (k + 1)), frees its odd nodes itself, and leaves
 * the even ones to the main thread, which frees them after joining it (made by one thread, freed
 * by another): 100 lifetimes.  The joins are ordering points: the backend takes every allocation
 * before its free, whatever the interleaving. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4

struct node {
	long key, data;
};

static struct node *nodes[NTHREADS][10 * NTHREADS];

static __attribute__((noinline)) struct node *make(void)
{
	return malloc(sizeof(struct node));   /* MARK:node */
}

static void *worker(void *arg)
{
	int k = (int)(long)arg, n = 10 * (k + 1);

	for (int i = 0; i < n; i++) {
		nodes[k][i] = make();
		nodes[k][i]->key = i + k;   /* MARK:set */
	}
	for (int i = 1; i < n; i += 2)
		free(nodes[k][i]);
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];
	long s = 0;

	for (long k = 0; k < NTHREADS; k++)
		pthread_create(&t[k], NULL, worker, (void *)k);
	for (int k = 0; k < NTHREADS; k++)
		pthread_join(t[k], NULL);
	for (int k = 0; k < NTHREADS; k++)
		for (int i = 0; i < 10 * (k + 1); i += 2) {
			s += nodes[k][i]->key;
			free(nodes[k][i]);
		}
	printf("%ld\n", s);
	return 0;
}
