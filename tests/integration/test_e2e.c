/*
 * End-to-end tests: real programs built with mnemo-cc, run, and their profiles checked against answers
 * known by construction (tests/integration/programs/).  Every program is also built natively, and its
 * output and exit status or signal under profiling must be exactly the native ones.
 *
 * Sites are found by source line: each program marks the lines the test looks at with MARK:<name>.
 * Several sites may share a line (an access and its copy after optimization); the checks aggregate
 * over all entries of the line, so they hold whatever the optimizer duplicated.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile.h"

static char work[] = "/tmp/mnemo-e2e.XXXXXX";

struct run {
	int status;     /* exit status, or -1 */
	int signal;     /* terminating signal, or 0 */
	char out[8192]; /* stdout */
	char err[8192]; /* stderr */
};

static int shell(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* Runs exe with the NULL-terminated environment additions in env; stdout and stderr captured. */
static void run(const char *exe, const char *const *env, struct run *r)
{
	char out[512], err[512];
	pid_t pid;
	int st;

	snprintf(out, sizeof(out), "%s/stdout", work);
	snprintf(err, sizeof(err), "%s/stderr", work);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (const char *const *e = env; e && *e; e++)
			putenv((char *)*e);
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(126);
		if (chdir(work))
			_exit(126);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
}

/* Builds programs/<name> natively and with mnemo-cc; returns the profiled executable's path. */
static const char *build(const char *name, const char *modules)
{
	static char exe[512];
	const char *cxx = strstr(name, ".cpp") ? "++" : "";

	snprintf(exe, sizeof(exe), "%s/%s", work, name);
	*strrchr(exe, '.') = '\0';
	assert_int_equal(shell("clang%s-19 -O2 -g -pthread %s/%s -o %s.native", cxx, PROGRAMS_DIR, name,
			       exe), 0);
	assert_int_equal(shell("%s/mnemo-c%s -m %s -O2 -g -pthread %s/%s -o %s", BINDIR,
			       *cxx ? "++" : "c", modules, PROGRAMS_DIR, name, exe), 0);
	return exe;
}

/* Runs the profiled and the native build; asserts identical output and termination. */
static void run_both(const char *exe, const char *const *env, struct run *r)
{
	char native[600];
	static struct run n;

	snprintf(native, sizeof(native), "%s.native", exe);
	run(native, NULL, &n);
	run(exe, env, r);
	assert_string_equal(r->out, n.out);
	if (r->status != n.status || r->signal != n.signal)
		fail_msg("%s: expected status %d signal %d (native), got status %d signal %d; stderr: %s",
			 exe, n.status, n.signal, r->status, r->signal, r->err);
}

static int mark_line(const char *program, const char *mark)
{
	char path[512], line[512], tag[64];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", PROGRAMS_DIR, program);
	snprintf(tag, sizeof(tag), "MARK:%s ", mark);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, tag)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("%s: no line marked MARK:%s", program, mark);
	return 0;
}

static struct mn_profile *load(const char *exe)
{
	char path[600], err[512];
	struct mn_profile *p;
	const char *base = strrchr(exe, '/') + 1;

	snprintf(path, sizeof(path), "%s/%s.mnemo.yaml", work, base);
	if (mn_profile_open(&p, path, err, sizeof(err)))
		fail_msg("profile: %s", err);
	return p;
}

/* What value-pattern says about all the entries of one source line, aggregated. */
struct line_vp {
	int entries;
	uint64_t executions;
	bool all_constant;
	uint64_t value;        /* the constant, if all_constant and all equal */
	bool same_value;
	uint64_t max_distinct;
	int64_t stride;        /* the stride of the entry with the most executions */
	double stride_fraction;
	bool strongly_strided;
};

static struct line_vp vp_line(struct mn_profile *p, const char *program, int line, const char *access)
{
	const struct mn_pnode *rows = mn_pnode_get(mn_profile_module(p, "value-pattern"), "entries");
	struct line_vp r = { .all_constant = true, .same_value = true };
	uint64_t best = 0;

	assert_non_null(rows);
	for (size_t i = 0; i < mn_pnode_len(rows); i++) {
		const struct mn_pnode *e = mn_pnode_at(rows, i);
		const struct mn_site *s;
		uint64_t id, ex, v = 0, d = 0;
		bool c = false;
		const char *file;

		assert_int_equal(mn_pnode_u64(mn_pnode_get(e, "site"), &id), 0);
		s = mn_profile_site(p, (uint32_t)id);
		assert_non_null(s);
		file = strrchr(s->file, '/') ? strrchr(s->file, '/') + 1 : s->file;
		if ((int)s->line != line || strcmp(file, program) ||
		    strcmp(mn_pnode_str(mn_pnode_get(e, "access"), NULL), access))
			continue;
		assert_int_equal(mn_pnode_u64(mn_pnode_get(e, "executions"), &ex), 0);
		assert_int_equal(mn_pnode_bool(mn_pnode_get(e, "constant"), &c), 0);
		assert_int_equal(mn_pnode_u64(mn_pnode_get(e, "distinct"), &d), 0);
		if (c) {
			assert_int_equal(mn_pnode_u64(mn_pnode_get(e, "value"), &v), 0);
			if (r.entries && r.all_constant && v != r.value)
				r.same_value = false;
			r.value = v;
		}
		r.all_constant = r.all_constant && c;
		r.max_distinct = d > r.max_distinct ? d : r.max_distinct;
		r.executions += ex;
		r.entries++;
		if (ex > best && mn_pnode_get(e, "stride")) {
			best = ex;
			assert_int_equal(mn_pnode_i64(mn_pnode_get(e, "stride"), &r.stride), 0);
			assert_int_equal(mn_pnode_f64(mn_pnode_get(e, "stride_fraction"),
						      &r.stride_fraction), 0);
			assert_int_equal(mn_pnode_bool(mn_pnode_get(e, "strongly_strided"),
						       &r.strongly_strided), 0);
		}
	}
	if (!r.entries)
		fail_msg("value-pattern: no %s entry at %s:%d", access, program, line);
	return r;
}

static void test_constant_and_varying_loads(void **state)
{
	const char *exe = build("const_load.c", "value-pattern");
	struct run r;
	struct mn_profile *p;
	struct line_vp c, v;
	const char *why;

	run_both(exe, NULL, &r);
	p = load(exe);
	assert_true(mn_profile_complete(p, &why));
	c = vp_line(p, "const_load.c", mark_line("const_load.c", "const"), "load");
	if (!c.all_constant || !c.same_value || c.value != 42 || c.executions != 1000)
		fail_msg("constant load: expected constant 42 x1000, got constant=%d value=%lu x%lu",
			 c.all_constant, (unsigned long)c.value, (unsigned long)c.executions);
	v = vp_line(p, "const_load.c", mark_line("const_load.c", "varies"), "load");
	if (v.all_constant || v.max_distinct != 16 || v.executions != 1000)
		fail_msg("varying load: expected 16+ distinct (capped) x1000, got constant=%d distinct=%lu x%lu",
			 v.all_constant, (unsigned long)v.max_distinct, (unsigned long)v.executions);
	mn_profile_close(p);
}

static void test_strides(void **state)
{
	const char *exe = build("stride.c", "value-pattern");
	struct run r;
	struct mn_profile *p;
	struct line_vp s8, s24;

	run_both(exe, NULL, &r);
	p = load(exe);
	s8 = vp_line(p, "stride.c", mark_line("stride.c", "stride8"), "load");
	s24 = vp_line(p, "stride.c", mark_line("stride.c", "stride24"), "load");
	if (s8.stride != 8 || !s8.strongly_strided || s8.stride_fraction != 1.0 || s8.executions != 5000)
		fail_msg("stride 8: got stride %ld fraction %g strong %d x%lu", (long)s8.stride,
			 s8.stride_fraction, s8.strongly_strided, (unsigned long)s8.executions);
	if (s24.stride != 24 || !s24.strongly_strided || s24.stride_fraction != 1.0)
		fail_msg("stride 24: got stride %ld fraction %g strong %d", (long)s24.stride,
			 s24.stride_fraction, s24.strongly_strided);
	mn_profile_close(p);
}

static void test_exit_from_nested_function(void **state)
{
	const char *exe = build("exit_nested.c", "value-pattern");
	struct run r;
	struct mn_profile *p;
	const char *why;

	run_both(exe, NULL, &r);
	assert_int_equal(r.status, 3);
	p = load(exe);
	assert_int_equal(mn_profile_program(p)->exit_status, 3);
	assert_true(mn_profile_complete(p, &why));
	assert_int_equal(vp_line(p, "exit_nested.c", mark_line("exit_nested.c", "store"), "store")
				 .executions, 6);
	mn_profile_close(p);
}

/* A program that dies of a signal keeps it and still writes a profile, marked incomplete. */
static void check_fatal(const char *program, int sig)
{
	const char *exe = build(program, "value-pattern");
	struct run r;
	struct mn_profile *p;
	const char *why = NULL;

	run_both(exe, NULL, &r);
	assert_int_equal(r.signal, sig);
	p = load(exe);
	assert_false(mn_profile_complete(p, &why));
	assert_non_null(why);
	assert_int_equal(mn_profile_program(p)->signal, sig);
	assert_int_equal(vp_line(p, program, mark_line(program, "store"), "store").executions, 100);
	mn_profile_close(p);
}

static void test_abort(void **state)
{
	check_fatal("abort.c", SIGABRT);
}

static void test_sigsegv(void **state)
{
	check_fatal("segv.c", SIGSEGV);
}

static void test_threads_counted_and_dropped(void **state)
{
	const char *exe = build("threads.c", "value-pattern");
	struct run r;
	struct mn_profile *p;
	const char *why = NULL;

	run_both(exe, NULL, &r);
	p = load(exe);
	assert_false(mn_profile_complete(p, &why));
	if (!why || !strstr(why, "thread"))
		fail_msg("incomplete_reason should name threads, got '%s'", why ? why : "(none)");
	mn_profile_close(p);
}

static void test_cxx(void **state)
{
	const char *exe = build("cxx.cpp", "value-pattern");
	struct run r;
	struct mn_profile *p;
	const struct mn_pnode *rows;

	run_both(exe, NULL, &r);
	/* Areas i*(i+1) over 1000 throw: i = 32..50, so 19 exceptions caught. */
	assert_non_null(strstr(r.out, "caught 19"));
	p = load(exe);
	rows = mn_pnode_get(mn_profile_module(p, "value-pattern"), "entries");
	if (mn_pnode_len(rows) < 10)
		fail_msg("C++ program: expected dozens of value-pattern entries, got %zu", mn_pnode_len(rows));
	mn_profile_close(p);
}

/* Bad input: the program still runs exactly as natively, and one mnemo: line says why. */
static void check_unprofiled(const char *const *env, const char *expect_in_stderr)
{
	const char *exe = build("const_load.c", "value-pattern");
	char profile[600];
	struct run r;
	int lines = 0;

	snprintf(profile, sizeof(profile), "%s/const_load.mnemo.yaml", work);
	unlink(profile);
	run_both(exe, env, &r);
	for (const char *c = r.err; *c; c++)
		lines += *c == '\n';
	if (lines != 1 || strncmp(r.err, "mnemo: ", 7) || !strstr(r.err, expect_in_stderr))
		fail_msg("expected one 'mnemo: ...%s...' line on stderr, got: '%s'", expect_in_stderr, r.err);
	assert_int_equal(access(profile, F_OK), -1);
}

static void test_missing_backend(void **state)
{
	const char *env[] = { "MNEMO_BACKEND=/nonexistent/mnemo-backend", NULL };
	check_unprofiled(env, "/nonexistent/mnemo-backend");
}

static void test_unknown_module_at_run_time(void **state)
{
	const char *env[] = { "MNEMO_MODULES=no-such-module", NULL };
	check_unprofiled(env, "no-such-module");
}

static void test_unwritable_output(void **state)
{
	const char *env[] = { "MNEMO_OUTPUT=/nonexistent-dir/out.yaml", NULL };
	check_unprofiled(env, "/nonexistent-dir/out.yaml");
}

static void test_unknown_module_at_build_time(void **state)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s/mnemo-cc -m no-such-module %s/const_load.c -o %s/x 2>%s/err",
		 BINDIR, PROGRAMS_DIR, work, work);
	assert_int_not_equal(shell("%s", cmd), 0);
	snprintf(cmd, sizeof(cmd), "grep -q \"unknown module 'no-such-module'\" %s/err", work);
	assert_int_equal(shell("%s", cmd), 0);
}

static void test_makefile_project(void **state)
{
	assert_int_equal(shell("cp -r %s/../makeproj %s/ && make -s -C %s/makeproj CC=%s/mnemo-cc "
			       "AR=llvm-ar-19 >/dev/null && cd %s/makeproj && ./app >out && "
			       "grep -qx '5050 [0-9]*' out && %s/mnemo report app.mnemo.yaml >report && "
			       "grep -q 'add.c' report && grep -q 'mul.c' report",
			       PROGRAMS_DIR, work, work, BINDIR, work, BINDIR), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constant_and_varying_loads),
		cmocka_unit_test(test_strides),
		cmocka_unit_test(test_exit_from_nested_function),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_sigsegv),
		cmocka_unit_test(test_threads_counted_and_dropped),
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_missing_backend),
		cmocka_unit_test(test_unknown_module_at_run_time),
		cmocka_unit_test(test_unwritable_output),
		cmocka_unit_test(test_unknown_module_at_build_time),
		cmocka_unit_test(test_makefile_project),
	};
	int failed;

	if (!mkdtemp(work)) {
		perror("mkdtemp");
		return 1;
	}
	failed = cmocka_run_group_tests_name("e2e", tests, NULL, NULL);
	if (!failed)
		shell("rm -rf %s", work);
	else
		fprintf(stderr, "kept %s for inspection\n", work);
	return failed;
}
