/*
 * The profile reader (profile/profile_read.c, libmnemo-profile): a handcrafted good profile read
 * through every call of the API, and bad ones, each refused with a message naming the place.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile.h"

static char dir[] = "/tmp/mnemo-test-profile-XXXXXX";

/* Writes text to a file of the test folder; returns its path (static, overwritten each call). */
static const char *write_profile(const char *name, const char *text)
{
	static char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Opens text as a profile expecting failure ret; returns the message. */
static const char *open_bad(const char *name, const char *text, int ret)
{
	static char err[1024];
	struct mn_profile *p = NULL;
	const char *path = write_profile(name, text);
	int got = mn_profile_open(&p, path, err, sizeof(err));

	if (got != ret)
		fail_msg("%s: expected %d, got %d (%s)", name, ret, got, err);
	assert_null(p);
	return err;
}

static void assert_message(const char *got, const char *expected)
{
	if (strcmp(got, expected))
		fail_msg("expected message\n  '%s'\ngot\n  '%s'", expected, got);
}

static const char good[] =
	"format: mnemo-profile/1\n"
	"program: {argv: [./prog, -n, '10'], pid: 4242, exit_status: null, signal: 11,\n"
	"          wall_seconds: 0.41, events: 2500341}\n"
	"complete: false\n"
	"incomplete_reason: killed by SIGSEGV\n"
	"sites:\n"
	"  7: {kind: load, function: main, file: prog.c, line: 27, column: 19}\n"
	"  3: {kind: alloc, function: make, file: lib/list.c, line: 5, column: 3, name: malloc,\n"
	"      type_size: 16}\n"
	"  12: {kind: store, function: helper}\n"
	"modules:\n"
	"  value-pattern:\n"
	"    value_cap: 16\n"
	"    ratio: 0.5\n"
	"    big: 18446744073709551615\n"
	"    neg: -3\n"
	"    hex: 0x1f\n"
	"    quoted: \"12\"\n"
	"    flag: true\n"
	"    nothing: ~\n"
	"    loads:\n"
	"      - {site: 7, count: 1000, constant: yes}\n"
	"      - {site: 12, count: 5}\n"
	"  dependence: {loops: []}\n";

static void test_good_profile(void **state)
{
	struct mn_profile *p = NULL;
	const struct mn_program *pr;
	const struct mn_site *s;
	const struct mn_pnode *sec, *n, *loads;
	const char *reason, *path = write_profile("good.yaml", good);
	char err[1024] = "unchanged";
	uint64_t u;
	int64_t i;
	double f;
	bool b;
	size_t len;

	assert_int_equal(mn_profile_open(&p, path, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(mn_profile_path(p), path);

	pr = mn_profile_program(p);
	assert_int_equal(pr->argc, 3);
	assert_string_equal(pr->argv[0], "./prog");
	assert_string_equal(pr->argv[2], "10");
	assert_null(pr->argv[3]);
	assert_int_equal(pr->pid, 4242);
	assert_int_equal(pr->exit_status, -1);
	assert_int_equal(pr->signal, 11);
	assert_true(fabs(pr->wall_seconds - 0.41) < 1e-12);
	assert_int_equal(pr->events, 2500341);
	assert_false(mn_profile_complete(p, &reason));
	assert_string_equal(reason, "killed by SIGSEGV");

	/* Sites: sorted by id, fields defaulted. */
	assert_int_equal(mn_profile_site_count(p), 3);
	assert_int_equal(mn_profile_site_at(p, 0)->id, 3);
	assert_int_equal(mn_profile_site_at(p, 2)->id, 12);
	assert_null(mn_profile_site_at(p, 3));
	s = mn_profile_site(p, 7);
	assert_non_null(s);
	assert_string_equal(s->kind, "load");
	assert_string_equal(s->function, "main");
	assert_string_equal(s->file, "prog.c");
	assert_int_equal(s->line, 27);
	assert_int_equal(s->column, 19);
	assert_string_equal(s->name, "");
	s = mn_profile_site(p, 3);
	assert_string_equal(s->name, "malloc");
	assert_int_equal(s->type_size, 16);
	s = mn_profile_site(p, 12);
	assert_string_equal(s->file, "");
	assert_int_equal(s->line, 0);
	assert_null(mn_profile_site(p, 8));
	assert_null(mn_profile_site(p, 0));

	/* Modules in file order. */
	assert_int_equal(mn_profile_module_count(p), 2);
	assert_string_equal(mn_profile_module_name(p, 0), "value-pattern");
	assert_string_equal(mn_profile_module_name(p, 1), "dependence");
	assert_null(mn_profile_module_name(p, 2));
	sec = mn_profile_module(p, "value-pattern");
	assert_ptr_equal(sec, mn_profile_module_section(p, 0));
	assert_null(mn_profile_module(p, "rds-shape"));
	assert_int_equal(mn_pnode_kind(sec), MN_PNODE_MAP);
	assert_int_equal(mn_pnode_line(sec), 13);
	assert_int_equal(mn_pnode_column(sec), 5);
	assert_int_equal(mn_pnode_len(sec), 9);
	assert_string_equal(mn_pnode_key(sec, 0), "value_cap");
	assert_int_equal(mn_pnode_kind(mn_pnode_key_node(sec, 0)), MN_PNODE_SCALAR);

	/* Typed scalars. */
	assert_int_equal(mn_pnode_u64(mn_pnode_get(sec, "value_cap"), &u), 0);
	assert_int_equal(u, 16);
	assert_int_equal(mn_pnode_u64(mn_pnode_get(sec, "big"), &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(mn_pnode_i64(mn_pnode_get(sec, "big"), &i), -ERANGE);
	assert_int_equal(mn_pnode_i64(mn_pnode_get(sec, "neg"), &i), 0);
	assert_int_equal(i, -3);
	assert_int_equal(mn_pnode_u64(mn_pnode_get(sec, "neg"), &u), -EINVAL);
	assert_int_equal(mn_pnode_u64(mn_pnode_get(sec, "hex"), &u), 0);
	assert_int_equal(u, 31);
	assert_int_equal(mn_pnode_f64(mn_pnode_get(sec, "ratio"), &f), 0);
	assert_true(f == 0.5);
	assert_int_equal(mn_pnode_f64(mn_pnode_get(sec, "value_cap"), &f), 0);
	assert_true(f == 16.0);
	assert_int_equal(mn_pnode_u64(mn_pnode_get(sec, "ratio"), &u), -EINVAL);
	assert_int_equal(mn_pnode_u64(mn_pnode_get(sec, "quoted"), &u), -EINVAL);
	assert_string_equal(mn_pnode_str(mn_pnode_get(sec, "quoted"), &len), "12");
	assert_int_equal(len, 2);
	assert_int_equal(mn_pnode_bool(mn_pnode_get(sec, "flag"), &b), 0);
	assert_true(b);
	assert_int_equal(mn_pnode_bool(mn_pnode_get(sec, "value_cap"), &b), -EINVAL);
	assert_true(mn_pnode_is_null(mn_pnode_get(sec, "nothing")));
	assert_false(mn_pnode_is_null(mn_pnode_get(sec, "flag")));

	/* Collections, and NULL chaining through missing keys. */
	loads = mn_pnode_get(sec, "loads");
	assert_int_equal(mn_pnode_kind(loads), MN_PNODE_SEQ);
	assert_int_equal(mn_pnode_len(loads), 2);
	assert_null(mn_pnode_key(loads, 0));
	n = mn_pnode_get(mn_pnode_at(loads, 1), "site");
	assert_int_equal(mn_pnode_u64(n, &u), 0);
	assert_int_equal(u, 12);
	assert_int_equal(mn_pnode_line(n), 23);
	assert_null(mn_pnode_str(loads, NULL));
	assert_null(mn_pnode_at(loads, 2));
	assert_null(mn_pnode_get(mn_pnode_get(sec, "missing"), "x"));
	assert_int_equal(mn_pnode_kind(NULL), MN_PNODE_NONE);
	assert_int_equal(mn_pnode_len(NULL), 0);
	assert_int_equal(mn_pnode_u64(NULL, &u), -EINVAL);
	n = mn_pnode_get(mn_profile_module(p, "dependence"), "loops");
	assert_int_equal(mn_pnode_kind(n), MN_PNODE_SEQ);
	assert_int_equal(mn_pnode_len(n), 0);
	n = mn_pnode_get(mn_pnode_at(loads, 1), "site");
	assert_int_equal(mn_pnode_kind(mn_profile_root(p)), MN_PNODE_MAP);

	/* Clients report schema errors the same way. */
	{
		char want[1100];

		assert_int_equal(mn_pnode_errorf(p, n, err, sizeof(err), "bad %s", "site"),
				 -EINVAL);
		snprintf(want, sizeof(want), "%s:23:16: bad site", path);
		assert_message(err, want);
		mn_pnode_errorf(p, NULL, err, sizeof(err), "no %d", 1);
		snprintf(want, sizeof(want), "%s: no 1", path);
		assert_message(err, want);
	}
	mn_profile_close(p);
	mn_profile_close(NULL);
}

/* A stream of documents: later ones add sites and sections. */
static void test_stream(void **state)
{
	struct mn_profile *p = NULL;
	char err[1024];
	const char *path = write_profile("stream.yaml",
		"format: mnemo-profile/1\n"
		"complete: true\n"
		"sites: {1: {kind: load, function: f}}\n"
		"modules: {a: {x: 1}}\n"
		"---\n"
		"sites: {2: {kind: store, function: g}}\n"
		"modules: {b: [1, 2]}\n"
		"---\n"
		"~\n");
	const char *reason = "unchanged";

	assert_int_equal(mn_profile_open(&p, path, err, sizeof(err)), 0);
	assert_true(mn_profile_complete(p, &reason));
	assert_null(reason);
	assert_int_equal(mn_profile_site_count(p), 2);
	assert_string_equal(mn_profile_site(p, 2)->function, "g");
	assert_int_equal(mn_profile_module_count(p), 2);
	assert_int_equal(mn_pnode_len(mn_profile_module(p, "b")), 2);
	/* The program mapping may be missing: everything reads as unknown. */
	assert_int_equal(mn_profile_program(p)->argc, 0);
	assert_null(mn_profile_program(p)->argv[0]);
	assert_int_equal(mn_profile_program(p)->pid, -1);
	assert_true(mn_profile_program(p)->wall_seconds < 0);
	assert_int_equal(mn_profile_program(p)->events, -1);
	mn_profile_close(p);
}

/* program_end's status encoding, 256 + signal, and signal names. */
static void test_exit_encodings(void **state)
{
	struct mn_profile *p = NULL;
	char err[1024];
	const char *path = write_profile("exit.yaml",
		"format: mnemo-profile/1\ncomplete: true\nprogram: {exit_status: 262}\n");

	assert_int_equal(mn_profile_open(&p, path, err, sizeof(err)), 0);
	assert_int_equal(mn_profile_program(p)->exit_status, -1);
	assert_int_equal(mn_profile_program(p)->signal, 6);
	mn_profile_close(p);
	path = write_profile("exit2.yaml",
		"format: mnemo-profile/1\ncomplete: false\nprogram: {exit_status: -1, signal: SIGKILL}\n");
	assert_int_equal(mn_profile_open(&p, path, err, sizeof(err)), 0);
	assert_int_equal(mn_profile_program(p)->signal, 9);
	assert_false(mn_profile_complete(p, NULL));
	mn_profile_close(p);
	path = write_profile("exit3.yaml",
		"format: mnemo-profile/1\ncomplete: true\nprogram: {exit_status: 3, signal: null}\n");
	assert_int_equal(mn_profile_open(&p, path, err, sizeof(err)), 0);
	assert_int_equal(mn_profile_program(p)->exit_status, 3);
	assert_int_equal(mn_profile_program(p)->signal, 0);
	mn_profile_close(p);
}

static void test_not_yaml(void **state)
{
	char want[1100];
	const char *err = open_bad("broken.yaml",
		"format: mnemo-profile/1\ncomplete: true\nsites: {1: [unclosed\n", -EINVAL);

	/* libyaml's words; what matters is the file and a line in it. */
	snprintf(want, sizeof(want), "%s/broken.yaml:4:", dir);
	if (strncmp(err, want, strlen(want)))
		fail_msg("expected a message starting '%s', got '%s'", want, err);

	err = open_bad("tabs.yaml", "format: mnemo-profile/1\n\tcomplete: true\n", -EINVAL);
	snprintf(want, sizeof(want), "%s/tabs.yaml:2:", dir);
	if (strncmp(err, want, strlen(want)))
		fail_msg("expected a message starting '%s', got '%s'", want, err);

	err = open_bad("binary.yaml", "format: \xff\xfe\x01\n", -EINVAL);
	snprintf(want, sizeof(want), "%s/binary.yaml: ", dir);
	if (strncmp(err, want, strlen(want)))
		fail_msg("expected a message starting '%s', got '%s'", want, err);
}

static void test_not_a_profile(void **state)
{
	char want[1100];

	snprintf(want, sizeof(want),
		 "%s/x.yaml: not a mnemo profile (format: 'foo', expected 'mnemo-profile/1')", dir);
	assert_message(open_bad("x.yaml", "format: foo\ncomplete: true\n", -EINVAL), want);

	snprintf(want, sizeof(want), "%s/empty.yaml: not a mnemo profile (empty file)", dir);
	assert_message(open_bad("empty.yaml", "", -EINVAL), want);

	snprintf(want, sizeof(want), "%s/noformat.yaml: not a mnemo profile (no 'format' key)", dir);
	assert_message(open_bad("noformat.yaml", "complete: true\n", -EINVAL), want);

	snprintf(want, sizeof(want),
		 "%s/text.yaml: not a mnemo profile (the top level is a scalar, not a mapping)", dir);
	assert_message(open_bad("text.yaml", "hello world\n", -EINVAL), want);

	snprintf(want, sizeof(want),
		 "%s/v2.yaml: unsupported profile format 'mnemo-profile/2' (this reader knows "
		 "'mnemo-profile/1')", dir);
	assert_message(open_bad("v2.yaml", "format: mnemo-profile/2\n", -EINVAL), want);
}

static void test_bad_frame(void **state)
{
	char want[1100];

	snprintf(want, sizeof(want),
		 "%s/sites.yaml:3:8: expected a mapping for 'sites', found a sequence", dir);
	assert_message(open_bad("sites.yaml",
				"format: mnemo-profile/1\ncomplete: true\nsites: [1, 2]\n", -EINVAL),
		       want);

	snprintf(want, sizeof(want), "%s/complete.yaml:2:11: expected true or false for 'complete'",
		 dir);
	assert_message(open_bad("complete.yaml", "format: mnemo-profile/1\ncomplete: maybe\n",
				-EINVAL), want);

	snprintf(want, sizeof(want), "%s/nocomplete.yaml:1:1: missing key 'complete'", dir);
	assert_message(open_bad("nocomplete.yaml", "format: mnemo-profile/1\n", -EINVAL), want);

	snprintf(want, sizeof(want),
		 "%s/key.yaml:3:9: expected a site id (an integer from 0 to 4294967295) as a key "
		 "of 'sites', found a scalar 'main'", dir);
	assert_message(open_bad("key.yaml", "format: mnemo-profile/1\ncomplete: true\n"
				"sites: {main: {kind: load}}\n", -EINVAL), want);

	snprintf(want, sizeof(want), "%s/site.yaml:3:12: expected a mapping for site 4, found a scalar",
		 dir);
	assert_message(open_bad("site.yaml", "format: mnemo-profile/1\ncomplete: true\n"
				"sites: {4: load}\n", -EINVAL), want);

	snprintf(want, sizeof(want), "%s/line.yaml:3:31: expected an integer from 0 to 4294967295 "
		 "for 'line'", dir);
	assert_message(open_bad("line.yaml", "format: mnemo-profile/1\ncomplete: true\n"
				"sites: {4: {kind: load, line: -2}}\n", -EINVAL), want);

	snprintf(want, sizeof(want), "%s/dup.yaml: site 4 is listed twice in 'sites'", dir);
	assert_message(open_bad("dup.yaml", "format: mnemo-profile/1\ncomplete: true\n"
				"sites: {4: {}}\n---\nsites: {4: {}}\n", -EINVAL), want);

	snprintf(want, sizeof(want),
		 "%s/mods.yaml:3:10: expected a mapping for 'modules', found a scalar", dir);
	assert_message(open_bad("mods.yaml", "format: mnemo-profile/1\ncomplete: true\n"
				"modules: value-pattern\n", -EINVAL), want);

	snprintf(want, sizeof(want), "%s/twice.yaml:3:17: module 'a' has two sections", dir);
	assert_message(open_bad("twice.yaml", "format: mnemo-profile/1\ncomplete: true\n"
				"modules: {a: 1, a: 2}\n", -EINVAL), want);

	snprintf(want, sizeof(want),
		 "%s/argv.yaml:4:9: expected a sequence of strings for 'argv', found a scalar", dir);
	assert_message(open_bad("argv.yaml", "format: mnemo-profile/1\ncomplete: true\n"
				"program:\n  argv: ./prog\n", -EINVAL), want);
}

static void test_missing_file(void **state)
{
	char want[1100], err[1024];
	struct mn_profile *p = NULL;

	snprintf(want, sizeof(want), "%s/none.yaml", dir);
	assert_int_equal(mn_profile_open(&p, want, err, sizeof(err)), -ENOENT);
	assert_null(p);
	strcat(want, ": No such file or directory");
	assert_message(err, want);

	/* A folder is not a profile; and a NULL or tiny buffer is fine. */
	assert_int_equal(mn_profile_open(&p, dir, NULL, 0), -EISDIR);
	assert_int_equal(mn_profile_open(&p, dir, err, 4), -EISDIR);
	assert_int_equal(strlen(err), 3);
}

/* The `binary:` identity: read when present, "unknown" (0, "") when not, refused when malformed. */
static void test_binary(void **state)
{
	struct mn_profile *p = NULL;
	const struct mn_binary *b;
	char err[1024], want[1100];

	assert_int_equal(mn_profile_open(&p, write_profile("bin.yaml",
		"format: mnemo-profile/1\ncomplete: true\n"
		"binary: {site_count: 25, site_table_hash: 00ff12ab34cd56ef}\n"), err, sizeof(err)), 0);
	b = mn_profile_binary(p);
	assert_int_equal(b->site_count, 25);
	assert_string_equal(b->site_table_hash, "00ff12ab34cd56ef");
	mn_profile_close(p);

	assert_int_equal(mn_profile_open(&p, write_profile("nobin.yaml",
		"format: mnemo-profile/1\ncomplete: true\n"), err, sizeof(err)), 0);
	b = mn_profile_binary(p);
	assert_int_equal(b->site_count, 0);
	assert_string_equal(b->site_table_hash, "");
	mn_profile_close(p);

	snprintf(want, sizeof(want), "%s/badhash.yaml:3:42: expected 16 lowercase hex digits for "
		 "'site_table_hash', found '12AB'", dir);
	assert_message(open_bad("badhash.yaml", "format: mnemo-profile/1\ncomplete: true\n"
				"binary: {site_count: 2, site_table_hash: 12AB}\n", -EINVAL), want);
	snprintf(want, sizeof(want), "%s/badcount.yaml:3:22: expected an integer from 0 to "
		 "4294967295 for 'site_count'", dir);
	assert_message(open_bad("badcount.yaml", "format: mnemo-profile/1\ncomplete: true\n"
				"binary: {site_count: -1}\n", -EINVAL), want);
}

/* Typed row fields: values, defaults kept on a missing key, and messages naming the field. */
static void test_fields(void **state)
{
	struct mn_profile *p = NULL;
	const struct mn_pnode *sec, *row;
	const char *path = write_profile("fields.yaml", good), *str;
	char err[1024], want[1100];
	uint64_t u = 77;
	uint32_t u32;
	int64_t i;
	double f;
	bool b;

	assert_int_equal(mn_profile_open(&p, path, err, sizeof(err)), 0);
	sec = mn_profile_module(p, "value-pattern");
	row = mn_pnode_at(mn_pfield_node(p, sec, "loads", MN_PNODE_SEQ, err, sizeof(err)), 0);
	assert_non_null(row);

	assert_int_equal(mn_pfield_u64(p, row, "count", &u, err, sizeof(err)), 0);
	assert_int_equal(u, 1000);
	assert_int_equal(mn_pfield_u32(p, row, "site", &u32, err, sizeof(err)), 0);
	assert_int_equal(u32, 7);
	assert_int_equal(mn_pfield_i64(p, sec, "neg", &i, err, sizeof(err)), 0);
	assert_int_equal(i, -3);
	assert_int_equal(mn_pfield_f64(p, sec, "ratio", &f, err, sizeof(err)), 0);
	assert_true(f == 0.5);
	assert_int_equal(mn_pfield_bool(p, sec, "flag", &b, err, sizeof(err)), 0);
	assert_true(b);
	assert_int_equal(mn_pfield_str(p, sec, "quoted", &str, err, sizeof(err)), 0);
	assert_string_equal(str, "12");
	assert_int_equal(mn_pfield_str(p, sec, "nothing", &str, err, sizeof(err)), 0);
	assert_string_equal(str, "");

	/* Missing: -ENOENT, the default untouched, a message only when asked for. */
	u = 77;
	assert_int_equal(mn_pfield_u64(p, row, "stride", &u, NULL, 0), -ENOENT);
	assert_int_equal(u, 77);
	assert_int_equal(mn_pfield_u64(p, row, "stride", &u, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s:22:9: missing field 'stride'", path);
	assert_message(err, want);

	/* Wrong type: the value's place, the field, what was expected and found. */
	assert_int_equal(mn_pfield_u64(p, row, "constant", &u, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:22:42: field 'constant': expected an unsigned integer, found 'yes'", path);
	assert_message(err, want);
	assert_int_equal(mn_pfield_u32(p, sec, "big", &u32, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:15:10: field 'big': expected an integer from 0 to "
		 "4294967295, found '18446744073709551615'", path);
	assert_message(err, want);
	assert_int_equal(mn_pfield_bool(p, sec, "loads", &b, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:22:7: field 'loads': expected true or false, found a "
		 "sequence", path);
	assert_message(err, want);
	assert_null(mn_pfield_node(p, sec, "loads", MN_PNODE_MAP, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:22:7: field 'loads': expected a mapping, found a "
		 "sequence", path);
	assert_message(err, want);
	assert_int_equal(mn_pfield_f64(p, sec, "quoted", &f, err, sizeof(err)), -EINVAL);

	/* A missing map: every field is missing, named against the file. */
	assert_int_equal(mn_pfield_u64(p, NULL, "count", &u, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: missing field 'count'", path);
	assert_message(err, want);
	mn_profile_close(p);
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_profile),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_exit_encodings),
		cmocka_unit_test(test_not_yaml),
		cmocka_unit_test(test_not_a_profile),
		cmocka_unit_test(test_bad_frame),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_fields),
	};

	return cmocka_run_group_tests_name("profile_read", tests, setup, teardown);
}
