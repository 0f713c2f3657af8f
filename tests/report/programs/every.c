/*
 * One program that gives every view of the HTML report something to draw (browser.sh):
 *   - dependence: a loop with a loop-carried dependence (a prefix sum, distance 1) and a loop with
 *     none (an element-wise scale);
 *   - structure-affinity: a heap array of records with a hot pair of fields read in a loop run 8
 *     times and a cold pair written once: a heatmap, a layout and splitting advice;
 *   - rds-shape: lists (several instances, so the lifetime CDF has points) and binary trees, built,
 *     walked and freed;
 *   - value-pattern: a constant-valued load (`scale`) and array walks of strides 8 and 24 bytes;
 *   - object-relative: the heap arrays above, each walked with a fixed stride.
 * Lines marked MARK:name are looked up by the tests (grep), never by number.  Output is fixed.
 */
#include <stdio.h>
#include <stdlib.h>

enum { N = 2000, LISTS = 8, NODES = 20, TREES = 4, DEPTH = 5 };

struct rec {
	long hot1, hot2;
	long cold1, cold2;
};

struct node {
	struct node *next;
	long val;
};

struct tree {
	struct tree *left, *right;
	long val;
};

static volatile long scale = 3;
volatile long sink;

/* a[i] depends on a[i - 1]: a raw dependence carried at distance 1.  Volatile, or the optimizer
 * would carry a[i - 1] over in a register. */
static __attribute__((noinline)) long prefix(volatile long *a, int n)
{
	for (int i = 1; i < n; i++)
		a[i] = a[i - 1] + i;   /* MARK:carried */
	return a[n - 1];
}

/* Every iteration touches its own elements only: no carried dependence; `scale` never changes. */
static __attribute__((noinline)) void scaled(long *dst, const long *src, int n)
{
	for (int i = 0; i < n; i++)
		dst[i] = src[i] * scale;   /* MARK:independent */
}

static __attribute__((noinline)) long records(struct rec *r, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++) {
		r[i].hot1 = i;
		r[i].hot2 = 2 * i;
		r[i].cold1 = 3 * i;
		r[i].cold2 = 4 * i;
	}
	for (int k = 0; k < 8; k++)
		for (int i = 0; i < n; i++)
			s += r[i].hot1 + r[i].hot2;   /* MARK:hot */
	return s;
}

static __attribute__((noinline)) long lists(void)
{
	long s = 0;

	for (int l = 0; l < LISTS; l++) {
		struct node *head = NULL;

		for (int i = 0; i < NODES * (l + 1); i++) {
			struct node *x = malloc(sizeof(*x));   /* MARK:node */

			x->val = i;
			x->next = head;
			head = x;
		}
		for (int w = 0; w < 3; w++)
			for (struct node *p = head; p; p = p->next)
				s += p->val;   /* MARK:walk */
		while (head) {
			struct node *next = head->next;

			free(head);
			head = next;
		}
	}
	return s;
}

static __attribute__((noinline)) struct tree *build(int depth)
{
	struct tree *t;

	if (!depth)
		return NULL;
	t = malloc(sizeof(*t));   /* MARK:tree */
	t->val = depth;
	t->left = build(depth - 1);
	t->right = build(depth - 1);
	return t;
}

static long sum(const struct tree *t)
{
	return t ? t->val + sum(t->left) + sum(t->right) : 0;
}

static void drop(struct tree *t)
{
	if (t) {
		drop(t->left);
		drop(t->right);
		free(t);
	}
}

static __attribute__((noinline)) long trees(void)
{
	long s = 0;

	for (int k = 0; k < TREES; k++) {
		struct tree *t = build(DEPTH);

		s += sum(t);
		drop(t);
	}
	return s;
}

int main(void)
{
	long *a = malloc(N * sizeof(*a)), *b = malloc(N * sizeof(*b));
	struct rec *r = malloc(N * sizeof(*r));
	long total;

	a[0] = 0;
	total = prefix(a, N);
	scaled(b, a, N);
	total += b[N - 1] + records(r, N) + lists() + trees();
	sink = total;
	printf("every: %ld\n", total);
	free(a);
	free(b);
	free(r);
	return 0;
}
