/* An array walked with a stride of 8 bytes, and a field of 24-byte structs walked with stride 24. */
#include <stdio.h>
#include <stdlib.h>

struct triple {
	long a, b, c;
};

__attribute__((noinline)) long walk8(volatile long *v, int n)
{
	long s = 0;
	/* One instruction per source access: no unrolled copies with a doubled stride. */
#pragma clang loop unroll(disable) vectorize(disable)
	for (int i = 0; i < n; i++)
		s += v[i];                       /* MARK:stride8 */
	return s;
}

__attribute__((noinline)) long walk24(volatile struct triple *t, int n)
{
	long s = 0;
	/* One instruction per source access: no unrolled copies with a doubled stride. */
#pragma clang loop unroll(disable) vectorize(disable)
	for (int i = 0; i < n; i++)
		s += t[i].b;                     /* MARK:stride24 */
	return s;
}

int main(void)
{
	enum { N = 5000 };
	long *v = calloc(N, sizeof(*v));
	struct triple *t = calloc(N, sizeof(*t));

	for (int i = 0; i < N; i++) {
		v[i] = i;
		t[i].b = 2 * i;
	}
	printf("%ld %ld\n", walk8(v, N), walk24(t, N));
	free(v);
	free(t);
	return 0;
}
