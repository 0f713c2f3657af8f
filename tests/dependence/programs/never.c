/* A loop that never runs (n is 0 unless an argument says otherwise) and one that runs without any
 * dependence: the profile tells them apart by their invocations. */
#include <stdio.h>
#include <stdlib.h>

#define V(x) (*(volatile __typeof__(x) *)&(x))

long a[1000];

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;

	for (int i = 0; i < n; i++) /* MARK:never */
		V(a[i]) = i;
	for (int i = 0; i < 10; i++) /* MARK:ran */
		V(a[i + 100]) = i;
	printf("%ld\n", a[0]);
	return 0;
}
