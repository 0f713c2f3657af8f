/* The memcpy test (tests/pass/use/use.sh memcpy): copy()'s length is known only at run time
 * (from argc) and is always 16 in the profiled run, 5000 times, well over PGOMemOPSizeOpt's count
 * threshold (1000).  Rebuilt with the profile, the optimized IR has the size-16 case. */
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) void copy(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
}

int main(int argc, char **argv)
{
	char src[64], dst[64];
	size_t n = argc > 5 ? 32 : 16;
	unsigned sum = 0;

	for (int i = 0; i < 64; i++)
		src[i] = (char)i;
	for (int k = 0; k < 5000; k++) {
		copy(dst, src + (k & 7), n);
		sum += (unsigned char)dst[3];
	}
	printf("%u\n", sum);
	return 0;
}
