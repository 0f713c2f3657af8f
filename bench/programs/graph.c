/* Breadth-first search over a random graph stored as adjacency lists. */
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

struct edge {
	struct edge *next;
	int to;
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000, degree = 6, rounds = argc > 2 ? atoi(argv[2]) : 55;
	struct edge **adj = calloc(n, sizeof(*adj));
	int *dist = malloc(n * sizeof(*dist)), *queue = malloc(n * sizeof(*queue));
	long total = 0;

	for (int v = 0; v < n; v++)
		for (int d = 0; d < degree; d++) {
			struct edge *e = malloc(sizeof(*e));
			e->to = bench_next() % n;
			e->next = adj[v];
			adj[v] = e;
		}
	for (int r = 0; r < rounds; r++) {
		int head = 0, tail = 0, src = bench_next() % n;
		for (int v = 0; v < n; v++)
			dist[v] = -1;
		dist[src] = 0;
		queue[tail++] = src;
		while (head < tail) {
			int v = queue[head++];
			for (struct edge *e = adj[v]; e; e = e->next)
				if (dist[e->to] < 0) {
					dist[e->to] = dist[v] + 1;
					queue[tail++] = e->to;
				}
		}
		for (int v = 0; v < n; v++)
			total += dist[v];
	}
	for (int v = 0; v < n; v++)
		for (struct edge *e = adj[v], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	free(adj);
	free(dist);
	free(queue);
	printf("graph n %d rounds %d checksum %ld\n", n, rounds, total);
	return 0;
}
