/*
 * structure-affinity's loop summaries (sa_loop_summary()) against the driver's expansion: two
 * states of the module, one given each summary whole through its loop_summary handler, the other
 * the loads and stores the expansion makes of it (backend/driver.c: per iteration each access in
 * push order at (start + k * step) & (2^48 - 1), value 0), the same events in between (heap, stack
 * and global objects made, moved and freed, some over live ones, single accesses).  Their sections
 * must be the same byte for byte, at checkpoints and at the end: random scripts with and without
 * the cache model, and a few made-up cases (a verified extent that a later object covers, a walk
 * off an object's end, across 2^48, twins).  One case checks that the closed form is taken:
 * 2^44 iterations, which the expansion could not finish.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend.h"
#include "module.h"
#include "profile.h"

extern const struct mn_module mn_module_structure_affinity;
#define SA (&mn_module_structure_affinity)

#define ADDR_MASK ((UINT64_C(1) << 48) - 1)
#define HEAP UINT64_C(0x200000000)
#define HEAP_SPAN (UINT64_C(1) << 21)        /* objects are made in [HEAP, HEAP + HEAP_SPAN) */
#define STACK UINT64_C(0x7ff000000000)
#define GLOBAL UINT64_C(0x400000)
#define BIG (UINT64_C(300) << 10)            /* past the table's bulk-clear size (256 KiB) */

/*
 * The made-up site table: heap sites 1-3 (1 and 2 with a layout), a stack site 4, a global site
 * 5, loops 6-8, then NACC load and store sites spread over loops 6, 7, 8 and 0.
 */
enum { S_HEAP1 = 1, S_HEAP2, S_HEAP3, S_STACK, S_GLOBAL, S_LOOP1, S_LOOP2, S_LOOP3, S_ACC0 };
#define NACC 24
#define NSITES (S_ACC0 + NACC - 1)

static char *site_table(void)
{
	static const uint32_t loops[] = { S_LOOP1, S_LOOP2, S_LOOP3, 0 };
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);

	assert_non_null(f);
	fprintf(f, "mnemo-sites/2\n"
		   "alloc\tmain\tt.c\t3\t9\tmalloc\t0\t0\trec/16:a@0,b@4,c@8,d@12\n"
		   "alloc\tmain\tt.c\t4\t9\tmalloc\t0\t0\tsix/24:a@0,b@4,c@8,d@12,e@16,f@20\n"
		   "alloc\tmain\tt.c\t5\t9\tmalloc\t0\t0\t\n"
		   "stack\tmain\tt.c\t6\t0\tbuf\t256\t0\t\n"
		   "global\t\tt.c\t1\t0\tg\t64\t0\t\n"
		   "loop\tmain\tt.c\t7\t2\t\t0\t0\t\n"
		   "loop\tmain\tt.c\t8\t2\t\t0\t0\t\n"
		   "loop\tmain\tt.c\t9\t2\t\t0\t0\t\n");
	for (int i = 0; i < NACC; i++)
		fprintf(f, "%s\tmain\tt.c\t%d\t3\t\t0\t%u\t\n", i % 3 ? "load" : "store", 10 + i,
			loops[i % 4]);
	fclose(f);
	return t;
}

struct pair {
	struct mn_run *run;
	void *sum, *exp;            /* given summaries whole; given their expansion */
};

static void pair_open(struct pair *p, bool with_table)
{
	char why[256] = "", *t = site_table();

	p->run = NULL;
	if (with_table && mn_run_create(&p->run, t, strlen(t), why, sizeof(why)))
		fail_msg("the made-up site table does not parse: %s", why);
	free(t);
	p->sum = calloc(1, SA->state_size);
	p->exp = calloc(1, SA->state_size);
	assert_non_null(p->sum);
	assert_non_null(p->exp);
	assert_int_equal(SA->init(p->sum, p->run), 0);
	assert_int_equal(SA->init(p->exp, p->run), 0);
}

static char *section(void *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct mn_prof *p;

	assert_non_null(f);
	assert_int_equal(mn_prof_open(&p, f), 0);
	assert_int_equal(SA->emit(st, p), 0);
	assert_int_equal(mn_prof_close(p), 0);
	fclose(f);
	return text;
}

/* The two sections, equal byte for byte; else fails naming the first line that differs. */
static void pair_check(struct pair *p, const char *what)
{
	char *x = section(p->sum), *y = section(p->exp);
	unsigned line = 1;
	size_t i = 0;

	if (strcmp(x, y)) {
		while (x[i] && x[i] == y[i])
			line += x[i++] == '\n';
		while (i > 0 && x[i - 1] != '\n')
			i--;
		fail_msg("%s: sections differ from line %u:\n  summarized: %.160s\n  expanded:   "
			 "%.160s", what, line, x + i, y + i);
	}
	free(x);
	free(y);
}

static void pair_close(struct pair *p)
{
	SA->fini(p->sum);
	SA->fini(p->exp);
	free(p->sum);
	free(p->exp);
	mn_run_destroy(p->run);
}

/* ---- Events to both states ------------------------------------------------------------------- */

static void heap_alloc(struct pair *p, uint32_t site, uint64_t addr, uint64_t size)
{
	SA->heap_alloc(p->sum, site, addr, size);
	SA->heap_alloc(p->exp, site, addr, size);
}

static void heap_realloc(struct pair *p, uint32_t site, uint64_t old, uint64_t addr,
			 uint64_t size)
{
	SA->heap_realloc(p->sum, site, old, addr, size);
	SA->heap_realloc(p->exp, site, old, addr, size);
}

static void heap_free(struct pair *p, uint64_t addr)
{
	SA->heap_free(p->sum, 0, addr);
	SA->heap_free(p->exp, 0, addr);
}

static void stack_alloc(struct pair *p, uint64_t addr, uint64_t size)
{
	SA->stack_alloc(p->sum, S_STACK, addr, size);
	SA->stack_alloc(p->exp, S_STACK, addr, size);
}

static void stack_free(struct pair *p, uint64_t addr)
{
	SA->stack_free(p->sum, S_STACK, addr);
	SA->stack_free(p->exp, S_STACK, addr);
}

static void global(struct pair *p, uint64_t addr, uint64_t size)
{
	SA->global(p->sum, S_GLOBAL, addr, size);
	SA->global(p->exp, S_GLOBAL, addr, size);
}

static void access1(struct pair *p, uint32_t site, bool store, uint64_t addr, uint32_t size)
{
	(store ? SA->store : SA->load)(p->sum, site, addr, 0, size);
	(store ? SA->store : SA->load)(p->exp, site, addr, 0, size);
}

/* One summary: whole to one state, expanded as backend/driver.c does to the other. */
static void summary(struct pair *p, uint32_t loop, uint64_t iterations,
		    const struct mn_summary_access *acc, unsigned n)
{
	SA->loop_summary(p->sum, loop, iterations, acc, n);
	for (uint64_t k = 0; k < iterations; k++)
		for (unsigned j = 0; j < n; j++)
			(acc[j].store ? SA->store : SA->load)(p->exp, acc[j].site,
				(acc[j].start + k * (uint64_t)acc[j].step) & ADDR_MASK, 0,
				acc[j].size);
}

/* ---- Random scripts -------------------------------------------------------------------------- */

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t below(uint64_t n)
{
	return n ? next() % n : 0;
}

#define MAXLIVE 64

struct live {
	uint64_t addr, size;
	bool stack;
};

struct script {
	struct live v[MAXLIVE];
	unsigned n;
};

static uint64_t obj_size(void)
{
	switch (below(10)) {
	case 0: return 1 + below(8);
	case 1: return BIG + 8 * below(1000);
	case 2: case 3: return 16 * (1 + below(64));
	case 4: return 24 * (1 + below(64));
	default: return 1 + below(4096);
	}
}

/* An address for a new object: fresh memory mostly, inside a live object sometimes. */
static uint64_t obj_addr(const struct script *s, uint64_t size)
{
	static const uint64_t align[] = { 1, 4, 8, 16, 16, 16 };

	if (s->n && below(6) == 0) {
		const struct live *o = &s->v[below(s->n)];

		return o->addr + below(o->size);
	}
	return (HEAP + below(HEAP_SPAN - size)) & ~(align[below(6)] - 1);
}

static void random_object(struct pair *p, struct script *s)
{
	uint64_t size = obj_size(), addr;

	if (s->n == MAXLIVE)
		return;
	addr = obj_addr(s, size);
	if (below(5) == 0) {
		stack_alloc(p, addr, size);
		s->v[s->n++] = (struct live){ addr, size, true };
	} else {
		heap_alloc(p, S_HEAP1 + (uint32_t)below(3), addr, size);
		s->v[s->n++] = (struct live){ addr, size, false };
	}
}

static void random_free(struct pair *p, struct script *s)
{
	unsigned i;

	if (!s->n || below(8) == 0) {
		heap_free(p, HEAP + below(HEAP_SPAN));    /* mostly nobody's start: unknown */
		return;
	}
	i = (unsigned)below(s->n);
	if (s->v[i].stack)
		stack_free(p, s->v[i].addr);
	else if (below(3) == 0) {
		uint64_t size = obj_size(), addr = obj_addr(s, size);

		heap_realloc(p, S_HEAP1, s->v[i].addr, addr, size);
		s->v[i].addr = addr;
		s->v[i].size = size;
		return;
	} else
		heap_free(p, s->v[i].addr);
	s->v[i] = s->v[--s->n];
}

static int64_t random_step(uint32_t size, const struct live *o)
{
	int64_t sign = below(3) == 0 ? -1 : 1;

	switch (below(9)) {
	case 0: return 0;
	case 1: return sign * (int64_t)size;
	case 2: return sign * 8;
	case 3: return sign * 16;
	case 4: return sign * 24;
	case 5: return sign * (int64_t)below(200);
	case 6: return o ? sign * (int64_t)(1 + o->size / 8) : 40;
	case 7: return sign * (int64_t)(4096 + below(8192));
	default: return sign * 48;
	}
}

static uint64_t random_iterations(void)
{
	switch (below(4)) {
	case 0: return 1 + below(4);
	case 1: case 2: return 1 + below(100);
	default: return 1 + below(1000);
	}
}

/* A start: inside a live object mostly, so that the walk stays in it or runs off its end. */
static void random_access(struct mn_summary_access *a, const struct script *s, uint64_t iters)
{
	static const uint32_t sizes[] = { 1, 2, 4, 8, 8, 16 };
	const struct live *o = s->n && below(10) < 8 ? &s->v[below(s->n)] : NULL;
	unsigned where = (unsigned)below(20);

	a->site = S_ACC0 + (uint32_t)below(NACC);
	a->store = below(2);
	a->size = sizes[below(6)];
	a->step = random_step(a->size, o);
	if (o) {
		uint64_t span = a->step < 0 ? -(uint64_t)a->step : (uint64_t)a->step;
		uint64_t room = span * (iters - 1);

		a->start = o->addr + below(o->size);
		/* Usually fitted so that the whole walk stays inside. */
		if (below(4) && room < o->size) {
			a->start = o->addr + below(o->size - room);
			if (a->step < 0)
				a->start += room;
		}
	} else if (where < 12) {
		a->start = HEAP + below(HEAP_SPAN);
	} else if (where < 15) {
		a->start = GLOBAL + below(512);
	} else if (where < 17) {
		a->start = 0x10000 + below(4096);                  /* below every object */
	} else if (where < 19) {
		a->start = UINT64_C(0x7fff00000000) + below(4096); /* above every object */
	} else {
		a->start = ADDR_MASK - below(4096);                /* may wrap at 2^48 */
	}
	if (below(16) == 0)
		a->start |= UINT64_C(0xabcd) << 48;   /* bits above 48: the expansion masks them */
}

static void random_summary(struct pair *p, const struct script *s)
{
	static const uint32_t loops[] = { S_LOOP1, S_LOOP2, S_LOOP3 };
	struct mn_summary_access acc[8];
	unsigned n = (unsigned)below(7);
	uint64_t iters = random_iterations();

	for (unsigned j = 0; j < n; j++)
		random_access(&acc[j], s, iters);
	if (n > 1 && below(6) == 0)
		acc[n - 1].site = acc[0].site;   /* a twin: one instruction twice */
	summary(p, loops[below(3)], iters, acc, n);
}

/* Globals are registered first, as before main: packed, sharing granules. */
static void globals(struct pair *p)
{
	uint64_t a = GLOBAL;

	for (int i = 0; i < 12; i++) {
		uint64_t size = i % 3 ? 4 : 4 + 8 * below(8);

		global(p, a, size);
		a += size;
	}
}

static void run_script(uint64_t seed, bool with_table, unsigned steps)
{
	struct script s = { .n = 0 };
	struct pair p;
	char what[96];

	rng = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	pair_open(&p, with_table);
	for (unsigned k = 0; k < 4; k++)   /* before any object: below the filter */
		random_summary(&p, &s);
	globals(&p);
	for (unsigned step = 0; step < steps; step++) {
		unsigned r = (unsigned)below(20);

		if (r < 3)
			random_object(&p, &s);
		else if (r < 5)
			random_free(&p, &s);
		else if (r < 6) {
			struct mn_summary_access a;

			random_access(&a, &s, 1);
			access1(&p, a.site, a.store, a.start & ADDR_MASK, a.size);
		} else
			random_summary(&p, &s);
		if (step % 64 == 63) {
			snprintf(what, sizeof(what), "seed %" PRIu64 " step %u", seed, step);
			pair_check(&p, what);
		}
	}
	snprintf(what, sizeof(what), "seed %" PRIu64 " at the end", seed);
	pair_check(&p, what);
	pair_close(&p);
}

static void test_random(void **state)
{
	setenv("MNEMO_AFFINITY_TOP", "1000", 1);   /* every data object's section */
	for (uint64_t seed = 1; seed <= 60; seed++)
		run_script(seed, seed % 4 != 0, 600);
	unsetenv("MNEMO_AFFINITY_TOP");
}

/* The cache model prices accesses in order: every summary runs access by access. */
static void test_random_cache(void **state)
{
	setenv("MNEMO_AFFINITY_COST", "cache", 1);
	setenv("MNEMO_AFFINITY_L1_SIZE", "4096", 1);
	setenv("MNEMO_AFFINITY_L2_SIZE", "65536", 1);
	for (uint64_t seed = 1001; seed <= 1010; seed++)
		run_script(seed, true, 300);
	unsetenv("MNEMO_AFFINITY_COST");
	unsetenv("MNEMO_AFFINITY_L1_SIZE");
	unsetenv("MNEMO_AFFINITY_L2_SIZE");
}

/* ---- Made-up cases --------------------------------------------------------------------------- */

static struct mn_summary_access acc(uint32_t site, uint64_t start, int64_t step, uint32_t size)
{
	return (struct mn_summary_access){ .site = site, .start = start, .step = step,
					   .size = size, .store = false };
}

/*
 * An extent verified by one summary, then covered in part by a later object (a free that never
 * came), a neighbour sharing its last granule, a move and a large object's release: each walk
 * after them must see the table as it is then.
 */
static void test_stale_extents(void **state)
{
	struct mn_summary_access a[2];
	struct pair p;

	pair_open(&p, true);
	heap_alloc(&p, S_HEAP1, HEAP, 1600);
	a[0] = acc(S_ACC0, HEAP, 16, 4);
	a[1] = acc(S_ACC0 + 1, HEAP + 1596, -16, 4);
	summary(&p, S_LOOP1, 100, a, 2);
	heap_alloc(&p, S_HEAP2, HEAP + 800, 48);               /* inside the first */
	summary(&p, S_LOOP1, 100, a, 2);
	heap_alloc(&p, S_HEAP3, HEAP + 1596, 64);              /* over its last granule */
	summary(&p, S_LOOP2, 100, a, 2);
	heap_free(&p, HEAP + 800);
	summary(&p, S_LOOP2, 100, a, 2);
	heap_realloc(&p, S_HEAP1, HEAP, HEAP + 0x10000, 3200);  /* moved away */
	summary(&p, S_LOOP3, 100, a, 2);
	a[0] = acc(S_ACC0 + 2, HEAP + 0x10000, 8, 8);
	summary(&p, S_LOOP3, 400, a, 1);
	heap_alloc(&p, S_HEAP2, HEAP + 0x8000, BIG);            /* a large one over it, ... */
	summary(&p, S_LOOP3, 400, a, 1);
	heap_free(&p, HEAP + 0x8000);                           /* ... cleared in bulk */
	summary(&p, S_LOOP3, 400, a, 1);
	heap_alloc(&p, S_HEAP2, HEAP + 0x80000, BIG);           /* a large one, then one over */
	heap_alloc(&p, S_HEAP3, HEAP + 0x80000 + BIG - 2048, 4096);   /* its end, ... */
	a[0] = acc(S_ACC0 + 3, HEAP + 0x80000 + BIG + 2040, -8, 8);
	summary(&p, S_LOOP1, 512, a, 1);
	heap_free(&p, HEAP + 0x80000);                          /* ... half unmapped by its */
	summary(&p, S_LOOP1, 512, a, 1);                        /* bulk clear */
	pair_check(&p, "stale extents");
	pair_close(&p);
}

/*
 * Walks that leave their object, wrap at 2^48, stay on one address, or share a site (twins, whose
 * stream's last address alternates between them).
 */
static void test_edges(void **state)
{
	struct mn_summary_access a[4];
	struct pair p;

	pair_open(&p, true);
	globals(&p);
	heap_alloc(&p, S_HEAP1, HEAP, 160);
	heap_alloc(&p, S_HEAP2, HEAP + 160, 160);
	heap_alloc(&p, S_HEAP3, 0x40, 4096);                   /* where a wrapping walk lands */
	a[0] = acc(S_ACC0, HEAP + 8, 16, 8);                   /* into the next object */
	a[1] = acc(S_ACC0 + 1, HEAP + 4, 0, 4);                /* one address */
	a[2] = acc(S_ACC0 + 2, ADDR_MASK - 16, 8, 8);          /* wraps */
	a[3] = acc(S_ACC0 + 3, GLOBAL + 4, 4, 4);              /* packed globals */
	summary(&p, S_LOOP1, 20, a, 4);
	a[0] = acc(S_ACC0 + 4, HEAP, 16, 4);
	a[1] = acc(S_ACC0 + 4, HEAP + 8, 16, 4);               /* twins */
	a[2] = acc(S_ACC0 + 5, HEAP + 300, -16, 4);            /* back out of the first */
	summary(&p, S_LOOP2, 9, a, 3);
	summary(&p, S_LOOP2, 9, a, 0);
	summary(&p, S_LOOP2, 0, a, 3);
	pair_check(&p, "edges");
	pair_close(&p);
}

/*
 * The closed form is taken: 2^44 iterations on one address and a million walks of 2^17 each over
 * one object (the expansion would make about 2^46 and 2^37 calls).  Counts checked by hand.
 */
static void test_o1(void **state)
{
	const uint64_t big = UINT64_C(1) << 44, walks = 1000000, iters = 1 << 17;
	struct mn_summary_access a[2];
	void *st = calloc(1, SA->state_size);
	char *text, want[160];

	assert_non_null(st);
	assert_int_equal(SA->init(st, NULL), 0);
	SA->heap_alloc(st, S_HEAP1, HEAP, 8 * iters);
	a[0] = acc(S_ACC0, HEAP + 8, 0, 8);
	SA->loop_summary(st, S_LOOP1, big, a, 1);
	a[0] = acc(S_ACC0 + 1, HEAP, 8, 8);
	a[1] = acc(S_ACC0 + 2, HEAP + 8 * iters - 4, -8, 4);
	for (uint64_t w = 0; w < walks; w++)
		SA->loop_summary(st, S_LOOP1, iters, a, 2);
	text = section(st);
	snprintf(want, sizeof(want), "totals: {accesses: %" PRIu64 ", cost: %" PRIu64,
		 big + 2 * walks * iters, big + 2 * walks * iters);
	if (!strstr(text, want))
		fail_msg("expected '%s' in:\n%s", want, text);
	assert_non_null(strstr(text, "stride: 8, offset: 0, bytes: 8}"));
	assert_non_null(strstr(text, "stride: 8, offset: 1048572, bytes: 4}"));
	free(text);
	SA->fini(st);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_extents),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_o1),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_random_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
