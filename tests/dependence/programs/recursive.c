/* A loop in a recursive function, so that one loop has a frame at every depth of the recursion
 * and a dependence in the innermost loop has as many enclosing frames of that loop, all one row
 * (rule 6: counted once per destination access); and a three-deep nest beside it, whose outer
 * frames each have a row of their own.  For the oracle (oracle.sh): no answers written by hand. */
#include <stdio.h>
#include <stdlib.h>

long a[64], b[64], c[8][8][8];

__attribute__((noinline)) static void rec(int d)
{
	for (int i = 0; i < 2; i++) {
		if (d > 0)
			rec(d - 1);
		else
			for (int k = 0; k < 64; k++)
				a[k] += b[k] + i;
	}
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 5;
	long s = 0;

	for (int k = 0; k < 64; k++)
		b[k] = k;
	rec(depth);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			for (int k = 1; k < 8; k++)
				c[i][j][k] += c[i][j][k - 1] + a[k];
	for (int k = 0; k < 64; k++)
		s += a[k] + c[k % 8][k / 8][7];
	printf("%ld\n", s);
	return 0;
}
