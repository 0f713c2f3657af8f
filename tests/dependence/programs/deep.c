/* Calls two deep inside a loop, and a loop inside a called function: a dependence is reported
 * through the outermost call of each loop's body (main's loop: via outer; middle's loop: via leaf),
 * carried by the loop whose earlier iteration holds the source. */
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

long x;

__attribute__((noinline)) static void leaf(void) /* MARK:leaf */
{
	V(x) = V(x) + 1; /* MARK:leaf_body */
}

__attribute__((noinline)) static void middle(int m)
{
	for (int j = 0; j < m; j++) /* MARK:mloop */
		leaf();
}

__attribute__((noinline)) static void outer(int m) /* MARK:outer */
{
	middle(m);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	for (int i = 0; i < n; i++) /* MARK:loop */
		outer(3);
	printf("%ld\n", x);
	return 0;
}
