/* Dense matrix product, i-k-j order. */
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1500;
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
	double *c = calloc((size_t)n * n, sizeof(double)), trace = 0;

	for (int i = 0; i < n * n; i++) {
		a[i] = (double)(bench_next() % 100) / 10;
		b[i] = (double)(bench_next() % 100) / 10;
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < n; k++) {
			double aik = a[i * n + k];
			for (int j = 0; j < n; j++)
				c[i * n + j] += aik * b[k * n + j];
		}
	for (int i = 0; i < n; i++)
		trace += c[i * n + i];
	free(a);
	free(b);
	free(c);
	printf("matmul n %d trace %.3f\n", n, trace);
	return 0;
}
