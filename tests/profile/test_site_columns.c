/*
 * The site table's loop and fields columns (mnemo-sites/2), and line_nearest, inlined_into and
 * inlined_at (mnemo-sites/3; pass/README.md "The site table") on both sides: the backend's parser
 * of the blob (mn_run_create(), backend/run.c), which must still take the 9-field lines of
 * mnemo-sites/2 and the 7-field lines of mnemo-sites/1 binaries, and the profile reader
 * (profile/profile_read.c), which gives loop 0, fields "", line_nearest false and no inlining for
 * rows without the keys, as profiles written before have.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend.h"
#include "profile.h"

static const char blob_v2[] =
	"mnemo-sites/2\n"
	"function\tmain\tp.c\t3\t0\t\t0\t0\t\n"
	"loop\tmain\tp.c\t5\t2\t\t0\t0\t\n"
	"load\tmain\tp.c\t6\t9\t\t0\t2\t\n"
	"alloc\tmain\tp.c\t4\t12\tmalloc\t0\t0\tS/16:a@0,b@4,c@8,d@12\n"
	"global\t\tp.c\t1\t0\tns::g\t32\t0\tpair<int, long>/16:first@0,second@8";   /* no \n */

/* A line-0 load given its block's nearest line; one line inlined at two places. */
static const char blob_v3[] =
	"mnemo-sites/3\n"
	"function\tDeleteNode\tx.cpp\t39\t0\t\t0\t0\t\t0\t\t\n"
	"load\tDeleteNode\tx.cpp\t41\t3\t\t0\t0\t\t1\t\t\n"
	"load\tMarkInUse\tx.h\t5\t7\t\t0\t0\t\t0\tDeleteNode\tx.cpp:40:3\n"
	"load\tMarkInUse\tx.h\t5\t7\t\t0\t0\t\t0\tDeleteNode\tx.h:8:5 < x.cpp:44:3";

static const char blob_v1[] =
	"mnemo-sites/1\n"
	"function\tmain\tp.c\t3\t0\t\t0\n"
	"load\tmain\tp.c\t6\t9\t\t0\n"
	"alloc\tmain\tp.c\t4\t12\tmalloc\t16\n";

static struct mn_run *run_of(const char *blob, size_t len)
{
	struct mn_run *run = NULL;
	char why[256] = "";

	if (mn_run_create(&run, blob, len, why, sizeof(why)))
		fail_msg("expected the table to parse, got: %s", why);
	return run;
}

static void test_run_v2(void **state)
{
	struct mn_run *run = run_of(blob_v2, sizeof(blob_v2) - 1);
	const struct mn_run_site *s;

	assert_int_equal(mn_run_site_count(run), 5);
	s = mn_run_site(run, 3);
	assert_string_equal(s->kind, "load");
	assert_int_equal(s->line, 6);
	assert_int_equal(s->loop, 2);
	assert_string_equal(s->fields, "");
	s = mn_run_site(run, 4);
	assert_string_equal(s->name, "malloc");
	assert_int_equal(s->loop, 0);
	assert_string_equal(s->fields, "S/16:a@0,b@4,c@8,d@12");
	s = mn_run_site(run, 5);
	assert_int_equal(s->type_size, 32);
	assert_string_equal(s->fields, "pair<int, long>/16:first@0,second@8");
	mn_run_destroy(run);
}

static void test_run_v3(void **state)
{
	struct mn_run *run = run_of(blob_v3, sizeof(blob_v3) - 1);
	const struct mn_run_site *s;

	assert_int_equal(mn_run_site_count(run), 4);
	s = mn_run_site(run, 1);
	assert_false(s->line_nearest);
	assert_string_equal(s->inlined_into, "");
	assert_string_equal(s->inlined_at, "");
	s = mn_run_site(run, 2);
	assert_true(s->line_nearest);
	assert_int_equal(s->line, 41);
	assert_string_equal(s->inlined_into, "");
	s = mn_run_site(run, 3);
	assert_false(s->line_nearest);
	assert_string_equal(s->function, "MarkInUse");
	assert_string_equal(s->inlined_into, "DeleteNode");
	assert_string_equal(s->inlined_at, "x.cpp:40:3");
	s = mn_run_site(run, 4);
	assert_string_equal(s->inlined_at, "x.h:8:5 < x.cpp:44:3");
	mn_run_destroy(run);
}

/* Tables of older passes: not nearest, not inlined. */
static void test_run_v2_new_columns(void **state)
{
	struct mn_run *run = run_of(blob_v2, sizeof(blob_v2) - 1);

	for (uint32_t id = 1; id <= 5; id++) {
		assert_false(mn_run_site(run, id)->line_nearest);
		assert_string_equal(mn_run_site(run, id)->inlined_into, "");
		assert_string_equal(mn_run_site(run, id)->inlined_at, "");
	}
	mn_run_destroy(run);
	run = run_of(blob_v1, sizeof(blob_v1) - 1);
	assert_string_equal(mn_run_site(run, 2)->inlined_into, "");
	assert_false(mn_run_site(run, 2)->line_nearest);
	mn_run_destroy(run);
}

/* A binary built by an older pass: every row reads with loop 0 and no fields. */
static void test_run_v1(void **state)
{
	struct mn_run *run = run_of(blob_v1, sizeof(blob_v1) - 1);

	assert_int_equal(mn_run_site_count(run), 3);
	for (uint32_t id = 1; id <= 3; id++) {
		assert_int_equal(mn_run_site(run, id)->loop, 0);
		assert_string_equal(mn_run_site(run, id)->fields, "");
	}
	assert_string_equal(mn_run_site(run, 3)->name, "malloc");
	assert_int_equal(mn_run_site(run, 3)->type_size, 16);
	mn_run_destroy(run);
}

/* Each version takes its own number of fields, and a loop must be a number. */
static void test_run_bad(void **state)
{
	static const struct {
		const char *blob, *why;
	} bad[] = {
		{ "mnemo-sites/2\nload\tmain\tp.c\t6\t9\t\t0\n",
		  "site table line 2: 7 fields, expected 9" },
		{ "mnemo-sites/1\nload\tmain\tp.c\t6\t9\t\t0\t2\t\n",
		  "site table line 2: more than 7 fields" },
		{ "mnemo-sites/2\nload\tmain\tp.c\t6\t9\t\t0\tx\t\n",
		  "site table line 2: line, column, type_size and loop must be numbers, "
		  "line_nearest 0 or 1" },
		{ "mnemo-sites/3\nload\tmain\tp.c\t6\t9\t\t0\t0\t\n",
		  "site table line 2: 9 fields, expected 12" },
		{ "mnemo-sites/3\nload\tmain\tp.c\t6\t9\t\t0\t0\t\t2\t\t\n",
		  "site table line 2: line, column, type_size and loop must be numbers, "
		  "line_nearest 0 or 1" },
		{ "mnemo-sites/4\n",
		  "site table does not start with 'mnemo-sites/3', 'mnemo-sites/2' or "
		  "'mnemo-sites/1'" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mn_run *run = NULL;
		char why[256] = "";

		assert_int_equal(mn_run_create(&run, bad[i].blob, strlen(bad[i].blob), why,
					       sizeof(why)), -EINVAL);
		assert_null(run);
		if (strcmp(why, bad[i].why))
			fail_msg("expected '%s', got '%s'", bad[i].why, why);
	}
}

/* Writes text to a temporary file and opens it as a profile. */
static struct mn_profile *open_text(const char *text)
{
	char path[] = "/tmp/mnemo-site-columns.XXXXXX", why[512];
	struct mn_profile *p = NULL;
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	if (mn_profile_open(&p, path, why, sizeof(why)))
		fail_msg("expected the profile to read, got: %s", why);
	unlink(path);
	return p;
}

static void test_reader(void **state)
{
	struct mn_profile *p = open_text(
		"format: mnemo-profile/1\n"
		"program: {argv: [./p], exit_status: 0}\n"
		"complete: true\n"
		"sites:\n"
		"  2: {kind: loop, function: main, file: p.c, line: 5, column: 2}\n"
		"  3: {kind: load, function: main, file: p.c, line: 6, column: 9, loop: 2}\n"
		"  4: {kind: alloc, function: main, file: p.c, line: 4, column: 12, name: malloc,\n"
		"      fields: 'S/16:a@0,b@4,c@8,d@12'}\n"
		"modules: {}\n");
	const struct mn_site *s;

	s = mn_profile_site(p, 3);
	assert_int_equal(s->loop, 2);
	assert_string_equal(s->fields, "");
	s = mn_profile_site(p, 4);
	assert_int_equal(s->loop, 0);
	assert_string_equal(s->fields, "S/16:a@0,b@4,c@8,d@12");
	s = mn_profile_site(p, 2);
	assert_int_equal(s->loop, 0);
	assert_string_equal(s->fields, "");
	assert_false(s->line_nearest);
	assert_string_equal(s->inlined_into, "");
	assert_string_equal(s->inlined_at, "");
	mn_profile_close(p);
}

static void test_reader_v3(void **state)
{
	struct mn_profile *p = open_text(
		"format: mnemo-profile/1\n"
		"program: {argv: [./p], exit_status: 0}\n"
		"complete: true\n"
		"sites:\n"
		"  2: {kind: load, function: luaV_execute, file: lvm.c, line: 123, column: 7,\n"
		"      line_nearest: true}\n"
		"  3: {kind: load, function: 'Node::MarkInUse()', file: x.h, line: 5, column: 7,\n"
		"      inlined_into: 'Doc::DeleteNode(Node*)', inlined_at: 'x.cpp:40:3'}\n"
		"  4: {kind: load, function: f, file: p.c, line: 6, column: 9, line_nearest: false}\n"
		"modules: {}\n");
	const struct mn_site *s;

	s = mn_profile_site(p, 2);
	assert_true(s->line_nearest);
	assert_int_equal(s->line, 123);
	assert_string_equal(s->inlined_into, "");
	s = mn_profile_site(p, 3);
	assert_false(s->line_nearest);
	assert_string_equal(s->function, "Node::MarkInUse()");
	assert_string_equal(s->inlined_into, "Doc::DeleteNode(Node*)");
	assert_string_equal(s->inlined_at, "x.cpp:40:3");
	assert_false(mn_profile_site(p, 4)->line_nearest);
	mn_profile_close(p);
}

/* The writer's row (the leader's and merge's) reads back as written, through a run too. */
static void test_row_round_trip(void **state)
{
	const struct mn_site in = {
		.id = 3, .kind = "load", .function = "Node::MarkInUse()", .file = "x.h",
		.line = 5, .column = 7, .name = "", .fields = "", .line_nearest = true,
		.inlined_into = "Doc::DeleteNode(Node*)", .inlined_at = "x.h:8:5 < x.cpp:44:3",
	};
	/* A row of a client that does not know the new members: they are NULL. */
	const struct mn_site old = {
		.id = 2, .kind = "load", .function = "f", .file = "p.c", .name = "", .fields = "",
	};
	const struct mn_site *rows[] = { &old, &in };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct mn_prof *w = NULL;
	struct mn_profile *p;
	struct mn_run *run = NULL;
	const struct mn_site *s;
	char why[256] = "";

	assert_non_null(f);
	assert_int_equal(mn_prof_open(&w, f), 0);
	mn_prof_map_begin(w);
	mn_prof_kv_str(w, "format", MN_PROFILE_FORMAT);
	mn_prof_key(w, "program");
	mn_prof_map_begin_flow(w);
	mn_prof_key(w, "argv");
	mn_prof_seq_begin_flow(w);
	mn_prof_str(w, "./p");
	mn_prof_seq_end(w);
	mn_prof_map_end(w);
	mn_prof_kv_bool(w, "complete", true);
	mn_prof_key(w, "sites");
	mn_prof_map_begin(w);
	mn_prof_site_row(w, &old);
	mn_prof_site_row(w, &in);
	mn_prof_map_end(w);
	mn_prof_key(w, "modules");
	mn_prof_map_begin_flow(w);
	mn_prof_map_end(w);
	mn_prof_map_end(w);
	assert_int_equal(mn_prof_close(w), 0);
	fclose(f);
	if (!strstr(text, "line_nearest: true") || !strstr(text, "inlined_into:") ||
	    !strstr(text, "inlined_at:"))
		fail_msg("expected the three keys in the row, got:\n%s", text);
	p = open_text(text);
	free(text);
	s = mn_profile_site(p, 3);
	assert_true(s->line_nearest);
	assert_string_equal(s->function, in.function);
	assert_string_equal(s->inlined_into, in.inlined_into);
	assert_string_equal(s->inlined_at, in.inlined_at);
	mn_profile_close(p);

	if (mn_run_from_sites(&run, rows, 2, 3, why, sizeof(why)))
		fail_msg("expected a run, got: %s", why);
	assert_true(mn_run_site(run, 3)->line_nearest);
	assert_string_equal(mn_run_site(run, 3)->function, "Node::MarkInUse()");
	assert_string_equal(mn_run_site(run, 3)->inlined_into, "Doc::DeleteNode(Node*)");
	assert_string_equal(mn_run_site(run, 3)->inlined_at, "x.h:8:5 < x.cpp:44:3");
	assert_string_equal(mn_run_site(run, 1)->kind, "unknown");
	assert_string_equal(mn_run_site(run, 2)->inlined_into, "");
	assert_false(mn_run_site(run, 2)->line_nearest);
	mn_run_destroy(run);
}

/* line_nearest is a boolean; anything else names the place. */
static void test_reader_bad_nearest(void **state)
{
	char path[] = "/tmp/mnemo-site-columns.XXXXXX", why[512] = "";
	struct mn_profile *p = NULL;
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("format: mnemo-profile/1\nprogram: {argv: [./p]}\ncomplete: true\n"
	      "sites:\n  3: {kind: load, line_nearest: 2}\nmodules: {}\n", f);
	fclose(f);
	assert_int_equal(mn_profile_open(&p, path, why, sizeof(why)), -EINVAL);
	unlink(path);
	assert_null(p);
	if (!strstr(why, ":5:") || !strstr(why, "'line_nearest'"))
		fail_msg("expected line 5 and 'line_nearest' in the message, got '%s'", why);
}

/* A loop that is not a site id is an error that names the place. */
static void test_reader_bad_loop(void **state)
{
	char path[] = "/tmp/mnemo-site-columns.XXXXXX", why[512] = "";
	struct mn_profile *p = NULL;
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("format: mnemo-profile/1\nprogram: {argv: [./p]}\ncomplete: true\n"
	      "sites:\n  3: {kind: load, loop: -1}\nmodules: {}\n", f);
	fclose(f);
	assert_int_equal(mn_profile_open(&p, path, why, sizeof(why)), -EINVAL);
	unlink(path);
	assert_null(p);
	if (!strstr(why, ":5:") || !strstr(why, "'loop'"))
		fail_msg("expected line 5 and 'loop' in the message, got '%s'", why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_v2),
		cmocka_unit_test(test_run_v1),
		cmocka_unit_test(test_run_v3),
		cmocka_unit_test(test_run_v2_new_columns),
		cmocka_unit_test(test_run_bad),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_reader_bad_loop),
		cmocka_unit_test(test_reader_v3),
		cmocka_unit_test(test_row_round_trip),
		cmocka_unit_test(test_reader_bad_nearest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
