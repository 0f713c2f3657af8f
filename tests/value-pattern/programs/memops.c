/*
 * memops.c: memory intrinsics whose lengths are known only at run time, for value-pattern's memops
 * table.  The memcpy (MARK:copy) copies argc * 16 bytes: always 16 when run without arguments,
 * 1000 times; the memset (MARK:fill) clears 8 bytes 300 times and 24 bytes 100 times; the memmove
 * (MARK:move) moves argc + 2 bytes 50 times.  Each length goes through a volatile so the optimizer
 * cannot see it.
 */
#include <stdio.h>
#include <string.h>

static char src[256], dst[256];
volatile size_t len_unit = 16, small = 8, large = 24;

int main(int argc, char **argv)
{
	size_t n = (size_t)argc * len_unit;
	unsigned long sum = 0;

	for (int i = 0; i < 256; i++)
		src[i] = (char)i;
	for (int i = 0; i < 1000; i++) {
		memcpy(dst + i % 64, src + i % 32, n);   /* MARK:copy */
		sum += (unsigned char)dst[i % 64];
	}
	for (int i = 0; i < 400; i++) {
		memset(dst, i, i % 4 ? small : large);   /* MARK:fill */
		sum += (unsigned char)dst[7];
	}
	for (int i = 0; i < 50; i++) {
		memmove(dst + 1, dst, (size_t)argc + 2);   /* MARK:move */
		sum += (unsigned char)dst[2];
	}
	printf("%lu\n", sum);
	return 0;
}
