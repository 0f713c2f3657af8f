/* The memory test's program (test_known.c, test_memory): touches 128 MiB, every word written and
 * read back, so that the dependence module's shadow covers all of it. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	size_t n = (argc > 1 ? strtoul(argv[1], NULL, 10) : 128) << 17;   /* MiB -> longs */
	long *a = malloc(n * sizeof(*a)), s = 0;

	if (!a)
		return 1;
	for (size_t i = 0; i < n; i++)
		a[i] = (long)i;
	for (size_t i = 0; i < n; i++)
		s += a[i];
	printf("%ld\n", s);
	free(a);
	return 0;
}
