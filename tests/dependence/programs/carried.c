/* a[i] = a[i - 1] + 1: a read-after-write carried by the loop at distance 1, and nothing else in
 * the loop.  Accesses are volatile so that the optimizer keeps every one of them in memory (it
 * would otherwise carry a[i - 1] over in a register). */
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

long a[1000];

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;

	for (int i = 1; i < n; i++) /* MARK:loop */
		V(a[i]) = V(a[i - 1]) + 1; /* MARK:body */
	printf("%ld\n", V(a[n - 1])); /* MARK:print */
	return 0;
}
