/*
 * Link-time specialization probe.  loop_only() has a loop, a call and an allocation but no memory
 * access the optimizer keeps; store_only() stores.  Built for value-pattern, loop_only() must contain
 * no queue write at all; built for a module set using function, loop and heap events, it must.
 * ints_only() loads and stores integers only, ptr_store() stores a pointer: built for rds-shape
 * (`accesses: pointer`), the first must contain no queue write and the second must.
 */
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) long loop_only(long n)
{
	long x = 1;
	void *p = malloc(16);

	for (long i = 0; i < n; i++)
		x = x * 3 + i;
	free(p);
	return x;
}

__attribute__((noinline)) void store_only(long v)
{
	sink = v;
}

__attribute__((noinline)) void ints_only(long *a, long n)
{
	for (long i = 1; i < n; i++)
		a[i] = a[i - 1] * 3 + a[i];
}

__attribute__((noinline)) void ptr_store(void **slot, void *p)
{
	*slot = p;
}

int main(int argc, char **argv)
{
	long r = loop_only(argc * 1000), *a = calloc(64, sizeof(*a));
	void **slot = malloc(sizeof(*slot));

	store_only(r);
	ints_only(a, 64);
	ptr_store(slot, a);
	printf("%ld %ld\n", r, ((long *)*slot)[63]);
	free(slot);
	free(a);
	return 0;
}
