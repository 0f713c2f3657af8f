/* A shared library for shared_lib.sh: a loop over an array (64 loads of one site) and a call that
 * allocates (one heap object of 8 * n bytes), exported through a version script. */
#include <stdlib.h>

static long twice(long v)
{
	return 2 * v;
}

long lib_sum(const long *a, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += a[i];
	return twice(s);
}

long *lib_alloc(int n)
{
	long *p = malloc((size_t)n * sizeof(*p));

	for (int i = 0; p && i < n; i++)
		p[i] = i;
	return p;
}
