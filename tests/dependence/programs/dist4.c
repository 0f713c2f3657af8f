/* a[i + 4] = a[i]: a read-after-write carried at distance 4, and nothing else in the loop. */
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

long a[1000];

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;

	for (int i = 0; i < n; i++) /* MARK:loop */
		V(a[i + 4]) = V(a[i]); /* MARK:body */
	printf("%ld\n", a[n]);
	return 0;
}
