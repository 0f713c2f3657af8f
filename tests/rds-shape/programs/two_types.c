/* Two lists made by two routines (two allocation sites), then the tail of the first pointed at the
 * head of the second: the sites form two SCCs, not one (the paper's section 3.2), so two RDS
 * types with one instance each, and the link between them stays pending. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	struct node *next;
	long val;
};

volatile long sink;

__attribute__((noinline)) static struct node *make_a(int n)
{
	struct node *head = NULL;

	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof(*x));   /* MARK:a */

		x->val = i;
		x->next = head;
		head = x;
	}
	return head;
}

__attribute__((noinline)) static struct node *make_b(int n)
{
	struct node *head = NULL;

	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof(*x));   /* MARK:b */

		x->val = i;
		x->next = head;
		head = x;
	}
	return head;
}

int main(void)
{
	struct node *a = make_a(10), *b = make_b(30), *t = a;
	long s = 0;

	while (t->next)
		t = t->next;
	t->next = b;   /* MARK:link */
	for (struct node *p = a; p; p = p->next)
		s += p->val;
	sink = s;
	printf("%ld\n", sink);
	return 0;
}
