/*
 * merge-sums MODULE MERGED IN...: checks, with libmnemo-profile, that the counts of MODULE's
 * section of MERGED are the sums of the inputs' (README of each module, "Merging"): for every
 * table below, rows are matched by their key fields across the files; every key of an input is
 * in MERGED, every key of MERGED is in some input, and each summed field of MERGED's row is the
 * sum of the inputs' rows of that key.  Prints what it compared; exits 1 on the first mismatch
 * (naming module, table, key and field), 2 on bad usage or an unreadable profile, 0 otherwise.
 *
 * It also fails when nothing was compared, or when no compared value differs between the inputs
 * (then "sums" would prove nothing: the runs must have had different inputs).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* A table of a section: a sequence of rows (keys: the fields that identify a row), or, with no
 * keys, a mapping whose every value is a count. */
struct spec {
	const char *module, *table;
	const char *keys[10];
	const char *sums[4];
};

static const struct spec specs[] = {
	{ "null", "counts", { NULL }, { NULL } },
	{ "shadow-cost", "accesses", { NULL }, { NULL } },
	{ "dependence", "loops", { "loop", NULL }, { "invocations", "iterations", NULL } },
	{ "dependence", "dependences",
	  { "loop", "kind", "src", "src_via", "dst", "dst_via", "carried", "src_context",
	    "dst_context", NULL },
	  { "count", NULL } },
	{ "value-pattern", "entries", { "site", "access", NULL }, { "executions", NULL } },
	{ "value-pattern", "functions", { "site", NULL }, { "entries", NULL } },
	{ "value-pattern", "memops", { "site", "op", NULL }, { "executions", NULL } },
};

#define MAXIN 8

static struct mn_profile *prof[MAXIN + 1];
static const char *path[MAXIN + 1];
static int nin;   /* inputs: prof[1..nin]; prof[0] is the merged one */
static unsigned long compared, differing;

/* A node as text: scalars as they are, sequences as [a, b]; "~" for none. */
static void text(const struct mn_pnode *n, char *buf, size_t len)
{
	size_t k;

	if (!n) {
		snprintf(buf, len, "~");
		return;
	}
	if (mn_pnode_kind(n) == MN_PNODE_SCALAR) {
		snprintf(buf, len, "%s", mn_pnode_str(n, NULL));
		return;
	}
	k = (size_t)snprintf(buf, len, "[");
	for (size_t i = 0; i < mn_pnode_len(n) && k < len; i++) {
		char item[256];

		text(mn_pnode_at(n, i), item, sizeof(item));
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", item);
	}
	if (k < len)
		snprintf(buf + k, len - k, "]");
}

static void row_key(const struct spec *s, const struct mn_pnode *row, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (const char *const *f = s->keys; *f && k < len; f++) {
		char v[1024];

		text(mn_pnode_get(row, *f), v, sizeof(v));
		k += (size_t)snprintf(buf + k, len - k, "%s%s=%s", k ? " " : "", *f, v);
	}
}

static uint64_t u64(int file, const struct mn_pnode *map, const char *key)
{
	char err[512];
	uint64_t v = 0;

	if (mn_pfield_u64(prof[file], map, key, &v, err, sizeof(err))) {
		fprintf(stderr, "FAIL: %s\n", err);
		exit(1);
	}
	return v;
}

/* The row of table (in file) whose key is key, or NULL. */
static const struct mn_pnode *find_row(const struct spec *s, const struct mn_pnode *table,
				       const char *key)
{
	char k[4096];

	for (size_t i = 0; i < mn_pnode_len(table); i++) {
		row_key(s, mn_pnode_at(table, i), k, sizeof(k));
		if (!strcmp(k, key))
			return mn_pnode_at(table, i);
	}
	return NULL;
}

static void check_sum(const struct spec *s, const char *key, const char *field, uint64_t want,
		      uint64_t got, bool varies)
{
	compared++;
	differing += varies;
	if (want == got)
		return;
	fprintf(stderr, "FAIL: %s: %s: row {%s}: %s is %" PRIu64 " in %s, the inputs' sum is %"
		PRIu64 "\n", s->module, s->table, key, field, got, path[0], want);
	exit(1);
}

/* A mapping of counts: every key's value in MERGED is the inputs' sum. */
static void check_map(const struct spec *s, const struct mn_pnode *tab[])
{
	for (int f = 1; f <= nin; f++)
		for (size_t i = 0; i < mn_pnode_len(tab[f]); i++)
			if (!mn_pnode_get(tab[0], mn_pnode_key(tab[f], i))) {
				fprintf(stderr, "FAIL: %s: %s: %s of %s is not in %s\n", s->module,
					s->table, mn_pnode_key(tab[f], i), path[f], path[0]);
				exit(1);
			}
	for (size_t i = 0; i < mn_pnode_len(tab[0]); i++) {
		const char *key = mn_pnode_key(tab[0], i);
		uint64_t want = 0, first = 0;
		bool varies = false;

		for (int f = 1; f <= nin; f++) {
			uint64_t v = mn_pnode_get(tab[f], key) ? u64(f, tab[f], key) : 0;

			want += v;
			if (f == 1)
				first = v;
			varies |= v != first;
		}
		check_sum(s, "", key, want, u64(0, tab[0], key), varies);
	}
}

/* A sequence of rows: matched by key. */
static void check_rows(const struct spec *s, const struct mn_pnode *tab[])
{
	char key[4096];

	for (int f = 1; f <= nin; f++)
		for (size_t i = 0; i < mn_pnode_len(tab[f]); i++) {
			row_key(s, mn_pnode_at(tab[f], i), key, sizeof(key));
			if (!find_row(s, tab[0], key)) {
				fprintf(stderr, "FAIL: %s: %s: row {%s} of %s is not in %s\n",
					s->module, s->table, key, path[f], path[0]);
				exit(1);
			}
		}
	for (size_t i = 0; i < mn_pnode_len(tab[0]); i++) {
		const struct mn_pnode *row = mn_pnode_at(tab[0], i), *in[MAXIN + 1];
		int found = 0;

		row_key(s, row, key, sizeof(key));
		for (int f = 1; f <= nin; f++) {
			in[f] = find_row(s, tab[f], key);
			found += in[f] != NULL;
		}
		if (!found) {
			fprintf(stderr, "FAIL: %s: %s: row {%s} of %s is in no input\n", s->module,
				s->table, key, path[0]);
			exit(1);
		}
		for (const char *const *field = s->sums; *field; field++) {
			uint64_t want = 0, first = 0;
			bool varies = false;

			for (int f = 1; f <= nin; f++) {
				uint64_t v = in[f] ? u64(f, in[f], *field) : 0;

				want += v;
				if (f == 1)
					first = v;
				varies |= v != first;
			}
			check_sum(s, key, *field, want, u64(0, row, *field), varies);
		}
	}
}

int main(int argc, char **argv)
{
	const char *module;
	unsigned tables = 0;
	char err[1024];

	if (argc < 4 || argc - 3 > MAXIN) {
		fprintf(stderr, "usage: merge-sums MODULE MERGED IN... (at most %d inputs)\n",
			MAXIN);
		return 2;
	}
	module = argv[1];
	nin = argc - 3;
	for (int f = 0; f <= nin; f++) {
		path[f] = argv[f + 2];
		if (mn_profile_open(&prof[f], path[f], err, sizeof(err))) {
			fprintf(stderr, "merge-sums: %s\n", err);
			return 2;
		}
	}
	for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
		const struct spec *s = &specs[k];
		const struct mn_pnode *tab[MAXIN + 1];
		int have = 0;

		if (strcmp(s->module, module))
			continue;
		for (int f = 0; f <= nin; f++) {
			tab[f] = mn_pnode_get(mn_profile_module(prof[f], module), s->table);
			have += tab[f] != NULL;
		}
		if (!have)   /* a table this build's module does not write (yet) */
			continue;
		if (have != nin + 1) {
			fprintf(stderr, "FAIL: %s: table %s is in some files only\n", module,
				s->table);
			return 1;
		}
		tables++;
		if (s->keys[0])
			check_rows(s, tab);
		else
			check_map(s, tab);
	}
	if (!tables) {
		fprintf(stderr, "FAIL: %s: no table of counts to compare\n", module);
		return 1;
	}
	if (!differing) {
		fprintf(stderr, "FAIL: %s: no count differs between the inputs: the sums prove "
			"nothing (run them with different inputs)\n", module);
		return 1;
	}
	printf("%s: %lu sums checked in %u tables (%lu differ between the inputs)\n", module,
	       compared, tables, differing);
	for (int f = 0; f <= nin; f++)
		mn_profile_close(prof[f]);
	return 0;
}
