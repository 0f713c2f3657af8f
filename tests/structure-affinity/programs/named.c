/* An array of records (a global) whose name is written and read char by char: those loops stride
 * 1 byte, which says nothing of the structure (StructSlim 4.2.2), so the size is the other loops'
 * stride, 32, the declared size, not 1.  The read loop is rotated (-O1): name[0] is read before
 * it, at the member's offset, name[1..] in it, from offset 5; the walk's field is the member it
 * is in, name.  Per element and repetition: id, v and w written once, name 11 bytes written and
 * 12 read (the NUL ends the loop); id and v read together 10 times, w alone 10 times.  Fields id
 * 0, name 4, v 16, w 24; costs 11000, 23000, 11000, 11000; A(id, v) = 20000 / 22000 = 10/11,
 * every other pair 0: split into {id, v}, {name} and {w}. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000

struct rec {
	int id;
	char name[12];
	double v, w;
};

static struct rec recs[N];   /* MARK:recs */

static __attribute__((noinline)) int run(char **argv)
{
	int len = argv[0] ? 11 : 0;   /* 11, unknown to the compiler: no unrolling */
	double s = 0;
	long h = 0;

	for (int i = 0; i < N; i++)
		recs[i].id = i;
	for (int i = 0; i < N; i++)
		recs[i].v = i * 0.5;
	for (int i = 0; i < N; i++)
		recs[i].w = len;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < len; j++)
			recs[i].name[j] = (char)('a' + (i + j) % 26);
	for (int r = 0; r < 10; r++)
		for (int i = 0; i < N; i++)
			s += recs[i].v * recs[i].id;
	for (int r = 0; r < 10; r++)
		for (int i = 0; i < N; i++)
			s += recs[i].w;
	for (int i = 0; i < N; i++)
		for (int j = 0; recs[i].name[j]; j++)
			h = h * 31 + recs[i].name[j];
	printf("%g %ld\n", s, h);
	return 0;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 1, rc = 0;

	for (int k = 0; k < reps && !rc; k++)
		rc = run(argv);
	return rc;
}
