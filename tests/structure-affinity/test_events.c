/*
 * The structure-affinity module driven directly with event sequences (synthetic addresses, no
 * program, no site table): attribution to instances of heap, stack and global data objects, the
 * innermost loop on the stack (through a call), differences only within one instance, realloc,
 * frees of unknown addresses, loop 0, the top-N cut and option errors.  The section is emitted,
 * wrapped in a minimal profile and read back with libmnemo-profile.
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

#include "module.h"
#include "profile.h"

extern const struct mn_module mn_module_structure_affinity;
#define SA (&mn_module_structure_affinity)

#define HEAP UINT64_C(0x200000000)
#define STACK UINT64_C(0x7ff000000000)
#define GLOBAL UINT64_C(0x400000)

/* Site ids of the made-up program. */
enum { S_ALLOC = 1, S_STACK, S_GLOBAL, S_FUNC, S_CALLEE, S_LOOP1, S_LOOP2, S_LD1, S_LD2, S_LD3,
       S_LD4, S_ALLOC2 };

static void *sa_new(void)
{
	void *st = calloc(1, SA->state_size);

	assert_non_null(st);
	assert_int_equal(SA->init(st, NULL), 0);
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
 * Figure 1 over a heap array of 16-byte elements, with the b/d loop's loads in a function called
 * from the loop: they still belong to that loop (the innermost loop on the stack).  Loads before
 * any loop belong to loop 0.
 */
static void test_loops_through_calls(void **state)
{
	void *st = sa_new();
	struct mn_profile *p;
	const struct mn_pnode *o;

	SA->func_entry(st, S_FUNC);
	SA->heap_alloc(st, S_ALLOC, HEAP, 16 * 100);
	ld(st, S_LD4, HEAP + 4);                  /* outside every loop */
	SA->loop_invoke(st, S_LOOP1);
	for (int i = 0; i < 100; i++) {
		SA->loop_iter(st, S_LOOP1);
		ld(st, S_LD1, HEAP + 16 * i);
		ld(st, S_LD2, HEAP + 16 * i + 8);
	}
	SA->loop_exit(st, S_LOOP1);
	SA->loop_invoke(st, S_LOOP2);
	for (int i = 0; i < 100; i++) {
		SA->loop_iter(st, S_LOOP2);
		SA->func_entry(st, S_CALLEE);
		ld(st, S_LD3, HEAP + 16 * i + 4);
		ld(st, S_LD4, HEAP + 16 * i + 12);
		SA->func_exit(st, S_CALLEE);
	}
	/* A return from inside the loop: func_exit closes it (no loop_exit). */
	SA->func_exit(st, S_FUNC);
	p = finish(st);
	o = object(p, S_ALLOC);
	assert_int_equal(u64(get(o, "size"), "inferred"), 16);
	assert_int_equal(stream_loop(o, S_LD1), S_LOOP1);
	assert_int_equal(stream_loop(o, S_LD3), S_LOOP2);
	assert_int_equal(mn_pnode_len(get(o, "streams")), 5);   /* LD4 twice: loop 0 and loop 2 */
	/* The lone loop-0 access of field 4 joins no loop: A(4, 12) = 200 / 201. */
	assert_string_equal(advice(o), "split into {0, 8} and {4, 12}");
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
	SA->loop_invoke(st, S_LOOP1);
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
	SA->loop_exit(st, S_LOOP1);
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
		cmocka_unit_test(test_loops_through_calls),
		cmocka_unit_test(test_instances),
		cmocka_unit_test(test_stack_global_top),
		cmocka_unit_test(test_bad_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
