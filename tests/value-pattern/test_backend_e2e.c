/*
 * End-to-end tests of mnemo-backend with the value-pattern module: this test is the producer.  It
 * builds the queue and the session block the way the runtime does, starts the real mnemo-backend
 * binary, pushes synthetic load/store records with a hand-made wire format, ends the run, and
 * reads the profile back: layout, completeness and its reasons, the sites table, the section.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "abi.h"
#include "barrier.h"
#include "profile.h"
#include "queue.h"
#include "session.h"

#ifndef MNEMO_BACKEND_EXE
#error "MNEMO_BACKEND_EXE: path of the mnemo-backend under test"
#endif

static const char sites_blob[] = "mnemo-sites/1\n"
				 "load\tmain\tprog.c\t10\t5\t\t0\n"           /* 1 */
				 "store\tmain\tprog.c\t11\t7\t\t0\n"          /* 2 */
				 "load\tsum\tlib/sum.c\t20\t9\t\t0\n"         /* 3 */
				 "alloc\tmain\tprog.c\t30\t3\tmalloc\t24\n"   /* 4: unused */
				 "function\tmain\tprog.c\t8\t0\t\t0\n";       /* 5 */
static const char *const argv_in[] = { "./prog", "a b", "--x=1" };

struct run {
	struct mn_queue *q;
	struct mn_session *s;
	char dir[64];
	char output[128];
	pid_t backends[MN_MAX_MODULES];
	unsigned nbackends;
};

static double now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The wire: load and store send site (word 0), address (word 1), value (word 2; value-pattern
 * ignores it); not size.  `value` sends site (word 0) and value (word 1).
 */
static void make_wire(struct mn_wire *w)
{
	memset(w, 0, sizeof(*w));
	for (unsigned code = 1; code <= 2; code++) {
		w->nwords[code] = 3;
		w->arg[code][0] = (struct mn_wire_arg){ .word = 0, .shift = 8, .bits = 32 };
		w->arg[code][1] = (struct mn_wire_arg){ .word = 1, .shift = 0, .bits = 48 };
		w->arg[code][2] = (struct mn_wire_arg){ .word = 2, .shift = 0, .bits = 64 };
	}
	w->nwords[25] = 2;   /* value */
	w->arg[25][0] = (struct mn_wire_arg){ .word = 0, .shift = 8, .bits = 32 };
	w->arg[25][1] = (struct mn_wire_arg){ .word = 1, .shift = 0, .bits = 64 };
	w->nwords[15] = 1;   /* program_start: pid */
	w->arg[15][0] = (struct mn_wire_arg){ .word = 0, .shift = 8, .bits = 32 };
}

/* Creates the queue and session for these modules and starts nback backends: one per module,
 * or one for all. */
static void run_start_backends(struct run *r, const char *const *modules, unsigned n,
			       unsigned nback)
{
	struct mn_queue_config cfg = {
		.buf_bytes = 4096, .nbufs = 2, .nconsumers = nback,
		.extra_bytes = sizeof(struct mn_session) + sizeof(sites_blob) + 64,
	};
	struct mn_session *s;
	char *tail;
	size_t off;

	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/mnemo-e2e-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->output, sizeof(r->output), "%s/prog.mnemo.yaml", r->dir);
	assert_int_equal(mn_queue_create(&r->q, &cfg), 0);
	s = r->s = mn_queue_extra(r->q);
	s->magic = MN_SESSION_MAGIC;
	s->version = MN_SESSION_VERSION;
	s->abi = MNEMO_ABI_VERSION;
	s->producer_pid = (int32_t)getpid();
	s->nmodules = n;
	s->nbackends = nback;
	s->workers = 1;
	s->site_count = 5;
	s->start_monotonic = now_monotonic();
	snprintf(s->output, sizeof(s->output), "%s", r->output);
	for (unsigned i = 0; i < n; i++)
		snprintf(s->modules[i], sizeof(s->modules[i]), "%s", modules[i]);
	make_wire(&s->wire);
	tail = (char *)s + sizeof(*s);
	memcpy(tail, sites_blob, sizeof(sites_blob) - 1);
	s->sites_off = sizeof(*s);
	s->sites_len = sizeof(sites_blob) - 1;
	off = sizeof(*s) + s->sites_len;
	s->argv_off = off;
	for (unsigned i = 0; i < 3; i++) {
		strcpy((char *)s + off, argv_in[i]);
		off += strlen(argv_in[i]) + 1;
	}
	s->argv_len = off - s->argv_off;
	s->argc = 3;
	mn_queue_producer_start(r->q);

	for (unsigned i = 0; i < nback; i++) {
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			char fd[16], idx[16];

			snprintf(fd, sizeof(fd), "%d", mn_queue_fd(r->q));
			snprintf(idx, sizeof(idx), "%u", i);
			execl(MNEMO_BACKEND_EXE, "mnemo-backend", "--fd", fd, "--index", idx,
			      (char *)NULL);
			_exit(127);
		}
		r->backends[i] = pid;
	}
	r->nbackends = nback;
}

/* One backend per module. */
static void run_start(struct run *r, const char *const *modules, unsigned n)
{
	run_start_backends(r, modules, n, n);
}

/* An access as the program sends it: its record, then its value (no published set here). */
static void push(uint8_t code, uint32_t site, uint64_t addr, uint64_t value)
{
	uint64_t w[3] = { code | (uint64_t)site << 8, addr, value };
	uint64_t v[2] = { 25 | (uint64_t)site << 8, value };

	mn_queue_push(w, 3);
	mn_queue_push(v, 2);
}

/* The synthetic program: a constant load, an array walk, a store, a load in another file. */
static void push_program(void)
{
	uint64_t w0 = 15 | (uint64_t)getpid() << 8;

	mn_queue_push(&w0, 1);
	for (int i = 0; i < 5000; i++) {
		push(1, 1, 0x601000, 42);
		push(1, 3, 0x7f0000 + 8 * (uint64_t)i, (uint64_t)i);
		if (i % 2 == 0)
			push(2, 2, 0x602000 + 24 * (uint64_t)(i / 2), 7);
	}
}

/* Writes the end-of-run record, ends the stream and waits for profile_done; returns it. */
static uint32_t run_finish(struct run *r, int exit_status, int term_signal, uint64_t dropped)
{
	struct mn_session *s = r->s;
	double deadline = now_monotonic() + 20;
	uint32_t done;

	s->exit_status = term_signal ? -1 : exit_status;
	s->term_signal = term_signal;
	s->end_monotonic = now_monotonic();
	s->dropped_thread_events = dropped;
	s->ended = 1;
	mn_queue_producer_finish(r->q);
	while ((done = mn_load_acquire(&s->profile_done)) == MN_PROFILE_PENDING) {
		struct timespec ts = { 0, 50 * 1000000 };

		assert_true(now_monotonic() < deadline);
		syscall(SYS_futex, &s->profile_done, FUTEX_WAIT, MN_PROFILE_PENDING, &ts, NULL, 0);
	}
	return done;
}

/* Waits for every backend and checks its exit status (0 = success). */
static void run_reap(struct run *r, const int *want_status)
{
	for (unsigned i = 0; i < r->nbackends; i++) {
		int st;

		assert_int_equal(waitpid(r->backends[i], &st, 0), r->backends[i]);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) != want_status[i])
			fail_msg("backend %u: expected exit status %d, got %d", i, want_status[i],
				 WEXITSTATUS(st));
	}
}

static void run_cleanup(struct run *r)
{
	char cmd[128];

	if (r->q)
		mn_queue_destroy(r->q);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- Reading the profile: with libmnemo-profile, as every client reads one ----------------- */

/* A loaded profile, and its text: shown on failure, and looked at for a collection's style. */
struct prof {
	char *text;
	struct mn_profile *prof;
	const struct mn_pnode *root;
};

static void prof_load(struct prof *p, const char *path)
{
	char err[512];
	FILE *f = fopen(path, "r");
	size_t len;

	if (!f)
		fail_msg("expected a profile at %s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	p->text = calloc(1, len + 1);
	assert_int_equal(fread(p->text, 1, len, f), len);
	fclose(f);
	if (mn_profile_open(&p->prof, path, err, sizeof(err)))
		fail_msg("the profile does not load: %s\n%s", err, p->text);
	p->root = mn_profile_root(p->prof);
	assert_non_null(p->root);
}

static void prof_free(struct prof *p)
{
	mn_profile_close(p->prof);
	free(p->text);
}

/* The value of key in map; NULL when map is no mapping or lacks the key. */
static const struct mn_pnode *get(const struct mn_pnode *map, const char *key)
{
	return mn_pnode_get(map, key);
}

/* A scalar node's text. */
static const char *scalar(const struct prof *p, const struct mn_pnode *n)
{
	if (mn_pnode_kind(n) != MN_PNODE_SCALAR)
		fail_msg("expected a scalar at %u:%u\n%s", mn_pnode_line(n), mn_pnode_column(n),
			 p->text);
	return mn_pnode_str(n, NULL);
}

static const char *str(struct prof *p, const struct mn_pnode *map, const char *key)
{
	char err[512];
	const struct mn_pnode *n = mn_pfield_node(p->prof, map, key, MN_PNODE_SCALAR, err,
						  sizeof(err));

	if (!n)
		fail_msg("expected a scalar '%s': %s\n%s", key, err, p->text);
	return mn_pnode_str(n, NULL);
}

static size_t len(const struct mn_pnode *n)
{
	if (mn_pnode_kind(n) != MN_PNODE_SEQ)
		assert_int_equal(mn_pnode_kind(n), MN_PNODE_MAP);
	return mn_pnode_len(n);
}

static const struct mn_pnode *at(const struct mn_pnode *seq, size_t i)
{
	assert_int_equal(mn_pnode_kind(seq), MN_PNODE_SEQ);
	assert_true(i < mn_pnode_len(seq));
	return mn_pnode_at(seq, i);
}

/* The text of module name's section under `modules:`, malloc'ed: its key's line to the next
 * key at that indentation, or the end. */
static char *section_text(struct prof *p, const char *name)
{
	char key[64];
	const char *mods = strstr(p->text, "\nmodules:\n"), *from, *to;

	assert_non_null(mods);
	/* A key that reads as another type is quoted: "null". */
	snprintf(key, sizeof(key), "\n  %s:", name);
	from = strstr(mods, key);
	snprintf(key, sizeof(key), "\n  '%s':", name);
	from = from ? from : strstr(mods, key);
	snprintf(key, sizeof(key), "\n  \"%s\":", name);
	from = from ? from : strstr(mods, key);
	if (!from)
		fail_msg("no section %s under modules:", name);
	for (to = from + 1; (to = strchr(to, '\n')) && to[1]; to++)
		if (to[1] == ' ' && to[2] == ' ' && to[3] != ' ')
			break;
	return strndup(from, to ? (size_t)(to - from) : strlen(from));
}

static const char *key_at(struct prof *p, const struct mn_pnode *map, size_t i)
{
	return scalar(p, mn_pnode_key_node(map, i));
}

/*
 * Whether n is a flow mapping, {a: 1, b: 2}: the reader does not say a node's style, but libyaml
 * starts a flow mapping's node at its '{' and a block mapping's at its first key.
 */
static bool is_flow_map(const struct prof *p, const struct mn_pnode *n)
{
	const char *t = p->text;

	if (mn_pnode_kind(n) != MN_PNODE_MAP)
		return false;
	for (unsigned l = 1; t && l < mn_pnode_line(n); l++)
		if ((t = strchr(t, '\n')))
			t++;
	assert_non_null(t);
	assert_true(mn_pnode_column(n) <= strcspn(t, "\n"));
	return t[mn_pnode_column(n) - 1] == '{';
}

/* No temporary file is left next to the profile. */
static void expect_only_profile(struct run *r)
{
	char cmd[256];
	FILE *f;
	char line[256];
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls -A '%s'", r->dir);
	f = popen(cmd, "r");
	while (fgets(line, sizeof(line), f)) {
		if (strcmp(line, "prog.mnemo.yaml\n"))
			fail_msg("unexpected file left behind: %s", line);
		n++;
	}
	pclose(f);
	assert_int_equal(n, 1);
}

/* ---- Tests ----------------------------------------------------------------------------------- */

static void test_profile_layout(void **state)
{
	static const char *const mods[] = { "value-pattern" };
	static const int ok[] = { 0 };
	struct run r;
	struct prof p;
	const struct mn_pnode *prog, *sites, *vp, *entries, *e;

	run_start(&r, mods, 1);
	push_program();
	assert_int_equal(run_finish(&r, 3, 0, 0), MN_PROFILE_WRITTEN);
	run_reap(&r, ok);
	prof_load(&p, r.output);

	/* The frame, in order. */
	assert_int_equal(len(p.root), 7);
	assert_string_equal(key_at(&p, p.root, 0), "format");
	assert_string_equal(key_at(&p, p.root, 1), "program");
	assert_string_equal(key_at(&p, p.root, 2), "binary");
	assert_string_equal(key_at(&p, p.root, 3), "backend");
	assert_string_equal(key_at(&p, p.root, 4), "complete");
	assert_string_equal(key_at(&p, p.root, 5), "sites");
	assert_string_equal(key_at(&p, p.root, 6), "modules");
	/* The binary: its table's highest id, and FNV-1a 64 of the blob, computed here anew. */
	{
		uint64_t h = 0xcbf29ce484222325ull;
		char hex[17];

		for (size_t i = 0; i < sizeof(sites_blob) - 1; i++)
			h = (h ^ (unsigned char)sites_blob[i]) * 0x100000001b3ull;
		snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)h);
		assert_string_equal(str(&p, get(p.root, "binary"), "site_count"), "5");
		assert_string_equal(str(&p, get(p.root, "binary"), "site_table_hash"), hex);
	}
	assert_string_equal(str(&p, p.root, "format"), "mnemo-profile/1");
	assert_string_equal(str(&p, p.root, "complete"), "true");
	prog = get(p.root, "program");
	assert_true(is_flow_map(&p, prog));
	assert_int_equal(len(get(prog, "argv")), 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(scalar(&p, at(get(prog, "argv"), i)), argv_in[i]);
	assert_int_equal(atoi(str(&p, prog, "pid")), getpid());
	assert_string_equal(str(&p, prog, "exit_status"), "3");
	assert_string_equal(str(&p, prog, "signal"), "null");
	assert_true(strtod(str(&p, prog, "wall_seconds"), NULL) >= 0);
	assert_string_equal(str(&p, prog, "events"), "12501");   /* 1 + 5000 * 2.5 */
	/* What the backend cost: its events, and a peak RSS no backend can run below. */
	e = get(get(p.root, "backend"), "value-pattern");
	assert_string_equal(str(&p, e, "events"), "12501");
	assert_true(atol(str(&p, e, "peak_rss_kib")) > 100);
	assert_true(strtod(str(&p, e, "cpu_seconds"), NULL) >= 0);

	/* Only the referenced sites, with their table rows, and the function site of main (sum
	 * has none in the table: nothing is added for it). */
	sites = get(p.root, "sites");
	assert_int_equal(len(sites), 4);
	assert_string_equal(key_at(&p, sites, 0), "1");
	assert_string_equal(key_at(&p, sites, 1), "2");
	assert_string_equal(key_at(&p, sites, 2), "3");
	assert_string_equal(key_at(&p, sites, 3), "5");
	assert_string_equal(str(&p, get(sites, "5"), "kind"), "function");
	e = get(sites, "3");
	assert_string_equal(str(&p, e, "kind"), "load");
	assert_string_equal(str(&p, e, "function"), "sum");
	assert_string_equal(str(&p, e, "file"), "lib/sum.c");
	assert_string_equal(str(&p, e, "line"), "20");
	assert_string_equal(str(&p, e, "column"), "9");
	assert_null(get(e, "name"));
	assert_null(get(e, "type_size"));

	/* The section, copied verbatim. */
	vp = get(get(p.root, "modules"), "value-pattern");
	assert_non_null(vp);
	entries = get(vp, "entries");
	assert_int_equal(len(entries), 3);
	e = at(entries, 0);
	assert_true(is_flow_map(&p, e));
	assert_string_equal(str(&p, e, "site"), "1");
	assert_string_equal(str(&p, e, "constant"), "true");
	assert_string_equal(str(&p, e, "value"), "42");
	e = at(entries, 1);
	assert_string_equal(str(&p, e, "site"), "3");
	assert_string_equal(str(&p, e, "stride"), "8");
	assert_string_equal(str(&p, e, "distinct_capped"), "true");
	e = at(entries, 2);
	assert_string_equal(str(&p, e, "site"), "2");
	assert_string_equal(str(&p, e, "access"), "store");
	assert_string_equal(str(&p, e, "stride"), "24");
	assert_string_equal(str(&p, e, "executions"), "2500");
	expect_only_profile(&r);
	if (getenv("MNEMO_TEST_SHOW"))
		fprintf(stderr, "%s", p.text);
	prof_free(&p);
	run_cleanup(&r);
}

/* A failing backend (unknown module) does not stop the leader; the profile says why. */
static void test_failed_backend(void **state)
{
	static const char *const mods[] = { "value-pattern", "no-such-module" };
	static const int st[] = { 0, 1 };
	struct run r;
	struct prof p;

	run_start(&r, mods, 2);
	push_program();
	assert_int_equal(run_finish(&r, 0, 0, 0), MN_PROFILE_WRITTEN);
	run_reap(&r, st);
	assert_int_equal(mn_load_acquire(&r.s->backend[1].state), MN_BACKEND_FAILED);
	prof_load(&p, r.output);
	assert_string_equal(str(&p, p.root, "complete"), "false");
	assert_non_null(strstr(str(&p, p.root, "incomplete_reason"),
			       "module no-such-module failed: unknown module"));
	assert_non_null(get(get(p.root, "modules"), "value-pattern"));
	assert_null(get(get(p.root, "modules"), "no-such-module"));
	expect_only_profile(&r);
	prof_free(&p);
	run_cleanup(&r);
}

/* The leader's own module is unknown, another works: the leader drains and still writes. */
static void test_failed_leader_module(void **state)
{
	static const char *const mods[] = { "no-such-module", "value-pattern" };
	static const int st[] = { 1, 0 };
	struct run r;
	struct prof p;

	run_start(&r, mods, 2);
	push_program();
	assert_int_equal(run_finish(&r, 0, 0, 0), MN_PROFILE_WRITTEN);
	run_reap(&r, st);
	prof_load(&p, r.output);
	assert_string_equal(str(&p, p.root, "complete"), "false");
	assert_non_null(get(get(p.root, "modules"), "value-pattern"));
	assert_int_equal(len(get(p.root, "sites")), 4);   /* 1, 2, 3 and main's 5 */
	expect_only_profile(&r);
	prof_free(&p);
	run_cleanup(&r);
}

/*
 * One backend hosting both: the unknown module fails, the other's section is written all the
 * same, and the profile says which failed and why.  The backend's exit status says a module
 * failed.
 */
static void test_failed_module_hosted(void **state)
{
	static const char *const first[] = { "value-pattern", "no-such-module" };
	static const char *const last[] = { "no-such-module", "value-pattern" };
	static const char *const *const sets[] = { first, last };
	static const int st[] = { 1 };

	for (unsigned k = 0; k < 2; k++) {
		struct run r;
		struct prof p;

		run_start_backends(&r, sets[k], 2, 1);
		push_program();
		assert_int_equal(run_finish(&r, 0, 0, 0), MN_PROFILE_WRITTEN);
		run_reap(&r, st);
		assert_int_equal(mn_load_acquire(&r.s->backend[k == 0].state), MN_BACKEND_FAILED);
		assert_int_equal(mn_load_acquire(&r.s->backend[k].state), MN_BACKEND_WRITTEN);
		prof_load(&p, r.output);
		assert_string_equal(str(&p, p.root, "complete"), "false");
		assert_non_null(strstr(str(&p, p.root, "incomplete_reason"),
				       "module no-such-module failed: unknown module"));
		assert_non_null(get(get(get(p.root, "modules"), "value-pattern"), "entries"));
		assert_int_equal(len(get(get(get(p.root, "modules"), "value-pattern"), "entries")),
				 3);
		assert_null(get(get(p.root, "modules"), "no-such-module"));
		/* One process: one entry for its cost, named after the module that wrote. */
		assert_non_null(get(get(p.root, "backend"), "value-pattern"));
		expect_only_profile(&r);
		prof_free(&p);
		run_cleanup(&r);
	}
}

/* Two modules in one backend: each section as the module's own backend writes it. */
static void test_hosted_sections_identical(void **state)
{
	static const char *const mods[] = { "value-pattern", "null" };
	static const int ok1[] = { 0 }, ok2[] = { 0, 0 };
	char *text[2][2];

	for (unsigned nback = 1; nback <= 2; nback++) {
		struct run r;
		struct prof p;

		run_start_backends(&r, mods, 2, nback);
		push_program();
		assert_int_equal(run_finish(&r, 0, 0, 0), MN_PROFILE_WRITTEN);
		run_reap(&r, nback == 1 ? ok1 : ok2);
		prof_load(&p, r.output);
		assert_string_equal(str(&p, p.root, "complete"), "true");
		for (unsigned m = 0; m < 2; m++)
			text[nback - 1][m] = section_text(&p, mods[m]);
		if (nback == 1)
			assert_non_null(get(get(p.root, "backend"), "value-pattern+null"));
		else
			assert_non_null(get(get(p.root, "backend"), "null"));
		prof_free(&p);
		run_cleanup(&r);
	}
	for (unsigned m = 0; m < 2; m++) {
		assert_string_equal(text[0][m], text[1][m]);
		free(text[0][m]);
		free(text[1][m]);
	}
}

/* The program died of a signal and dropped events: complete: false, every reason given. */
static void test_signal_and_dropped(void **state)
{
	static const char *const mods[] = { "value-pattern" };
	static const int ok[] = { 0 };
	struct run r;
	struct prof p;
	const char *why;

	run_start(&r, mods, 1);
	push_program();
	assert_int_equal(run_finish(&r, 0, SIGSEGV, 17), MN_PROFILE_WRITTEN);
	run_reap(&r, ok);
	prof_load(&p, r.output);
	assert_string_equal(str(&p, p.root, "complete"), "false");
	why = str(&p, p.root, "incomplete_reason");
	assert_non_null(strstr(why, "killed by signal 11 (SIGSEGV)"));
	assert_non_null(strstr(why, "; 17 events from threads other than the first were dropped"));
	assert_string_equal(str(&p, get(p.root, "program"), "signal"), "11");
	assert_string_equal(str(&p, get(p.root, "program"), "exit_status"), "null");
	prof_free(&p);
	run_cleanup(&r);
}

/* A record with a code the wire does not send: counted, the buffer's rest skipped, reported. */
static void test_corrupt_record(void **state)
{
	static const char *const mods[] = { "value-pattern" };
	static const int ok[] = { 0 };
	struct run r;
	struct prof p;
	uint64_t bad = 31;

	run_start(&r, mods, 1);
	push(1, 1, 0x1000, 1);
	mn_queue_push(&bad, 1);
	push(1, 1, 0x1000, 1);
	assert_int_equal(run_finish(&r, 0, 0, 0), MN_PROFILE_WRITTEN);
	run_reap(&r, ok);
	prof_load(&p, r.output);
	assert_string_equal(str(&p, p.root, "complete"), "false");
	assert_non_null(strstr(str(&p, p.root, "incomplete_reason"),
			       "module value-pattern: 1 corrupt event records"));
	assert_string_equal(str(&p, get(p.root, "program"), "events"), "1");
	prof_free(&p);
	run_cleanup(&r);
}

/* A zero word where a record would start is unwritten space (mn_queue_pop()): skipped. */
static void test_zero_word_skipped(void **state)
{
	static const char *const mods[] = { "value-pattern" };
	static const int ok[] = { 0 };
	struct run r;
	struct prof p;
	uint64_t zero = 0;

	run_start(&r, mods, 1);
	push(1, 1, 0x1000, 1);
	mn_queue_push(&zero, 1);
	mn_queue_push(&zero, 1);
	push(1, 1, 0x1008, 1);
	assert_int_equal(run_finish(&r, 0, 0, 0), MN_PROFILE_WRITTEN);
	run_reap(&r, ok);
	prof_load(&p, r.output);
	assert_string_equal(str(&p, p.root, "complete"), "true");
	assert_string_equal(str(&p, get(p.root, "program"), "events"), "2");
	prof_free(&p);
	run_cleanup(&r);
}

/* The producer is killed with SIGKILL mid-run: the backend still writes what it got. */
static void test_producer_killed(void **state)
{
	char dir[64], output[128];
	pid_t child;
	int st;
	double deadline;
	struct prof p;
	struct stat sb;

	snprintf(dir, sizeof(dir), "/tmp/mnemo-e2e-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(output, sizeof(output), "%s/prog.mnemo.yaml", dir);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		static const char *const mods[] = { "value-pattern" };
		struct run r;

		run_start(&r, mods, 1);
		rmdir(r.dir);
		snprintf(r.s->output, sizeof(r.s->output), "%s", output);
		push_program();   /* more than the two 4 KiB buffers: several were published */
		raise(SIGKILL);
		_exit(1);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	deadline = now_monotonic() + 20;
	while (stat(output, &sb) != 0) {
		assert_true(now_monotonic() < deadline);
		usleep(20000);
	}
	prof_load(&p, output);
	assert_string_equal(str(&p, p.root, "complete"), "false");
	assert_non_null(strstr(str(&p, p.root, "incomplete_reason"),
			       "the program ended without flushing (killed by SIGKILL?)"));
	assert_string_equal(str(&p, get(p.root, "program"), "exit_status"), "null");
	assert_non_null(get(get(p.root, "modules"), "value-pattern"));
	prof_free(&p);
	{
		char cmd[128];

		/* The orphaned backend removes its section before renaming; give it a moment. */
		usleep(100000);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
}

/* The profile cannot be written: profile_done says FAILED, stderr says why, nothing is left. */
static void test_unwritable_output(void **state)
{
	static const char *const mods[] = { "value-pattern" };
	static const int st[] = { 1 };
	struct run r;

	run_start(&r, mods, 1);
	/* Read by the backend only after the stream ends, which the queue orders after this. */
	snprintf(r.s->output, sizeof(r.s->output), "%s/no-such-dir/prog.mnemo.yaml", r.dir);
	push_program();
	assert_int_equal(run_finish(&r, 0, 0, 0), MN_PROFILE_FAILED);
	run_reap(&r, st);
	assert_int_equal(mn_load_acquire(&r.s->backend[0].state), MN_BACKEND_FAILED);
	assert_non_null(strstr(r.s->backend[0].why, "No such file or directory"));
	run_cleanup(&r);
}

static int run_cli(const char *arg, char *out, size_t outlen)
{
	char cmd[512];
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1", MNEMO_BACKEND_EXE, arg);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, outlen - 1, f);
	out[n] = '\0';
	return WEXITSTATUS(pclose(f));
}

static void test_command_line(void **state)
{
	char out[4096];

	assert_int_equal(run_cli("--list-modules", out, sizeof(out)), 0);
	/* One line per module: its name, padded to the longest name, then its description. */
	const char *line = strstr(out, "value-pattern ");
	assert_non_null(line);
	line += strspn(line + strlen("value-pattern"), " ") + strlen("value-pattern");
	if (strncmp(line, "constant and few-valued loads and stores", 40))
		fail_msg("--list-modules: expected value-pattern's description, got '%.60s'", line);
	assert_int_equal(run_cli("--help", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "usage: mnemo-backend --fd N --index I"));
	assert_int_equal(run_cli("--version", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "mnemo-backend (Mnemo) "));
	assert_int_equal(run_cli("", out, sizeof(out)), 2);
	assert_non_null(strstr(out, "mnemo-backend: missing --fd"));
	assert_int_equal(run_cli("--fd 0 --index 99", out, sizeof(out)), 2);
	assert_non_null(strstr(out, "mnemo-backend: --index: '99' is not a consumer index"));
	/* stdin is no queue. */
	assert_int_equal(run_cli("--fd 0 --index 0 </dev/null", out, sizeof(out)), 1);
	assert_non_null(strstr(out, "mnemo-backend: cannot attach to the event queue (fd 0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_layout),
		cmocka_unit_test(test_failed_backend),
		cmocka_unit_test(test_failed_leader_module),
		cmocka_unit_test(test_failed_module_hosted),
		cmocka_unit_test(test_hosted_sections_identical),
		cmocka_unit_test(test_signal_and_dropped),
		cmocka_unit_test(test_corrupt_record),
		cmocka_unit_test(test_zero_word_skipped),
		cmocka_unit_test(test_producer_killed),
		cmocka_unit_test(test_unwritable_output),
		cmocka_unit_test(test_command_line),
	};

	return cmocka_run_group_tests_name("mnemo-backend end to end", tests, NULL, NULL);
}
