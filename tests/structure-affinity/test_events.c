/*
 * The structure-affinity module driven directly with event sequences (synthetic addresses, no
 * program): attribution to instances of heap, stack and global data objects, to the loop the site
 * table gives each instruction (a made-up table; the callee of a loop has loops of its own), field
 * names from the table, differences only within one instance, realloc, frees of unknown
 * addresses, loop 0, the top-N cut and option errors.  The section is emitted, wrapped in a
 * minimal profile and read back with libmnemo-profile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend.h"
#include "module.h"
#include "profile.h"

extern const struct mn_module mn_module_structure_affinity;
#define SA (&mn_module_structure_affinity)

#define HEAP UINT64_C(0x200000000)
#define STACK UINT64_C(0x7ff000000000)
#define GLOBAL UINT64_C(0x400000)

/* Site ids of the made-up program. */
enum { S_ALLOC = 1, S_STACK, S_GLOBAL, S_FUNC, S_CALLEE, S_LOOP1, S_LOOP2, S_LD1, S_LD2, S_LD3,
       S_LD4, S_ALLOC2, S_LOOP3, S_LD5 };

/*
 * Its site table: main (S_FUNC) has loops 1 and 2, loads 1 and 2 in loop 1, and calls callee from
 * loop 2; callee has loop 3 holding loads 3 and 4, and load 5 outside it.  The heap site declares
 * Figure 1's structure.
 */
static const char sites_v2[] =
	"mnemo-sites/2\n"
	"alloc\tmain\tf.c\t3\t9\tmalloc\t0\t0\ttype/16:a@0,b@4,c@8,d@12\n"  /* S_ALLOC */
	"stack\tmain\tf.c\t4\t0\tbuf\t64\t0\t\n"
	"global\t\tf.c\t1\t0\tg\t4\t0\t\n"
	"function\tmain\tf.c\t2\t0\t\t0\t0\t\n"                             /* S_FUNC */
	"function\tcallee\tf.c\t20\t0\t\t0\t0\t\n"
	"loop\tmain\tf.c\t5\t2\t\t0\t0\t\n"                                  /* S_LOOP1 */
	"loop\tmain\tf.c\t9\t2\t\t0\t0\t\n"
	"load\tmain\tf.c\t6\t3\t\t0\t6\t\n"                                  /* S_LD1 */
	"load\tmain\tf.c\t7\t3\t\t0\t6\t\n"
	"load\tcallee\tf.c\t23\t3\t\t0\t13\t\n"                              /* S_LD3 */
	"load\tcallee\tf.c\t24\t3\t\t0\t13\t\n"
	"alloc\tmain\tf.c\t12\t9\tmalloc\t0\t0\t\n"                          /* S_ALLOC2 */
	"loop\tcallee\tf.c\t22\t2\t\t0\t0\t\n"                               /* S_LOOP3 */
	"load\tcallee\tf.c\t21\t3\t\t0\t0\t\n";                              /* S_LD5 */

static void *sa_new(void)
{
	void *st = calloc(1, SA->state_size);

	assert_non_null(st);
	assert_int_equal(SA->init(st, NULL), 0);
	return st;
}

/* The module with the made-up site table. */
static void *sa_new_run(struct mn_run **run)
{
	void *st = calloc(1, SA->state_size);
	char why[256] = "";

	assert_non_null(st);
	if (mn_run_create(run, sites_v2, sizeof(sites_v2) - 1, why, sizeof(why)))
		fail_msg("the made-up site table does not parse: %s", why);
	assert_int_equal(mn_run_site_count(*run), S_LD5);
	assert_int_equal(SA->init(st, *run), 0);
	return st;
}

static void ld(void *st, uint32_t site, uint64_t addr)
{
	SA->load(st, site, addr, 0, 4);
}

/* Emits the section, wraps it in a profile, reads it back; finalizes the state. */
static struct mn_profile *finish(void *st)
{
	char path[] = "/tmp/mnemo-affinity-events.XXXXXX", *text = NULL, why[512];
	struct mn_profile *prof;
	struct mn_prof *p;
	size_t len = 0;
	FILE *f;
	int fd;

	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(mn_prof_open(&p, f), 0);
	assert_int_equal(SA->emit(st, p), 0);
	assert_int_equal(mn_prof_close(p), 0);
	fclose(f);
	SA->fini(st);
	free(st);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "format: mnemo-profile/1\nprogram: {argv: [t], exit_status: 0, signal: null}\n"
		   "complete: true\nsites: {}\nmodules:\n  structure-affinity:\n");
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if (strcmp(line, "---") && strcmp(line, "..."))
			fprintf(f, "    %s\n", line);
	fclose(f);
	free(text);
	if (mn_profile_open(&prof, path, why, sizeof(why)))
		fail_msg("the section does not read back: %s", why);
	unlink(path);
	return prof;
}

static const struct mn_pnode *get(const struct mn_pnode *n, const char *key)
{
	const struct mn_pnode *v = mn_pnode_get(n, key);

	if (!v)
		fail_msg("line %u: expected '%s'", mn_pnode_line(n), key);
	return v;
}

static uint64_t u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_u64(get(n, key), &v))
		fail_msg("line %u: expected an integer '%s'", mn_pnode_line(n), key);
	return v;
}

static const struct mn_pnode *object(const struct mn_profile *p, uint32_t site)
{
	char key[32];

	snprintf(key, sizeof(key), "site_%u", site);
	return get(get(mn_profile_module(p, "structure-affinity"), "structures"), key);
}

static const char *advice(const struct mn_pnode *o)
{
	return mn_pnode_str(get(o, "advice"), NULL);
}

/* The loop of the one stream of instruction site in o. */
static uint64_t stream_loop(const struct mn_pnode *o, uint32_t site)
{
	const struct mn_pnode *s = get(o, "streams");

	for (size_t i = 0; i < mn_pnode_len(s); i++)
		if (u64(mn_pnode_at(s, i), "site") == site)
			return u64(mn_pnode_at(s, i), "loop");
	fail_msg("no stream of site %u", site);
	return 0;
}

/*
 * Figure 1 over a heap array of 16-byte elements, with the b/d loads in a function called from
 * a loop.  Loops are static, as in the paper: the callee's loads go to the callee's own loop 3,
 * not to the caller's loop 2, and its load outside loop 3 to loop 0, whatever calls it.  No loop
 * or function event reaches the module (it has no handler for them).  Fields take the names the
 * site table declares.
 */
static void test_static_loops(void **state)
{
	struct mn_run *run;
	void *st = sa_new_run(&run);
	struct mn_profile *p;
	const struct mn_pnode *o, *f;
	static const char *const names[] = { "a", "b", "c", "d" };

	SA->heap_alloc(st, S_ALLOC, HEAP, 16 * 100);
	for (int i = 0; i < 100; i++) {          /* main's loop 1 */
		ld(st, S_LD1, HEAP + 16 * i);
		ld(st, S_LD2, HEAP + 16 * i + 8);
	}
	for (int i = 0; i < 100; i++) {          /* main's loop 2 calls callee */
		if (i == 0)
			ld(st, S_LD5, HEAP + 4);  /* callee, outside its loop */
		ld(st, S_LD3, HEAP + 16 * i + 4); /* callee's loop 3 (one iteration) */
		ld(st, S_LD4, HEAP + 16 * i + 12);
	}
	p = finish(st);
	mn_run_destroy(run);
	o = object(p, S_ALLOC);
	assert_int_equal(u64(get(o, "size"), "inferred"), 16);
	assert_int_equal(stream_loop(o, S_LD1), S_LOOP1);
	assert_int_equal(stream_loop(o, S_LD3), S_LOOP3);
	assert_int_equal(stream_loop(o, S_LD4), S_LOOP3);
	assert_int_equal(stream_loop(o, S_LD5), 0);
	assert_int_equal(mn_pnode_len(get(o, "streams")), 5);
	assert_string_equal(mn_pnode_str(get(o, "type"), NULL), "type");
	f = get(o, "fields");
	assert_int_equal(mn_pnode_len(f), 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(mn_pnode_str(get(mn_pnode_at(f, i), "name"), NULL), names[i]);
	/* The lone loop-0 access of b joins no loop: A(b, d) = 200 / 201. */
	assert_string_equal(advice(o), "split into {a, c} and {b, d}");
	mn_profile_close(p);
}

/* Without a site table every access is in loop 0, and fields are offsets. */
static void test_no_table(void **state)
{
	void *st = sa_new();
	struct mn_profile *p;
	const struct mn_pnode *o;

	SA->heap_alloc(st, S_ALLOC, HEAP, 16 * 100);
	for (int i = 0; i < 100; i++) {
		ld(st, S_LD1, HEAP + 16 * i);
		ld(st, S_LD3, HEAP + 16 * i + 4);
	}
	p = finish(st);
	o = object(p, S_ALLOC);
	assert_int_equal(stream_loop(o, S_LD1), 0);
	assert_int_equal(stream_loop(o, S_LD3), 0);
	assert_null(mn_pnode_get(o, "type"));
	assert_null(mn_pnode_get(mn_pnode_at(get(o, "fields"), 0), "name"));
	assert_string_equal(advice(o), "do not split: all fields are used together");
	mn_profile_close(p);
}

/*
 * One heap site, many instances: a load walking a field through each of them, one access per
 * instance, has no stride (instances may lie anywhere) and the size is unknown; a second
 * instruction reading two elements of one instance gives it back.  Frees of unknown addresses
 * are counted; realloc moves an instance, keeping its accesses attributed.
 */
static void test_instances(void **state)
{
	void *st = sa_new();
	struct mn_profile *p;
	const struct mn_pnode *o, *sec;

	for (int i = 0; i < 10; i++)
		SA->heap_alloc(st, S_ALLOC, HEAP + 64 * (uint64_t)i, 24);
	for (int i = 0; i < 10; i++)
		ld(st, S_LD1, HEAP + 64 * (uint64_t)i + 8);
	SA->heap_free(st, 0, HEAP + 1);           /* not an instance's start */
	SA->heap_free(st, 0, HEAP + 64 * 9);
	ld(st, S_LD1, HEAP + 64 * 9 + 8);         /* freed: unattributed */
	SA->heap_realloc(st, S_ALLOC, HEAP, HEAP + 0x10000, 48);
	ld(st, S_LD2, HEAP + 0x10000 + 16);       /* moved instance, offset 16 */
	SA->heap_alloc(st, S_ALLOC2, HEAP + 0x20000, 40);
	ld(st, S_LD3, HEAP + 0x20000);
	ld(st, S_LD3, HEAP + 0x20000 + 20);
	p = finish(st);
	sec = mn_profile_module(p, "structure-affinity");
	assert_int_equal(u64(get(sec, "lost"), "unknown_frees"), 1);
	assert_int_equal(u64(get(sec, "totals"), "unattributed_accesses"), 1);
	assert_int_equal(u64(get(sec, "totals"), "data_objects"), 2);
	o = object(p, S_ALLOC);
	assert_int_equal(u64(o, "instances"), 10);
	assert_int_equal(u64(o, "bytes"), 48);
	assert_true(mn_pnode_is_null(get(get(o, "size"), "inferred")));
	assert_int_equal(mn_pnode_len(get(o, "fields")), 2);   /* offsets 8 and 16 */
	assert_string_equal(advice(o), "do not split: all fields are used together");
	o = object(p, S_ALLOC2);
	assert_int_equal(u64(get(o, "size"), "inferred"), 20);
	mn_profile_close(p);
}

/*
 * Stack and global data objects; a stack object freed and made again at the same address is a
 * new instance, so no difference spans the two.  The top-N cut (MNEMO_AFFINITY_TOP=1) keeps the
 * costlier.
 */
static void test_stack_global_top(void **state)
{
	void *st;
	struct mn_profile *p;
	const struct mn_pnode *sec, *hot;

	setenv("MNEMO_AFFINITY_TOP", "1", 1);
	st = sa_new();
	unsetenv("MNEMO_AFFINITY_TOP");
	SA->global(st, S_GLOBAL, GLOBAL, 4);
	ld(st, S_LD4, GLOBAL);
	for (int k = 0; k < 2; k++) {
		SA->stack_alloc(st, S_STACK, STACK, 64);
		ld(st, S_LD1, STACK + 8 * (uint64_t)k);
		SA->stack_free(st, S_STACK, STACK);
	}
	p = finish(st);
	sec = mn_profile_module(p, "structure-affinity");
	hot = get(sec, "hot");
	assert_int_equal(mn_pnode_len(hot), 1);
	assert_int_equal(u64(mn_pnode_at(hot, 0), "site"), S_STACK);
	assert_int_equal(mn_pnode_len(get(sec, "structures")), 1);
	assert_true(mn_pnode_is_null(get(get(object(p, S_STACK), "size"), "inferred")));
	assert_int_equal(u64(get(sec, "lost"), "unknown_frees"), 0);
	mn_profile_close(p);
}

/* Options that do not parse fail init with -EINVAL; the state is left finalized. */
static void test_bad_options(void **state)
{
	static const char *const bad[][2] = {
		{ "MNEMO_AFFINITY_COST", "latency" }, { "MNEMO_AFFINITY_THRESHOLD", "1.5" },
		{ "MNEMO_AFFINITY_THRESHOLD", "x" },  { "MNEMO_AFFINITY_TOP", "-1" },
		{ "MNEMO_AFFINITY_L1_WAYS", "0" },    { "MNEMO_AFFINITY_LINE", "48" },
	};
	void *st = calloc(1, SA->state_size);

	assert_non_null(st);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(bad[i][0], bad[i][1], 1);
		setenv("MNEMO_AFFINITY_COST", strcmp(bad[i][0], "MNEMO_AFFINITY_COST") ? "cache" :
			bad[i][1], 1);
		if (SA->init(st, NULL) != -EINVAL)
			fail_msg("%s=%s: expected init to fail with -EINVAL", bad[i][0], bad[i][1]);
		unsetenv(bad[i][0]);
		unsetenv("MNEMO_AFFINITY_COST");
	}
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_loops),
		cmocka_unit_test(test_no_table),
		cmocka_unit_test(test_instances),
		cmocka_unit_test(test_stack_global_top),
		cmocka_unit_test(test_bad_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
