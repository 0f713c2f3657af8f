/* Two-dimensional Jacobi stencil: neighbouring loads, streaming stores. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1024, iters = argc > 2 ? atoi(argv[2]) : 1700;
	double *a = calloc((size_t)n * n, sizeof(double)), *b = calloc((size_t)n * n, sizeof(double));
	double sum = 0;

	for (int i = 0; i < n; i++)
		a[i] = b[i] = 100.0;  /* a hot top edge */
	for (int t = 0; t < iters; t++) {
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] +
						       a[i * n + j - 1] + a[i * n + j + 1]);
		double *tmp = a;
		a = b;
		b = tmp;
	}
	for (long i = 0; i < (long)n * n; i++)
		sum += a[i];
	free(a);
	free(b);
	printf("stencil n %d iters %d sum %.6f\n", n, iters, sum);
	return 0;
}
