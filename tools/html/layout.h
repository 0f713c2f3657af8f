/*
 * Graph layout for the HTML report: a small directed graph (nodes with an id and a label, edges
 * with a label and a kind) laid out by Graphviz's dot, in process (libgvc), so that the page only
 * draws what dot placed.  Coordinates come back in points with the origin at the top left and y
 * growing down, as SVG wants them.  Graphviz's own messages are kept off stderr: a graph it
 * cannot lay out is reported by the return value, and the page says the picture was skipped.
 */
#ifndef MNEMO_HTML_LAYOUT_H
#define MNEMO_HTML_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

struct layout_node {
	char *id;                   /* unique in the graph: a site id "6", or a chain "26<49" */
	char *label;
	double x, y, w, h;          /* centre, and size; filled by layout_run() */
};

struct layout_edge {
	size_t from, to;            /* indices into nodes */
	char *label;
	const char *kind;           /* "raw", "forward", ...: a constant string */
	double *points;             /* x0, y0, x1, y1, ...: dot's cubic B-spline control points */
	size_t npoints;             /* points, not doubles: 1 + 3k, or 0 when dot drew none */
	bool arrow;                 /* ax, ay: the arrowhead's tip */
	double ax, ay;
	bool has_label;             /* lx, ly: the label's centre */
	double lx, ly;
};

struct layout {
	struct layout_node *nodes;
	size_t nnodes, nodes_cap;
	struct layout_edge *edges;
	size_t nedges, edges_cap;
	double width, height;       /* the drawing's bounding box; filled by layout_run() */
};

/* The node of id, added with label when new; returns its index.  The strings are copied. */
size_t layout_node(struct layout *g, const char *id, const char *label);

/* Adds an edge between two nodes of layout_node(); label is copied, kind is not. */
void layout_edge(struct layout *g, size_t from, size_t to, const char *label, const char *kind);

/*
 * Lays the graph out with dot and fills the coordinates of its nodes and edges.  Returns 0, or
 * -1 when Graphviz failed (nothing is filled then; the graph may still be freed).
 */
int layout_run(struct layout *g);

/* Frees what the graph holds and empties it for reuse. */
void layout_clear(struct layout *g);

/* Frees the Graphviz context layout_run() made, if any.  Call once, at the end. */
void layout_done(void);

#endif
