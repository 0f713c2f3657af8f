/*
 * Parsing and validation of the event catalogue and the module specs, and the packing of the
 * events' arguments into wire records (spec.h says what the files look like and how packing
 * works).
 *
 * Files are read with libyaml's document API: the whole file becomes a node tree whose nodes carry
 * their position, so every complaint can name a file, a line and a column.  libyaml accepts
 * duplicate mapping keys; we reject them ourselves.  Every check fails with one message and
 * -EINVAL: a build should stop on a misspelt event name, not silently profile nothing.
 */
#include "spec.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

/* The heap events: a program whose modules use one of them links libmnemo-heap.a. */
static const char *const heap_events[] = { "heap_alloc", "heap_realloc", "heap_free" };
/*
 * The loop summary events: the framework sends them when summaries are on, never a module; the
 * last five (from loop_summary_open) only when mixed loops are on too.
 */
static const char *const summary_events[] = { "loop_summary_load", "loop_summary_store",
					      "loop_summary", "loop_summary_open", "mixed_load",
					      "mixed_store", "loop_summary_at",
					      "loop_summary_close" };
#define NSUMMARY_PLAIN 3  /* summary_events[] before the mixed loops' */
/* The framework's thread events: sent whatever the modules, with every argument (the profile
 * lists each thread's creator); they come once per thread. */
static const char *const thread_events[] = { "thread_start", "thread_end" };
/* The events of two entry points each, one for pointer values and one for the rest (abi.h). */
static const char *const access_events[] = { "load", "store" };

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* mn_spec_pack_summaries() pads odd records to even lengths: the longest must be even. */
_Static_assert(MN_WIRE_MAX_WORDS % 2 == 0, "a padded record must still fit");

/* ---- Messages ------------------------------------------------------------------------------- */

static void verrf(struct mn_spec_error *err, const char *path, const yaml_mark_t *mark,
		  const char *fmt, va_list ap)
{
	size_t len;

	if (mark)
		len = (size_t)snprintf(err->msg, sizeof(err->msg), "%s:%zu:%zu: ", path,
				       mark->line + 1, mark->column + 1);
	else
		len = (size_t)snprintf(err->msg, sizeof(err->msg), "%s: ", path);
	if (len < sizeof(err->msg))
		vsnprintf(err->msg + len, sizeof(err->msg) - len, fmt, ap);
}

/* Fills err with "<path>:<line>:<col>: <what>" (or "<path>: <what>" without a mark); -EINVAL. */
static int __attribute__((format(printf, 4, 5)))
errf(struct mn_spec_error *err, const char *path, const yaml_mark_t *mark, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verrf(err, path, mark, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Like errf() for a failed system call: "<path>: <what>: <strerror>"; returns -errno. */
static int sys_err(struct mn_spec_error *err, const char *path, const char *what, int errnum)
{
	snprintf(err->msg, sizeof(err->msg), "%s: %s: %s", path, what, strerror(errnum));
	return -errnum;
}

/* ---- YAML documents ------------------------------------------------------------------------- */

/* Turns a libyaml parser failure into a message: "<path>:<line>:<col>: <problem>". */
static int parse_err(struct mn_spec_error *err, const char *path, const yaml_parser_t *p)
{
	if (p->error == YAML_MEMORY_ERROR) {
		snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
		return -ENOMEM;
	}
	if (p->error == YAML_READER_ERROR)
		return errf(err, path, NULL, "%s at byte %zu",
			    p->problem ? p->problem : "unreadable", p->problem_offset);
	if (p->context)
		return errf(err, path, &p->problem_mark, "%s (%s at line %zu)",
			    p->problem ? p->problem : "invalid YAML", p->context,
			    p->context_mark.line + 1);
	return errf(err, path, &p->problem_mark, "%s", p->problem ? p->problem : "invalid YAML");
}

/*
 * Loads the single YAML document in path into *doc; fails when the file cannot be read, is not
 * valid YAML, is empty, or holds more than one document.  On success the caller deletes *doc.
 */
static int load_document(yaml_document_t *doc, const char *path, struct mn_spec_error *err)
{
	yaml_parser_t parser;
	yaml_document_t extra;
	FILE *f;
	int ret;

	f = fopen(path, "rb");
	if (!f)
		return sys_err(err, path, "cannot open", errno);
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
		return -ENOMEM;
	}
	yaml_parser_set_input_file(&parser, f);

	if (!yaml_parser_load(&parser, doc)) {
		if (ferror(f))
			ret = sys_err(err, path, "cannot read", EIO);
		else
			ret = parse_err(err, path, &parser);
		goto out;
	}
	if (!yaml_document_get_root_node(doc)) {
		ret = errf(err, path, NULL, "empty file, expected a YAML mapping");
		goto out_doc;
	}
	/* A second document would be ignored silently: refuse it, and syntax errors in it. */
	if (!yaml_parser_load(&parser, &extra)) {
		ret = parse_err(err, path, &parser);
		goto out_doc;
	}
	ret = 0;
	if (yaml_document_get_root_node(&extra))
		ret = errf(err, path, &yaml_document_get_root_node(&extra)->start_mark,
			   "a second YAML document; expected only one");
	yaml_document_delete(&extra);
	if (!ret)
		goto out;
out_doc:
	yaml_document_delete(doc);
out:
	yaml_parser_delete(&parser);
	fclose(f);
	return ret;
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return n->data.scalar.length ? "a scalar" : "nothing";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

/* The text of a non-empty scalar without NUL bytes, or NULL. */
static const char *scalar(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || !n->data.scalar.length ||
	    strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
		return NULL;
	return (const char *)n->data.scalar.value;
}

/* A decimal integer in 0..max, or -1. */
static long parse_uint(const char *s, unsigned long max)
{
	unsigned long v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > max)
			return -1;
	}
	return (long)v;
}

/* True for [a-z_][a-z0-9_]*: event and argument names, which become C identifiers. */
static bool ident_valid(const char *s)
{
	if (!s || !((*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/*
 * Walking a mapping: for (i = 0; i < map_len(m); i++) with map_key()/map_value().  Keys must be
 * names; duplicate keys are reported by check_keys().
 */
static size_t map_len(const yaml_node_t *m)
{
	return (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
}

static yaml_node_t *map_key(yaml_document_t *doc, const yaml_node_t *m, size_t i)
{
	return yaml_document_get_node(doc, m->data.mapping.pairs.start[i].key);
}

static yaml_node_t *map_value(yaml_document_t *doc, const yaml_node_t *m, size_t i)
{
	return yaml_document_get_node(doc, m->data.mapping.pairs.start[i].value);
}

/* Checks that every key of mapping m is a name, given at most once. */
static int check_keys(yaml_document_t *doc, const yaml_node_t *m, const char *path,
		      struct mn_spec_error *err)
{
	for (size_t i = 0; i < map_len(m); i++) {
		const yaml_node_t *k = map_key(doc, m, i);
		const char *name = scalar(k);

		if (!name)
			return errf(err, path, &k->start_mark, "expected a name as key, got %s",
				    node_kind(k));
		for (size_t j = 0; j < i; j++) {
			const yaml_node_t *prev = map_key(doc, m, j);

			if (!strcmp(name, scalar(prev)))
				return errf(err, path, &k->start_mark,
					    "duplicate key '%s' (first at line %zu)", name,
					    prev->start_mark.line + 1);
		}
	}
	return 0;
}

/* The value of key in mapping m, or NULL. */
static yaml_node_t *map_get(yaml_document_t *doc, const yaml_node_t *m, const char *key)
{
	for (size_t i = 0; i < map_len(m); i++)
		if (!strcmp(scalar(map_key(doc, m, i)), key))
			return map_value(doc, m, i);
	return NULL;
}

/* Fails on the first key of m not in the NULL-terminated list known. */
static int check_known_keys(yaml_document_t *doc, const yaml_node_t *m, const char *const *known,
			    const char *what, const char *path, struct mn_spec_error *err)
{
	for (size_t i = 0; i < map_len(m); i++) {
		const yaml_node_t *k = map_key(doc, m, i);
		const char *name = scalar(k);
		char list[256] = "";
		size_t j;

		for (j = 0; known[j] && strcmp(known[j], name); j++)
			;
		if (known[j])
			continue;
		for (j = 0; known[j]; j++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 j ? ", " : "", known[j]);
		return errf(err, path, &k->start_mark, "unknown key '%s' in %s (known: %s)", name,
			    what, list);
	}
	return 0;
}

/* A mapping node with valid, unique, known keys, or an error naming what was expected. */
static int expect_mapping(yaml_document_t *doc, const yaml_node_t *n, const char *const *known,
			  const char *what, const char *path, struct mn_spec_error *err)
{
	int ret;

	if (n->type != YAML_MAPPING_NODE)
		return errf(err, path, &n->start_mark, "%s: expected a mapping, got %s", what,
			    node_kind(n));
	ret = check_keys(doc, n, path, err);
	if (!ret && known)
		ret = check_known_keys(doc, n, known, what, path, err);
	return ret;
}

/* "what: " for messages about a part of a file, nothing for its top level (what == NULL). */
#define W(what) (what) ? (what) : "", (what) ? ": " : ""

/* The non-empty scalar under key of mapping m, or an error "missing" / "expected". */
static int get_string(const char **out, yaml_document_t *doc, const yaml_node_t *m,
		      const char *key, const char *what, const char *path,
		      struct mn_spec_error *err)
{
	const yaml_node_t *v = map_get(doc, m, key);

	if (!v)
		return errf(err, path, &m->start_mark, "%s%smissing '%s:'", W(what), key);
	*out = scalar(v);
	if (!*out)
		return errf(err, path, &v->start_mark,
			    "%s%s'%s' must be a non-empty string, got %s", W(what), key,
			    node_kind(v));
	return 0;
}

/* The integer under key of mapping m, in min..max. */
static int get_uint(unsigned *out, yaml_document_t *doc, const yaml_node_t *m, const char *key,
		    unsigned min, unsigned max, const char *what, const char *path,
		    struct mn_spec_error *err)
{
	const yaml_node_t *v = map_get(doc, m, key);
	long x;

	if (!v)
		return errf(err, path, &m->start_mark, "%s%smissing '%s:'", W(what), key);
	x = parse_uint(scalar(v), max);
	if (x < (long)min)
		return errf(err, path, &v->start_mark, "%s%s'%s' must be an integer in %u..%u",
			    W(what), key, min, max);
	*out = (unsigned)x;
	return 0;
}

/* ---- The catalogue -------------------------------------------------------------------------- */

static const char *const catalogue_keys[] = { "format", "events", NULL };
static const char *const event_keys[] = { "code", "doc", "args", NULL };
static const char *const arg_keys[] = { "name", "bits", "doc", NULL };

/* Parses one argument of event ev from node n. */
static int parse_arg(struct mn_spec_arg *a, yaml_document_t *doc, const yaml_node_t *n,
		     const struct mn_spec_event *ev, const char *path, struct mn_spec_error *err)
{
	const char *name, *docstr;
	char what[96];
	int ret;

	snprintf(what, sizeof(what), "argument of event '%s'", ev->name);
	ret = expect_mapping(doc, n, arg_keys, what, path, err);
	if (!ret)
		ret = get_string(&name, doc, n, "name", what, path, err);
	if (ret)
		return ret;
	if (!ident_valid(name))
		return errf(err, path, &map_get(doc, n, "name")->start_mark,
			    "argument name '%s' is not [a-z_][a-z0-9_]*", name);
	for (unsigned i = 0; i < ev->nargs; i++)
		if (!strcmp(ev->arg[i].name, name))
			return errf(err, path, &n->start_mark,
				    "event '%s' has two arguments named '%s' (first at line %u)",
				    ev->name, name, ev->arg[i].line);
	snprintf(what, sizeof(what), "argument '%s' of event '%s'", name, ev->name);
	ret = get_uint(&a->bits, doc, n, "bits", 1, 64, what, path, err);
	if (!ret)
		ret = get_string(&docstr, doc, n, "doc", what, path, err);
	if (ret)
		return ret;
	a->name = strdup(name);
	a->doc = strdup(docstr);
	a->line = (unsigned)n->start_mark.line + 1;
	a->column = (unsigned)n->start_mark.column + 1;
	return a->name && a->doc ? 0 : -ENOMEM;
}

/* Parses the event called name, whose definition is node n, into ev. */
static int parse_event(struct mn_spec_event *ev, const struct mn_catalogue *c,
		       yaml_document_t *doc, const yaml_node_t *key, const yaml_node_t *n,
		       struct mn_spec_error *err)
{
	const char *name = scalar(key), *docstr;
	const yaml_node_t *args;
	char what[96];
	int ret;

	if (!ident_valid(name))
		return errf(err, c->path, &key->start_mark,
			    "event name '%s' is not [a-z_][a-z0-9_]*", name);
	snprintf(what, sizeof(what), "event '%s'", name);
	ret = expect_mapping(doc, n, event_keys, what, c->path, err);
	if (!ret)
		ret = get_uint(&ev->code, doc, n, "code", 1, MN_WIRE_MAX_EVENTS - 1, what, c->path,
			       err);
	if (!ret)
		ret = get_string(&docstr, doc, n, "doc", what, c->path, err);
	if (ret)
		return ret;
	if (c->by_code[ev->code] >= 0)
		return errf(err, c->path, &map_get(doc, n, "code")->start_mark,
			    "event '%s': code %u is already used by event '%s' (line %u)", name,
			    ev->code, c->event[c->by_code[ev->code]].name,
			    c->event[c->by_code[ev->code]].line);

	ev->name = strdup(name);
	ev->doc = strdup(docstr);
	if (!ev->name || !ev->doc)
		return -ENOMEM;
	ev->line = (unsigned)key->start_mark.line + 1;
	ev->column = (unsigned)key->start_mark.column + 1;

	args = map_get(doc, n, "args");
	if (!args)
		return errf(err, c->path, &n->start_mark, "%s: missing 'args:' ([] for none)",
			    what);
	if (args->type != YAML_SEQUENCE_NODE)
		return errf(err, c->path, &args->start_mark, "%s: 'args' must be a list, got %s",
			    what, node_kind(args));
	for (yaml_node_item_t *it = args->data.sequence.items.start;
	     it < args->data.sequence.items.top; it++) {
		const yaml_node_t *a = yaml_document_get_node(doc, *it);

		if (ev->nargs == MN_WIRE_MAX_ARGS)
			return errf(err, c->path, &a->start_mark,
				    "event '%s' has more than %d arguments", name,
				    MN_WIRE_MAX_ARGS);
		ret = parse_arg(&ev->arg[ev->nargs], doc, a, ev, c->path, err);
		if (ret)
			return ret;
		ev->nargs++;
	}
	return 0;
}

/* Parses the document root into c (c->path set, c->event[] big enough). */
static int parse_catalogue(struct mn_catalogue *c, yaml_document_t *doc, struct mn_spec_error *err)
{
	const yaml_node_t *root = yaml_document_get_root_node(doc), *events;
	const char *format;
	int ret;

	ret = expect_mapping(doc, root, catalogue_keys, "the catalogue", c->path, err);
	if (!ret)
		ret = get_string(&format, doc, root, "format", NULL, c->path, err);
	if (ret)
		return ret;
	if (strcmp(format, MN_SPEC_FORMAT))
		return errf(err, c->path, &map_get(doc, root, "format")->start_mark,
			    "format '%s' is not %s", format, MN_SPEC_FORMAT);
	events = map_get(doc, root, "events");
	if (!events)
		return errf(err, c->path, &root->start_mark, "missing 'events:'");
	ret = expect_mapping(doc, events, NULL, "'events'", c->path, err);
	if (ret)
		return ret;
	if (map_len(events) > MN_WIRE_MAX_EVENTS - 1)
		return errf(err, c->path, &events->start_mark, "more than %d events",
			    MN_WIRE_MAX_EVENTS - 1);
	for (size_t i = 0; i < map_len(events); i++) {
		struct mn_spec_event *ev = &c->event[c->nevents];

		ret = parse_event(ev, c, doc, map_key(doc, events, i), map_value(doc, events, i),
				  err);
		if (ret)
			return ret;
		c->by_code[ev->code] = (int)c->nevents++;
	}
	return 0;
}

/**
 * mn_spec_catalogue_load - read and validate the event catalogue; see spec.h.
 */
int mn_spec_catalogue_load(struct mn_catalogue **cp, const char *path, struct mn_spec_error *err)
{
	yaml_document_t doc;
	struct mn_catalogue *c;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		goto nomem;
	for (unsigned i = 0; i < MN_WIRE_MAX_EVENTS; i++)
		c->by_code[i] = -1;
	c->path = strdup(path);
	c->event = calloc(MN_WIRE_MAX_EVENTS, sizeof(*c->event));
	if (!c->path || !c->event)
		goto nomem;

	ret = load_document(&doc, path, err);
	if (ret)
		goto fail;
	ret = parse_catalogue(c, &doc, err);
	yaml_document_delete(&doc);
	if (ret)
		goto fail;
	*cp = c;
	return 0;

nomem:
	ret = -ENOMEM;
fail:
	if (ret == -ENOMEM)
		snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
	mn_spec_catalogue_free(c);
	return ret;
}

/**
 * mn_spec_catalogue_free - free a catalogue from mn_spec_catalogue_load(); NULL is fine.
 */
void mn_spec_catalogue_free(struct mn_catalogue *c)
{
	if (!c)
		return;
	for (unsigned i = 0; c->event && i < MN_WIRE_MAX_EVENTS; i++) {
		free(c->event[i].name);
		free(c->event[i].doc);
		for (unsigned j = 0; j < MN_WIRE_MAX_ARGS; j++) {
			free(c->event[i].arg[j].name);
			free(c->event[i].arg[j].doc);
		}
	}
	free(c->event);
	free(c->path);
	free(c);
}

/**
 * mn_spec_event_find - the catalogue's event called name, or NULL.
 */
const struct mn_spec_event *mn_spec_event_find(const struct mn_catalogue *c, const char *name)
{
	for (unsigned i = 0; i < c->nevents; i++)
		if (!strcmp(c->event[i].name, name))
			return &c->event[i];
	return NULL;
}

/**
 * mn_spec_arg_find - the index of ev's argument called name, or -1.
 */
int mn_spec_arg_find(const struct mn_spec_event *ev, const char *name)
{
	for (unsigned i = 0; i < ev->nargs; i++)
		if (!strcmp(ev->arg[i].name, name))
			return (int)i;
	return -1;
}

/* ---- Module specs --------------------------------------------------------------------------- */

static const char *const module_keys[] = { "module", "doc", "default", "shard", "shard_shift",
					   "accesses", "sample", "events", NULL };

/* "load, store, ..." or "site, address, ..." into buf. */
static void event_names(char *buf, size_t size, const struct mn_catalogue *c)
{
	buf[0] = 0;
	for (unsigned i = 0; i < c->nevents; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "",
			 c->event[i].name);
}

static void arg_names(char *buf, size_t size, const struct mn_spec_event *ev)
{
	buf[0] = 0;
	for (unsigned i = 0; i < ev->nargs; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "",
			 ev->arg[i].name);
	if (!ev->nargs)
		snprintf(buf, size, "none");
}

/* Parses `events:` (node n) into m: each key a catalogue event, each value a list of its args. */
static int parse_module_events(struct mn_module_spec *m, const struct mn_catalogue *c,
			       yaml_document_t *doc, const yaml_node_t *n,
			       struct mn_spec_error *err)
{
	char known[512];
	int ret;

	ret = expect_mapping(doc, n, NULL, "'events'", m->path, err);
	if (ret)
		return ret;
	for (size_t i = 0; i < map_len(n); i++) {
		const yaml_node_t *k = map_key(doc, n, i), *v = map_value(doc, n, i);
		const struct mn_spec_event *ev = mn_spec_event_find(c, scalar(k));

		if (!ev) {
			event_names(known, sizeof(known), c);
			return errf(err, m->path, &k->start_mark, "unknown event '%s' (known: %s)",
				    scalar(k), known);
		}
		if (mn_spec_summary_event(ev))
			return errf(err, m->path, &k->start_mark,
				    "event '%s' is not for modules: the specializer sends it when "
				    "loop summaries are on, and the backend expands it", ev->name);
		/* Each site's values are published by the one worker that gets its events. */
		if (!strcmp(ev->name, "value") && m->shard == MN_SHARD_ADDRESS)
			return errf(err, m->path, &k->start_mark,
				    "a module taking 'value' shards by site or not at all (shard: "
				    "site or none), not by address: one worker publishes each "
				    "site's values (backend.h, mn_run_value_seen())");
		if (v->type != YAML_SEQUENCE_NODE)
			return errf(err, m->path, &v->start_mark,
				    "event '%s': expected a list of its arguments, as [%s], got %s",
				    ev->name, ev->nargs ? ev->arg[0].name : "", node_kind(v));
		m->events |= UINT32_C(1) << ev->code;
		m->event_line[ev->code] = (unsigned)k->start_mark.line + 1;

		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			const yaml_node_t *a = yaml_document_get_node(doc, *it);
			const char *name = scalar(a);
			int idx = name ? mn_spec_arg_find(ev, name) : -1;

			if (!name)
				return errf(err, m->path, &a->start_mark,
					    "event '%s': expected an argument name, got %s",
					    ev->name, node_kind(a));
			if (idx < 0) {
				arg_names(known, sizeof(known), ev);
				return errf(err, m->path, &a->start_mark,
					    "unknown argument '%s' of event '%s' (known: %s)", name,
					    ev->name, known);
			}
			if (m->args[ev->code] & (1u << idx))
				return errf(err, m->path, &a->start_mark,
					    "event '%s': argument '%s' listed twice", ev->name,
					    name);
			m->args[ev->code] |= (uint8_t)(1u << idx);
		}
	}
	return 0;
}

/* Parses `shard:` and `shard_shift:` of the root mapping into m. */
static int parse_shard(struct mn_module_spec *m, yaml_document_t *doc, const yaml_node_t *root,
		       struct mn_spec_error *err)
{
	const yaml_node_t *shard = map_get(doc, root, "shard");
	const yaml_node_t *shift = map_get(doc, root, "shard_shift");
	const char *s = shard ? scalar(shard) : "none";

	if (!s || (strcmp(s, "none") && strcmp(s, "site") && strcmp(s, "address")))
		return errf(err, m->path, &shard->start_mark,
			    "shard must be none, site or address, got '%s'", s ? s : "nothing");
	if (!strcmp(s, "address")) {
		m->shard = MN_SHARD_ADDRESS;
		if (!shift)
			return errf(err, m->path, &shard->start_mark,
				    "'shard: address' needs 'shard_shift: N' (0..47): workers own "
				    "addresses by address >> N");
		return get_uint(&m->shard_shift, doc, root, "shard_shift", 0, 47, NULL, m->path,
				err);
	}
	m->shard = !strcmp(s, "site") ? MN_SHARD_SITE : MN_SHARD_NONE;
	if (shift)
		return errf(err, m->path, &shift->start_mark,
			    "shard_shift is only for 'shard: address' (shard is %s)", s);
	return 0;
}

/* Parses `accesses:` of the root mapping into m: all (the default) or pointer. */
static int parse_accesses(struct mn_module_spec *m, yaml_document_t *doc, const yaml_node_t *root,
			  struct mn_spec_error *err)
{
	const yaml_node_t *acc = map_get(doc, root, "accesses");
	const char *s = acc ? scalar(acc) : "all";

	if (!s || (strcmp(s, "all") && strcmp(s, "pointer")))
		return errf(err, m->path, &acc->start_mark,
			    "accesses must be all or pointer, got '%s'", s ? s : "nothing");
	m->accesses = !strcmp(s, "pointer") ? MN_ACCESSES_POINTER : MN_ACCESSES_ALL;
	return 0;
}

/*
 * Parses `default:` of the root mapping into m: true or false (the default), nothing else, so that
 * a module joins builds without -m only when its spec says so in so many words.
 */
static int parse_default(struct mn_module_spec *m, yaml_document_t *doc, const yaml_node_t *root,
			 struct mn_spec_error *err)
{
	const yaml_node_t *v = map_get(doc, root, "default");
	const char *s = v ? scalar(v) : "false";

	if (!s || (strcmp(s, "true") && strcmp(s, "false")))
		return errf(err, m->path, &v->start_mark, "default must be true or false, got '%s'",
			    s ? s : node_kind(v));
	m->is_default = !strcmp(s, "true");
	return 0;
}

/*
 * Parses `sample:` of the root mapping into m: the name of the environment variable giving N.  Run
 * after the events: it needs load or store among them.
 */
static int parse_sample(struct mn_module_spec *m, const struct mn_catalogue *c,
			yaml_document_t *doc, const yaml_node_t *root, struct mn_spec_error *err)
{
	const yaml_node_t *v = map_get(doc, root, "sample");
	const struct mn_spec_event *load = mn_spec_event_find(c, "load");
	const struct mn_spec_event *store = mn_spec_event_find(c, "store");
	uint32_t accesses = 0;
	const char *s;

	if (!v)
		return 0;
	s = scalar(v);
	if (!s || !mn_spec_sample_var_valid(s))
		return errf(err, m->path, &v->start_mark,
			    "sample must name the environment variable that sets N, "
			    "MNEMO_[A-Z0-9_]+ of at most %d characters, got '%s'",
			    MN_SPEC_SAMPLE_MAX - 1, s ? s : node_kind(v));
	if (load)
		accesses |= UINT32_C(1) << load->code;
	if (store)
		accesses |= UINT32_C(1) << store->code;
	if (!(m->events & accesses))
		return errf(err, m->path, &v->start_mark,
			    "sample (%s) samples loads and stores, but the module lists neither",
			    s);
	m->sample = strdup(s);
	m->sample_line = (unsigned)v->start_mark.line + 1;
	return m->sample ? 0 : -ENOMEM;
}

/* Parses the document root into m (m->path set). */
static int parse_module(struct mn_module_spec *m, const struct mn_catalogue *c,
			yaml_document_t *doc, const char *folder, struct mn_spec_error *err)
{
	const yaml_node_t *root = yaml_document_get_root_node(doc), *events;
	const char *name, *docstr;
	int ret;

	ret = expect_mapping(doc, root, module_keys, "the module spec", m->path, err);
	if (ret)
		return ret;
	if (!map_get(doc, root, "module"))
		return errf(err, m->path, &root->start_mark,
			    "missing 'module:' (the module's name, as its folder)");
	ret = get_string(&name, doc, root, "module", NULL, m->path, err);
	if (ret)
		return ret;
	if (!mn_spec_module_name_valid(name))
		return errf(err, m->path, &map_get(doc, root, "module")->start_mark,
			    "module name '%s' is not [a-z0-9][a-z0-9_-]* of at most %d characters",
			    name, MN_SPEC_NAME_MAX - 1);
	if (folder && strcmp(name, folder))
		return errf(err, m->path, &map_get(doc, root, "module")->start_mark,
			    "module '%s' does not match its folder '%s'", name, folder);
	ret = get_string(&docstr, doc, root, "doc", NULL, m->path, err);
	if (ret)
		return ret;
	if (strchr(docstr, '\n'))
		return errf(err, m->path, &map_get(doc, root, "doc")->start_mark,
			    "doc must be one line");
	ret = parse_shard(m, doc, root, err);
	if (!ret)
		ret = parse_accesses(m, doc, root, err);
	if (!ret)
		ret = parse_default(m, doc, root, err);
	if (ret)
		return ret;
	events = map_get(doc, root, "events");
	if (!events)
		return errf(err, m->path, &root->start_mark,
			    "missing 'events:' (the events the module uses)");
	ret = parse_module_events(m, c, doc, events, err);
	if (!ret)
		ret = parse_sample(m, c, doc, root, err);
	if (ret)
		return ret;
	m->name = strdup(name);
	m->doc = strdup(docstr);
	return m->name && m->doc ? 0 : -ENOMEM;
}

/**
 * mn_spec_module_load - read and validate a module spec against a catalogue; see spec.h.
 */
int mn_spec_module_load(struct mn_module_spec **mp, const struct mn_catalogue *c, const char *path,
			const char *folder, struct mn_spec_error *err)
{
	yaml_document_t doc;
	struct mn_module_spec *m;
	int ret;

	m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = load_document(&doc, path, err);
	if (ret)
		goto fail;
	ret = parse_module(m, c, &doc, folder, err);
	yaml_document_delete(&doc);
	if (ret)
		goto fail;
	*mp = m;
	return 0;

fail:
	if (ret == -ENOMEM)
		snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
	mn_spec_module_free(m);
	return ret;
}

/**
 * mn_spec_module_free - free a spec from mn_spec_module_load(); NULL is fine.
 */
void mn_spec_module_free(struct mn_module_spec *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->name);
	free(m->doc);
	free(m->sample);
	free(m);
}

/**
 * mn_spec_module_name_valid - whether name can name a module; see spec.h.
 */
bool mn_spec_module_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= MN_SPEC_NAME_MAX || !((*name >= 'a' && *name <= 'z') ||
						 (*name >= '0' && *name <= '9')))
		return false;
	for (const char *s = name; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-'))
			return false;
	return true;
}

/**
 * mn_spec_sample_var_valid - whether name can be a `sample:` variable; see spec.h.
 */
bool mn_spec_sample_var_valid(const char *name)
{
	size_t len = strlen(name);

	if (len <= 6 || len >= MN_SPEC_SAMPLE_MAX || strncmp(name, "MNEMO_", 6))
		return false;
	for (const char *s = name + 6; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/**
 * mn_spec_module_names - the sorted names of the modules in dir; see spec.h.
 */
int mn_spec_module_names(char ***namesp, const char *dir, struct mn_spec_error *err)
{
	char **names = NULL, **grown, path[4096];
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return sys_err(err, dir, "cannot open", errno);
	while ((de = readdir(d))) {
		if (!mn_spec_module_name_valid(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/events.yaml", dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (n + 2 > cap) {
			cap = cap ? 2 * cap : 8;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown)
				goto nomem;
			names = grown;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto nomem;
		names[++n] = NULL;
	}
	closedir(d);
	if (!names && !(names = calloc(1, sizeof(*names))))
		return sys_err(err, dir, "cannot list", ENOMEM);
	qsort(names, n, sizeof(*names), cmp_names);
	*namesp = names;
	return 0;

nomem:
	closedir(d);
	if (names)
		names[n] = NULL;
	mn_spec_names_free(names);
	return sys_err(err, dir, "cannot list", ENOMEM);
}

/**
 * mn_spec_names_free - free a list from mn_spec_module_names(); NULL is fine.
 */
void mn_spec_names_free(char **names)
{
	for (char **p = names; p && *p; p++)
		free(*p);
	free(names);
}

/* ---- Packing -------------------------------------------------------------------------------- */

/* The error for an event whose used arguments (bit i: argument i) do not fit; -EINVAL. */
static int unpackable(struct mn_spec_error *err, const struct mn_catalogue *c,
		      const struct mn_spec_event *ev, unsigned used)
{
	yaml_mark_t mark = { .line = ev->line - 1, .column = ev->column - 1 };
	char names[256] = "";

	for (unsigned i = 0; i < ev->nargs; i++)
		if (used & (1u << i))
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s:%u",
				 names[0] ? ", " : "", ev->arg[i].name, ev->arg[i].bits);
	return errf(err, c->path, &mark,
		    "event '%s': arguments %s do not fit in %d words after the 8-bit code",
		    ev->name, names, MN_WIRE_MAX_WORDS);
}

/*
 * Places the arguments of ev in used (bit i: argument i) into out->arg[ev->code], first fit, and
 * returns the record's length in words, or 0 when they do not fit in MN_WIRE_MAX_WORDS.
 */
static unsigned place_args(struct mn_wire *out, const struct mn_spec_event *ev, unsigned used)
{
	unsigned fill[MN_WIRE_MAX_WORDS] = { 8 };  /* bits used per word; the code in w0 */
	unsigned nwords = 1;

	for (unsigned a = 0; a < ev->nargs; a++) {
		struct mn_wire_arg *wa = &out->arg[ev->code][a];
		unsigned bits = ev->arg[a].bits, k;

		if (!(used & (1u << a)))
			continue;
		/* First fit: the first word with `bits` free bits above its used ones. */
		for (k = 0; k < nwords && 64 - fill[k] < bits; k++)
			;
		if (k == MN_WIRE_MAX_WORDS)
			return 0;
		if (k == nwords)
			fill[nwords++] = 0;
		wa->word = (uint8_t)k;
		wa->shift = (uint8_t)fill[k];
		wa->bits = (uint8_t)bits;
		fill[k] += bits;
	}
	return nwords;
}

/*
 * The wire's flags for modules m[]: MN_WIRE_POINTER when some load or store event is listed both
 * by a module with `accesses: pointer` and by one with `accesses: all` (spec.h), else 0.
 */
static uint8_t pointer_flag(const struct mn_catalogue *c, const struct mn_module_spec *const *m,
			    unsigned n)
{
	for (size_t i = 0; i < ARRAY_SIZE(access_events); i++) {
		const struct mn_spec_event *ev = mn_spec_event_find(c, access_events[i]);
		bool pointer = false, all = false;

		for (unsigned j = 0; ev && j < n; j++) {
			if (!(m[j]->events & UINT32_C(1) << ev->code))
				continue;
			if (m[j]->accesses == MN_ACCESSES_POINTER)
				pointer = true;
			else
				all = true;
		}
		if (pointer && all)
			return MN_WIRE_POINTER;
	}
	return 0;
}

/**
 * mn_spec_pack - the wire format for a set of modules; see spec.h for the rules.
 */
int mn_spec_pack(struct mn_wire *w, const struct mn_catalogue *c,
		 const struct mn_module_spec *const *m, unsigned n, struct mn_spec_error *err)
{
	struct mn_wire out;
	unsigned longest = 0;   /* words of the longest record */

	memset(&out, 0, sizeof(out));
	for (unsigned e = 0; e < c->nevents; e++) {
		const struct mn_spec_event *ev = &c->event[e];
		unsigned nwords, used = 0;
		bool sent = false;
		int site;

		for (unsigned i = 0; i < n; i++) {
			if (m[i]->events & (UINT32_C(1) << ev->code)) {
				sent = true;
				used |= m[i]->args[ev->code];
			}
		}
		if (!sent)
			continue;
		/* The backend shards by site: it goes with every event that has one. */
		site = mn_spec_arg_find(ev, "site");
		if (site >= 0)
			used |= 1u << site;

		nwords = place_args(&out, ev, used);
		if (!nwords)
			return unpackable(err, c, ev, used);
		out.nwords[ev->code] = (uint8_t)nwords;
		longest = nwords > longest ? nwords : longest;
	}
	/*
	 * Fixed 16-byte records when the longest is 2 words: 1-word records get a zero word 1.  The
	 * backend then decodes 8 to 10% faster (a record never straddles a cache line), for 8 more
	 * bytes per 1-word event, which the producer, faster than the backend, affords.  Measured with
	 * the null module's events less the heap ones (loads, stores, function and loop events) on the
	 * bench programs aos and linkedlist.  Longer records stay variable: padding a 2-word load to 3
	 * costs more than it could save.
	 */
	if (longest == 2)
		for (unsigned code = 1; code < MN_WIRE_MAX_EVENTS; code++)
			if (out.nwords[code] == 1)
				out.nwords[code] = 2;
	/* The framework's thread events, after: they decide nothing of the modules' records. */
	for (unsigned e = 0; e < c->nevents; e++) {
		const struct mn_spec_event *ev = &c->event[e];
		unsigned used = (1u << ev->nargs) - 1, nwords;

		if (!mn_spec_thread_event(ev))
			continue;
		nwords = place_args(&out, ev, used);
		if (!nwords)
			return unpackable(err, c, ev, used);
		out.nwords[ev->code] = (uint8_t)(nwords == 1 && longest == 2 ? 2 : nwords);
	}
	out.flags = pointer_flag(c, m, n);
	*w = out;
	return 0;
}

/**
 * mn_spec_thread_event - whether ev is one of the framework's thread events; see spec.h.
 */
bool mn_spec_thread_event(const struct mn_spec_event *ev)
{
	for (size_t i = 0; i < ARRAY_SIZE(thread_events); i++)
		if (!strcmp(ev->name, thread_events[i]))
			return true;
	return false;
}

/**
 * mn_spec_uses_heap - whether the wire format sends a heap event (link libmnemo-heap.a).
 */
bool mn_spec_uses_heap(const struct mn_wire *w, const struct mn_catalogue *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(heap_events); i++) {
		const struct mn_spec_event *ev = mn_spec_event_find(c, heap_events[i]);

		if (ev && w->nwords[ev->code])
			return true;
	}
	return false;
}

/**
 * mn_spec_summary_event - whether ev is one of the loop summary events; see spec.h.
 */
bool mn_spec_summary_event(const struct mn_spec_event *ev)
{
	for (size_t i = 0; i < ARRAY_SIZE(summary_events); i++)
		if (!strcmp(ev->name, summary_events[i]))
			return true;
	return false;
}

/**
 * mn_spec_pack_summaries - add the loop summary events to a wire format; see spec.h.
 */
int mn_spec_pack_summaries(struct mn_wire *w, const struct mn_catalogue *c, bool mixed,
			   struct mn_spec_error *err)
{
	size_t nevents = mixed ? ARRAY_SIZE(summary_events) : NSUMMARY_PLAIN;
	struct mn_wire out = *w;
	bool even = true;       /* every record of w is a multiple of 16 bytes */

	for (unsigned code = 1; code < MN_WIRE_MAX_EVENTS; code++)
		if (w->nwords[code] % 2)
			even = false;
	for (size_t i = 0; i < nevents; i++) {
		const struct mn_spec_event *ev = mn_spec_event_find(c, summary_events[i]);
		unsigned used, nwords;

		if (!ev)
			continue;
		used = (1u << ev->nargs) - 1;
		memset(out.arg[ev->code], 0, sizeof(out.arg[ev->code]));
		nwords = place_args(&out, ev, used);
		if (!nwords)
			return unpackable(err, c, ev, used);
		/* Keep records on 16-byte boundaries, as the fixed 16-byte records are (above). */
		if (even && nwords % 2)
			nwords++;
		out.nwords[ev->code] = (uint8_t)nwords;
	}
	*w = out;
	return 0;
}

/**
 * mn_spec_mixed_events - whether c has every event of mixed loops; see spec.h.
 */
bool mn_spec_mixed_events(const struct mn_catalogue *c)
{
	for (size_t i = NSUMMARY_PLAIN; i < ARRAY_SIZE(summary_events); i++)
		if (!mn_spec_event_find(c, summary_events[i]))
			return false;
	return true;
}
