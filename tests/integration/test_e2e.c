/*
 * End-to-end tests: real programs built with mnemo-cc, run, and their profiles checked against answers
 * known by construction (tests/integration/programs/).  Every program is also built natively, and its
 * output and exit status or signal under profiling must be exactly the native ones.
 *
 * Sites are found by source line: each program marks the lines the test looks at with MARK:<name>.
 * Several sites may share a line (an access and its copy after optimization); the checks aggregate
 * over all entries of the line, so they hold whatever the optimizer duplicated.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile.h"
#include "shell.h"

static char work[] = "/tmp/mnemo-e2e.XXXXXX";

struct run {
	int status;     /* exit status, or -1 */
	int signal;     /* terminating signal, or 0 */
	char out[8192]; /* stdout */
	char err[8192]; /* stderr */
};

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
	/* No lane but the main thread's: the others' events are counted and dropped (with lanes,
	 * tests/threads checks that they arrive). */
	const char *const env[] = { "MNEMO_THREADS=0", NULL };
	struct run r;
	struct mn_profile *p;
	const char *why = NULL;

	run_both(exe, env, &r);
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

/* The null module's counts on a program whose events are known by construction (null_counts.c);
 * every event the backend decoded is counted in exactly one kind. */
static void test_null_counts(void **state)
{
	static const char *const kinds[] = { "load", "store", "heap_alloc", "heap_free",
					     "func_entry", "func_exit", "loop_invoke", "loop_iter",
					     "loop_exit" };
	const char *exe = build("null_counts.c", "null");
	const struct mn_pnode *counts;
	struct mn_profile *p;
	uint64_t n[9], sum = 0;
	struct run r;
	const char *why;

	run_both(exe, NULL, &r);
	p = load(exe);
	assert_true(mn_profile_complete(p, &why));
	counts = mn_pnode_get(mn_profile_module(p, "null"), "counts");
	assert_non_null(counts);
	for (unsigned i = 0; i < 9; i++) {
		if (mn_pnode_u64(mn_pnode_get(counts, kinds[i]), &n[i]))
			fail_msg("null: expected a count for %s, got none", kinds[i]);
		sum += n[i];
	}
	/* load, store: 1000 in the loop, and a few around it (keep, and what the optimizer keeps). */
	if (n[0] < 1000 || n[0] > 1010 || n[1] < 1000 || n[1] > 1010)
		fail_msg("null: expected 1000..1010 loads and stores, got %lu and %lu",
			 (unsigned long)n[0], (unsigned long)n[1]);
	/* heap: the program's two objects, plus what libc allocates for itself (stdout's buffer). */
	if (n[2] < 2 || n[3] < 2)
		fail_msg("null: expected >= 2 heap_alloc and heap_free, got %lu and %lu",
			 (unsigned long)n[2], (unsigned long)n[3]);
	if (n[4] != 2 || n[5] != 2)
		fail_msg("null: expected func_entry 2, func_exit 2, got %lu and %lu",
			 (unsigned long)n[4], (unsigned long)n[5]);
	if (n[6] != 1 || n[7] != 1000 || n[8] != 1)
		fail_msg("null: expected loop_invoke 1, loop_iter 1000, loop_exit 1, got %lu, %lu, %lu",
			 (unsigned long)n[6], (unsigned long)n[7], (unsigned long)n[8]);
	if ((int64_t)sum != mn_profile_program(p)->events)
		fail_msg("null: expected the counts to add up to the %lu events decoded, got %lu",
			 (unsigned long)mn_profile_program(p)->events, (unsigned long)sum);
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

/*
 * A Makefile whose AR carries its flags and which runs ranlib, as Lua's (AR= ar rc, RANLIB=
 * ranlib), with GNU ar: the fat objects archive and index without an LLVM plugin (no "failed to
 * create LTO module"), and the link instruments the archive's functions from their bitcode.  Its
 * CFLAGS have no -g: the sites' files come from the line tables mnemo-cc adds.
 */
static void test_makefile_ar_flags(void **state)
{
	assert_int_equal(shell("rm -rf %s/arproj && cp -r %s/../makeproj %s/arproj && "
			       "make -s -C %s/arproj -f Makefile.arflags CC=%s/mnemo-cc >%s/ar.log 2>&1",
			       work, PROGRAMS_DIR, work, work, BINDIR, work), 0);
	assert_int_not_equal(shell("grep -q 'LTO module' %s/ar.log", work), 0);
	assert_int_equal(shell("cd %s/arproj && ./app >out && grep -qx '5050 [0-9]*' out && "
			       "%s/mnemo report app.mnemo.yaml >report && grep -q 'add.c' report && "
			       "grep -q 'mul.c' report && "
			       "grep -q 'function: add_all, file: add.c' app.mnemo.yaml && "
			       "grep -q 'function: mul_all, file: mul.c' app.mnemo.yaml",
			       work, BINDIR), 0);
}

/* Sites' files of a build of stride.c with extra mnemo-cc flags: how many have one, of how many. */
static void count_located(const char *flags, const char *name, size_t *located, size_t *all)
{
	char exe[512];
	struct mn_profile *p;
	struct run r;

	snprintf(exe, sizeof(exe), "%s/%s", work, name);
	assert_int_equal(shell("%s/mnemo-cc -m value-pattern -O2 %s %s/stride.c -o %s", BINDIR,
			       flags, PROGRAMS_DIR, exe), 0);
	run(exe, NULL, &r);
	assert_int_equal(r.status, 0);
	p = load(exe);
	*all = mn_profile_site_count(p);
	*located = 0;
	for (size_t i = 0; i < *all; i++)
		*located += mn_profile_site_at(p, i)->file[0] != 0;
	if (!strcmp(flags, ""))
		assert_int_equal(vp_line(p, "stride.c", mark_line("stride.c", "stride8"), "load")
					 .executions, 5000);
	mn_profile_close(p);
}

/* Without a -g option mnemo-cc compiles with line tables; an explicit -g0 has none. */
static void test_debug_info_by_default(void **state)
{
	size_t located, all;

	count_located("", "stride_nog", &located, &all);
	if (located < 4)
		fail_msg("no -g: expected sites with a file, got %zu of %zu", located, all);
	count_located("-g0", "stride_g0", &located, &all);
	if (located != 0 || all < 4)
		fail_msg("-g0: expected no site with a file, got %zu of %zu", located, all);
}

/* ---- The queue: its size, its NUMA placement, its memory on every way out ------------------- */

/* Runs `mnemo run ARGS -- exe` in the work directory; stderr into err.  Returns the exit status. */
static int mnemo_run(const char *args, const char *exe, char *err, size_t errlen)
{
	char path[600];
	int st;

	st = shell("cd %s && %s/mnemo run %s -- %s >mnemo-run.out 2>mnemo-run.err", work, BINDIR,
		   args, exe);
	snprintf(path, sizeof(path), "%s/mnemo-run.err", work);
	slurp(path, err, errlen);
	return st;
}

/* The profile from its `complete:` line on (sites and modules), its event count, completeness. */
static void profile_body(const char *name, char *body, size_t len, int64_t *events,
			 bool *complete)
{
	char path[600], err[512];
	static char text[1 << 16];
	struct mn_profile *p;
	const char *b;

	snprintf(path, sizeof(path), "%s/%s", work, name);
	slurp(path, text, sizeof(text));
	b = strstr(text, "\ncomplete:");
	if (!b)
		fail_msg("%s: expected a 'complete:' line, got:\n%s", name, text);
	snprintf(body, len, "%s", b);
	if (mn_profile_open(&p, path, err, sizeof(err)))
		fail_msg("profile %s: %s", name, err);
	*events = mn_profile_program(p)->events;
	*complete = mn_profile_complete(p, NULL);
	mn_profile_close(p);
}

/*
 * `mnemo run --queue-mb N` sizes the buffers, and the profile does not depend on it: 1 MiB buffers
 * (around the ring dozens of times) and 16 MiB ones (a few times: the program makes ~6.5 million
 * events, over 100 MB of records) give the same sites, module sections and event count.
 */
static void test_queue_mb_same_profile(void **state)
{
	const char *exe = build("queue_sizes.c", "value-pattern");
	static char body1[1 << 16], body16[1 << 16];
	char err[8192];
	int64_t ev1, ev16;
	bool complete1, complete16;

	assert_int_equal(mnemo_run("--queue-mb 1 -v -o qmb1.yaml", exe, err, sizeof(err)), 0);
	if (!strstr(err, "queue 4 x 1 MiB"))
		fail_msg("--queue-mb 1: expected 'queue 4 x 1 MiB' on stderr, got:\n%s", err);
	assert_int_equal(mnemo_run("--queue-mb 16 -v -o qmb16.yaml", exe, err, sizeof(err)), 0);
	if (!strstr(err, "queue 4 x 16 MiB"))
		fail_msg("--queue-mb 16: expected 'queue 4 x 16 MiB' on stderr, got:\n%s", err);
	profile_body("qmb1.yaml", body1, sizeof(body1), &ev1, &complete1);
	profile_body("qmb16.yaml", body16, sizeof(body16), &ev16, &complete16);
	if (ev1 < 6000000)
		fail_msg("events: expected > 6 million (laps of a 4 x 16 MiB ring), got %ld",
			 (long)ev1);
	if (ev1 != ev16)
		fail_msg("events: expected the same with 1 and 16 MiB buffers, got %ld and %ld",
			 (long)ev1, (long)ev16);
	if (strcmp(body1, body16))
		fail_msg("profile: expected the same with 1 and 16 MiB buffers, got\n%s\nand\n%s",
			 body1, body16);
	if (!complete1)
		fail_msg("profile: expected complete: true, got\n%s", body1);
}

/* Memory nodes this process may use, as the runtime counts them. */
static int numa_nodes(void)
{
	unsigned long mask[16] = { 0 };
	int n = 0;

	if (syscall(SYS_get_mempolicy, NULL, mask, 1025UL, NULL, MPOL_F_MEMS_ALLOWED))
		return 1;
	for (int i = 0; i < 1024; i++)
		n += mask[i / 64] >> (i % 64) & 1;
	return n;
}

/*
 * `mnemo run --numa`: on a one-node machine every mode but off is a no-op that verbose mode names
 * in one line; with several nodes, node 0 gets the buffers and the backend; off does nothing;
 * a node the machine lacks is said, and the run is profiled all the same.
 */
static void test_numa_modes(void **state)
{
	const char *exe = build("stride.c", "value-pattern");
	const char *one = "mnemo: NUMA: one node, placement is a no-op\n";
	bool single = numa_nodes() <= 1;
	char err[8192];

	assert_int_equal(mnemo_run("--numa auto -v -o numa.yaml", exe, err, sizeof(err)), 0);
	if (single && !strstr(err, one))
		fail_msg("--numa auto, one node: expected '%s' on stderr, got:\n%s", one, err);
	if (!single && !strstr(err, "mnemo: NUMA: queue buffers on node "))
		fail_msg("--numa auto, %d nodes: expected the placement on stderr, got:\n%s",
			 numa_nodes(), err);
	assert_int_equal(mnemo_run("--numa 0 -v -o numa.yaml", exe, err, sizeof(err)), 0);
	if (single && !strstr(err, one))
		fail_msg("--numa 0, one node: expected '%s' on stderr, got:\n%s", one, err);
	if (!single && (!strstr(err, "mnemo: NUMA: queue buffers on node 0 (MNEMO_NUMA)") ||
			!strstr(err, "--numa-node 0") || !strstr(err, "bound to NUMA node 0")))
		fail_msg("--numa 0, %d nodes: expected queue and backend on node 0, got:\n%s",
			 numa_nodes(), err);
	assert_int_equal(mnemo_run("--numa off -v -o numa.yaml", exe, err, sizeof(err)), 0);
	if (!strstr(err, "mnemo: NUMA: placement off (MNEMO_NUMA=off)\n") ||
	    strstr(err, "--numa-node"))
		fail_msg("--numa off: expected placement off and no --numa-node, got:\n%s", err);
	assert_int_equal(mnemo_run("--numa 1023 -o numa.yaml", exe, err, sizeof(err)), 0);
	if (!strstr(err, "mnemo: MNEMO_NUMA: no memory node 1023 here") ||
	    strstr(err, "no profile was written"))
		fail_msg("--numa 1023: expected a line naming the node, and a profile, got:\n%s",
			 err);
	/* Quiet unless asked: no NUMA line without -v. */
	assert_int_equal(mnemo_run("-o numa.yaml", exe, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(mnemo_run("--numa near", exe, err, sizeof(err)), 2);
	if (!strstr(err, "--numa: expected auto, off or a node number (0..1023), got 'near'"))
		fail_msg("--numa near: expected a usage error, got:\n%s", err);
}

static void test_numa_bad_value(void **state)
{
	const char *env[] = { "MNEMO_NUMA=near", NULL };
	check_unprofiled(env, "MNEMO_NUMA: 'near' is not auto, off or a node number");
}

/* The process pid's parent, or 0. */
static pid_t parent_of(pid_t pid)
{
	char path[64], stat[512], *c;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	slurp(path, stat, sizeof(stat));
	c = strrchr(stat, ')');
	if (!c || sscanf(c + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/*
 * Whether a process below this one (which is a subreaper: whatever a run leaves behind comes back
 * to it) has the queue's memfd open or mapped; names the first one in who.  Only this subtree, so
 * that other runs on the machine do not count.
 */
static bool subtree_holds_queue(char *who, size_t len)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	bool found = false;

	assert_non_null(proc);
	while (!found && (e = readdir(proc))) {
		pid_t pid = (pid_t)atoi(e->d_name), up = pid;
		char path[300], link[300], line[512];
		struct dirent *f;
		FILE *maps;
		DIR *fds;

		if (pid <= 0 || pid == getpid())
			continue;
		while (up > 1 && up != getpid())
			up = parent_of(up);
		if (up != getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
		fds = opendir(path);
		while (fds && !found && (f = readdir(fds))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, f->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			link[n > 0 ? n : 0] = '\0';
			if (strstr(link, "memfd:mnemo-queue")) {
				snprintf(who, len, "pid %d has fd %s -> %s", (int)pid, f->d_name,
					 link);
				found = true;
			}
		}
		if (fds)
			closedir(fds);
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		maps = fopen(path, "r");
		while (maps && !found && fgets(line, sizeof(line), maps)) {
			if (strstr(line, "memfd:mnemo-queue")) {
				snprintf(who, len, "pid %d maps %s", (int)pid, line);
				found = true;
			}
		}
		if (maps)
			fclose(maps);
	}
	closedir(proc);
	return found;
}

/* Reaps pid, a child of this process, within timeout_ms; false if it is still running. */
static bool reap_within(pid_t pid, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 10) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD && kill(pid, 0) && errno == ESRCH))
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * The queue's memory goes on every way out of a profiled program: return, exit(), abort() and
 * SIGKILL.  Once the program has ended and its backend has written the profile and exited, no
 * process of the run has the memfd open or mapped, not even the two children the program left
 * running (one exec'd, one only forked: a fork child lets go of its inherited mapping), and
 * /dev/shm holds nothing of Mnemo.
 */
static void check_exit_path(const char *exe, const char *how, int status, int sig, bool complete)
{
	char env_how[64], who[600];
	const char *env[] = { env_how, "MNEMO_VERBOSE=1", NULL };
	const char *b, *why;
	struct mn_profile *p;
	int exec_child = 0, fork_child = 0, backend = 0;
	struct run r;

	snprintf(env_how, sizeof(env_how), "EXIT_PATH=%s", how);
	run(exe, env, &r);
	if (r.status != status || r.signal != sig)
		fail_msg("EXIT_PATH=%s: expected status %d signal %d, got status %d signal %d; "
			 "stderr: %s", how, status, sig, r.status, r.signal, r.err);
	b = strstr(r.err, "mnemo: backend ");
	if (!b || !(b = strstr(b, "pid ")) || sscanf(b, "pid %d", &backend) != 1 ||
	    !strstr(r.out, "exec child ") || !strstr(r.out, "fork child ") ||
	    sscanf(strstr(r.out, "exec child "), "exec child %d", &exec_child) != 1 ||
	    sscanf(strstr(r.out, "fork child "), "fork child %d", &fork_child) != 1)
		fail_msg("EXIT_PATH=%s: expected the backend's and the children's pids, got\n%s%s",
			 how, r.out, r.err);
	/* The backend was the program's grandchild: orphaned, it is ours now. */
	if (!reap_within(backend, 10000))
		fail_msg("EXIT_PATH=%s: expected the backend (pid %d) to exit within 10 s of the "
			 "program, got it still running", how, backend);
	if (kill(exec_child, 0) || kill(fork_child, 0))
		fail_msg("EXIT_PATH=%s: expected the program's children still running", how);
	if (subtree_holds_queue(who, sizeof(who)))
		fail_msg("EXIT_PATH=%s: expected no process to hold the queue, got %s", how, who);
	kill(exec_child, SIGKILL);
	kill(fork_child, SIGKILL);
	reap_within(exec_child, 5000);
	reap_within(fork_child, 5000);

	p = load(exe);
	if (mn_profile_complete(p, &why) != complete)
		fail_msg("EXIT_PATH=%s: expected complete: %s, got %s", how,
			 complete ? "true" : "false", why ? why : "complete");
	if (vp_line(p, "exit_paths.c", mark_line("exit_paths.c", "store"), "store").executions == 0)
		fail_msg("EXIT_PATH=%s: expected the stores in the profile, got none", how);
	mn_profile_close(p);
}

static void test_queue_released_on_every_exit(void **state)
{
	const char *exe = build("exit_paths.c", "value-pattern");
	DIR *shm;
	struct dirent *e;

	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	check_exit_path(exe, "return", 0, 0, true);
	check_exit_path(exe, "exit", 4, 0, true);
	check_exit_path(exe, "abort", -1, SIGABRT, false);
	check_exit_path(exe, "kill", -1, SIGKILL, false);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	shm = opendir("/dev/shm");
	while (shm && (e = readdir(shm)))
		if (strstr(e->d_name, "mnemo"))
			fail_msg("/dev/shm: expected nothing of Mnemo, got %s", e->d_name);
	if (shm)
		closedir(shm);
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
		cmocka_unit_test(test_null_counts),
		cmocka_unit_test(test_missing_backend),
		cmocka_unit_test(test_unknown_module_at_run_time),
		cmocka_unit_test(test_unwritable_output),
		cmocka_unit_test(test_unknown_module_at_build_time),
		cmocka_unit_test(test_makefile_project),
		cmocka_unit_test(test_makefile_ar_flags),
		cmocka_unit_test(test_debug_info_by_default),
		cmocka_unit_test(test_queue_mb_same_profile),
		cmocka_unit_test(test_numa_modes),
		cmocka_unit_test(test_numa_bad_value),
		cmocka_unit_test(test_queue_released_on_every_exit),
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
