/*
 * `mnemo report --html`: writes profiles as one self-contained HTML page (issue 24).  The page is
 * a fixed skeleton, the viewer's styles and script (tools/html/report.css, report.js, compiled
 * in), and the data the script draws from: one JSON document ("mnemo-html/1") in a
 * <script type="application/json"> element holding every profile as JSON, the weight of each
 * table, the dependence and shape graphs laid out by Graphviz (layout.h), and the source files
 * the profiles' sites name.  Nothing in the data can end the script element: every '<', '>' and
 * '&' in a JSON string is written as \u003c, \u003e, \u0026.
 */
#ifndef MNEMO_HTML_H
#define MNEMO_HTML_H

#include <stdbool.h>
#include <stddef.h>

struct mn_profile;

struct html_options {
	const char *out;            /* the page's path */
	char **source_dirs;         /* --source-dir: where sources are looked for too */
	size_t nsource_dirs;
	char **only;                /* --module: the sections to include; none: all */
	size_t nonly;
};

/*
 * Writes the page of the n profiles (opened and checked by the caller; paths as given on the
 * command line) to o->out, through a temporary file beside it renamed into place once whole.
 * Returns 0, or 1 after one line on stderr naming the file that could not be written; an
 * existing o->out is then left as it was.
 */
int html_write(const struct html_options *o, struct mn_profile *const *profiles,
	       char *const *paths, size_t n);

#endif
