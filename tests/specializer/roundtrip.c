/*
 * Round trip of a generated callbacks.c: linked with it by test_specialize, this program calls
 * every callback with known arguments, catches the records in a plain array standing in for the
 * queue, and decodes them with __mnemo_wire and mn_wire_get(), exactly as the backend will.
 *
 * Checks, for every event: a record of __mnemo_wire.nwords[code] words, or nothing when that is 0;
 * the code in bits 0..7 of word 0; each argument the wire sends decodes to the value passed,
 * truncated (addresses, ids) or saturated (sizes) to its width; arguments not sent decode as 0.
 * Loads and stores are checked through both their entry points, __mnemo_load_ptr giving the same
 * record as __mnemo_load; with --pointer-only (the callbacks were made for modules that all take
 * `accesses: pointer`), __mnemo_load and __mnemo_store must push nothing (with
 * --pointer-only=load or =store, only the one: the modules taking every access list only the other
 * event).
 * On a wire with the
 * pointer flag (queue.h) the _ptr ones' code has MN_CODE_POINTER or'ed in and the plain ones' not,
 * and a plain record may carry 0 for `value` (when only pointer-only modules take it); without it
 * no code has it.  A line "flags: 0x.." gives the wire's flags, and a line "codes: load 0x01, ..."
 * the low byte of word 0 each of the four pushed ("-": nothing), "(value 0)" after a plain one
 * whose value was sent as 0.  Callbacks built with a
 * sampling countdown (spec.h `sample:`) send every access at the runtime's default periods (1);
 * with --sample, the periods of N = 1000 are set and 1,000,000 loads and stores must send
 * 900..1100 records, every gap between two within [500, 1500].  Callbacks of `--queue=lamport`
 * push through mn_queue_push_lamport() (defined here, into the same array) and define
 * __mnemo_queue_lamport = 1; the others do neither: a line "queue: lamport" says which.
 * The loop summary entry points (abi.h) push every argument when __mnemo_summary_plan says on, and
 * nothing when off; words of a record that carry no argument (padding) must be 0.  A line
 * "plan: 0x..." gives the plan.  With --sample-summaries=N (callbacks with a countdown and
 * summaries on), at the periods of N: summarized loops must send exactly the records of the same
 * loops run per access (check_sampled_summaries()).
 * The entry points of mixed loops push their records (mixed_load and mixed_store after a fresh
 * loop_summary_open, loop_summary_at through a mixed_load far from it) when the plan says mixed
 * loops on, which needs summaries on, and nothing when off; with a sampling countdown, at the
 * default periods.  With --mixed, mixed loops run through them, nested and resynchronized, must
 * give records of the layout the design fixes whose positions say each access's iteration and
 * rank, with loop_summary_at exactly where the iteration gap is not 0 or 1 (check_mixed()).
 * With --sample-mixed=N (a countdown and mixed loops on), at the periods of N: mixed loops must
 * send exactly the records of the same loops run per access, and lost ones their loop_summary
 * record alone (check_sampled_mixed()).
 * When a module takes `value`, each load and store is followed by its `value` record (no value
 * is published here).
 * Prints "sent: <events>" and exits 0, or prints what it expected and got and exits 1.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "queue.h"

extern const struct mn_wire __mnemo_wire;
extern const uint32_t __mnemo_heap_events;

/* The producer side of the queue, reduced to an array the test reads back. */
extern __thread uint32_t mn_heap_pending_site;
__thread uint64_t *mn_q_cur, *mn_q_end, *mn_q_base;
__thread unsigned char mn_q_busy;
__thread uint32_t mn_heap_pending_site;
static uint64_t buf[64];
/* The runtime's sampling periods (abi.h), at their defaults: every access. */
uint32_t mn_sample_lo = 1, mn_sample_span = 1;
/* The runtime's MNEMO_ALLOC_DEPTH (abi.h), at its default: both callers. */
uint64_t mn_alloc_context_mask = UINT64_MAX;

void mn_queue_push_slow(const uint64_t *words, unsigned n)
{
	fprintf(stderr, "roundtrip: unexpected slow path (%u words)\n", n);
	exit(1);
}

void mn_queue_push_nested(void)
{
	fprintf(stderr, "roundtrip: unexpected nested push\n");
	exit(1);
}

/* --queue=lamport's push, into the same array; weak: only those callbacks define the flag. */
extern const unsigned char __mnemo_queue_lamport __attribute__((weak));
static unsigned lamport_pushes;

void mn_queue_push_lamport(const uint64_t *words, unsigned n)
{
	lamport_pushes++;
	mn_queue_push(words, n);
}

/* Arguments with bits set above every width, so truncation and saturation show. */
#define SITE   UINT32_C(0x89abcdef)
#define ADDR   ((const void *)UINT64_C(0xfedc123456789abc))
#define OADDR  ((const void *)UINT64_C(0xabcd000011112222))
#define VALUE  UINT64_C(0x0123456789abcdef)
#define SIZE32 UINT32_C(0x12345678)
#define SIZE64 UINT64_C(0x0001000000000005)
#define TYPE   UINT32_C(0x1ff)
#define PID    UINT32_C(4242)
#define STATUS UINT32_C(265)
#define STEP   (-INT64_C(24))                   /* two's complement in 64 bits */
#define NACC   UINT32_C(0x12345)                /* accesses, saturated at 16 bits */
#define ITERS  UINT64_C(0x0123456789abcdef)     /* iterations, saturated at 48 bits */
#define RANK   UINT32_C(256)                    /* a mixed access's rank: at most 256 */
#define CALLER1 UINT64_C(0x9abcdef1)               /* call sites around heap_alloc */
#define CALLER2 UINT64_C(0x00c0ffee)
#define BUF_WORDS (sizeof(buf) / sizeof(buf[0]))

enum fit { T, S };  /* truncated, saturated */

struct call {
	const char *name;
	unsigned code;                   /* from events.yaml: codes never change */
	unsigned nargs;
	uint64_t in[MN_WIRE_MAX_ARGS];   /* as passed, in catalogue order */
	enum fit fit[MN_WIRE_MAX_ARGS];
	bool ptr;                        /* through __mnemo_load_ptr / __mnemo_store_ptr */
};

#define A(p) ((uint64_t)(uintptr_t)(p))

static const struct call calls[] = {
	{ "load", 1, 4, { SITE, A(ADDR), VALUE, SIZE32 }, { T, T, T, S }, false },
	{ "store", 2, 4, { SITE, A(ADDR), VALUE, SIZE32 }, { T, T, T, S }, false },
	{ "load_ptr", 1, 4, { SITE, A(ADDR), VALUE, SIZE32 }, { T, T, T, S }, true },
	{ "store_ptr", 2, 4, { SITE, A(ADDR), VALUE, SIZE32 }, { T, T, T, S }, true },
	{ "pointer_create", 3, 3, { SITE, A(ADDR), TYPE }, { T, T, T }, false },
	/* Inside two calls entered (__mnemo_ctx_enter): context is both, the inner one low. */
	{ "heap_alloc", 4, 4, { SITE, A(ADDR), SIZE64, CALLER1 | CALLER2 << 32 }, { T, T, S, T },
	  false },
	{ "heap_realloc", 5, 4, { SITE, A(OADDR), A(ADDR), SIZE64 }, { T, T, T, S }, false },
	{ "heap_free", 6, 2, { SITE, A(ADDR) }, { T, T }, false },
	{ "stack_alloc", 7, 3, { SITE, A(ADDR), SIZE64 }, { T, T, S }, false },
	{ "stack_free", 8, 2, { SITE, A(ADDR) }, { T, T }, false },
	{ "global", 9, 3, { SITE, A(ADDR), SIZE64 }, { T, T, S }, false },
	{ "func_entry", 10, 1, { SITE }, { T }, false },
	{ "func_exit", 11, 1, { SITE }, { T }, false },
	{ "loop_invoke", 12, 1, { SITE }, { T }, false },
	{ "loop_iter", 13, 1, { SITE }, { T }, false },
	{ "loop_exit", 14, 1, { SITE }, { T }, false },
	{ "program_start", 15, 1, { PID }, { T }, false },
	{ "program_end", 16, 2, { PID, STATUS }, { T, T }, false },
	{ "loop_summary_load", 17, 4, { SITE, A(ADDR), (uint64_t)STEP, SIZE32 }, { T, T, T, S },
	  false },
	{ "loop_summary_store", 18, 4, { SITE, A(ADDR), (uint64_t)STEP, SIZE32 }, { T, T, T, S },
	  false },
	{ "loop_summary", 19, 3, { SITE, NACC, ITERS }, { T, S, S }, false },
	{ "loop_summary_open", 20, 2, { SITE, NACC }, { T, S }, false },
	/* In iteration 0 of a loop just opened: position rank << 1 | next, next = 1. */
	{ "mixed_load", 21, 4, { SITE, A(ADDR), SIZE32, RANK << 1 | 1 }, { T, T, S, T }, false },
	{ "mixed_store", 22, 4, { SITE, A(ADDR), SIZE32, RANK << 1 | 1 }, { T, T, S, T }, false },
	/* A mixed_load in iteration ITERS of a loop just opened: loop_summary_at first. */
	{ "loop_summary_at", 23, 1, { ITERS }, { S }, false },
	{ "loop_summary_close", 24, 2, { SITE, ITERS }, { T, S }, false },
};

/* A mixed loop just opened, its record dropped: the next mixed record is in its iteration 0. */
static void mixed_open(void)
{
	__mnemo_loop_summary_open(SITE, NACC);
	for (unsigned i = 0; i < BUF_WORDS; i++)
		buf[i] = 0;
	mn_q_cur = buf;
}

static void call(const struct call *c)
{
	switch (c->code) {
	case 1:
		if (c->ptr)
			__mnemo_load_ptr(SITE, ADDR, VALUE, SIZE32);
		else
			__mnemo_load(SITE, ADDR, VALUE, SIZE32);
		break;
	case 2:
		if (c->ptr)
			__mnemo_store_ptr(SITE, ADDR, VALUE, SIZE32);
		else
			__mnemo_store(SITE, ADDR, VALUE, SIZE32);
		break;
	case 3: __mnemo_pointer_create(SITE, ADDR, TYPE); break;
	case 4: {
		uint64_t outer = __mnemo_ctx_enter((uint32_t)CALLER2);
		uint64_t inner = __mnemo_ctx_enter((uint32_t)CALLER1);

		__mnemo_heap_alloc(SITE, ADDR, SIZE64);
		__mnemo_ctx_leave(inner);
		__mnemo_ctx_leave(outer);
		break;
	}
	case 5: __mnemo_heap_realloc(SITE, OADDR, ADDR, SIZE64); break;
	case 6: __mnemo_heap_free(SITE, ADDR); break;
	case 7: __mnemo_stack_alloc(SITE, ADDR, SIZE64); break;
	case 8: __mnemo_stack_free(SITE, ADDR); break;
	case 9: __mnemo_global(SITE, ADDR, SIZE64); break;
	case 10: __mnemo_func_entry(SITE); break;
	case 11: __mnemo_func_exit(SITE); break;
	case 12: __mnemo_loop_invoke(SITE); break;
	case 13: __mnemo_loop_iter(SITE); break;
	case 14: __mnemo_loop_exit(SITE); break;
	case 15: __mnemo_program_start(PID); break;
	case 16: __mnemo_program_end(PID, STATUS); break;
	case 17: __mnemo_loop_summary_load(SITE, ADDR, STEP, SIZE32); break;
	case 18: __mnemo_loop_summary_store(SITE, ADDR, STEP, SIZE32); break;
	case 19: __mnemo_loop_summary(SITE, NACC, ITERS); break;
	case 20: __mnemo_loop_summary_open(SITE, NACC); break;
	case 21: mixed_open(); __mnemo_mixed_load(SITE, ADDR, SIZE32, 0, RANK); break;
	case 22: mixed_open(); __mnemo_mixed_store(SITE, ADDR, SIZE32, 0, RANK); break;
	case 23: mixed_open(); __mnemo_mixed_load(SITE, ADDR, SIZE32, ITERS, RANK); break;
	case 24: __mnemo_loop_summary_close(SITE, ITERS); break;
	}
}

/*
 * The event code that frames a record whose word 0 is w0: its low 8 bits, less MN_CODE_POINTER for
 * a load or store of a pointer value on a wire with the pointer flag; 0, which no event has, when
 * that is no event code.
 */
static unsigned wire_code(uint64_t w0)
{
	unsigned code = w0 & 0xff;

	if ((__mnemo_wire.flags & MN_WIRE_POINTER) &&
	    (code == (1 | MN_CODE_POINTER) || code == (2 | MN_CODE_POINTER)))
		code &= ~MN_CODE_POINTER;
	return code < MN_WIRE_MAX_EVENTS ? code : 0;
}

/* What the four load and store entry points pushed (calls[0..3]): word 0's low byte, or -1. */
static int access_code[4] = { -1, -1, -1, -1 };
static bool access_value_zero[4];   /* its value, which the wire sends, came as 0 */

static uint64_t fit(uint64_t v, unsigned bits, enum fit f)
{
	uint64_t max = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;

	if (f == S)
		return v > max ? max : v;
	return v & max;
}

/*
 * Checks one event's record; returns the number of failures.  pointer_only: bit c->code - 1 set
 * (1 load, 2 store) when that event's plain entry point is expected to push nothing.
 * loop_summary_at comes with the mixed_load record that needs it, after it.
 */
static int check(const struct call *c, unsigned pointer_only)
{
	unsigned nwords = __mnemo_wire.nwords[c->code], pushed, more = 0, code = c->code;
	uint64_t covered[MN_WIRE_MAX_WORDS] = { 0xff };   /* bits of the code and arguments */
	bool flagged = __mnemo_wire.flags & MN_WIRE_POINTER;
	bool empty = !c->ptr && (c->code == 1 || c->code == 2) &&
		     (pointer_only >> (c->code - 1) & 1);
	int access = c->code <= 2 ? (int)(c - calls) : -1;   /* index in access_code[] */
	int bad = 0;

	if (c->ptr && flagged)
		code |= MN_CODE_POINTER;
	if (empty)
		nwords = 0;
	if (c->code == 23)
		more = __mnemo_wire.nwords[21];
	/* A module takes `value` (code 25): with no published set here, every load and store's
	 * value follows its record. */
	if ((c->code == 1 || c->code == 2) && __mnemo_wire.nwords[25] && !empty)
		more = __mnemo_wire.nwords[25];

	for (unsigned i = 0; i < BUF_WORDS; i++)
		buf[i] = 0;
	mn_q_cur = mn_q_base = buf;
	mn_q_end = buf + BUF_WORDS;
	call(c);
	pushed = (unsigned)(mn_q_cur - buf);
	if (pushed != nwords + more) {
		printf("%s: expected %u words pushed, got %u\n", c->name, nwords + more, pushed);
		return 1;
	}
	if (more && (buf[nwords] & 0xff) != (c->code == 23 ? 21 : 25)) {
		printf("%s: expected the %s record after it, got code %u\n", c->name,
		       c->code == 23 ? "mixed_load" : "value", (unsigned)(buf[nwords] & 0xff));
		bad++;
	}
	if (!nwords)
		return 0;
	if (access >= 0)
		access_code[access] = (int)(buf[0] & 0xff);
	if ((buf[0] & 0xff) != code) {
		printf("%s: expected code 0x%02x in word 0, got 0x%02x\n", c->name, code,
		       (unsigned)(buf[0] & 0xff));
		bad++;
	}
	for (unsigned i = 0; i < MN_WIRE_MAX_ARGS; i++) {
		const struct mn_wire_arg *a = &__mnemo_wire.arg[c->code][i];
		uint64_t want = i < c->nargs && a->bits ? fit(c->in[i], a->bits, c->fit[i]) : 0;
		uint64_t got = mn_wire_get(&__mnemo_wire, buf, c->code, i);

		/* A plain load or store's `value` (argument 2) on a flagged wire: maybe 0. */
		if (flagged && access >= 0 && !c->ptr && i == 2 && a->bits && want && !got) {
			access_value_zero[access] = true;
			want = 0;
		}

		if (a->bits && a->word >= nwords) {
			printf("%s: argument %u in word %u of a %u-word record\n", c->name, i,
			       a->word, nwords);
			bad++;
			continue;
		}
		if (a->bits)
			covered[a->word] |= fit(~UINT64_C(0), a->bits, T) << a->shift;
		if (got != want) {
			printf("%s: argument %u: expected 0x%llx, got 0x%llx\n", c->name, i,
			       (unsigned long long)want, (unsigned long long)got);
			bad++;
		}
	}
	for (unsigned k = 0; k < nwords; k++) {
		if (buf[k] & ~covered[k]) {
			printf("%s: word %u: expected 0 outside the arguments, got 0x%llx\n",
			       c->name, k, (unsigned long long)(buf[k] & ~covered[k]));
			bad++;
		}
	}
	return bad;
}

/* --sample: N = 1000 as the runtime sets it; counts the records of 1e6 accesses. */
static int check_sampling(void)
{
	const unsigned n = 1000, calls = 1000000;
	unsigned sent = 0, last = 0, min_gap = ~0u, max_gap = 0;

	mn_sample_lo = n - n / 2;
	mn_sample_span = 2 * (n / 2) + 1;
	for (unsigned i = 1; i <= calls; i++) {
		mn_q_cur = mn_q_base = buf;
		mn_q_end = buf + sizeof(buf) / sizeof(buf[0]);
		if (i & 1)
			__mnemo_load(SITE, ADDR, VALUE, SIZE32);
		else
			__mnemo_store_ptr(SITE, ADDR, VALUE, SIZE32);
		if (mn_q_cur == buf)
			continue;
		/* The first access of a thread is sent; the gaps are from there on. */
		if (sent) {
			min_gap = i - last < min_gap ? i - last : min_gap;
			max_gap = i - last > max_gap ? i - last : max_gap;
		}
		last = i;
		sent++;
	}
	printf("sampled: %u of %u, gaps %u..%u\n", sent, calls, min_gap, max_gap);
	if (sent < 900 || sent > 1100 || min_gap < 500 || max_gap > 1500) {
		printf("sampling: expected 900..1100 records with gaps in 500..1500\n");
		return 1;
	}
	return 0;
}

/* ---- --sample-summaries=N ------------------------------------------------------------------ */

/* A loop as the pass summarizes it: its site, its accesses in iteration order, its iterations. */
struct loop {
	uint32_t site, n;
	uint64_t iters;
	struct { uint32_t site; uint64_t start; int64_t step; uint32_t size; bool store; } a[6];
};

static const struct loop loops[] = {
	{ 10, 3, 1000, { { 11, 0x10000, 4, 4, false }, { 12, 0x7ff000, -8, 8, true },
			 { 13, 0x30000, 0, 1, false } } },
	{ 20, 1, 1, { { 21, 0x40000, 16, 2, true } } },
	{ 30, 0, 5, { { 0 } } },   /* no access left: only loop events (when they are sent) */
	{ 40, 5, 37, { { 41, 0x50000, 4096, 4, false }, { 42, 0x60000, 24, 8, false },
		       { 43, 0x70000, 24, 8, true }, { 44, 0x80000, -1, 1, true },
		       { 45, 0x90000, 8, 8, false } } },
	{ 50, 2, 3333, { { 51, 0xa0000, 8, 8, false }, { 52, 0xb0000, 8, 8, true } } },
	{ 60, 6, 1, { { 61, 0xc0000, 1, 1, false }, { 62, 0xc0001, 1, 1, false },
		      { 63, 0xc0002, 1, 1, false }, { 64, 0xc0003, 1, 1, true },
		      { 65, 0xc0004, 1, 1, true }, { 66, 0xc0005, 1, 1, true } } },
};

#define NLOOPS (sizeof(loops) / sizeof(loops[0]))
#define CAPTURE_WORDS (1u << 20)

/* What a thread pushed: its own array behind the queue's cursors. */
struct capture {
	uint64_t *words;
	size_t n;
};

static void capture_start(struct capture *c)
{
	c->words = calloc(CAPTURE_WORDS, sizeof(uint64_t));
	if (!c->words)
		exit(1);
	mn_q_cur = mn_q_base = c->words;
	mn_q_end = c->words + CAPTURE_WORDS;
}

static void capture_end(struct capture *c)
{
	c->n = (size_t)(mn_q_cur - c->words);
}

/* The load (code 1) and store (code 2) records among c's words. */
static uint64_t capture_accesses(const struct capture *c)
{
	uint64_t sent = 0;

	for (size_t i = 0; i < c->n; i += __mnemo_wire.nwords[wire_code(c->words[i])] ?
					 __mnemo_wire.nwords[wire_code(c->words[i])] : 1)
		sent += wire_code(c->words[i]) == 1 || wire_code(c->words[i]) == 2;
	return sent;
}

/* 0 when got holds exactly ref's words; else 1, after saying where they first differ. */
static int capture_same(const char *what, const struct capture *ref, const struct capture *got)
{
	size_t i = 0;

	if (got->n == ref->n && !memcmp(got->words, ref->words, ref->n * sizeof(uint64_t)))
		return 0;
	while (i < ref->n && i < got->n && ref->words[i] == got->words[i])
		i++;
	printf("%s: expected the per-access run's %zu words, got %zu, first difference at word "
	       "%zu: 0x%llx, expected 0x%llx\n", what, ref->n, got->n, i,
	       i < got->n ? (unsigned long long)got->words[i] : 0ULL,
	       i < ref->n ? (unsigned long long)ref->words[i] : 0ULL);
	return 1;
}

/* Loop l run with its events and accesses per access, as the build without summaries runs it. */
static void run_per_access(const struct loop *l)
{
	__mnemo_loop_invoke(l->site);
	for (uint64_t k = 0; k < l->iters; k++) {
		__mnemo_loop_iter(l->site);
		for (unsigned j = 0; j < l->n; j++) {
			const void *addr = (const void *)(uintptr_t)(l->a[j].start +
								     k * (uint64_t)l->a[j].step);

			if (l->a[j].store)
				__mnemo_store_ptr(l->a[j].site, addr, 0, l->a[j].size);
			else
				__mnemo_load_ptr(l->a[j].site, addr, 0, l->a[j].size);
		}
	}
	__mnemo_loop_exit(l->site);
}

/* Accesses [from, to) of loop l's summary. */
static void push_summary(const struct loop *l, unsigned from, unsigned to)
{
	for (unsigned j = from; j < to; j++) {
		const void *start = (const void *)(uintptr_t)l->a[j].start;

		if (l->a[j].store)
			__mnemo_loop_summary_store(l->a[j].site, start, l->a[j].step, l->a[j].size);
		else
			__mnemo_loop_summary_load(l->a[j].site, start, l->a[j].step, l->a[j].size);
	}
}

/* Loop l summarized, as the pass calls the summary entry points at its exit. */
static void run_summarized(const struct loop *l)
{
	push_summary(l, 0, l->n);
	__mnemo_loop_summary(l->site, l->n, l->iters);
}

/* Accesses outside the loops, per access in both runs. */
static void between(unsigned i)
{
	__mnemo_load(7, (const void *)(uintptr_t)(0x1000 + 8 * i), 0, 8);
	__mnemo_store_ptr(8, (const void *)(uintptr_t)(0x2000 + 8 * i), 0, 8);
}

/*
 * The reference: every loop per access, twice, with accesses between them; then loop 4, then
 * loop 0 (where the summarized run nests 4 inside 0's summary, as a signal handler would).
 */
static void *reference(void *arg)
{
	struct capture *c = arg;

	capture_start(c);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < NLOOPS; i++) {
			between(i);
			run_per_access(&loops[i]);
		}
	}
	run_per_access(&loops[4]);
	run_per_access(&loops[0]);
	between(99);
	capture_end(c);
	return NULL;
}

/* The same with every loop summarized, and the last two nested. */
static void *summarized(void *arg)
{
	struct capture *c = arg;

	capture_start(c);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < NLOOPS; i++) {
			between(i);
			run_summarized(&loops[i]);
		}
	}
	/* Loop 0's exit interrupted after two of its three summary calls by a summarized loop 4. */
	push_summary(&loops[0], 0, 2);
	run_summarized(&loops[4]);
	push_summary(&loops[0], 2, 3);
	__mnemo_loop_summary(loops[0].site, 3, loops[0].iters);
	between(99);
	capture_end(c);
	return NULL;
}

/*
 * A full stash: 513 entries pushed, one past the 512 it holds.  The summary of the top one is lost
 * (its record alone), the summary of the 512 below is sampled; a summary of more entries than
 * pushed is lost too.  Counts the records by code into arg's words (a count per code, 0..255).
 */
static void *overflow(void *arg)
{
	struct capture *c = arg, mine;
	const struct loop *l = &loops[4];   /* 2 accesses */

	capture_start(&mine);
	for (unsigned i = 0; i < 513; i++)
		push_summary(l, i & 1, (i & 1) + 1);
	__mnemo_loop_summary(l->site, 1, 10);
	__mnemo_loop_summary(l->site, 512, 10);
	__mnemo_loop_summary(l->site, 2, 10);
	capture_end(&mine);
	c->words = calloc(256, sizeof(uint64_t));
	if (!c->words)
		exit(1);
	c->n = 0;
	for (size_t i = 0; i < mine.n; i += __mnemo_wire.nwords[wire_code(mine.words[i])]) {
		if (!__mnemo_wire.nwords[wire_code(mine.words[i])]) {
			printf("overflow: a record of code %u, which the wire does not send\n",
			       (unsigned)(mine.words[i] & 0xff));
			exit(1);
		}
		c->words[wire_code(mine.words[i])]++;
		c->n++;
	}
	free(mine.words);
	return NULL;
}

static struct capture run_thread(void *(*fn)(void *))
{
	struct capture c = { 0 };
	pthread_t t;

	if (pthread_create(&t, NULL, fn, &c) || pthread_join(t, NULL)) {
		printf("cannot run a thread\n");
		exit(1);
	}
	return c;
}

/*
 * --sample-summaries=N: the periods of N, as the runtime sets them.  Each thread starts with the
 * same countdown and draws, so the summarized run must send exactly the reference's records: the
 * accesses the countdown picks, at their addresses, and the loop events when they are sent.  A
 * full stash loses only the summaries it could not hold, each as its loop_summary record alone.
 */
static int check_sampled_summaries(unsigned n)
{
	struct capture ref, sum, over;
	uint64_t accesses = 0, sent = 0;
	unsigned load = 1, store = 2, summary = 19;
	int bad = 0;

	mn_sample_lo = n - n / 2;
	mn_sample_span = 2 * (n / 2) + 1;
	ref = run_thread(reference);
	sum = run_thread(summarized);
	over = run_thread(overflow);
	for (unsigned i = 0; i < NLOOPS; i++)
		accesses += 2 * loops[i].iters * loops[i].n;
	accesses += loops[0].iters * loops[0].n + loops[4].iters * loops[4].n;
	sent = capture_accesses(&ref);
	printf("sampled summaries, N = %u: %zu words, %llu loads and stores sent of %llu in loops "
	       "and %u others\n", n, sum.n, (unsigned long long)sent,
	       (unsigned long long)accesses, (unsigned)(4 * NLOOPS + 2));
	bad += capture_same("summarized", &ref, &sum);
	/* About 1 in N of the loops' accesses and the between() ones (4 per round and loop, 2). */
	if (sent * n < accesses / 2 || sent * n > 2 * (accesses + 4 * NLOOPS + 2)) {
		printf("sampled summaries: expected about %llu accesses sent, got %llu\n",
		       (unsigned long long)(accesses / n), (unsigned long long)sent);
		bad++;
	}
	/* Two lost summaries; 512 entries x 10 iterations sampled, with loop events if sent. */
	printf("full stash: %llu loop_summary records, %llu loads, %llu stores, loop events "
	       "%llu %llu %llu\n", (unsigned long long)over.words[summary],
	       (unsigned long long)over.words[load], (unsigned long long)over.words[store],
	       (unsigned long long)over.words[12], (unsigned long long)over.words[13],
	       (unsigned long long)over.words[14]);
	if (over.words[summary] != 2 || !over.words[load] || !over.words[store] ||
	    over.words[12] != (__mnemo_wire.nwords[12] ? 1 : 0) ||
	    over.words[13] != (__mnemo_wire.nwords[13] ? 10 : 0) ||
	    over.words[14] != (__mnemo_wire.nwords[14] ? 1 : 0) ||
	    over.n != over.words[summary] + over.words[load] + over.words[store] +
		      over.words[12] + over.words[13] + over.words[14]) {
		printf("full stash: expected 2 loop_summary records (the lost summaries), loads "
		       "and stores (the summary of 512), and its loop events if sent (1, 10, 1), "
		       "nothing else\n");
		bad++;
	}
	return bad ? 1 : 0;
}

/* ---- --mixed ------------------------------------------------------------------------------ */

/* A record of a mixed loop (events.yaml, codes 20 to 24); no padding, for memcmp(). */
struct rec {
	uint64_t code, site, address, size, position, accesses, iterations;
};

#define MASK(bits) ((UINT64_C(1) << (bits)) - 1)

/*
 * Reads the records of words[0..n) into r[] (at most max); checks that each is one the wire
 * sends, and that mixed_load / mixed_store are 2 words, w0 code | site << 8 | size << 40 and
 * w1 address | position << 48 (the design fixes it: read from the raw words), which
 * __mnemo_wire decodes alike.  Returns how many, or -1.
 */
static long read_records(const uint64_t *words, size_t n, struct rec *r, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n; k++) {
		unsigned code = wire_code(words[i]), len = __mnemo_wire.nwords[code];
		const uint64_t *w = words + i;

		if (!len || i + len > n || k == max) {
			printf("mixed: at word %zu: expected a record the wire sends, got code "
			       "%u\n", i, code);
			return -1;
		}
		r[k] = (struct rec){ .code = code };
		switch (code) {
		case 20:
			r[k].site = mn_wire_get(&__mnemo_wire, w, code, 0);
			r[k].accesses = mn_wire_get(&__mnemo_wire, w, code, 1);
			break;
		case 21:
		case 22:
			if (len != 2) {
				printf("mixed: expected %s records of 2 words, got %u\n",
				       code == 21 ? "mixed_load" : "mixed_store", len);
				return -1;
			}
			r[k].site = w[0] >> 8 & MASK(32);
			r[k].size = w[0] >> 40;
			r[k].address = w[1] & MASK(48);
			r[k].position = w[1] >> 48;
			if (mn_wire_get(&__mnemo_wire, w, code, 0) != r[k].site ||
			    mn_wire_get(&__mnemo_wire, w, code, 1) != r[k].address ||
			    mn_wire_get(&__mnemo_wire, w, code, 2) != r[k].size ||
			    mn_wire_get(&__mnemo_wire, w, code, 3) != r[k].position) {
				printf("mixed: record %zu: __mnemo_wire does not decode it as "
				       "w0 code | site | size, w1 address | position\n", k);
				return -1;
			}
			break;
		case 23:
			r[k].iterations = mn_wire_get(&__mnemo_wire, w, code, 0);
			break;
		case 24:
			r[k].site = mn_wire_get(&__mnemo_wire, w, code, 0);
			r[k].iterations = mn_wire_get(&__mnemo_wire, w, code, 1);
			break;
		}
		i += len;
	}
	return (long)k;
}

/*
 * What a run expects: the records in order, as the design says they must be, and for each mixed
 * record the iteration and rank the access was made with.
 */
struct expect {
	struct rec r[4096];
	uint64_t k[4096];
	uint32_t rank[4096];
	size_t n;
	uint64_t last;   /* mixed_last, as the design defines it */
};

static void add(struct expect *e, struct rec r)
{
	if (e->n == sizeof(e->r) / sizeof(e->r[0])) {
		printf("mixed: more than %zu records\n", e->n);
		exit(1);
	}
	e->r[e->n++] = r;
}

static void exp_open(struct expect *e, uint32_t site, uint32_t n)
{
	__mnemo_loop_summary_open(site, n);
	e->last = UINT64_MAX;
	add(e, (struct rec){ .code = 20, .site = site, .accesses = n });
}

static void exp_close(struct expect *e, uint32_t site, uint64_t iters)
{
	__mnemo_loop_summary_close(site, iters);
	e->last = UINT64_MAX - 1;
	add(e, (struct rec){ .code = 24, .site = site, .iterations = iters });
}

/*
 * A mixed access in iteration k, of rank rank: loop_summary_at(k) first when the gap from the
 * previous mixed record (mixed_last) is neither 0 nor 1, then its record, rank << 1 | next.
 */
static void exp_mixed(struct expect *e, bool store, uint32_t site, uint64_t addr, uint32_t size,
		      uint64_t k, uint32_t rank)
{
	uint64_t gap = k - e->last;

	if (store)
		__mnemo_mixed_store(site, (const void *)(uintptr_t)addr, size, k, rank);
	else
		__mnemo_mixed_load(site, (const void *)(uintptr_t)addr, size, k, rank);
	if (gap > 1) {
		add(e, (struct rec){ .code = 23, .iterations = k });
		gap = 0;
	}
	e->last = k;
	e->k[e->n] = k;
	e->rank[e->n] = rank;
	add(e, (struct rec){ .code = store ? 22 : 21, .site = site, .address = addr,
			     .size = size, .position = (uint64_t)rank << 1 | gap });
}

static uint64_t rng = UINT64_C(88172645463325252);

/* A pseudo-random number in [0, n). */
static uint64_t draw(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/*
 * A mixed loop of `accesses` mixed sites run for iters iterations, each access made in one
 * iteration in `odds` (a conditional access; odds 1: every iteration), with now and then a
 * whole mixed loop nested between two of them, as a signal handler would run one.
 */
static void exp_loop(struct expect *e, uint32_t site, unsigned accesses, uint64_t iters,
		     unsigned odds, bool nest)
{
	exp_open(e, site, 3);
	for (uint64_t k = 0; k < iters; k++) {
		for (unsigned j = 0; j < accesses; j++) {
			if (draw(odds))
				continue;
			exp_mixed(e, j & 1, site + 1 + j, 0x100000 + 64 * k + 8 * j, 8, k,
				  (j * 37) % 257);
			if (nest && !draw(40))
				exp_loop(e, site + 100, 2, 1 + draw(5), 2, false);
		}
	}
	exp_close(e, site, iters);
}

/*
 * Decodes r[0..n) as the backend does (a stack of open loops, each with the iteration of its
 * last mixed record: -1 at the open, set by loop_summary_at, + next at each mixed record) and
 * checks that each mixed record decodes to the iteration and rank of e's access, and that
 * loop_summary_at only comes right before a mixed record, whose next is then 0.  Returns the
 * number of failures.
 */
static int replay(const char *what, const struct rec *r, size_t n, const struct expect *e)
{
	uint64_t last[64];
	unsigned depth = 0;

	for (size_t i = 0; i < n; i++) {
		switch (r[i].code) {
		case 20:
			if (depth == 64) {
				printf("mixed, %s: too deep\n", what);
				return 1;
			}
			last[depth++] = UINT64_MAX;
			break;
		case 23:
			if (!depth || i + 1 == n || (r[i + 1].code != 21 && r[i + 1].code != 22) ||
			    (r[i + 1].position & 1)) {
				printf("mixed, %s: record %zu: expected loop_summary_at in a loop, "
				       "before a mixed record with next = 0\n", what, i);
				return 1;
			}
			last[depth - 1] = r[i].iterations;
			break;
		case 21:
		case 22:
			if (!depth) {
				printf("mixed, %s: record %zu: a mixed record outside a loop\n",
				       what, i);
				return 1;
			}
			last[depth - 1] += r[i].position & 1;
			if (last[depth - 1] != e->k[i] || r[i].position >> 1 != e->rank[i]) {
				printf("mixed, %s: record %zu: expected iteration %llu rank %u, "
				       "decoded iteration %llu rank %llu\n", what, i,
				       (unsigned long long)e->k[i], e->rank[i],
				       (unsigned long long)last[depth - 1],
				       (unsigned long long)(r[i].position >> 1));
				return 1;
			}
			break;
		case 24:
			if (!depth) {
				printf("mixed, %s: record %zu: loop_summary_close without an open "
				       "loop\n", what, i);
				return 1;
			}
			depth--;
			break;
		}
	}
	return 0;
}

/* got[] must be e's records, field by field; returns the number of failures. */
static int compare(const char *what, const struct rec *got, size_t ngot, const struct expect *e)
{
	if (ngot != e->n) {
		printf("mixed, %s: expected %zu records, got %zu\n", what, e->n, ngot);
		return 1;
	}
	for (size_t i = 0; i < ngot; i++) {
		const struct rec *a = &e->r[i], *b = &got[i];

		if (!memcmp(a, b, sizeof(*a)))
			continue;
		printf("mixed, %s: record %zu: expected code %llu site %llu address 0x%llx "
		       "size %llu position 0x%llx accesses %llu iterations %llu, got code %llu "
		       "site %llu address 0x%llx size %llu position 0x%llx accesses %llu "
		       "iterations %llu\n",
		       what, i, (unsigned long long)a->code, (unsigned long long)a->site,
		       (unsigned long long)a->address, (unsigned long long)a->size,
		       (unsigned long long)a->position, (unsigned long long)a->accesses,
		       (unsigned long long)a->iterations, (unsigned long long)b->code,
		       (unsigned long long)b->site,
		       (unsigned long long)b->address, (unsigned long long)b->size,
		       (unsigned long long)b->position, (unsigned long long)b->accesses,
		       (unsigned long long)b->iterations);
		return 1;
	}
	return 0;
}

/* Checks the records captured in c against e (compare(), replay()); frees c. */
static int check_run(const char *what, struct capture *c, const struct expect *e)
{
	static struct rec got[4096];
	long n = read_records(c->words, c->n, got, sizeof(got) / sizeof(got[0]));
	int bad;

	free(c->words);
	if (n < 0)
		return 1;
	bad = compare(what, got, (size_t)n, e);
	return bad ? bad : replay(what, got, (size_t)n, e);
}

/*
 * --mixed: with mixed loops on, a scripted run (gaps 0, 1, 2 and large; a fresh open; a close
 * then a record of the enclosing loop, which must resync; a first record past iteration 0) and
 * random runs (conditional accesses, nested loops) must give exactly the records the design
 * says, which a backend-like replay decodes to each access's iteration and rank.  With mixed
 * loops off, the four entry points must push nothing.
 */
static int check_mixed(void)
{
	static struct expect e;
	struct capture c;
	unsigned nat = 0, nrec = 0;
	int bad;

	if (!(__mnemo_summary_plan & MNEMO_PLAN_MIXED_ON)) {
		capture_start(&c);
		__mnemo_loop_summary_open(1, 0);
		__mnemo_mixed_load(2, ADDR, 4, 0, 0);
		__mnemo_mixed_store(2, ADDR, 4, 7, 0);
		__mnemo_loop_summary_close(1, 8);
		capture_end(&c);
		free(c.words);
		printf("mixed: off, %zu words pushed\n", c.n);
		return c.n ? 1 : 0;
	}

	capture_start(&c);
	e.n = 0;
	exp_open(&e, 10, 2);
	exp_mixed(&e, false, 11, 0x1000, 4, 0, 0);        /* iteration 0 is next after -1 */
	exp_mixed(&e, true, 12, 0x2000, 8, 0, 2);         /* gap 0 */
	exp_mixed(&e, false, 11, 0x1004, 4, 1, 0);        /* gap 1 */
	exp_mixed(&e, false, 11, 0x100c, 4, 3, 1);        /* gap 2: at 3 first */
	exp_mixed(&e, false, 11, 0x100c, 4, 3, 1);
	exp_mixed(&e, true, 12, 0x2020, 8, 4, 2);
	exp_mixed(&e, false, 11, 0x5000, 4, 1000000, 0);  /* far: at 1000000 */
	exp_mixed(&e, false, 11, 0x5004, 4, UINT64_C(1) << 47, 256);  /* a 48-bit iteration */
	exp_close(&e, 10, (UINT64_C(1) << 47) + 1);
	exp_open(&e, 20, 0);                              /* a fresh open: 0 is next again */
	exp_mixed(&e, true, 21, 0x3000, 1, 0, 0);
	exp_open(&e, 40, 0);                              /* a handler's whole loop */
	exp_mixed(&e, false, 41, 0x7000, 2, 0, 0);
	exp_close(&e, 40, 1);
	exp_mixed(&e, true, 21, 0x3001, 1, 0, 1);         /* gap 0, resync after the close */
	exp_mixed(&e, true, 21, 0x3002, 1, 2, 0);         /* gap 2 */
	exp_open(&e, 30, 1);                              /* a handler's whole loop */
	exp_mixed(&e, false, 31, 0x4000, 2, 0, 1);
	exp_mixed(&e, false, 31, 0x4008, 2, 1, 1);
	exp_close(&e, 30, 2);
	exp_mixed(&e, true, 21, 0x3003, 1, 3, 0);         /* gap 1, resync after the close */
	exp_mixed(&e, true, 21, 0x3004, 1, 4, 0);
	exp_close(&e, 20, 5);
	exp_open(&e, 50, 1);
	exp_mixed(&e, false, 51, 0x6000, 16, 5, 1);       /* the first record in iteration 5 */
	exp_close(&e, 50, 6);
	capture_end(&c);
	/* The design's answers, whatever exp_mixed() says: at 0 and 3 after the closes... */
	for (size_t i = 1; i < e.n; i++) {
		uint64_t k = e.r[i].address == 0x3001 ? 0 : 3;

		if ((e.r[i].address == 0x3001 || e.r[i].address == 0x3003) &&
		    (e.r[i - 1].code != 23 || e.r[i - 1].iterations != k)) {
			printf("mixed: expected loop_summary_at after the nested close\n");
			return 1;
		}
		/* ... and none before 0x1004 (gap 1) nor 0x3000 (iteration 0 after the open) */
		if ((e.r[i].address == 0x1004 || e.r[i].address == 0x3000) &&
		    e.r[i - 1].code == 23) {
			printf("mixed: expected no loop_summary_at before 0x%llx\n",
			       (unsigned long long)e.r[i].address);
			return 1;
		}
	}
	bad = check_run("scripted", &c, &e);
	nrec = (unsigned)e.n;

	for (unsigned round = 0; round < 30 && !bad; round++) {
		capture_start(&c);
		e.n = 0;
		exp_loop(&e, 1000 * (round + 1), 1 + (unsigned)draw(4), 1 + draw(300),
			 1 + (unsigned)draw(4), true);
		capture_end(&c);
		for (size_t i = 0; i < e.n; i++)
			nat += e.r[i].code == 23;
		bad = check_run("random", &c, &e);
	}
	printf("mixed: %u scripted records, %u loop_summary_at in random runs\n", nrec, nat);
	return bad ? 1 : 0;
}

/* ---- --sample-mixed=N ----------------------------------------------------------------------- */

/*
 * A mixed loop as the pass makes it: its summarized accesses (struct loop), and accesses that
 * stay per access, each at its rank (how many summarized accesses come first in an iteration),
 * made in every iteration or (skip > 1) in all but one in `skip`, at addresses no step gives.
 */
struct mixed_loop {
	struct loop l;
	unsigned nm;
	struct { uint32_t site, rank, size; bool store; unsigned skip; } m[4];
};

static const struct mixed_loop mixed_loops[] = {
	/* A histogram: bins[d[i]]++, the load of d[i] summarized. */
	{ { 70, 1, 1000, { { 71, 0xe0000, 4, 4, false } } }, 2,
	  { { 72, 1, 4, false, 0 }, { 73, 1, 4, true, 0 } } },
	/* A conditional access between two summarized ones, in two iterations of three. */
	{ { 80, 2, 777, { { 81, 0xf0000, 8, 8, false }, { 82, 0x100000, 8, 8, true } } }, 1,
	  { { 83, 1, 8, false, 3 } } },
	/* Three at different ranks: before every summarized access, between, after them all. */
	{ { 90, 3, 500, { { 91, 0x110000, 4, 4, false }, { 92, 0x120000, -4, 4, false },
			  { 93, 0x130000, 16, 8, true } } }, 3,
	  { { 94, 0, 2, false, 0 }, { 95, 2, 8, true, 0 }, { 96, 3, 1, false, 2 } } },
	/* Rare: in 1 iteration of 50, so that walks cross many iterations. */
	{ { 100, 2, 1234, { { 101, 0x140000, 8, 8, false }, { 102, 0x150000, 8, 8, true } } }, 1,
	  { { 103, 2, 8, true, 50 } } },
	/* One iteration. */
	{ { 110, 1, 1, { { 111, 0x160000, 1, 1, true } } }, 1, { { 112, 0, 4, false, 0 } } },
};

#define NMIXED (sizeof(mixed_loops) / sizeof(mixed_loops[0]))

/* Whether mixed access j of ml is made in iteration k (skip 50: only when k + j is 49 mod 50). */
static bool mixed_made(const struct mixed_loop *ml, unsigned j, uint64_t k)
{
	if (ml->m[j].skip == 50)
		return (k + j) % 50 == 49;
	return ml->m[j].skip < 2 || (k + j) % ml->m[j].skip;
}

static const void *mixed_addr(const struct mixed_loop *ml, unsigned j, uint64_t k)
{
	return (const void *)(uintptr_t)(0x800000 + 0x10000 * j +
					 (k * UINT64_C(2654435761) % 4096) * ml->m[j].size);
}

/*
 * A build that sends no loop event counts a mixed loop's mixed accesses down as they come and
 * walks its summarized ones at its close (specialize.c, put_mixed_sampling()): the per-access
 * reference then makes them in that order, which is the order the entry points see.
 */
static bool mixed_deferred;

/* Summarized accesses of mixed loop ml's iterations [0, iters), per access, in order. */
static void run_deferred(const struct loop *l)
{
	for (uint64_t k = 0; k < l->iters; k++)
		for (unsigned r = 0; r < l->n; r++) {
			const void *addr = (const void *)(uintptr_t)(l->a[r].start +
								     k * (uint64_t)l->a[r].step);

			if (l->a[r].store)
				__mnemo_store_ptr(l->a[r].site, addr, 0, l->a[r].size);
			else
				__mnemo_load_ptr(l->a[r].site, addr, 0, l->a[r].size);
		}
}

/*
 * Mixed loop ml run per access (as the build without summaries runs it) or through the entry
 * points of mixed loops.  When nest[0] is not NULL, right after the first access made in
 * iteration nest_k, a signal handler runs: mixed loop nest[0] whole (nesting nest + 1 in its
 * iteration 0), then summarized loop 1.
 */
static void run_mixed(const struct mixed_loop *ml, bool per_access, uint64_t nest_k,
		      const struct mixed_loop *const *nest)
{
	const struct loop *l = &ml->l;
	bool nested = !nest[0];

	if (per_access) {
		__mnemo_loop_invoke(l->site);
	} else {
		push_summary(l, 0, l->n);
		__mnemo_loop_summary_open(l->site, l->n);
	}
	for (uint64_t k = 0; k < l->iters; k++) {
		if (per_access)
			__mnemo_loop_iter(l->site);
		for (unsigned r = 0; r <= l->n; r++) {
			const void *addr;

			for (unsigned j = 0; j < ml->nm; j++) {
				uint32_t site = ml->m[j].site, size = ml->m[j].size;

				if (ml->m[j].rank != r || !mixed_made(ml, j, k))
					continue;
				addr = mixed_addr(ml, j, k);
				if (per_access && ml->m[j].store)
					__mnemo_store_ptr(site, addr, 0, size);
				else if (per_access)
					__mnemo_load_ptr(site, addr, 0, size);
				else if (ml->m[j].store)
					__mnemo_mixed_store(site, addr, size, k, r);
				else
					__mnemo_mixed_load(site, addr, size, k, r);
				if (!nested && k == nest_k) {
					nested = true;
					run_mixed(nest[0], per_access, 0, nest + 1);
					if (per_access)
						run_per_access(&loops[1]);
					else
						run_summarized(&loops[1]);
				}
			}
			if (r == l->n || !per_access || mixed_deferred)
				continue;
			addr = (const void *)(uintptr_t)(l->a[r].start +
							 k * (uint64_t)l->a[r].step);
			if (l->a[r].store)
				__mnemo_store_ptr(l->a[r].site, addr, 0, l->a[r].size);
			else
				__mnemo_load_ptr(l->a[r].site, addr, 0, l->a[r].size);
		}
	}
	if (per_access && mixed_deferred)
		run_deferred(l);
	if (per_access)
		__mnemo_loop_exit(l->site);
	else
		__mnemo_loop_summary_close(l->site, l->iters);
}

/*
 * Every mixed loop twice, with accesses and a summarized loop between them; then handlers: the
 * histogram with the three-rank loop run in its iteration 5, and in that the one-iteration loop;
 * the rare loop with the histogram in its iteration 49.
 */
static void mixed_program(bool per_access)
{
	const struct mixed_loop *const none[] = { NULL };
	const struct mixed_loop *const deep[] = { &mixed_loops[2], &mixed_loops[4], NULL };
	const struct mixed_loop *const hist[] = { &mixed_loops[0], NULL };

	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < NMIXED; i++) {
			between(i);
			run_mixed(&mixed_loops[i], per_access, 0, none);
			if (per_access)
				run_per_access(&loops[4]);
			else
				run_summarized(&loops[4]);
		}
	}
	run_mixed(&mixed_loops[0], per_access, 5, deep);
	run_mixed(&mixed_loops[3], per_access, 49, hist);
	between(99);
}

static void *mixed_reference(void *arg)
{
	capture_start(arg);
	mixed_program(true);
	capture_end(arg);
	return NULL;
}

static void *mixed_sampled(void *arg)
{
	capture_start(arg);
	mixed_program(false);
	capture_end(arg);
	return NULL;
}

/*
 * Mixed loops that are lost at N > 1, each as its loop_summary record alone: one whose entry
 * the full stash did not store (the 512 below it are then sampled as a summary), one opened with
 * fewer entries than it says, the 33rd of 33 nested (one frame too many), and one a handler left
 * open, which its enclosing loop's close pops.  Their mixed accesses are still sampled.  Counts
 * the records by code into arg's words, as overflow() does.
 */
static void *mixed_lost(void *arg)
{
	const struct mixed_loop *hist = &mixed_loops[0];
	struct capture *c = arg, mine;

	capture_start(&mine);
	for (unsigned i = 0; i < 512; i++)
		push_summary(&loops[4], i & 1, (i & 1) + 1);
	run_mixed(hist, false, 0, (const struct mixed_loop *const[]){ NULL });
	__mnemo_loop_summary(loops[4].site, 512, 10);
	__mnemo_loop_summary_open(hist->l.site, 3);
	__mnemo_mixed_load(72, ADDR, 4, 0, 1);
	__mnemo_loop_summary_close(hist->l.site, 1);
	for (unsigned i = 0; i < 33; i++) {
		push_summary(&hist->l, 0, 1);
		__mnemo_loop_summary_open(200 + i, 1);
		__mnemo_mixed_store(73, ADDR, 4, 0, 1);
	}
	for (unsigned i = 33; i-- > 0;)
		__mnemo_loop_summary_close(200 + i, 1);
	push_summary(&hist->l, 0, 1);
	__mnemo_loop_summary_open(300, 1);
	push_summary(&hist->l, 0, 1);
	__mnemo_loop_summary_open(301, 1);
	__mnemo_mixed_store(73, ADDR, 4, 0, 1);
	__mnemo_loop_summary_close(300, 1);
	capture_end(&mine);
	c->words = calloc(256, sizeof(uint64_t));
	if (!c->words)
		exit(1);
	c->n = 0;
	for (size_t i = 0; i < mine.n; i += __mnemo_wire.nwords[wire_code(mine.words[i])]) {
		if (!__mnemo_wire.nwords[wire_code(mine.words[i])]) {
			printf("lost mixed loops: a record of code %u, which the wire does not "
			       "send\n", (unsigned)(mine.words[i] & 0xff));
			exit(1);
		}
		c->words[wire_code(mine.words[i])]++;
		c->n++;
	}
	free(mine.words);
	return NULL;
}

/*
 * --sample-mixed=N: the periods of N, as the runtime sets them.  Mixed loops run through their
 * entry points must send exactly the records of the same loops run per access: the accesses the
 * countdown picks among the summarized and the mixed ones in program order, and the loop events
 * when they are sent (without them, the summarized ones after the loop's mixed ones), with whole mixed loops run in the middle of others as signal handlers
 * would run them.  Lost mixed loops send their loop_summary record alone and nothing of their
 * summarized accesses, and spoil nothing around them.
 */
static int check_sampled_mixed(unsigned n)
{
	struct capture ref, mix, lost;
	uint64_t sent = 0;
	bool invoke = __mnemo_wire.nwords[12], iter = __mnemo_wire.nwords[13];
	bool leave = __mnemo_wire.nwords[14];
	unsigned load = 1, store = 2, summary = 19;
	int bad = 0;

	if (!(__mnemo_summary_plan & MNEMO_PLAN_MIXED_ON) || n < 2) {
		printf("sampled mixed loops: expected mixed loops on and N > 1, got %s and %u\n",
		       __mnemo_summary_plan & MNEMO_PLAN_MIXED_ON ? "on" : "off", n);
		return 1;
	}
	mn_sample_lo = n - n / 2;
	mn_sample_span = 2 * (n / 2) + 1;
	mixed_deferred = !invoke && !iter && !leave;
	ref = run_thread(mixed_reference);
	mix = run_thread(mixed_sampled);
	lost = run_thread(mixed_lost);
	sent = capture_accesses(&ref);
	printf("sampled mixed loops, N = %u: %zu words, %llu loads and stores sent\n", n, mix.n,
	       (unsigned long long)sent);
	bad += capture_same("mixed", &ref, &mix);
	if (!sent) {
		printf("sampled mixed loops: expected some accesses sent\n");
		bad++;
	}
	printf("lost mixed loops: %llu loop_summary records, %llu loads, %llu stores, loop events "
	       "%llu %llu %llu\n", (unsigned long long)lost.words[summary],
	       (unsigned long long)lost.words[load], (unsigned long long)lost.words[store],
	       (unsigned long long)lost.words[12], (unsigned long long)lost.words[13],
	       (unsigned long long)lost.words[14]);
	/* Loop events: the summary of 512 (1, 10, 1), the 32 nested frames stored (1, 1, 1
	 * each), the enclosing loop (1, 1, 1) and the one left open (1, 1, 0). */
	if (lost.words[summary] != 4 || !lost.words[load] || !lost.words[store] ||
	    lost.words[12] != (invoke ? 35 : 0) || lost.words[13] != (iter ? 44 : 0) ||
	    lost.words[14] != (leave ? 34 : 0) ||
	    lost.n != lost.words[summary] + lost.words[load] + lost.words[store] +
		      lost.words[12] + lost.words[13] + lost.words[14]) {
		printf("lost mixed loops: expected 4 loop_summary records, loads and stores, and "
		       "loop events if sent (35, 44, 34), nothing else\n");
		bad++;
	}
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned pointer_only = 0;   /* bit 0: the plain load pushes nothing, bit 1: the store */
	int bad = 0;

	if (argc > 1 && !strcmp(argv[1], "--pointer-only"))
		pointer_only = 3;
	if (argc > 1 && !strcmp(argv[1], "--pointer-only=load"))
		pointer_only = 1;
	if (argc > 1 && !strcmp(argv[1], "--pointer-only=store"))
		pointer_only = 2;
	if (argc > 1 && !strcmp(argv[1], "--sample"))
		return check_sampling();
	if (argc > 1 && !strncmp(argv[1], "--sample-summaries=", 19))
		return check_sampled_summaries((unsigned)atoi(argv[1] + 19));
	if (argc > 1 && !strcmp(argv[1], "--mixed"))
		return check_mixed();
	if (argc > 1 && !strncmp(argv[1], "--sample-mixed=", 15))
		return check_sampled_mixed((unsigned)atoi(argv[1] + 15));

	printf("sent:");
	for (unsigned i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (__mnemo_wire.nwords[calls[i].code] && !calls[i].ptr)
			printf(" %s", calls[i].name);
	printf("\n");
	for (unsigned i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		bad += check(&calls[i], pointer_only);

	__mnemo_heap_site(77);
	if (mn_heap_pending_site != (__mnemo_heap_events ? 77u : 0u)) {
		printf("heap_site: expected pending site %u, got %u\n",
		       __mnemo_heap_events ? 77u : 0u, mn_heap_pending_site);
		bad++;
	}
	printf("heap_events: %u\n", __mnemo_heap_events);
	printf("plan: 0x%08x\n", (unsigned)__mnemo_summary_plan);
	printf("flags: 0x%02x\ncodes:", __mnemo_wire.flags);
	for (unsigned i = 0; i < 4; i++) {
		printf("%s %s ", i ? "," : "", calls[i].name);
		if (access_code[i] < 0)
			printf("-");
		else
			printf("0x%02x%s", (unsigned)access_code[i],
			       access_value_zero[i] ? " (value 0)" : "");
	}
	printf("\n");
	/* Summary records exactly when the plan says on. */
	if (!!(__mnemo_summary_plan & MNEMO_PLAN_ON) != !!__mnemo_wire.nwords[19]) {
		printf("plan: summaries %s, but the wire %s loop_summary\n",
		       __mnemo_summary_plan & MNEMO_PLAN_ON ? "on" : "off",
		       __mnemo_wire.nwords[19] ? "sends" : "does not send");
		bad++;
	}
	/* Mixed loops: with summaries, sampled or not; their records exactly then. */
	if (!!(__mnemo_summary_plan & MNEMO_PLAN_MIXED_ON) != !!__mnemo_wire.nwords[21] ||
	    ((__mnemo_summary_plan & MNEMO_PLAN_MIXED_ON) &&
	     !(__mnemo_summary_plan & MNEMO_PLAN_ON))) {
		printf("plan: mixed loops %s with summaries %s, and the wire %s mixed_load\n",
		       __mnemo_summary_plan & MNEMO_PLAN_MIXED_ON ? "on" : "off",
		       __mnemo_summary_plan & MNEMO_PLAN_ON ? "on" : "off",
		       __mnemo_wire.nwords[21] ? "sends" : "does not send");
		bad++;
	}
	if (&__mnemo_queue_lamport) {
		printf("queue: lamport\n");
		if (__mnemo_queue_lamport != 1 || !lamport_pushes) {
			printf("lamport: expected __mnemo_queue_lamport 1 and pushes through "
			       "mn_queue_push_lamport(), got %u and %u\n", __mnemo_queue_lamport,
			       lamport_pushes);
			bad++;
		}
	} else if (lamport_pushes) {
		printf("lamport: %u pushes through mn_queue_push_lamport() without "
		       "__mnemo_queue_lamport\n", lamport_pushes);
		bad++;
	}
	return bad ? 1 : 0;
}
