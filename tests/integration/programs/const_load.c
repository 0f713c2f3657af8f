/* A load that always reads 42, and one whose value varies.  Lines marked MARK are found by the test. */
#include <stdio.h>

volatile int answer = 42;
volatile int counter;

int main(void)
{
	long sum = 0;

	/* One instruction per source access: no unrolled copies with a doubled stride. */
#pragma clang loop unroll(disable) vectorize(disable)
	for (int i = 0; i < 1000; i++) {
		sum += answer;                   /* MARK:const */
		counter = i;
		sum += counter;                  /* MARK:varies */
	}
	printf("sum %ld\n", sum);
	return 0;
}
