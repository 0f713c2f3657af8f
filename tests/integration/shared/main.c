/* Calls the library: 64 elements allocated and summed there; one allocation of its own. */
#include <stdio.h>
#include <stdlib.h>

long lib_sum(const long *a, int n);
long *lib_alloc(int n);

int main(void)
{
	long *a = lib_alloc(64);
	int *own = malloc(4 * sizeof(*own));

	if (!a || !own)
		return 1;
	for (int i = 0; i < 4; i++)
		own[i] = i;
	printf("sum %ld own %d\n", lib_sum(a, 64), own[3]);
	free(own);
	free(a);
	return 0;
}
