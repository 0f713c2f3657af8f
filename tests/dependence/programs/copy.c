/* a[i] = b[i], twice: no dependence between iterations, nor within one.  What the copies read
 * and overwrite was written by other loop invocations: loop 0. */
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

long a[1000], b[1000];

__attribute__((noinline)) static void copy(int n)
{
	for (int i = 0; i < n; i++) /* MARK:loop */
		V(a[i]) = V(b[i]); /* MARK:body */
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;

	for (int i = 0; i < n; i++) /* MARK:init */
		V(b[i]) = i; /* MARK:init_body */
	copy(n);
	copy(n);
	printf("%ld\n", a[n - 1]);
	return 0;
}
