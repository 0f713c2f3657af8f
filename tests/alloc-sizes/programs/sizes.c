/* Allocations whose sizes are known by construction, and so is alloc-sizes' profile of them
 * (alloc_sizes.sh).  The pointers go to a volatile sink so that no allocation is optimized away. */
#include <stdlib.h>

void *volatile sink[32];

int main(void)
{
	for (int i = 0; i < 10; i++)
		sink[i] = malloc(24);                   /* 10 of 24 bytes: log2 {16: 10} */
	for (int i = 0; i < 5; i++)
		sink[10 + i] = malloc(1000 + 4 * i);    /* 1000 to 1016: {512: 5} */
	sink[20] = malloc(4096);                        /* {4096: 1} */
	sink[20] = realloc(sink[20], 100);              /* the realloc's site: {64: 1} */
	for (int i = 0; i < 32; i++)
		free(sink[i]);
	return 0;
}
