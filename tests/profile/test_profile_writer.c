/*
 * Tests of the profile writer (profile/profile.c): what it writes, read back with libyaml's
 * document loader, is what was written -- structure, styles, integers, doubles bit for bit,
 * strings that need quotes -- and its errors are sticky.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yaml.h>

#include "backend_internal.h"
#include "profile.h"

/* ---- Helpers --------------------------------------------------------------------------------- */

struct out {
	char *buf;
	size_t len;
	FILE *f;
	struct mn_prof *p;
};

static void out_open(struct out *o)
{
	memset(o, 0, sizeof(*o));
	o->f = open_memstream(&o->buf, &o->len);
	assert_non_null(o->f);
	assert_int_equal(mn_prof_open(&o->p, o->f), 0);
}

/* Closes the writer and the stream; returns mn_prof_close()'s result.  o->buf holds the text. */
static int out_close(struct out *o)
{
	int err = mn_prof_close(o->p);

	fclose(o->f);
	return err;
}

static void load(const char *text, yaml_document_t *doc)
{
	yaml_parser_t parser;

	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	if (!yaml_parser_load(&parser, doc))
		fail_msg("libyaml cannot read what the writer wrote: %s at line %zu\n%s",
			 parser.problem, parser.problem_mark.line + 1, text);
	yaml_parser_delete(&parser);
}

static yaml_node_t *root(yaml_document_t *doc)
{
	yaml_node_t *n = yaml_document_get_root_node(doc);

	assert_non_null(n);
	return n;
}

static const char *sval(yaml_node_t *n)
{
	assert_int_equal(n->type, YAML_SCALAR_NODE);
	return (const char *)n->data.scalar.value;
}

static yaml_node_t *get(yaml_document_t *d, yaml_node_t *map, const char *key)
{
	assert_int_equal(map->type, YAML_MAPPING_NODE);
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = yaml_document_get_node(d, pr->key);

		if (k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(d, pr->value);
	}
	fail_msg("expected key '%s' in the mapping", key);
	return NULL;
}

static yaml_node_t *item(yaml_document_t *d, yaml_node_t *seq, size_t i)
{
	assert_int_equal(seq->type, YAML_SEQUENCE_NODE);
	assert_true(i < (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start));
	return yaml_document_get_node(d, seq->data.sequence.items.start[i]);
}

static size_t seq_len(yaml_node_t *seq)
{
	assert_int_equal(seq->type, YAML_SEQUENCE_NODE);
	return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

/* A plain scalar with exactly this text: what numbers, booleans and null must be. */
static void expect_plain(yaml_node_t *n, const char *text)
{
	if (strcmp(sval(n), text))
		fail_msg("expected scalar '%s', got '%s'", text, sval(n));
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		fail_msg("expected '%s' plain, got style %d", text, n->data.scalar.style);
}

/* ---- Structure ------------------------------------------------------------------------------- */

static void test_structure_roundtrip(void **state)
{
	yaml_document_t doc;
	yaml_node_t *r, *n, *row;
	struct out o;

	out_open(&o);
	mn_prof_map_begin(o.p);
	mn_prof_key(o.p, "format");
	mn_prof_str(o.p, "mnemo-profile/1");
	mn_prof_key(o.p, "nested");
	mn_prof_map_begin(o.p);
	mn_prof_key(o.p, "u64_max");
	mn_prof_u64(o.p, UINT64_MAX);
	mn_prof_key(o.p, "zero");
	mn_prof_u64(o.p, 0);
	mn_prof_key(o.p, "i64_min");
	mn_prof_i64(o.p, INT64_MIN);
	mn_prof_key(o.p, "minus_one");
	mn_prof_i64(o.p, -1);
	mn_prof_key(o.p, "yes");
	mn_prof_bool(o.p, true);
	mn_prof_key(o.p, "no");
	mn_prof_bool(o.p, false);
	mn_prof_key(o.p, "nothing");
	mn_prof_null(o.p);
	mn_prof_key(o.p, "empty_map");
	mn_prof_map_begin(o.p);
	mn_prof_map_end(o.p);
	mn_prof_key(o.p, "empty_seq");
	mn_prof_seq_begin(o.p);
	mn_prof_seq_end(o.p);
	mn_prof_map_end(o.p);
	mn_prof_key(o.p, "rows");
	mn_prof_seq_begin(o.p);
	for (int i = 0; i < 3; i++) {
		mn_prof_map_begin_flow(o.p);
		mn_prof_key(o.p, "site");
		mn_prof_site(o.p, (uint32_t)(10 + i));
		mn_prof_key(o.p, "delta");
		mn_prof_i64(o.p, -8 * i);
		mn_prof_key(o.p, "tags");
		mn_prof_seq_begin(o.p);   /* block inside flow: libyaml writes it flow */
		mn_prof_str(o.p, "a");
		mn_prof_str(o.p, "b c");
		mn_prof_seq_end(o.p);
		mn_prof_map_end(o.p);
	}
	mn_prof_seq_end(o.p);
	mn_prof_key(o.p, "argv");
	mn_prof_seq_begin_flow(o.p);
	mn_prof_str(o.p, "./prog");
	mn_prof_str(o.p, "--x=1");
	mn_prof_seq_end(o.p);
	mn_prof_map_end(o.p);
	assert_int_equal(out_close(&o), 0);

	load(o.buf, &doc);
	r = root(&doc);
	assert_int_equal(r->type, YAML_MAPPING_NODE);
	assert_int_equal(r->data.mapping.style, YAML_BLOCK_MAPPING_STYLE);
	assert_string_equal(sval(get(&doc, r, "format")), "mnemo-profile/1");
	n = get(&doc, r, "nested");
	expect_plain(get(&doc, n, "u64_max"), "18446744073709551615");
	expect_plain(get(&doc, n, "zero"), "0");
	expect_plain(get(&doc, n, "i64_min"), "-9223372036854775808");
	expect_plain(get(&doc, n, "minus_one"), "-1");
	expect_plain(get(&doc, n, "yes"), "true");
	expect_plain(get(&doc, n, "no"), "false");
	expect_plain(get(&doc, n, "nothing"), "null");
	assert_int_equal(get(&doc, n, "empty_map")->type, YAML_MAPPING_NODE);
	assert_int_equal(get(&doc, n, "empty_seq")->type, YAML_SEQUENCE_NODE);
	n = get(&doc, r, "rows");
	assert_int_equal(seq_len(n), 3);
	for (size_t i = 0; i < 3; i++) {
		char buf[16];

		row = item(&doc, n, i);
		assert_int_equal(row->data.mapping.style, YAML_FLOW_MAPPING_STYLE);
		snprintf(buf, sizeof(buf), "%zu", 10 + i);
		expect_plain(get(&doc, row, "site"), buf);
		snprintf(buf, sizeof(buf), "%d", -8 * (int)i);
		expect_plain(get(&doc, row, "delta"), buf);
		assert_string_equal(sval(item(&doc, get(&doc, row, "tags"), 1)), "b c");
	}
	n = get(&doc, r, "argv");
	assert_int_equal(n->data.sequence.style, YAML_FLOW_SEQUENCE_STYLE);
	assert_string_equal(sval(item(&doc, n, 0)), "./prog");
	assert_string_equal(sval(item(&doc, n, 1)), "--x=1");
	/* Each flow row is on one line. */
	assert_non_null(strstr(o.buf, "- {site: 11, delta: -8, tags: [a, b c]}\n"));
	yaml_document_delete(&doc);
	free(o.buf);
}

/* The exact text: the profile layout, and byte-identical output for identical calls. */
static void write_example(struct mn_prof *p)
{
	mn_prof_map_begin(p);
	mn_prof_key(p, "format");
	mn_prof_str(p, "mnemo-profile/1");
	mn_prof_key(p, "program");
	mn_prof_map_begin_flow(p);
	mn_prof_key(p, "argv");
	mn_prof_seq_begin_flow(p);
	mn_prof_str(p, "./prog");
	mn_prof_str(p, "a");
	mn_prof_seq_end(p);
	mn_prof_key(p, "pid");
	mn_prof_i64(p, 123);
	mn_prof_key(p, "signal");
	mn_prof_null(p);
	mn_prof_key(p, "wall_seconds");
	mn_prof_f64(p, 0.53);
	mn_prof_map_end(p);
	mn_prof_key(p, "complete");
	mn_prof_bool(p, true);
	mn_prof_key(p, "sites");
	mn_prof_map_begin(p);
	mn_prof_u64(p, 12);
	mn_prof_map_begin_flow(p);
	mn_prof_key(p, "kind");
	mn_prof_str(p, "load");
	mn_prof_key(p, "file");
	mn_prof_str(p, "");
	mn_prof_map_end(p);
	mn_prof_map_end(p);
	mn_prof_key(p, "entries");
	mn_prof_seq_begin(p);
	mn_prof_map_begin_flow(p);
	mn_prof_key(p, "site");
	mn_prof_site(p, 12);
	mn_prof_key(p, "value");
	mn_prof_str(p, "42");
	mn_prof_map_end(p);
	mn_prof_seq_end(p);
	mn_prof_map_end(p);
}

static void test_exact_text_and_determinism(void **state)
{
	static const char expected[] =
		"format: mnemo-profile/1\n"
		"program: {argv: [./prog, a], pid: 123, signal: null, wall_seconds: 0.53}\n"
		"complete: true\n"
		"sites:\n"
		"  12: {kind: load, file: \"\"}\n"
		"entries:\n"
		"- {site: 12, value: \"42\"}\n";
	struct out a, b;

	out_open(&a);
	write_example(a.p);
	assert_int_equal(out_close(&a), 0);
	out_open(&b);
	write_example(b.p);
	assert_int_equal(out_close(&b), 0);
	assert_string_equal(a.buf, expected);
	assert_string_equal(a.buf, b.buf);
	free(a.buf);
	free(b.buf);
}

/* ---- Doubles --------------------------------------------------------------------------------- */

/* Reads back a double the way a YAML 1.2 core-schema reader does. */
static double read_f64(const char *s)
{
	char *end;
	double v;

	if (!strcmp(s, ".nan"))
		return NAN;
	if (!strcmp(s, ".inf"))
		return INFINITY;
	if (!strcmp(s, "-.inf"))
		return -INFINITY;
	v = strtod(s, &end);
	if (*end)
		fail_msg("'%s' is not a float", s);
	return v;
}

static void test_doubles_roundtrip(void **state)
{
	static const struct {
		double v;
		const char *text;   /* the expected shortest form */
	} cases[] = {
		{ 0.1, "0.1" }, { 0.7, "0.7" }, { 1.0, "1.0" }, { -0.0, "-0.0" }, { 0.0, "0.0" },
		{ 100.0, "100.0" }, { 1e20, "1.0e+20" }, { 1e-5, "1.0e-05" }, { 2.5e-7, "2.5e-07" },
		{ 1.0 / 3.0, "0.3333333333333333" }, { 123456789.125, "123456789.125" },
		{ DBL_MAX, "1.7976931348623157e+308" }, { DBL_MIN, "2.2250738585072014e-308" },
		{ 5e-324, "5.0e-324" }, { 1e16, "1.0e+16" }, { 1e15, "1000000000000000.0" },
		{ 9.99e-5, "9.99e-05" }, { 0.0001, "0.0001" }, { 0.999, "0.999" },
		{ -2.75, "-2.75" },
		{ INFINITY, ".inf" }, { -INFINITY, "-.inf" }, { NAN, ".nan" },
	};
	enum { NRANDOM = 2000 };
	size_t ncases = sizeof(cases) / sizeof(cases[0]);
	double *vals = calloc(ncases + NRANDOM, sizeof(double));
	yaml_document_t doc;
	yaml_node_t *r;
	struct out o;
	uint64_t x = 0x9e3779b97f4a7c15u;

	for (size_t i = 0; i < ncases; i++)
		vals[i] = cases[i].v;
	for (size_t i = 0; i < NRANDOM; i++) {
		double d;

		do {   /* xorshift bit patterns: every exponent, subnormals included */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(&d, &x, sizeof(d));
		} while (!isfinite(d));
		vals[ncases + i] = i % 2 ? d : (double)(x % 1000000) / 1000.0;
	}
	out_open(&o);
	mn_prof_seq_begin(o.p);
	for (size_t i = 0; i < ncases + NRANDOM; i++)
		mn_prof_f64(o.p, vals[i]);
	mn_prof_seq_end(o.p);
	assert_int_equal(out_close(&o), 0);

	load(o.buf, &doc);
	r = root(&doc);
	assert_int_equal(seq_len(r), ncases + NRANDOM);
	for (size_t i = 0; i < ncases + NRANDOM; i++) {
		yaml_node_t *n = item(&doc, r, i);
		const char *t = sval(n);
		double back = read_f64(t);

		assert_int_equal(n->data.scalar.style, YAML_PLAIN_SCALAR_STYLE);
		if (i < ncases && cases[i].text && strcmp(t, cases[i].text))
			fail_msg("%.17g: expected '%s', got '%s'", vals[i], cases[i].text, t);
		if (isnan(vals[i]))
			assert_true(isnan(back));
		else if (memcmp(&back, &vals[i], sizeof(back)))
			fail_msg("%.17g written as '%s' reads back as %.17g", vals[i], t, back);
		/* YAML 1.1 floats need a dot; no bare integers either. */
		if (isfinite(vals[i]) && !strchr(t, '.'))
			fail_msg("'%s' has no dot: a YAML 1.1 reader takes it for an int", t);
	}
	yaml_document_delete(&doc);
	free(o.buf);
	free(vals);
}

/* ---- Strings --------------------------------------------------------------------------------- */

static void test_strings_quoted_only_when_needed(void **state)
{
	static const char *const need[] = {
		"", "true", "True", "false", "yes", "No", "on", "OFF", "y", "n", "null", "Null",
		"~", "123", "-5", "+7", "1.5", ".5", "-.5", "0x1F", "0o17", "1e3", "1_000", ".inf",
		"-.inf",
		".nan", "12:30", "2001-12-14", "2001-12-14 21:59:43.10 -5", "<<", "=",
		"a: b", "- x", "-", "#c", "x #y", " lead", "trail ", "line\nbreak", "tab\there",
		"{x}",
		"[x]", "*a", "&a", "!t", "%p", "@x", "`x", "'q'", "\"dq\"", "?", ": x", "|", ">",
	};
	static const char *const plain[] = {
		"hello", "prog.c", "main", "value-pattern", "2mm.c", "a.b", "./prog", "--x=1",
		"mnemo-profile/1", "x86_64", "operator new(unsigned long)", "é ü", "SIGSEGV",
		"std::vector<int>::push_back", "deadbeef", "a-b",
	};
	size_t nneed = sizeof(need) / sizeof(need[0]), nplain = sizeof(plain) / sizeof(plain[0]);
	yaml_document_t doc;
	yaml_node_t *r;
	struct out o;

	out_open(&o);
	mn_prof_map_begin(o.p);
	mn_prof_key(o.p, "need");
	mn_prof_seq_begin(o.p);
	for (size_t i = 0; i < nneed; i++)
		mn_prof_str(o.p, need[i]);
	mn_prof_seq_end(o.p);
	mn_prof_key(o.p, "plain");
	mn_prof_seq_begin(o.p);
	for (size_t i = 0; i < nplain; i++)
		mn_prof_str(o.p, plain[i]);
	mn_prof_seq_end(o.p);
	mn_prof_key(o.p, "in_flow");
	mn_prof_map_begin_flow(o.p);
	for (size_t i = 0; i < nneed; i++) {
		char key[16];

		snprintf(key, sizeof(key), "k%zu", i);
		mn_prof_key(o.p, key);
		mn_prof_str(o.p, need[i]);
	}
	mn_prof_map_end(o.p);
	mn_prof_key(o.p, "bad_utf8");
	mn_prof_str(o.p, "caf\xe9.c");
	mn_prof_map_end(o.p);
	assert_int_equal(out_close(&o), 0);

	load(o.buf, &doc);
	r = root(&doc);
	for (size_t i = 0; i < nneed; i++) {
		yaml_node_t *n = item(&doc, get(&doc, r, "need"), i);

		if (strcmp(sval(n), need[i]))
			fail_msg("wrote '%s', read back '%s'", need[i], sval(n));
		if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			fail_msg("'%s' written plain: a reader takes it for a non-string", need[i]);
	}
	for (size_t i = 0; i < nneed; i++) {
		char key[16];
		yaml_node_t *n;

		snprintf(key, sizeof(key), "k%zu", i);
		n = get(&doc, get(&doc, r, "in_flow"), key);
		if (strcmp(sval(n), need[i]) || n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			fail_msg("in a flow map, wrote '%s', read back '%s' (style %d)", need[i],
				 sval(n), n->data.scalar.style);
	}
	for (size_t i = 0; i < nplain; i++) {
		yaml_node_t *n = item(&doc, get(&doc, r, "plain"), i);

		assert_string_equal(sval(n), plain[i]);
		if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
			fail_msg("'%s' quoted (style %d), expected plain", plain[i],
				 n->data.scalar.style);
	}
	assert_string_equal(sval(get(&doc, r, "bad_utf8")), "caf?.c");
	yaml_document_delete(&doc);
	free(o.buf);
}

/* ---- Sites ----------------------------------------------------------------------------------- */

static void test_sites_bitmap(void **state)
{
	static const uint32_t ids[] = { 5, 130, 5, 0, 64, 4000000 };
	const uint64_t *bits;
	size_t nbits, set = 0;
	struct out o;

	out_open(&o);
	bits = mn_prof_sites_used(o.p, &nbits);
	assert_null(bits);
	assert_int_equal(nbits, 0);
	mn_prof_seq_begin_flow(o.p);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		mn_prof_site(o.p, ids[i]);
	mn_prof_seq_end(o.p);
	bits = mn_prof_sites_used(o.p, &nbits);
	assert_non_null(bits);
	assert_true(nbits > 4000000);
	for (size_t b = 0; b < nbits; b++) {
		bool on = bits[b / 64] >> (b % 64) & 1;
		bool want = b == 0 || b == 5 || b == 64 || b == 130 || b == 4000000;

		if (on != want)
			fail_msg("site %zu: expected %s in the bitmap", b, want ? "set" : "clear");
		set += on;
	}
	assert_int_equal(set, 5);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf, "[5, 130, 5, 0, 64, 4000000]\n");
	free(o.buf);
}

/* ---- Errors ---------------------------------------------------------------------------------- */

static void test_sticky_error_dev_full(void **state)
{
	struct mn_prof *p;
	FILE *f;

	/* More than any buffer: the failure comes while writing, and later calls are no-ops. */
	f = fopen("/dev/full", "w");
	assert_non_null(f);
	assert_int_equal(mn_prof_open(&p, f), 0);
	mn_prof_seq_begin(p);
	for (int i = 0; i < 100000; i++)
		mn_prof_str(p, "a string that fills the disk quickly");
	mn_prof_seq_end(p);
	assert_int_equal(mn_prof_close(p), -ENOSPC);
	fclose(f);

	/* Small: the failure comes at the flush in mn_prof_close(). */
	f = fopen("/dev/full", "w");
	assert_non_null(f);
	assert_int_equal(mn_prof_open(&p, f), 0);
	mn_prof_map_begin(p);
	mn_prof_key(p, "a");
	mn_prof_u64(p, 1);
	mn_prof_map_end(p);
	assert_int_equal(mn_prof_close(p), -ENOSPC);
	fclose(f);
}

static void test_misuse_is_sticky_einval(void **state)
{
	struct out o;

	/* A key in a sequence. */
	out_open(&o);
	mn_prof_seq_begin(o.p);
	mn_prof_key(o.p, "k");
	mn_prof_seq_end(o.p);
	assert_int_equal(out_close(&o), -EINVAL);
	free(o.buf);

	/* A mapping ended after a key without its value; later calls do nothing. */
	out_open(&o);
	mn_prof_map_begin(o.p);
	mn_prof_key(o.p, "a");
	mn_prof_u64(o.p, 1);
	mn_prof_key(o.p, "dangling");
	mn_prof_map_end(o.p);
	mn_prof_key(o.p, "after");
	mn_prof_str(o.p, "error");
	assert_int_equal(out_close(&o), -EINVAL);
	assert_null(strstr(o.buf ? o.buf : "", "after"));
	free(o.buf);

	/* A collection as a key, a value where a key belongs, a wrong end, an unclosed map. */
	out_open(&o);
	mn_prof_map_begin(o.p);
	mn_prof_seq_begin(o.p);
	assert_int_equal(out_close(&o), -EINVAL);
	free(o.buf);
	out_open(&o);
	mn_prof_map_begin(o.p);
	mn_prof_seq_end(o.p);
	assert_int_equal(out_close(&o), -EINVAL);
	free(o.buf);
	out_open(&o);
	mn_prof_map_begin(o.p);
	mn_prof_key(o.p, "a");
	assert_int_equal(out_close(&o), -EINVAL);
	free(o.buf);
	out_open(&o);
	mn_prof_key(o.p, "top-level key");
	assert_int_equal(out_close(&o), -EINVAL);
	free(o.buf);
}

static void test_empty_stream_and_documents(void **state)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct out o;
	int ndocs = 0;

	out_open(&o);
	assert_int_equal(out_close(&o), 0);
	assert_int_equal(o.len, 0);
	free(o.buf);

	/* Two roots: two documents of one stream. */
	out_open(&o);
	mn_prof_map_begin(o.p);
	mn_prof_key(o.p, "a");
	mn_prof_u64(o.p, 1);
	mn_prof_map_end(o.p);
	mn_prof_map_begin(o.p);
	mn_prof_key(o.p, "b");
	mn_prof_u64(o.p, 2);
	mn_prof_map_end(o.p);
	assert_int_equal(out_close(&o), 0);
	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (unsigned char *)o.buf, o.len);
	for (;;) {
		yaml_node_t *r;

		assert_true(yaml_parser_load(&parser, &doc));
		r = yaml_document_get_root_node(&doc);
		if (!r) {
			yaml_document_delete(&doc);
			break;
		}
		expect_plain(get(&doc, r, ndocs ? "b" : "a"), ndocs ? "2" : "1");
		yaml_document_delete(&doc);
		ndocs++;
	}
	yaml_parser_delete(&parser);
	assert_int_equal(ndocs, 2);
	free(o.buf);
}

/* The leader copies sections with mn_prof_emit_event(): the copy is the original, styles too. */
static void test_event_passthrough(void **state)
{
	static const char section[] =
		"value_cap: 16\n"
		"strong_stride_fraction: 0.7\n"
		"entries:\n"
		"- {site: 12, access: load, name: \"42\", empty: \"\", list: [1, -2]}\n"
		"nested:\n"
		"  deeper:\n"
		"  - x\n"
		"  - 'y z'\n";
	yaml_parser_t parser;
	yaml_event_t ev;
	struct out o;
	bool done = false;

	out_open(&o);
	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)section, strlen(section));
	while (!done) {
		assert_true(yaml_parser_parse(&parser, &ev));
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			/* fall through */
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			yaml_event_delete(&ev);
			break;
		default:
			mn_prof_emit_event(o.p, &ev);
		}
	}
	yaml_parser_delete(&parser);
	assert_int_equal(out_close(&o), 0);
	assert_string_equal(o.buf,
			    "value_cap: 16\n"
			    "strong_stride_fraction: 0.7\n"
			    "entries:\n"
			    "- {site: 12, access: load, name: \"42\", empty: \"\", list: [1, -2]}\n"
			    "nested:\n"
			    "  deeper:\n"
			    "  - x\n"
			    "  - 'y z'\n");
	free(o.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure_roundtrip),
		cmocka_unit_test(test_exact_text_and_determinism),
		cmocka_unit_test(test_doubles_roundtrip),
		cmocka_unit_test(test_strings_quoted_only_when_needed),
		cmocka_unit_test(test_sites_bitmap),
		cmocka_unit_test(test_sticky_error_dev_full),
		cmocka_unit_test(test_misuse_is_sticky_einval),
		cmocka_unit_test(test_empty_stream_and_documents),
		cmocka_unit_test(test_event_passthrough),
	};

	return cmocka_run_group_tests_name("profile writer", tests, NULL, NULL);
}
