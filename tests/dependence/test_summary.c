/*
 * dependence's loop summaries (dep_loop_summary(), in closed form by backend/lastaccess.h, the
 * method in lastaccess_internal.h) against the expansion module.h defines: two states of
 * the module, one given each summary whole through its loop_summary handler, the other
 * loop_invoke(site); per iteration k loop_iter(site) and each access j in order, a load or store
 * at (start_j + k * step_j) & (2^48 - 1), value 0; loop_exit(site), all through the module's own
 * handlers.  Both get the same events in between: functions and outer loops around the summaries
 * (0 to 3 loops deep, a loop or function met again under a call, so that one loop site is twice
 * on the stack; an outer loop's iterations mostly repeat its first one's body at a stride, so that
 * summaries meet the sources of its earlier iterations word after word), and single loads and
 * stores of 1 to 16 bytes, unaligned, some across words or a 4 KiB page.  Everything lands in two
 * windows of 3 KiB (heap-like, across a page boundary, and stack-like), so summaries and single
 * accesses meet on the same words.  Their sections must be the same byte for byte, at checkpoints
 * and at the end; a difference fails naming the seed, the checkpoint and the first line that
 * differs.
 *
 * Summaries come in the shapes the closed form takes (1 to 6 streams of one word each at a whole
 * number of words per iteration, -16 to 24 bytes; streams of one step on coinciding words, a[i]
 * with a[i-1] and a[i+2], a load and a store or two stores of one word; step-0 groups on one word;
 * one step in two residues; one site twice; 1 to 40 iterations, or 200 to 599 across the chunks
 * of 256 iterations the closed form sweeps at a time) and in shapes it must refuse and expand (a
 * step not a multiple of 8, 16 bytes, a start across a word, streams of different steps that
 * overlap), with 0-byte streams (which touch nothing).  Seeds run with and without
 * MNEMO_DEP_CONTEXT, with MNEMO_DEP_CLOCK_LIMIT=50 (clock resets inside and around summaries),
 * with the plain row map (test_dep_summary_plain: this test linked with bench/maps/rows_plain.c,
 * which runs those seeds alone), without a site table, and under 61 calls (frames past the 64 that
 * context ids keep).  Made-up cases: addresses at the ends of the 48-bit space and above it, empty
 * summaries, 20 streams, a step over 1 GiB; sources of one access id inside and outside a loop
 * past the 64 frames; shadow slices of two windows (test_alias_order()); and one that checks the
 * closed form is taken: 2^32 - 2 iterations
 * of a step-0 loop (the most the 32-bit clock allows a closed form: more is expanded, README rule
 * 9), which the expansion could not finish, against its section written by hand.
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

extern const struct mn_module mn_module_dependence;
#define DEP (&mn_module_dependence)

#define ADDR_MASK ((UINT64_C(1) << 48) - 1)
#define WINDOW 3072                                   /* bytes of each address window */
#define HEAP (UINT64_C(0x200000000) + 4096 - 1536)    /* across the page at 0x200001000 */
#define STACK UINT64_C(0x7ffffffde400)

/*
 * The made-up site table: functions 1-3, loops 4-9, then NACC load and store sites (their kind
 * and loop columns do not matter to the module: a summary access says whether it stores).
 */
enum { S_F1 = 1, S_F2, S_F3, S_L1, S_L2, S_L3, S_L4, S_L5, S_L6, S_ACC0 };
#define NFUNC 3
#define NLOOP 6
#define NACC 24

static char *site_table(void)
{
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);

	assert_non_null(f);
	fprintf(f, "mnemo-sites/2\n");
	for (int i = 0; i < NFUNC; i++)
		fprintf(f, "function\tf%d\tt.c\t%d\t0\t\t0\t0\t\n", i + 1, 1 + 10 * i);
	for (int i = 0; i < NLOOP; i++)
		fprintf(f, "loop\tf%d\tt.c\t%d\t2\t\t0\t0\t\n", 1 + i % NFUNC, 40 + i);
	for (int i = 0; i < NACC; i++)
		fprintf(f, "%s\tf1\tt.c\t%d\t3\t\t0\t%d\t\n", i % 2 ? "store" : "load", 50 + i,
			S_L1 + i % NLOOP);
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
	p->sum = calloc(1, DEP->state_size);
	p->exp = calloc(1, DEP->state_size);
	assert_non_null(p->sum);
	assert_non_null(p->exp);
	assert_int_equal(DEP->init(p->sum, p->run), 0);
	assert_int_equal(DEP->init(p->exp, p->run), 0);
}

static char *section(void *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct mn_prof *p;

	assert_non_null(f);
	assert_int_equal(mn_prof_open(&p, f), 0);
	assert_int_equal(DEP->emit(st, p), 0);
	assert_int_equal(mn_prof_close(p), 0);
	fclose(f);
	return text;
}

/* NULL when the two sections are equal byte for byte; else a message naming the first line that
 * differs, for free(). */
static char *pair_diff(struct pair *p, const char *what)
{
	char *x = section(p->sum), *y = section(p->exp), *msg = NULL;
	unsigned line = 1;
	size_t i = 0;

	if (strcmp(x, y)) {
		while (x[i] && x[i] == y[i])
			line += x[i++] == '\n';
		while (i > 0 && x[i - 1] != '\n')
			i--;
		if (asprintf(&msg, "%s: sections differ from line %u:\n  summarized: %.200s\n"
			     "  expanded:   %.200s", what, line, x + i, y + i) < 0)
			msg = NULL;
		assert_non_null(msg);
	}
	free(x);
	free(y);
	return msg;
}

/* The two sections, equal byte for byte; else fails naming the first line that differs. */
static void pair_check(struct pair *p, const char *what)
{
	char *msg = pair_diff(p, what), text[1024];

	if (msg) {
		snprintf(text, sizeof(text), "%s", msg);
		free(msg);
		fail_msg("%s", text);
	}
}

static void pair_close(struct pair *p)
{
	DEP->fini(p->sum);
	DEP->fini(p->exp);
	free(p->sum);
	free(p->exp);
	mn_run_destroy(p->run);
}

/* ---- Scripts: events, then both states fed them ---------------------------------------------- */

#define MAXACC 8

enum ev_kind { EV_FUNC_ENTRY, EV_FUNC_EXIT, EV_INVOKE, EV_ITER, EV_EXIT, EV_ACCESS, EV_SUMMARY,
	       EV_CHECK };

struct ev {
	enum ev_kind kind;
	uint32_t site;              /* the function or loop; unused for EV_ACCESS */
	uint64_t iterations;        /* EV_SUMMARY */
	unsigned n;                 /* EV_SUMMARY: streams in acc[] */
	struct mn_summary_access acc[MAXACC];   /* EV_ACCESS: acc[0], its start the address */
};

struct script {
	struct ev *v;
	unsigned n, cap;
};

static struct ev *script_add(struct script *s, enum ev_kind kind, uint32_t site)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		assert_non_null(s->v);
	}
	s->v[s->n] = (struct ev){ .kind = kind, .site = site };
	return &s->v[s->n++];
}

/* One summary: whole to one state, expanded as module.h says to the other. */
static void summary(struct pair *p, uint32_t loop, uint64_t iterations,
		    const struct mn_summary_access *acc, unsigned n)
{
	DEP->loop_summary(p->sum, loop, iterations, acc, n);
	DEP->loop_invoke(p->exp, loop);
	for (uint64_t k = 0; k < iterations; k++) {
		DEP->loop_iter(p->exp, loop);
		for (unsigned j = 0; j < n; j++)
			(acc[j].store ? DEP->store : DEP->load)(p->exp, acc[j].site,
				(acc[j].start + k * (uint64_t)acc[j].step) & ADDR_MASK, 0,
				acc[j].size);
	}
	DEP->loop_exit(p->exp, loop);
}

static void both(void (*h)(void *, uint32_t), struct pair *p, uint32_t site)
{
	h(p->sum, site);
	h(p->exp, site);
}

/* Feeds the script's events [0, upto) to both states; what names the script in failures. */
static void replay(struct pair *p, const struct script *s, unsigned upto, const char *what)
{
	char where[160];

	for (unsigned i = 0; i < upto; i++) {
		const struct ev *e = &s->v[i];
		const struct mn_summary_access *a = &e->acc[0];

		switch (e->kind) {
		case EV_FUNC_ENTRY: both(DEP->func_entry, p, e->site); break;
		case EV_FUNC_EXIT: both(DEP->func_exit, p, e->site); break;
		case EV_INVOKE: both(DEP->loop_invoke, p, e->site); break;
		case EV_ITER: both(DEP->loop_iter, p, e->site); break;
		case EV_EXIT: both(DEP->loop_exit, p, e->site); break;
		case EV_ACCESS:
			(a->store ? DEP->store : DEP->load)(p->sum, a->site, a->start, 0, a->size);
			(a->store ? DEP->store : DEP->load)(p->exp, a->site, a->start, 0, a->size);
			break;
		case EV_SUMMARY: summary(p, e->site, e->iterations, e->acc, e->n); break;
		case EV_CHECK:
			snprintf(where, sizeof(where), "%s, event %u", what, i);
			pair_check(p, where);
			break;
		}
	}
	snprintf(where, sizeof(where), "%s, at the end", what);
	pair_check(p, where);
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

#define MAXDEPTH 6          /* frames the generator opens at most */
#define MAXLOOPS 3          /* outer loop frames at most */

struct gen {
	struct script s;
	uint32_t stack[MAXDEPTH];   /* the sites of the open frames, outermost first */
	bool is_loop[MAXDEPTH];
	unsigned depth, loops;
	unsigned budget;            /* items left to generate */
	unsigned since_check;
	uint64_t recent[8];         /* addresses accessed lately, for summaries to meet */
	unsigned nrecent;
};

static void remember(struct gen *g, uint64_t addr)
{
	g->recent[g->nrecent++ % 8] = addr;
}

/* A loop site for a loop opened now: one already on the stack sometimes (under a call), never
 * the loop whose frame is on top (a loop is not invoked inside its own body but through a call). */
static uint32_t pick_loop(const struct gen *g)
{
	uint32_t site;

	do {
		if (g->depth && below(3) == 0)
			site = g->stack[below(g->depth)];
		else
			site = S_L1 + (uint32_t)below(NLOOP);
	} while (site < S_L1 || (g->depth && g->is_loop[g->depth - 1] &&
				 g->stack[g->depth - 1] == site));
	return site;
}

static uint32_t pick_func(const struct gen *g)
{
	for (unsigned i = 0; g->depth && i < 4 && below(2); i++) {   /* recursion, sometimes */
		uint32_t site = g->stack[below(g->depth)];

		if (site < S_L1)
			return site;
	}
	return S_F1 + (uint32_t)below(NFUNC);
}

/* An address in one of the windows, any byte. */
static uint64_t window_addr(bool stack)
{
	return (stack ? STACK : HEAP) + below(WINDOW);
}

static void random_access(struct gen *g)
{
	static const uint32_t sizes[] = { 1, 2, 4, 8, 16 };
	struct ev *e = script_add(&g->s, EV_ACCESS, 0);

	e->acc[0] = (struct mn_summary_access){ .start = window_addr(below(4) == 0),
						.site = S_ACC0 + (uint32_t)below(NACC),
						.size = sizes[below(5)], .store = below(2) };
	remember(g, e->acc[0].start);
}

static const int64_t steps[] = { -16, -8, 0, 8, 16, 24 };

/* 1 to 40 mostly; 200 to 599 sometimes, across the closed form's chunks of 256 iterations. */
static uint64_t random_iterations(void)
{
	switch (below(12)) {
	case 0: case 1: return 1;
	case 2: case 3: return 2;
	case 4: return 200 + below(400);
	default: return 1 + below(40);
	}
}

/* Gives stream a a shape the closed form must refuse (or, for size 0, skip). */
static void spoil(struct mn_summary_access *a, const struct mn_summary_access *first)
{
	switch (below(5)) {
	case 0:                                          /* a step not a multiple of 8 */
		a->step = (below(2) ? -1 : 1) * (int64_t)(4 + 8 * below(3) + (below(3) == 0));
		break;
	case 1:                                          /* 16 bytes */
		a->size = 16;
		if (below(2))
			a->start &= ~UINT64_C(7);
		break;
	case 2:                                          /* a start across a word */
		a->size = 2 + (uint32_t)below(7);
		a->start = (a->start & ~UINT64_C(7)) + 8 - a->size + 1 + below(a->size - 1);
		break;
	case 3:                                          /* another step, on the first's word */
		a->start = first->start;
		a->step = first->step + 8 * (1 + (int64_t)below(2));
		break;
	default:                                         /* touches nothing */
		a->size = 0;
		break;
	}
}

/*
 * Streams of one step e mostly, their words m * e apart (m in [-2, 2]: a[i-2] .. a[i+2]) or in
 * the other residue of step 16 and 24, a copy of an earlier stream's word sometimes (a load and
 * a store of it, two stores); sometimes a stream of another step far off (its range apart), and
 * in one summary in four a stream the closed form refuses.
 */
static void random_summary(struct gen *g)
{
	static const uint32_t sizes[] = { 1, 2, 4, 8, 8 };
	struct ev *e = script_add(&g->s, EV_SUMMARY, pick_loop(g));
	int64_t step = steps[below(6)];
	uint64_t base = window_addr(below(4) == 0) & ~UINT64_C(7);
	uint32_t sites[NACC];

	if (g->nrecent && below(2))   /* where something was accessed lately */
		base = g->recent[below(g->nrecent < 8 ? g->nrecent : 8)] & ~UINT64_C(7);
	for (unsigned i = 0; i < NACC; i++)
		sites[i] = S_ACC0 + i;
	for (unsigned i = NACC - 1; i > 0; i--) {   /* each stream its own site, mostly */
		unsigned j = (unsigned)below(i + 1);
		uint32_t t = sites[i];

		sites[i] = sites[j];
		sites[j] = t;
	}
	e->iterations = random_iterations();
	e->n = 1 + (unsigned)below(6);
	for (unsigned j = 0; j < e->n; j++) {
		struct mn_summary_access *a = &e->acc[j];
		uint64_t word = base + (uint64_t)((int64_t)below(5) - 2) * (uint64_t)step;

		a->step = step;
		a->size = sizes[below(5)];
		a->site = sites[j];
		a->store = below(2);
		if (step == 0)
			word = base + 8 * (below(4) == 0);      /* step-0 groups: one word or two */
		else if ((step == 16 || step == 24) && below(3) == 0)
			word += 8;                              /* the other residue */
		if (j && below(3) == 0)
			word = e->acc[below(j)].start & ~UINT64_C(7);
		if (below(10) == 0) {                           /* another step, far away */
			a->step = steps[below(6)];
			word = window_addr(word < STACK) & ~UINT64_C(7);
		}
		a->start = word + below(9 - a->size);
	}
	if (e->n > 1 && below(8) == 0)
		e->acc[e->n - 1].site = e->acc[0].site;         /* a twin: one site twice */
	if (below(4) == 0)
		spoil(&e->acc[below(e->n)], &e->acc[0]);
	remember(g, e->acc[below(e->n)].start);
}

static void block(struct gen *g);

/*
 * The events [first, last) again for iteration k, their addresses moved by k * stride bytes, but
 * every third event's, which stay (a[0..n) read again in every iteration); a summary at every
 * fifth place runs k more iterations (a triangular nest); checks left out.
 */
static void copy_body(struct gen *g, unsigned first, unsigned last, unsigned k, int64_t stride)
{
	for (unsigned i = first; i < last; i++) {
		uint64_t shift = (i - first) % 3 == 2 ? 0 : (uint64_t)((int64_t)k * stride);
		struct ev *e;

		if (g->s.v[i].kind == EV_CHECK)
			continue;
		e = script_add(&g->s, g->s.v[i].kind, 0);
		*e = g->s.v[i];
		for (unsigned j = 0; j < (e->kind == EV_SUMMARY ? e->n : 1); j++)
			e->acc[j].start += shift;
		if (e->kind == EV_SUMMARY && (i - first) % 5 == 4)
			e->iterations += k;
	}
}

/*
 * An outer loop of 0 to 5 iterations.  Mostly, as in a program, every iteration runs the first
 * one's body again, its addresses moved by a fixed stride (copy_body()), so that a summary meets,
 * word after word, the sources of earlier iterations at distances 1, 2, ...; else a new body
 * each time.
 */
static void random_loop(struct gen *g)
{
	static const int64_t strides[] = { 0, 8, -8, 16, 24, 64, -40, 4 };
	uint32_t site = pick_loop(g);
	unsigned iters = (unsigned)below(6), first = 0, last = 0;
	int64_t stride = strides[below(8)];
	bool again = below(4) != 0;

	script_add(&g->s, EV_INVOKE, site);
	g->stack[g->depth] = site;
	g->is_loop[g->depth++] = true;
	g->loops++;
	for (unsigned k = 0; k < iters; k++) {
		script_add(&g->s, EV_ITER, site);
		if (k && again) {
			copy_body(g, first, last, k, stride);
			continue;
		}
		first = g->s.n;
		block(g);
		last = g->s.n;
	}
	g->loops--;
	g->depth--;
	script_add(&g->s, EV_EXIT, site);
}

static void random_call(struct gen *g)
{
	uint32_t site = pick_func(g);

	script_add(&g->s, EV_FUNC_ENTRY, site);
	g->stack[g->depth] = site;
	g->is_loop[g->depth++] = false;
	block(g);
	g->depth--;
	script_add(&g->s, EV_FUNC_EXIT, site);
}

/* A few items: single accesses, summaries, loops and calls around more of them. */
static void block(struct gen *g)
{
	unsigned items = 1 + (unsigned)below(4);

	for (unsigned i = 0; i < items && g->budget; i++) {
		unsigned r = (unsigned)below(20);

		g->budget--;
		if (r < 6)
			random_access(g);
		else if (r < 14 || g->depth == MAXDEPTH)
			random_summary(g);
		else if (r < 17 && g->loops < MAXLOOPS)
			random_loop(g);
		else
			random_call(g);
		if (++g->since_check == 25) {
			script_add(&g->s, EV_CHECK, 0);
			g->since_check = 0;
		}
	}
}

/*
 * A script of about `items` items; deep: inside DEEP calls, so that its own frames cross the 64
 * that context ids keep (README rule 7): past them, accesses inside an inner loop and before it
 * have one context, so one access id.
 */
#define DEEP 61

static struct script random_script(uint64_t seed, unsigned items, bool deep)
{
	struct gen g = { .budget = items };

	rng = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	for (unsigned i = 0; deep && i < DEEP; i++)
		script_add(&g.s, EV_FUNC_ENTRY, S_F2 + i % 2);
	while (g.budget)
		block(&g);
	for (unsigned i = DEEP; deep && i-- > 0;)
		script_add(&g.s, EV_FUNC_EXIT, S_F2 + i % 2);
	return g.s;
}

#ifdef DEP_ROWS_PLAIN
static const bool rows_plain = true;
#else
static const bool rows_plain = false;
#endif

/* Seed i's settings: contexts, a small clock, the plain table, no site table, deep.  The plain
 * table's seeds run in both builds; the plain build runs those alone. */
static void run_seed(uint64_t seed)
{
	bool context = seed % 3 == 1, small_clock = seed % 4 == 2, plain = seed % 7 == 3;
	bool deep = seed % 5 == 4;
	struct script s = random_script(seed, 120, deep);
	char what[96];
	struct pair p;

	if (context)
		setenv("MNEMO_DEP_CONTEXT", "1", 1);
	if (small_clock)
		setenv("MNEMO_DEP_CLOCK_LIMIT", "50", 1);
	if (rows_plain && !plain) {
		free(s.v);
		return;
	}
	pair_open(&p, seed % 10 != 9);
	snprintf(what, sizeof(what), "seed %" PRIu64 "%s%s%s%s", seed, context ? " context" : "",
		 small_clock ? " clock-limit 50" : "", rows_plain ? " plain" : "", deep ? " deep" : "");
	replay(&p, &s, s.n, what);
	pair_close(&p);
	unsetenv("MNEMO_DEP_CONTEXT");
	unsetenv("MNEMO_DEP_CLOCK_LIMIT");
	free(s.v);
}

static void test_random(void **state)
{
	for (uint64_t seed = 1; seed <= 200; seed++)
		run_seed(seed);
}

/* ---- Made-up cases --------------------------------------------------------------------------- */

static struct mn_summary_access acc(uint32_t site, uint64_t start, int64_t step, uint32_t size,
				    bool store)
{
	return (struct mn_summary_access){ .site = site, .start = start, .step = step,
					   .size = size, .store = store };
}

/*
 * Walks that leave the 48-bit space at either end (refused, expanded with the mask), a start
 * above it, summaries of no access, of one iteration and of none (which the pass never sends),
 * inside a loop of another function; 20
 * streams of one class (more than dep_loop_summary() keeps on its stack), and a step of more than
 * a 1 GiB slice.
 */
static void test_edges(void **state)
{
	struct mn_summary_access a[4], many[20];
	struct pair p;

	pair_open(&p, true);
	DEP->store(p.sum, S_ACC0, 0x10, 0, 8);
	DEP->store(p.exp, S_ACC0, 0x10, 0, 8);
	both(DEP->func_entry, &p, S_F1);
	both(DEP->loop_invoke, &p, S_L1);
	for (int k = 0; k < 3; k++) {
		both(DEP->loop_iter, &p, S_L1);
		a[0] = acc(S_ACC0 + 1, ADDR_MASK - 15, 8, 8, true);          /* wraps to 0x0 */
		a[1] = acc(S_ACC0 + 2, 0x18, -8, 8, false);                  /* below 0 */
		a[2] = acc(S_ACC0 + 3, 0x10 | UINT64_C(0xabcd) << 48, 0, 4, false);
		a[3] = acc(S_ACC0 + 4, 0x10, 0, 8, true);
		summary(&p, S_L2, 5, a, 4);
		summary(&p, S_L2, 5, a + 3, 1);
		summary(&p, S_L3, 1, a, 2);
		summary(&p, S_L3, 7, a, 0);
		summary(&p, S_L3, 0, a, 2);                                  /* not from the pass */
		both(DEP->func_entry, &p, S_F2);
		summary(&p, S_L1, 3, a + 3, 1);                              /* loop 4 twice */
		both(DEP->func_exit, &p, S_F2);
		for (unsigned j = 0; j < 20; j++)
			many[j] = acc(S_ACC0 + j, HEAP + 8 * (j * 7 % 20) + j % 3, 8, 1 + j % 4,
				      j % 3 == 1);
		summary(&p, S_L4, 300, many, 20);
		a[0] = acc(S_ACC0 + 5, HEAP, (INT64_C(1) << 30) + 8, 8, true);
		a[1] = acc(S_ACC0 + 6, STACK + 8, 0, 8, false);
		summary(&p, S_L5, 3, a, 2);
	}
	both(DEP->loop_exit, &p, S_L1);
	both(DEP->func_exit, &p, S_F1);
	pair_check(&p, "edges");
	pair_close(&p);
}

/*
 * Shadow slices claimed in the order the accesses come.  Stream 0 walks from one 1 GiB slice of
 * the folded space into the next (a store at 9 GiB - 8, then 9 GiB) and stream 1, in another 4 TiB
 * window, stores to one word of that next slice (2^42 + 9 GiB, step 0), two iterations.  Expanded,
 * stream 1's first store claims slice 9 for its window, stream 0's second store is the alias
 * (lost.aliases: 1) and stream 1's second store makes a carried waw.  The closed form once
 * claimed the slices of each stream's whole range before it decided, so that slice 9 went to
 * stream 0's window, and the expansion that followed dropped every store of stream 1 instead
 * (aliases 2, or 4 at 16 bytes, and no waw row); it now takes a summary whole only when every
 * slice is ours already (slices_ours()).  Only layouts whose regions alias (none at the default
 * 42-bit fold in an ordinary program; possible under AddressSanitizer) can meet it.
 */
static void test_alias_order(void **state)
{
	static const uint32_t sizes[] = { 8, 16 };
	const uint64_t slice = UINT64_C(1) << 30, window = UINT64_C(1) << 42;
	char *msg[2], text[1024];

	for (unsigned v = 0; v < 2; v++) {
		struct mn_summary_access a[2] = {
			acc(S_ACC0, 9 * slice - 8, 8, 8, true),
			acc(S_ACC0 + 1, window + 9 * slice, 0, sizes[v], true) };
		char what[64];
		struct pair p;

		snprintf(what, sizeof(what), "alias order, stream 1 of %u bytes", sizes[v]);
		pair_open(&p, true);
		summary(&p, S_L1, 2, a, 2);
		msg[v] = pair_diff(&p, what);
		pair_close(&p);
	}
	snprintf(text, sizeof(text), "%s\n%s", msg[0] ? msg[0] : "", msg[1] ? msg[1] : "");
	if (msg[0] || msg[1]) {
		free(msg[0]);
		free(msg[1]);
		fail_msg("%s", text);   /* both cases' first differing lines */
	}
}

/*
 * Past the 64 frames that context ids keep, an access inside an inner loop has the context, so
 * the access id, of one before that loop was invoked: a summary's boundary meets, word after word,
 * sources of one access id from outside and from inside the inner loop's invocation (loop 0 and
 * loop 4 rows, then loop 5's), and from its earlier iterations.
 */
static void test_deep(void **state)
{
	struct mn_summary_access a[2] = { acc(S_ACC0, HEAP, 8, 8, false),
					  acc(S_ACC0 + 1, STACK, -8, 4, true) };
	struct pair p;

	pair_open(&p, true);
	for (unsigned i = 0; i < 64 - 1; i++)
		both(DEP->func_entry, &p, S_F1 + i % 2);
	DEP->store(p.sum, S_ACC0 + 2, HEAP, 0, 8);                 /* before the loops */
	DEP->store(p.exp, S_ACC0 + 2, HEAP, 0, 8);
	both(DEP->loop_invoke, &p, S_L1);                          /* frame 64 */
	for (unsigned k = 0; k < 3; k++) {
		both(DEP->loop_iter, &p, S_L1);
		DEP->store(p.sum, S_ACC0 + 2, HEAP + 8 + 16 * k, 0, 8);
		DEP->store(p.exp, S_ACC0 + 2, HEAP + 8 + 16 * k, 0, 8);
		both(DEP->loop_invoke, &p, S_L2);                  /* frame 65: left out of ids */
		for (unsigned j = 0; j < 3; j++) {
			both(DEP->loop_iter, &p, S_L2);
			DEP->store(p.sum, S_ACC0 + 2, HEAP + 16 + 16 * k + 8 * j, 0, 8);
			DEP->store(p.exp, S_ACC0 + 2, HEAP + 16 + 16 * k + 8 * j, 0, 8);
			summary(&p, S_L3, 9, a, 2);
		}
		both(DEP->loop_exit, &p, S_L2);
	}
	both(DEP->loop_exit, &p, S_L1);
	for (unsigned i = 64 - 1; i-- > 0;)
		both(DEP->func_exit, &p, S_F1 + i % 2);
	pair_check(&p, "deep");
	pair_close(&p);
}

/*
 * The closed form is taken: a load and a store of one word, 2^32 - 2 iterations (the expansion
 * would make 2^33 calls), after a store to that word before the loop.  The section by hand:
 * iteration 0's load reads, and its store overwrites, the store before the loop (loop 0: the
 * loop's invocation began after it); every later load reads, and every later store overwrites,
 * the loop's store one iteration back (carried at distance 1, 2^32 - 3 times); each store
 * follows its own iteration's load (2^32 - 2 times, inside an iteration).
 */
static void test_closed_form_taken(void **state)
{
	const uint64_t big = UINT32_MAX - 1;
	struct mn_summary_access a[2] = { acc(S_ACC0, HEAP + 8, 0, 4, false),
					  acc(S_ACC0 + 1, HEAP + 12, 0, 4, true) };
	void *st = calloc(1, DEP->state_size);
	char *text, want[2048];
	struct mn_run *run = NULL;
	char why[256] = "", *t = site_table();

	assert_int_equal(mn_run_create(&run, t, strlen(t), why, sizeof(why)), 0);
	free(t);
	assert_non_null(st);
	assert_int_equal(DEP->init(st, run), 0);
	DEP->store(st, S_ACC0 + 2, HEAP + 8, 0, 8);
	DEP->loop_summary(st, S_L1, big, a, 2);
	text = section(st);
	snprintf(want, sizeof(want),
		 "granularity: 8\n"
		 "context: false\n"
		 "loops:\n"
		 "- {loop: %d, invocations: 1, iterations: %" PRIu64 "}\n"
		 "- {loop: %d, invocations: 0, iterations: 0}\n"
		 "- {loop: %d, invocations: 0, iterations: 0}\n"
		 "- {loop: %d, invocations: 0, iterations: 0}\n"
		 "- {loop: %d, invocations: 0, iterations: 0}\n"
		 "- {loop: %d, invocations: 0, iterations: 0}\n"
		 "dependences:\n"
		 "- {loop: 0, kind: raw, src: %d, dst: %d, carried: false, count: 1}\n"
		 "- {loop: 0, kind: waw, src: %d, dst: %d, carried: false, count: 1}\n"
		 "- {loop: %d, kind: war, src: %d, dst: %d, carried: false, count: %" PRIu64 "}\n"
		 "- {loop: %d, kind: raw, src: %d, dst: %d, carried: true, count: %" PRIu64
		 ", min_distance: 1, max_distance: 1}\n"
		 "- {loop: %d, kind: waw, src: %d, dst: %d, carried: true, count: %" PRIu64
		 ", min_distance: 1, max_distance: 1}\n"
		 "lost: {aliases: 0, nomem: 0, clipped: 0, clock_resets: 0}\n",
		 S_L1, big, S_L2, S_L3, S_L4, S_L5, S_L6,
		 S_ACC0 + 2, S_ACC0,
		 S_ACC0 + 2, S_ACC0 + 1,
		 S_L1, S_ACC0, S_ACC0 + 1, big,
		 S_L1, S_ACC0 + 1, S_ACC0, big - 1,
		 S_L1, S_ACC0 + 1, S_ACC0 + 1, big - 1);
	if (strcmp(text, want)) {
		fprintf(stderr, "expected the section\n%s\ngot\n%s", want, text);
		fail_msg("the section differs from the one written by hand (both above)");
	}
	free(text);
	DEP->fini(st);
	free(st);
	mn_run_destroy(run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_alias_order),
		cmocka_unit_test(test_closed_form_taken),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
