/* abort(): the profile is written, marked incomplete, and the program still dies of SIGABRT. */
#include <stdio.h>
#include <stdlib.h>

volatile int seen;

int main(void)
{
	for (int i = 0; i < 100; i++)
		seen = i;                        /* MARK:store */
	printf("about to abort\n");
	fflush(stdout);
	abort();
}
