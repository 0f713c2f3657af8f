/* exit(3) from a nested function: the profile is written and the status kept. */
#include <stdio.h>
#include <stdlib.h>

volatile int seen;

__attribute__((noinline)) static void leave(int depth)
{
	seen = depth;                            /* MARK:store */
	if (depth == 0) {
		printf("leaving\n");
		exit(3);
	}
	leave(depth - 1);
}

int main(void)
{
	leave(5);
	return 0;
}
