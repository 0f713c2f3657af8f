#include <stdio.h>
#include <stdlib.h>
#include "calc.h"

int main(void)
{
	long *v = malloc(100 * sizeof(*v));
	for (int i = 0; i < 100; i++)
		v[i] = i + 1;
	printf("%ld %ld\n", add_all(v, 100), mul_all(v, 100));
	free(v);
	return 0;
}
