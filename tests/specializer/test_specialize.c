/*
 * Tests of link-time specialization: the spec library (specializer/spec.c) on the tree's
 * catalogue and on small specs written per test, and the mnemo-specialize program run as a
 * build would run it.  The generated callbacks.c is compiled with clang, run through a round trip
 * (roundtrip.c: encode with the callbacks, decode with __mnemo_wire), and linked with full LTO to
 * see that an unused event leaves no code behind (lto_prog.c).
 *
 * Paths come from the build as compile definitions; MNEMO_TEST_CATALOGUE in the environment
 * replaces the tree's catalogue (to try one being edited).  Each test works in its own temporary
 * directory, removed afterwards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "abi.h"  /* MNEMO_PLAN_* */
#include "spec.h"

extern char **environ;

/* ---- Helpers ---------------------------------------------------------------------------- */

struct fixture {
	char dir[64];          /* this test's temporary directory */
	char modules[128];     /* dir/modules: module specs written by the test */
	char out[128];         /* dir/out: generated files */
};

struct run {
	int status;            /* exit status, or 128 + signal */
	char out[16384];       /* stdout */
	char err[16384];       /* stderr */
};

static const char *catalogue_path(void)
{
	const char *env = getenv("MNEMO_TEST_CATALOGUE");

	return env && *env ? env : MNEMO_CATALOGUE;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/mnemo-spec-test.XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->modules, sizeof(fx->modules), "%s/modules", fx->dir);
	snprintf(fx->out, sizeof(fx->out), "%s/out", fx->dir);
	mkdir(fx->modules, 0755);
	*state = fx;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static void read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = 0;
}

/* Writes text to path, failing the test if it cannot. */
static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* Writes fx->modules/<name>/events.yaml; returns its path in a static buffer. */
static const char *write_spec(struct fixture *fx, const char *name, const char *text)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", fx->modules, name);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/events.yaml", fx->modules, name);
	write_file(path, text);
	return path;
}

/* Copies the tree's spec of module name into fx->modules. */
static void copy_tree_spec(struct fixture *fx, const char *name)
{
	static char text[8192];
	char path[256];

	snprintf(path, sizeof(path), "%s/%s/events.yaml", MNEMO_MODULES_DIR, name);
	read_file(path, text, sizeof(text));
	assert_true(strlen(text) > 0);
	write_spec(fx, name, text);
}

/* Runs argv (NULL-terminated) with stdout and stderr captured in r. */
static void run(struct fixture *fx, struct run *r, const char *const *argv)
{
	posix_spawn_file_actions_t fa;
	char out[128], err[128];
	pid_t pid;
	int ws;

	snprintf(out, sizeof(out), "%s/stdout", fx->dir);
	snprintf(err, sizeof(err), "%s/stderr", fx->dir);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	read_file(out, r->out, sizeof(r->out));
	read_file(err, r->err, sizeof(r->err));
}

/*
 * mnemo-specialize --modules <modules> with fx's modules dir (or the tree's) and output, and the
 * options opt and opt2 unless NULL (opt2 only with opt).
 */
static void specialize_opts(struct fixture *fx, struct run *r, const char *modules_dir,
			    const char *modules, const char *opt, const char *opt2)
{
	const char *argv[] = { MNEMO_SPECIALIZE, "--catalogue", catalogue_path(), "--modules-dir",
			       modules_dir, "--modules", modules, "--backend",
			       "/opt/mnemo/bin/mnemo-backend", "-o", fx->out, opt, opt2, NULL };

	run(fx, r, argv);
}

static void specialize_opt(struct fixture *fx, struct run *r, const char *modules_dir,
			   const char *modules, const char *opt)
{
	specialize_opts(fx, r, modules_dir, modules, opt, NULL);
}

static void specialize(struct fixture *fx, struct run *r, const char *modules_dir,
		       const char *modules)
{
	specialize_opt(fx, r, modules_dir, modules, NULL);
}

/* mnemo-specialize --check path. */
static void check_spec(struct fixture *fx, struct run *r, const char *path)
{
	const char *argv[] = { MNEMO_SPECIALIZE, "--catalogue", catalogue_path(), "--check", path,
			       NULL };

	run(fx, r, argv);
}

static void expect_contains(const char *what, const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("%s: expected to contain \"%s\", got \"%s\"", what, needle, haystack);
}

/* The run must have succeeded; prints its stderr otherwise. */
static void expect_ok(const struct run *r)
{
	if (r->status)
		fail_msg("expected exit 0, got %d; stderr: %s", r->status, r->err);
}

/*
 * The run must fail with exit status 1 and one message line starting "mnemo-specialize: " and
 * containing want (a "<file>:<line>:" prefix and a phrase, say).
 */
static void expect_error(const struct run *r, const char *want)
{
	if (r->status != 1)
		fail_msg("expected exit 1, got %d; stderr: %s", r->status, r->err);
	if (strncmp(r->err, "mnemo-specialize: ", 18))
		fail_msg("expected \"mnemo-specialize: ...\", got \"%s\"", r->err);
	expect_contains("stderr", r->err, want);
}

static void expect_wire_arg(const struct mn_wire *w, unsigned code, unsigned arg, unsigned word,
			    unsigned shift, unsigned bits)
{
	const struct mn_wire_arg *a = &w->arg[code][arg];

	if (a->word != word || a->shift != shift || a->bits != bits)
		fail_msg("event %u arg %u: expected word %u shift %u bits %u, got %u/%u/%u", code,
			 arg, word, shift, bits, a->word, a->shift, a->bits);
}

/* Loads the catalogue, the given specs (paths) and packs them into w. */
static void pack(struct mn_wire *w, struct mn_catalogue **cp, unsigned n, const char **paths)
{
	struct mn_module_spec *m[8] = { 0 };
	struct mn_spec_error err;

	assert_true(n <= 8);
	if (mn_spec_catalogue_load(cp, catalogue_path(), &err))
		fail_msg("catalogue: %s", err.msg);
	for (unsigned i = 0; i < n; i++)
		if (mn_spec_module_load(&m[i], *cp, paths[i], NULL, &err))
			fail_msg("spec: %s", err.msg);
	if (mn_spec_pack(w, *cp, (const struct mn_module_spec *const *)m, n, &err))
		fail_msg("pack: %s", err.msg);
	for (unsigned i = 0; i < n; i++)
		mn_spec_module_free(m[i]);
}

static unsigned code_of(const struct mn_catalogue *c, const char *event)
{
	const struct mn_spec_event *ev = mn_spec_event_find(c, event);

	if (!ev)
		fail_msg("no event '%s' in the catalogue", event);
	return ev->code;
}

/*
 * Writes the spec of a module "everything" that uses every argument of every event but the loop
 * summary ones, which no module may list.
 */
static void write_everything(struct fixture *fx)
{
	struct mn_catalogue *c;
	struct mn_spec_error err;
	char text[4096] = "module: everything\ndoc: every argument of every event\nevents:\n";

	if (mn_spec_catalogue_load(&c, catalogue_path(), &err))
		fail_msg("catalogue: %s", err.msg);
	for (unsigned i = 0; i < c->nevents; i++) {
		if (mn_spec_summary_event(&c->event[i]))
			continue;   /* no module may list them */
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "  %s: [",
			 c->event[i].name);
		for (unsigned a = 0; a < c->event[i].nargs; a++)
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s",
				 a ? ", " : "", c->event[i].arg[a].name);
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "]\n");
	}
	mn_spec_catalogue_free(c);
	write_spec(fx, "everything", text);
}

/* Compiles with clang: args are appended to the common flags; returns the run. */
static void clang(struct fixture *fx, struct run *r, const char *const *args)
{
	const char *argv[32] = { MNEMO_CLANG_PATH, "-std=gnu11", "-O2", "-Wall", "-Wextra",
				 "-Wno-unused-parameter", "-Wmissing-prototypes",
				 "-Wmissing-variable-declarations",
				 /* queue.h:148 "*words/" + "*nwords" trips -Wcomment */
				 "-Wno-comment", "-Werror",
				 "-I" MNEMO_RUNTIME_DIR, "-I" MNEMO_QUEUE_DIR };
	unsigned n = 12;

	for (; *args; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	run(fx, r, argv);
}

/* ---- The catalogue and the tree's modules ----------------------------------------------- */

static void test_catalogue_valid(void **state)
{
	struct mn_catalogue *c;
	struct mn_spec_error err;

	if (mn_spec_catalogue_load(&c, catalogue_path(), &err))
		fail_msg("%s", err.msg);
	assert_int_equal(c->nevents, 29);
	assert_int_equal(code_of(c, "load"), 1);
	assert_int_equal(code_of(c, "program_end"), 16);
	assert_string_equal(c->event[0].arg[1].name, "address");
	assert_int_equal(c->event[0].arg[1].bits, 48);
	/* The loop summary events: codes and arguments as the design fixes them. */
	static const struct {
		const char *event;
		unsigned code, nargs;
		const char *arg[4];
		unsigned bits[4];
	} summaries[] = {
		{ "loop_summary_load", 17, 4, { "site", "address", "step", "size" },
		  { 32, 48, 64, 24 } },
		{ "loop_summary_store", 18, 4, { "site", "address", "step", "size" },
		  { 32, 48, 64, 24 } },
		{ "loop_summary", 19, 3, { "site", "accesses", "iterations" }, { 32, 16, 48 } },
		/* Mixed loops: codes and arguments as their design fixes them. */
		{ "loop_summary_open", 20, 2, { "site", "accesses" }, { 32, 16 } },
		{ "mixed_load", 21, 4, { "site", "address", "size", "position" },
		  { 32, 48, 24, 16 } },
		{ "mixed_store", 22, 4, { "site", "address", "size", "position" },
		  { 32, 48, 24, 16 } },
		{ "loop_summary_at", 23, 1, { "iteration" }, { 48 } },
		{ "loop_summary_close", 24, 2, { "site", "iterations" }, { 32, 48 } },
	};
	for (unsigned i = 0; i < sizeof(summaries) / sizeof(summaries[0]); i++) {
		const struct mn_spec_event *ev = mn_spec_event_find(c, summaries[i].event);

		assert_non_null(ev);
		assert_int_equal(ev->code, summaries[i].code);
		assert_int_equal(ev->nargs, summaries[i].nargs);
		assert_true(mn_spec_summary_event(ev));
		for (unsigned a = 0; a < ev->nargs; a++) {
			assert_string_equal(ev->arg[a].name, summaries[i].arg[a]);
			assert_int_equal(ev->arg[a].bits, summaries[i].bits[a]);
		}
	}
	assert_false(mn_spec_summary_event(mn_spec_event_find(c, "loop_exit")));
	assert_true(mn_spec_mixed_events(c));
	mn_spec_catalogue_free(c);
}

/* value-pattern: load and store as site | address in 2 words, the store's size (memop lengths)
 * after the site in word 0; value as site | value; func_entry's site, padded to 2 words like every
 * record of a wire whose longest is 2 (spec.h); the framework's thread events, padded alike;
 * nothing else sent. */
static void test_value_pattern_wire(void **state)
{
	const char *paths[] = { MNEMO_MODULES_DIR "/value-pattern/events.yaml" };
	struct mn_catalogue *c;
	struct mn_wire w;

	pack(&w, &c, 1, paths);
	for (unsigned code = 1; code < MN_WIRE_MAX_EVENTS; code++) {
		unsigned want = code == code_of(c, "load") || code == code_of(c, "store") ||
				code == code_of(c, "value") || code == code_of(c, "func_entry") ||
				code == code_of(c, "thread_start") || code == code_of(c, "thread_end") ?
				2 : 0;

		if (w.nwords[code] != want)
			fail_msg("event %u: expected %u words, got %u", code, want, w.nwords[code]);
	}
	for (unsigned code = 1; code <= 2; code++) {
		expect_wire_arg(&w, code, 0, 0, 8, 32);    /* site */
		expect_wire_arg(&w, code, 1, 1, 0, 48);    /* address */
		expect_wire_arg(&w, code, 2, 0, 0, 0);     /* value: not sent, `value` brings it */
	}
	expect_wire_arg(&w, code_of(c, "load"), 3, 0, 0, 0);     /* load size: not sent */
	expect_wire_arg(&w, code_of(c, "store"), 3, 0, 40, 24);  /* store size: sent */
	expect_wire_arg(&w, code_of(c, "value"), 0, 0, 8, 32);   /* site */
	expect_wire_arg(&w, code_of(c, "value"), 1, 1, 0, 64);   /* value */
	assert_false(mn_spec_uses_heap(&w, c));
	mn_spec_catalogue_free(c);
}

static void test_value_pattern_cli(void **state)
{
	struct fixture *fx = *state;
	char path[256], text[32768];
	struct run r;

	specialize(fx, &r, MNEMO_MODULES_DIR, "value-pattern");
	expect_ok(&r);
	assert_string_equal(r.out, "heap=0\n");
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	read_file(path, text, sizeof(text));
	expect_contains("callbacks.c", text, "GENERATED by mnemo-specialize");
	expect_contains("callbacks.c", text, "const char __mnemo_modules[] = \"value-pattern\";");
	expect_contains("callbacks.c", text,
			"const char __mnemo_backend_path[] = \"/opt/mnemo/bin/mnemo-backend\";");
	expect_contains("callbacks.c", text, "const uint32_t __mnemo_heap_events = 0;");
	expect_contains("callbacks.c", text, "\tmn_queue_push(w, 2);\n");
	/* Values as sets: each load and store checks its value; __mnemo_value too. */
	expect_contains("callbacks.c", text, "\tvalue_check(site, value);\n}\n");
	expect_contains("callbacks.c", text, "void __mnemo_value(uint32_t site, uint64_t value)\n{\n\tvalue_check(site, value);\n}\n");
	expect_contains("callbacks.c", text,
			"void __mnemo_heap_alloc(uint32_t site, const void *addr, uint64_t size)\n"
			"{\n}\n");
	assert_null(strstr(text, "mn_heap_pending_site"));
}

static void test_list_and_check(void **state)
{
	struct fixture *fx = *state;
	const char *list[] = { MNEMO_SPECIALIZE, "--catalogue", catalogue_path(), "--modules-dir",
			       MNEMO_MODULES_DIR, "--list", NULL };
	const char *defaults[] = { MNEMO_SPECIALIZE, "--catalogue", catalogue_path(), "--modules-dir",
				   MNEMO_MODULES_DIR, "--defaults", NULL };
	const char *help[] = { MNEMO_SPECIALIZE, "--help", NULL };
	const char *none[] = { MNEMO_SPECIALIZE, NULL };
	struct run r;

	/* The default set (mnemo-cc without -m): the five profiling modules, by their specs. */
	run(fx, &r, defaults);
	expect_ok(&r);
	assert_string_equal(r.out,
			    "dependence,object-relative,rds-shape,structure-affinity,value-pattern\n");
	run(fx, &r, list);
	expect_ok(&r);
	expect_contains("--list", r.out, "value-pattern");
	expect_contains("--list", r.out, "constant and few-valued loads and stores");
	check_spec(fx, &r, MNEMO_MODULES_DIR "/value-pattern/events.yaml");
	expect_ok(&r);
	run(fx, &r, help);
	expect_ok(&r);
	expect_contains("--help", r.out, "--modules-dir");
	expect_contains("--help", r.out, "no loop summaries nor mixed loops");
	run(fx, &r, none);
	assert_int_equal(r.status, 2);
	expect_contains("no arguments", r.err, "mnemo-specialize: ");
}

/* ---- Packing ---------------------------------------------------------------------------- */

/* All four load arguments: size (24 bits) fills word 0 after the site, at shift 40. */
static void test_all_load_args(void **state)
{
	struct fixture *fx = *state;
	const char *paths[] = { write_spec(fx, "all-load", "module: all-load\ndoc: d\n"
					   "events:\n  load: [site, address, value, size]\n") };
	struct mn_catalogue *c;
	struct mn_wire w;
	struct run r;

	pack(&w, &c, 1, paths);
	assert_int_equal(w.nwords[code_of(c, "load")], 3);
	expect_wire_arg(&w, code_of(c, "load"), 0, 0, 8, 32);
	expect_wire_arg(&w, code_of(c, "load"), 1, 1, 0, 48);
	expect_wire_arg(&w, code_of(c, "load"), 2, 2, 0, 64);
	expect_wire_arg(&w, code_of(c, "load"), 3, 0, 40, 24);
	assert_int_equal(w.nwords[code_of(c, "store")], 0);
	mn_spec_catalogue_free(c);

	specialize(fx, &r, fx->modules, "all-load");
	expect_ok(&r);
	assert_string_equal(r.out, "heap=0\n");
}

/* The site goes with every sent event even when no module lists it. */
static void test_site_always_sent(void **state)
{
	struct fixture *fx = *state;
	const char *paths[] = { write_spec(fx, "values", "module: values\ndoc: d\nevents:\n"
					   "  load: [value]\n  loop_iter: []\n") };
	struct mn_catalogue *c;
	struct mn_wire w;

	pack(&w, &c, 1, paths);
	assert_int_equal(w.nwords[code_of(c, "load")], 2);
	expect_wire_arg(&w, code_of(c, "load"), 0, 0, 8, 32);
	expect_wire_arg(&w, code_of(c, "load"), 1, 0, 0, 0);
	expect_wire_arg(&w, code_of(c, "load"), 2, 1, 0, 64);
	/* 2 words, not 1: the longest record is 2 words, so every record is (fixed 16 bytes). */
	assert_int_equal(w.nwords[code_of(c, "loop_iter")], 2);
	expect_wire_arg(&w, code_of(c, "loop_iter"), 0, 0, 8, 32);
	mn_spec_catalogue_free(c);
}

/*
 * Fixed 16-byte records: when the longest record is 2 words, the 1-word ones are padded to 2 (and
 * the callback writes a zero word 1); when it is 3, they stay 1 word; when every record is 1 word,
 * nothing is padded.
 */
static void test_fixed_16_byte_records(void **state)
{
	struct fixture *fx = *state;
	const char *paths[1];
	char path[256], text[32768];
	struct mn_catalogue *c;
	struct mn_wire w;
	struct run r;

	paths[0] = write_spec(fx, "deps", "module: deps\ndoc: d\nevents:\n"
			      "  load: [site, address, size]\n  store: [site, address]\n"
			      "  func_entry: []\n  loop_iter: []\n");
	pack(&w, &c, 1, paths);
	assert_int_equal(w.nwords[code_of(c, "load")], 2);
	assert_int_equal(w.nwords[code_of(c, "store")], 2);
	assert_int_equal(w.nwords[code_of(c, "func_entry")], 2);
	assert_int_equal(w.nwords[code_of(c, "loop_iter")], 2);
	expect_wire_arg(&w, code_of(c, "loop_iter"), 0, 0, 8, 32);
	mn_spec_catalogue_free(c);

	paths[0] = write_spec(fx, "deps3", "module: deps3\ndoc: d\nevents:\n"
			      "  load: [site, address, value]\n  loop_iter: []\n");
	pack(&w, &c, 1, paths);
	assert_int_equal(w.nwords[code_of(c, "load")], 3);
	assert_int_equal(w.nwords[code_of(c, "loop_iter")], 1);
	mn_spec_catalogue_free(c);

	paths[0] = write_spec(fx, "calls", "module: calls\ndoc: d\nevents:\n"
			      "  func_entry: []\n  func_exit: []\n");
	pack(&w, &c, 1, paths);
	assert_int_equal(w.nwords[code_of(c, "func_entry")], 1);
	assert_int_equal(w.nwords[code_of(c, "func_exit")], 1);
	mn_spec_catalogue_free(c);

	specialize(fx, &r, fx->modules, "deps");
	expect_ok(&r);
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	read_file(path, text, sizeof(text));
	expect_contains("callbacks.c", text,
			"MN_ENTRY void __mnemo_loop_iter(uint32_t site)\n{\n\tuint64_t w[2];\n\n"
			"\tw[0] = EV_LOOP_ITER | (uint64_t)site << 8;\n\tw[1] = 0;\n"
			"\tmn_queue_push(w, 2);\n}\n");
}

/* Two modules: each event carries the union of what they list. */
static void test_union_of_modules(void **state)
{
	struct fixture *fx = *state;
	const char *paths[2];
	struct mn_catalogue *c;
	struct mn_wire w;
	struct run r;

	copy_tree_spec(fx, "value-pattern");
	paths[0] = MNEMO_MODULES_DIR "/value-pattern/events.yaml";
	paths[1] = write_spec(fx, "sizes", "module: sizes\ndoc: d\nevents:\n  load: [size]\n"
			      "  func_entry: []\n");
	pack(&w, &c, 2, paths);
	assert_int_equal(w.nwords[code_of(c, "load")], 2);
	expect_wire_arg(&w, code_of(c, "load"), 3, 0, 40, 24);   /* size, from "sizes" */
	expect_wire_arg(&w, code_of(c, "load"), 1, 1, 0, 48);    /* address, from value-pattern */
	assert_int_equal(w.nwords[code_of(c, "store")], 2);
	expect_wire_arg(&w, code_of(c, "store"), 3, 0, 40, 24);  /* size, from value-pattern */
	assert_int_equal(w.nwords[code_of(c, "func_entry")], 2);
	mn_spec_catalogue_free(c);

	specialize(fx, &r, fx->modules, "value-pattern,sizes");
	expect_ok(&r);
	assert_string_equal(r.out, "heap=0\n");
}

static void test_heap_events(void **state)
{
	struct fixture *fx = *state;
	char path[256], text[32768];
	struct run r;

	write_spec(fx, "frees", "module: frees\ndoc: d\nshard: address\nshard_shift: 6\n"
		   "events:\n  heap_free: [address]\n");
	specialize(fx, &r, fx->modules, "frees");
	expect_ok(&r);
	assert_string_equal(r.out, "heap=1\n");
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	read_file(path, text, sizeof(text));
	expect_contains("callbacks.c", text, "\tmn_heap_pending_site = site;\n");
	expect_contains("callbacks.c", text, "const uint32_t __mnemo_heap_events = 1;");
}

/* An event whose arguments cannot fit in 4 words is refused, naming it in the catalogue. */
static void test_unpackable(void **state)
{
	struct fixture *fx = *state;
	char cat[256];
	struct mn_catalogue *c;
	struct mn_module_spec *m;
	struct mn_spec_error err;
	struct mn_wire w;

	snprintf(cat, sizeof(cat), "%s/wide.yaml", fx->dir);
	write_file(cat, "format: mnemo-events/1\nevents:\n"
		   "  narrow:\n    code: 1\n    doc: d\n    args: []\n"
		   "  wide:\n    code: 2\n    doc: d\n    args:\n"
		   "      - {name: a, bits: 64, doc: d}\n      - {name: b, bits: 64, doc: d}\n"
		   "      - {name: c, bits: 64, doc: d}\n      - {name: e, bits: 64, doc: d}\n");
	if (mn_spec_catalogue_load(&c, cat, &err))
		fail_msg("%s", err.msg);
	if (mn_spec_module_load(&m, c, write_spec(fx, "w", "module: w\ndoc: d\nevents:\n"
						  "  wide: [a, b, c, e]\n  narrow: []\n"),
				"w", &err))
		fail_msg("%s", err.msg);
	assert_int_equal(mn_spec_pack(&w, c, (const struct mn_module_spec *const *)&m, 1, &err),
			 -EINVAL);
	expect_contains("pack", err.msg, "/wide.yaml:7:3: event 'wide': arguments a:64, b:64");
	expect_contains("pack", err.msg, "do not fit in 4 words");
	mn_spec_module_free(m);
	mn_spec_catalogue_free(c);
}

/*
 * mn_spec_pack_summaries(): the three summary events, and the five of mixed loops only when asked;
 * mixed_load and mixed_store are 2 words, w0 code | site | size and w1 address | position, with
 * records of any length around them; open and loop_summary_at (1 word) padded to 2 when every
 * record is a multiple of 16 bytes.
 */
static void test_pack_mixed(void **state)
{
	static const char *const sets[][2] = {
		{ MNEMO_MODULES_DIR "/dependence/events.yaml", NULL },     /* all 2 words */
		{ MNEMO_MODULES_DIR "/null/events.yaml", NULL },           /* 1 to 3 words */
		{ MNEMO_MODULES_DIR "/value-pattern/events.yaml", NULL },  /* 1 and 3 words */
		{ MNEMO_MODULES_DIR "/object-relative/events.yaml",
		  MNEMO_MODULES_DIR "/shadow-cost/events.yaml" },
	};
	static const char *const mixed[] = { "loop_summary_open", "mixed_load", "mixed_store",
					     "loop_summary_at", "loop_summary_close" };

	for (unsigned i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		const char *paths[2] = { sets[i][0], sets[i][1] };
		struct mn_spec_error err;
		struct mn_catalogue *c;
		struct mn_wire w, with, without;
		bool even = true;

		pack(&w, &c, paths[1] ? 2 : 1, paths);
		for (unsigned code = 1; code < MN_WIRE_MAX_EVENTS; code++)
			even &= w.nwords[code] % 2 == 0;
		with = without = w;
		if (mn_spec_pack_summaries(&without, c, false, &err) ||
		    mn_spec_pack_summaries(&with, c, true, &err))
			fail_msg("%s: %s", paths[0], err.msg);
		for (unsigned k = 0; k < 5; k++) {
			unsigned code = code_of(c, mixed[k]);

			if (without.nwords[code])
				fail_msg("%s: %s sent without mixed loops", paths[0], mixed[k]);
			if (!with.nwords[code])
				fail_msg("%s: %s not sent with mixed loops", paths[0], mixed[k]);
		}
		/* Everything else alike, the modules' events untouched. */
		for (unsigned code = 1; code < 20; code++) {
			if (with.nwords[code] != without.nwords[code] ||
			    memcmp(with.arg[code], without.arg[code], sizeof(with.arg[code])))
				fail_msg("%s: event %u packed differently with mixed loops",
					 paths[0], code);
			if (code < 17 && (with.nwords[code] != w.nwords[code] ||
					  memcmp(with.arg[code], w.arg[code], sizeof(w.arg[code]))))
				fail_msg("%s: module event %u changed", paths[0], code);
		}
		for (unsigned code = 21; code <= 22; code++) {
			if (with.nwords[code] != 2)
				fail_msg("%s: event %u: expected 2 words, got %u", paths[0], code,
					 with.nwords[code]);
			expect_wire_arg(&with, code, 0, 0, 8, 32);    /* site */
			expect_wire_arg(&with, code, 1, 1, 0, 48);    /* address */
			expect_wire_arg(&with, code, 2, 0, 40, 24);   /* size */
			expect_wire_arg(&with, code, 3, 1, 48, 16);   /* position */
		}
		assert_int_equal(with.nwords[code_of(c, "loop_summary_open")], even ? 2 : 1);
		assert_int_equal(with.nwords[code_of(c, "loop_summary_at")], even ? 2 : 1);
		assert_int_equal(with.nwords[code_of(c, "loop_summary_close")], 2);
		expect_wire_arg(&with, code_of(c, "loop_summary_at"), 0, 0, 8, 48);
		mn_spec_catalogue_free(c);
	}
}

/* ---- Pointer-only modules (accesses:) --------------------------------------------------- */

/* accesses: is parsed as pointer or all, all by default; rds-shape takes pointer accesses only. */
static void test_accesses_parsed(void **state)
{
	static const struct {
		const char *line;
		enum mn_spec_accesses want;
	} cases[] = {
		{ "accesses: pointer\n", MN_ACCESSES_POINTER },
		{ "accesses: all\n", MN_ACCESSES_ALL },
		{ "", MN_ACCESSES_ALL },
	};
	struct fixture *fx = *state;
	struct mn_spec_error err;
	struct mn_catalogue *c;
	struct mn_module_spec *m;
	char text[256];

	if (mn_spec_catalogue_load(&c, catalogue_path(), &err))
		fail_msg("catalogue: %s", err.msg);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "module: acc\ndoc: d\n%sevents:\n  load: [address]\n",
			 cases[i].line);
		if (mn_spec_module_load(&m, c, write_spec(fx, "acc", text), "acc", &err))
			fail_msg("'%s': %s", cases[i].line, err.msg);
		if (m->accesses != cases[i].want)
			fail_msg("'%s': expected accesses %d, got %d", cases[i].line, cases[i].want,
				 m->accesses);
		mn_spec_module_free(m);
	}
	if (mn_spec_module_load(&m, c, MNEMO_MODULES_DIR "/rds-shape/events.yaml", "rds-shape",
				&err))
		fail_msg("rds-shape: %s", err.msg);
	assert_int_equal(m->accesses, MN_ACCESSES_POINTER);
	mn_spec_module_free(m);
	mn_spec_catalogue_free(c);
}

/* Expects the generated callbacks.c in text to define fn with an empty body, or a full one. */
static void expect_body(const char *text, const char *fn, bool full)
{
	char head[256];
	const char *at;

	snprintf(head, sizeof(head), "MN_ENTRY void %s(uint32_t site, const void *addr, "
		 "uint64_t value, uint32_t size)\n{\n", fn);
	at = strstr(text, head);
	if (!at)
		fail_msg("callbacks.c: expected a definition of %s, got:\n%s", fn, text);
	at += strlen(head);
	if (full && !strncmp(at, "}\n", 2))
		fail_msg("callbacks.c: expected %s to push a record, got an empty body", fn);
	if (!full && strncmp(at, "}\n", 2))
		fail_msg("callbacks.c: expected %s to have an empty body, got:\n%.200s", fn, at);
	if (full && !strstr(at, "\tmn_queue_push(w, "))
		fail_msg("callbacks.c: expected %s to call mn_queue_push", fn);
}

/*
 * A pointer-only module: __mnemo_load and __mnemo_store are empty, the _ptr ones push.  With a
 * module taking all loads as well: both loads push, and stores, which only the pointer-only
 * module uses, stay as they were.
 */
static void test_pointer_only_callbacks(void **state)
{
	struct fixture *fx = *state;
	char path[256], text[32768];
	struct run r;

	write_spec(fx, "ptrs", "module: ptrs\ndoc: d\naccesses: pointer\nevents:\n"
		   "  load: [address, value]\n  store: [address, value]\n");
	write_spec(fx, "vals", "module: vals\ndoc: d\nevents:\n  load: [value]\n");
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);

	specialize(fx, &r, fx->modules, "ptrs");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_body(text, "__mnemo_load", false);
	expect_body(text, "__mnemo_store", false);
	expect_body(text, "__mnemo_load_ptr", true);
	expect_body(text, "__mnemo_store_ptr", true);
	expect_contains("callbacks.c", text, "(accesses: pointer)");

	specialize(fx, &r, fx->modules, "ptrs,vals");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_body(text, "__mnemo_load", true);
	expect_body(text, "__mnemo_load_ptr", true);
	expect_body(text, "__mnemo_store", false);
	expect_body(text, "__mnemo_store_ptr", true);

	/* The module order does not matter; nor does an all module that uses no load. */
	write_spec(fx, "calls", "module: calls\ndoc: d\nevents:\n  func_entry: []\n");
	specialize(fx, &r, fx->modules, "calls,ptrs");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_body(text, "__mnemo_load", false);
	expect_body(text, "__mnemo_load_ptr", true);
	specialize(fx, &r, fx->modules, "vals,calls,ptrs");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_body(text, "__mnemo_load", true);
	expect_body(text, "__mnemo_load_ptr", true);

	/* An all module alone: both full, as before accesses: existed. */
	specialize(fx, &r, fx->modules, "vals");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_body(text, "__mnemo_load", true);
	expect_body(text, "__mnemo_load_ptr", true);
	expect_body(text, "__mnemo_store", false);
	expect_body(text, "__mnemo_store_ptr", false);
}

/* ---- Sampling (`sample:`) --------------------------------------------------------------- */

static void test_sample_parsed(void **state)
{
	struct fixture *fx = *state;
	struct mn_spec_error err;
	struct mn_catalogue *c;
	struct mn_module_spec *m;

	if (mn_spec_catalogue_load(&c, catalogue_path(), &err))
		fail_msg("catalogue: %s", err.msg);
	if (mn_spec_module_load(&m, c, write_spec(fx, "smp", "module: smp\ndoc: d\n"
						  "sample: MNEMO_SMP_2\nevents:\n"
						  "  store: [address]\n"), "smp", &err))
		fail_msg("smp: %s", err.msg);
	if (!m->sample || strcmp(m->sample, "MNEMO_SMP_2") || m->sample_line != 3)
		fail_msg("expected sample MNEMO_SMP_2 at line 3, got %s at line %u",
			 m->sample ? m->sample : "none", m->sample_line);
	mn_spec_module_free(m);
	if (mn_spec_module_load(&m, c, write_spec(fx, "all", "module: all\ndoc: d\nevents:\n"
						  "  load: [address]\n"), "all", &err))
		fail_msg("all: %s", err.msg);
	if (m->sample)
		fail_msg("expected no sample without the key, got %s", m->sample);
	mn_spec_module_free(m);
	/* The tree's structure-affinity samples by MNEMO_AFFINITY_SAMPLE. */
	if (mn_spec_module_load(&m, c, MNEMO_MODULES_DIR "/structure-affinity/events.yaml",
				"structure-affinity", &err))
		fail_msg("structure-affinity: %s", err.msg);
	if (!m->sample || strcmp(m->sample, "MNEMO_AFFINITY_SAMPLE"))
		fail_msg("structure-affinity: expected sample MNEMO_AFFINITY_SAMPLE, got %s",
			 m->sample ? m->sample : "none");
	mn_spec_module_free(m);
	assert_true(mn_spec_sample_var_valid("MNEMO_X"));
	assert_false(mn_spec_sample_var_valid("MNEMO_"));
	assert_false(mn_spec_sample_var_valid("MNEMO_x"));
	assert_false(mn_spec_sample_var_valid("PATH"));
	assert_false(mn_spec_sample_var_valid("MNEMO_A=1"));
	mn_spec_catalogue_free(c);
}

/*
 * Expects entry point fn (a load or store one) in callbacks.c text to start with the countdown
 * and call send_<event>(), or, when !sampled, not to count down.
 */
static void expect_countdown(const char *text, const char *fn, bool sampled)
{
	char head[256];
	const char *at;

	snprintf(head, sizeof(head), "MN_ENTRY void %s(uint32_t site, const void *addr, "
		 "uint64_t value, uint32_t size)\n{\n", fn);
	at = strstr(text, head);
	if (!at)
		fail_msg("callbacks.c: expected a definition of %s, got:\n%s", fn, text);
	at += strlen(head);
	if (sampled && strncmp(at, "\tint32_t left = sample_countdown - 1;\n", 38))
		fail_msg("callbacks.c: expected %s to count down, got:\n%.300s", fn, at);
	if (!sampled && strstr(text, "sample_countdown"))
		fail_msg("callbacks.c: expected no countdown (%s), got:\n%.300s", fn, at);
}

/*
 * The countdown only when every chosen module that lists load or store declares the same
 * variable; no other event ever counts down; the variable and the module needing every access
 * are recorded for the runtime.
 */
static void test_sample_callbacks(void **state)
{
	struct fixture *fx = *state;
	char path[256], text[32768];
	struct run r;

	write_spec(fx, "sa", "module: sa\ndoc: d\nsample: MNEMO_T_SAMPLE\nevents:\n"
		   "  load: [address]\n  store: [address]\n  heap_alloc: [address]\n");
	write_spec(fx, "sa2", "module: sa2\ndoc: d\nsample: MNEMO_T_SAMPLE\nevents:\n"
		   "  load: [value]\n");
	write_spec(fx, "sb", "module: sb\ndoc: d\nsample: MNEMO_OTHER\nevents:\n"
		   "  store: [value]\n");
	write_spec(fx, "vals", "module: vals\ndoc: d\nevents:\n  load: [value]\n");
	write_spec(fx, "calls", "module: calls\ndoc: d\nevents:\n  func_entry: []\n");
	write_spec(fx, "ps", "module: ps\ndoc: d\naccesses: pointer\nsample: MNEMO_T_SAMPLE\n"
		   "events:\n  load: [address]\n");
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);

	static const struct {
		const char *modules;
		bool sampled;
		const char *var, *blocker;
	} cases[] = {
		{ "sa", true, "MNEMO_T_SAMPLE", "" },
		{ "calls,sa", true, "MNEMO_T_SAMPLE", "" },    /* calls takes no access */
		{ "sa,sa2", true, "MNEMO_T_SAMPLE", "" },      /* the same variable */
		{ "sa,vals", false, "MNEMO_T_SAMPLE", "vals" },  /* vals needs every access */
		{ "vals,sa", false, "MNEMO_T_SAMPLE", "vals" },
		{ "sa,sb", false, "MNEMO_T_SAMPLE", "sb" },    /* two variables: no agreement */
		{ "vals", false, "", "" },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[128];

		specialize(fx, &r, fx->modules, cases[i].modules);
		expect_ok(&r);
		read_file(path, text, sizeof(text));
		expect_countdown(text, "__mnemo_load", cases[i].sampled);
		expect_countdown(text, "__mnemo_load_ptr", cases[i].sampled);
		expect_countdown(text, "__mnemo_store", cases[i].sampled);
		expect_countdown(text, "__mnemo_store_ptr", cases[i].sampled);
		snprintf(want, sizeof(want), "const char __mnemo_sample_var[] = \"%s\";\n",
			 cases[i].var);
		expect_contains(cases[i].modules, text, want);
		snprintf(want, sizeof(want), "const char __mnemo_sample_blocker[] = \"%s\";\n",
			 cases[i].blocker);
		expect_contains(cases[i].modules, text, want);
		if (cases[i].sampled) {
			/* Other events never count down: heap_alloc pushes at once. */
			expect_contains(cases[i].modules, text,
					"MN_ENTRY void __mnemo_heap_alloc(uint32_t site, "
					"const void *addr, uint64_t size)\n{\n\tuint64_t w[");
		} else {
			expect_body(text, "__mnemo_load", true);
		}
	}

	/* Pointer-only and sampled: the plain entry points stay empty, the _ptr ones count. */
	specialize(fx, &r, fx->modules, "ps");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_body(text, "__mnemo_load", false);
	expect_countdown(text, "__mnemo_load_ptr", true);
	expect_body(text, "__mnemo_store_ptr", false);
}

/* ---- Bad module specs: one message naming file and line, exit 1 ------------------------- */

/* Writes spec text as module "bad", runs --check and the generator on it, expects want. */
static void expect_bad_spec(struct fixture *fx, const char *text, unsigned line, unsigned col,
			    const char *what)
{
	const char *path = write_spec(fx, "bad", text);
	char want[512];
	struct run r;

	snprintf(want, sizeof(want), "%s:%u:%u: %s", path, line, col, what);
	check_spec(fx, &r, path);
	expect_error(&r, want);
	specialize(fx, &r, fx->modules, "bad");
	expect_error(&r, want);
	assert_string_equal(r.out, "");
}

static void test_bad_yaml_syntax(void **state)
{
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: this: that\n"                          /* line 2 */
			"events:\n"
			"  load: [site]\n",
			2, 10, "mapping values are not allowed");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"events:\n"
			"  load: [site, address\n"
			"  store: [site]\n",                         /* line 5 */
			5, 8, "did not find expected ',' or ']'");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"events:\n"
			"  load: [site]\n"
			"    store: [site]\n",                       /* line 5 */
			5, 5, "did not find expected key");
}

static void test_bad_unknown_event(void **state)
{
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"shard: site\n"
			"events:\n"
			"  lod: [site, address]\n",                  /* line 5 */
			5, 3, "unknown event 'lod' (known: load, store, ");
}

static void test_bad_unknown_argument(void **state)
{
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"events:\n"
			"  store: [site]\n"
			"  load: [site, adress]\n",                  /* line 5 */
			5, 16, "unknown argument 'adress' of event 'load' (known: site, address, "
			"value, size)");
}

static void test_bad_duplicates(void **state)
{
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"events:\n"
			"  load: [site]\n"
			"  store: [value]\n"
			"  load: [address]\n",                       /* line 6 */
			6, 3, "duplicate key 'load' (first at line 4)");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"events:\n"
			"  load: [value, site, value]\n",            /* line 4 */
			4, 23, "event 'load': argument 'value' listed twice");
}

static void test_bad_module_key(void **state)
{
	expect_bad_spec(*state,
			"# a comment first\n"
			"doc: d\n"                                   /* the mapping starts here */
			"events:\n"
			"  load: [site]\n",
			2, 1, "missing 'module:'");
	expect_bad_spec(*state,
			"module: good\n"
			"doc: d\n"
			"events:\n"
			"  load: [site]\n",
			1, 9, "module 'good' does not match its folder 'bad'");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"events:\n"
			"  load: [site]\n"
			"evnts: {}\n",
			5, 1, "unknown key 'evnts' in the module spec");
}

static void test_bad_shard(void **state)
{
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"shard: adress\n"
			"events:\n"
			"  load: [site]\n",
			3, 8, "shard must be none, site or address, got 'adress'");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"shard: address\n"
			"events:\n"
			"  load: [site]\n",
			3, 8, "'shard: address' needs 'shard_shift: N'");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"shard: address\n"
			"shard_shift: 64\n"
			"events:\n"
			"  load: [site]\n",
			4, 14, "'shard_shift' must be an integer in 0..47");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"shard: site\n"
			"shard_shift: 4\n"
			"events:\n"
			"  load: [site]\n",
			4, 14, "shard_shift is only for 'shard: address'");
}

/* The loop summary events are the framework's: a module may not list them. */
static void test_bad_summary_event(void **state)
{
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"events:\n"
			"  load: [site]\n"
			"  loop_summary: [site, accesses]\n",        /* line 5 */
			5, 3, "event 'loop_summary' is not for modules");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"events:\n"
			"  mixed_load: [site, address]\n",          /* line 4 */
			4, 3, "event 'mixed_load' is not for modules");
}

static void test_bad_default(void **state)
{
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"default: yes\n"
			"events:\n"
			"  load: [site]\n",
			3, 10, "default must be true or false, got 'yes'");
}

static void test_bad_accesses(void **state)
{
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"accesses: pointers\n"
			"events:\n"
			"  load: [site]\n",
			3, 11, "accesses must be all or pointer, got 'pointers'");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"shard: site\n"
			"events:\n"
			"  load: [site]\n"
			"accesses: [pointer]\n",
			6, 11, "accesses must be all or pointer, got 'nothing'");
}

/* A module taking `value` publishes each site's values from one worker: not sharded by address. */
static void test_bad_values(void **state)
{
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"shard: address\n"
			"shard_shift: 3\n"
			"events:\n"
			"  value: [site, value]\n",
			6, 3, "a module taking 'value' shards by site or not at all");
}

static void test_bad_sample(void **state)
{
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"sample: affinity_sample\n"
			"events:\n"
			"  load: [site]\n",
			3, 9, "sample must name the environment variable that sets N, "
			"MNEMO_[A-Z0-9_]+ of at most 63 characters, got 'affinity_sample'");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"events:\n"
			"  load: [site]\n"
			"sample: MNEMO_\n",
			5, 9, "sample must name the environment variable");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"sample: [MNEMO_X]\n"
			"events:\n"
			"  load: [site]\n",
			3, 9, "sample must name the environment variable that sets N, "
			"MNEMO_[A-Z0-9_]+ of at most 63 characters, got 'a list'");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"sample: MNEMO_Bad\n"
			"events:\n"
			"  load: [site]\n",
			3, 9, "sample must name the environment variable that sets N, "
			"MNEMO_[A-Z0-9_]+ of at most 63 characters, got 'MNEMO_Bad'");
	expect_bad_spec(*state,
			"module: bad\n"
			"doc: d\n"
			"sample: MNEMO_BAD_SAMPLE\n"
			"events:\n"
			"  heap_alloc: [site]\n",
			3, 9, "sample (MNEMO_BAD_SAMPLE) samples loads and stores, but the module "
			"lists neither");
}

static void test_bad_module_name(void **state)
{
	struct fixture *fx = *state;
	struct run r;

	copy_tree_spec(fx, "value-pattern");
	specialize(fx, &r, fx->modules, "value-pattern,foo");
	expect_error(&r, "mnemo-specialize: unknown module 'foo' (known: value-pattern)\n");
	specialize(fx, &r, fx->modules, "value-pattern,value-pattern");
	expect_error(&r, "module 'value-pattern' is given twice");
	specialize(fx, &r, fx->modules, "../value-pattern");
	expect_error(&r, "unknown module '../value-pattern'");
	/* Nothing was written by the failed runs. */
	assert_int_equal(access(fx->out, F_OK), -1);
}

/* ---- Bad catalogues --------------------------------------------------------------------- */

/* A catalogue with one event "ev" whose body is the given text (indented 4). */
static void expect_bad_catalogue(struct fixture *fx, const char *events, unsigned line,
				 const char *what)
{
	char path[256], text[2048], want[512];
	struct mn_catalogue *c = NULL;
	struct mn_spec_error err;

	snprintf(path, sizeof(path), "%s/catalogue.yaml", fx->dir);
	snprintf(text, sizeof(text), "format: mnemo-events/1\nevents:\n%s", events);
	write_file(path, text);
	assert_int_equal(mn_spec_catalogue_load(&c, path, &err), -EINVAL);
	assert_null(c);
	snprintf(want, sizeof(want), "%s:%u:", path, line);
	expect_contains("catalogue error", err.msg, want);
	expect_contains("catalogue error", err.msg, what);
}

static void test_bad_catalogue(void **state)
{
	struct fixture *fx = *state;
	char path[256];
	struct run r;

	expect_bad_catalogue(fx, "  a:\n    code: 1\n    doc: d\n    args: []\n"
			     "  b:\n    code: 1\n    doc: d\n    args: []\n",
			     8, "event 'b': code 1 is already used by event 'a' (line 3)");
	expect_bad_catalogue(fx, "  a:\n    code: 0\n    doc: d\n    args: []\n",
			     4, "'code' must be an integer in 1..31");
	expect_bad_catalogue(fx, "  a:\n    code: 32\n    doc: d\n    args: []\n",
			     4, "'code' must be an integer in 1..31");
	expect_bad_catalogue(fx, "  a:\n    code: 1\n    doc: d\n    args:\n"
			     "      - {name: x, bits: 0, doc: d}\n",
			     7, "'bits' must be an integer in 1..64");
	expect_bad_catalogue(fx, "  a:\n    code: 1\n    doc: d\n    args:\n"
			     "      - {name: x, bits: 65, doc: d}\n",
			     7, "'bits' must be an integer in 1..64");
	expect_bad_catalogue(fx, "  a:\n    code: 1\n    doc: d\n    args:\n"
			     "      - {name: p, bits: 8, doc: d}\n"
			     "      - {name: q, bits: 8, doc: d}\n"
			     "      - {name: r, bits: 8, doc: d}\n"
			     "      - {name: s, bits: 8, doc: d}\n"
			     "      - {name: t, bits: 8, doc: d}\n",
			     11, "event 'a' has more than 4 arguments");
	expect_bad_catalogue(fx, "  a:\n    code: 1\n    doc: d\n    args:\n"
			     "      - {name: x, bits: 8, doc: one, two}\n",
			     7, "unknown key 'two'");
	expect_bad_catalogue(fx, "  a:\n    code: 1\n    doc: d\n    args:\n"
			     "      - {name: x, bits: 8, doc: d}\n"
			     "      - {name: x, bits: 8, doc: d}\n",
			     8, "event 'a' has two arguments named 'x'");
	/* A first argument other than site is fine. */
	snprintf(path, sizeof(path), "%s/good.yaml", fx->dir);
	write_file(path, "format: mnemo-events/1\nevents:\n  a:\n    code: 3\n    doc: d\n"
		   "    args:\n      - {name: pid, bits: 32, doc: d}\n");
	{
		struct mn_catalogue *c;
		struct mn_spec_error err;

		if (mn_spec_catalogue_load(&c, path, &err))
			fail_msg("%s", err.msg);
		mn_spec_catalogue_free(c);
	}

	/* The program reports a catalogue error the same way. */
	snprintf(path, sizeof(path), "%s/catalogue.yaml", fx->dir);
	write_file(path, "format: mnemo-events/1\nevents:\n  load:\n    code: 99\n");
	{
		const char *argv[] = { MNEMO_SPECIALIZE, "--catalogue", path, "--modules-dir",
				       MNEMO_MODULES_DIR, "--list", NULL };
		char want[300];

		run(fx, &r, argv);
		snprintf(want, sizeof(want), "%s:4:11: event 'load': 'code' must be", path);
		expect_error(&r, want);
	}
}

/* ---- The generated code ----------------------------------------------------------------- */

static void test_generated_compiles(void **state)
{
	struct fixture *fx = *state;
	char src[256], obj[256];
	struct run r;

	write_everything(fx);
	copy_tree_spec(fx, "value-pattern");
	copy_tree_spec(fx, "structure-affinity");  /* sampled */
	snprintf(src, sizeof(src), "%s/callbacks.c", fx->out);
	snprintf(obj, sizeof(obj), "%s/callbacks.o", fx->out);
	for (unsigned i = 0; i < 3; i++) {
		static const char *const names[] = { "value-pattern", "everything",
						     "structure-affinity" };
		const char *args[] = { "-flto", "-c", src, "-o", obj, NULL };

		specialize(fx, &r, fx->modules, names[i]);
		expect_ok(&r);
		clang(fx, &r, args);
		if (r.status)
			fail_msg("clang on callbacks.c for %s: exit %d: %s", names[i], r.status,
				 r.err);
	}
}

/*
 * Builds roundtrip.c with the callbacks for modules (made with the extra option spec_opt, or none
 * when NULL) and runs it, with flag (NULL for none); returns its stdout in r.
 */
static void roundtrip_opt(struct fixture *fx, struct run *r, const char *modules,
			  const char *spec_opt, const char *flag)
{
	char src[256], exe[256];
	const char *args[] = { "-flto", "-fuse-ld=lld", MNEMO_TEST_SRC_DIR "/roundtrip.c", src,
			       "-o", exe, NULL };
	const char *argv[] = { exe, flag, NULL };

	snprintf(src, sizeof(src), "%s/callbacks.c", fx->out);
	snprintf(exe, sizeof(exe), "%s/roundtrip", fx->out);
	specialize_opt(fx, r, fx->modules, modules, spec_opt);
	expect_ok(r);
	clang(fx, r, args);
	if (r->status)
		fail_msg("clang: exit %d: %s", r->status, r->err);
	run(fx, r, argv);
	if (r->status)
		fail_msg("roundtrip for %s: exit %d:\n%s%s", modules, r->status, r->out, r->err);
}

static void roundtrip(struct fixture *fx, struct run *r, const char *modules, const char *flag)
{
	roundtrip_opt(fx, r, modules, NULL, flag);
}

static void test_roundtrip_everything(void **state)
{
	struct fixture *fx = *state;
	struct run r;

	write_everything(fx);
	roundtrip(fx, &r, "everything", NULL);
	assert_string_equal(r.out, "sent: load store pointer_create heap_alloc heap_realloc "
			    "heap_free stack_alloc stack_free global func_entry func_exit "
			    "loop_invoke loop_iter loop_exit program_start program_end "
			    "loop_summary_load loop_summary_store loop_summary loop_summary_open "
			    "mixed_load mixed_store loop_summary_at loop_summary_close\n"
			    "heap_events: 1\nplan: 0xc00006aa\nflags: 0x00\n"
			    "codes: load 0x01, store 0x02, load_ptr 0x01, store_ptr 0x02\n");
}

static void test_roundtrip_value_pattern(void **state)
{
	struct fixture *fx = *state;
	struct run r;

	copy_tree_spec(fx, "value-pattern");
	roundtrip(fx, &r, "value-pattern", NULL);
	assert_string_equal(r.out, "sent: load store func_entry loop_summary_load "
			    "loop_summary_store loop_summary loop_summary_open mixed_load "
			    "mixed_store loop_summary_at loop_summary_close\nheap_events: 0\n"
			    "plan: 0xc00000ff\nflags: 0x00\n"
			    "codes: load 0x01, store 0x02, load_ptr 0x01, store_ptr 0x02\n");
}

/* Pointer-only modules: the _ptr entry points push the records, the plain ones nothing. */
/*
 * A sampled build: with the periods at their defaults (1) every access is sent, as without
 * sampling; with --sample 1000, about one access in 1000, every gap within [500, 1500].
 */
static void test_roundtrip_sampled(void **state)
{
	struct fixture *fx = *state;
	struct run r;

	copy_tree_spec(fx, "structure-affinity");
	roundtrip(fx, &r, "structure-affinity", NULL);
	expect_contains("roundtrip", r.out, "sent: load store heap_alloc heap_realloc heap_free ");
	roundtrip(fx, &r, "structure-affinity", "--sample");
	expect_contains("roundtrip", r.out, "sampled: ");
}

/* Module sl: sampled loads and stores, and every loop event, so that walks go iteration by
 * iteration. */
static void write_sampled_loops_spec(struct fixture *fx)
{
	write_spec(fx, "sl", "module: sl\ndoc: d\nsample: MNEMO_T_SAMPLE\nevents:\n"
		   "  load: [site, address, size]\n  store: [address]\n  loop_invoke: [site]\n"
		   "  loop_iter: [site]\n  loop_exit: []\n");
}

/*
 * A sampled build with summaries on: at the default periods the summary records go out as
 * without sampling (roundtrip's default run); at N > 1 summarized loops send exactly the records
 * of the same loops run per access, whether the countdown jumps from sample to sample
 * (structure-affinity: no loop event) or walks each iteration (sl: loop events sent), also with
 * the Lamport queue; a full stash loses only what it cannot hold.
 */
static void test_roundtrip_sampled_summaries(void **state)
{
	static const char *const flags[] = { "--sample-summaries=2", "--sample-summaries=7",
					      "--sample-summaries=100" };
	struct fixture *fx = *state;
	struct run r;

	copy_tree_spec(fx, "structure-affinity");
	write_sampled_loops_spec(fx);
	roundtrip(fx, &r, "sl", NULL);
	expect_contains("roundtrip", r.out, "sent: load store loop_invoke loop_iter loop_exit "
			"loop_summary_load loop_summary_store loop_summary loop_summary_open "
			"mixed_load mixed_store loop_summary_at loop_summary_close\n");
	expect_contains("roundtrip", r.out, "plan: 0xc0000455\n");
	roundtrip(fx, &r, "structure-affinity", NULL);
	expect_contains("roundtrip", r.out, "plan: 0xc0000055\n");
	for (unsigned i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		roundtrip(fx, &r, "structure-affinity", flags[i]);
		expect_contains("roundtrip", r.out, "loop events 0 0 0\n");
		roundtrip(fx, &r, "sl", flags[i]);
		expect_contains("roundtrip", r.out, "loop events 1 10 1\n");
	}
	roundtrip_opt(fx, &r, "structure-affinity", "--queue=lamport", "--sample-summaries=7");
	expect_contains("roundtrip", r.out, "sampled summaries, N = 7: ");
}

/*
 * The text of a sampled build's summary entry points: at N = 1 (summary_every_access()) the
 * record of the same build without sampling, line for line; at N > 1 a push on the stash, or the
 * walk, which calls the loop events' entry points only when they are sent.
 */
static void test_sampled_summary_callbacks(void **state)
{
	static const char *const fns[] = { "__mnemo_loop_summary_load(",
					   "__mnemo_loop_summary_store(", "__mnemo_loop_summary(" };
	static const char *const ifs[] = {
		"\tif (!summary_every_access()) {\n"
		"\t\tsummary_stash_push(site, start, step, size, 0);\n\t\treturn;\n\t}\n",
		"\tif (!summary_every_access()) {\n"
		"\t\tsummary_stash_push(site, start, step, size, 1);\n\t\treturn;\n\t}\n",
		"\tif (!summary_every_access() &&\n"
		"\t    summary_sample(site, accesses, iterations))\n\t\treturn;\n",
	};
	static char plain[65536], sampled[65536];
	struct fixture *fx = *state;
	char path[256];
	struct run r;

	write_spec(fx, "smp", "module: smp\ndoc: d\nsample: MNEMO_T_SAMPLE\nevents:\n"
		   "  load: [address]\n  store: [address]\n");
	write_spec(fx, "all", "module: all\ndoc: d\nevents:\n"
		   "  load: [address]\n  store: [address]\n");
	write_spec(fx, "loops", "module: loops\ndoc: d\nevents:\n  loop_iter: []\n");
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	specialize(fx, &r, fx->modules, "all");
	expect_ok(&r);
	read_file(path, plain, sizeof(plain));
	specialize(fx, &r, fx->modules, "smp");
	expect_ok(&r);
	read_file(path, sampled, sizeof(sampled));
	for (unsigned i = 0; i < 3; i++) {
		char *p = strstr(plain, fns[i]), *s = strstr(sampled, fns[i]), *end;

		if (!p || !s)
			fail_msg("expected %s defined in both builds", fns[i]);
		p = strstr(p, "\n\n") + 2;   /* after "uint64_t w[n];" */
		s = strstr(s, "\n\n") + 2;
		if (strncmp(s, ifs[i], strlen(ifs[i])))
			fail_msg("%s: expected it to start with\n%s\ngot\n%.300s", fns[i], ifs[i],
				 s);
		s += strlen(ifs[i]);
		end = strstr(p, "\n}\n");
		if (strncmp(p, s, (size_t)(end - p) + 3))
			fail_msg("%s at N = 1: expected the record\n%.*s\ngot\n%.300s", fns[i],
				 (int)(end - p), p, s);
	}
	expect_contains("smp", sampled, "so it jumps from sample to\n * sample: O(samples + 1)");
	if (strstr(sampled, "\t__mnemo_loop_iter(site);\n"))
		fail_msg("smp: expected no loop event in the walk, got:\n%s", sampled);

	specialize(fx, &r, fx->modules, "smp,loops");
	expect_ok(&r);
	read_file(path, sampled, sizeof(sampled));
	expect_contains("smp,loops", sampled, "\t__mnemo_loop_invoke(site);\n");
	expect_contains("smp,loops", sampled, "\t\t__mnemo_loop_iter(site);\n");
	expect_contains("smp,loops", sampled, "\t__mnemo_loop_exit(site);\n");
}

/*
 * A sampled build with mixed loops on: at N > 1 mixed loops (a histogram, a conditional access,
 * accesses at several ranks, rare ones, signal handlers' loops run in the middle of others) send
 * exactly the records of the same loops run per access, whether the countdown jumps from sample
 * to sample (structure-affinity) or walks each iteration (sl: loop events sent; sp: loop_exit
 * only, pointer accesses only), also with the Lamport queue; lost ones (entries not stored or too
 * few, no frame, left open) send their loop_summary record alone.
 */
static void test_roundtrip_sampled_mixed(void **state)
{
	static const char *const flags[] = { "--sample-mixed=2", "--sample-mixed=7",
					      "--sample-mixed=100" };
	struct fixture *fx = *state;
	struct run r;

	copy_tree_spec(fx, "structure-affinity");
	write_sampled_loops_spec(fx);
	for (unsigned i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		roundtrip(fx, &r, "structure-affinity", flags[i]);
		expect_contains("roundtrip", r.out, "lost mixed loops: 4 loop_summary records, ");
		expect_contains("roundtrip", r.out, "loop events 0 0 0\n");
		roundtrip(fx, &r, "sl", flags[i]);
		expect_contains("roundtrip", r.out, "loop events 35 44 34\n");
	}
	roundtrip_opt(fx, &r, "structure-affinity", "--queue=lamport", "--sample-mixed=7");
	expect_contains("roundtrip", r.out, "sampled mixed loops, N = 7: ");
	/* Pointer accesses only, and loop_exit alone of the loop events. */
	write_spec(fx, "sp", "module: sp\ndoc: d\nsample: MNEMO_T_SAMPLE\naccesses: pointer\n"
		   "events:\n  load: [address]\n  store: [address]\n  loop_exit: []\n");
	roundtrip(fx, &r, "sp", "--sample-mixed=7");
	expect_contains("roundtrip", r.out, "loop events 0 0 34\n");
}

/*
 * The text of a sampled build's mixed entry points: at N = 1 (summary_every_access()) the record
 * of the same build without sampling, line for line, after the same mixed_last bookkeeping; at
 * N > 1 the frame (open, close) or the walk and the access's own countdown.
 */
static void test_sampled_mixed_callbacks(void **state)
{
	static const struct {
		const char *fn, *n1, *more;
	} fns[] = {
		{ "__mnemo_loop_summary_open(", "\tmn_store_signal(&mixed_last, UINT64_MAX);\n",
		  "\tif (!summary_every_access()) {\n\t\tmixed_open(site, accesses);\n" },
		{ "__mnemo_mixed_load(", "\tw[0] = EV_MIXED_LOAD",
		  "(no loop events). */\n\t\tleft = sample_countdown - 1;\n" },
		{ "__mnemo_mixed_store(", "\tw[0] = EV_MIXED_STORE",
		  "\t\tsample_countdown = send_store(site, addr, 0, size);\n" },
		{ "__mnemo_loop_summary_close(",
		  "\tmn_store_signal(&mixed_last, UINT64_MAX - 1);\n",
		  "\tif (!summary_every_access()) {\n\t\tmixed_close(site, iterations);\n" },
	};
	static const char next[] = "\tuint64_t next = mixed_next(iteration);\n\tuint64_t w[2];\n\n";
	static char plain[65536], sampled[65536];
	struct fixture *fx = *state;
	char path[256];
	struct run r;

	write_spec(fx, "smp", "module: smp\ndoc: d\nsample: MNEMO_T_SAMPLE\nevents:\n"
		   "  load: [address]\n  store: [address]\n");
	write_spec(fx, "all", "module: all\ndoc: d\nevents:\n"
		   "  load: [address]\n  store: [address]\n");
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	specialize(fx, &r, fx->modules, "all");
	expect_ok(&r);
	read_file(path, plain, sizeof(plain));
	specialize(fx, &r, fx->modules, "smp");
	expect_ok(&r);
	read_file(path, sampled, sizeof(sampled));
	for (unsigned i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		char *p = strstr(plain, fns[i].fn), *s = strstr(sampled, fns[i].fn), *end;

		if (!p || !s)
			fail_msg("expected %s defined in both builds", fns[i].fn);
		end = strstr(s, "\n}\n");
		if (!strstr(s, fns[i].more) || strstr(s, fns[i].more) > end)
			fail_msg("%s: expected at N > 1\n%s\ngot\n%.*s", fns[i].fn, fns[i].more,
				 (int)(end - s), s);
		p = strstr(p, fns[i].n1);
		if (fns[i].n1[1] == 'w') {
			/* A mixed access's record is out of line, called at N = 1, so that the
			 * entry point inlines and its countdown stays in a register at N > 1. */
			char call[64], def[96];
			const char *ev = strstr(fns[i].fn, "mixed_");

			snprintf(call, sizeof(call), "\t%.*s_record(site, addr, size, iteration, "
				 "rank);\n}\n", (int)(strchr(ev, '(') - ev), ev);
			snprintf(def, sizeof(def), "static __attribute__((noinline)) void %.*s_record(",
				 (int)(strchr(ev, '(') - ev), ev);
			if (!strstr(s, call) || strstr(s, call) > end + 1)
				fail_msg("%s: expected at N = 1\n%s", fns[i].fn, call);
			if (!(s = strstr(sampled, def)))
				fail_msg("%s: expected its record in\n%s", fns[i].fn, def);
		}
		s = strstr(s, fns[i].n1);
		if (!p || !s || (fns[i].n1[1] != 'w' && s > end))
			fail_msg("%s: expected at N = 1\n%s", fns[i].fn, fns[i].n1);
		/* A mixed record's `next` bit, computed in the record's function, as without
		 * sampling. */
		if (fns[i].n1[1] == 'w' && strncmp(s - strlen(next), next, strlen(next)))
			fail_msg("%s: expected\n%s\nbefore its record, got\n%.300s",
				 fns[i].fn, next, s - strlen(next));
		end = strstr(p, "\n}\n");
		if (strncmp(p, s, (size_t)(end - p) + 3))
			fail_msg("%s at N = 1: expected\n%.*s\ngot\n%.300s", fns[i].fn,
				 (int)(end - p), p, s);
	}
	expect_contains("smp", sampled, " * No loop event is sent, so order matters only within a "
			"site: a mixed access\n");
	if (strstr(sampled, "__mnemo_loop_iter(f->site);\n") || strstr(sampled, "mixed_to("))
		fail_msg("smp: expected no loop event in the mixed walk and no walk at a mixed "
			 "access, got:\n%s", sampled);
}

static void test_roundtrip_pointer_only(void **state)
{
	struct fixture *fx = *state;
	struct run r;

	copy_tree_spec(fx, "rds-shape");
	roundtrip(fx, &r, "rds-shape", "--pointer-only");
	assert_string_equal(r.out, "sent: load store heap_alloc heap_realloc heap_free\n"
			    "heap_events: 1\nplan: 0x000000a0\nflags: 0x00\n"
			    "codes: load -, store -, load_ptr 0x01, store_ptr 0x02\n");
}

/*
 * The pointer flag (queue.h, spec.h) in the packing: set exactly when a module with `accesses:
 * pointer` and one with `accesses: all` list the same load or store event, whatever the order;
 * not for a pointer-only module beside all-access modules that list other events, or only the
 * other access event.
 */
static void test_pointer_flag_wire(void **state)
{
	static const struct {
		const char *a, *b;       /* module names; b NULL: a alone */
		uint8_t flags;
	} cases[] = {
		{ "rds-shape", NULL, 0 },
		{ "dependence", NULL, 0 },
		{ "rds-shape", "dependence", MN_WIRE_POINTER },
		{ "dependence", "rds-shape", MN_WIRE_POINTER },
		{ "rds-shape", "value-pattern", MN_WIRE_POINTER },
		{ "object-relative", "rds-shape", MN_WIRE_POINTER },
		{ "rds-shape", "calls", 0 },           /* the all module lists no access */
		{ "ptr-load", "all-store", 0 },        /* they share no access event */
		{ "ptr-load", "all-load", MN_WIRE_POINTER },
		{ "all-store", "ptr-load", 0 },
		{ "ptr-load", "ptr-store", 0 },        /* no module takes every access */
	};
	struct fixture *fx = *state;
	char pa[256], pb[256];
	struct mn_catalogue *c;
	struct mn_wire w;

	write_spec(fx, "calls", "module: calls\ndoc: d\nevents:\n  func_entry: []\n");
	write_spec(fx, "ptr-load", "module: ptr-load\ndoc: d\naccesses: pointer\nevents:\n"
		   "  load: [address]\n");
	write_spec(fx, "ptr-store", "module: ptr-store\ndoc: d\naccesses: pointer\nevents:\n"
		   "  store: [address]\n");
	write_spec(fx, "all-load", "module: all-load\ndoc: d\nevents:\n  load: [address]\n");
	write_spec(fx, "all-store", "module: all-store\ndoc: d\nevents:\n  store: [address]\n");
	copy_tree_spec(fx, "rds-shape");
	copy_tree_spec(fx, "dependence");
	copy_tree_spec(fx, "value-pattern");
	copy_tree_spec(fx, "object-relative");
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *paths[] = { pa, pb };

		snprintf(pa, sizeof(pa), "%s/%s/events.yaml", fx->modules, cases[i].a);
		snprintf(pb, sizeof(pb), "%s/%s/events.yaml", fx->modules,
			 cases[i].b ? cases[i].b : "");
		pack(&w, &c, cases[i].b ? 2 : 1, paths);
		if (w.flags != cases[i].flags)
			fail_msg("%s%s%s: expected wire flags 0x%02x, got 0x%02x", cases[i].a,
				 cases[i].b ? "," : "", cases[i].b ? cases[i].b : "",
				 cases[i].flags, w.flags);
		mn_spec_catalogue_free(c);
	}
}

static uint32_t plan_of(const char *text);

/* The body of entry point fn in callbacks.c text, to its closing brace, into buf. */
static void body_of(const char *text, const char *fn, char *buf, size_t size)
{
	char head[128];
	const char *at, *end;

	snprintf(head, sizeof(head), "MN_ENTRY void %s(", fn);
	at = strstr(text, head);
	if (!at)
		fail_msg("callbacks.c: expected a definition of %s", fn);
	end = strstr(at, "\n}\n");
	if (!end)
		fail_msg("callbacks.c: expected the end of %s", fn);
	snprintf(buf, size, "%.*s", (int)(end - at), at);
}

/*
 * The pointer flag in the callbacks: for rds-shape with dependence, the wire says it, the _ptr
 * entry points push 0x81 / 0x82 and the plain ones 1 / 2, the _ptr ones stay per access (plan
 * state 2) and the plain ones, whose value only rds-shape takes, send it as 0 and may be
 * summarized (state 1).  For rds-shape alone and dependence alone, flags 0 and plain codes
 * everywhere.  Round trips check the records each entry point pushes: flagged with tree modules in
 * either order, with --all-events (whose stand-in takes every access and every value), with a
 * sampling countdown (send_load_ptr(), send_store_ptr()), and with a module that takes every
 * access's value (the plain value stays); unflagged with each module alone.
 */
static void test_pointer_flag_callbacks(void **state)
{
	static const char flagged[] = "flags: 0x01\ncodes: load 0x01 (value 0), store 0x02 "
				      "(value 0), load_ptr 0x81, store_ptr 0x82\n";
	static const struct {
		const char *modules, *opt, *flag, *want;
	} trips[] = {
		{ "rds-shape,dependence", NULL, NULL, flagged },
		{ "dependence,rds-shape", NULL, NULL, flagged },
		{ "rds-shape", "--all-events", NULL, "flags: 0x01\ncodes: load 0x01, store 0x02, "
		  "load_ptr 0x81, store_ptr 0x82\n" },
		{ "smpp,smpa", NULL, NULL, "flags: 0x01\ncodes: load 0x01, store 0x02, "
		  "load_ptr 0x81, store_ptr 0x82\n" },
		{ "smpp,smpl", NULL, "--pointer-only=store", "flags: 0x01\ncodes: load 0x01, "
		  "store -, load_ptr 0x81, store_ptr 0x82\n" },
		{ "ptrv,vals", NULL, NULL, "flags: 0x01\ncodes: load 0x01, store -, "
		  "load_ptr 0x81, store_ptr -\n" },
		{ "rds-shape", NULL, "--pointer-only", "flags: 0x00\ncodes: load -, store -, "
		  "load_ptr 0x01, store_ptr 0x02\n" },
		{ "dependence", NULL, NULL, "flags: 0x00\ncodes: load 0x01, store 0x02, "
		  "load_ptr 0x01, store_ptr 0x02\n" },
	};
	static char text[65536];
	struct fixture *fx = *state;
	char path[256], body[4096];
	uint32_t plan;
	struct run r;

	copy_tree_spec(fx, "rds-shape");
	copy_tree_spec(fx, "dependence");
	write_spec(fx, "smpp", "module: smpp\ndoc: d\naccesses: pointer\nsample: MNEMO_T_SAMPLE\n"
		   "events:\n  load: [address]\n  store: [address]\n");
	write_spec(fx, "smpa", "module: smpa\ndoc: d\nsample: MNEMO_T_SAMPLE\nevents:\n"
		   "  load: [site, address]\n  store: [address]\n  loop_iter: []\n");
	write_spec(fx, "smpl", "module: smpl\ndoc: d\nsample: MNEMO_T_SAMPLE\nevents:\n"
		   "  load: [site, address]\n");
	write_spec(fx, "ptrv", "module: ptrv\ndoc: d\naccesses: pointer\nevents:\n"
		   "  load: [address, value]\n");
	write_spec(fx, "vals", "module: vals\ndoc: d\nevents:\n  load: [value]\n");
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);

	specialize(fx, &r, fx->modules, "rds-shape,dependence");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_contains("rds-shape,dependence", text, "\t.flags = MN_WIRE_POINTER,\n");
	body_of(text, "__mnemo_load_ptr", body, sizeof(body));
	expect_contains("__mnemo_load_ptr", body, "\tw[0] = EV_LOAD | MN_CODE_POINTER | ");
	body_of(text, "__mnemo_store_ptr", body, sizeof(body));
	expect_contains("__mnemo_store_ptr", body, "\tw[0] = EV_STORE | MN_CODE_POINTER | ");
	body_of(text, "__mnemo_load", body, sizeof(body));
	if (strstr(body, "MN_CODE_POINTER") || !strstr(body, "\tw[0] = EV_LOAD | "))
		fail_msg("__mnemo_load: expected the plain code, got:\n%s", body);
	plan = plan_of(text);
	if (MNEMO_PLAN_STATE(plan, MNEMO_PLAN_LOAD_PTR) != MNEMO_PLAN_PER_ACCESS ||
	    MNEMO_PLAN_STATE(plan, MNEMO_PLAN_STORE_PTR) != MNEMO_PLAN_PER_ACCESS ||
	    MNEMO_PLAN_STATE(plan, MNEMO_PLAN_LOAD) != MNEMO_PLAN_SUMMARIZABLE ||
	    MNEMO_PLAN_STATE(plan, MNEMO_PLAN_STORE) != MNEMO_PLAN_SUMMARIZABLE)
		fail_msg("rds-shape,dependence: expected plan states load 1, store 1, load_ptr 2, "
			 "store_ptr 2, got 0x%08x", plan);

	for (unsigned i = 0; i < 2; i++) {
		const char *alone = i ? "dependence" : "rds-shape";

		specialize(fx, &r, fx->modules, alone);
		expect_ok(&r);
		read_file(path, text, sizeof(text));
		expect_contains(alone, text, "\t.flags = 0,\n");
		if (strstr(text, "MN_CODE_POINTER"))
			fail_msg("%s: expected no MN_CODE_POINTER, got:\n%s", alone, text);
	}

	for (unsigned i = 0; i < sizeof(trips) / sizeof(trips[0]); i++) {
		roundtrip_opt(fx, &r, trips[i].modules, trips[i].opt, trips[i].flag);
		if (!strstr(r.out, trips[i].want))
			fail_msg("%s %s: expected \"%s\", got:\n%s", trips[i].modules,
				 trips[i].opt ? trips[i].opt : "", trips[i].want, r.out);
	}
}

/*
 * Mixed loops through the generated callbacks: roundtrip.c --mixed runs scripted and random mixed
 * loops (gaps 0, 1, 2 and more, nesting, a close then an enclosing loop's record, a fresh open)
 * and checks the records and what they decode to, with 16-byte records (dependence), records of
 * mixed lengths (null, everything), the Lamport queue, a sampled build at N = 1
 * (structure-affinity); with mixed loops off (--no-summarize, --all-events) the four entry points
 * push nothing.
 */
static void test_roundtrip_mixed(void **state)
{
	static const struct {
		const char *modules, *opt;
		bool on;
	} cases[] = {
		{ "dependence", NULL, true },
		{ "null", NULL, true },
		{ "everything", NULL, true },
		{ "dependence", "--queue=lamport", true },
		{ "structure-affinity", NULL, true },
		{ "null", "--no-summarize", false },
		{ "null", "--all-events", false },
	};
	struct fixture *fx = *state;
	struct run r;

	write_everything(fx);
	copy_tree_spec(fx, "dependence");
	copy_tree_spec(fx, "null");
	copy_tree_spec(fx, "structure-affinity");
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		roundtrip_opt(fx, &r, cases[i].modules, cases[i].opt, "--mixed");
		if (cases[i].on && !strstr(r.out, "mixed: 34 scripted records, "))
			fail_msg("%s %s: expected the mixed loops checked, got %s",
				 cases[i].modules, cases[i].opt ? cases[i].opt : "", r.out);
		if (!cases[i].on && strcmp(r.out, "mixed: off, 0 words pushed\n"))
			fail_msg("%s %s: expected mixed loops off, got %s", cases[i].modules,
				 cases[i].opt ? cases[i].opt : "", r.out);
		/* The plain round trip too: every record, the plan against the wire. */
		roundtrip_opt(fx, &r, cases[i].modules, cases[i].opt, NULL);
	}
}

/* ---- Ablation switches (docs/internals.md, "Ablation switches for the breakdown") ---------- */

/* Occurrences of needle in text. */
static unsigned count(const char *text, const char *needle)
{
	unsigned n = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Replaces every from in text (in place; to no longer than from) by to. */
static void replace_all(char *text, const char *from, const char *to)
{
	size_t lf = strlen(from), lt = strlen(to);
	char *p;

	assert_true(lt <= lf);
	while ((p = strstr(text, from))) {
		memcpy(p, to, lt);
		memmove(p + lt, p + lf, strlen(p + lf) + 1);
	}
}

/*
 * --queue=pingpong is today's output byte for byte; --queue=lamport differs only in the pushes
 * (every mn_queue_push() becomes mn_queue_push_lamport(), sampled send paths included) and in the
 * flag the runtime looks for; any other value is one usage error that names it.
 */
static void test_queue_option(void **state)
{
	static const char *const sets[] = { "dependence", "structure-affinity",
					    "null,value-pattern,rds-shape" };
	static const char flag[] =
		"\n/*\n"
		" * --queue=lamport: records go through the out-of-line Lamport queue, the\n"
		" * conventional baseline of the overhead breakdown; the runtime sees this\n"
		" * symbol (a weak reference) and creates the queue in that mode.\n"
		" */\n"
		"extern const unsigned char __mnemo_queue_lamport;\n"
		"__attribute__((visibility(\"default\"))) const unsigned char "
		"__mnemo_queue_lamport = 1;\n";
	static char plain[65536], other[65536];
	struct fixture *fx = *state;
	char path[256], heap[16];
	struct run r;

	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	for (unsigned i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		char *at;

		specialize(fx, &r, MNEMO_MODULES_DIR, sets[i]);
		expect_ok(&r);
		snprintf(heap, sizeof(heap), "%s", r.out);
		read_file(path, plain, sizeof(plain));
		assert_true(count(plain, "\tmn_queue_push(w, ") > 0);

		specialize_opt(fx, &r, MNEMO_MODULES_DIR, sets[i], "--queue=pingpong");
		expect_ok(&r);
		assert_string_equal(r.out, heap);
		read_file(path, other, sizeof(other));
		if (strcmp(plain, other))
			fail_msg("%s: --queue=pingpong changed callbacks.c:\n%s", sets[i], other);

		specialize_opt(fx, &r, MNEMO_MODULES_DIR, sets[i], "--queue=lamport");
		expect_ok(&r);
		assert_string_equal(r.out, heap);
		read_file(path, other, sizeof(other));
		if (count(other, "mn_queue_push(") || count(other, "\tmn_queue_push_lamport(w, ") !=
		    count(plain, "\tmn_queue_push(w, "))
			fail_msg("%s: --queue=lamport: expected every push through "
				 "mn_queue_push_lamport(), got:\n%s", sets[i], other);
		at = strstr(other, flag);
		if (!at || count(other, "__mnemo_queue_lamport") != 2)
			fail_msg("%s: --queue=lamport: expected the flag\n%s\nonce, got:\n%s",
				 sets[i], flag, other);
		memmove(at, at + strlen(flag), strlen(at + strlen(flag)) + 1);
		replace_all(other, "mn_queue_push_lamport(", "mn_queue_push(");
		if (strcmp(plain, other))
			fail_msg("%s: --queue=lamport changed more than the pushes and the flag:\n%s",
				 sets[i], other);
	}

	static const char *const bad[] = { "--queue=foo", "--queue=", "--queue=Lamport" };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[64];

		specialize_opt(fx, &r, MNEMO_MODULES_DIR, "dependence", bad[i]);
		snprintf(want, sizeof(want), "mnemo-specialize: --queue: unknown queue '%s' ",
			 bad[i] + strlen("--queue="));
		if (r.status != 2 || strncmp(r.err, want, strlen(want)) ||
		    count(r.err, "\n") != 1 || r.out[0])
			fail_msg("%s: expected exit 2 and one line \"%s...\", got %d: %s", bad[i],
				 want, r.status, r.err);
	}
}

/* Expects the definition of entry point fn in callbacks.c text to have a body, or an empty one. */
static void expect_some_body(const char *text, const char *fn, bool full)
{
	char head[128];
	const char *at;

	snprintf(head, sizeof(head), "MN_ENTRY void %s(", fn);
	at = strstr(text, head);
	if (!at)
		fail_msg("callbacks.c: expected a definition of %s", fn);
	at = strstr(at, ")\n{\n");
	assert_non_null(at);
	at += 4;
	if (full && !strncmp(at, "}\n", 2))
		fail_msg("callbacks.c: expected %s to have a body, got an empty one", fn);
	if (!full && strncmp(at, "}\n", 2))
		fail_msg("callbacks.c: expected %s to have an empty body, got:\n%.200s", fn, at);
}

/*
 * --all-events: every entry point of abi.h that callbacks.c defines has a body (the events of the
 * whole catalogue, loads and stores of every value, and __mnemo_heap_site, heap events being sent)
 * but the loop summary ones, which stay empty (no summaries without specialization), and
 * __mnemo_value (its records carry every value),
 * heap=1, the session's modules unchanged; no countdown, the sampled module's variable recorded
 * with the stand-in module all-events as what needs every access; every argument sent (null,
 * which takes no value, gets the values).
 */
/* Entry points of text with a `uint32_t site` first and a body: those --unit moves. */
static unsigned site_entries_with_body(const char *text)
{
	unsigned n = 0;

	for (const char *p = strstr(text, "MN_ENTRY "); p; p = strstr(p + 1, "MN_ENTRY ")) {
		const char *nl = strchr(p, '\n'), *site = strstr(p, "(uint32_t site");

		if (nl && site && site < nl && !strncmp(nl + 1, "{\n", 2) &&
		    strncmp(nl + 3, "}\n", 2))
			n++;
	}
	return n;
}

/*
 * --unit (mnemo-cc -shared, runtime/unit.h): the same callbacks, hidden, without their own value
 * sets, every entry point with a site and a body moving it by the unit's base first; they
 * compile, -fPIC.
 */
static void test_unit_option(void **state)
{
	static const char *const sets[] = { "value-pattern", "structure-affinity",
					    "null,value-pattern,rds-shape" };
	static char plain[65536], unit[65536];
	struct fixture *fx = *state;
	char path[256], obj[256];
	struct run r;

	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	snprintf(obj, sizeof(obj), "%s/callbacks.o", fx->out);
	for (unsigned i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		const char *args[] = { "-flto", "-fPIC", "-c", path, "-o", obj, NULL };
		unsigned want;

		specialize(fx, &r, MNEMO_MODULES_DIR, sets[i]);
		expect_ok(&r);
		read_file(path, plain, sizeof(plain));
		specialize_opt(fx, &r, MNEMO_MODULES_DIR, sets[i], "--unit");
		expect_ok(&r);
		read_file(path, unit, sizeof(unit));
		want = site_entries_with_body(plain);
		assert_true(want > 0);
		if (count(unit, "\tMN_UNIT_SITE(site);\n") + count(unit, "\tMN_UNIT_SITE_OR(site, 0);\n") !=
		    want)
			fail_msg("%s: --unit: expected %u entry points moved by the base, got:\n%s",
				 sets[i], want, unit);
		assert_int_equal(count(unit, "#pragma GCC visibility push(hidden)\n"), 1);
		assert_int_equal(count(unit, "\nstruct mn_value_set *__mnemo_value_sets;"), 0);
		assert_int_equal(count(unit, "MN_ENTRY "), count(plain, "MN_ENTRY "));
		clang(fx, &r, args);
		if (r.status)
			fail_msg("clang on --unit callbacks.c for %s: exit %d: %s", sets[i],
				 r.status, r.err);
	}
}

static void test_all_events(void **state)
{
	static char text[65536], abi[32768];
	struct fixture *fx = *state;
	unsigned entries = 0;
	char path[256];
	struct run r;

	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	read_file(MNEMO_RUNTIME_DIR "/abi.h", abi, sizeof(abi));
	assert_true(strlen(abi) > 0);

	/* The baseline: dependence alone leaves most entry points empty. */
	specialize(fx, &r, MNEMO_MODULES_DIR, "dependence");
	expect_ok(&r);
	assert_string_equal(r.out, "heap=0\n");
	read_file(path, text, sizeof(text));
	expect_some_body(text, "__mnemo_heap_alloc", false);
	expect_some_body(text, "__mnemo_pointer_create", false);

	specialize_opt(fx, &r, MNEMO_MODULES_DIR, "dependence", "--all-events");
	expect_ok(&r);
	assert_string_equal(r.out, "heap=1\n");
	read_file(path, text, sizeof(text));
	for (const char *p = strstr(abi, "\nvoid __mnemo_"); p; p = strstr(p + 1, "\nvoid __mnemo_")) {
		char fn[64], head[80];
		const char *name = p + strlen("\nvoid "), *end = strchr(name, '(');

		assert_non_null(end);
		snprintf(fn, sizeof(fn), "%.*s", (int)(end - name), name);
		snprintf(head, sizeof(head), "MN_ENTRY void %s(", fn);
		if (!strstr(text, head))
			continue;   /* not a callback: the pass defines it (__mnemo_register_globals) */
		if (!strncmp(fn, "__mnemo_loop_summary", 20) ||
		    !strncmp(fn, "__mnemo_mixed_", 14) || !strcmp(fn, "__mnemo_value")) {
			/* no summaries nor mixed loops with --all-events, and no `value`: the
			 * load and store records carry every value */
			expect_some_body(text, fn, false);
			continue;
		}
		expect_some_body(text, fn, true);
		entries++;
	}
	if (entries < 19)
		fail_msg("expected at least the 19 entry points of abi.h defined, got %u", entries);
	expect_contains("callbacks.c", text, "const char __mnemo_modules[] = \"dependence\";\n");
	expect_contains("callbacks.c", text, "const uint32_t __mnemo_heap_events = 1;\n");

	specialize_opt(fx, &r, MNEMO_MODULES_DIR, "structure-affinity", "--all-events");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	if (strstr(text, "sample_countdown"))
		fail_msg("--all-events: expected no countdown, got:\n%s", text);
	expect_contains("callbacks.c", text,
			"const char __mnemo_sample_var[] = \"MNEMO_AFFINITY_SAMPLE\";\n");
	expect_contains("callbacks.c", text,
			"const char __mnemo_sample_blocker[] = \"all-events\";\n");

	specialize(fx, &r, MNEMO_MODULES_DIR, "null");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	assert_int_equal(count(text, "= value;"), 0);
	specialize_opt(fx, &r, MNEMO_MODULES_DIR, "null", "--all-events");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	assert_int_equal(count(text, "\tw[2] = value;\n"), 4);  /* load, store and their _ptr */
}

/* What the ablation switches write decodes as the backend decodes it. */
static void test_roundtrip_ablation(void **state)
{
	struct fixture *fx = *state;
	struct run r;

	copy_tree_spec(fx, "dependence");
	copy_tree_spec(fx, "structure-affinity");
	roundtrip_opt(fx, &r, "dependence", "--all-events", NULL);
	assert_string_equal(r.out, "sent: load store pointer_create heap_alloc heap_realloc "
			    "heap_free stack_alloc stack_free global func_entry func_exit "
			    "loop_invoke loop_iter loop_exit program_start program_end\n"
			    "heap_events: 1\nplan: 0x000006aa\nflags: 0x00\n"
			    "codes: load 0x01, store 0x02, load_ptr 0x01, store_ptr 0x02\n");
	roundtrip_opt(fx, &r, "dependence", "--queue=lamport", NULL);
	assert_string_equal(r.out, "sent: load store func_entry func_exit loop_invoke loop_iter "
			    "loop_exit loop_summary_load loop_summary_store loop_summary "
			    "loop_summary_open mixed_load mixed_store loop_summary_at "
			    "loop_summary_close\nheap_events: 0\nplan: 0xc0000455\nflags: 0x00\n"
			    "codes: load 0x01, store 0x02, load_ptr 0x01, store_ptr 0x02\n"
			    "queue: lamport\n");
	roundtrip_opt(fx, &r, "dependence", "--no-summarize", NULL);
	assert_string_equal(r.out, "sent: load store func_entry func_exit loop_invoke loop_iter "
			    "loop_exit\nheap_events: 0\nplan: 0x00000455\nflags: 0x00\n"
			    "codes: load 0x01, store 0x02, load_ptr 0x01, store_ptr 0x02\n");
	roundtrip_opt(fx, &r, "structure-affinity", "--queue=lamport", NULL);
	expect_contains("roundtrip", r.out, "queue: lamport\n");
	roundtrip_opt(fx, &r, "structure-affinity", "--queue=lamport", "--sample");
	expect_contains("roundtrip", r.out, "sampled: ");
}

/* ---- Loop summaries (__mnemo_summary_plan) --------------------------------------------- */

/* The value of __mnemo_summary_plan in callbacks.c text; fails when it is not defined. */
static uint32_t plan_of(const char *text)
{
	static const char def[] = "\n__attribute__((used)) const uint32_t __mnemo_summary_plan = ";
	const char *at = strstr(text, def);
	char *end;
	unsigned long v;

	if (!at)
		fail_msg("callbacks.c: expected a definition of __mnemo_summary_plan, got:\n%s",
			 text);
	v = strtoul(at + strlen(def), &end, 0);
	if (strncmp(end, ";\n", 2))
		fail_msg("callbacks.c: expected \"%s<value>;\", got \"%.80s\"", def + 1, at + 1);
	return (uint32_t)v;
}

/*
 * Expects the entry points of mixed loops to push their records (on) or be empty (off), and the
 * wire to send their five events or none of them.
 */
static void expect_mixed(const char *what, const char *text, bool on)
{
	static const char *const fns[] = { "__mnemo_loop_summary_open", "__mnemo_mixed_load",
					   "__mnemo_mixed_store", "__mnemo_loop_summary_close" };
	static const char *const codes[] = { "\t\t[EV_LOOP_SUMMARY_OPEN] = ",
					     "\t\t[EV_MIXED_LOAD] = ", "\t\t[EV_MIXED_STORE] = ",
					     "\t\t[EV_LOOP_SUMMARY_AT] = ",
					     "\t\t[EV_LOOP_SUMMARY_CLOSE] = " };

	for (unsigned i = 0; i < 4; i++)
		expect_some_body(text, fns[i], on);
	for (unsigned i = 0; i < 5; i++)
		if (!strstr(text, codes[i]) == on)
			fail_msg("%s: expected the wire %s %s, got:\n%s", what,
				 on ? "to send" : "not to send", codes[i] + 3, text);
}

/*
 * Expects the summary entry points to push their records (on) or be empty and unsent (off), and
 * the wire to send the three summary events or none of them.
 */
static void expect_summaries(const char *what, const char *text, bool on)
{
	static const char *const fns[] = { "__mnemo_loop_summary_load",
					   "__mnemo_loop_summary_store", "__mnemo_loop_summary" };
	static const char *const codes[] = { "\t\t[EV_LOOP_SUMMARY_LOAD] = ",
					     "\t\t[EV_LOOP_SUMMARY_STORE] = ",
					     "\t\t[EV_LOOP_SUMMARY] = " };

	for (unsigned i = 0; i < 3; i++) {
		expect_some_body(text, fns[i], on);
		if (!strstr(text, codes[i]) == on)
			fail_msg("%s: expected the wire %s %s, got:\n%s", what,
				 on ? "to send" : "not to send", codes[i] + 3, text);
	}
}

/*
 * The plan's states follow from the bodies written: 0 empty, 1 a record without value (with a
 * countdown or not), 2 a value (or a pointer_create body); loop events 1 when sent.  Bit 31
 * when some state is 1, unless --no-summarize or --all-events; the summary entry points and the
 * wire follow bit 31.  Bit 30 (mixed loops) exactly with bit 31, with a countdown or not; the
 * entry points of mixed loops and the wire follow it.
 */
static void test_summary_plan(void **state)
{
	static const struct {
		const char *modules, *opt;
		uint32_t plan;
	} cases[] = {
		{ "vals", NULL, 0x00000022 },          /* loads with value: 2 */
		{ "addrs", NULL, 0xc0000011 },         /* loads without value: 1; mixed loops */
		{ "ptrs", NULL, 0xc0000050 },          /* accesses: pointer: plain ones 0 */
		{ "smp", NULL, 0xc0000055 },           /* a countdown: summaries and mixed loops */
		{ "smp", "--no-summarize", 0x00000055 },  /* sample the same */
		{ "smp,loops", NULL, 0xc0000455 },     /* sampled, loop events sent */
		{ "smpv", NULL, 0x00000022 },          /* sampled with the value: 2 */
		{ "smp,addrs", NULL, 0xc0000055 },     /* addrs needs every access: no countdown */
		{ "pcs", NULL, 0xc0000244 },           /* pointer_create with a body: 2 */
		{ "loops", NULL, 0xc0000400 },         /* loop events sent: 1 */
		{ "vals,loops", NULL, 0xc0000422 },
		{ "vals,addrs", NULL, 0x00000022 },    /* the value goes with every load */
		{ "sets", NULL, 0xc00000ff },          /* values as sets, every access checked: 3 */
		{ "sets,addrs", NULL, 0xc00000ff },
		{ "sets,vals", NULL, 0xc00000ee },     /* vals needs every load's value: 2 */
		{ "sets", "--no-summarize", 0x000000ff },
		{ "calls", NULL, 0x00000000 },         /* nothing to summarize */
		{ "addrs", "--no-summarize", 0x00000011 },
		{ "loops", "--no-summarize", 0x00000400 },
		{ "addrs", "--all-events", 0x000006aa },
		{ "addrs", "--queue=lamport", 0xc0000011 },
		/* The pointer flag: _ptr entry points with a body 2, even without value... */
		{ "ptrs,addrs", NULL, 0xc00000a1 },
		{ "addrs,ptrs", "--no-summarize", 0x000000a1 },
		/* ...and the plain ones' value, which only a pointer-only module lists, 0: 1 */
		{ "ptrv,addrs", NULL, 0xc0000021 },
		{ "ptrv,vals", NULL, 0x00000022 },     /* vals takes every load's value: 2 */
	};
	static const struct {
		const char *modules;
		uint32_t plan;
	} tree[] = {
		{ "dependence", 0xc0000455 },
		{ "null", 0xc0000455 },
		{ "value-pattern", 0xc00000ff },       /* takes `value`: every access checked */
		{ "rds-shape", 0x000000a0 },          /* pointer only, with values */
		{ "rds-shape,dependence", 0xc00004a5 },  /* the pointer flag: plain values 0 */
		{ "structure-affinity", 0xc0000055 },  /* sampled: summarized, mixed loops */
		{ "object-relative", 0xc0000055 },
		{ "shadow-cost", 0xc0000055 },
	};
	struct fixture *fx = *state;
	char path[256], text[65536];
	struct run r;

	write_spec(fx, "vals", "module: vals\ndoc: d\nevents:\n  load: [value]\n");
	write_spec(fx, "addrs", "module: addrs\ndoc: d\nevents:\n  load: [site, address]\n");
	write_spec(fx, "sets", "module: sets\ndoc: d\nevents:\n  load: [address]\n"
		   "  value: [site, value]\n");
	write_spec(fx, "ptrs", "module: ptrs\ndoc: d\naccesses: pointer\nevents:\n"
		   "  load: [address]\n  store: [address]\n");
	write_spec(fx, "ptrv", "module: ptrv\ndoc: d\naccesses: pointer\nevents:\n"
		   "  load: [address, value]\n");
	write_spec(fx, "smp", "module: smp\ndoc: d\nsample: MNEMO_T_SAMPLE\nevents:\n"
		   "  load: [address]\n  store: [address]\n");
	write_spec(fx, "smpv", "module: smpv\ndoc: d\nsample: MNEMO_T_SAMPLE\nevents:\n"
		   "  load: [address, value]\n");
	write_spec(fx, "pcs", "module: pcs\ndoc: d\nevents:\n  pointer_create: [address]\n"
		   "  store: [address]\n");
	write_spec(fx, "loops", "module: loops\ndoc: d\nevents:\n  loop_iter: []\n");
	write_spec(fx, "calls", "module: calls\ndoc: d\nevents:\n  func_entry: []\n");
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char what[96];
		uint32_t plan;

		snprintf(what, sizeof(what), "%s %s", cases[i].modules,
			 cases[i].opt ? cases[i].opt : "");
		specialize_opt(fx, &r, fx->modules, cases[i].modules, cases[i].opt);
		expect_ok(&r);
		read_file(path, text, sizeof(text));
		plan = plan_of(text);
		if (plan != cases[i].plan)
			fail_msg("%s: expected __mnemo_summary_plan 0x%08x, got 0x%08x", what,
				 cases[i].plan, plan);
		expect_summaries(what, text, plan >> 31);
		expect_mixed(what, text, plan >> 30 & 1);
	}
	for (unsigned i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
		uint32_t plan;

		specialize(fx, &r, MNEMO_MODULES_DIR, tree[i].modules);
		expect_ok(&r);
		read_file(path, text, sizeof(text));
		plan = plan_of(text);
		if (plan != tree[i].plan)
			fail_msg("%s: expected __mnemo_summary_plan 0x%08x, got 0x%08x",
				 tree[i].modules, tree[i].plan, plan);
		expect_summaries(tree[i].modules, text, plan >> 31);
		expect_mixed(tree[i].modules, text, plan >> 30 & 1);
	}

	/* Why off, in the comment above the plan. */
	specialize_opt(fx, &r, fx->modules, "addrs", "--no-summarize");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_contains("--no-summarize", text,
			"/* loop_summary: loop summaries are off (--no-summarize); not sent. */\n");
	expect_contains("--no-summarize", text, " * off (--no-summarize).\n");
	expect_contains("--no-summarize", text,
			"/* mixed_load: mixed loops are off (--no-summarize); not sent. */\n");
	specialize(fx, &r, fx->modules, "smp");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_contains("smp", text, " * on, mixed loops on.\n");
	expect_contains("smp", text, " * With sampling, only at N = 1; at N > 1 they send the "
			"loads and\n * stores the countdown picks among the loop's summarized "
			"and mixed\n");
	specialize(fx, &r, fx->modules, "addrs");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_contains("addrs", text, " * on, mixed loops on.\n");
	expect_contains("addrs", text, " * Mixed loops are on: ");
	specialize(fx, &r, fx->modules, "calls");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_contains("calls", text, " * off (no entry point has state 1 or 3).\n");
}

/*
 * The summary records: every argument, pushed through the queue the build uses; padded to 4 words
 * when the modules' records are all 16-byte ones (dependence), 3 words otherwise (object-relative,
 * whose heap records are 3 words).  Mixed loops: open and close set mixed_last (UINT64_MAX, then
 * UINT64_MAX - 1), a mixed record takes its `next` from mixed_next(), which sends loop_summary_at
 * first when the gap is more than 1; 2 words, w0 code | site | size, w1 address | position.
 */
static void test_summary_records(void **state)
{
	struct fixture *fx = *state;
	char path[256], text[65536];
	struct run r;

	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	specialize(fx, &r, MNEMO_MODULES_DIR, "dependence");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_contains("dependence", text,
			"MN_ENTRY void __mnemo_loop_summary_load(uint32_t site, const void *start, "
			"int64_t step, uint32_t size)\n{\n\tuint64_t w[4];\n\n"
			"\tw[0] = EV_LOOP_SUMMARY_LOAD | (uint64_t)site << 8 | "
			"saturate(size, 24) << 40;\n"
			"\tw[1] = low_bits((uintptr_t)start, 48);\n"
			"\tw[2] = (uint64_t)step;\n\tw[3] = 0;\n\tmn_queue_push(w, 4);\n}\n");
	expect_contains("dependence", text,
			"MN_ENTRY void __mnemo_loop_summary(uint32_t site, uint32_t accesses, "
			"uint64_t iterations)\n{\n\tuint64_t w[2];\n\n"
			"\tw[0] = EV_LOOP_SUMMARY | (uint64_t)site << 8 | "
			"saturate(accesses, 16) << 40;\n"
			"\tw[1] = saturate(iterations, 48);\n\tmn_queue_push(w, 2);\n}\n");
	expect_contains("dependence", text, "\t\t[EV_LOOP_SUMMARY_STORE] = 4,\n");
	expect_contains("dependence", text,
			"#define MN_TLS_IE __attribute__((tls_model(\"initial-exec\")))\n"
			"static __thread uint64_t mixed_last MN_TLS_IE;\n");
	expect_contains("dependence", text,
			"static __attribute__((noinline)) void mixed_at(uint64_t iteration)\n"
			"{\n\tuint64_t w[2];\n\n"
			"\tw[0] = EV_LOOP_SUMMARY_AT | saturate(iteration, 48) << 8;\n"
			"\tw[1] = 0;\n\tmn_queue_push(w, 2);\n}\n");
	expect_contains("dependence", text,
			"static inline __attribute__((always_inline)) uint64_t\n"
			"mixed_next(uint64_t iteration)\n{\n"
			"\tuint64_t d = iteration - mn_load_signal(&mixed_last);\n\n"
			"\tif (d > 1) {\n\t\tmixed_at(iteration);\n\t\td = 0;\n\t}\n"
			"\tmn_store_signal(&mixed_last, iteration);\n\treturn d;\n}\n");
	expect_contains("dependence", text,
			"MN_ENTRY void __mnemo_loop_summary_open(uint32_t site, "
			"uint32_t accesses)\n{\n\tuint64_t w[2];\n\n"
			"\t/* Iteration -1: iteration 0 is the next one. */\n"
			"\tmn_store_signal(&mixed_last, UINT64_MAX);\n"
			"\tw[0] = EV_LOOP_SUMMARY_OPEN | (uint64_t)site << 8 | "
			"saturate(accesses, 16) << 40;\n"
			"\tw[1] = 0;\n\tmn_queue_push(w, 2);\n}\n");
	expect_contains("dependence", text,
			"MN_ENTRY void __mnemo_mixed_store(uint32_t site, const void *addr, "
			"uint32_t size, uint64_t iteration, uint32_t rank)\n{\n"
			"\tuint64_t next = mixed_next(iteration);\n\tuint64_t w[2];\n\n"
			"\tw[0] = EV_MIXED_STORE | (uint64_t)site << 8 | "
			"saturate(size, 24) << 40;\n"
			"\tw[1] = low_bits((uintptr_t)addr, 48) | "
			"low_bits((uint64_t)rank << 1 | next, 16) << 48;\n"
			"\tmn_queue_push(w, 2);\n}\n");
	expect_contains("dependence", text,
			"MN_ENTRY void __mnemo_loop_summary_close(uint32_t site, "
			"uint64_t iterations)\n{\n\tuint64_t w[2];\n\n"
			"\t/* No iteration: an enclosing loop's next mixed record resyncs. */\n"
			"\tmn_store_signal(&mixed_last, UINT64_MAX - 1);\n"
			"\tw[0] = EV_LOOP_SUMMARY_CLOSE | (uint64_t)site << 8;\n"
			"\tw[1] = saturate(iterations, 48);\n\tmn_queue_push(w, 2);\n}\n");

	specialize_opt(fx, &r, MNEMO_MODULES_DIR, "dependence", "--queue=lamport");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	assert_int_equal(count(text, "\tmn_queue_push_lamport(w, 4);\n"), 2);
	assert_int_equal(count(text, "mn_queue_push("), 0);

	specialize(fx, &r, MNEMO_MODULES_DIR, "object-relative");
	expect_ok(&r);
	read_file(path, text, sizeof(text));
	expect_contains("object-relative", text, "\t\t[EV_LOOP_SUMMARY_LOAD] = 3,\n");
	expect_contains("object-relative", text, "\t\t[EV_LOOP_SUMMARY] = 2,\n");
	/* Not all records 16-byte ones: open and loop_summary_at stay 1 word, mixed ones 2. */
	expect_contains("object-relative", text, "\t\t[EV_LOOP_SUMMARY_OPEN] = 1,\n");
	expect_contains("object-relative", text, "\t\t[EV_MIXED_LOAD] = 2,\n");
	expect_contains("object-relative", text, "\t\t[EV_LOOP_SUMMARY_AT] = 1,\n");
	expect_contains("object-relative", text,
			"\tw[1] = low_bits((uintptr_t)addr, 48) | "
			"low_bits((uint64_t)rank << 1 | next, 16) << 48;\n");
}

/*
 * A catalogue without the events of mixed loops (as before them): summaries on, mixed loops off
 * and said so, their four entry points empty, the callbacks compile.
 */
static void test_mixed_needs_catalogue(void **state)
{
	static char text[65536];
	struct fixture *fx = *state;
	char cat[256], path[256], *cut;
	const char *argv[] = { MNEMO_SPECIALIZE, "--catalogue", cat, "--modules-dir",
			       MNEMO_MODULES_DIR, "--modules", "null", "-o", fx->out, NULL };
	const char *args[] = { "-flto", "-c", path, "-o", "/dev/null", NULL };
	struct run r;

	read_file(catalogue_path(), text, sizeof(text));
	cut = strstr(text, "\n  loop_summary_open:\n");
	assert_non_null(cut);
	cut[1] = 0;
	snprintf(cat, sizeof(cat), "%s/old.yaml", fx->dir);
	write_file(cat, text);
	run(fx, &r, argv);
	expect_ok(&r);
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	read_file(path, text, sizeof(text));
	assert_int_equal(plan_of(text), 0x80000455);
	expect_summaries("old catalogue", text, true);
	expect_mixed("old catalogue", text, false);
	expect_contains("old catalogue", text,
			" * on, mixed loops off (the catalogue lacks their events).\n");
	clang(fx, &r, args);
	if (r.status)
		fail_msg("clang on callbacks.c: exit %d: %s", r.status, r.err);
}

/* The next blank line of text before a line at the top level (not inside a function), or NULL. */
static char *top_blank(char *text)
{
	char *p = strstr(text, "\n\n");

	while (p && p[2] == '\t')
		p = strstr(p + 2, "\n\n");
	return p;
}

/*
 * Splits text at blank lines before top-level lines into chunks (in place: chunk[i] points into
 * text) and returns how many; drops the first, the file's comment, which lists the events sent.
 */
static unsigned chunks(char *text, char **chunk, unsigned max)
{
	unsigned n = 0;
	char *p = top_blank(text);

	while (p && n < max) {
		char *next;

		*p = 0;
		p += 2;
		next = top_blank(p);
		chunk[n++] = p;
		p = next;
	}
	return n;
}

/*
 * Whether a chunk may differ with summaries on: it is about them or mixed loops, or it is one of
 * the helpers low_bits() and saturate(), which they may need.
 */
static bool summary_chunk(const char *chunk)
{
	return strstr(chunk, "summar") || strstr(chunk, "mixed") ||
	       strstr(chunk, "/* The low `bits` bits of v. */") ||
	       strstr(chunk, "/* v, or the largest value");
}

/* Deletes from text the lines of the loop summary and mixed loops' events in __mnemo_wire. */
static void drop_summary_wire(char *text)
{
	char *line = text;

	while (*line) {
		char *end = strchr(line, '\n'), *stop;

		if (!end)
			break;
		if ((!strstr(line, "[EV_LOOP_SUMMARY") || strstr(line, "[EV_LOOP_SUMMARY") > end) &&
		    (!strstr(line, "[EV_MIXED_") || strstr(line, "[EV_MIXED_") > end)) {
			line = end + 1;
			continue;
		}
		stop = end + 1;
		if (end[-1] == '{')     /* the argument block, to its "\t\t}," */
			stop = strstr(stop, "\t\t},\n") + 5;
		memmove(line, stop, strlen(stop) + 1);
	}
}

/*
 * With summaries on, every chunk of callbacks.c that is not about them (the entry points of abi.h
 * that existed before, their layouts, the packing of their events, the flags) is what
 * --no-summarize writes, byte for byte; only the helpers low_bits() and saturate() may be new.
 */
static void test_summaries_keep_callbacks(void **state)
{
	static const char *const sets[] = { "dependence", "null", "object-relative", "shadow-cost",
					    "null,value-pattern,rds-shape",
					    "dependence,structure-affinity", "structure-affinity" };
	static const char *const queues[] = { NULL, "--queue=lamport" };
	static char on[65536], off[65536];
	struct fixture *fx = *state;
	char path[256];
	struct run r;

	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	for (unsigned i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		for (unsigned q = 0; q < 2; q++) {
			char *a[256], *b[256];
			unsigned na, nb, j = 0, k = 0;

			specialize_opts(fx, &r, MNEMO_MODULES_DIR, sets[i], queues[q] ? queues[q] :
					"--no-summarize", queues[q] ? "--no-summarize" : NULL);
			expect_ok(&r);
			read_file(path, off, sizeof(off));
			specialize_opt(fx, &r, MNEMO_MODULES_DIR, sets[i], queues[q]);
			expect_ok(&r);
			read_file(path, on, sizeof(on));
			if (!(plan_of(on) >> 31))
				fail_msg("%s: expected summaries on", sets[i]);
			drop_summary_wire(on);
			na = chunks(on, a, 256);
			nb = chunks(off, b, 256);
			for (;;) {
				while (j < na && summary_chunk(a[j]))
					j++;
				while (k < nb && summary_chunk(b[k]))
					k++;
				if (j == na || k == nb)
					break;
				if (strcmp(a[j], b[k]))
					fail_msg("%s %s: summaries changed\n%s\ninto\n%s", sets[i],
						 queues[q] ? queues[q] : "", b[k], a[j]);
				j++;
				k++;
			}
			if (j != na || k != nb)
				fail_msg("%s: expected the same chunks, got %u and %u left",
					 sets[i], na - j, nb - k);
		}
	}
}

/* Disassembles symbol fn of exe into r->out. */
static void disassemble(struct fixture *fx, struct run *r, const char *exe, const char *fn)
{
	char sym[64];
	const char *argv[] = { MNEMO_LLVM_BINDIR "/llvm-objdump", "-d", "--no-show-raw-insn", sym,
			       exe, NULL };

	snprintf(sym, sizeof(sym), "--disassemble-symbols=%s", fn);
	run(fx, r, argv);
	expect_ok(r);
	expect_contains("disassembly", r->out, fn);
}

/* PROMPT 4.2's claim: with full LTO, an event no module uses costs nothing at its call site. */
static void test_lto_removes_unused_events(void **state)
{
	struct fixture *fx = *state;
	char src[256], exe[256];
	const char *args[] = { "-flto", "-fuse-ld=lld", MNEMO_TEST_SRC_DIR "/lto_prog.c", src,
			       "-o", exe, NULL };
	const char *argv[] = { exe, NULL };
	struct run r;

	write_spec(fx, "loads", "module: loads\ndoc: d\nevents:\n  load: [address]\n");
	snprintf(src, sizeof(src), "%s/callbacks.c", fx->out);
	snprintf(exe, sizeof(exe), "%s/lto_prog", fx->out);
	specialize(fx, &r, fx->modules, "loads");
	expect_ok(&r);
	clang(fx, &r, args);
	if (r.status)
		fail_msg("clang: exit %d: %s", r.status, r.err);
	run(fx, &r, argv);
	assert_int_equal(r.status, 2);   /* one load record: code | site, address */

	disassemble(fx, &r, exe, "only_stores");
	if (strstr(r.out, "movnti") || strstr(r.out, "call"))
		fail_msg("expected no event code in only_stores, got:\n%s", r.out);
	disassemble(fx, &r, exe, "only_loads");
	if (!strstr(r.out, "movnti"))
		fail_msg("expected the load record pushed inline in only_loads, got:\n%s", r.out);
}

/* Re-running with the same inputs leaves callbacks.c untouched, so builds stay incremental. */
static void test_unchanged_output_kept(void **state)
{
	struct fixture *fx = *state;
	struct stat before, after;
	char path[256];
	struct run r;

	copy_tree_spec(fx, "value-pattern");
	snprintf(path, sizeof(path), "%s/callbacks.c", fx->out);
	specialize(fx, &r, fx->modules, "value-pattern");
	expect_ok(&r);
	assert_int_equal(stat(path, &before), 0);
	usleep(20 * 1000);
	specialize(fx, &r, fx->modules, "value-pattern");
	expect_ok(&r);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalogue_valid),
		cmocka_unit_test(test_value_pattern_wire),
		cmocka_unit_test_setup_teardown(test_value_pattern_cli, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_and_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_load_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_site_always_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fixed_16_byte_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_union_of_modules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heap_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unpackable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pack_mixed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_accesses_parsed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pointer_only_callbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sample_parsed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sample_callbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_sample, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_yaml_syntax, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_unknown_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_unknown_argument, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_duplicates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_module_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_shard, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_accesses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_summary_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_module_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_catalogue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_generated_compiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_everything, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_value_pattern, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_pointer_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pointer_flag_wire, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pointer_flag_callbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_mixed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_sampled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_sampled_summaries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sampled_summary_callbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_sampled_mixed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sampled_mixed_callbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unit_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_ablation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_needs_catalogue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summaries_keep_callbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lto_removes_unused_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unchanged_output_kept, setup, teardown),
	};

	return cmocka_run_group_tests_name("specializer", tests, NULL, NULL);
}
