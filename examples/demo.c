/*
 * The quick-start example: a few memory behaviours whose profile is easy to predict.
 *   - `scale` is loaded on every iteration and never changes: a constant load;
 *   - `samples` is walked with a stride of 8 bytes, `points[].y` with a stride of 24;
 *   - `table` is indexed by data: its loads take many values at irregular addresses.
 */
#include <stdio.h>
#include <stdlib.h>

struct point {
	double x, y, z;
};

static volatile long scale = 42;

int main(void)
{
	enum { N = 100000 };
	long *samples = malloc(N * sizeof(*samples));
	struct point *points = malloc(N * sizeof(*points));
	unsigned table[256];
	long sum = 0;

	for (unsigned i = 0; i < 256; i++)
		table[i] = i * 2654435761u;
	for (long i = 0; i < N; i++) {
		samples[i] = i * scale;
		points[i].y = (double)i;
	}
	for (long i = 0; i < N; i++)
		sum += samples[i] + (long)points[i].y + table[(i * 7) & 255];
	printf("demo: sum = %ld\n", sum);
	free(samples);
	free(points);
	return 0;
}
