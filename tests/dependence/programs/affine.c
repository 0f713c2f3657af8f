/* Loops the pass summarizes (pass/README.md "Loop summaries": innermost, no call, every access
 * plain, once per iteration and affine), for the oracle (oracle.sh), whose reference expands the
 * summaries itself: no volatile here, unlike the other programs, which keep every access, and no
 * answers written by hand (test_known.c does not build it).  Most loops load and store one word
 * in an iteration, or read what the iteration before wrote, so that an expansion in the wrong
 * order or at the wrong addresses changes a dependence.  Steps of 1, 2, 8 and 16 bytes, negative
 * and zero; a loop left by break; an inner loop summarized inside an outer one; the kernels run
 * twice, so that dependences cross invocations. */
#include <stdio.h>
#include <stdlib.h>

struct pair {
	int x, y;
};

long a[512], b[512], total;
double m[16][32];
unsigned char bytes[600];
short halves[300];
struct pair pairs[200];

/* a[i] += a[i - 1]: a read-after-write carried at distance 1; within an iteration the load of a[i]
 * before its store (a write-after-read). */
__attribute__((noinline)) static void prefix(long *v, int n)
{
	for (int i = 1; i < n; i++)
		v[i] += v[i - 1];
}

/* *s += v[i] on one word (step 0) and a downward stream (step -8). */
__attribute__((noinline)) static void sum_down(long *s, const long *v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		*s += v[i];
}

/* Byte and halfword streams: several accesses share one 8-byte word, at distances 1 to 7. */
__attribute__((noinline)) static void narrow(unsigned char *c, short *h, int n)
{
	for (int i = 2; i < n; i++)
		c[i] = (unsigned char)(c[i - 2] + h[i]);
}

/* Struct fields at a step of 8 bytes, 4-byte accesses. */
__attribute__((noinline)) static void fields(struct pair *p, int n)
{
	for (int i = 0; i < n; i++)
		p[i].x = p[i].y + p[i].x;
}

/* The first index holding key, or n: left by break after the load. */
__attribute__((noinline)) static int find(const long *v, long key, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i] == key)
			break;
	return i;
}

/* A nest: the inner loop summarized once per row, m[r][c] += m[r - 1][c], carried by the outer. */
__attribute__((noinline)) static void rows(double (*mat)[32], int nr, int nc)
{
	for (int r = 1; r < nr; r++)
		for (int c = 0; c < nc; c++)
			mat[r][c] += mat[r - 1][c] * 0.5;
}

/* Two streams, one read and one written, 16 bytes apart each iteration. */
__attribute__((noinline)) static void stride2(long *dst, const long *src, int n)
{
	for (int i = 0; i < n; i++)
		dst[2 * i] = src[2 * i + 1] + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;

	if (n < 4 || n > 200)
		n = 200;
	for (int i = 0; i < 2 * n; i++)
		a[i] = b[i] = i;
	for (int i = 0; i < 3 * n; i++)
		bytes[i] = (unsigned char)i;
	for (int i = 0; i < n; i++) {
		halves[i] = (short)(i * 3);
		pairs[i].y = i;
	}
	for (int k = 0; k < 2; k++) {
		prefix(a, n);
		sum_down(&total, a, n);
		sum_down(&a[n / 2], a, n);   /* the sum inside the stream it reads */
		narrow(bytes, halves, n);
		fields(pairs, n);
		stride2(b, b, n / 2);
		rows(m, 16, 32);
	}
	printf("%ld %ld %d %d %d %g %d\n", a[n - 1], total, bytes[n - 1], pairs[n - 1].x,
	       find(a, a[n / 3], n), m[15][31], find(b, -1, n));
	return 0;
}
