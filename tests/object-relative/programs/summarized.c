/* Loops the pass summarizes (pass/README.md "Loop summaries": innermost, no call, every access
 * plain, once per iteration and affine) over heap and global objects, for lossless.sh, whose
 * reference expands the summaries itself: no volatile here.  Heap arrays of scalars and of
 * structs and a global, steps of 4, 8, 12 and -8 bytes and 0, a loop left by break, an inner
 * loop summarized inside an outer one, several objects of one allocation site, and a sum kept
 * inside the stream it reads.  No answers written by hand (test_known.c does not build it). */
#include <stdio.h>
#include <stdlib.h>

struct rec {
	int id, weight, score;    /* 12 bytes: a step of 12 */
};

long table[64], acc;

__attribute__((noinline)) static void fill(long *v, int n, long x)
{
	for (int i = 0; i < n; i++)
		v[i] = x + i;
}

__attribute__((noinline)) static void scores(struct rec *r, int n)
{
	for (int i = 0; i < n; i++)
		r[i].score = r[i].weight * 3 + r[i].id;
}

/* *s += v[i] downwards: one address (step 0) and a step of -8. */
__attribute__((noinline)) static void sum_down(long *s, const long *v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		*s += v[i];
}

__attribute__((noinline)) static int find(const int *v, int key, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i] == key)
			break;
	return i;
}

__attribute__((noinline)) static void grid(int **rows, int nr, int nc)
{
	for (int r = 1; r < nr; r++)
		for (int c = 0; c < nc; c++)
			rows[r][c] += rows[r - 1][c];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40;
	long *v[3];
	struct rec *r;
	int *w, *rows[8];

	if (n < 4 || n > 64)
		n = 40;
	for (int k = 0; k < 3; k++)
		v[k] = malloc(n * sizeof(long));
	r = malloc(n * sizeof(*r));
	w = malloc(n * sizeof(*w));
	for (int i = 0; i < 8; i++)
		rows[i] = calloc(n, sizeof(int));
	if (!v[0] || !v[1] || !v[2] || !r || !w)
		return 1;
	for (int i = 0; i < n; i++) {
		r[i].id = i;
		r[i].weight = n - i;
		w[i] = i * i;
		rows[0][i] = i;
	}
	for (int k = 0; k < 3; k++)
		fill(v[k], n, 10 * k);
	fill(table, 64, 7);
	scores(r, n);
	sum_down(&acc, v[1], n);
	sum_down(&v[2][n / 2], v[2], n);   /* the sum inside the stream it reads */
	sum_down(&acc, table, 64);
	grid(rows, 8, n);
	printf("%ld %d %d %d\n", acc, r[n - 1].score, find(w, 25, n), rows[7][n - 1]);
	for (int k = 0; k < 3; k++)
		free(v[k]);
	for (int i = 0; i < 8; i++)
		free(rows[i]);
	free(r);
	free(w);
	return 0;
}
