/* Array-of-structs particle update: strided field accesses. */
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

struct particle {
	double x, y, z;
	double vx, vy, vz;
	double mass;
	int id, flags;
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, steps = argc > 2 ? atoi(argv[2]) : 3000;
	struct particle *p = malloc(n * sizeof(*p));
	double energy = 0;

	for (int i = 0; i < n; i++) {
		p[i].x = bench_next() % 1000;
		p[i].y = bench_next() % 1000;
		p[i].z = bench_next() % 1000;
		p[i].vx = p[i].vy = p[i].vz = 0;
		p[i].mass = 1 + bench_next() % 10;
		p[i].id = i;
		p[i].flags = 0;
	}
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < n; i++) {
			p[i].vx += (500 - p[i].x) / p[i].mass * 1e-3;
			p[i].vy += (500 - p[i].y) / p[i].mass * 1e-3;
			p[i].vz += (500 - p[i].z) / p[i].mass * 1e-3;
		}
		for (int i = 0; i < n; i++) {
			p[i].x += p[i].vx;
			p[i].y += p[i].vy;
			p[i].z += p[i].vz;
		}
	}
	for (int i = 0; i < n; i++)
		energy += 0.5 * p[i].mass * (p[i].vx * p[i].vx + p[i].vy * p[i].vy + p[i].vz * p[i].vz);
	free(p);
	printf("aos n %d steps %d energy %.6e\n", n, steps, energy);
	return 0;
}
