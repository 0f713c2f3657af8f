/*
 * `mnemo` as a user runs it: bin/mnemo is copied into a fake prefix that has two module specs, and
 * run as a subprocess.  `report` on handcrafted profiles (sorting, --top, site rendering, the
 * incomplete banner, width); `run` option errors, exit status and signal propagation; `merge` on
 * handcrafted profiles (the header of one and of several runs, every refusal, OUT as an input);
 * the helps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef MNEMO_EXE
#error "MNEMO_EXE: path of the built mnemo"
#endif

static char dir[] = "/tmp/mnemo-test-cli-XXXXXX";
static char mnemo[4200];        /* the copy in dir/prefix/bin */

struct result {
	int status;                 /* as from waitpid */
	char *out, *err;
};

/* dir/name, in one of 16 buffers used in turn. */
static char *path_in(const char *name)
{
	static char p[16][4200];
	static int k;

	k = (k + 1) % 16;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = NULL;
	size_t n = 0;

	if (!f)
		return strdup("");
	if (getdelim(&s, &n, '\0', f) < 0) {
		free(s);
		s = strdup("");
	}
	fclose(f);
	return s;
}

/* Runs mnemo with args (NULL-terminated), stdout and stderr captured. */
static struct result run_mnemo(const char *arg, ...)
{
	const char *argv[64];
	struct result r;
	va_list ap;
	int n = 0;
	pid_t pid;

	char out[4200], err[4200];

	snprintf(out, sizeof(out), "%s/stdout", dir);
	snprintf(err, sizeof(err), "%s/stderr", dir);
	argv[n++] = mnemo;
	va_start(ap, arg);
	for (const char *a = arg; a && n < 63; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;

	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (o < 0 || e < 0 || chdir(dir) || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(99);
		execv(mnemo, (char *const *)argv);
		_exit(98);
	}
	assert_int_equal(waitpid(pid, &r.status, 0), pid);
	r.out = read_file(out);
	r.err = read_file(err);
	return r;
}

static void free_result(struct result *r)
{
	free(r->out);
	free(r->err);
}

static void expect_exit(const struct result *r, int code)
{
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != code)
		fail_msg("expected exit status %d, got status %#x\nstdout:\n%s\nstderr:\n%s", code,
			 r->status, r->out, r->err);
}

static void expect_has(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("expected to find\n  '%s'\nin\n%s", part, text);
}

static void expect_lacks(const char *text, const char *part)
{
	if (strstr(text, part))
		fail_msg("did not expect\n  '%s'\nin\n%s", part, text);
}

/* ---- report ---------------------------------------------------------------------------------- */

#define NROWS 25
static const char long_function[] =
	"std::vector<std::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
	"std::allocator<std::basic_string<char, std::char_traits<char>, std::allocator<char> > > "
	">::_M_realloc_insert";

static unsigned count_of(unsigned site)
{
	return site * 37 % 101;   /* distinct for sites 1..25 */
}

/*
 * A profile with one table of NROWS rows: site i has count_of(i); site 25 has no debug info.  Its
 * sections are of modules mnemo does not have (a real module's would have to follow its schema).
 */
static const char *write_report_profile(bool complete)
{
	const char *path = path_in(complete ? "complete.mnemo.yaml" : "prog.mnemo.yaml");
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "format: mnemo-profile/1\n"
		   "program: {argv: [./prog, input.txt], pid: 4242, exit_status: %s, signal: %s,\n"
		   "          wall_seconds: 1.5, events: 123456}\n"
		   "complete: %s\n"
		   "incomplete_reason: the program was killed by SIGSEGV\n"
		   "sites:\n",
		complete ? "3" : "-1", complete ? "null" : "11", complete ? "true" : "false");
	for (unsigned i = 1; i < NROWS; i++) {
		char fn[16];

		snprintf(fn, sizeof(fn), "f%u", i);
		fprintf(f, "  %u: {kind: load, function: \"%s\", file: src/prog.c, line: %u, column: 3}\n",
			i, i == 7 ? long_function : fn, i);
	}
	fprintf(f, "  %u: {kind: load, function: g, file: '', line: 0, column: 0}\n", NROWS);
	fprintf(f, "modules:\n"
		   "  example:\n"
		   "    value_cap: 16\n"
		   "    sample_ratio: 0.5\n"
		   "    exact: true\n"
		   "    loads:\n");
	for (unsigned i = 1; i <= NROWS; i++)
		fprintf(f, "      - {site: %u, count: %u, ratio: %u.25, constant: %s}\n", i,
			count_of(i), NROWS - i, i % 2 ? "true" : "false");
	fprintf(f, "  other: just text\n");
	assert_int_equal(fclose(f), 0);
	return path;
}

/* The data rows of the first table in a report: the lines after the first dashes line. */
static int table_rows(const char *out, char rows[][256], int max)
{
	const char *p = strstr(out, "\n  ----");
	int n = 0;

	assert_non_null(p);
	p = strchr(p + 1, '\n') + 1;
	while (*p && *p != '\n' && n < max && strncmp(p, "  ...", 5)) {
		const char *e = strchr(p, '\n');

		snprintf(rows[n++], 256, "%.*s", (int)(e - p), p);
		p = e + 1;
	}
	return n;
}

static unsigned row_count(const char *row)
{
	/* "prog.c:3:3 f3   <count>  ratio ..." : the count is the first number after 2 blanks */
	const char *p = strstr(row + 2, "  ");
	unsigned v = 0;

	assert_non_null(p);
	assert_int_equal(sscanf(p, "%u", &v), 1);
	return v;
}

static size_t display_cols(const char *s, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

static void test_report_default(void **state)
{
	const char *path = write_report_profile(false);
	struct result r = run_mnemo("report", path, NULL);
	char rows[NROWS][256], want[256];
	unsigned best = 1, n;

	expect_exit(&r, 0);
	expect_has(r.out, "program   ./prog input.txt\n");
	expect_has(r.out, "pid       4242\n");
	expect_has(r.out, "killed by signal 11 (SIGSEGV)");
	expect_has(r.out, "wall      1.500 s\n");
	expect_has(r.out, "events    123456\n");
	expect_has(r.out, "INCOMPLETE: the program was killed by SIGSEGV\n");
	expect_has(r.out, "Module example\n");
	expect_has(r.out, "  value_cap: 16\n");
	expect_has(r.out, "  sample_ratio: 0.500\n");
	expect_has(r.out, "  exact: yes\n");
	expect_has(r.out, "loads: 25 rows, by count (largest first)");
	expect_has(r.out, "Module other\n  just text\n");

	/* Sorted by count, largest first: the first numeric column that is not a site. */
	n = table_rows(r.out, rows, NROWS);
	assert_int_equal(n, 20);
	for (unsigned i = 1; i <= NROWS; i++)
		if (count_of(i) > count_of(best))
			best = i;
	snprintf(want, sizeof(want), "src/prog.c:%u:3 f%u ", best, best);
	if (strncmp(rows[0] + 2, want, strlen(want)))
		fail_msg("expected the first row to be site %u ('%s'), got '%s'", best, want,
			 rows[0]);
	for (unsigned i = 1; i < n; i++)
		if (row_count(rows[i]) > row_count(rows[i - 1]))
			fail_msg("rows out of order:\n%s\n%s", rows[i - 1], rows[i]);
	expect_has(r.out, "  ... 5 more rows\n");

	/* Doubles with 3 decimals, booleans as yes/no. */
	expect_has(r.out, ".250  ");
	expect_has(r.out, "  yes");
	expect_has(r.out, "  no");

	/* Every line fits 100 columns; the long C++ name is cut with an ellipsis. */
	for (const char *l = r.out; *l;) {
		const char *e = strchrnul(l, '\n');

		if (display_cols(l, e - l) > 100)
			fail_msg("line wider than 100 columns:\n%.*s", (int)(e - l), l);
		l = *e ? e + 1 : e;
	}
	free_result(&r);

	/* All rows: site 7's long name is cut, site 25 has no debug info. */
	r = run_mnemo("report", "--top", "0", path, NULL);
	expect_exit(&r, 0);
	expect_lacks(r.out, "more rows");
	expect_has(r.out, "src/prog.c:7:3 std::vector<std::basic_string<char");
	expect_has(r.out, "…");
	expect_lacks(r.out, "_M_realloc_insert");
	expect_has(r.out, "site 25 (no debug info)");
	free_result(&r);
}

static void test_report_top_sort(void **state)
{
	const char *path = write_report_profile(true);
	char rows[NROWS][256];
	struct result r = run_mnemo("report", "--top", "3", path, NULL);

	expect_exit(&r, 0);
	expect_has(r.out, "complete  yes\n");
	expect_has(r.out, "exit      status 3\n");
	expect_lacks(r.out, "INCOMPLETE");
	assert_int_equal(table_rows(r.out, rows, NROWS), 3);
	expect_has(r.out, "  ... 22 more rows\n");
	free_result(&r);

	/* --sort by a site column: by id. */
	r = run_mnemo("report", "--sort", "site", "--top", "2", path, NULL);
	expect_exit(&r, 0);
	assert_int_equal(table_rows(r.out, rows, NROWS), 2);
	expect_has(rows[0], "src/prog.c:1:3 f1 ");
	expect_has(rows[1], "src/prog.c:2:3 f2 ");
	expect_has(r.out, "loads: 25 rows, by site\n");
	free_result(&r);

	/* --sort by a double column: largest first, ratio of site 1 is 24.25. */
	r = run_mnemo("report", "--sort", "ratio", "--module", "example", path, NULL);
	expect_exit(&r, 0);
	table_rows(r.out, rows, NROWS);
	expect_has(rows[0], "src/prog.c:1:3 f1 ");
	expect_has(rows[0], "24.250");
	expect_lacks(r.out, "Module other");
	free_result(&r);

	r = run_mnemo("report", "--sort", "nope", path, NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "mnemo: --sort: no table has a column 'nope' (columns: site, count, ratio, "
			  "constant)");
	assert_string_equal(r.out, "");
	free_result(&r);

	r = run_mnemo("report", "--top", "x", path, NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "--top: expected a number, got 'x'");
	free_result(&r);

	r = run_mnemo("report", "--module", "rds-shape", path, NULL);
	expect_exit(&r, 1);
	expect_has(r.err, "no module 'rds-shape' in this profile (it has: example, other)");
	free_result(&r);
}

static void test_report_bad_profile(void **state)
{
	const char *bad = path_in("bad.mnemo.yaml"), *good = write_report_profile(true);
	char want[4300];
	struct result r;

	write_file(bad, "format: mnemo-profile/1\ncomplete: true\nsites: [1, 2]\n");
	r = run_mnemo("report", bad, good, NULL);
	expect_exit(&r, 1);
	snprintf(want, sizeof(want), "mnemo: %s:3:8: expected a mapping for 'sites'", bad);
	expect_has(r.err, want);
	/* The good one is still reported. */
	expect_has(r.out, "Module example");
	free_result(&r);

	write_file(bad, "format: foo\n");
	r = run_mnemo("report", bad, NULL);
	expect_exit(&r, 1);
	snprintf(want, sizeof(want),
		 "mnemo: %s: not a mnemo profile (format: 'foo', expected 'mnemo-profile/1')\n", bad);
	assert_string_equal(r.err, want);
	free_result(&r);

	r = run_mnemo("report", NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "mnemo: no profile given");
	free_result(&r);
}

static void expect_fits(const char *out)
{
	for (const char *l = out; *l;) {
		const char *e = strchrnul(l, '\n');

		if (display_cols(l, e - l) > 100)
			fail_msg("line wider than 100 columns:\n%.*s\nin\n%s", (int)(e - l), l,
				 out);
		l = *e ? e + 1 : e;
	}
}

/*
 * A table too wide for 100 columns (value-pattern's, in a section of a module mnemo does not have):
 * names wrap after underscores, and sites go on lines of their own.  Several site columns
 * (dependence's) share the width instead.
 */
static void test_report_wide_table(void **state)
{
	const char *path = path_in("wide.mnemo.yaml");
	struct result r;

	write_file(path,
		   "format: mnemo-profile/1\n"
		   "complete: true\n"
		   "sites:\n"
		   "  12: {kind: load, function: main, file: src/stride.c, line: 27, column: 19}\n"
		   "  14: {kind: load, function: 'walk(matrix const&, unsigned long)', file: src/stride.c,"
		   " line: 31, column: 7}\n"
		   "  15: {kind: store, function: init, file: src/stride.c, line: 12, column: 5}\n"
		   "  16: {kind: loop, function: init, file: src/stride.c, line: 11, column: 3}\n"
		   "modules:\n"
		   "  value-like:\n"
		   "    entries:\n"
		   "      - {site: 14, access: load, executions: 641, constant: false, distinct: 16,"
		   " distinct_capped: true, stride: 8, stride_fraction: 0.9984375, strongly_strided: true}\n"
		   "      - {site: 12, access: load, executions: 1000, constant: true, value: 42,"
		   " distinct: 1, distinct_capped: false, stride: 0, stride_fraction: 1.0,"
		   " strongly_strided: true}\n"
		   "  dependence-like:\n"
		   "    loops:\n"
		   "      - {loop: 16, src: 15, dst: 14, kind: anti, carried: false, count: 7}\n"
		   "      - {loop: 16, src: 12, dst: 15, kind: flow, carried: true, count: 100}\n");
	r = run_mnemo("report", path, NULL);
	expect_exit(&r, 0);
	expect_fits(r.out);
	expect_has(r.out, "entries: 2 rows, by executions (largest first)\n  site\n");
	expect_has(r.out, " distinct_ ");
	expect_has(r.out, " capped ");
	expect_has(r.out, "\n  src/stride.c:27:19 main\n      load          1000  yes");
	expect_has(r.out, "\n  src/stride.c:31:7 walk(matrix const&, unsigned long)\n      load  ");
	/* loop is a site column too, so rows sort by count. */
	expect_has(r.out, "loops: 2 rows, by count (largest first)\n  loop  ");
	expect_has(r.out, "\n  src/stride.c:11:3 init  src/stride.c:27:19 main  src/stride.c:12:5 init");
	free_result(&r);
}

/* Odd but valid YAML never crashes the report. */
static void test_report_odd_sections(void **state)
{
	const char *path = path_in("odd.mnemo.yaml");
	struct result r;

	write_file(path, "format: mnemo-profile/1\n"
			 "complete: true\n"
			 "modules:\n"
			 "  a: 42\n"
			 "  b: [x, 1, {k: v}, [1, [2, [3, [4, [5]]]]]]\n"
			 "  c: {}\n"
			 "  d: ~\n"
			 "  e: &x {self: *x, rows: [{site: 0, n: .inf}, {site: 1, n: .nan}, {n: 2}]}\n"
			 "  f: {m: {1: {v: 1}, 2: {v: 3}}, deep: {a: {b: {c: {d: {e: {f: {g: {h: {i: {j: 1}}}}}}}}}}}\n");
	r = run_mnemo("report", path, NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "Module a\n  42\n");
	expect_has(r.out, "site 0 (none: outside every loop, or no site)");
	expect_has(r.out, "site 1 (not in the sites table)");
	expect_has(r.out, "inf");
	expect_has(r.out, "nested deeper than");
	free_result(&r);
}

/* A long inline value is cut at an item, with "…" for the rest: a 30-key summary (an rds-shape
 * summary has 22) is shown whole, and a cut never leaves a key without its value. */
static void test_report_long_inline(void **state)
{
	const char *path = path_in("long.mnemo.yaml");
	FILE *f = fopen(path, "w");
	struct result r;

	assert_non_null(f);
	fprintf(f, "format: mnemo-profile/1\ncomplete: true\nmodules:\n  m:\n    summary: {");
	for (int i = 0; i < 30; i++)
		fprintf(f, "%skey_%02d: %d", i ? ", " : "", i, 1000000 + i);
	fprintf(f, "}\n    wide: {");
	for (int i = 0; i < 100; i++)
		fprintf(f, "%skey_%02d: %d", i ? ", " : "", i, 1000000 + i);
	fprintf(f, "}\n    long: [");
	for (int i = 0; i < 300; i++)
		fprintf(f, "%s%d", i ? ", " : "", i);
	fprintf(f, "]\n");
	assert_int_equal(fclose(f), 0);
	r = run_mnemo("report", path, NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "key_29: 1000029}");
	expect_has(r.out, ", …}");
	expect_has(r.out, ", …]");
	expect_lacks(r.out, ": }");
	expect_lacks(r.out, ": ,");
	free_result(&r);
}

/* Aliases of aliases: 9 levels of 8 make 8^8 paths to one node in a few hundred bytes.  Each node
 * is printed once (the fuzzing of tests/fuzz found the report printing gigabytes). */
static void test_report_alias_bomb(void **state)
{
	const char *path = path_in("bomb.mnemo.yaml");
	char text[2048];
	size_t len = (size_t)snprintf(text, sizeof(text), "format: mnemo-profile/1\ncomplete: true\n"
				      "modules:\n  m:\n    a0: &a0 [x, x, x, x, x, x, x, x]\n");
	struct result r;

	for (int i = 1; i < 9; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"    a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n",
					i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	write_file(path, text);
	r = run_mnemo("report", path, NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "a YAML alias of a node shown earlier");
	assert_true(strlen(r.out) < 100000);
	free_result(&r);
}

/* ---- run ------------------------------------------------------------------------------------- */

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void test_run_output_errors(void **state)
{
	const char *marker = path_in("ran"), *ro = path_in("readonly");
	char cmd[4300], want[4300];
	struct result r;

	snprintf(cmd, sizeof(cmd), "touch '%s'", marker);

	r = run_mnemo("run", "-o", "/nonexistent/dir/x.yaml", "--", "/bin/sh", "-c", cmd, NULL);
	expect_exit(&r, 2);
	assert_string_equal(r.err, "mnemo: cannot write profile '/nonexistent/dir/x.yaml': "
				   "No such file or directory\n");
	assert_false(exists(marker));
	free_result(&r);

	/* root writes anywhere a mode allows nothing: /sys refuses even root. */
	if (geteuid() == 0) {
		ro = "/sys/x.yaml";
	} else {
		assert_int_equal(mkdir(ro, 0555), 0);
		ro = path_in("readonly/x.yaml");
	}
	r = run_mnemo("run", "-o", ro, "/bin/sh", "-c", cmd, NULL);
	expect_exit(&r, 2);
	snprintf(want, sizeof(want), "mnemo: cannot write profile '%s': Permission denied\n", ro);
	assert_string_equal(r.err, want);
	assert_false(exists(marker));
	free_result(&r);

	r = run_mnemo("run", "-o", dir, "/bin/sh", "-c", cmd, NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "Is a directory");
	assert_false(exists(marker));
	free_result(&r);
}

static void test_run_option_errors(void **state)
{
	const char *marker = path_in("ran");
	char cmd[4300];
	struct result r;

	snprintf(cmd, sizeof(cmd), "touch '%s'", marker);

	r = run_mnemo("run", "-m", "value-pattern,foo", "/bin/sh", "-c", cmd, NULL);
	expect_exit(&r, 2);
	assert_string_equal(r.err, "mnemo: unknown module 'foo' (known: dependence, value-pattern)\n");
	assert_false(exists(marker));
	free_result(&r);

	r = run_mnemo("run", "-j", "0", "/bin/sh", "-c", cmd, NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "mnemo: -j: expected a positive number, got '0'");
	free_result(&r);

	r = run_mnemo("run", "--queue-mb", "lots", "/bin/sh", "-c", cmd, NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "mnemo: --queue-mb: expected a positive number, got 'lots'");
	free_result(&r);

	r = run_mnemo("run", "--numa", "1024", "/bin/sh", "-c", cmd, NULL);
	expect_exit(&r, 2);
	expect_has(r.err,
		   "mnemo: --numa: expected auto, off or a node number (0..1023), got '1024'");
	free_result(&r);

	r = run_mnemo("run", "--frobnicate", "/bin/sh", NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "mnemo: unknown option '--frobnicate'\nTry 'mnemo run --help'.");
	free_result(&r);

	r = run_mnemo("run", NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "mnemo: no program to run");
	free_result(&r);
	assert_false(exists(marker));

	r = run_mnemo("run", "--", "no-such-program-mnemo-test", NULL);
	expect_exit(&r, 127);
	assert_string_equal(r.err,
			    "mnemo: cannot run 'no-such-program-mnemo-test': No such file or directory\n");
	free_result(&r);

	r = run_mnemo("run", dir, NULL);
	expect_exit(&r, 126);
	expect_has(r.err, "Permission denied");
	free_result(&r);
}

static void test_run_status_and_signal(void **state)
{
	struct result r = run_mnemo("run", "--", "/bin/sh", "-c", "echo out; exit 3", NULL);

	expect_exit(&r, 3);
	assert_string_equal(r.out, "out\n");
	assert_string_equal(r.err, "mnemo: no profile was written: /bin/sh was not built with mnemo-cc (it carries no Mnemo site table)\n");
	free_result(&r);

	r = run_mnemo("run", "/bin/sh", "-c", "kill -SEGV $$", NULL);
	if (!WIFSIGNALED(r.status) || WTERMSIG(r.status) != SIGSEGV)
		fail_msg("expected death by SIGSEGV, got status %#x\n%s", r.status, r.err);
	free_result(&r);

	r = run_mnemo("run", "/bin/sh", "-c", "kill -TERM $$", NULL);
	if (!WIFSIGNALED(r.status) || WTERMSIG(r.status) != SIGTERM)
		fail_msg("expected death by SIGTERM, got status %#x\n%s", r.status, r.err);
	free_result(&r);
}

static void test_run_environment(void **state)
{
	const char *out = path_in("out.yaml");
	struct result r;

	/* The options become the runtime's variables; a written profile means no warning. */
	r = run_mnemo("run", "-o", out, "-j", "3", "-m", "value-pattern", "--queue-mb", "8",
		      "--numa", "off", "-v", "/bin/sh", "-c",
		      "echo $MNEMO_WORKERS $MNEMO_MODULES $MNEMO_QUEUE_MB $MNEMO_NUMA "
		      "$MNEMO_VERBOSE; "
		      "echo x > \"$MNEMO_OUTPUT\"", NULL);
	expect_exit(&r, 0);
	assert_string_equal(r.out, "3 value-pattern 8 off 1\n");
	expect_has(r.err, "mnemo: MNEMO_OUTPUT=");
	expect_has(r.err, "profile written to");
	expect_lacks(r.err, "no profile was written");
	assert_true(exists(out));
	free_result(&r);

	/* %p is the program's pid. */
	r = run_mnemo("run", "-o", path_in("p.%p.yaml"), "/bin/sh", "-c",
		      "f=$(printf %s \"$MNEMO_OUTPUT\" | sed \"s/%p/$$/\"); echo x > \"$f\"", NULL);
	expect_exit(&r, 0);
	assert_string_equal(r.err, "");
	free_result(&r);

	/* The default profile name: <program>.mnemo.yaml in the working directory. */
	r = run_mnemo("run", "/bin/sh", "-c", "echo x > sh.mnemo.yaml", NULL);
	expect_exit(&r, 0);
	assert_string_equal(r.err, "");
	free_result(&r);
	/* ... and an old one left there does not count as written. */
	r = run_mnemo("run", "/bin/sh", "-c", "true", NULL);
	expect_exit(&r, 0);
	expect_has(r.err, "no profile was written");
	free_result(&r);
}

/* ---- merge ----------------------------------------------------------------------------------- */

/* What a merge profile may vary: the rest is fixed. */
struct mprof {
	const char *arg;          /* argv[1] */
	int exit_status;
	int events;
	const char *binary;       /* the `binary:` line, or "" for none */
	const char *site1_kind;
	const char *load;         /* null's load count (text: may be malformed) */
	const char *context;      /* dependence's context: setting */
	bool dependence;          /* with the dependence section */
	const char *complete;     /* the complete: line(s); NULL: "complete: true" */
};

/*
 * A profile as the backend writes one (so that merging it alone gives it back): null's counts and
 * a dependence section.  Line 11 is null's `load:`.
 */
static const char *write_merge_profile(const char *name, const struct mprof *m)
{
	const char *path = path_in(name);
	char text[4096];

	snprintf(text, sizeof(text),
		 "format: mnemo-profile/1\n"
		 "program: {argv: [./prog, %s], exit_status: %d, signal: null, events: %d}\n"
		 "%s"
		 "%s"
		 "sites:\n"
		 "  1: {kind: %s, function: main, file: p.c, line: 3, column: 5}\n"
		 "  2: {kind: loop, function: main, file: p.c, line: 2, column: 3}\n"
		 "modules:\n"
		 "  \"null\":\n"
		 "    counts:\n"
		 "      load: %s\n"
		 "      store: 2\n"
		 "      heap_alloc: 0\n"
		 "      heap_free: 0\n"
		 "      func_entry: 1\n"
		 "      func_exit: 1\n"
		 "      loop_invoke: 1\n"
		 "      loop_iter: 4\n"
		 "      loop_exit: 1\n"
		 "%s%s%s",
		 m->arg, m->exit_status, m->events, m->binary,
		 m->complete ? m->complete : "complete: true\n", m->site1_kind, m->load,
		 m->dependence ? "  dependence:\n    granularity: 8\n    context: " : "",
		 m->dependence ? m->context : "",
		 m->dependence ? "\n    loops:\n"
		 "    - {loop: 2, invocations: 1, iterations: 4}\n"
		 "    dependences:\n"
		 "    - {loop: 2, kind: raw, src: 1, dst: 1, carried: true, count: 3, "
		 "min_distance: 1, max_distance: 2}\n"
		 "    lost: {aliases: 0, nomem: 0, clipped: 0, clock_resets: 0}\n" : "");
	write_file(path, text);
	return path;
}

#define BINARY_A "binary: {site_count: 2, site_table_hash: \"0123456789abcdef\"}\n"
#define BINARY_B "binary: {site_count: 2, site_table_hash: fedcba9876543210}\n"

static const struct mprof mbase = { "x", 0, 10, BINARY_A, "load", "1", "false", true, NULL };

/* No leftover temporary file of a merge in dir. */
static void expect_no_tmp(void)
{
	char cmd[4300];
	char *list;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' > '%s/ls.out'", dir, dir);
	assert_int_equal(system(cmd), 0);
	list = read_file(path_in("ls.out"));
	expect_lacks(list, ".merge.");
	free(list);
}

static void test_merge_header(void **state)
{
	struct mprof m = mbase;
	const char *a, *b, *c, *out = path_in("merged.yaml");
	char *text, *want;
	struct result r;

	a = write_merge_profile("a.yaml", &m);
	m.events = 20;
	m.load = "5";
	b = write_merge_profile("b.yaml", &m);
	m.arg = "y";
	m.exit_status = 3;
	m.load = "7";
	c = write_merge_profile("c.yaml", &m);

	/* One profile: itself, byte for byte. */
	r = run_mnemo("merge", "-o", out, a, NULL);
	expect_exit(&r, 0);
	text = read_file(out);
	want = read_file(a);
	assert_string_equal(text, want);
	free(text);
	free(want);
	free_result(&r);

	/* Two runs, same argv: kept; events and counts add; distances min/max. */
	r = run_mnemo("merge", "-o", out, a, b, NULL);
	expect_exit(&r, 0);
	text = read_file(out);
	expect_has(text, "program: {argv: [./prog, x], runs: 2, exit_status: 0, signal: null, "
		   "events: 30}\n" BINARY_A "complete: true\n");
	expect_has(text, "      load: 6\n      store: 4\n");
	expect_has(text, "      loop_iter: 8\n");
	expect_has(text, "    - {loop: 2, invocations: 2, iterations: 8}\n");
	expect_has(text, "count: 6, min_distance: 1, max_distance: 2}");
	free(text);
	free_result(&r);

	/* argv and exit status differ: left out and null; three runs. */
	r = run_mnemo("merge", "-o", "-", a, b, c, NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "program: {runs: 3, exit_status: null, signal: null, events: 50}\n");
	expect_has(r.out, "      load: 13\n");
	free_result(&r);

	/* Incomplete runs: each reason once, sorted; one profile keeps its own as it is. */
	m = mbase;
	m.complete = "complete: false\nincomplete_reason: b went wrong; a went wrong\n";
	b = write_merge_profile("b.yaml", &m);
	m.complete = "complete: false\nincomplete_reason: c went wrong; a went wrong\n";
	c = write_merge_profile("c.yaml", &m);
	r = run_mnemo("merge", "-o", "-", a, b, c, NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "complete: false\nincomplete_reason: a went wrong; b went wrong; c went "
		   "wrong\nsites:\n");
	free_result(&r);
	r = run_mnemo("merge", "-o", "-", b, NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "complete: false\nincomplete_reason: b went wrong; a went wrong\n");
	free_result(&r);
	expect_no_tmp();
}

static void test_merge_refusals(void **state)
{
	struct mprof m = mbase;
	const char *a, *b, *out = path_in("refused.yaml");
	char want[9000];
	struct result r;

	a = write_merge_profile("a.yaml", &m);
	write_file(out, "untouched\n");

	/* Different binaries: by binary:, and by the site rows when a profile has none. */
	m.binary = BINARY_B;
	b = write_merge_profile("b.yaml", &m);
	r = run_mnemo("merge", "-o", out, a, b, NULL);
	expect_exit(&r, 1);
	snprintf(want, sizeof(want), "mnemo: merge: '%s' and '%s' are profiles of different "
		 "binaries (binary.site_table_hash 0123456789abcdef and fedcba9876543210)\n", a, b);
	assert_string_equal(r.err, want);
	free_result(&r);
	m.binary = "";
	m.site1_kind = "store";
	b = write_merge_profile("b.yaml", &m);
	r = run_mnemo("merge", "-o", out, a, b, NULL);
	expect_exit(&r, 1);
	snprintf(want, sizeof(want), "mnemo: merge: '%s' and '%s' are profiles of different "
		 "binaries (site 1: kind 'load' and 'store')\n", a, b);
	assert_string_equal(r.err, want);
	free_result(&r);

	/*
	 * An implausible site count (more than 1 << 24): refused, naming the file, before a table
	 * of that many lines is built; without `binary:`, the highest site id listed counts.
	 */
	m = mbase;
	m.binary = "binary: {site_count: 16777217, site_table_hash: \"0123456789abcdef\"}\n";
	b = write_merge_profile("b.yaml", &m);
	r = run_mnemo("merge", "-o", out, b, NULL);
	expect_exit(&r, 1);
	snprintf(want, sizeof(want), "mnemo: merge: '%s': binary.site_count 16777217 is "
		 "implausible (more than 16777216 sites)\n", b);
	assert_string_equal(r.err, want);
	free_result(&r);
	b = path_in("b.yaml");
	write_file(b, "format: mnemo-profile/1\n"
		   "complete: true\n"
		   "sites:\n"
		   "  4000000000: {kind: load, function: main, file: p.c, line: 3, column: 5}\n"
		   "modules: {}\n");
	r = run_mnemo("merge", "-o", out, b, NULL);
	expect_exit(&r, 1);
	snprintf(want, sizeof(want), "mnemo: merge: '%s': site 4000000000 is implausible (more "
		 "than 16777216 sites)\n", b);
	assert_string_equal(r.err, want);
	free_result(&r);

	/* Different settings: the key, both values, both files. */
	m = mbase;
	m.context = "true";
	b = write_merge_profile("b.yaml", &m);
	r = run_mnemo("merge", "-o", out, a, b, NULL);
	expect_exit(&r, 1);
	snprintf(want, sizeof(want), "mnemo: merge: module 'dependence': setting 'context' "
		 "differs: 'false' in '%s', 'true' in '%s'\n", a, b);
	assert_string_equal(r.err, want);
	free_result(&r);

	/* Different module sets. */
	m = mbase;
	m.dependence = false;
	b = write_merge_profile("b.yaml", &m);
	r = run_mnemo("merge", "-o", out, a, b, NULL);
	expect_exit(&r, 1);
	snprintf(want, sizeof(want), "mnemo: merge: module 'dependence' is in '%s' but not in "
		 "'%s'\n", a, b);
	assert_string_equal(r.err, want);
	free_result(&r);

	/* A section that does not restore: the module's message names file:line:col and field. */
	m = mbase;
	m.load = "many";
	b = write_merge_profile("b.yaml", &m);
	r = run_mnemo("merge", "-o", out, a, b, NULL);
	expect_exit(&r, 1);
	snprintf(want, sizeof(want), "mnemo: merge: module 'null': %s:11:", b);
	expect_has(r.err, want);
	expect_has(r.err, "field 'load': expected an unsigned integer");
	free_result(&r);

	/* Nothing was written over OUT, and no temporary file is left. */
	{
		char *text = read_file(out);

		assert_string_equal(text, "untouched\n");
		free(text);
	}
	expect_no_tmp();

	/* Usage. */
	r = run_mnemo("merge", a, NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "mnemo: no output: give -o OUT");
	free_result(&r);
	r = run_mnemo("merge", "-o", out, NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "mnemo: no profiles to merge");
	free_result(&r);
	r = run_mnemo("merge", "-o", out, path_in("missing.yaml"), NULL);
	expect_exit(&r, 1);
	expect_has(r.err, "mnemo: merge: ");
	expect_has(r.err, "missing.yaml");
	free_result(&r);
}

/* OUT may be an input: it is read in full before it is replaced. */
static void test_merge_in_place(void **state)
{
	struct mprof m = mbase;
	const char *a, *b, *ref = path_in("ref.yaml");
	char *want, *got;
	struct result r;

	a = write_merge_profile("a.yaml", &m);
	m.load = "5";
	b = write_merge_profile("b.yaml", &m);
	r = run_mnemo("merge", "-o", ref, a, b, NULL);
	expect_exit(&r, 0);
	free_result(&r);
	r = run_mnemo("merge", "-o", a, a, b, NULL);
	expect_exit(&r, 0);
	free_result(&r);
	want = read_file(ref);
	got = read_file(a);
	assert_string_equal(got, want);
	expect_has(got, "runs: 2");
	free(want);
	free(got);
	expect_no_tmp();
}

/* ---- help ------------------------------------------------------------------------------------ */

static void test_help(void **state)
{
	struct result r = run_mnemo("--help", NULL);

	expect_exit(&r, 0);
	expect_has(r.out, "mnemo: a memory profiler");
	expect_has(r.out, "  run ");
	expect_has(r.out, "  report ");
	expect_has(r.out, "  merge    merge the profiles of several runs");
	expect_has(r.out, "  value-pattern        constant and few-valued loads and stores");
	expect_has(r.out, "  dependence           memory dependences");
	expect_has(r.out, "MNEMO_OUTPUT");
	expect_has(r.out, "MNEMO_WORKERS=N");
	expect_has(r.out, "balances the modules among them; default 1");
	expect_has(r.out, "MNEMO_DISABLE=1");
	for (const char *l = r.out; *l;) {
		const char *e = strchrnul(l, '\n');

		if (display_cols(l, e - l) > 100)
			fail_msg("help line wider than 100 columns:\n%.*s", (int)(e - l), l);
		l = *e ? e + 1 : e;
	}
	free_result(&r);

	r = run_mnemo("help", "run", NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "Usage: mnemo run [OPTIONS] [--] PROGRAM [ARGS...]");
	free_result(&r);
	r = run_mnemo("run", "--help", NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "Usage: mnemo run");
	free_result(&r);
	r = run_mnemo("report", "--help", NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "Usage: mnemo report [OPTIONS] PROFILE...");
	free_result(&r);
	r = run_mnemo("--version", NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "mnemo ");
	expect_has(r.out, "mnemo-profile/1");
	free_result(&r);
	r = run_mnemo("merge", "--help", NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "Usage: mnemo merge -o OUT PROFILE...");
	free_result(&r);
	r = run_mnemo("help", "merge", NULL);
	expect_exit(&r, 0);
	expect_has(r.out, "Usage: mnemo merge -o OUT PROFILE...");
	free_result(&r);
	r = run_mnemo("frobnicate", NULL);
	expect_exit(&r, 2);
	expect_has(r.err, "mnemo: unknown command 'frobnicate' (commands: run, report, expand, "
		   "derive, merge, help)");
	free_result(&r);
	r = run_mnemo(NULL);
	expect_exit(&r, 2);
	free_result(&r);
}

/* ---- fixture --------------------------------------------------------------------------------- */

static int setup(void **state)
{
	char cmd[9000];

	if (!mkdtemp(dir))
		return -1;
	snprintf(mnemo, sizeof(mnemo), "%s/prefix/bin/mnemo", dir);
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%s'; mkdir -p prefix/bin prefix/share/mnemo/modules/value-pattern "
		 "prefix/share/mnemo/modules/dependence; cp '%s' prefix/bin/mnemo; "
		 "printf 'module: value-pattern\\ndoc: constant and few-valued loads and stores\\n' "
		 "> prefix/share/mnemo/modules/value-pattern/events.yaml; "
		 "printf 'module: dependence\\ndoc: memory dependences per loop\\nevents: {}\\n' "
		 "> prefix/share/mnemo/modules/dependence/events.yaml",
		 dir, MNEMO_EXE);
	return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_default),
		cmocka_unit_test(test_report_top_sort),
		cmocka_unit_test(test_report_bad_profile),
		cmocka_unit_test(test_report_wide_table),
		cmocka_unit_test(test_report_odd_sections),
		cmocka_unit_test(test_report_alias_bomb),
		cmocka_unit_test(test_report_long_inline),
		cmocka_unit_test(test_run_output_errors),
		cmocka_unit_test(test_run_option_errors),
		cmocka_unit_test(test_run_status_and_signal),
		cmocka_unit_test(test_run_environment),
		cmocka_unit_test(test_merge_header),
		cmocka_unit_test(test_merge_refusals),
		cmocka_unit_test(test_merge_in_place),
		cmocka_unit_test(test_help),
	};

	return cmocka_run_group_tests_name("mnemo_cli", tests, setup, teardown);
}
