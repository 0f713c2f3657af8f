/*
 * Link-time specialization probe.  loop_only() has a loop, a call and an allocation but no memory
 * access the optimizer keeps; store_only() stores.  Built for value-pattern, loop_only() must contain
 * no queue write at all; built for a module set using function, loop and heap events, it must.
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

int main(int argc, char **argv)
{
	long r = loop_only(argc * 1000);
	store_only(r);
	printf("%ld\n", r);
	return 0;
}
