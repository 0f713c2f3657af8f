/*
 * The profile reader (libmnemo-profile): loads a profile with libyaml's document API, checks its
 * frame (format, complete, program, sites, modules) and hands out read-only views of it.
 *
 * Design: every YAML node of every document gets one struct mn_pnode, allocated in one array per
 * document parallel to libyaml's node array, so a node handle is a plain pointer that knows its
 * document and needs no allocation to pass around.  Sites are copied into one array sorted by id
 * for binary search; their strings point into the documents.  Nothing changes after open, so a
 * profile may be read from many threads at once.
 *
 * Error messages follow the compilers': "<path>:<line>:<col>: <what>" when a place in the file is
 * to blame, "<path>: <what>" otherwise; lines and columns are 1-based.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#include "profile.h"

struct mn_pnode {
	const struct mn_profile *prof;
	yaml_document_t *doc;
	yaml_node_t *y;
};

struct doc {
	yaml_document_t ydoc;
	struct mn_pnode *nodes;     /* parallel to ydoc.nodes */
	size_t nnodes;
};

struct module {
	const char *name;
	const struct mn_pnode *section;
	const yaml_node_t *key;     /* for finish_modules()'s message */
};

struct mn_profile {
	char *path;
	struct doc **docs;
	size_t ndocs;

	struct mn_program program;
	const char **argv;          /* program.argv */
	struct mn_binary binary;
	bool complete;
	const char *incomplete_reason;

	struct mn_site *sites;      /* sorted by id */
	size_t nsites, sites_cap;
	struct module *modules;     /* in file order */
	size_t nmodules, modules_cap;
};

/* ---- Errors ---------------------------------------------------------------------------------- */

struct err {
	const char *path;
	char *buf;
	size_t len;
};

static int verr(const struct err *e, const yaml_mark_t *mark, const char *fmt, va_list ap)
{
	int n;

	if (!e->buf || !e->len)
		return -EINVAL;
	if (mark)
		n = snprintf(e->buf, e->len, "%s:%zu:%zu: ", e->path, mark->line + 1,
			     mark->column + 1);
	else
		n = snprintf(e->buf, e->len, "%s: ", e->path);
	if (n >= 0 && (size_t)n < e->len)
		vsnprintf(e->buf + n, e->len - n, fmt, ap);
	return -EINVAL;
}

/* Reports what is wrong at a mark.  Returns -EINVAL. */
static int __attribute__((format(printf, 3, 4)))
fail_at(const struct err *e, const yaml_mark_t *mark, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = verr(e, mark, fmt, ap);
	va_end(ap);
	return ret;
}

/* Reports what is wrong at node y (or, with y NULL, with the file).  Returns -EINVAL. */
static int __attribute__((format(printf, 3, 4)))
fail(const struct err *e, const yaml_node_t *y, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = verr(e, y ? &y->start_mark : NULL, fmt, ap);
	va_end(ap);
	return ret;
}

/* ---- Scalars --------------------------------------------------------------------------------- */

static bool tag_is(const yaml_node_t *y, const char *tag)
{
	return y->tag && strcmp((const char *)y->tag, tag) == 0;
}

/* Whether an untyped scalar may be read as a number, bool or null: unquoted, or tagged so. */
static bool resolvable(const yaml_node_t *y)
{
	if (!y || y->type != YAML_SCALAR_NODE)
		return false;
	return y->data.scalar.style == YAML_PLAIN_SCALAR_STYLE || tag_is(y, YAML_INT_TAG) ||
	       tag_is(y, YAML_FLOAT_TAG) || tag_is(y, YAML_BOOL_TAG) || tag_is(y, YAML_NULL_TAG);
}

static const char *sval(const yaml_node_t *y)
{
	return (const char *)y->data.scalar.value;
}

static bool y_is_null(const yaml_node_t *y)
{
	const char *s;

	if (!y || y->type != YAML_SCALAR_NODE)
		return false;
	if (tag_is(y, YAML_NULL_TAG))
		return true;
	if (y->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = sval(y);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

/* Parses an unsigned magnitude in YAML 1.2 core notation (decimal, 0x, 0o). */
static int parse_magnitude(const char *s, uint64_t *v)
{
	int base = 10;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	} else if (s[0] == '0' && s[1] == 'o') {
		base = 8;
		s += 2;
	}
	/* strtoull skips blanks and takes a sign: neither belongs here. */
	if (!*s || !((*s >= '0' && *s <= '9') || (base == 16 && strchr("abcdefABCDEF", *s))))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, base);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	return 0;
}

static int y_u64(const yaml_node_t *y, uint64_t *v)
{
	const char *s;

	if (!resolvable(y))
		return -EINVAL;
	s = sval(y);
	if (*s == '+')
		s++;
	return parse_magnitude(s, v);
}

static int y_i64(const yaml_node_t *y, int64_t *v)
{
	const char *s;
	bool neg = false;
	uint64_t m;
	int ret;

	if (!resolvable(y))
		return -EINVAL;
	s = sval(y);
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	ret = parse_magnitude(s, &m);
	if (ret)
		return ret;
	if (neg) {
		if (m > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*v = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
	} else {
		if (m > INT64_MAX)
			return -ERANGE;
		*v = (int64_t)m;
	}
	return 0;
}

static int y_f64(const yaml_node_t *y, double *v)
{
	const char *s, *t;
	char *end;
	int64_t i;
	int ret;

	if (!resolvable(y))
		return -EINVAL;
	s = sval(y);
	t = (*s == '+' || *s == '-') ? s + 1 : s;
	if (!strcmp(t, ".inf") || !strcmp(t, ".Inf") || !strcmp(t, ".INF")) {
		*v = *s == '-' ? -INFINITY : INFINITY;
		return 0;
	}
	if (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN")) {
		*v = NAN;
		return 0;
	}
	if (t[0] == '0' && (t[1] == 'x' || t[1] == 'X' || t[1] == 'o')) {
		if ((ret = y_i64(y, &i)))
			return ret;
		*v = (double)i;
		return 0;
	}
	/* strtod also reads "inf", "nan" and hex floats, and skips blanks: none is YAML. */
	if (!((*t >= '0' && *t <= '9') || (*t == '.' && t[1] >= '0' && t[1] <= '9')))
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE && isinf(*v))
		return -ERANGE;
	return 0;
}

static int y_bool(const yaml_node_t *y, bool *v)
{
	const char *s;

	if (!resolvable(y))
		return -EINVAL;
	s = sval(y);
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
		*v = true;
		return 0;
	}
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
		*v = false;
		return 0;
	}
	return -EINVAL;
}

/* ---- Node access ----------------------------------------------------------------------------- */

static yaml_node_t *y_get(yaml_document_t *d, const yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *pair;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(d, pair->key);

		if (k && k->type == YAML_SCALAR_NODE && !strcmp(sval(k), key))
			return yaml_document_get_node(d, pair->value);
	}
	return NULL;
}

static const struct mn_pnode *doc_node(const struct doc *d, const yaml_node_t *y)
{
	return y ? &d->nodes[y - d->ydoc.nodes.start] : NULL;
}

/*
 * The handle of y, a node of in's document.  That document's struct doc is found from in->doc,
 * which points into it, not by a search of p->docs: that made every call cost as many steps as
 * the stream has documents, and a 2 MB file of 300,000 empty documents took 20 s to walk.
 */
static const struct mn_pnode *wrap(const struct mn_pnode *in, const yaml_node_t *y)
{
	return doc_node((const struct doc *)((const char *)in->doc - offsetof(struct doc, ydoc)), y);
}

enum mn_pnode_kind mn_pnode_kind(const struct mn_pnode *n)
{
	if (!n)
		return MN_PNODE_NONE;
	switch (n->y->type) {
	case YAML_SCALAR_NODE:
		return MN_PNODE_SCALAR;
	case YAML_SEQUENCE_NODE:
		return MN_PNODE_SEQ;
	case YAML_MAPPING_NODE:
		return MN_PNODE_MAP;
	default:
		return MN_PNODE_NONE;
	}
}

size_t mn_pnode_len(const struct mn_pnode *n)
{
	if (!n)
		return 0;
	if (n->y->type == YAML_SEQUENCE_NODE)
		return n->y->data.sequence.items.top - n->y->data.sequence.items.start;
	if (n->y->type == YAML_MAPPING_NODE)
		return n->y->data.mapping.pairs.top - n->y->data.mapping.pairs.start;
	return 0;
}

const struct mn_pnode *mn_pnode_at(const struct mn_pnode *n, size_t i)
{
	if (i >= mn_pnode_len(n))
		return NULL;
	if (n->y->type == YAML_SEQUENCE_NODE)
		return wrap(n, yaml_document_get_node(n->doc, n->y->data.sequence.items.start[i]));
	return wrap(n, yaml_document_get_node(n->doc, n->y->data.mapping.pairs.start[i].value));
}

const struct mn_pnode *mn_pnode_key_node(const struct mn_pnode *n, size_t i)
{
	if (i >= mn_pnode_len(n) || n->y->type != YAML_MAPPING_NODE)
		return NULL;
	return wrap(n, yaml_document_get_node(n->doc, n->y->data.mapping.pairs.start[i].key));
}

const char *mn_pnode_key(const struct mn_pnode *n, size_t i)
{
	return mn_pnode_str(mn_pnode_key_node(n, i), NULL);
}

const struct mn_pnode *mn_pnode_get(const struct mn_pnode *n, const char *key)
{
	if (!n)
		return NULL;
	return wrap(n, y_get(n->doc, n->y, key));
}

const char *mn_pnode_str(const struct mn_pnode *n, size_t *len)
{
	if (!n || n->y->type != YAML_SCALAR_NODE)
		return NULL;
	if (len)
		*len = n->y->data.scalar.length;
	return sval(n->y);
}

bool mn_pnode_is_null(const struct mn_pnode *n)
{
	return n && y_is_null(n->y);
}

int mn_pnode_u64(const struct mn_pnode *n, uint64_t *v)
{
	return n ? y_u64(n->y, v) : -EINVAL;
}

int mn_pnode_i64(const struct mn_pnode *n, int64_t *v)
{
	return n ? y_i64(n->y, v) : -EINVAL;
}

int mn_pnode_f64(const struct mn_pnode *n, double *v)
{
	return n ? y_f64(n->y, v) : -EINVAL;
}

int mn_pnode_bool(const struct mn_pnode *n, bool *v)
{
	return n ? y_bool(n->y, v) : -EINVAL;
}

unsigned mn_pnode_line(const struct mn_pnode *n)
{
	return n ? (unsigned)n->y->start_mark.line + 1 : 0;
}

unsigned mn_pnode_column(const struct mn_pnode *n)
{
	return n ? (unsigned)n->y->start_mark.column + 1 : 0;
}

int mn_pnode_errorf(const struct mn_profile *p, const struct mn_pnode *n, char *errbuf,
		    size_t errlen, const char *fmt, ...)
{
	struct err e = { p ? p->path : "(profile)", errbuf, errlen };
	va_list ap;

	va_start(ap, fmt);
	verr(&e, n ? &n->y->start_mark : NULL, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---- Typed fields ---------------------------------------------------------------------------- */

/* The value of key in map, or NULL with the message "missing field". */
static const struct mn_pnode *field(const struct mn_profile *p, const struct mn_pnode *map,
				    const char *key, char *errbuf, size_t errlen)
{
	const struct mn_pnode *n = mn_pnode_get(map, key);

	if (!n && errbuf)
		mn_pnode_errorf(p, map, errbuf, errlen, "missing field '%s'", key);
	return n;
}

/* The message for a value of the wrong type; returns -EINVAL. */
static int bad_field(const struct mn_profile *p, const struct mn_pnode *n, const char *key,
		     const char *what, char *errbuf, size_t errlen)
{
	const char *s = mn_pnode_str(n, NULL);

	if (!errbuf)
		return -EINVAL;
	if (s)
		return mn_pnode_errorf(p, n, errbuf, errlen, "field '%s': expected %s, found '%.40s'",
				       key, what, s);
	return mn_pnode_errorf(p, n, errbuf, errlen, "field '%s': expected %s, found a %s", key,
			       what, mn_pnode_kind(n) == MN_PNODE_SEQ ? "sequence" : "mapping");
}

int mn_pfield_u64(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		  uint64_t *v, char *errbuf, size_t errlen)
{
	const struct mn_pnode *n = field(p, map, key, errbuf, errlen);

	if (!n)
		return -ENOENT;
	if (mn_pnode_u64(n, v))
		return bad_field(p, n, key, "an unsigned integer", errbuf, errlen);
	return 0;
}

int mn_pfield_u32(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		  uint32_t *v, char *errbuf, size_t errlen)
{
	const struct mn_pnode *n = field(p, map, key, errbuf, errlen);
	uint64_t u;

	if (!n)
		return -ENOENT;
	if (mn_pnode_u64(n, &u) || u > UINT32_MAX)
		return bad_field(p, n, key, "an integer from 0 to 4294967295", errbuf, errlen);
	*v = (uint32_t)u;
	return 0;
}

int mn_pfield_i64(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		  int64_t *v, char *errbuf, size_t errlen)
{
	const struct mn_pnode *n = field(p, map, key, errbuf, errlen);

	if (!n)
		return -ENOENT;
	if (mn_pnode_i64(n, v))
		return bad_field(p, n, key, "an integer", errbuf, errlen);
	return 0;
}

int mn_pfield_f64(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		  double *v, char *errbuf, size_t errlen)
{
	const struct mn_pnode *n = field(p, map, key, errbuf, errlen);

	if (!n)
		return -ENOENT;
	if (mn_pnode_f64(n, v))
		return bad_field(p, n, key, "a number", errbuf, errlen);
	return 0;
}

int mn_pfield_bool(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		   bool *v, char *errbuf, size_t errlen)
{
	const struct mn_pnode *n = field(p, map, key, errbuf, errlen);

	if (!n)
		return -ENOENT;
	if (mn_pnode_bool(n, v))
		return bad_field(p, n, key, "true or false", errbuf, errlen);
	return 0;
}

int mn_pfield_str(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		  const char **v, char *errbuf, size_t errlen)
{
	const struct mn_pnode *n = field(p, map, key, errbuf, errlen);

	if (!n)
		return -ENOENT;
	if (mn_pnode_is_null(n)) {
		*v = "";
		return 0;
	}
	if (!(*v = mn_pnode_str(n, NULL)))
		return bad_field(p, n, key, "a string", errbuf, errlen);
	return 0;
}

const struct mn_pnode *mn_pfield_node(const struct mn_profile *p, const struct mn_pnode *map,
				      const char *key, enum mn_pnode_kind kind, char *errbuf,
				      size_t errlen)
{
	static const char *const what[] = { "", "a scalar", "a sequence", "a mapping" };
	const struct mn_pnode *n = field(p, map, key, errbuf, errlen);

	if (!n || mn_pnode_kind(n) == kind || kind == MN_PNODE_NONE)
		return n;
	bad_field(p, n, key, what[kind], errbuf, errlen);
	return NULL;
}

/* ---- Profile accessors ----------------------------------------------------------------------- */

const char *mn_profile_path(const struct mn_profile *p)
{
	return p->path;
}

const struct mn_pnode *mn_profile_root(const struct mn_profile *p)
{
	const struct doc *d = p->docs[0];

	return doc_node(d, yaml_document_get_root_node((yaml_document_t *)&d->ydoc));
}

const struct mn_program *mn_profile_program(const struct mn_profile *p)
{
	return &p->program;
}

const struct mn_binary *mn_profile_binary(const struct mn_profile *p)
{
	return &p->binary;
}

bool mn_profile_complete(const struct mn_profile *p, const char **reason)
{
	if (reason)
		*reason = p->complete ? NULL : p->incomplete_reason ? p->incomplete_reason : "";
	return p->complete;
}

size_t mn_profile_site_count(const struct mn_profile *p)
{
	return p->nsites;
}

const struct mn_site *mn_profile_site_at(const struct mn_profile *p, size_t i)
{
	return i < p->nsites ? &p->sites[i] : NULL;
}

const struct mn_site *mn_profile_site(const struct mn_profile *p, uint32_t id)
{
	size_t lo = 0, hi = p->nsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->sites[mid].id == id)
			return &p->sites[mid];
		if (p->sites[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

size_t mn_profile_module_count(const struct mn_profile *p)
{
	return p->nmodules;
}

const char *mn_profile_module_name(const struct mn_profile *p, size_t i)
{
	return i < p->nmodules ? p->modules[i].name : NULL;
}

const struct mn_pnode *mn_profile_module_section(const struct mn_profile *p, size_t i)
{
	return i < p->nmodules ? p->modules[i].section : NULL;
}

const struct mn_pnode *mn_profile_module(const struct mn_profile *p, const char *name)
{
	for (size_t i = 0; i < p->nmodules; i++)
		if (!strcmp(p->modules[i].name, name))
			return p->modules[i].section;
	return NULL;
}

/* ---- Loading --------------------------------------------------------------------------------- */

static const char *kind_name(const yaml_node_t *y)
{
	if (y->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (y->type == YAML_SEQUENCE_NODE)
		return "a sequence";
	return y_is_null(y) ? "null" : "a scalar";
}

/* Checks that y, the value of `key`, is a mapping (or null, when null_ok). */
static int want_map(const struct err *e, const yaml_node_t *y, const char *key, bool null_ok)
{
	if (y->type == YAML_MAPPING_NODE || (null_ok && y_is_null(y)))
		return 0;
	return fail(e, y, "expected a mapping for '%s', found %s", key, kind_name(y));
}

/* An optional string field: "" when absent or null. */
static int opt_str(const struct err *e, yaml_document_t *d, const yaml_node_t *map,
		   const char *key, const char **out)
{
	const yaml_node_t *y = y_get(d, map, key);

	*out = "";
	if (!y || y_is_null(y))
		return 0;
	if (y->type != YAML_SCALAR_NODE)
		return fail(e, y, "expected a string for '%s', found %s", key, kind_name(y));
	*out = sval(y);
	return 0;
}

/* An optional unsigned field no greater than max: 0 when absent or null. */
static int opt_uint(const struct err *e, yaml_document_t *d, const yaml_node_t *map,
		    const char *key, uint64_t max, uint64_t *out)
{
	const yaml_node_t *y = y_get(d, map, key);

	*out = 0;
	if (!y || y_is_null(y))
		return 0;
	if (y_u64(y, out) || *out > max)
		return fail(e, y, "expected an integer from 0 to %" PRIu64 " for '%s'", max, key);
	return 0;
}

static int signal_number(const char *s)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "ILL", SIGILL },
		{ "TRAP", SIGTRAP }, { "ABRT", SIGABRT }, { "BUS", SIGBUS }, { "FPE", SIGFPE },
		{ "KILL", SIGKILL }, { "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
		{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM }, { "XCPU", SIGXCPU },
		{ "XFSZ", SIGXFSZ }, { "SYS", SIGSYS },
	};

	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(s, sigs[i].name))
			return sigs[i].sig;
	return 0;
}

static int load_program(struct mn_profile *p, const struct err *e, yaml_document_t *d,
			const yaml_node_t *prog)
{
	struct mn_program *pr = &p->program;
	const yaml_node_t *y;
	int64_t i;
	double f;

	pr->pid = -1;
	pr->exit_status = -1;
	pr->wall_seconds = -1;
	pr->events = -1;
	pr->summarized_accesses = -1;
	p->argv = calloc(1, sizeof(*p->argv));
	if (!p->argv)
		return -ENOMEM;
	pr->argv = p->argv;
	if (!prog || y_is_null(prog))
		return 0;
	if (want_map(e, prog, "program", true))
		return -EINVAL;

	y = y_get(d, prog, "argv");
	if (y && !y_is_null(y)) {
		size_t n;

		if (y->type != YAML_SEQUENCE_NODE)
			return fail(e, y, "expected a sequence of strings for 'argv', found %s",
				    kind_name(y));
		n = y->data.sequence.items.top - y->data.sequence.items.start;
		free(p->argv);
		p->argv = calloc(n + 1, sizeof(*p->argv));
		if (!p->argv)
			return -ENOMEM;
		pr->argv = p->argv;
		for (size_t k = 0; k < n; k++) {
			yaml_node_t *a = yaml_document_get_node(d, y->data.sequence.items.start[k]);

			if (a->type != YAML_SCALAR_NODE)
				return fail(e, a, "expected a string in 'argv', found %s",
					    kind_name(a));
			p->argv[k] = sval(a);
		}
		pr->argc = n;
	}
	y = y_get(d, prog, "pid");
	if (y && !y_is_null(y)) {
		if (y_i64(y, &i) || i < 0)
			return fail(e, y, "expected a process id for 'pid'");
		pr->pid = i;
	}
	y = y_get(d, prog, "exit_status");
	if (y && !y_is_null(y)) {
		if (y_i64(y, &i) || i < -1 || i > 511)
			return fail(e, y, "expected an exit status (0-255, or -1) for "
				    "'exit_status'");
		if (i >= 256) {
			/* program_end's encoding: 256 + signal */
			pr->signal = (int)(i - 256);
			i = -1;
		}
		pr->exit_status = (int)i;
	}
	y = y_get(d, prog, "signal");
	if (!y)
		y = y_get(d, prog, "term_signal");
	if (y && !y_is_null(y)) {
		if (y_i64(y, &i) == 0 && i >= 0 && i < 256)
			pr->signal = (int)i;
		else if (y->type == YAML_SCALAR_NODE && signal_number(sval(y)))
			pr->signal = signal_number(sval(y));
		else
			return fail(e, y, "expected a signal number or null for 'signal'");
		if (pr->signal)
			pr->exit_status = -1;
	}
	y = y_get(d, prog, "wall_seconds");
	if (y && !y_is_null(y)) {
		if (y_f64(y, &f) || !(f >= 0))
			return fail(e, y, "expected a number of seconds for 'wall_seconds'");
		pr->wall_seconds = f;
	}
	y = y_get(d, prog, "events");
	if (y && !y_is_null(y)) {
		if (y_i64(y, &i) || i < 0)
			return fail(e, y, "expected a count for 'events'");
		pr->events = i;
	}
	y = y_get(d, prog, "summarized_accesses");
	if (y && !y_is_null(y)) {
		if (y_i64(y, &i) || i < 0)
			return fail(e, y, "expected a count for 'summarized_accesses'");
		pr->summarized_accesses = i;
	}
	return 0;
}

static int cmp_site(const void *a, const void *b)
{
	const struct mn_site *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int load_sites(struct mn_profile *p, const struct err *e, yaml_document_t *d,
		      const yaml_node_t *sites)
{
	yaml_node_pair_t *pair;
	size_t n;
	int ret;

	if (want_map(e, sites, "sites", true))
		return -EINVAL;
	if (sites->type != YAML_MAPPING_NODE)
		return 0;
	n = sites->data.mapping.pairs.top - sites->data.mapping.pairs.start;
	if (p->nsites + n > p->sites_cap) {
		size_t cap = p->nsites + n;
		struct mn_site *s = realloc(p->sites, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		p->sites = s;
		p->sites_cap = cap;
	}
	for (pair = sites->data.mapping.pairs.start; pair < sites->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(d, pair->key);
		yaml_node_t *v = yaml_document_get_node(d, pair->value);
		struct mn_site *s = &p->sites[p->nsites];
		uint64_t id, u;

		if (y_u64(k, &id) || id > UINT32_MAX)
			return fail(e, k, "expected a site id (an integer from 0 to 4294967295) "
				    "as a key of 'sites', found %s%s%s%s", kind_name(k),
				    k->type == YAML_SCALAR_NODE ? " '" : "",
				    k->type == YAML_SCALAR_NODE ? sval(k) : "",
				    k->type == YAML_SCALAR_NODE ? "'" : "");
		if (v->type != YAML_MAPPING_NODE)
			return fail(e, v, "expected a mapping for site %" PRIu64 ", found %s", id,
				    kind_name(v));
		memset(s, 0, sizeof(*s));
		s->id = (uint32_t)id;
		if ((ret = opt_str(e, d, v, "kind", &s->kind)) ||
		    (ret = opt_str(e, d, v, "function", &s->function)) ||
		    (ret = opt_str(e, d, v, "file", &s->file)) ||
		    (ret = opt_str(e, d, v, "name", &s->name)) ||
		    (ret = opt_str(e, d, v, "fields", &s->fields)) ||
		    (ret = opt_str(e, d, v, "unit", &s->unit)))
			return ret;
		if ((ret = opt_uint(e, d, v, "line", UINT32_MAX, &u)))
			return ret;
		s->line = (uint32_t)u;
		if ((ret = opt_uint(e, d, v, "column", UINT32_MAX, &u)))
			return ret;
		s->column = (uint32_t)u;
		if ((ret = opt_uint(e, d, v, "type_size", UINT64_MAX, &s->type_size)))
			return ret;
		if ((ret = opt_uint(e, d, v, "loop", UINT32_MAX, &u)))
			return ret;
		s->loop = (uint32_t)u;
		p->nsites++;
	}
	return 0;
}

/* Sorts the sites and refuses an id listed twice. */
static int finish_sites(struct mn_profile *p, const struct err *e)
{
	if (p->nsites)
		qsort(p->sites, p->nsites, sizeof(*p->sites), cmp_site);
	for (size_t i = 1; i < p->nsites; i++)
		if (p->sites[i].id == p->sites[i - 1].id)
			return fail(e, NULL, "site %" PRIu32 " is listed twice in 'sites'",
				    p->sites[i].id);
	return 0;
}

static int load_modules(struct mn_profile *p, const struct err *e, const struct doc *dd,
			const yaml_node_t *mods)
{
	yaml_document_t *d = (yaml_document_t *)&dd->ydoc;
	yaml_node_pair_t *pair;
	size_t n;

	if (want_map(e, mods, "modules", true))
		return -EINVAL;
	if (mods->type != YAML_MAPPING_NODE)
		return 0;
	n = mods->data.mapping.pairs.top - mods->data.mapping.pairs.start;
	if (p->nmodules + n > p->modules_cap) {
		size_t cap = p->nmodules + n;
		struct module *m = realloc(p->modules, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		p->modules = m;
		p->modules_cap = cap;
	}
	for (pair = mods->data.mapping.pairs.start; pair < mods->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(d, pair->key);

		if (k->type != YAML_SCALAR_NODE || !*sval(k))
			return fail(e, k, "expected a module name as a key of 'modules', found %s",
				    kind_name(k));
		p->modules[p->nmodules].name = sval(k);
		p->modules[p->nmodules].key = k;
		p->modules[p->nmodules].section =
			doc_node(dd, yaml_document_get_node(d, pair->value));
		p->nmodules++;
	}
	return 0;
}

static int cmp_module(const void *a, const void *b)
{
	const struct module *x = *(const struct module *const *)a;
	const struct module *y = *(const struct module *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x > y) - (x < y);   /* one name: file order */
}

/*
 * Refuses a module with two sections, naming the first repeat in file order.  A sorted copy keeps
 * this O(n log n): comparing each name with every earlier one took 9 s for 100,000 modules.
 * Returns 0, -EINVAL or -ENOMEM.
 */
static int finish_modules(struct mn_profile *p, const struct err *e)
{
	const struct module **s, *dup = NULL;

	if (p->nmodules < 2)
		return 0;
	s = malloc(p->nmodules * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < p->nmodules; i++)
		s[i] = &p->modules[i];
	qsort(s, p->nmodules, sizeof(*s), cmp_module);
	for (size_t i = 1; i < p->nmodules; i++)
		if (!strcmp(s[i]->name, s[i - 1]->name) && (!dup || s[i] < dup))
			dup = s[i];
	free(s);
	if (dup)
		return fail(e, dup->key, "module '%s' has two sections", dup->name);
	return 0;
}

/* The optional `binary:` mapping (struct mn_binary). */
static int load_binary(struct mn_profile *p, const struct err *e, yaml_document_t *d,
		       const yaml_node_t *bin)
{
	uint64_t count;
	const char *h;
	int ret;

	p->binary.site_table_hash = "";
	if (!bin || y_is_null(bin))
		return 0;
	if ((ret = want_map(e, bin, "binary", false)))
		return ret;
	if ((ret = opt_uint(e, d, bin, "site_count", UINT32_MAX, &count)))
		return ret;
	p->binary.site_count = (uint32_t)count;
	if ((ret = opt_str(e, d, bin, "site_table_hash", &h)))
		return ret;
	if (*h && (strlen(h) != 16 || strspn(h, "0123456789abcdef") != 16))
		return fail(e, y_get(d, bin, "site_table_hash"),
			    "expected 16 lowercase hex digits for 'site_table_hash', found '%s'", h);
	p->binary.site_table_hash = h;
	return 0;
}

/* The first document: the header, and the first sites and sections. */
static int load_header(struct mn_profile *p, const struct err *e, struct doc *dd)
{
	yaml_document_t *d = &dd->ydoc;
	yaml_node_t *root = yaml_document_get_root_node(d), *y;
	int ret;

	if (root->type != YAML_MAPPING_NODE)
		return fail(e, NULL, "not a mnemo profile (the top level is %s, not a mapping)",
			    kind_name(root));
	y = y_get(d, root, "format");
	if (!y)
		return fail(e, NULL, "not a mnemo profile (no 'format' key)");
	if (y->type != YAML_SCALAR_NODE)
		return fail(e, y, "not a mnemo profile (format is %s)", kind_name(y));
	if (strcmp(sval(y), MN_PROFILE_FORMAT)) {
		if (!strncmp(sval(y), "mnemo-profile/", 14))
			return fail(e, NULL, "unsupported profile format '%s' "
				    "(this reader knows '%s')", sval(y), MN_PROFILE_FORMAT);
		return fail(e, NULL, "not a mnemo profile (format: '%s', expected '%s')", sval(y),
			    MN_PROFILE_FORMAT);
	}

	y = y_get(d, root, "complete");
	if (!y)
		return fail(e, root, "missing key 'complete'");
	if (y_bool(y, &p->complete))
		return fail(e, y, "expected true or false for 'complete'");
	if ((ret = opt_str(e, d, root, "incomplete_reason", &p->incomplete_reason)))
		return ret;

	if ((ret = load_program(p, e, d, y_get(d, root, "program"))))
		return ret;
	if ((ret = load_binary(p, e, d, y_get(d, root, "binary"))))
		return ret;
	if ((y = y_get(d, root, "sites")) && (ret = load_sites(p, e, d, y)))
		return ret;
	if ((y = y_get(d, root, "modules")) && (ret = load_modules(p, e, dd, y)))
		return ret;
	return 0;
}

/* A later document of a stream: more sites and sections. */
static int load_more(struct mn_profile *p, const struct err *e, struct doc *dd)
{
	yaml_document_t *d = &dd->ydoc;
	yaml_node_t *root = yaml_document_get_root_node(d), *y;
	int ret;

	if (y_is_null(root))
		return 0;
	if (root->type != YAML_MAPPING_NODE)
		return fail(e, root, "expected a mapping with 'sites' or 'modules' in this "
			    "document, found %s", kind_name(root));
	if ((y = y_get(d, root, "sites")) && (ret = load_sites(p, e, d, y)))
		return ret;
	if ((y = y_get(d, root, "modules")) && (ret = load_modules(p, e, dd, y)))
		return ret;
	return 0;
}

/*
 * libyaml 0.2.5's scanner looks at every open flow collection ([ or {) for each token it reads, so
 * a line of a million ['s, 1 MB, took an hour to refuse.  No profile nests flow collections more
 * than a few deep, so the reader feeds libyaml the file through input(), a few bytes at a time,
 * and stops at MAX_FLOW_DEPTH: the scanner is then never more than MAX_FLOW_DEPTH + INPUT_CHUNK
 * deep, and its cost stays linear in the file's length.  Block nesting costs libyaml nothing extra.
 */
#define MAX_FLOW_DEPTH 64
#define INPUT_CHUNK 64

struct input {
	const yaml_parser_t *ps;
	FILE *f;
	bool too_deep;     /* input() stopped at MAX_FLOW_DEPTH */
};

/* libyaml's read handler: yaml_parser_set_input_file()'s, plus the depth check. */
static int input(void *data, unsigned char *buf, size_t size, size_t *size_read)
{
	struct input *in = data;

	*size_read = 0;
	if (in->ps->flow_level > MAX_FLOW_DEPTH) {
		in->too_deep = true;
		return 0;
	}
	*size_read = fread(buf, 1, size < INPUT_CHUNK ? size : INPUT_CHUNK, in->f);
	return !ferror(in->f);
}

static int parse_error(const struct err *e, const yaml_parser_t *ps, const struct input *in)
{
	if (in->too_deep) {
		fail_at(e, &ps->mark, "more than %d levels of [ ] or { } nesting", MAX_FLOW_DEPTH);
		return -EINVAL;
	}
	switch (ps->error) {
	case YAML_MEMORY_ERROR:
		return -ENOMEM;
	case YAML_READER_ERROR:
		if (ps->problem_value != -1)
			fail(e, NULL, "%s: #%X at byte %zu", ps->problem, ps->problem_value,
			     ps->problem_offset);
		else
			fail(e, NULL, "%s at byte %zu", ps->problem, ps->problem_offset);
		return -EINVAL;
	default:
		if (ps->context)
			fail_at(e, &ps->problem_mark, "%s %s (line %zu)", ps->problem,
				  ps->context, ps->context_mark.line + 1);
		else
			fail_at(e, &ps->problem_mark, "%s", ps->problem ? ps->problem :
				  "not valid YAML");
		return -EINVAL;
	}
}

static struct doc *new_doc(struct mn_profile *p)
{
	struct doc **docs = realloc(p->docs, (p->ndocs + 1) * sizeof(*docs));
	struct doc *d;

	if (!docs)
		return NULL;
	p->docs = docs;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	return d;
}

/* Gives every node of d its handle. */
static int wrap_doc(struct mn_profile *p, struct doc *d)
{
	d->nnodes = d->ydoc.nodes.top - d->ydoc.nodes.start;
	d->nodes = calloc(d->nnodes ? d->nnodes : 1, sizeof(*d->nodes));
	if (!d->nodes)
		return -ENOMEM;
	for (size_t i = 0; i < d->nnodes; i++) {
		d->nodes[i].prof = p;
		d->nodes[i].doc = &d->ydoc;
		d->nodes[i].y = &d->ydoc.nodes.start[i];
	}
	return 0;
}

int mn_profile_open(struct mn_profile **pp, const char *path, char *errbuf, size_t errlen)
{
	struct err e = { path, errbuf, errlen };
	struct mn_profile *p;
	struct input in = { 0 };
	yaml_parser_t ps;
	struct stat st;
	FILE *f;
	int ret = 0;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	p = calloc(1, sizeof(*p));
	if (!p || !(p->path = strdup(path))) {
		free(p);
		return -ENOMEM;
	}
	e.path = p->path;
	f = fopen(path, "rb");
	if (!f || (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode) && (errno = EISDIR))) {
		ret = -errno;
		fail(&e, NULL, "%s", strerror(errno));
		if (f)
			fclose(f);
		free(p->path);
		free(p);
		return ret;
	}
	if (!yaml_parser_initialize(&ps)) {
		fclose(f);
		free(p->path);
		free(p);
		return -ENOMEM;
	}
	in.ps = &ps;
	in.f = f;
	yaml_parser_set_input(&ps, input, &in);

	for (;;) {
		struct doc *d = new_doc(p);

		if (!d) {
			ret = -ENOMEM;
			goto out;
		}
		if (!yaml_parser_load(&ps, &d->ydoc)) {
			free(d);
			ret = parse_error(&e, &ps, &in);
			goto out;
		}
		if (!yaml_document_get_root_node(&d->ydoc)) {
			/* end of the stream */
			yaml_document_delete(&d->ydoc);
			free(d);
			break;
		}
		p->docs[p->ndocs++] = d;
		if ((ret = wrap_doc(p, d)))
			goto out;
		ret = p->ndocs == 1 ? load_header(p, &e, d) : load_more(p, &e, d);
		if (ret)
			goto out;
	}
	if (ferror(f)) {
		ret = -EIO;
		fail(&e, NULL, "%s", strerror(EIO));
		goto out;
	}
	if (!p->ndocs) {
		ret = fail(&e, NULL, "not a mnemo profile (empty file)");
		goto out;
	}
	if (!(ret = finish_sites(p, &e)))
		ret = finish_modules(p, &e);
out:
	yaml_parser_delete(&ps);
	fclose(f);
	if (ret) {
		if (ret == -ENOMEM)
			fail(&e, NULL, "%s", strerror(ENOMEM));
		mn_profile_close(p);
		return ret;
	}
	*pp = p;
	return 0;
}

void mn_profile_close(struct mn_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->ndocs; i++) {
		yaml_document_delete(&p->docs[i]->ydoc);
		free(p->docs[i]->nodes);
		free(p->docs[i]);
	}
	free(p->docs);
	free(p->argv);
	free(p->sites);
	free(p->modules);
	free(p->path);
	free(p);
}
