/* Two separate graphs with cycles, each of V vertices on a ring with chords, as adjacency lists:
 * a vertex points to its first edge record, an edge record to its target vertex and the next
 * record.  The vertex and edge allocation sites point to each other, so they form one SCC: one
 * RDS type of two sites, and, as nothing links the two graphs, two instances, each of V vertices
 * and 2V edge records.  The first vertex -> edge pointers wait as pending edges until the first
 * edge -> vertex pointer closes the cycle of sites (the paper's Figure 3). */
#include <stdio.h>
#include <stdlib.h>

struct vertex;

struct edge {
	struct vertex *to;
	struct edge *next;
};

struct vertex {
	struct edge *adj;
	long id;
	int mark;
};

volatile long sink;

__attribute__((noinline)) static void connect(struct vertex *u, struct vertex *w)
{
	struct edge *e = malloc(sizeof(*e));   /* MARK:edge */

	e->next = u->adj;
	u->adj = e;
	e->to = w;
}

__attribute__((noinline)) static struct vertex **make_graph(int v)
{
	struct vertex **vs = malloc(v * sizeof(*vs));

	for (int i = 0; i < v; i++) {
		vs[i] = malloc(sizeof(struct vertex));   /* MARK:vertex */
		vs[i]->adj = NULL;
		vs[i]->id = i;
		vs[i]->mark = 0;
	}
	for (int i = 0; i < v; i++) {
		connect(vs[i], vs[(i + 1) % v]);       /* the ring */
		connect(vs[i], vs[(i + v / 2) % v]);   /* a chord */
	}
	return vs;
}

/* Depth-first from u, marking vertices. */
static long dfs(struct vertex *u, int mark)
{
	long s = u->id;

	u->mark = mark;
	for (struct edge *e = u->adj; e; e = e->next)
		if (e->to->mark != mark)
			s += dfs(e->to, mark);
	return s;
}

int main(int argc, char **argv)
{
	int v = argc > 1 ? atoi(argv[1]) : 10;
	struct vertex **g1 = make_graph(v), **g2 = make_graph(v);

	sink = dfs(g1[0], 1) + dfs(g2[0], 1);
	printf("%ld\n", sink);
	return 0;
}
