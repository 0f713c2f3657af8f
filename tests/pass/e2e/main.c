/* The profiled program of the end-to-end test (with lib.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"

int table[64];
static long total;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	char buf[32];

	for (int i = 0; i < 64; i++)
		table[i] = i * i;
	struct node *h = list_build(n);
	total = list_sum(h);
	list_free(h);
	memcpy(buf, "mnemo-", 7);
	memset(buf + 6, 'x', 8);
	buf[14] = 0;
	total += vla_sum(n % 50 + 1) + table[n % 64] + (long)strlen(buf) + bump(3);
	printf("total=%ld buf=%s\n", total, buf);
	return 0;
}
