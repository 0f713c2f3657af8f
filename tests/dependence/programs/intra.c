/* a[i] = a[i] * 2: within the loop only a write-after-read inside each iteration (the loads' values
 * come from the initializing loop, another loop: loop 0).  Then b[i] = i; s += b[i]: a
 * read-after-write inside each iteration. */
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

long a[1000], b[1000];

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	long s = 0;

	for (int i = 0; i < n; i++) /* MARK:init */
		V(a[i]) = i; /* MARK:init_body */
	for (int i = 0; i < n; i++) /* MARK:twice */
		V(a[i]) = V(a[i]) * 2; /* MARK:twice_body */
	for (int i = 0; i < n; i++) { /* MARK:use */
		V(b[i]) = i; /* MARK:use_store */
		s += V(b[i]); /* MARK:use_load */
	}
	printf("%ld\n", s);
	return 0;
}
