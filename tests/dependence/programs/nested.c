/* b[i][j] = b[i - 1][j] + 1: carried by the outer loop at distance 1; the inner loop sees no
 * dependence (the source ran in an earlier invocation of it). */
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

long b[10][10];

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	for (int i = 1; i < n; i++) /* MARK:outer */
		for (int j = 0; j < 10; j++) /* MARK:inner */
			V(b[i][j]) = V(b[i - 1][j]) + 1; /* MARK:body */
	printf("%ld\n", b[n - 1][9]);
	return 0;
}
