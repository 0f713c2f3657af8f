/* Loops around recursive calls, for the oracle (oracle.sh; no answers written by hand): frames of
 * one loop at every depth, deeper than 8 (a stack searched, not walked), all one row per access
 * (rule 6); and a chain of eight functions, each calling the next from its own loop, whose frames
 * give more distinct rows below the innermost than report_dup() keeps (BELOW_MAX).  The leaves
 * read and write through an index array, so that their accesses are not summarized. */
#include <stdio.h>
#include <stdlib.h>

long a[256];
int idx[16];

__attribute__((noinline)) static void leaf(int base)
{
	for (int k = 0; k < 16; k++)
		a[(idx[k] + base) & 255] += k;
}

__attribute__((noinline)) static void rec(int d, int base)
{
	for (int i = 0; i < 2; i++) {
		if (d > 0)
			rec(d - 1, base * 2 + i);
		else
			leaf(base);
	}
}

#define LINK(f, next)                                                                          \
	__attribute__((noinline)) static void f(int d, int base)                               \
	{                                                                                      \
		for (int i = 0; i <= d; i++)                                                   \
			next(d, base + i);                                                     \
	}

static void chain1(int d, int base);

__attribute__((noinline)) static void chain_leaf(int d, int base)
{
	if (d > 0)
		chain1(d - 1, base * 3);
	else
		leaf(base);
}

LINK(chain8, chain_leaf)
LINK(chain7, chain8)
LINK(chain6, chain7)
LINK(chain5, chain6)
LINK(chain4, chain5)
LINK(chain3, chain4)
LINK(chain2, chain3)
LINK(chain1, chain2)

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 10;
	long s = 0;

	for (int k = 0; k < 16; k++)
		idx[k] = (k * 37) & 255;
	rec(depth, 1);
	chain1(1, 2);
	for (int k = 0; k < 256; k++)
		s += a[k];
	printf("%ld\n", s);
	return 0;
}
