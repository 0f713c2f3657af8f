/*
 * `mnemo report --html`: the page and its data (html.h; the format is "mnemo-html/1", described
 * in docs/internals.md "The HTML report").  The page is written in one pass through a buffered
 * FILE: the skeleton, the styles, the data as compact JSON, the script.  The data is every
 * profile's YAML turned into JSON as it is, plus what only C knows cheaply: each table's weight
 * from the module's schema, graph layouts from Graphviz, and the source files read from disk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "html.h"
#include "layout.h"
#include "mnemo_internal.h"
#include "profile.h"
#include "registry.h"
#include "schema.h"

#define MAX_DEPTH 64                  /* deeper YAML is written as null: no profile nests so */
#define MAX_SOURCE (64u << 20)        /* bytes of a source file included in the page */
#define MAX_GRAPH_EDGES 80            /* more is not readable as a picture: the table lists them */
#define MAX_GRAPHS 200                /* graphs laid out per module and profile */
#define JSON_INT_MAX (INT64_C(1) << 53)   /* larger integers lose digits as JavaScript numbers */

/* The styles and script of the page, compiled in from tools/html/ (embed.cmake). */
extern const char mnemo_report_css[], mnemo_report_js[];
extern const size_t mnemo_report_css_len, mnemo_report_js_len;

/* ---- JSON text ------------------------------------------------------------------------------- */

/* Bytes of the well-formed UTF-8 character at s (at most len bytes), or 0 when it is not one. */
static size_t utf8_char(const unsigned char *s, size_t len)
{
	uint32_t c;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not characters. */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) ||
	    c > 0x10ffff)
		return 0;
	return n;
}

/* A byte that stands for itself inside a JSON string in a <script> element. */
static bool json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
}

/* The escape of byte c (not plain, not the start of a character), or of one invalid byte. */
static void json_escape(FILE *f, unsigned char c)
{
	static const char *const named[0x80] = {
		['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n", ['\t'] = "\\t", ['\r'] = "\\r",
	};

	if (c >= 0x80)
		fputs("\\ufffd", f);
	else if (named[c])
		fputs(named[c], f);
	else   /* control characters, and < > & so that nothing ends the script */
		fprintf(f, "\\u%04x", c);
}

/*
 * s (len bytes, NULs included) as a JSON string: what could end the <script> element holding
 * the data (< > &) and what ends a line in JavaScript source (U+2028, U+2029) are escaped, and
 * each byte of invalid UTF-8 becomes U+FFFD.  Runs of plain text are written at once.
 */
static void json_strn(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t run = 0, i = 0, n;

	putc('"', f);
	while (i < len) {
		if (json_plain(s[i])) {
			i++;
			continue;
		}
		n = s[i] >= 0x80 ? utf8_char(s + i, len - i) : 0;
		if (n == 3 && s[i] == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] | 1) == 0xa9) {
			fwrite(s + run, 1, i - run, f);
			fprintf(f, "\\u%04x", s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
		} else if (n) {
			i += n;
			continue;
		} else {
			fwrite(s + run, 1, i - run, f);
			json_escape(f, s[i]);
			n = 1;
		}
		i += n;
		run = i;
	}
	fwrite(s + run, 1, i - run, f);
	putc('"', f);
}

static void json_str(FILE *f, const char *s)
{
	json_strn(f, s ? s : "", s ? strlen(s) : 0);
}

/* "key": */
static void json_key(FILE *f, const char *key)
{
	json_str(f, key);
	putc(':', f);
}

/* A double in the fewest digits that read back to it (finite only). */
static void json_double(FILE *f, double v)
{
	char b[40];

	for (int prec = 15; prec <= 17; prec++) {
		snprintf(b, sizeof(b), "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	fputs(b, f);
}

/* A coordinate of a layout: a hundredth of a point is finer than any screen. */
static void json_coord(FILE *f, double v)
{
	fprintf(f, "%.6g", round(v * 100) / 100);
}

/* ---- YAML as JSON ---------------------------------------------------------------------------- */

/* A scalar: numbers as numbers while JavaScript holds them exactly, else as their digits. */
static void json_scalar(FILE *f, const struct mn_pnode *n)
{
	size_t len;
	const char *s = mn_pnode_str(n, &len);
	int64_t i;
	uint64_t u;
	double d;
	bool b;

	if (!n || mn_pnode_is_null(n))
		fputs("null", f);
	else if (mn_pnode_i64(n, &i) == 0 && i >= -JSON_INT_MAX && i <= JSON_INT_MAX)
		fprintf(f, "%" PRId64, i);
	else if (mn_pnode_i64(n, &i) == 0)
		fprintf(f, "\"%" PRId64 "\"", i);
	else if (mn_pnode_u64(n, &u) == 0)
		fprintf(f, u <= (uint64_t)JSON_INT_MAX ? "%" PRIu64 : "\"%" PRIu64 "\"", u);
	else if (mn_pnode_f64(n, &d) == 0 && isfinite(d))
		json_double(f, d);
	else if (mn_pnode_f64(n, &d) == 0 && strchr(s, '.'))   /* YAML's .nan, .inf, -.inf */
		fputs(isnan(d) ? "\"nan\"" : d < 0 ? "\"-inf\"" : "\"inf\"", f);
	else if (mn_pnode_bool(n, &b) == 0)
		fputs(b ? "true" : "false", f);
	else
		json_strn(f, s, len);
}

static void json_node(FILE *f, struct ptrset *seen, const struct mn_pnode *n, int depth);

static void json_map(FILE *f, struct ptrset *seen, const struct mn_pnode *n, int depth)
{
	putc('{', f);
	for (size_t i = 0; i < mn_pnode_len(n); i++) {
		const char *key = mn_pnode_key(n, i);

		if (i)
			putc(',', f);
		/* A collection as a key is valid YAML that no profile writes: named, not shown. */
		json_key(f, key ? key : "(a key that is not a scalar)");
		json_node(f, seen, mn_pnode_at(n, i), depth + 1);
	}
	putc('}', f);
}

static void json_node(FILE *f, struct ptrset *seen, const struct mn_pnode *n, int depth)
{
	enum mn_pnode_kind k = mn_pnode_kind(n);

	if (k == MN_PNODE_SCALAR || k == MN_PNODE_NONE) {
		json_scalar(f, n);
		return;
	}
	/* A collection met again, through a YAML alias, is written once: null the next times. */
	if (depth > MAX_DEPTH || !ptrset_add(seen, n)) {
		fputs("null", f);
		return;
	}
	if (k == MN_PNODE_MAP) {
		json_map(f, seen, n, depth);
		return;
	}
	putc('[', f);
	for (size_t i = 0; i < mn_pnode_len(n); i++) {
		if (i)
			putc(',', f);
		json_node(f, seen, mn_pnode_at(n, i), depth + 1);
	}
	putc(']', f);
}

/* ---- The page's state ------------------------------------------------------------------------ */

struct page {
	FILE *f;
	const struct html_options *o;
	struct ptrset seen;         /* collections written, per profile: aliases written once */
	struct layout g;            /* the graph being laid out */
};

static bool wanted(const struct html_options *o, const char *name)
{
	if (!o->nonly)
		return true;
	for (size_t i = 0; i < o->nonly; i++)
		if (!strcmp(o->only[i], name))
			return true;
	return false;
}

/* ---- A profile's root ------------------------------------------------------------------------ */

static void json_site_row(FILE *f, const struct mn_site *s)
{
	fprintf(f, "\"%" PRIu32 "\":{\"kind\":", s->id);
	json_str(f, s->kind);
	fputs(",\"function\":", f);
	json_str(f, s->function);
	fputs(",\"file\":", f);
	json_str(f, s->file);
	fprintf(f, ",\"line\":%" PRIu32 ",\"column\":%" PRIu32, s->line, s->column);
	/* The rest only when set, as the profile writes them (mn_prof_site_row()). */
	if (s->name && *s->name)
		fputs(",\"name\":", f), json_str(f, s->name);
	if (s->type_size)
		fprintf(f, ",\"type_size\":%" PRIu64, s->type_size);
	if (s->loop)
		fprintf(f, ",\"loop\":%" PRIu32, s->loop);
	if (s->fields && *s->fields)
		fputs(",\"fields\":", f), json_str(f, s->fields);
	if (s->line_nearest)
		fputs(",\"line_nearest\":true", f);
	if (s->inlined_into && *s->inlined_into)
		fputs(",\"inlined_into\":", f), json_str(f, s->inlined_into);
	if (s->inlined_at && *s->inlined_at)
		fputs(",\"inlined_at\":", f), json_str(f, s->inlined_at);
	if (s->unit && *s->unit)
		fputs(",\"unit\":", f), json_str(f, s->unit);
	putc('}', f);
}

/*
 * The root mapping as JSON.  `sites` and `modules` come from the reader rather than the first
 * document, which a stream of documents adds to; modules are the wanted ones.
 */
static void json_root(struct page *pg, const struct mn_profile *p)
{
	const struct mn_pnode *root = mn_profile_root(p);
	FILE *f = pg->f;
	bool first = true;

	putc('{', f);
	for (size_t i = 0; i < mn_pnode_len(root); i++) {
		const char *key = mn_pnode_key(root, i);

		if (!key || !strcmp(key, "sites") || !strcmp(key, "modules"))
			continue;
		if (!first)
			putc(',', f);
		first = false;
		json_key(f, key);
		json_node(f, &pg->seen, mn_pnode_at(root, i), 1);
	}
	fputs(first ? "\"sites\":{" : ",\"sites\":{", f);
	for (size_t i = 0; i < mn_profile_site_count(p); i++) {
		if (i)
			putc(',', f);
		json_site_row(f, mn_profile_site_at(p, i));
	}
	fputs("},\"modules\":{", f);
	first = true;
	for (size_t i = 0; i < mn_profile_module_count(p); i++) {
		if (!wanted(pg->o, mn_profile_module_name(p, i)))
			continue;
		if (!first)
			putc(',', f);
		first = false;
		json_key(f, mn_profile_module_name(p, i));
		json_node(f, &pg->seen, mn_profile_module_section(p, i), 2);
	}
	fputs("}}", f);
}

/* ---- Table weights, from the modules' schemas ------------------------------------------------ */

struct weights {
	FILE *f;
	struct ptrset seen;
	char path[512];             /* the keys down to the node, "/"-joined, "[]" for an item */
	size_t n;                   /* pairs written */
	char **done;                /* the paths written, each once */
	size_t ndone;
};

/* Writes "path":"weight" unless that path was written already. */
static void weight_found(struct weights *w, const char *weight)
{
	for (size_t i = 0; i < w->ndone; i++)
		if (!strcmp(w->done[i], w->path))
			return;
	w->done = xrealloc(w->done, (w->ndone + 1) * sizeof(*w->done));
	w->done[w->ndone++] = xstrdup(w->path);
	if (w->n++)
		putc(',', w->f);
	json_key(w->f, w->path);
	json_str(w->f, weight);
}

static void weights_walk(struct weights *w, const struct mn_pnode *n, struct decl d, int depth);

/* Walks n's child at key (NULL: a sequence item) with the path extended by name. */
static void weights_child(struct weights *w, const struct mn_pnode *c, struct decl d,
			  const char *name, int depth)
{
	size_t len = strlen(w->path);
	int k = snprintf(w->path + len, sizeof(w->path) - len, "%s%s", len ? "/" : "", name);

	if (k > 0 && (size_t)k < sizeof(w->path) - len)
		weights_walk(w, c, d, depth + 1);
	w->path[len] = '\0';
}

/*
 * Every table under n whose rows' schema names a weight.  Tables nest in rows (object-relative's
 * instructions/[]/streams), so rows are walked too, while their schema declares anything.
 */
static void weights_walk(struct weights *w, const struct mn_pnode *n, struct decl d, int depth)
{
	enum mn_pnode_kind k = mn_pnode_kind(n);

	if (!d.s || k == MN_PNODE_SCALAR || k == MN_PNODE_NONE || depth > MAX_DEPTH ||
	    !ptrset_add(&w->seen, n))
		return;
	if (d.table && d.s->weight)
		weight_found(w, d.s->weight);
	for (size_t i = 0; i < mn_pnode_len(n); i++) {
		const char *key = k == MN_PNODE_MAP ? mn_pnode_key(n, i) : NULL;

		if (k == MN_PNODE_MAP && !key)
			continue;
		weights_child(w, mn_pnode_at(n, i), decl_at(d, key), key ? key : "[]", depth);
	}
}

/* "weights":{...} of one module section. */
static void json_weights(FILE *f, const struct mn_module *m, const struct mn_pnode *section)
{
	struct weights w = { .f = f };

	fputs("\"weights\":{", f);
	if (m)
		weights_walk(&w, section, (struct decl){ m->schema, false }, 0);
	putc('}', f);
	for (size_t i = 0; i < w.ndone; i++)
		free(w.done[i]);
	free(w.done);
	ptrset_free(&w.seen);
}

static void json_modules(struct page *pg, const struct mn_profile *p)
{
	FILE *f = pg->f;
	bool first = true;

	fputs("\"modules\":[", f);
	for (size_t i = 0; i < mn_profile_module_count(p); i++) {
		const char *name = mn_profile_module_name(p, i);
		const struct mn_module *m = mn_module_find(name);

		if (!wanted(pg->o, name))
			continue;
		if (!first)
			putc(',', f);
		first = false;
		fputs("{\"name\":", f);
		json_str(f, name);
		fprintf(f, ",\"known\":%s,", m ? "true" : "false");
		json_weights(f, m, mn_profile_module_section(p, i));
		putc('}', f);
	}
	putc(']', f);
}

/* ---- Graphs ---------------------------------------------------------------------------------- */

/* A site as a graph's node shows it: "demo.c:25:12 store", short enough to lay out. */
static char *site_label(const struct mn_profile *p, uint64_t id)
{
	const struct mn_site *s = id <= UINT32_MAX ? mn_profile_site(p, (uint32_t)id) : NULL;
	const char *file, *what;
	char *loc, *label;

	if (!s)
		return xasprintf("site %" PRIu64, id);
	file = strrchr(s->file, '/') ? strrchr(s->file, '/') + 1 : s->file;
	if (!*file)
		loc = xasprintf("site %" PRIu64 " %s", id, s->function);
	else if (s->line && s->column)
		loc = xasprintf("%s:%" PRIu32 ":%" PRIu32, file, s->line, s->column);
	else
		loc = xasprintf("%s:%" PRIu32, file, s->line);
	what = s->name && *s->name ? s->name : "";
	label = xasprintf("%s%s%s%s %s%s%s", s->unit && *s->unit ? "[" : "",
			  s->unit ? s->unit : "", s->unit && *s->unit ? "] " : "", loc, s->kind,
			  *what ? " " : "", what);
	free(loc);
	return label;
}

/* LAYOUT of the graph in pg->g, or {"skipped": ...} when Graphviz failed. */
static void json_layout(struct page *pg)
{
	FILE *f = pg->f;
	struct layout *g = &pg->g;

	if (layout_run(g)) {
		fputs("{\"skipped\":\"graph layout failed\"}", f);
		return;
	}
	fputs("{\"width\":", f);
	json_coord(f, g->width);
	fputs(",\"height\":", f);
	json_coord(f, g->height);
	fputs(",\"nodes\":[", f);
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct layout_node *n = &g->nodes[i];

		fputs(i ? ",{\"id\":" : "{\"id\":", f);
		json_str(f, n->id);
		fputs(",\"label\":", f);
		json_str(f, n->label);
		fputs(",\"x\":", f), json_coord(f, n->x);
		fputs(",\"y\":", f), json_coord(f, n->y);
		fputs(",\"w\":", f), json_coord(f, n->w);
		fputs(",\"h\":", f), json_coord(f, n->h);
		putc('}', f);
	}
	fputs("],\"edges\":[", f);
	for (size_t i = 0; i < g->nedges; i++) {
		const struct layout_edge *e = &g->edges[i];

		fputs(i ? ",{\"from\":" : "{\"from\":", f);
		json_str(f, g->nodes[e->from].id);
		fputs(",\"to\":", f);
		json_str(f, g->nodes[e->to].id);
		fputs(",\"label\":", f);
		json_str(f, e->label);
		fputs(",\"kind\":", f);
		json_str(f, e->kind);
		fputs(",\"points\":[", f);
		for (size_t k = 0; k < 2 * e->npoints; k++) {
			if (k)
				putc(',', f);
			json_coord(f, e->points[k]);
		}
		fputs("],\"arrow\":", f);
		if (e->arrow) {
			fputs("[", f), json_coord(f, e->ax);
			fputs(",", f), json_coord(f, e->ay);
			fputs("]", f);
		} else {
			fputs("null", f);
		}
		if (e->has_label) {
			fputs(",\"lx\":", f), json_coord(f, e->lx);
			fputs(",\"ly\":", f), json_coord(f, e->ly);
		}
		putc('}', f);
	}
	fputs("]}", f);
}

static void json_skipped(FILE *f, const char *why)
{
	fputs("{\"skipped\":", f);
	json_str(f, why);
	putc('}', f);
}

static uint64_t node_u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	mn_pnode_u64(mn_pnode_get(n, key), &v);
	return v;
}

/* ---- Dependence graphs ----------------------------------------------------------------------- */

/* A loop that has dependence rows: its id, share and rows (indices into `dependences`). */
struct dep_loop {
	uint64_t loop;
	uint64_t iterations;        /* its share of the accesses: the order loops are drawn in */
	const size_t *rows;         /* indices into `dependences`, in file order */
	size_t nrows;
};

static int by_share(const void *a, const void *b)
{
	const struct dep_loop *x = a, *y = b;

	if (x->iterations != y->iterations)
		return x->iterations < y->iterations ? 1 : -1;
	return (x->loop > y->loop) - (x->loop < y->loop);
}

struct loop_row {
	uint64_t loop;
	size_t row;
};

static int by_loop(const void *a, const void *b)
{
	const struct loop_row *x = a, *y = b;

	if (x->loop != y->loop)
		return x->loop < y->loop ? -1 : 1;
	return (x->row > y->row) - (x->row < y->row);
}

static int by_id(const void *key, const void *elem)
{
	uint64_t loop = *(const uint64_t *)key, id = ((const struct dep_loop *)elem)->loop;

	return (loop > id) - (loop < id);
}

/*
 * The loops of the dependence rows (loop 0, outside every loop, left out), largest first.  Their
 * rows point into one array, *rows, for the caller to free.
 */
static struct dep_loop *dep_loops(const struct mn_pnode *sec, size_t *nloops, size_t **rows)
{
	const struct mn_pnode *deps = mn_pnode_get(sec, "dependences");
	const struct mn_pnode *loops = mn_pnode_get(sec, "loops");
	size_t nrows = mn_pnode_len(deps), k = 0, n = 0;
	struct loop_row *lr = xmalloc((nrows + 1) * sizeof(*lr));
	struct dep_loop *v;

	for (size_t i = 0; i < nrows; i++) {
		uint64_t loop = node_u64(mn_pnode_at(deps, i), "loop");

		if (loop)
			lr[k++] = (struct loop_row){ loop, i };
	}
	/* By loop, so that each loop's rows are together, in file order: any file, any order. */
	qsort(lr, k, sizeof(*lr), by_loop);
	*rows = xmalloc((k + 1) * sizeof(**rows));
	v = xmalloc((k + 1) * sizeof(*v));
	for (size_t i = 0; i < k; i++) {
		(*rows)[i] = lr[i].row;
		if (!n || v[n - 1].loop != lr[i].loop)
			v[n++] = (struct dep_loop){ .loop = lr[i].loop, .rows = &(*rows)[i] };
		v[n - 1].nrows++;
	}
	free(lr);
	for (size_t i = 0; i < mn_pnode_len(loops); i++) {
		const struct mn_pnode *row = mn_pnode_at(loops, i);
		uint64_t loop = node_u64(row, "loop");
		struct dep_loop *l = bsearch(&loop, v, n, sizeof(*v), by_id);

		if (l)
			l->iterations = node_u64(row, "iterations");
	}
	qsort(v, n, sizeof(*v), by_share);
	*nloops = n;
	return v;
}

/* "raw d=1..4 ×49", "war (not carried) ×1" */
static char *dep_label(const struct mn_pnode *row, const char *kind)
{
	bool carried = false;
	uint64_t lo = node_u64(row, "min_distance"), hi = node_u64(row, "max_distance");
	char *d, *label;

	mn_pnode_bool(mn_pnode_get(row, "carried"), &carried);
	if (!carried)
		d = xstrdup(" (not carried)");
	else if (lo == hi)
		d = xasprintf(" d=%" PRIu64, lo);
	else
		d = xasprintf(" d=%" PRIu64 "..%" PRIu64, lo, hi);
	label = xasprintf("%s%s \u00d7%" PRIu64, kind, d, node_u64(row, "count"));
	free(d);
	return label;
}

static const char *dep_kind(const struct mn_pnode *row)
{
	const char *k = mn_pnode_str(mn_pnode_get(row, "kind"), NULL);

	if (k && !strcmp(k, "war"))
		return "war";
	if (k && !strcmp(k, "waw"))
		return "waw";
	return "raw";
}

/* The graph of one loop's rows, laid out into pg->g. */
static void dep_graph(struct page *pg, const struct mn_profile *p, const struct mn_pnode *deps,
		      const struct dep_loop *l)
{
	for (size_t i = 0; i < l->nrows; i++) {
		const struct mn_pnode *row = mn_pnode_at(deps, l->rows[i]);
		uint64_t ends[2] = { node_u64(row, "src"), node_u64(row, "dst") };
		size_t idx[2];
		char *label;

		for (int e = 0; e < 2; e++) {
			char *id = xasprintf("%" PRIu64, ends[e]);
			char *text = site_label(p, ends[e]);

			idx[e] = layout_node(&pg->g, id, text);
			free(id);
			free(text);
		}
		label = dep_label(row, dep_kind(row));
		layout_edge(&pg->g, idx[0], idx[1], label, dep_kind(row));
		free(label);
	}
	json_layout(pg);
	layout_clear(&pg->g);
}

static void dep_graphs(struct page *pg, const struct mn_profile *p, const struct mn_pnode *sec)
{
	const struct mn_pnode *deps = mn_pnode_get(sec, "dependences");
	size_t n, *rows, drawn = 0;
	struct dep_loop *loops = dep_loops(sec, &n, &rows);
	FILE *f = pg->f;

	for (size_t i = 0; i < n; i++) {
		char *why = NULL;

		fprintf(f, "%s\"%" PRIu64 "\":", i ? "," : "", loops[i].loop);
		if (loops[i].nrows > MAX_GRAPH_EDGES)
			why = xasprintf("%zu dependences: more than %d to draw; the table lists them",
					loops[i].nrows, MAX_GRAPH_EDGES);
		else if (drawn++ >= MAX_GRAPHS)
			why = xasprintf("only the %d loops with the most iterations are drawn",
					MAX_GRAPHS);
		if (why)
			json_skipped(f, why);
		else
			dep_graph(pg, p, deps, &loops[i]);
		free(why);
	}
	free(rows);
	free(loops);
}

/* ---- rds-shape graphs ------------------------------------------------------------------------ */

/*
 * An allocation context as a node id and label: site 26 alone is "26", site 26 called from call
 * sites 49 and 46 (innermost first) is "26<49<46", labelled "a.c:3:9 alloc malloc < a.c:49 <
 * a.c:46".  ctx is a sequence of ids, or a scalar for the site alone; site the leading id, or 0
 * when ctx holds it (a type's `sites:` entries).
 */
static void context_node(const struct mn_profile *p, uint64_t site, const struct mn_pnode *ctx,
			 char **id, char **label)
{
	size_t n = mn_pnode_kind(ctx) == MN_PNODE_SEQ ? mn_pnode_len(ctx) : 0;
	size_t i = 0;
	char *s;

	if (!site && mn_pnode_kind(ctx) == MN_PNODE_SCALAR)
		mn_pnode_u64(ctx, &site);
	else if (!site && n)
		mn_pnode_u64(mn_pnode_at(ctx, i++), &site);
	*id = xasprintf("%" PRIu64, site);
	*label = site_label(p, site);
	for (; i < n; i++) {
		uint64_t c = 0;
		const struct mn_site *cs;

		mn_pnode_u64(mn_pnode_at(ctx, i), &c);
		cs = c <= UINT32_MAX ? mn_profile_site(p, (uint32_t)c) : NULL;
		s = xasprintf("%s<%" PRIu64, *id, c);
		free(*id);
		*id = s;
		if (cs && *cs->file)
			s = xasprintf("%s < %s:%" PRIu32, *label,
				      strrchr(cs->file, '/') ? strrchr(cs->file, '/') + 1 : cs->file,
				      cs->line);
		else
			s = xasprintf("%s < site %" PRIu64, *label, c);
		free(*label);
		*label = s;
	}
}

/* One row of static_shape_graph, its ends as node ids and labels. */
struct shape_edge {
	char *src, *dst, *src_label, *dst_label;
	char *fields;               /* "next, prev", or "+0, +8" where the layout is unknown */
	uint64_t stores, forward, backward;
};

/*
 * The name of the field at byte offset off of the structure an allocation site's layout
 * describes ("point/24:x@0,y@8,z@16", struct mn_site.fields), or "+off" when it names none.
 */
static char *field_name(const struct mn_site *s, uint64_t off)
{
	const char *f = s && s->fields ? strchr(s->fields, ':') : NULL;

	while (f && *f) {
		const char *name = f + 1, *at = strchr(name, '@');
		char *end;

		if (!at)
			break;
		if (strtoull(at + 1, &end, 10) == off && at > name)
			return xasprintf("%.*s", (int)(at - name), name);
		f = strchr(at, ',');
	}
	return xasprintf("+%" PRIu64, off);
}

/* A row's `fields:` (byte offsets of the source's pointer fields) as names, joined by ", ". */
static char *field_names(const struct mn_profile *p, uint64_t site, const struct mn_pnode *offs)
{
	const struct mn_site *s = site <= UINT32_MAX ? mn_profile_site(p, (uint32_t)site) : NULL;
	char *names = xstrdup("");

	for (size_t i = 0; i < mn_pnode_len(offs); i++) {
		uint64_t off = 0;
		char *name, *joined;

		if (mn_pnode_u64(mn_pnode_at(offs, i), &off))
			continue;
		name = field_name(s, off);
		joined = xasprintf("%s%s%s", names, *names ? ", " : "", name);
		free(name);
		free(names);
		names = joined;
	}
	return names;
}

static struct shape_edge *shape_edges(const struct mn_profile *p, const struct mn_pnode *rows)
{
	size_t n = mn_pnode_len(rows);
	struct shape_edge *v = xmalloc((n + 1) * sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		const struct mn_pnode *r = mn_pnode_at(rows, i);

		context_node(p, node_u64(r, "src_site"), mn_pnode_get(r, "src_context"), &v[i].src,
			     &v[i].src_label);
		context_node(p, node_u64(r, "dst_site"), mn_pnode_get(r, "dst_context"), &v[i].dst,
			     &v[i].dst_label);
		v[i].stores = node_u64(r, "stores");
		v[i].forward = node_u64(r, "forward");
		v[i].backward = node_u64(r, "backward");
		v[i].fields = field_names(p, node_u64(r, "src_site"), mn_pnode_get(r, "fields"));
	}
	return v;
}

/* "next, prev: 126 stores, 63 forward, 63 backward" (forward: from an older object to a younger). */
static char *shape_label(const struct shape_edge *e)
{
	char fwd[32] = "", bwd[32] = "";

	if (e->forward)
		snprintf(fwd, sizeof(fwd), ", %" PRIu64 " forward", e->forward);
	if (e->backward)
		snprintf(bwd, sizeof(bwd), ", %" PRIu64 " backward", e->backward);
	return xasprintf("%s%s%" PRIu64 " store%s%s%s", e->fields, *e->fields ? ": " : "",
			 e->stores, e->stores == 1 ? "" : "s", fwd, bwd);
}

/*
 * An edge's kind, which the page colours it by: the direction most of its stores took, "self"
 * for a site's edge to itself that took neither, "static" when the row does not say (a profile
 * written before rows had forward and backward).
 */
static const char *shape_kind(const struct shape_edge *e, bool self)
{
	if (e->forward > e->backward)
		return "forward";
	if (e->backward > e->forward)
		return "backward";
	return self ? "self" : "static";
}

/* Whether node id is one of the type's own (its `sites:`), the first ntype nodes of the graph. */
static bool type_node(const struct layout *g, size_t ntype, const char *id)
{
	for (size_t i = 0; i < ntype; i++)
		if (!strcmp(g->nodes[i].id, id))
			return true;
	return false;
}

/*
 * The shape graph of one type into pg->g: its sites, and the edges leaving them (with the sites
 * they lead to, which may be another type's).  Returns the edges, which may exceed the limit.
 */
static size_t shape_graph(struct page *pg, const struct mn_profile *p, const struct mn_pnode *type,
			  const struct shape_edge *e, size_t ne)
{
	const struct mn_pnode *sites = mn_pnode_get(type, "sites");
	size_t ntype, edges = 0;

	for (size_t i = 0; i < mn_pnode_len(sites); i++) {
		char *id, *label;

		context_node(p, 0, mn_pnode_at(sites, i), &id, &label);
		layout_node(&pg->g, id, label);
		free(id);
		free(label);
	}
	ntype = pg->g.nnodes;
	for (size_t i = 0; i < ne && edges <= MAX_GRAPH_EDGES; i++) {
		char *label;
		size_t from, to;

		if (!type_node(&pg->g, ntype, e[i].src))
			continue;
		edges++;
		from = layout_node(&pg->g, e[i].src, e[i].src_label);
		to = layout_node(&pg->g, e[i].dst, e[i].dst_label);
		label = shape_label(&e[i]);
		layout_edge(&pg->g, from, to, label, shape_kind(&e[i], from == to));
		free(label);
	}
	return edges;
}

/* A type and its weight (the schema's: traversals), for drawing the heaviest types first. */
struct shape_type {
	const struct mn_pnode *row;
	uint64_t traversals;
	size_t index;               /* in the file: ties keep file order */
};

static int by_traversals(const void *a, const void *b)
{
	const struct shape_type *x = a, *y = b;

	if (x->traversals != y->traversals)
		return x->traversals < y->traversals ? 1 : -1;
	return (x->index > y->index) - (x->index < y->index);
}

static void shape_graphs(struct page *pg, const struct mn_profile *p, const struct mn_pnode *sec)
{
	const struct mn_pnode *types = mn_pnode_get(sec, "types");
	const struct mn_pnode *rows = mn_pnode_get(sec, "static_shape_graph");
	size_t ne = mn_pnode_len(rows), nt = mn_pnode_len(types), drawn = 0;
	struct shape_edge *e = shape_edges(p, rows);
	struct shape_type *t = xmalloc((nt + 1) * sizeof(*t));
	FILE *f = pg->f;

	for (size_t i = 0; i < nt; i++)
		t[i] = (struct shape_type){ mn_pnode_at(types, i),
					    node_u64(mn_pnode_at(types, i), "traversals"), i };
	qsort(t, nt, sizeof(*t), by_traversals);
	for (size_t i = 0; i < nt; i++) {
		fprintf(f, "%s\"%" PRIu64 "\":", i ? "," : "", node_u64(t[i].row, "type"));
		if (shape_graph(pg, p, t[i].row, e, ne) > MAX_GRAPH_EDGES)
			json_skipped(f, "more than 80 edges to draw; the table lists them");
		else if (drawn++ >= MAX_GRAPHS)
			json_skipped(f, "only the 200 types with the most traversals are drawn");
		else
			json_layout(pg);
		layout_clear(&pg->g);
	}
	free(t);
	for (size_t i = 0; i < ne; i++) {
		free(e[i].src);
		free(e[i].dst);
		free(e[i].src_label);
		free(e[i].dst_label);
		free(e[i].fields);
	}
	free(e);
}

static void json_graphs(struct page *pg, const struct mn_profile *p)
{
	const struct mn_pnode *dep = mn_profile_module(p, "dependence");
	const struct mn_pnode *rds = mn_profile_module(p, "rds-shape");

	fputs("\"graphs\":{", pg->f);
	if (dep && wanted(pg->o, "dependence")) {
		fputs("\"dependence\":{", pg->f);
		dep_graphs(pg, p, dep);
		putc('}', pg->f);
	}
	if (rds && wanted(pg->o, "rds-shape")) {
		fputs(dep && wanted(pg->o, "dependence") ? ",\"rds-shape\":{" : "\"rds-shape\":{",
		      pg->f);
		shape_graphs(pg, p, rds);
		putc('}', pg->f);
	}
	putc('}', pg->f);
}

/* ---- Profiles -------------------------------------------------------------------------------- */

static void json_profile(struct page *pg, const struct mn_profile *p, const char *path)
{
	FILE *f = pg->f;
	const char *reason = NULL;
	bool complete = mn_profile_complete(p, &reason), first = true;

	fputs("{\"path\":", f);
	json_str(f, path);
	fputs(",\"root\":", f);
	json_root(pg, p);
	ptrset_free(&pg->seen);
	fprintf(f, ",\"complete\":%s,\"incomplete_reason\":", complete ? "true" : "false");
	if (complete)
		fputs("null", f);
	else
		json_str(f, reason);
	fputs(",\"unchecked\":[", f);
	for (size_t i = 0; i < mn_profile_module_count(p); i++) {
		if (mn_module_find(mn_profile_module_name(p, i)))
			continue;
		if (!first)
			putc(',', f);
		first = false;
		json_str(f, mn_profile_module_name(p, i));
	}
	fputs("],", f);
	json_modules(pg, p);
	putc(',', f);
	json_graphs(pg, p);
	putc('}', f);
}

/* ---- Sources --------------------------------------------------------------------------------- */

static int by_string(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every file any site of the profiles names, each once, sorted. */
static const char **source_files(struct mn_profile *const *ps, size_t np, size_t *count)
{
	const char **v = NULL;
	size_t n = 0, k = 0;

	for (size_t i = 0; i < np; i++) {
		size_t ns = mn_profile_site_count(ps[i]);

		v = xrealloc(v, (n + ns + 1) * sizeof(*v));
		for (size_t s = 0; s < ns; s++)
			if (*mn_profile_site_at(ps[i], s)->file)
				v[n++] = mn_profile_site_at(ps[i], s)->file;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_string);
	for (size_t i = 0; i < n; i++)
		if (!k || strcmp(v[k - 1], v[i]))
			v[k++] = v[i];
	*count = k;
	return v;
}

/*
 * Opens file as the site table spells it, else under each --source-dir: DIR/file for a relative
 * path, then DIR/ and each suffix of it (the leading folders dropped one by one, down to the
 * base name).  Returns the descriptor and the path opened (to free), or -1 with errno the first
 * attempt's.
 */
static int open_source(const struct html_options *o, const char *file, char **opened)
{
	/* O_NONBLOCK: a FIFO of that name must not hang the report (it is refused, as not a
	 * regular file); reading a regular file ignores the flag. */
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err = errno;

	if (fd >= 0) {
		*opened = xstrdup(file);
		return fd;
	}
	for (size_t d = 0; d < o->nsource_dirs; d++) {
		const char *suffix = file;

		while (*suffix) {
			while (*suffix == '/')
				suffix++;
			if (!*suffix)
				break;
			*opened = xasprintf("%s/%s", o->source_dirs[d], suffix);
			fd = open(*opened, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (fd >= 0)
				return fd;
			free(*opened);
			suffix = strchr(suffix, '/') ? strchr(suffix, '/') : "";
		}
	}
	*opened = NULL;
	errno = err;
	return -1;
}

/* "cannot open demo.c: No such file or directory (also looked in src, ../lib)" */
static char *open_failure(const struct html_options *o, const char *file, int err)
{
	char *s = xasprintf("cannot open %s: %s", file, strerror(err)), *t;

	for (size_t d = 0; d < o->nsource_dirs; d++) {
		t = xasprintf("%s%s%s", s, d ? ", " : " (also looked in ", o->source_dirs[d]);
		free(s);
		s = t;
	}
	if (o->nsource_dirs) {
		t = xasprintf("%s)", s);
		free(s);
		s = t;
	}
	return s;
}

/* Reads the whole file at fd (size bytes expected); NULL with errno on failure. */
static char *read_all(int fd, size_t size, size_t *len)
{
	size_t cap = size + 1, n = 0;
	char *buf = xmalloc(cap);
	ssize_t r;

	for (;;) {
		if (n == cap) {   /* grew since fstat(), or a file that reports size 0 */
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		n += (size_t)r;
		if (r == 0 || n > MAX_SOURCE)   /* the caller refuses a file that grew so */
			break;
	}
	*len = n;
	return buf;
}

/* {"path": ..., "lines": [...]}: lines without their newline (nor a \r before it). */
static void json_lines(FILE *f, const char *opened, const char *text, size_t len)
{
	size_t start = 0;
	bool first = true;

	fputs("{\"path\":", f);
	json_str(f, opened);
	fputs(",\"lines\":[", f);
	while (start < len) {
		const char *nl = memchr(text + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - text) : len, stop = end;

		if (stop > start && text[stop - 1] == '\r')
			stop--;
		if (!first)
			putc(',', f);
		first = false;
		json_strn(f, text + start, stop - start);
		start = end + 1;
	}
	fputs("]}", f);
}

static void json_missing(FILE *f, char *why)
{
	fputs("{\"missing\":", f);
	json_str(f, why);
	putc('}', f);
	free(why);
}

/* SOURCE of one file: its lines, or why they are not included. */
static void json_source(struct page *pg, const char *file)
{
	char *opened, *text = NULL;
	int fd = open_source(pg->o, file, &opened);
	struct stat st;
	size_t len;

	if (fd < 0) {
		json_missing(pg->f, open_failure(pg->o, file, errno));
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		json_missing(pg->f, xasprintf("%s is not a regular file: not included", opened));
	else if ((uint64_t)st.st_size > MAX_SOURCE)
		json_missing(pg->f, xasprintf("%s is larger than 64 MiB: not included", opened));
	else if (!(text = read_all(fd, (size_t)st.st_size, &len)))
		json_missing(pg->f, xasprintf("cannot read %s: %s", opened, strerror(errno)));
	else if (len > MAX_SOURCE)   /* it grew since fstat() */
		json_missing(pg->f, xasprintf("%s is larger than 64 MiB: not included", opened));
	else
		json_lines(pg->f, opened, text, len);
	free(text);
	close(fd);
	free(opened);
}

static void json_sources(struct page *pg, struct mn_profile *const *ps, size_t np)
{
	size_t n;
	const char **files = source_files(ps, np, &n);

	fputs("\"sources\":{", pg->f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			putc(',', pg->f);
		json_key(pg->f, files[i]);
		json_source(pg, files[i]);
	}
	putc('}', pg->f);
	free(files);
}

/* ---- The page -------------------------------------------------------------------------------- */

/* Text for HTML outside scripts: markup characters as references, bad UTF-8 as U+FFFD. */
static void html_text(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str), n;

	for (size_t i = 0; i < len; i += n) {
		n = utf8_char(s + i, len - i);
		if (!n)
			fputs("\ufffd", f), n = 1;
		else if (s[i] == '&')
			fputs("&amp;", f);
		else if (s[i] == '<')
			fputs("&lt;", f);
		else if (s[i] == '>')
			fputs("&gt;", f);
		else if (s[i] == '"')
			fputs("&quot;", f);
		else if (s[i] < 0x20 || s[i] == 0x7f)
			putc(' ', f);
		else
			fwrite(s + i, 1, n, f);
	}
}

/* The title: the first profile's command line, and how many more profiles there are. */
static void page_title(FILE *f, struct mn_profile *const *ps, size_t np)
{
	const struct mn_program *pr = mn_profile_program(ps[0]);

	fputs("<title>Mnemo report: ", f);
	for (size_t i = 0; i < pr->argc && i < 16; i++) {
		if (i)
			putc(' ', f);
		html_text(f, pr->argv[i]);
	}
	if (!pr->argc)
		fputs("(unknown program)", f);
	if (np > 1)
		fprintf(f, " and %zu more profile%s", np - 1, np > 2 ? "s" : "");
	fputs("</title>\n", f);
}

static void write_page(struct page *pg, struct mn_profile *const *ps, char *const *paths,
		       size_t np)
{
	FILE *f = pg->f;

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n", f);
	page_title(f, ps, np);
	fputs("<style>\n", f);
	fwrite(mnemo_report_css, 1, mnemo_report_css_len, f);
	fputs("\n</style></head>\n<body><div id=\"mnemo-app\"><noscript>This report needs "
	      "JavaScript.</noscript></div>\n<script type=\"application/json\" id=\"mnemo-data\">",
	      f);
	fputs("{\"format\":\"mnemo-html/1\",\"profiles\":[", f);
	for (size_t i = 0; i < np; i++) {
		if (i)
			putc(',', f);
		json_profile(pg, ps[i], paths[i]);
	}
	fputs("],", f);
	json_sources(pg, ps, np);
	fputs("}</script>\n<script>\n", f);
	fwrite(mnemo_report_js, 1, mnemo_report_js_len, f);
	fputs("\n</script></body></html>\n", f);
}

/* ---- the page's file -------------------------------------------------------------------------- */

/*
 * The temporary file of the page being written, for a signal that ends mnemo meanwhile (^C on a
 * large profile): it goes with the process, which then dies of the signal as it would have.
 */
static char page_tmp[4096];           /* a copy: out.tmp is freed on commit */
static volatile sig_atomic_t page_guarded;
static const int page_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NPAGE_SIGNALS (sizeof(page_signals) / sizeof(page_signals[0]))
static struct sigaction page_saved[NPAGE_SIGNALS];

static void page_signal(int sig)
{
	if (page_guarded)
		unlink(page_tmp);   /* after the rename: ENOENT, nothing lost */
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Handlers that remove tmp on the way out; tmp NULL: the handlers there were before. */
static void page_guard(const char *tmp)
{
	struct sigaction sa = { .sa_handler = page_signal };

	if (tmp && strlen(tmp) >= sizeof(page_tmp))
		return;   /* not guarded: the page is still written whole or not at all */
	if (tmp)
		memcpy(page_tmp, tmp, strlen(tmp) + 1);
	page_guarded = tmp != NULL;
	for (size_t i = 0; i < NPAGE_SIGNALS; i++) {
		if (!tmp) {
			sigaction(page_signals[i], &page_saved[i], NULL);
			continue;
		}
		/* A signal mnemo was started ignoring (nohup, a script's & job) stays ignored. */
		sigaction(page_signals[i], NULL, &page_saved[i]);
		if (page_saved[i].sa_handler != SIG_IGN)
			sigaction(page_signals[i], &sa, NULL);
	}
}

/* Writes the page into out and commits it, or aborts it: 0, or 1 said on stderr. */
static int write_file(struct page *pg, struct mn_prof_file *out,
		      struct mn_profile *const *profiles, char *const *paths, size_t n)
{
	int err;

	pg->f = out->f;
	setvbuf(out->f, NULL, _IOFBF, 1 << 20);
	write_page(pg, profiles, paths, n);
	layout_done();
	ptrset_free(&pg->seen);
	errno = 0;
	if (fflush(out->f) || ferror(out->f)) {
		err = errno ? errno : EIO;
		mn_prof_file_abort(out);
		warning("cannot write %s: %s", pg->o->out, strerror(err));
		return 1;
	}
	if ((err = mn_prof_file_commit(out))) {
		warning("cannot write %s: %s", pg->o->out, strerror(-err));
		return 1;
	}
	return 0;
}

int html_write(const struct html_options *o, struct mn_profile *const *profiles,
	       char *const *paths, size_t n)
{
	struct mn_prof_file out;
	struct page pg = { .o = o };
	int err = mn_prof_file_open(&out, o->out), ret;

	if (err) {
		warning("cannot write %s: %s", o->out, strerror(-err));
		return 1;
	}
	bool guarded = out.tmp && strlen(out.tmp) < sizeof(page_tmp);

	if (guarded)
		page_guard(out.tmp);
	ret = write_file(&pg, &out, profiles, paths, n);
	if (guarded)
		page_guard(NULL);
	return ret;
}
