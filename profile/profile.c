/*
 * The profile writer: a thin layer over libyaml's emitter that modules and the backend use to write
 * profiles (profile.h).  It adds three things libyaml leaves to its caller:
 *
 *   - scalar styles that read back as the type they were written as: numbers and booleans plain,
 *     strings quoted only when a YAML 1.1 or 1.2 resolver would take them for something else;
 *   - shortest round-tripping doubles (the fewest digits that strtod reads back exactly);
 *   - a structure check (keys only where a key belongs, balanced ends) and sticky errors, so an
 *     emit function writes straight through and looks at one return value, mn_prof_close()'s.
 *
 * It also remembers which site ids were written (mn_prof_site) in a growable bitmap, from which the
 * backend builds the profile's `sites:` table.  Output is deterministic: the same calls give the
 * same bytes.  Documents start lazily at the first node; a node after a complete root starts
 * another document ("a stream of documents is fine for very large profiles").
 */
#define _GNU_SOURCE   /* mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "profile.h"
#include "profile_internal.h"

enum frame_kind {
	FRAME_SEQ,
	FRAME_MAP_KEY,      /* a mapping that expects a key (or its end) next */
	FRAME_MAP_VALUE,    /* a mapping that expects the value of the key just written */
};

struct mn_prof {
	yaml_emitter_t em;
	FILE *f;
	int err;                /* first error, sticky: 0 or -errno */
	bool in_doc;            /* a document is open */
	bool root_done;         /* ... and its root node is complete */
	unsigned ndocs;
	uint8_t *stack;         /* enum frame_kind per open collection */
	size_t depth, cap;
	uint64_t *sites;        /* bitmap of site ids written with mn_prof_site() */
	size_t site_words;
};

static void set_err(struct mn_prof *p, int err)
{
	if (!p->err)
		p->err = err;
}

/* libyaml's output callback: straight into the caller's FILE, keeping errno for the error. */
static int write_file(void *data, unsigned char *buf, size_t size)
{
	struct mn_prof *p = data;

	errno = 0;
	if (fwrite(buf, 1, size, p->f) == size)
		return 1;
	set_err(p, errno ? -errno : -EIO);
	return 0;
}

/* Emits ev (libyaml takes ownership, also on failure); an emitter error becomes -EIO. */
static void emit(struct mn_prof *p, yaml_event_t *ev)
{
	if (!yaml_emitter_emit(&p->em, ev))
		set_err(p, -EIO);  /* no-op when write_file already stored the errno */
}

int mn_prof_open(struct mn_prof **pp, FILE *f)
{
	struct mn_prof *p;
	yaml_event_t ev;

	*pp = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (!yaml_emitter_initialize(&p->em)) {
		free(p);
		return -ENOMEM;
	}
	p->f = f;
	yaml_emitter_set_output(&p->em, write_file, p);
	yaml_emitter_set_unicode(&p->em, 1);
	yaml_emitter_set_width(&p->em, -1);   /* never fold a row over several lines */
	yaml_emitter_set_indent(&p->em, 2);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	emit(p, &ev);
	if (p->err) {
		int err = p->err;

		yaml_emitter_delete(&p->em);
		free(p);
		return err;
	}
	*pp = p;
	return 0;
}

static void doc_end(struct mn_prof *p)
{
	yaml_event_t ev;

	yaml_document_end_event_initialize(&ev, 1);
	emit(p, &ev);
	p->in_doc = false;
	p->root_done = false;
}

int mn_prof_close(struct mn_prof *p)
{
	yaml_event_t ev;
	int err;

	if (!p)
		return -EINVAL;
	if (!p->err && p->depth)
		set_err(p, -EINVAL);  /* a collection left open */
	if (!p->err && p->in_doc)
		doc_end(p);
	if (!p->err) {
		yaml_stream_end_event_initialize(&ev);
		emit(p, &ev);
	}
	if (!p->err && !yaml_emitter_flush(&p->em))
		set_err(p, -EIO);
	errno = 0;
	if (fflush(p->f) != 0 || ferror(p->f))
		set_err(p, errno ? -errno : -EIO);
	err = p->err;
	yaml_emitter_delete(&p->em);
	free(p->stack);
	free(p->sites);
	free(p);
	return err;
}

/*
 * Checks that a node (collection when `collection`, key when `key`) may start here, opens the
 * document when needed, and advances the enclosing mapping's key/value state.  False on misuse.
 */
static bool node_begin(struct mn_prof *p, bool key, bool collection)
{
	yaml_event_t ev;
	uint8_t *top;

	if (p->err)
		return false;
	if (!p->depth) {
		if (key)
			goto misuse;
		if (p->root_done)
			doc_end(p);
		if (!p->in_doc) {
			yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, p->ndocs == 0);
			emit(p, &ev);
			p->in_doc = true;
			p->ndocs++;
		}
		return !p->err;
	}
	top = &p->stack[p->depth - 1];
	switch (*top) {
	case FRAME_SEQ:
		if (key)
			goto misuse;
		break;
	case FRAME_MAP_KEY:
		/* A key: mn_prof_key() or another scalar (site ids key tables); no collection. */
		if (collection)
			goto misuse;
		*top = FRAME_MAP_VALUE;
		break;
	case FRAME_MAP_VALUE:
		if (key)
			goto misuse;
		*top = FRAME_MAP_KEY;
		break;
	}
	return true;
misuse:
	set_err(p, -EINVAL);
	return false;
}

/* A scalar node is complete; at depth 0 it is the document's root. */
static void node_done(struct mn_prof *p)
{
	if (!p->depth)
		p->root_done = true;
}

static bool push(struct mn_prof *p, enum frame_kind k)
{
	if (p->depth == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		uint8_t *s = realloc(p->stack, cap);

		if (!s) {
			set_err(p, -ENOMEM);
			return false;
		}
		p->stack = s;
		p->cap = cap;
	}
	p->stack[p->depth++] = (uint8_t)k;
	return true;
}

static void collection_begin(struct mn_prof *p, bool map, bool flow)
{
	yaml_event_t ev;

	if (!node_begin(p, false, true) || !push(p, map ? FRAME_MAP_KEY : FRAME_SEQ))
		return;
	if (map)
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
						    flow ? YAML_FLOW_MAPPING_STYLE
							 : YAML_BLOCK_MAPPING_STYLE);
	else
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
						     flow ? YAML_FLOW_SEQUENCE_STYLE
							  : YAML_BLOCK_SEQUENCE_STYLE);
	emit(p, &ev);
}

static void collection_end(struct mn_prof *p, bool map)
{
	yaml_event_t ev;

	if (p->err)
		return;
	if (!p->depth || p->stack[p->depth - 1] != (map ? FRAME_MAP_KEY : FRAME_SEQ)) {
		set_err(p, -EINVAL);  /* no such collection open, or a key without its value */
		return;
	}
	p->depth--;
	if (map)
		yaml_mapping_end_event_initialize(&ev);
	else
		yaml_sequence_end_event_initialize(&ev);
	emit(p, &ev);
	node_done(p);
}

void mn_prof_map_begin(struct mn_prof *p)      { collection_begin(p, true, false); }
void mn_prof_map_begin_flow(struct mn_prof *p) { collection_begin(p, true, true); }
void mn_prof_map_end(struct mn_prof *p)        { collection_end(p, true); }
void mn_prof_seq_begin(struct mn_prof *p)      { collection_begin(p, false, false); }
void mn_prof_seq_begin_flow(struct mn_prof *p) { collection_begin(p, false, true); }
void mn_prof_seq_end(struct mn_prof *p)        { collection_end(p, false); }

static void scalar(struct mn_prof *p, bool key, const char *s, yaml_scalar_style_t style)
{
	yaml_event_t ev;

	if (!node_begin(p, key, false))
		return;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
					  style)) {
		set_err(p, -ENOMEM);
		return;
	}
	emit(p, &ev);
	node_done(p);
}

static bool is_one_of(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (!strcmp(s, *words))
			return true;
	return false;
}

/*
 * True when a plain scalar s would not read back as a string: empty (null), a null, boolean or
 * merge/value key word of YAML 1.1 or 1.2, or anything number-like (integers in any base, floats,
 * 1.1's sexagesimals and underscores, timestamps).  Number-like errs on the side of quoting: a
 * digit (after an optional sign or dot) followed only by characters numbers are made of.  libyaml
 * itself quotes what plain style cannot hold at all (indicators, ": ", leading spaces, ...).
 */
/* Looks like a YAML number: optional sign, optional dot, then a digit. */
static bool is_numeric(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (*s == '.')
		s++;
	return *s >= '0' && *s <= '9';
}

bool mn_prof_str_needs_quotes(const char *s)
{
	static const char *const words[] = {
		"~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
		"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON",
		"off", "Off", "OFF", "<<", "=", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF",
		"-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN", NULL,
	};
	const char *t = s;

	if (!*s || is_one_of(s, words))
		return true;
	if (*t == '-' || *t == '+')
		t++;
	if (*t == '.')
		t++;
	if (*t < '0' || *t > '9')
		return false;
	return t[strspn(t, "0123456789abcdefABCDEFxXoO_.:+-eE")] == '\0' ||
	       /* timestamps: 2001-12-14t21:59:43.10-05:00, 2001-12-14 21:59:43.10 -5 */
	       (strlen(t) >= 8 && t[4] == '-' && strspn(t, "0123456789") == 4);
}

void mn_prof_key(struct mn_prof *p, const char *key)
{
	/*
	 * Plain (libyaml falls back to quotes itself if a key cannot be plain), except the words a
	 * YAML reader would take for null or a boolean: a module named "null" must stay a string.
	 * Numeric keys stay plain: site ids are written as keys and read back as numbers.
	 */
	bool word = mn_prof_str_needs_quotes(key) && !is_numeric(key);

	scalar(p, true, key, word ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE);
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when s does not start one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, c = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, c = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/*
 * Strings are written as given when they are valid UTF-8 (libyaml rejects anything else); other
 * bytes (a Latin-1 file name, say) become '?' rather than failing the whole profile.
 */
void mn_prof_str(struct mn_prof *p, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	char *copy = NULL;
	size_t i, n;

	for (i = 0; u[i]; i += n) {
		n = utf8_len(u + i);
		if (!n)
			break;
	}
	if (u[i]) {
		copy = strdup(s);
		if (!copy) {
			if (p && !p->err)
				set_err(p, -ENOMEM);
			return;
		}
		for (; copy[i]; i += n) {
			n = utf8_len((unsigned char *)copy + i);
			if (!n) {
				copy[i] = '?';
				n = 1;
			}
		}
		s = copy;
	}
	scalar(p, false, s, mn_prof_str_needs_quotes(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
							 : YAML_ANY_SCALAR_STYLE);
	free(copy);
}

/* Numbers, booleans and null: always plain. */
static void plain(struct mn_prof *p, const char *s)
{
	scalar(p, false, s, YAML_PLAIN_SCALAR_STYLE);
}

void mn_prof_u64(struct mn_prof *p, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	plain(p, buf);
}

void mn_prof_i64(struct mn_prof *p, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	plain(p, buf);
}

/*
 * The shortest text that strtod reads back to the same double: the fewest significant digits P
 * (1..17) that round-trip, written like Python's repr -- fixed notation for decimal exponents -4 to
 * 15, else scientific -- and made to look like a float to every YAML reader: "1" becomes "1.0",
 * "1e+20" becomes "1.0e+20" (YAML 1.1 wants the dot); infinities and NaN are .inf, -.inf, .nan.
 * buf must hold 32 bytes.
 */
void mn_prof_format_f64(char *buf, double v)
{
	char fixed[400];
	int prec, exp10;
	char *e;

	if (isnan(v)) {
		strcpy(buf, ".nan");
		return;
	}
	if (isinf(v)) {
		strcpy(buf, v < 0 ? "-.inf" : ".inf");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, 32, "%.*e", prec - 1, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	snprintf(buf, 32, "%.*e", prec - 1, v);
	exp10 = atoi(strchr(buf, 'e') + 1);   /* of the rounded value: 9.99 at P=1 is 1e+01 */
	if (exp10 >= -4 && exp10 < 16) {
		int decimals = prec - 1 - exp10;

		snprintf(fixed, sizeof(fixed), "%.*f", decimals > 0 ? decimals : 0, v);
		if (strlen(fixed) < 30 && strtod(fixed, NULL) == v)
			strcpy(buf, fixed);
	}
	if (strchr(buf, '.'))
		return;
	e = strchr(buf, 'e');
	if (!e)
		e = buf + strlen(buf);
	memmove(e + 2, e, strlen(e) + 1);
	e[0] = '.';
	e[1] = '0';
}

void mn_prof_f64(struct mn_prof *p, double v)
{
	char buf[32];

	mn_prof_format_f64(buf, v);
	plain(p, buf);
}

void mn_prof_bool(struct mn_prof *p, bool v)
{
	plain(p, v ? "true" : "false");
}

void mn_prof_null(struct mn_prof *p)
{
	plain(p, "null");
}

void mn_prof_site(struct mn_prof *p, uint32_t site)
{
	size_t w = site / 64;

	if (p->err)
		return;
	if (w >= p->site_words) {
		size_t n = p->site_words ? p->site_words : 4;
		uint64_t *s;

		while (n <= w)
			n *= 2;
		s = realloc(p->sites, n * sizeof(*s));
		if (!s) {
			set_err(p, -ENOMEM);
			return;
		}
		memset(s + p->site_words, 0, (n - p->site_words) * sizeof(*s));
		p->sites = s;
		p->site_words = n;
	}
	p->sites[w] |= UINT64_C(1) << (site % 64);
	mn_prof_u64(p, site);
}

const uint64_t *mn_prof_sites_used(const struct mn_prof *p, size_t *nbits)
{
	*nbits = p->sites ? p->site_words * 64 : 0;
	return p->sites;
}

void mn_prof_kv_str(struct mn_prof *p, const char *key, const char *s)
{
	mn_prof_key(p, key);
	mn_prof_str(p, s);
}

void mn_prof_kv_u64(struct mn_prof *p, const char *key, uint64_t v)
{
	mn_prof_key(p, key);
	mn_prof_u64(p, v);
}

void mn_prof_kv_i64(struct mn_prof *p, const char *key, int64_t v)
{
	mn_prof_key(p, key);
	mn_prof_i64(p, v);
}

void mn_prof_kv_f64(struct mn_prof *p, const char *key, double v)
{
	mn_prof_key(p, key);
	mn_prof_f64(p, v);
}

void mn_prof_kv_bool(struct mn_prof *p, const char *key, bool v)
{
	mn_prof_key(p, key);
	mn_prof_bool(p, v);
}

void mn_prof_kv_site(struct mn_prof *p, const char *key, uint32_t site)
{
	mn_prof_key(p, key);
	mn_prof_site(p, site);
}

/*
 * Re-emits one event from a libyaml parser, keeping its style (the leader copies module sections
 * verbatim).  Stream and document events are the caller's to skip; ev is consumed either way.
 */
void mn_prof_emit_event(struct mn_prof *p, yaml_event_t *ev)
{
	yaml_event_type_t type = ev->type;
	bool ok = true;

	switch (type) {
	case YAML_SCALAR_EVENT:
	case YAML_ALIAS_EVENT:
		ok = node_begin(p, false, false);
		break;
	case YAML_SEQUENCE_START_EVENT:
		ok = node_begin(p, false, true) && push(p, FRAME_SEQ);
		break;
	case YAML_MAPPING_START_EVENT:
		ok = node_begin(p, false, true) && push(p, FRAME_MAP_KEY);
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		ok = !p->err && p->depth &&
		     p->stack[p->depth - 1] ==
			     (type == YAML_MAPPING_END_EVENT ? FRAME_MAP_KEY : FRAME_SEQ);
		if (ok)
			p->depth--;
		else
			set_err(p, -EINVAL);
		break;
	default:
		ok = false;
		set_err(p, -EINVAL);
		break;
	}
	if (!ok) {
		yaml_event_delete(ev);
		return;
	}
	emit(p, ev);
	if (type != YAML_SEQUENCE_START_EVENT && type != YAML_MAPPING_START_EVENT)
		node_done(p);
}

/* ---- Site rows ------------------------------------------------------------------------------ */

void mn_prof_site_row(struct mn_prof *p, const struct mn_site *s)
{
	mn_prof_u64(p, s->id);
	mn_prof_map_begin_flow(p);
	mn_prof_kv_str(p, "kind", s->kind);
	if (strcmp(s->kind, "unknown")) {
		mn_prof_kv_str(p, "function", s->function);
		mn_prof_kv_str(p, "file", s->file);
		mn_prof_kv_u64(p, "line", s->line);
		mn_prof_kv_u64(p, "column", s->column);
		if (s->name[0])
			mn_prof_kv_str(p, "name", s->name);
		if (s->type_size)
			mn_prof_kv_u64(p, "type_size", s->type_size);
		if (s->loop)
			mn_prof_kv_u64(p, "loop", s->loop);
		if (s->fields[0])
			mn_prof_kv_str(p, "fields", s->fields);
		if (s->unit && s->unit[0])
			mn_prof_kv_str(p, "unit", s->unit);
	}
	mn_prof_map_end(p);
}

/* ---- Output files ---------------------------------------------------------------------------- */

static void prof_file_free(struct mn_prof_file *o)
{
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	o->f = NULL;
}

int mn_prof_file_open(struct mn_prof_file *o, const char *path)
{
	struct stat st;
	const char *slash;
	mode_t mask;
	int fd, err;

	memset(o, 0, sizeof(*o));
	/* Through a link to the file it names, so that the link survives the rename. */
	o->path = realpath(path, NULL);
	if (!o->path && !(o->path = strdup(path)))
		return -ENOMEM;
	if (!stat(o->path, &st) && !S_ISREG(st.st_mode)) {
		o->f = fopen(o->path, "we");
		if (!o->f) {
			err = -errno;
			prof_file_free(o);
			return err;
		}
		return 0;
	}
	slash = strrchr(o->path, '/');
	if (slash)
		err = asprintf(&o->tmp, "%.*s/.%s.XXXXXX", (int)(slash - o->path), o->path, slash + 1);
	else
		err = asprintf(&o->tmp, ".%s.XXXXXX", o->path);
	if (err < 0) {
		o->tmp = NULL;
		prof_file_free(o);
		return -ENOMEM;
	}
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		prof_file_free(o);
		return err;
	}
	/* mkostemp makes it 0600; a profile gets what any file created here would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) || !(o->f = fdopen(fd, "w"))) {
		err = -errno;
		close(fd);
		unlink(o->tmp);
		prof_file_free(o);
		return err;
	}
	return 0;
}

int mn_prof_file_commit(struct mn_prof_file *o)
{
	int err = 0;

	if (fclose(o->f))
		err = -errno;
	if (o->tmp && !err && rename(o->tmp, o->path))
		err = -errno;
	if (o->tmp && err)
		unlink(o->tmp);
	prof_file_free(o);
	return err;
}

void mn_prof_file_abort(struct mn_prof_file *o)
{
	if (!o->f)
		return;
	fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	prof_file_free(o);
}
