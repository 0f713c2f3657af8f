/* A sum through a pointer: *s += a[i].  On the one address *s, a read-after-write and a
 * write-after-write carried at distance 1 every iteration, and a write-after-read inside each. */
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

long a[1000], total;

__attribute__((noinline)) static void sum(long *s, long *v, int n)
{
	for (int i = 0; i < n; i++) /* MARK:loop */
		V(*s) = V(*s) + V(v[i]); /* MARK:body */
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;

	V(total) = 0; /* MARK:zero */
	sum(&total, a, n);
	printf("%ld\n", V(total)); /* MARK:print */
	return 0;
}
