/*
 * object-relative's loop_summary handler against its definition, the driver's expansion
 * (backend/module.h): random event sequences (heap objects made, moved and freed, some sharing
 * granules or overlapping, one large enough to be cleared whole; globals packed two to a granule;
 * stack objects; single accesses; summaries of 0 to 24 accesses whose steps are positive, negative,
 * zero or wrap around 2^48, whose starts lie inside, across or outside objects, over 1 to 1000
 * iterations) go once through the handler and once through load() and store() in expansion
 * order, and the two states' sections must be the same bytes.  Under the default cap, a cap of
 * 2 LMADs, stack objects on, and lossless mode.  Also objrel_lmads_add_run() against as many
 * objrel_lmads_add() calls, field by field; and init() refusing a bad setting.
 */
#define _GNU_SOURCE   /* open_memstream in modtest.h */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lmad.h"
#include "modtest.h"
#include "module.h"

extern const struct mn_module mn_module_object_relative;
static const struct mn_module *const M = &mn_module_object_relative;

#define ADDR_MASK ((UINT64_C(1) << 48) - 1)
#define HEAP UINT64_C(0x555555600000)     /* heap objects in [HEAP, HEAP + 64 KiB) */
#define BIG UINT64_C(0x555555800000)      /* the large object (cleared whole when freed) */
#define GLOBALS UINT64_C(0x555555500000)  /* globals, packed */
#define STACK UINT64_C(0x7ffc00000000)    /* stack objects; outside every object without them */
#define ALIAS (HEAP + (UINT64_C(1) << 42)) /* another window on the heap's shadow: unmapped */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * UINT64_C(2685821657736338717);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ---- objrel_lmads_add_run() ------------------------------------------------------------------ */

/* An LMAD as text, for messages. */
static const char *lmad_text(const struct objrel_lmad *l, char *buf, size_t len)
{
	snprintf(buf, len, "start (%llu, %llu) stride (%lld, %lld) count %llu times %llu..%llu",
		 (unsigned long long)l->start[0], (unsigned long long)l->start[1],
		 (long long)l->stride[0], (long long)l->stride[1], (unsigned long long)l->count,
		 (unsigned long long)l->first, (unsigned long long)l->last);
	return buf;
}

/* A stream's summary as text, for messages. */
static const char *lmads_text(const struct objrel_lmads *s, char *buf, size_t len)
{
	snprintf(buf, len, "n %u full %d nomem %d points %llu captured %llu min (%llu, %llu) "
		 "max (%llu, %llu) granularity (%llu, %llu)", s->n, s->full, s->nomem,
		 (unsigned long long)s->points, (unsigned long long)s->captured,
		 (unsigned long long)s->min[0], (unsigned long long)s->min[1],
		 (unsigned long long)s->max[0], (unsigned long long)s->max[1],
		 (unsigned long long)s->gran[0], (unsigned long long)s->gran[1]);
	return buf;
}

static void same_lmads(const struct objrel_lmads *a, const struct objrel_lmads *b, uint64_t seed)
{
	char x[256], y[256];

	if (a->n != b->n || a->full != b->full || a->nomem != b->nomem || a->points != b->points ||
	    a->captured != b->captured || memcmp(a->min, b->min, sizeof(a->min)) ||
	    memcmp(a->max, b->max, sizeof(a->max)) || memcmp(a->gran, b->gran, sizeof(a->gran)))
		fail_msg("seed %llu: after add_run: %s; expected (point by point): %s",
			 (unsigned long long)seed, lmads_text(a, x, sizeof(x)),
			 lmads_text(b, y, sizeof(y)));
	for (uint32_t i = 0; i < a->n; i++)
		if (memcmp(&a->v[i], &b->v[i], sizeof(a->v[i])))
			fail_msg("seed %llu: LMAD %u: got %s; expected %s",
				 (unsigned long long)seed, i, lmad_text(&a->v[i], x, sizeof(x)),
				 lmad_text(&b->v[i], y, sizeof(y)));
}

/* Random runs and single points, from every state a stream can be in (empty, mid-LMAD, full). */
static void test_lmads_add_run(void **state)
{
	for (uint64_t seed = 1; seed <= 3000; seed++) {
		struct objrel_lmads a, b;
		uint32_t limit = 1 + (uint32_t)below(4);
		uint64_t t = below(100);

		rng = seed * 0x9e3779b97f4a7c15u;
		objrel_lmads_init(&a, limit);
		objrel_lmads_init(&b, limit);
		for (int step = 0; step < 12; step++) {
			/* Starts far enough from 0 that no point wraps. */
			uint64_t p[OBJREL_LMAD_DIMS] = { 20 + below(3), 1000 + below(64) };
			int64_t dp[OBJREL_LMAD_DIMS] = { below(4) ? 0 : (int64_t)below(3) - 1,
							 (int64_t)below(17) - 8 };
			uint64_t count = below(4) ? 1 + below(20) : 1, dt = 1 + below(3);
			uint64_t got, want = 0;

			got = objrel_lmads_add_run(&a, p, dp, count, t, dt);
			for (uint64_t i = 0; i < count; i++) {
				uint64_t q[OBJREL_LMAD_DIMS] = { p[0] + (uint64_t)dp[0] * i,
								 p[1] + (uint64_t)dp[1] * i };

				want += objrel_lmads_add(&b, q, t + i * dt);
			}
			if (got != want)
				fail_msg("seed %llu: add_run captured %llu, expected %llu",
					 (unsigned long long)seed, (unsigned long long)got,
					 (unsigned long long)want);
			same_lmads(&a, &b, seed);
			t += count * dt + below(3);
		}
		objrel_lmads_free(&a);
		objrel_lmads_free(&b);
	}
}

/* ---- The handler against the expansion ------------------------------------------------------- */

struct obj {
	uint64_t addr, size;
	int kind;        /* 0 heap, 1 global, 2 stack */
};

/* The objects the sequence made and has not freed (as the test sees them). */
static struct obj live[512];
static unsigned nlive;

static void *sum_st, *exp_st;   /* the handler's state, the expansion's */
static unsigned nsummaries;

static void both_alloc(uint32_t site, uint64_t addr, uint64_t size, int kind)
{
	void (*f)(void *, uint32_t, uint64_t, uint64_t) =
		kind == 0 ? M->heap_alloc : kind == 1 ? M->global : M->stack_alloc;

	f(sum_st, site, addr, size);
	f(exp_st, site, addr, size);
	if (nlive < sizeof(live) / sizeof(live[0]))
		live[nlive++] = (struct obj){ addr, size, kind };
}

static void both_free(unsigned i)
{
	struct obj *o = &live[i];

	if (o->kind == 1)
		return;
	(o->kind == 0 ? M->heap_free : M->stack_free)(sum_st, 0, o->addr);
	(o->kind == 0 ? M->heap_free : M->stack_free)(exp_st, 0, o->addr);
	*o = live[--nlive];
}

static void both_access(uint32_t site, uint64_t addr, bool store)
{
	(store ? M->store : M->load)(sum_st, site, addr, 0, 0);
	(store ? M->store : M->load)(exp_st, site, addr, 0, 0);
}

/* A heap object: anywhere in the heap area, or right after a live object (sharing a granule). */
static void make_heap(void)
{
	static const uint64_t sizes[] = { 0, 1, 3, 5, 8, 12, 13, 24, 40, 100, 256, 1000, 4096 };
	uint64_t size = sizes[below(sizeof(sizes) / sizeof(sizes[0]))];
	uint64_t addr = HEAP + below(64 << 10);

	if (nlive && below(3) == 0) {
		struct obj *o = &live[below(nlive)];

		addr = o->addr + (o->size ? o->size : 1);
	} else if (below(4)) {
		addr &= ~UINT64_C(15);   /* malloc's alignment, mostly */
	}
	both_alloc(1 + (uint32_t)below(4), addr, size, 0);
}

/* An address for a summarized access to start at: in, at the edge of or near an object, or
 * outside every object (the stack, past 2^48's edge, 0). */
static uint64_t pick_start(void)
{
	uint64_t r = below(10);

	if (nlive && r < 7) {
		struct obj *o = &live[below(nlive)];
		uint64_t len = o->size ? o->size : 1;

		if (r < 5)
			return o->addr + below(len);
		return r == 5 ? o->addr + len - 1 - below(8) : o->addr - 8 + below(16);
	}
	switch (below(5)) {
	case 0:
		return STACK + below(4096);
	case 1:
		return ADDR_MASK - below(64);   /* wraps to 0 with a positive step */
	case 2:
		return below(64);               /* wraps to 2^48 - ... with a negative step */
	case 3:
		return HEAP + below(128 << 10);
	default:
		return GLOBALS + below(64);
	}
}

static int64_t pick_step(void)
{
	static const int64_t steps[] = { 0, 1, 2, 4, 8, 12, 16, 24, 64, 100, 4096, 65536 };
	int64_t s = steps[below(sizeof(steps) / sizeof(steps[0]))];

	if (below(2))
		s = -s;
	switch (below(10)) {
	case 0:
		return s + (int64_t)(below(4) << 48);   /* the same step modulo 2^48 */
	case 1:
		return (int64_t)below(1u << 20) - (1 << 19);
	default:
		return s;
	}
}

static uint64_t pick_iterations(void)
{
	switch (below(4)) {
	case 0:
		return 1 + below(3);
	case 1:
		return 1 + below(30);
	case 2:
		return 1 + below(300);
	default:
		return 1 + below(1000);
	}
}

/* One summary: to the handler whole, to the other state as the driver expands it. */
static void both_summary(void)
{
	struct mn_summary_access acc[24];
	/* Now and then more than 16 accesses: their sites are checked sorted. */
	unsigned n = (unsigned)(below(20) ? below(7) : below(25));
	uint64_t iters = pick_iterations();
	bool repeat = below(10) == 0;   /* two accesses may share a site */

	for (unsigned j = 0; j < n; j++) {
		uint32_t site;
		bool fresh;

		do {   /* sites 20..59: distinct unless repeat */
			site = 20 + (uint32_t)below(40);
			fresh = true;
			for (unsigned i = 0; i < j && !repeat; i++)
				fresh &= acc[i].site != site;
		} while (!fresh);
		acc[j] = (struct mn_summary_access){ .start = pick_start(), .step = pick_step(),
						     .site = site, .size = 8,
						     .store = below(3) == 0 };
	}
	M->loop_summary(sum_st, 7, iters, acc, n);
	for (uint64_t k = 0; k < iters; k++)
		for (unsigned j = 0; j < n; j++)
			(acc[j].store ? M->store : M->load)(
				exp_st, acc[j].site,
				(acc[j].start + k * (uint64_t)acc[j].step) & ADDR_MASK, 0, 0);
	nsummaries++;
}

/* The first line where a and b differ, with its number. */
static void first_difference(const char *a, const char *b, char *out, size_t len)
{
	unsigned line = 1;
	const char *la = a, *lb = b;

	while (*a && *a == *b) {
		if (*a == '\n') {
			line++;
			la = a + 1;
			lb = b + 1;
		}
		a++;
		b++;
	}
	snprintf(out, len, "line %u: got '%.*s', expected '%.*s'", line, (int)strcspn(la, "\n"), la,
		 (int)strcspn(lb, "\n"), lb);
}

static void one_sequence(uint64_t seed, const char *mode, bool stack, bool alias)
{
	char *got, *want, diff[512];

	rng = seed * 0x9e3779b97f4a7c15u + 1;
	nlive = 0;
	sum_st = mt_state_new(M, NULL);
	exp_st = mt_state_new(M, NULL);
	for (uint64_t a = GLOBALS, i = 0; i < 8; i++) {   /* before main: packed globals */
		uint64_t size = 1 + below(12);

		both_alloc(100 + (uint32_t)i, a, size, 1);
		a += size + below(2) * 3;
	}
	if (alias)
		both_alloc(5, ALIAS + below(4096), 64 + below(256), 0);
	for (int e = 0; e < 120; e++) {
		uint64_t r = below(100);

		if (r < 14) {
			make_heap();
		} else if (r < 20 && nlive) {
			both_free((unsigned)below(nlive));
		} else if (r < 22) {
			both_alloc(6, BIG, (256 << 10) + below(64), 0);
		} else if (r < 25 && nlive) {   /* a realloc in place or elsewhere */
			unsigned i = (unsigned)below(nlive);
			uint64_t to = HEAP + (below(64 << 10) & ~UINT64_C(15));
			struct obj *o = &live[below(nlive)];
			uint64_t size = 1 + below(200);

			if (below(2))
				to = live[i].addr;
			else if (below(3) == 0)   /* after an object, sharing its last granule */
				to = o->addr + (o->size ? o->size : 1);

			if (live[i].kind != 0)
				continue;
			M->heap_realloc(sum_st, 1, live[i].addr, to, size);
			M->heap_realloc(exp_st, 1, live[i].addr, to, size);
			live[i].addr = to;
			live[i].size = size;
		} else if (r < 31 && stack) {   /* may overlap a live stack object */
			both_alloc(9 + (uint32_t)below(2), STACK + below(4096), 1 + below(512), 2);
		} else if (r < 36) {
			both_access(20 + (uint32_t)below(30), pick_start(), below(2));
		} else {
			both_summary();
		}
	}
	got = mt_emit_text(M, sum_st, NULL);
	want = mt_emit_text(M, exp_st, NULL);
	if (strcmp(got, want)) {
		first_difference(got, want, diff, sizeof(diff));
		fail_msg("%s, seed %llu: the handler's section differs from the expansion's at %s",
			 mode, (unsigned long long)seed, diff);
	}
	free(got);
	free(want);
	mt_state_free(M, sum_st);
	mt_state_free(M, exp_st);
}

/* 60 sequences, every tenth with an object in an aliased window (its granules unmapped). */
static void sequences(const char *mode, bool stack)
{
	nsummaries = 0;
	for (uint64_t seed = 1; seed <= 60; seed++)
		one_sequence(seed, mode, stack, seed % 10 == 0);
	if (nsummaries < 60 * 40)
		fail_msg("%s: expected at least %d summaries, got %u", mode, 60 * 40, nsummaries);
}

static void test_summaries_default(void **state)
{
	unsetenv("MNEMO_OBJREL_LMADS");
	unsetenv("MNEMO_OBJREL_STACK");
	unsetenv("MNEMO_OBJREL_LOSSLESS");
	sequences("default", false);
}

static void test_summaries_cap2(void **state)
{
	setenv("MNEMO_OBJREL_LMADS", "2", 1);
	sequences("MNEMO_OBJREL_LMADS=2", false);
	unsetenv("MNEMO_OBJREL_LMADS");
}

static void test_summaries_stack(void **state)
{
	setenv("MNEMO_OBJREL_STACK", "1", 1);
	sequences("MNEMO_OBJREL_STACK=1", true);
	unsetenv("MNEMO_OBJREL_STACK");
}

static void test_summaries_lossless(void **state)
{
	setenv("MNEMO_OBJREL_LOSSLESS", "1", 1);
	sequences("MNEMO_OBJREL_LOSSLESS=1", false);
	unsetenv("MNEMO_OBJREL_LOSSLESS");
}

/*
 * The settings (the module's options table): a value out of range or not a number stops init()
 * with -EINVAL, where the module once fell back to the default or took it as off.
 */
static int init_with(const char *env, const char *value)
{
	void *st = calloc(1, M->state_size);
	int e;

	assert_non_null(st);
	setenv(env, value, 1);
	e = M->init(st, NULL);
	unsetenv(env);
	if (!e)
		M->fini(st);
	free(st);
	return e;
}

static void test_settings_refused(void **state)
{
	static const char *const bad[][2] = {
		{ "MNEMO_OBJREL_LMADS", "0" }, { "MNEMO_OBJREL_LMADS", "1000001" },
		{ "MNEMO_OBJREL_LMADS", "30x" }, { "MNEMO_OBJREL_LMADS", "-1" },
		{ "MNEMO_OBJREL_STACK", "yes" }, { "MNEMO_OBJREL_STACK", "2" },
		{ "MNEMO_OBJREL_LOSSLESS", "true" },
	};
	static const char *const good[][2] = {
		{ "MNEMO_OBJREL_LMADS", "1" }, { "MNEMO_OBJREL_LMADS", "1000000" },
		{ "MNEMO_OBJREL_LMADS", "" }, { "MNEMO_OBJREL_STACK", "0" },
		{ "MNEMO_OBJREL_LOSSLESS", "1" },
	};

	unsetenv("MNEMO_OBJREL_LMADS");
	unsetenv("MNEMO_OBJREL_STACK");
	unsetenv("MNEMO_OBJREL_LOSSLESS");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (init_with(bad[i][0], bad[i][1]) != -EINVAL)
			fail_msg("%s='%s': init() accepted it", bad[i][0], bad[i][1]);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (init_with(good[i][0], good[i][1]))
			fail_msg("%s='%s': init() refused it", good[i][0], good[i][1]);
}

/* A summary in one object of a long loop: its points are one LMAD, and cost no lookup each. */
static void test_summary_one_lmad(void **state)
{
	struct mn_summary_access acc[2] = {
		{ .start = HEAP + 8, .step = 8, .site = 3, .size = 8 },
		{ .start = HEAP + 8 * 999, .step = -8, .site = 4, .size = 8, .store = true },
	};
	char *text;

	unsetenv("MNEMO_OBJREL_LMADS");
	unsetenv("MNEMO_OBJREL_STACK");
	unsetenv("MNEMO_OBJREL_LOSSLESS");
	sum_st = mt_state_new(M, NULL);
	M->heap_alloc(sum_st, 1, HEAP, 8000);
	M->loop_summary(sum_st, 2, 1000, acc, 2);
	text = mt_emit_text(M, sum_st, NULL);
	/* Time 0 is the allocation; load j of iteration k at 1 + 2k + j. */
	if (!strstr(text, "{object: 0, offset: 8, object_stride: 0, offset_stride: 8, count: 999, "
			  "first_time: 1, last_time: 1997}") ||
	    !strstr(text, "{object: 0, offset: 7992, object_stride: 0, offset_stride: -8, "
			  "count: 1000, first_time: 2, last_time: 2000}") ||
	    !strstr(text, "events: 2001"))
		fail_msg("expected one LMAD per access (offset 8 stride 8, 999 points in the "
			 "object, times 1..1997; offset 7992 stride -8, 1000 points, times "
			 "2..2000) and 2001 events; got:\n%s", text);
	free(text);
	mt_state_free(M, sum_st);
}

/* Two summaries of one access over every byte of [addr, addr + len), up then down, to both
 * states: a granule lost at either end is inside a run from the other. */
static void both_sweep(uint32_t site, uint64_t addr, uint64_t len)
{
	struct mn_summary_access up = { .start = addr, .step = 1, .site = site, .size = 1 };
	struct mn_summary_access down = { .start = addr + len - 1, .step = -1, .site = site,
					  .size = 1 };

	M->loop_summary(sum_st, 7, len, &up, 1);
	M->loop_summary(sum_st, 7, len, &down, 1);
	for (uint64_t k = 0; k < len; k++)
		M->load(exp_st, site, addr + k, 0, 0);
	for (uint64_t k = 0; k < len; k++)
		M->load(exp_st, site, addr + len - 1 - k, 0, 0);
}

static void both_compare(const char *what)
{
	char *got = mt_emit_text(M, sum_st, NULL), *want = mt_emit_text(M, exp_st, NULL);
	char diff[512];

	if (strcmp(got, want)) {
		first_difference(got, want, diff, sizeof(diff));
		fail_msg("%s: the handler's section differs from the expansion's at %s", what,
			 diff);
	}
	free(got);
	free(want);
	mt_state_free(M, sum_st);
	mt_state_free(M, exp_st);
}

/*
 * Every event that changes the object table must make the handler look again at an object it
 * found whole: object X is swept (found whole), then a change takes one of its granules (a later
 * object sharing it, a realloc onto it, a large neighbour cleared whole, an overlapping stack
 * object), then X is swept again: its bytes there now find another object or none.
 */
static void test_summaries_table_changes(void **state)
{
	const uint64_t big = 256 << 10;

	unsetenv("MNEMO_OBJREL_LMADS");
	unsetenv("MNEMO_OBJREL_LOSSLESS");
	setenv("MNEMO_OBJREL_STACK", "1", 1);
	for (int c = 0; c < 6; c++) {
		nlive = 0;
		sum_st = mt_state_new(M, NULL);
		exp_st = mt_state_new(M, NULL);
		if (c == 4)
			both_alloc(2, BIG, big + 4, 0);
		if (c == 5)
			both_alloc(9, STACK, big + 4, 2);
		if (c == 2)
			both_alloc(2, HEAP + 0x1000, 16, 0);
		both_alloc(1, c == 4 ? BIG + big + 4 : c == 5 ? STACK + big + 4 : HEAP, 100,
			   c == 5 ? 2 : 0);
		both_sweep(3, live[nlive - 1].addr, 100);
		switch (c) {
		case 0:   /* a heap object after it */
			both_alloc(2, HEAP + 100, 16, 0);
			break;
		case 1:   /* a global after it */
			both_alloc(100, HEAP + 100, 4, 1);
			break;
		case 2:   /* a realloc after it */
			M->heap_realloc(sum_st, 2, HEAP + 0x1000, HEAP + 100, 16);
			M->heap_realloc(exp_st, 2, HEAP + 0x1000, HEAP + 100, 16);
			break;
		case 3:   /* a stack object over it */
			both_alloc(9, HEAP + 64, 16, 2);
			break;
		case 4:   /* its large heap neighbour freed: the shared granule cleared */
			both_free(0);
			break;
		default:  /* its large stack neighbour freed */
			both_free(0);
			break;
		}
		both_sweep(3, c == 4 ? BIG + big + 4 : c == 5 ? STACK + big + 4 : HEAP, 100);
		both_compare(c == 0 ? "heap_alloc" : c == 1 ? "global" : c == 2 ? "heap_realloc" :
			     c == 3 ? "stack_alloc" : c == 4 ? "heap_free" : "stack_free");
	}
	unsetenv("MNEMO_OBJREL_STACK");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lmads_add_run),
		cmocka_unit_test(test_summary_one_lmad),
		cmocka_unit_test(test_settings_refused),
		cmocka_unit_test(test_summaries_default),
		cmocka_unit_test(test_summaries_cap2),
		cmocka_unit_test(test_summaries_stack),
		cmocka_unit_test(test_summaries_lossless),
		cmocka_unit_test(test_summaries_table_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
