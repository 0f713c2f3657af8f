/* Dependences through calls inside the loop: bump() reads and writes x every iteration (carried,
 * src_via and dst_via bump); the loop body writes y[i] and get() reads it back (intra-iteration,
 * dst_via get). */
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

long x, y[1000];

__attribute__((noinline)) static void bump(long *p) /* MARK:bump */
{
	V(*p) = V(*p) + 1; /* MARK:bump_body */
}

__attribute__((noinline)) static long get(long *p) /* MARK:get */
{
	return V(*p); /* MARK:get_body */
}

int main(int argc, char **argv) /* MARK:main */
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	long s = 0;

	for (int i = 0; i < n; i++) { /* MARK:loop */
		bump(&x);
		V(y[i]) = i; /* MARK:put */
		s += get(&y[i]);
	}
	printf("%ld %ld\n", s, x);
	return 0;
}
