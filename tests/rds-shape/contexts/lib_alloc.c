/*
 * Allocation contexts and code built without the pass (tests/rds-shape/contexts.sh): f, which main
 * calls, allocates with malloc (a site, with main's call as its context) and with the C library's
 * strdup (site 0: its callers are not where it allocated, so no context).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *f(int i)
{
	char *a = malloc(8);
	char *b = strdup("hello");

	a[0] = b[i];
	free(b);
	return a;
}

int main(void)
{
	char *x = f(1);

	printf("%c\n", x[0]);
	return 0;
}
