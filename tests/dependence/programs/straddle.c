/* Accesses across a 4 KiB page boundary, on the heap and on the stack: an 8-byte store with 4
 * bytes on each page, a 4-byte load of the second page's part only, and a 16-byte load with one
 * word on each page.  Every word an access touches is tracked, each by the worker that owns its
 * page, and an access counts once in each row, however many of its words found it (README rules
 * 1 and 6): the same profile with -j 1, 2 and 4, wherever the stack's pages fall. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct __attribute__((packed)) u32 { uint32_t v; };
struct __attribute__((packed)) u64 { uint64_t v; };
struct __attribute__((packed)) u128 { __uint128_t v; };

/* The first page boundary at least 16 bytes into buf. */
static char *boundary(char *buf)
{
	return (char *)(((uintptr_t)buf + 4096 + 16) & ~(uintptr_t)4095);
}

__attribute__((noinline)) static uint64_t kernel(char *b, int n)
{
	uint64_t sum = 0;

	for (int i = 0; i < n; i++) { /* MARK:loop */
		((volatile struct u64 *)(b - 4))->v = (uint64_t)i; /* MARK:st8 */
		sum += ((volatile struct u32 *)b)->v; /* MARK:ld4 */
		sum += (uint64_t)((volatile struct u128 *)(b - 8))->v; /* MARK:ld16 */
	}
	return sum;
}

__attribute__((noinline)) static uint64_t on_stack(int n)
{
	char buf[3 * 4096];

	return kernel(boundary(buf), n);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	char *heap = malloc(3 * 4096);
	uint64_t sum;

	if (!heap)
		return 1;
	sum = kernel(boundary(heap), n);
	sum += on_stack(n);
	printf("%llu\n", (unsigned long long)sum);
	free(heap);
	return 0;
}
