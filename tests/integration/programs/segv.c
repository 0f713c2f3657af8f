/* A null dereference: the profile is written, marked incomplete, and the program dies of SIGSEGV. */
#include <stdio.h>

volatile int seen;
int *volatile nowhere;

int main(void)
{
	for (int i = 0; i < 100; i++)
		seen = i;                        /* MARK:store */
	printf("about to crash\n");
	fflush(stdout);
	return *nowhere;
}
