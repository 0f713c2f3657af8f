/* Histogram of pseudo-random data: data-dependent increments. */
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 500, nbins = 1024;
	unsigned *data = malloc(n * sizeof(*data));
	unsigned long *bins = calloc(nbins, sizeof(*bins)), checksum = 0;

	for (long i = 0; i < n; i++)
		data[i] = (unsigned)(bench_next() % 100000);
	for (int r = 0; r < rounds; r++)
		for (long i = 0; i < n; i++)
			bins[(data[i] * (unsigned)(r + 1)) % nbins]++;
	for (int b = 0; b < nbins; b++)
		checksum = checksum * 131 + bins[b];
	free(data);
	free(bins);
	printf("histogram n %ld rounds %d checksum %lu\n", n, rounds, checksum);
	return 0;
}
