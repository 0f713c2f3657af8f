/* Remarks (tests/pass/use/use.sh remarks): one of each kind mnemo-use emits, at known lines (the
 * R: comments name the remark expected on that line; CarriedDependence is in parallel.c). */
#include <stdio.h>
#include <stdlib.h>

#define N 1000

struct rec {
	int hot1, hot2, cold1, cold2;
};
struct rec table[N];

struct node {
	struct node *next;
	int v;
};

volatile int scale = 3;
long a[N], c[N];   /* 8-byte elements: dependence tracks 8-byte words */

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : N;
	struct node *head = NULL;
	long s = 0;

	for (int i = 0; i < 100; i++) {
		struct node *x = malloc(sizeof(*x));   /* R: RDSRoot */
		x->v = i;
		x->next = head;
		head = x;
	}
	for (int r = 0; r < 50; r++)
		for (struct node *p = head; p; p = p->next)   /* R: CarriedValue */
			s += p->v;
	for (int i = 0; i < n; i++) {
		table[i].hot1 = i;
		table[i].hot2 = i;
		table[i].cold1 = i;
		table[i].cold2 = i;
	}
	for (int r = 0; r < 9; r++)
		for (int i = 0; i < n; i++)
			s += table[i].hot1 + table[i].hot2;
	for (int i = 0; i < n; i++)             /* R: NoCarriedDependence */
		c[i] = a[i] * scale;            /* R: ConstantLoad StronglyStrided */
	printf("%ld %ld\n", s, c[n - 1]);
	return 0;
}
