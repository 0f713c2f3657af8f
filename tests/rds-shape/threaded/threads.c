/* Four threads make a list each: thread k one of 10 * (k + 1) nodes at one allocation site (one RDS
 * type, four instances), walked twice; four later threads free them, thread k the list of maker
 * (k + 1) % 4: every node is freed by a thread other than its maker.  Each list is built and
 * walked by one thread alone, so its counts do not depend on how the threads interleave: nodes
 * n, edges n - 1 (backward: a new node points at the older head).  Its traversals are its
 * maker's two walks and its freer's walk as it frees, 3 (n - 1); each walk's first one starts
 * afresh, the n - 2 others continue depth-first: 3 (n - 2).
 *
 * The makers are joined before the freers start: the joins and creates are ordering points, so the
 * backend takes every node's allocation before its free, whatever the interleaving. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4

struct node {
	struct node *next;
	long val;
};

static struct node *lists[NTHREADS];
static long sums[NTHREADS];

__attribute__((noinline)) static struct node *make(int n)
{
	struct node *head = NULL;

	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof(*x));   /* MARK:node */

		x->val = i;
		x->next = head;
		head = x;
	}
	return head;
}

/* pass makes the two walks differ, so that the compiler keeps both */
__attribute__((noinline)) static long walk(struct node *p, long pass)
{
	long s = 0;

	for (; p; p = p->next)
		s += p->val + pass;
	return s;
}

static void release(struct node *p)
{
	while (p) {
		struct node *next = p->next;

		free(p);
		p = next;
	}
}

static void *maker(void *arg)
{
	int k = (int)(long)arg;

	lists[k] = make(10 * (k + 1));
	sums[k] = walk(lists[k], 0) + walk(lists[k], 1);
	return NULL;
}

static void *freer(void *arg)
{
	release(lists[((int)(long)arg + 1) % NTHREADS]);
	return NULL;
}

/* Starts NTHREADS threads running fn and joins them. */
static void team(void *(*fn)(void *))
{
	pthread_t t[NTHREADS];

	for (long k = 0; k < NTHREADS; k++)
		pthread_create(&t[k], NULL, fn, (void *)k);
	for (int k = 0; k < NTHREADS; k++)
		pthread_join(t[k], NULL);
}

int main(void)
{
	long s = 0;

	team(maker);
	team(freer);
	for (int k = 0; k < NTHREADS; k++)
		s += sums[k];
	printf("%ld\n", s);
	return 0;
}
