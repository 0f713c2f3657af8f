/*
 * Unit tests of the runtime's options (runtime/options.c): the MNEMO_* variables of
 * options.def, good and bad values, the profile path (%p, defaults, relative paths) and the module
 * subset.  The environment is a table handed to mn_options_read() through its lookup callback, so
 * the process environment is never touched.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runtime_internal.h"

/* A fake environment: NULL-terminated name/value pairs. */
struct env {
	const char *kv[16][2];
};

static const char *env_get(const char *name, void *ctx)
{
	const struct env *e = ctx;

	for (int i = 0; e->kv[i][0]; i++)
		if (!strcmp(e->kv[i][0], name))
			return e->kv[i][1];
	return NULL;
}

static int read_env(struct mn_options *o, struct env *e, char *err, size_t errlen)
{
	err[0] = '\0';
	return mn_options_read(o, env_get, e, err, errlen);
}

/* Every default of options.def, with nothing set. */
static void test_defaults(void **state)
{
	struct env e = { { { NULL } } };
	struct mn_options o;
	char err[256];

	assert_int_equal(read_env(&o, &e, err, sizeof(err)), 0);
	assert_string_equal(o.output, "");
	assert_string_equal(o.modules, "");
	assert_string_equal(o.backend, "");
	assert_string_equal(o.numa, "");
	assert_int_equal(o.workers, 1);
	assert_int_equal(o.queue_mb, 4);
	assert_false(o.verbose);
	assert_false(o.disable);
	assert_string_equal(err, "");
}

static void test_good_values(void **state)
{
	struct env e = { {
		{ "MNEMO_OUTPUT", "/tmp/x.%p.yaml" },
		{ "MNEMO_MODULES", "dependence" },
		{ "MNEMO_WORKERS", "8" },
		{ "MNEMO_QUEUE_MB", "16" },
		{ "MNEMO_THREADS", "0" },
		{ "MNEMO_BACKEND", "/opt/mnemo/bin/mnemo-backend" },
		{ "MNEMO_NUMA", "off" },
		{ "MNEMO_BACKENDS", "Per-Module" },
		{ "MNEMO_SPLIT", "shard" },
		{ "MNEMO_VERBOSE", "yes" },
		{ "MNEMO_DISABLE", "Off" },
		{ NULL },
	} };
	struct mn_options o;
	char err[256];

	assert_int_equal(read_env(&o, &e, err, sizeof(err)), 0);
	assert_string_equal(o.output, "/tmp/x.%p.yaml");
	assert_string_equal(o.modules, "dependence");
	assert_string_equal(o.backend, "/opt/mnemo/bin/mnemo-backend");
	assert_string_equal(o.numa, "off");
	assert_int_equal(mn_options_choice(o.backends, mn_options_backends), 1);
	assert_int_equal(mn_options_choice(o.split, mn_options_splits), MN_SPLIT_SHARD);
	assert_int_equal(o.workers, 8);
	assert_int_equal(o.queue_mb, 16);
	assert_int_equal(o.threads, 0);
	assert_true(o.verbose);
	assert_false(o.disable);
}

/* An empty value means "unset": the default stays. */
static void test_empty_is_default(void **state)
{
	struct env e = { {
		{ "MNEMO_WORKERS", "" },
		{ "MNEMO_VERBOSE", "" },
		{ "MNEMO_OUTPUT", "" },
		{ NULL },
	} };
	struct mn_options o;
	char err[256];

	assert_int_equal(read_env(&o, &e, err, sizeof(err)), 0);
	assert_int_equal(o.workers, 1);
	assert_int_equal(o.threads, 16);
	assert_false(o.verbose);
	assert_string_equal(o.output, "");
	/* The first choice is the default: one backend, modules whole. */
	assert_int_equal(mn_options_choice(o.backends, mn_options_backends), 0);
	assert_int_equal(mn_options_choice(o.split, mn_options_splits), MN_SPLIT_MODULE);
}

static void check_bad(const char *name, const char *value, const char *expected)
{
	struct env e = { { { name, value }, { NULL } } };
	struct mn_options o;
	char err[256];

	assert_int_equal(read_env(&o, &e, err, sizeof(err)), -EINVAL);
	if (strcmp(err, expected))
		fail_msg("%s=%s: expected \"%s\", got \"%s\"", name, value, expected, err);
}

static void test_bad_values(void **state)
{
	check_bad("MNEMO_WORKERS", "x", "MNEMO_WORKERS: 'x' is not a number");
	check_bad("MNEMO_WORKERS", "-1", "MNEMO_WORKERS: '-1' is not a number");
	check_bad("MNEMO_WORKERS", " 2", "MNEMO_WORKERS: ' 2' is not a number");
	check_bad("MNEMO_WORKERS", "0x10", "MNEMO_WORKERS: '0x10' is not a number");
	check_bad("MNEMO_WORKERS", "4k", "MNEMO_WORKERS: '4k' is not a number");
	check_bad("MNEMO_WORKERS", "0", "MNEMO_WORKERS: '0' is out of range (1..16)");
	/* Above the maximum, the message says why it is one. */
	check_bad("MNEMO_WORKERS", "17", "MNEMO_WORKERS: '17' is out of range (1..16: the most "
		  "workers whose shadow memories fit a backend's address space)");
	check_bad("MNEMO_WORKERS", "99999999999999999999",
		  "MNEMO_WORKERS: '99999999999999999999' is out of range (1..16: the most workers "
		  "whose shadow memories fit a backend's address space)");
	check_bad("MNEMO_QUEUE_MB", "0", "MNEMO_QUEUE_MB: '0' is out of range (1..1024)");
	check_bad("MNEMO_QUEUE_MB", "4097", "MNEMO_QUEUE_MB: '4097' is out of range (1..1024)");
	check_bad("MNEMO_THREADS", "1024", "MNEMO_THREADS: '1024' is out of range (0..1023: the "
		  "queue's most lanes)");
	check_bad("MNEMO_VERBOSE", "maybe", "MNEMO_VERBOSE: 'maybe' is not a boolean (use 1 or 0)");
	check_bad("MNEMO_DISABLE", "2", "MNEMO_DISABLE: '2' is not a boolean (use 1 or 0)");
	check_bad("MNEMO_BACKENDS", "two", "MNEMO_BACKENDS: 'two' is not one or per-module");
	check_bad("MNEMO_SPLIT", "site", "MNEMO_SPLIT: 'site' is not module or shard");
	check_bad("MNEMO_NUMA", "near",
		  "MNEMO_NUMA: 'near' is not auto, off or a node number (0..1023)");
	check_bad("MNEMO_NUMA", "1024",
		  "MNEMO_NUMA: '1024' is not auto, off or a node number (0..1023)");
	check_bad("MNEMO_NUMA", "-1",
		  "MNEMO_NUMA: '-1' is not auto, off or a node number (0..1023)");
}

/* MNEMO_NUMA: auto (also empty), off, or a node number; a bad one keeps the default, auto. */
static void test_numa(void **state)
{
	static const struct {
		const char *val;
		int ret, mode;
	} cases[] = {
		{ NULL, 0, MN_NUMA_AUTO },   { "", 0, MN_NUMA_AUTO },   { "auto", 0, MN_NUMA_AUTO },
		{ "AUTO", 0, MN_NUMA_AUTO }, { "off", 0, MN_NUMA_OFF }, { "Off", 0, MN_NUMA_OFF },
		{ "0", 0, 0 },               { "3", 0, 3 },             { "0007", 0, 7 },
		{ "1023", 0, 1023 },         { "1024", -EINVAL, 0 },    { "9999999", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },        { " 1", -EINVAL, 0 },      { "1,2", -EINVAL, 0 },
		{ "0x1", -EINVAL, 0 },       { "on", -EINVAL, 0 },      { "local", -EINVAL, 0 },
	};
	struct env e = { { { "MNEMO_NUMA", "x" }, { "MNEMO_VERBOSE", "1" }, { NULL } } };
	struct mn_options o;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int mode = -100, ret = mn_options_numa(cases[i].val, &mode);

		if (ret != cases[i].ret || (!ret && mode != cases[i].mode))
			fail_msg("MNEMO_NUMA=%s: expected %d and mode %d, got %d and mode %d",
				 cases[i].val ? cases[i].val : "(unset)", cases[i].ret,
				 cases[i].mode, ret, mode);
	}
	assert_int_equal(read_env(&o, &e, err, sizeof(err)), -EINVAL);
	assert_string_equal(o.numa, "");
	assert_true(o.verbose);
}

/* A bad value keeps its default, every other option is still read, the first error is kept. */
static void test_bad_keeps_parsing(void **state)
{
	struct env e = { {
		{ "MNEMO_WORKERS", "x" },
		{ "MNEMO_QUEUE_MB", "y" },
		{ "MNEMO_DISABLE", "1" },
		{ NULL },
	} };
	struct mn_options o;
	char err[256];

	assert_int_equal(read_env(&o, &e, err, sizeof(err)), -EINVAL);
	assert_true(o.disable);
	assert_int_equal(o.workers, 1);
	assert_int_equal(o.queue_mb, 4);
	assert_string_equal(err, "MNEMO_WORKERS: 'x' is not a number");
}

static void test_bool_spellings(void **state)
{
	static const char *const yes[] = { "1", "true", "TRUE", "yes", "on", "On" };
	static const char *const no[] = { "0", "false", "no", "NO", "off" };
	struct mn_options o;
	char err[256];

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		struct env e = { { { "MNEMO_VERBOSE", yes[i] }, { NULL } } };

		assert_int_equal(read_env(&o, &e, err, sizeof(err)), 0);
		if (!o.verbose)
			fail_msg("MNEMO_VERBOSE=%s: expected true, got false", yes[i]);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		struct env e = { { { "MNEMO_VERBOSE", no[i] }, { NULL } } };

		assert_int_equal(read_env(&o, &e, err, sizeof(err)), 0);
		if (o.verbose)
			fail_msg("MNEMO_VERBOSE=%s: expected false, got true", no[i]);
	}
}

static void check_path(const char *pattern, const char *program, long pid, const char *cwd,
		       const char *expected)
{
	char out[MN_PATH_MAX];
	int ret = mn_options_output_path(out, sizeof(out), pattern, program, pid, cwd);

	if (ret)
		fail_msg("pattern '%s': expected \"%s\", got error %d", pattern, expected, ret);
	if (strcmp(out, expected))
		fail_msg("pattern '%s': expected \"%s\", got \"%s\"", pattern, expected, out);
}

static void test_output_path(void **state)
{
	/* The default: the program's base name, in the working directory. */
	check_path("", "/usr/local/bin/prog", 42, "/home/u", "/home/u/prog.mnemo.yaml");
	check_path(NULL, "prog", 42, "/home/u", "/home/u/prog.mnemo.yaml");
	check_path("", "", 42, "/w", "/w/a.out.mnemo.yaml");
	check_path("", NULL, 42, "/", "/a.out.mnemo.yaml");
	/* %p, several times; %% is a percent sign; any other % stays. */
	check_path("run.%p.yaml", "prog", 1234, "/w", "/w/run.1234.yaml");
	check_path("/t/%p/%p.yaml", "prog", 7, "/w", "/t/7/7.yaml");
	check_path("a%%p-%x-%", "prog", 7, "/w", "/w/a%p-%x-%");
	check_path("%p", "prog", 2147483647, "/w/", "/w/2147483647");
	/* Relative to cwd, absolute as is. */
	check_path("sub/x.yaml", "prog", 1, "/w", "/w/sub/x.yaml");
	check_path("/abs/x.yaml", "prog", 1, NULL, "/abs/x.yaml");
}

static void check_image(const char *path, long pid, unsigned image, bool pid_in_pattern,
			const char *expected)
{
	char out[MN_PATH_MAX];

	snprintf(out, sizeof(out), "%s", path);
	if (mn_options_image_path(out, sizeof(out), pid, image, pid_in_pattern))
		fail_msg("'%s' image %u: expected \"%s\", got an error", path, image, expected);
	if (strcmp(out, expected))
		fail_msg("'%s' image %u: expected \"%s\", got \"%s\"", path, image, expected, out);
}

/* Each image of a run writes a profile of its own (fork children, exec, started processes). */
static void test_image_path(void **state)
{
	char small[24] = "/w/p.yaml";

	check_image("/w/p.yaml", 42, 0, false, "/w/p.yaml");
	check_image("/w/p.yaml", 42, 1, false, "/w/p.42.yaml");
	check_image("/w/p.yaml", 42, 2, false, "/w/p.42.2.yaml");
	check_image("/w/prog.mnemo.yaml", 7, 1, false, "/w/prog.7.mnemo.yaml");
	check_image("/w/prog.mnemo.yaml", 7, 3, false, "/w/prog.7.3.mnemo.yaml");
	/* No known suffix, or nothing before it: at the end. */
	check_image("/w/out", 7, 1, false, "/w/out.7");
	check_image("/w/.yaml", 7, 1, false, "/w/.yaml.7");
	check_image("/w.yaml/out", 7, 1, false, "/w.yaml/out.7");
	/* The pattern's %p made the name this process's already. */
	check_image("/w/run.7.yaml", 7, 1, true, "/w/run.7.yaml");
	check_image("/w/run.7.yaml", 7, 2, true, "/w/run.7.2.yaml");
	assert_int_equal(mn_options_image_path(small, 12, 123456, 1, false), -ENAMETOOLONG);
	assert_string_equal(small, "/w/p.yaml");
}

static void test_output_path_errors(void **state)
{
	char out[64], big[MN_PATH_MAX + 16];

	assert_int_equal(mn_options_output_path(out, sizeof(out), "x.yaml", "p", 1, NULL), -EINVAL);
	assert_int_equal(mn_options_output_path(out, sizeof(out), "x.yaml", "p", 1, "rel"),
			 -EINVAL);
	assert_int_equal(mn_options_output_path(out, 8, "/abcdefgh.yaml", "p", 1, "/"),
			 -ENAMETOOLONG);
	assert_int_equal(mn_options_output_path(out, sizeof(out), "x.yaml", "p", 1,
						"/a/very/long/working/directory/that/does/not/fit/"
						"in/sixty/four/bytes"), -ENAMETOOLONG);
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(mn_options_output_path(out, sizeof(out), big, "p", 1, "/"), -ENAMETOOLONG);
}

static void check_modules(const char *built, const char *wanted, const char *expected)
{
	char names[MN_MAX_MODULES][MN_MODULE_NAME_MAX], got[512] = "", err[256] = "";
	int n = mn_options_select_modules(names, built, wanted, err, sizeof(err));

	if (n < 0)
		fail_msg("built '%s' wanted '%s': expected \"%s\", got error \"%s\"", built, wanted,
			 expected, err);
	for (int i = 0; i < n; i++) {
		strcat(got, i ? "," : "");
		strcat(got, names[i]);
	}
	if (strcmp(got, expected))
		fail_msg("built '%s' wanted '%s': expected \"%s\", got \"%s\"", built, wanted,
			 expected, got);
}

static void check_modules_bad(const char *built, const char *wanted, const char *expected)
{
	char names[MN_MAX_MODULES][MN_MODULE_NAME_MAX], err[256] = "";
	int n = mn_options_select_modules(names, built, wanted, err, sizeof(err));

	if (n != -EINVAL || strcmp(err, expected))
		fail_msg("built '%s' wanted '%s': expected -EINVAL \"%s\", got %d \"%s\"", built,
			 wanted, expected, n, err);
}

static void test_modules(void **state)
{
	check_modules("value-pattern", "", "value-pattern");
	check_modules("value-pattern,dependence", NULL, "value-pattern,dependence");
	/* The built order, each once, whatever order MNEMO_MODULES lists them in. */
	check_modules("value-pattern,dependence,rds-shape", "rds-shape,value-pattern",
		      "value-pattern,rds-shape");
	check_modules("a,b", "b,b,,", "b");
	check_modules_bad("value-pattern", "foo",
			  "MNEMO_MODULES: 'foo' is not a module this program was built for "
			  "(built for: value-pattern)");
	/* A prefix of a module's name is not that module. */
	check_modules_bad("value-pattern", "value",
			  "MNEMO_MODULES: 'value' is not a module this program was built for "
			  "(built for: value-pattern)");
	check_modules_bad("a,b", ",", "MNEMO_MODULES: ',' names no module");
	check_modules_bad("", "", "this program was built for no module");
	check_modules_bad("a,b,c,d,e,f,g,h,i", "",
			  "more than 8 modules selected (set MNEMO_MODULES)");
	check_modules_bad("a-module-name-of-more-than-31-bytes", "",
			  "module name 'a-module-name-of-more-than-31-bytes' is longer than 31 "
			  "bytes");
}

/* The `sample:` variable's value (spec.h): N, or one message naming variable and value. */
static void test_sample(void **state)
{
	static const struct {
		const char *val;
		unsigned n;     /* 0: rejected */
	} cases[] = {
		{ NULL, 1 }, { "", 1 }, { "1", 1 }, { "2", 2 }, { "1000", 1000 },
		{ "0001000", 1000 }, { "1000000000", 1000000000 },
		{ "0", 0 }, { "-5", 0 }, { "+5", 0 }, { "abc", 0 }, { "10x", 0 }, { " 10", 0 },
		{ "1000000001", 0 }, { "99999999999999999999999", 0 }, { "0x10", 0 },
	};
	char err[256], want[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned n = 12345;
		int ret;

		err[0] = '\0';
		ret = mn_options_sample("MNEMO_T_SAMPLE", cases[i].val, &n, err, sizeof(err));
		if (cases[i].n) {
			if (ret || n != cases[i].n)
				fail_msg("'%s': expected N %u, got %d (N %u, \"%s\")",
					 cases[i].val ? cases[i].val : "(unset)", cases[i].n, ret,
					 n, err);
			continue;
		}
		snprintf(want, sizeof(want), "MNEMO_T_SAMPLE: '%s' is not a sampling period (an "
			 "integer in 1..1000000000)", cases[i].val);
		if (ret != -EINVAL || n != 12345 || strcmp(err, want))
			fail_msg("'%s': expected -EINVAL, N untouched and \"%s\", got %d, N %u, "
				 "\"%s\"", cases[i].val, want, ret, n, err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_good_values),
		cmocka_unit_test(test_empty_is_default),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_bad_keeps_parsing),
		cmocka_unit_test(test_bool_spellings),
		cmocka_unit_test(test_numa),
		cmocka_unit_test(test_output_path),
		cmocka_unit_test(test_output_path_errors),
		cmocka_unit_test(test_image_path),
		cmocka_unit_test(test_modules),
		cmocka_unit_test(test_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
