/*
 * The run a backend profiles, as modules see it (backend.h): the parsed site table and the options.
 *
 * The site table blob (runtime/abi.h) is copied once and split in place: tabs and newlines
 * become NULs and every struct mn_run_site points into the copy, so the table costs one allocation
 * for the text and one array of count + 1 rows.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_internal.h"

/*
 * The blob's first line says how many tab-separated fields each line has: version 2 added loop and
 * fields at the end of version 1's seven, version 3 line_nearest, inlined_into and inlined_at at
 * the end of those nine.  Tables of binaries built before keep working.
 */
#define SITES_HEADER_V1 "mnemo-sites/1"
#define SITES_HEADER_V2 "mnemo-sites/2"
#define SITES_HEADER_V3 "mnemo-sites/3"
#define SITES_FIELDS_MAX 12

static int bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Parses a decimal field into *v; false when it is not a number that fits. */
static bool field_u64(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!*s) {   /* "" is 0: no debug info */
		*v = 0;
		return true;
	}
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end && *v <= max;
}

/*
 * Splits one line (NUL-terminated) into the row's nfields fields (7, 9 or 12).  Returns 0 or
 * -EINVAL with a reason.
 */
static int parse_line(char *line, uint32_t lineno, unsigned nfields, struct mn_run_site *row,
		      char *why, size_t whylen)
{
	char *f[SITES_FIELDS_MAX];
	unsigned n = 0;
	uint64_t line_no, col, tsize, loop = 0, nearest = 0;

	f[n++] = line;
	for (char *c = line; *c; c++) {
		if (*c != '\t')
			continue;
		*c = '\0';
		if (n == nfields)
			return bad(why, whylen, "site table line %u: more than %u fields", lineno,
				   nfields);
		f[n++] = c + 1;
	}
	if (n != nfields)
		return bad(why, whylen, "site table line %u: %u fields, expected %u", lineno, n,
			   nfields);
	if (!field_u64(f[3], UINT32_MAX, &line_no) || !field_u64(f[4], UINT32_MAX, &col) ||
	    !field_u64(f[6], UINT64_MAX, &tsize) ||
	    (nfields > 7 && !field_u64(f[7], UINT32_MAX, &loop)) ||
	    (nfields > 9 && !field_u64(f[9], 1, &nearest)))
		return bad(why, whylen, "site table line %u: line, column, type_size and loop must "
			   "be numbers, line_nearest 0 or 1", lineno);
	row->kind = f[0];
	row->function = f[1];
	row->file = f[2];
	row->line = (uint32_t)line_no;
	row->column = (uint32_t)col;
	row->name = f[5];
	row->type_size = tsize;
	row->loop = (uint32_t)loop;
	row->fields = nfields > 8 ? f[8] : "";
	row->line_nearest = nearest;
	row->inlined_into = nfields > 10 ? f[10] : "";
	row->inlined_at = nfields > 11 ? f[11] : "";
	return 0;
}

uint64_t mn_fnv1a64(const void *data, size_t len)
{
	const unsigned char *b = data;
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

int mn_run_create(struct mn_run **rp, const char *blob, size_t len, char *why, size_t whylen)
{
	struct mn_run *run;
	size_t hlen = strlen(SITES_HEADER_V3);
	unsigned nfields;
	uint32_t count = 0;
	char *p, *end;
	int err;

	*rp = NULL;
	run = calloc(1, sizeof(*run));
	if (!run)
		return -ENOMEM;
	run->workers = 1;
	/* Over the bytes as given, before any parsing: two runs of one binary hash the same. */
	run->blob_hash = mn_fnv1a64(blob, len);
	*rp = run;
	if (!len)
		return 0;
	_Static_assert(sizeof(SITES_HEADER_V1) == sizeof(SITES_HEADER_V2) &&
		       sizeof(SITES_HEADER_V2) == sizeof(SITES_HEADER_V3), "one header length");
	if (len >= hlen + 1 && !memcmp(blob, SITES_HEADER_V3 "\n", hlen + 1)) {
		nfields = 12;
	} else if (len >= hlen + 1 && !memcmp(blob, SITES_HEADER_V2 "\n", hlen + 1)) {
		nfields = 9;
	} else if (len >= hlen + 1 && !memcmp(blob, SITES_HEADER_V1 "\n", hlen + 1)) {
		nfields = 7;
	} else {
		err = bad(why, whylen, "site table does not start with '" SITES_HEADER_V3 "', '"
			  SITES_HEADER_V2 "' or '" SITES_HEADER_V1 "'");
		goto fail;
	}
	run->blob = malloc(len + 1);
	if (!run->blob) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(run->blob, blob, len);
	run->blob[len] = '\0';
	if (memchr(run->blob, '\0', len)) {
		err = bad(why, whylen, "site table contains a NUL byte");
		goto fail;
	}
	for (size_t i = hlen + 1; i < len; i++)
		count += run->blob[i] == '\n';
	if (run->blob[len - 1] != '\n')
		count++;   /* a last line without its newline still counts */
	run->sites = calloc((size_t)count + 1, sizeof(*run->sites));
	if (!run->sites) {
		err = -ENOMEM;
		goto fail;
	}
	p = run->blob + hlen + 1;
	end = run->blob + len;
	for (uint32_t id = 1; id <= count; id++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (nl)
			*nl = '\0';
		err = parse_line(p, id + 1, nfields, &run->sites[id], why, whylen);
		if (err)
			goto fail;
		p = nl ? nl + 1 : end;
	}
	run->count = count;
	return 0;
fail:
	mn_run_destroy(run);
	*rp = NULL;
	return err;
}

/* The blob mn_run_from_sites() builds; on a failed allocation, failed is set and nothing grows. */
struct blob {
	char *text;
	size_t len, cap;
	bool failed;
};

/* Appends s and then sep, with tabs and newlines (impossible in a table field) made spaces. */
static void blob_field(struct blob *b, const char *s, char sep)
{
	size_t n = strlen(s);

	if (b->failed)
		return;
	if (b->len + n + 2 > b->cap) {
		size_t cap = 2 * (b->len + n + 2);
		char *text = realloc(b->text, cap);

		if (!text) {
			b->failed = true;
			return;
		}
		b->text = text;
		b->cap = cap;
	}
	for (size_t i = 0; i < n; i++)
		b->text[b->len++] = s[i] == '\t' || s[i] == '\n' ? ' ' : s[i];
	b->text[b->len++] = sep;
}

int mn_run_from_sites(struct mn_run **rp, const struct mn_site *const *rows, size_t n,
		      uint32_t count, char *why, size_t whylen)
{
	struct blob b = { 0 };
	size_t r = 0;
	char num[24];
	int err;

	*rp = NULL;
	blob_field(&b, SITES_HEADER_V3, '\n');
	for (uint64_t id = 1; id <= count && !b.failed; id++) {   /* count may be UINT32_MAX */
		const struct mn_site *s;

		while (r < n && rows[r]->id < id)
			r++;
		s = r < n && rows[r]->id == id ? rows[r] : NULL;
		if (!s || !strcmp(s->kind, "unknown")) {   /* 12 fields, all but the kind empty */
			blob_field(&b, "unknown", '\t');
			for (int k = 1; k < 12; k++)
				blob_field(&b, "", k < 11 ? '\t' : '\n');
			continue;
		}
		blob_field(&b, s->kind, '\t');
		blob_field(&b, s->function, '\t');
		blob_field(&b, s->file, '\t');
		snprintf(num, sizeof(num), "%u", s->line);
		blob_field(&b, num, '\t');
		snprintf(num, sizeof(num), "%u", s->column);
		blob_field(&b, num, '\t');
		blob_field(&b, s->name, '\t');
		snprintf(num, sizeof(num), "%llu", (unsigned long long)s->type_size);
		blob_field(&b, num, '\t');
		snprintf(num, sizeof(num), "%u", s->loop);
		blob_field(&b, num, '\t');
		blob_field(&b, s->fields, '\t');
		blob_field(&b, s->line_nearest ? "1" : "0", '\t');
		/* NULL in rows initialized by code older than the members (profile.h) */
		blob_field(&b, s->inlined_into ? s->inlined_into : "", '\t');
		blob_field(&b, s->inlined_at ? s->inlined_at : "", '\n');
	}
	if (b.failed) {
		free(b.text);
		return -ENOMEM;
	}
	err = mn_run_create(rp, b.text, b.len, why, whylen);
	free(b.text);
	return err;
}

void mn_run_values_attach(struct mn_run *run, struct mn_value_set *sets, size_t nbytes)
{
	if (sets && nbytes / sizeof(*sets) >= (size_t)run->count + 1)
		run->values = sets;
}

/* The slot of load or store site `site`, or NULL: no slots, or not such a site. */
static struct mn_value_set *value_slot(const struct mn_run *run, uint32_t site)
{
	if (!run || !run->values || site == 0 || site > run->count)
		return NULL;
	return &run->values[site];
}

void mn_run_value_seen(const struct mn_run *run, uint32_t site, uint64_t value)
{
	struct mn_value_set *vs = value_slot(run, site);
	uint32_t used, i;

	if (!vs)
		return;
	/* The only writer of the slot (backend.h): `used` changes only here. */
	used = __atomic_load_n(&vs->used, __ATOMIC_RELAXED);
	if (used == MN_VALUE_SET_ALL)
		return;
	i = MN_VALUE_SET_HASH(value);
	for (unsigned k = 0; k < MN_VALUE_SET_MAX; k++, i = (i + 1) % MN_VALUE_SET_MAX) {
		if (!(used >> i & 1)) {
			__atomic_store_n(&vs->values[i], value, __ATOMIC_RELAXED);
			/* Release: a program that sees bit i sees values[i]. */
			__atomic_store_n(&vs->used, used | UINT32_C(1) << i, __ATOMIC_RELEASE);
			return;
		}
		if (vs->values[i] == value)
			return;
	}
	/* Full: later values of the site keep coming, which changes nothing but speed. */
}

void mn_run_value_all(const struct mn_run *run, uint32_t site)
{
	struct mn_value_set *vs = value_slot(run, site);

	if (vs)
		__atomic_store_n(&vs->used, MN_VALUE_SET_ALL, __ATOMIC_RELEASE);
}

void mn_run_destroy(struct mn_run *run)
{
	if (!run)
		return;
	free(run->sites);
	free(run->blob);
	free(run);
}

uint32_t mn_run_site_count(const struct mn_run *run)
{
	return run ? run->count : 0;
}

const struct mn_run_site *mn_run_site(const struct mn_run *run, uint32_t site)
{
	if (!run || site == 0 || site > run->count)
		return NULL;
	return &run->sites[site];
}

const char *mn_run_site_kind(const struct mn_run *run, uint32_t site)
{
	const struct mn_run_site *s = mn_run_site(run, site);

	return s ? s->kind : "";
}

unsigned mn_run_workers(const struct mn_run *run)
{
	return run && run->workers ? run->workers : 1;
}

bool mn_run_verbose(const struct mn_run *run)
{
	return run && run->verbose;
}
