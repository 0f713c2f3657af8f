/*
 * Graph layout with Graphviz's dot, in process (libgvc): see layout.h.  The graph is built in our
 * own arrays first and handed to Graphviz only in layout_run(), so that a failed layout leaves
 * nothing half-made to clean up but the Graphviz graph itself.
 */
#include <stdlib.h>
#include <string.h>

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "layout.h"
#include "mnemo_internal.h"

static GVC_t *gvc;   /* made on first use: it loads Graphviz's plugin list */

/*
 * Edges up to which labels are laid out with the graph (as dot's `label`, a node of its own in
 * the layout); beyond, they are placed afterwards (`xlabel`).  Label nodes make dot's cost grow
 * steeply: a random graph of 20 sites and 80 edges took 90 ms with them, 30 ms without, and a
 * dense graph is not read label by label anyway.
 */
#define LABEL_NODES_MAX 40

/*
 * Under LeakSanitizer (MNEMO_SANITIZE builds), what Graphviz 2.42 and fontconfig (loaded by its
 * text layout plugin) never free is theirs, not ours: the text of Graphviz's plugin list, and
 * memory of each dot layout with edge xlabels.  Ignoring their allocations keeps our own leaks
 * failing the tests.  In other builds nothing calls this.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libgvc.so\nleak:libcgraph.so\nleak:libfontconfig.so\n";
}

/* ... and quietly: a report's stderr is compared by tests. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}

/* Graphviz prints warnings and errors on stderr; the report's stderr is for its own. */
static int quiet(char *message)
{
	(void)message;
	return 0;
}

size_t layout_node(struct layout *g, const char *id, const char *label)
{
	/* Linear: the graphs drawn have at most a few hundred nodes (html.c's limits). */
	for (size_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].id, id))
			return i;
	if (g->nnodes == g->nodes_cap) {
		g->nodes_cap = g->nodes_cap ? 2 * g->nodes_cap : 16;
		g->nodes = xrealloc(g->nodes, g->nodes_cap * sizeof(*g->nodes));
	}
	g->nodes[g->nnodes] = (struct layout_node){ .id = xstrdup(id), .label = xstrdup(label) };
	return g->nnodes++;
}

void layout_edge(struct layout *g, size_t from, size_t to, const char *label, const char *kind)
{
	if (g->nedges == g->edges_cap) {
		g->edges_cap = g->edges_cap ? 2 * g->edges_cap : 16;
		g->edges = xrealloc(g->edges, g->edges_cap * sizeof(*g->edges));
	}
	g->edges[g->nedges++] = (struct layout_edge){
		.from = from, .to = to, .label = xstrdup(label), .kind = kind };
}

/* label with every backslash doubled: dot reads \N, \n, \l ... as escapes. */
static char *dot_label(const char *label)
{
	char *s = xmalloc(2 * strlen(label) + 1), *o = s;

	for (; *label; label++) {
		if (*label == '\\')
			*o++ = '\\';
		*o++ = *label;
	}
	*o = '\0';
	return s;
}

static void set_label(void *obj, const char *attr, const char *label)
{
	char *s = dot_label(label);

	agsafeset(obj, (char *)attr, s, "");
	free(s);
}

/* The Graphviz graph of g; its nodes and edges in n and e, in g's order. */
static Agraph_t *build(const struct layout *g, Agnode_t **n, Agedge_t **e)
{
	Agraph_t *G = agopen("g", Agdirected, NULL);
	char name[32];

	if (!G)
		return NULL;
	/* Sizes the page's CSS draws with: 10 pt labels on nodes, 9 pt on edges. */
	agattr(G, AGRAPH, "nodesep", "0.3");
	agattr(G, AGRAPH, "ranksep", "0.45");
	agattr(G, AGNODE, "shape", "box");
	agattr(G, AGNODE, "height", "0.3");
	agattr(G, AGNODE, "margin", "0.08,0.03");
	agattr(G, AGNODE, "fontname", "Helvetica");
	agattr(G, AGNODE, "fontsize", "10");
	agattr(G, AGEDGE, "fontname", "Helvetica");
	agattr(G, AGEDGE, "fontsize", "9");
	for (size_t i = 0; i < g->nnodes; i++) {
		/* Our ids may be anything; Graphviz gets names it cannot misread. */
		snprintf(name, sizeof(name), "n%zu", i);
		n[i] = agnode(G, name, 1);
		set_label(n[i], "label", g->nodes[i].label);
	}
	for (size_t i = 0; i < g->nedges; i++) {
		/* No name: every call adds an edge, so that two rows of one pair stay two. */
		e[i] = agedge(G, n[g->edges[i].from], n[g->edges[i].to], NULL, 1);
		set_label(e[i], g->nedges > LABEL_NODES_MAX ? "xlabel" : "label", g->edges[i].label);
	}
	return G;
}

/* Dot's y grows upwards from the bounding box's bottom; SVG's grows down from the top. */
static void flip(boxf bb, pointf p, double *x, double *y)
{
	*x = p.x - bb.LL.x;
	*y = bb.UR.y - p.y;
}

static void read_edge(struct layout_edge *le, Agedge_t *e, boxf bb)
{
	const splines *spl = ED_spl(e);
	const textlabel_t *lab = ED_label(e) ? ED_label(e) : ED_xlabel(e);

	if (spl && spl->size > 0) {
		/* A multi-piece spline happens only with compound edges, which we never make. */
		const bezier *bz = &spl->list[0];

		le->npoints = (size_t)bz->size;
		le->points = xmalloc(2 * le->npoints * sizeof(double));
		for (size_t k = 0; k < le->npoints; k++)
			flip(bb, bz->list[k], &le->points[2 * k], &le->points[2 * k + 1]);
		le->arrow = bz->eflag != 0;
		if (le->arrow)
			flip(bb, bz->ep, &le->ax, &le->ay);
	}
	le->has_label = lab && lab->set;
	if (le->has_label)
		flip(bb, lab->pos, &le->lx, &le->ly);
}

static void read_layout(struct layout *g, Agraph_t *G, Agnode_t **n, Agedge_t **e)
{
	boxf bb = GD_bb(G);

	g->width = bb.UR.x - bb.LL.x;
	g->height = bb.UR.y - bb.LL.y;
	for (size_t i = 0; i < g->nnodes; i++) {
		struct layout_node *ln = &g->nodes[i];

		flip(bb, ND_coord(n[i]), &ln->x, &ln->y);
		ln->w = ND_width(n[i]) * 72;   /* inches */
		ln->h = ND_height(n[i]) * 72;
	}
	for (size_t i = 0; i < g->nedges; i++)
		read_edge(&g->edges[i], e[i], bb);
}

int layout_run(struct layout *g)
{
	Agnode_t **n = xmalloc((g->nnodes + 1) * sizeof(*n));
	Agedge_t **e = xmalloc((g->nedges + 1) * sizeof(*e));
	Agraph_t *G;
	int ret = -1;

	agseterrf(quiet);
	if (!gvc)
		gvc = gvContext();
	G = gvc ? build(g, n, e) : NULL;
	if (G && gvLayout(gvc, G, "dot") == 0) {
		read_layout(g, G, n, e);
		gvFreeLayout(gvc, G);
		ret = 0;
	}
	if (G)
		agclose(G);
	free(n);
	free(e);
	return ret;
}

void layout_clear(struct layout *g)
{
	for (size_t i = 0; i < g->nnodes; i++) {
		free(g->nodes[i].id);
		free(g->nodes[i].label);
	}
	for (size_t i = 0; i < g->nedges; i++) {
		free(g->edges[i].label);
		free(g->edges[i].points);
	}
	free(g->nodes);
	free(g->edges);
	*g = (struct layout){ 0 };
}

void layout_done(void)
{
	if (gvc)
		gvFreeContext(gvc);
	gvc = NULL;
}
