/*
 * Known answers for value-pattern's addresses (tests/value-pattern/pointers.sh): the load marked
 * POINTER reads a global pointer that never changes, so its one value is the address of
 * target[1], which the program prints; the load marked INTEGER reads a global integer that never
 * changes, 42.  Both are volatile so that -O1 keeps them in the loop.  The address differs from
 * build to build and run to run: it is printed only with an argument ("address"), so that the
 * output without one is the same in every build (tests/summaries/identity.sh compares it).
 */
#include <stdio.h>

static int target[4];
int *volatile gp = &target[1];
volatile long gi = 42;

int main(int argc, char **argv)
{
	long sum = 0;

	for (int i = 0; i < 100; i++) {
		int *p = gp;            /* POINTER */
		sum += gi;              /* INTEGER */
		*p += i;
	}
	if (argc > 1)
		printf("%p ", (void *)&target[1]);
	printf("%ld %d\n", sum, target[1]);
	return 0;
}
