/*
 * mnemo-specialize: link-time specialization of the frontend (PROMPT 4.2, "Removing unnecessary
 * instrumentation").
 *
 * The pass calls every __mnemo_* entry point of abi.h with every argument, whatever the modules.
 * This program reads the event catalogue and the chosen modules' events.yaml and writes
 * callbacks.c, which defines each entry point for exactly those modules: an event no module uses
 * gets an empty body, and a used event packs and pushes only the arguments some module uses.
 * Loads and stores come in two entry points each, one for pointer values (__mnemo_load_ptr) and
 * one for the rest (__mnemo_load): when every chosen module that uses the event declares
 * `accesses: pointer`, the second gets an empty body.  When a module with `accesses: pointer` and
 * one with `accesses: all` use the same one, the wire has the pointer flag (queue.h, spec.h): the
 * _ptr entry points send their code with MN_CODE_POINTER, so that the backend gives the
 * pointer-only modules only those records, and stay per access (plan_state()); the plain ones send
 * `value` only when a module taking every access uses it (zeroes_arg()).  The program is linked
 * with full LTO, so the optimizer deletes the empty calls and the computation of the unused
 * arguments at every instrumented load and store.  When every chosen module that uses loads or
 * stores declares the same `sample:` variable (spec.h), the four access entry points count down
 * and send one access in N (see put_sampling()).  The packing (spec.h) is also written out as
 * `const struct mn_wire __mnemo_wire`, which the runtime copies into the session so that the
 * backend decodes exactly what was encoded.
 *
 * Loop summaries (abi.h): `__mnemo_summary_plan` tells the pass, from what the bodies written here
 * do, which accesses it may summarize (summary_plan()).  When some entry point's state is 1 the
 * plan says on, and the three __mnemo_loop_summary* entry points push every argument of their
 * events, which no module lists; otherwise, and with --no-summarize or --all-events, they are
 * empty and not in the wire.  A countdown does not keep an access out of summaries: in a sampled
 * build the summary entry points push their records at N = 1 and, at N > 1, send the accesses
 * the countdown picks themselves (put_summary_sampling()).
 *
 * Mixed loops (abi.h): when summaries are on, the plan also says mixed loops on
 * (MNEMO_PLAN_MIXED_ON), and __mnemo_loop_summary_open, __mnemo_mixed_load, __mnemo_mixed_store
 * and __mnemo_loop_summary_close push the records of their events, which join the wire; the
 * mixed ones send a position within the loop relative to the previous mixed record, and
 * loop_summary_at when that cannot say it (put_mixed_state()).  Otherwise they are empty and
 * their five events are not in the wire.  In a sampled build they push their records at N = 1
 * and, at N > 1, run the countdown over the loop's summarized and mixed accesses in program
 * order themselves (put_mixed_sampling()).
 *
 *   mnemo-specialize --catalogue events.yaml --modules-dir DIR --modules a,b [--backend PATH]
 *                    [--all-events] [--no-summarize] [--queue=pingpong|lamport] [--unit]
 *                    -o OUTDIR
 *
 * writes OUT/callbacks.c (only when its content changes, so builds stay incremental) and prints
 * heap=1 or heap=0: whether the program must link libmnemo-heap.a, the heap interposer.
 * --all-events and --queue=lamport undo two of the optimizations, for the rows of the overhead
 * breakdown (PROMPT's Table 8; docs/internals.md, "Ablation switches for the breakdown").
 *
 * The C side of each event (which parameter of which entry point carries which catalogue argument)
 * is the table abi[] below, which must agree with abi.h: the generated file includes abi.h, so the
 * compiler checks the signatures, and check_abi() checks the table against the catalogue.
 */
#define _GNU_SOURCE  /* asprintf */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi.h"      /* MNEMO_PLAN_*: __mnemo_summary_plan */
#include "session.h"  /* MN_MAX_MODULES */
#include "spec.h"

#define PROG "mnemo-specialize"
#define ALL_EVENTS "all-events"  /* --all-events's stand-in module, never a real one */

/* ---- The entry points of abi.h ---------------------------------------------------------- */

enum fit {
	TRUNCATE,   /* keep the low bits: addresses, ids, codes */
	SATURATE,   /* clamp at the largest value that fits: sizes */
};

struct abi_param {
	const char *arg;      /* the catalogue's argument name */
	const char *raw;      /* its value from the C parameters, as an unsigned integer (only
				 ever a function's argument: low_bits(), saturate()) */
	const char *u64;      /* the same as a uint64_t, when no narrowing is needed (an operand
				 of <<: parenthesized unless primary or a cast) */
	unsigned cbits;       /* width of raw's type: an argument this wide needs no masking */
	enum fit fit;
};

/* Which accesses of its event an entry point reports (abi.h). */
enum accesses {
	ANY,            /* not a load or store: the event's body whenever it is sent */
	NON_POINTER,    /* __mnemo_load, __mnemo_store: a body only for `accesses: all` modules */
	POINTER,        /* __mnemo_load_ptr, __mnemo_store_ptr: a body whenever it is sent */
	SUMMARY,        /* __mnemo_loop_summary*: a body when loop summaries are on */
	MIXED,          /* the mixed loops' entry points: a body when mixed loops are on */
	VALUE,          /* __mnemo_value: a body when some chosen module takes `value` */
	THREADS,        /* thread and sync events: as ANY, and empty in a catalogue without them */
};

struct abi_entry {
	const char *event;    /* catalogue name; NULL for __mnemo_heap_site, which is no event */
	const char *fn;       /* NULL for loop_summary_at, which the mixed entry points send */
	const char *params;   /* the parameter list, exactly as in abi.h */
	struct abi_param p[MN_WIRE_MAX_ARGS];
	enum accesses accesses;
};

#define P_SITE { "site", "site", "(uint64_t)site", 32, TRUNCATE }
#define P_ADDR { "address", "(uintptr_t)addr", "(uint64_t)(uintptr_t)addr", 64, TRUNCATE }
#define P_VALUE { "value", "value", "value", 64, TRUNCATE }
#define P_SIZE32 { "size", "size", "(uint64_t)size", 32, SATURATE }
#define P_SIZE64 { "size", "size", "size", 64, SATURATE }
#define P_START { "address", "(uintptr_t)start", "(uint64_t)(uintptr_t)start", 64, TRUNCATE }
#define P_STEP { "step", "(uint64_t)step", "(uint64_t)step", 64, TRUNCATE }
#define P_ACCESSES { "accesses", "accesses", "(uint64_t)accesses", 32, SATURATE }
#define P_ITERATIONS { "iterations", "iterations", "iterations", 64, SATURATE }
/* Not a parameter: computed in the body of the mixed entry points (put_mixed()). */
#define P_POSITION { "position", "(uint64_t)rank << 1 | next", "((uint64_t)rank << 1 | next)", \
		     64, TRUNCATE }

/* In abi.h order: "Emitted by the pass", then "Called by the runtime itself". */
static const struct abi_entry abi[] = {
	{ "load", "__mnemo_load",
	  "uint32_t site, const void *addr, uint64_t value, uint32_t size",
	  { P_SITE, P_ADDR, P_VALUE, P_SIZE32 }, NON_POINTER },
	{ "store", "__mnemo_store",
	  "uint32_t site, const void *addr, uint64_t value, uint32_t size",
	  { P_SITE, P_ADDR, P_VALUE, P_SIZE32 }, NON_POINTER },
	{ "load", "__mnemo_load_ptr",
	  "uint32_t site, const void *addr, uint64_t value, uint32_t size",
	  { P_SITE, P_ADDR, P_VALUE, P_SIZE32 }, POINTER },
	{ "store", "__mnemo_store_ptr",
	  "uint32_t site, const void *addr, uint64_t value, uint32_t size",
	  { P_SITE, P_ADDR, P_VALUE, P_SIZE32 }, POINTER },
	{ "pointer_create", "__mnemo_pointer_create",
	  "uint32_t site, const void *addr, uint32_t type",
	  { P_SITE, P_ADDR, { "type", "type", "(uint64_t)type", 32, TRUNCATE } }, ANY },
	{ NULL, "__mnemo_heap_site", "uint32_t site", { P_SITE }, ANY },
	{ "stack_alloc", "__mnemo_stack_alloc", "uint32_t site, const void *addr, uint64_t size",
	  { P_SITE, P_ADDR, P_SIZE64 }, ANY },
	{ "stack_free", "__mnemo_stack_free", "uint32_t site, const void *addr",
	  { P_SITE, P_ADDR }, ANY },
	{ "func_entry", "__mnemo_func_entry", "uint32_t site", { P_SITE }, ANY },
	{ "func_exit", "__mnemo_func_exit", "uint32_t site", { P_SITE }, ANY },
	{ "loop_invoke", "__mnemo_loop_invoke", "uint32_t site", { P_SITE }, ANY },
	{ "loop_iter", "__mnemo_loop_iter", "uint32_t site", { P_SITE }, ANY },
	{ "loop_exit", "__mnemo_loop_exit", "uint32_t site", { P_SITE }, ANY },
	{ "loop_summary_load", "__mnemo_loop_summary_load",
	  "uint32_t site, const void *start, int64_t step, uint32_t size",
	  { P_SITE, P_START, P_STEP, P_SIZE32 }, SUMMARY },
	{ "loop_summary_store", "__mnemo_loop_summary_store",
	  "uint32_t site, const void *start, int64_t step, uint32_t size",
	  { P_SITE, P_START, P_STEP, P_SIZE32 }, SUMMARY },
	{ "loop_summary", "__mnemo_loop_summary",
	  "uint32_t site, uint32_t accesses, uint64_t iterations",
	  { P_SITE, P_ACCESSES, P_ITERATIONS }, SUMMARY },
	{ "loop_summary_open", "__mnemo_loop_summary_open", "uint32_t site, uint32_t accesses",
	  { P_SITE, P_ACCESSES }, MIXED },
	{ "mixed_load", "__mnemo_mixed_load",
	  "uint32_t site, const void *addr, uint32_t size, uint64_t iteration, uint32_t rank",
	  { P_SITE, P_ADDR, P_SIZE32, P_POSITION }, MIXED },
	{ "mixed_store", "__mnemo_mixed_store",
	  "uint32_t site, const void *addr, uint32_t size, uint64_t iteration, uint32_t rank",
	  { P_SITE, P_ADDR, P_SIZE32, P_POSITION }, MIXED },
	{ "loop_summary_close", "__mnemo_loop_summary_close", "uint32_t site, uint64_t iterations",
	  { P_SITE, P_ITERATIONS }, MIXED },
	{ "value", "__mnemo_value", "uint32_t site, uint64_t value", { P_SITE, P_VALUE }, VALUE },
	/* No entry point of its own: the two mixed ones send it, from their `iteration`. */
	{ "loop_summary_at", NULL, "uint64_t iteration",
	  { { "iteration", "iteration", "iteration", 64, SATURATE } }, MIXED },
	{ "global", "__mnemo_global", "uint32_t site, const void *addr, uint64_t size",
	  { P_SITE, P_ADDR, P_SIZE64 }, ANY },
	/* context: not a parameter, the thread's callers (put_alloc_contexts()). */
	{ "heap_alloc", "__mnemo_heap_alloc", "uint32_t site, const void *addr, uint64_t size",
	  { P_SITE, P_ADDR, P_SIZE64,
	    { "context", "alloc_context()", "alloc_context()", 64, TRUNCATE } }, ANY },
	{ "heap_realloc", "__mnemo_heap_realloc",
	  "uint32_t site, const void *old_addr, const void *addr, uint64_t size",
	  { P_SITE,
	    { "old_address", "(uintptr_t)old_addr", "(uint64_t)(uintptr_t)old_addr", 64, TRUNCATE },
	    P_ADDR, P_SIZE64 }, ANY },
	{ "heap_free", "__mnemo_heap_free", "uint32_t site, const void *addr", { P_SITE, P_ADDR },
	  ANY },
	{ "sync_acquire", "__mnemo_sync_acquire", "const void *object",
	  { { "object", "(uintptr_t)object", "(uint64_t)(uintptr_t)object", 64, TRUNCATE } }, THREADS },
	{ "sync_release", "__mnemo_sync_release", "const void *object",
	  { { "object", "(uintptr_t)object", "(uint64_t)(uintptr_t)object", 64, TRUNCATE } }, THREADS },
	{ "thread_start", "__mnemo_thread_start", "uint32_t creator, uint32_t site",
	  { { "creator", "creator", "(uint64_t)creator", 32, TRUNCATE }, P_SITE }, THREADS },
	{ "thread_end", "__mnemo_thread_end", "void", { { NULL, NULL, NULL, 0, TRUNCATE } }, THREADS },
	{ "program_start", "__mnemo_program_start", "uint32_t pid",
	  { { "pid", "pid", "(uint64_t)pid", 32, TRUNCATE } }, ANY },
	{ "program_end", "__mnemo_program_end", "uint32_t pid, uint32_t status",
	  { { "pid", "pid", "(uint64_t)pid", 32, TRUNCATE },
	    { "status", "status", "(uint64_t)status", 32, TRUNCATE } }, ANY },
};

#define NABI (sizeof(abi) / sizeof(abi[0]))

static const struct abi_param *abi_param(const struct abi_entry *e, const char *arg)
{
	for (unsigned i = 0; i < MN_WIRE_MAX_ARGS && e->p[i].arg; i++)
		if (!strcmp(e->p[i].arg, arg))
			return &e->p[i];
	return NULL;
}

/* The first entry point of event: for load and store, the plain one (both take the same params). */
static const struct abi_entry *abi_entry(const char *event)
{
	for (unsigned i = 0; i < NABI; i++)
		if (abi[i].event && !strcmp(abi[i].event, event))
			return &abi[i];
	return NULL;
}

/*
 * The catalogue and abi[] must describe the same events: each catalogue event an entry point,
 * each of its arguments a parameter, and each entry point an event, but those of mixed loops,
 * which are off in a catalogue without them (summary_plan()), and the thread and sync events,
 * which are then not sent.  Returns 0 or -EINVAL.
 */
static int check_abi(const struct mn_catalogue *c)
{
	for (unsigned i = 0; i < c->nevents; i++) {
		const struct mn_spec_event *ev = &c->event[i];
		const struct abi_entry *e = abi_entry(ev->name);

		if (!e) {
			fprintf(stderr, PROG ": %s:%u:%u: event '%s' has no entry point in abi.h "
				"known to " PROG "\n", c->path, ev->line, ev->column, ev->name);
			return -EINVAL;
		}
		for (unsigned a = 0; a < ev->nargs; a++) {
			if (abi_param(e, ev->arg[a].name))
				continue;
			fprintf(stderr, PROG ": %s:%u:%u: argument '%s' of event '%s' is not a "
				"parameter of %s(%s)\n", c->path, ev->arg[a].line,
				ev->arg[a].column, ev->arg[a].name, ev->name,
				e->fn ? e->fn : "the body of __mnemo_mixed_load", e->params);
			return -EINVAL;
		}
	}
	for (unsigned i = 0; i < NABI; i++) {
		if (abi[i].event && !mn_spec_event_find(c, abi[i].event) &&
		    abi[i].accesses != MIXED && abi[i].accesses != VALUE &&
		    abi[i].accesses != THREADS) {
			fprintf(stderr, PROG ": %s: no event '%s', which abi.h's %s emits\n",
				c->path, abi[i].event, abi[i].fn);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- Generating callbacks.c ------------------------------------------------------------- */

struct gen {
	FILE *f;
	const struct mn_catalogue *c;
	const struct mn_module_spec *const *m;
	unsigned nm;
	const struct mn_wire *w;
	const char *modules;      /* "a,b" */
	const char *backend;      /* "" when not given */
	bool heap;
	bool need_fit[2];         /* some argument needs low_bits() / saturate() */
	const char *sample_var;   /* the `sample:` variable of the access modules, or NULL */
	const char *sample_blocker;  /* with sample_var: a module needing every access, or NULL */
	bool sample;              /* the access entry points count down (sample_var, no blocker) */
	bool send_done[MN_WIRE_MAX_EVENTS];  /* send_<event>() is written (sampled events) */
	bool send_ptr_done[MN_WIRE_MAX_EVENTS];  /* send_<event>_ptr() (pointer_coded()) */
	bool summary_sampling_done;  /* put_summary_sampling() has run */
	bool mixed_done;          /* put_mixed_state() has run */
	const struct mn_module_spec *values;  /* the chosen module taking `value`, or NULL */
	bool lamport;             /* --queue=lamport: push through mn_queue_push_lamport() */
	bool all_events;          /* --all-events: m[0] is the stand-in module all-events */
	uint32_t plan;            /* __mnemo_summary_plan (abi.h) */
	const char *summary_off;  /* without MNEMO_PLAN_ON in plan: why, for the comments */
	const char *mixed_off;    /* without MNEMO_PLAN_MIXED_ON in plan: why */
};

/* Prints s inside a C comment, so that no "*" "/" in a path can end it. */
static void put_comment_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		fputc(*s, f);
		if (s[0] == '*' && s[1] == '/')
			fputc(' ', f);
	}
}

/* Prints s as the contents of a C string literal. */
static void put_c_string(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\' || *p == '?')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(f, "\\%03o", *p);
		else
			fputc(*p, f);
	}
}

/* EV_HEAP_ALLOC for heap_alloc. */
static void put_code_name(FILE *f, const char *event)
{
	fputs("EV_", f);
	for (const char *s = event; *s; s++)
		fputc(*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s, f);
}

/* The value of argument a of ev, masked or saturated to its width, as a uint64_t expression. */
static void put_arg_value(FILE *f, const struct abi_entry *e, const struct mn_spec_arg *a)
{
	const struct abi_param *p = abi_param(e, a->name);

	if (a->bits >= p->cbits)
		fputs(p->u64, f);
	else
		fprintf(f, "%s(%s, %u)", p->fit == SATURATE ? "saturate" : "low_bits", p->raw,
			a->bits);
}

/*
 * The countdown of sampled builds.  The not-sampled path, inlined at every load and store, must
 * be one thread-local decrement and one well-predicted branch: the target is at most 1.5 times
 * the native run time at N = 1000.  Everything else (the next period, packing, the push) is in
 * the out-of-line, cold send_<event>() functions, which return the next period.
 *
 * The counter is static to callbacks.c and only the entry points touch it, never through a
 * pointer: LTO's alias analysis (GlobalsAA) then knows that no call, not even the cold send path,
 * reads or writes it, and keeps it in a register through a loop with no other call, storing it
 * back on the way.  A counter the runtime could see would be reloaded from memory at every access,
 * a store-to-load chain that made a one-load loop 3 to 5 times slower (0.55 s against 0.12 s for
 * 3e8 loads, N = 1000, on the 2-core AMD EPYC test machine; native 0.08 s).
 */
static void put_sampling(const struct gen *g)
{
	FILE *f = g->f;

	fputs("\n/*\n"
	      " * Sampling: one load or store in N, counted over both together, N from ", f);
	put_comment_text(f, g->sample_var);
	fputs(".\n"
	      " * The runtime reads N at start and sets mn_sample_lo and mn_sample_span (abi.h);\n"
	      " * N = 1 sends every access.  The countdown is private to this file, so that\n"
	      " * LTO may keep it in a register through a loop (no call can touch it);\n"
	      " * initial-exec TLS: one %fs-relative access, no __tls_get_addr.  A thread's\n"
	      " * first access is sent.\n"
	      " *\n"
	      " * The period is random, uniform in [N - N/2, N + N/2], not N: with a fixed\n"
	      " * period, a loop whose accesses repeat with a period dividing N (an array of\n"
	      " * structures walked field by field) would be sampled at the same field every\n"
	      " * time.  The jitter, as wide as N, spreads the phase over the whole loop period\n"
	      " * after a few samples, keeps the mean at N, and bounds the gap between samples\n"
	      " * (a geometric draw would need a logarithm).  The draw is xorshift64, three\n"
	      " * shifts and xors on a per-thread state: no sharing, no lock.  Every thread\n"
	      " * starts from the same constant, so that a run samples the same accesses every\n"
	      " * time (MNEMO_REPRODUCIBLE); threads make different accesses, so sharing the\n"
	      " * sequence of periods does no harm.\n"
	      " */\n"
	      "#define MN_TLS_IE __attribute__((tls_model(\"initial-exec\")))\n"
	      "static __thread int32_t sample_countdown MN_TLS_IE;\n"
	      "static __thread uint64_t sample_rng MN_TLS_IE;\n"
	      "\n"
	      "/* This thread's next period. */\n"
	      "static inline __attribute__((always_inline)) int32_t sample_period(void)\n"
	      "{\n"
	      "\tuint64_t x = sample_rng;\n"
	      "\n"
	      "\tif (__builtin_expect(!x, 0))\n"
	      "\t\tx = UINT64_C(0x2545f4914f6cdd1d);\n"
	      "\tx ^= x << 13;\n"
	      "\tx ^= x >> 7;\n"
	      "\tx ^= x << 17;\n"
	      "\tsample_rng = x;\n"
	      "\t/* lo + r * span / 2^32, r the high 32 bits of x: uniform in [lo, lo + span). */\n"
	      "\treturn (int32_t)(mn_sample_lo + (uint32_t)(((x >> 32) * mn_sample_span) >> 32));\n"
	      "}\n", f);
}

static void put_summary_plan(const struct gen *g);

static void put_header(const struct gen *g)
{
	FILE *f = g->f;
	unsigned nsent = 0;

	fputs("/*\n * callbacks.c: the Mnemo frontend callbacks, specialized for the modules ", f);
	put_comment_text(f, g->modules);
	fputs(".\n *\n * GENERATED by " PROG " from\n *   ", f);
	put_comment_text(f, g->c->path);
	for (unsigned i = 0; i < g->nm; i++) {
		fputs("\n *   ", f);
		put_comment_text(f, g->m[i]->path);
	}
	fputs("\n * Do not edit: change the module specs and run " PROG " again.\n"
	      " *\n"
	      " * Every entry point of abi.h that the pass or the runtime calls is defined\n"
	      " * here.  An event no chosen module uses has an empty body; a used event pushes\n"
	      " * one record with only the arguments some module uses, plus its site, which\n"
	      " * the backend shards by.  Loads and stores of a pointer value have entry points\n"
	      " * of their own (__mnemo_load_ptr, __mnemo_store_ptr) with the same record; the\n"
	      " * plain ones are empty when every module using the event takes only pointer\n"
	      " * accesses.  Full LTO then deletes the empty calls and the unused arguments\n"
	      " * (PROMPT 4.2).  A record is the event code in bits 0..7 of word 0,\n"
	      " * then the arguments in catalogue order, each in the first word with room for\n"
	      " * it; __mnemo_wire at the end describes this packing to the backend.\n"
	      " * Addresses, ids and codes keep their low bits; sizes saturate.\n", f);
	if (g->w->flags & MN_WIRE_POINTER)
		fputs(" * The wire has the pointer flag (MN_WIRE_POINTER, queue.h): a module\n"
		      " * that takes only pointer accesses shares a load or store event with one\n"
		      " * that takes them all, so __mnemo_load_ptr and __mnemo_store_ptr send\n"
		      " * their code with MN_CODE_POINTER (0x81, 0x82), and the backend gives the\n"
		      " * first module only those.  They stay out of loop summaries and mixed\n"
		      " * loops, whose records carry no flag.\n", f);
	if (g->all_events)
		fputs(" * Not specialized (--all-events): the stand-in module " ALL_EVENTS " uses every\n"
		      " * event of the catalogue with every argument and every access, as a build\n"
		      " * without specialization would send them; the backends still run only the\n"
		      " * modules above, and drop the events they have no handler for.\n", f);
	if (g->plan & MNEMO_PLAN_ON)
		fputs(" * Loop summaries are on: __mnemo_loop_summary_load, _store and\n"
		      " * __mnemo_loop_summary push every argument, for the loops the pass\n"
		      " * summarizes as __mnemo_summary_plan allows; the backend expands them\n"
		      " * into the events they stand for.\n", f);
	if ((g->plan & MNEMO_PLAN_ON) && g->sample)
		fputs(" * With sampling, only at N = 1; at N > 1 they send the loads and\n"
		      " * stores the countdown picks instead (summary_sample()).\n", f);
	if (g->plan & MNEMO_PLAN_MIXED_ON)
		fputs(" * Mixed loops are on: __mnemo_loop_summary_open, __mnemo_mixed_load,\n"
		      " * _store and __mnemo_loop_summary_close push their records, a mixed one\n"
		      " * with its position relative to the previous mixed record of its loop,\n"
		      " * after a loop_summary_at record when that cannot say it (mixed_next()).\n",
		      f);
	else if (g->plan & MNEMO_PLAN_ON)
		fprintf(f, " * Mixed loops are off (%s): their entry points are empty.\n",
			g->mixed_off);
	if ((g->plan & MNEMO_PLAN_MIXED_ON) && g->sample)
		fputs(" * With sampling, only at N = 1; at N > 1 they send the loads and\n"
		      " * stores the countdown picks among the loop's summarized and mixed\n"
		      " * accesses, in program order, instead (mixed_walk()).\n", f);
	if (g->sample) {
		fputs(" * Loads and stores are sampled: one in N, N from the environment\n"
		      " * variable ", f);
		put_comment_text(f, g->sample_var);
		fputs(", which every chosen module that uses them declares (`sample:`).\n", f);
	} else if (g->sample_var) {
		fputs(" * Loads and stores are not sampled: module ", f);
		put_comment_text(f, g->sample_blocker);
		fputs(" needs every access, though another\n * module would take one in ", f);
		put_comment_text(f, g->sample_var);
		fputs(".\n", f);
	}
	fputs(" *\n"
	      " * Events sent:", f);
	for (unsigned i = 0; i < g->c->nevents; i++) {
		const struct mn_spec_event *ev = &g->c->event[i];

		if (g->w->nwords[ev->code])
			fprintf(f, "%s %s (%u words)", nsent++ ? "," : "", ev->name,
				g->w->nwords[ev->code]);
	}
	fprintf(f, "%s.\n */\n", nsent ? "" : " none");
	fputs("#include <stdint.h>\n"
	      "\n"
	      "#include \"abi.h\"\n"
	      "#include \"queue.h\"\n"
	      "\n"
	      "/*\n"
	      " * `used`: LTO drops bitcode definitions nothing references before its pipeline runs, and\n"
	      " * the pass adds the references only then.  Calls still inline and empty bodies vanish.\n"
	      " */\n"
	      "#define MN_ENTRY __attribute__((used))\n"
	      "\n", f);

	fputs("/* Event codes, from the catalogue. */\nenum event_code {\n", f);
	for (unsigned i = 0; i < g->c->nevents; i++) {
		fputc('\t', f);
		put_code_name(f, g->c->event[i].name);
		fprintf(f, " = %u,\n", g->c->event[i].code);
	}
	fputs("};\n\n", f);

	fputs("const char __mnemo_modules[] = \"", f);
	put_c_string(f, g->modules);
	fputs("\";\nconst char __mnemo_backend_path[] = \"", f);
	put_c_string(f, g->backend);
	fprintf(f, "\";\n"
		"/* 1 when heap events are sent: the program must link libmnemo-heap.a. */\n"
		"const uint32_t __mnemo_heap_events = %d;\n", g->heap);
	fputs("/* Sampling: the variable that sets N, and the module that needs every access. */\n"
	      "const char __mnemo_sample_var[] = \"", f);
	put_c_string(f, g->sample_var ? g->sample_var : "");
	fputs("\";\nconst char __mnemo_sample_blocker[] = \"", f);
	put_c_string(f, g->sample_blocker ? g->sample_blocker : "");
	fputs("\";\n", f);
	put_summary_plan(g);
	if (g->lamport)
		fputs("\n/*\n"
		      " * --queue=lamport: records go through the out-of-line Lamport queue, the\n"
		      " * conventional baseline of the overhead breakdown; the runtime sees this\n"
		      " * symbol (a weak reference) and creates the queue in that mode.\n"
		      " */\n"
		      "extern const unsigned char __mnemo_queue_lamport;\n"
		      "__attribute__((visibility(\"default\"))) const unsigned char "
		      "__mnemo_queue_lamport = 1;\n", f);
	if (g->sample)
		put_sampling(g);

	if (g->need_fit[TRUNCATE])
		fputs("\n/* The low `bits` bits of v. */\n"
		      "static inline uint64_t low_bits(uint64_t v, unsigned bits)\n"
		      "{\n"
		      "\treturn bits >= 64 ? v : v & ((UINT64_C(1) << bits) - 1);\n"
		      "}\n", f);
	if (g->need_fit[SATURATE])
		fputs("\n/* v, or the largest value of `bits` bits when v is larger. */\n"
		      "static inline uint64_t saturate(uint64_t v, unsigned bits)\n"
		      "{\n"
		      "\tuint64_t max = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;\n"
		      "\n"
		      "\treturn v > max ? max : v;\n"
		      "}\n", f);
}

/* The comment above a sent event: who uses it and the layout of its words. */
static void put_layout(const struct gen *g, const struct mn_spec_event *ev)
{
	const struct mn_wire_arg *wa = g->w->arg[ev->code];
	unsigned nwords = g->w->nwords[ev->code], n = 0;
	bool summary = mn_spec_summary_event(ev);
	FILE *f = g->f;

	fprintf(f, "/*\n * %s: code %u, %u word%s; used by", ev->name, ev->code, nwords,
		nwords > 1 ? "s" : "");
	if (summary && abi_entry(ev->name)->accesses == MIXED)
		fputs(" the backend driver, which interleaves\n * a mixed loop's records with its "
		      "summarized accesses (mixed loops are on)", f);
	else if (summary)
		fputs(" the backend driver, which expands it into the\n * events it stands for "
		      "(loop summaries are on)", f);
	for (unsigned i = 0; i < g->nm; i++)
		if (g->m[i]->events & (UINT32_C(1) << ev->code))
			fprintf(f, "%s %s", n++ ? "," : "", g->m[i]->name);
	if (mn_spec_thread_event(ev))
		fprintf(f, "%s the backend (sent whatever the modules)", n++ ? "," : "");
	fputs(".\n", f);
	n = 0;
	for (unsigned a = 0; a < ev->nargs; a++)
		if (!wa[a].bits)
			fprintf(f, "%s%s", n++ ? ", " : " * Not sent: ", ev->arg[a].name);
	if (n)
		fputs(".\n", f);
	for (unsigned k = 0; k < nwords; k++) {
		bool empty = k > 0;

		fprintf(f, " *   w%u: %s", k, k ? "" : "[0..7] code");
		/* The arguments of a word sit in catalogue order, at increasing shifts. */
		for (unsigned a = 0; a < ev->nargs; a++) {
			if (wa[a].bits && wa[a].word == k) {
				fprintf(f, "%s[%u..%u] %s", wa[a].shift ? " | " : "", wa[a].shift,
					wa[a].shift + wa[a].bits - 1, ev->arg[a].name);
				empty = false;
			}
		}
		if (!empty)
			fputc('\n', f);
		else if (summary)
			fputs("0 (padding: records stay multiples of 16 bytes)\n", f);
		else
			fputs("0 (padding: fixed 16-byte records)\n", f);
	}
	fputs(" */\n", f);
}

/* True when some chosen module lists ev and needs all its accesses, not only pointer ones. */
static bool wants_all_accesses(const struct gen *g, const struct mn_spec_event *ev)
{
	for (unsigned i = 0; i < g->nm; i++)
		if ((g->m[i]->events & (UINT32_C(1) << ev->code)) &&
		    g->m[i]->accesses == MN_ACCESSES_ALL)
			return true;
	return false;
}

/*
 * True when e pushes its records with MN_CODE_POINTER or'ed into the code: a _ptr entry point, on
 * a wire with the pointer flag (queue.h).
 */
static bool pointer_coded(const struct gen *g, const struct abi_entry *e)
{
	return e->accesses == POINTER && (g->w->flags & MN_WIRE_POINTER);
}

/*
 * True when e sends 0 for argument a of ev, which the wire carries: e is a plain load or store
 * entry point on a wire with the pointer flag, a is `value`, and no chosen module with `accesses:
 * all` lists it.  Only pointer-only modules take it then, and the backend never gives them e's
 * records; without the value e stays summarizable (plan_state()).
 */
static bool zeroes_arg(const struct gen *g, const struct abi_entry *e,
		       const struct mn_spec_event *ev, unsigned a)
{
	if (e->accesses != NON_POINTER || !(g->w->flags & MN_WIRE_POINTER) ||
	    strcmp(ev->arg[a].name, "value"))
		return false;
	for (unsigned i = 0; i < g->nm; i++)
		if ((g->m[i]->events & (UINT32_C(1) << ev->code)) &&
		    g->m[i]->accesses == MN_ACCESSES_ALL && (g->m[i]->args[ev->code] & (1u << a)))
			return false;
	return true;
}

/* What the body of an entry point does (put_callback() writes it so); its plan state follows. */
enum body {
	BODY_EMPTY,       /* nothing: the event is not sent, or not for these accesses */
	BODY_RECORD,      /* pushes one record per call */
	BODY_COUNTDOWN,   /* counts down, and pushes one record in N calls (sampling) */
};

static enum body body_of(const struct gen *g, const struct abi_entry *e)
{
	const struct mn_spec_event *ev = mn_spec_event_find(g->c, e->event);

	if (!g->w->nwords[ev->code])
		return BODY_EMPTY;
	if (e->accesses == NON_POINTER && !wants_all_accesses(g, ev))
		return BODY_EMPTY;
	if (g->sample && (e->accesses == NON_POINTER || e->accesses == POINTER))
		return BODY_COUNTDOWN;
	return BODY_RECORD;
}

/*
 * True when access entry point e checks its access's value against the site's published set
 * (abi.h, struct mn_value_set): some chosen module takes `value`, and e's accesses are among
 * the ones it takes.  __mnemo_value does then too.
 */
static bool checks_values(const struct gen *g, const struct abi_entry *e)
{
	if (!g->values)
		return false;
	return e->accesses == POINTER || e->accesses == VALUE ||
	       (e->accesses == NON_POINTER && g->values->accesses == MN_ACCESSES_ALL);
}

/* The statements that fill w[] with ev's record from e's parameters and push it. */
static void put_record_words(const struct gen *g, const struct abi_entry *e,
			     const struct mn_spec_event *ev)
{
	const struct mn_wire_arg *wa = g->w->arg[ev->code];
	unsigned nwords = g->w->nwords[ev->code];
	FILE *f = g->f;

	for (unsigned k = 0; k < nwords; k++) {
		bool first = true;

		fprintf(f, "\tw[%u] = ", k);
		if (!k) {
			put_code_name(f, ev->name);
			if (pointer_coded(g, e))
				fputs(" | MN_CODE_POINTER", f);
			first = false;
		}
		for (unsigned a = 0; a < ev->nargs; a++) {
			if (!wa[a].bits || wa[a].word != k || zeroes_arg(g, e, ev, a))
				continue;
			if (!first)
				fputs(" | ", f);
			first = false;
			put_arg_value(f, e, &ev->arg[a]);
			if (wa[a].shift)
				fprintf(f, " << %u", wa[a].shift);
		}
		if (first)
			fputs("0", f);   /* padding: fixed 16-byte records (spec.h) */
		fputs(";\n", f);
	}
	fprintf(f, "\t%s(w, %u);\n", g->lamport ? "mn_queue_push_lamport" : "mn_queue_push",
		nwords);
}

/* The statements that pack ev's record from e's parameters and push it. */
static void put_record(const struct gen *g, const struct abi_entry *e,
		       const struct mn_spec_event *ev)
{
	fprintf(g->f, "\tuint64_t w[%u];\n\n", g->w->nwords[ev->code]);
	put_record_words(g, e, ev);
}

/* "site, addr, value, size" of "uint32_t site, const void *addr, ...": the parameter names. */
static void put_param_names(FILE *f, const char *params)
{
	const char *p = params;

	while (*p) {
		const char *end = strchr(p, ','), *name;

		if (!end)
			end = p + strlen(p);
		for (name = end; name > p && (name[-1] == '_' || (name[-1] >= 'a' &&
							      name[-1] <= 'z') ||
					      (name[-1] >= '0' && name[-1] <= '9')); name--)
			;
		fprintf(f, "%s%.*s", p == params ? "" : ", ", (int)(end - name), name);
		p = *end ? end + 1 : end;
	}
}

/* True when some loop event (loop_invoke, loop_iter, loop_exit) is sent. */
static bool sends_loop_events(const struct gen *g)
{
	static const char *const names[] = { "loop_invoke", "loop_iter", "loop_exit" };

	for (unsigned i = 0; i < 3; i++)
		if (g->w->nwords[mn_spec_event_find(g->c, names[i])->code])
			return true;
	return false;
}

/*
 * Sampled builds with summaries on: the stash and the walk the summary entry points use at N > 1,
 * once, above the first of them; the send_<event>() functions of load and store are written.
 * The walk is one period per sample with no loop event sent, else also one turn per iteration
 * (each sends loop_iter).  See the comment written for what it does and why.
 */
static void put_summary_sampling(struct gen *g)
{
	const struct mn_spec_event *load = mn_spec_event_find(g->c, "load");
	const struct mn_spec_event *store = mn_spec_event_find(g->c, "store");
	bool loops = sends_loop_events(g);
	FILE *f = g->f;

	fputs("\n/*\n"
	      " * Loop summaries under sampling.  At N = 1 (mn_sample_lo and mn_sample_span both\n"
	      " * 1: every access is sent) the summary entry points push their records, as in a\n"
	      " * build without sampling, and the backend expands them.  At N > 1 they push\n"
	      " * none: __mnemo_loop_summary_load and _store keep their access on this thread's\n"
	      " * stash, and __mnemo_loop_summary takes its entries off the top and sends the\n"
	      " * loads and stores the countdown picks among the loop's iterations x accesses,\n"
	      " * in program order (iteration by iteration, each in stash order), as the\n"
	      " * per-access entry points would have: the same countdown, the same draws, the\n"
	      " * same records (summary_sample()).\n"
	      " *\n"
	      " * A stack: a signal handler may run a summarized loop between another loop's\n"
	      " * pushes and its __mnemo_loop_summary (or a mixed loop's close, when its\n"
	      " * entries stay on the stash), and then takes its own entries off the\n"
	      " * top.  A push claims its slot (summary_depth) before writing it, and a summary\n"
	      " * frees its slots only after reading them.  Past SUMMARY_STASH entries (a loop\n"
	      " * has at most 256) a push is counted in summary_depth but not stored, and a\n"
	      " * summary with an entry not stored is lost: its loop_summary record goes out\n"
	      " * alone, and the backend, which holds no access for it, counts it lost (the\n"
	      " * profile says incomplete).  Never more than SUMMARY_STASH entries are written.\n"
	      " */\n"
	      "#define SUMMARY_STASH 512\n"
	      "\n"
	      "/* One summarized access on the stash. */\n"
	      "struct summary_access {\n"
	      "\tuint64_t start;\t\t/* its address in iteration 0 */\n"
	      "\tint64_t step;\t\t/* bytes per iteration */\n"
	      "\tuint32_t site, size;\n"
	      "\tuint32_t store;\t\t/* 1: a store, 0: a load */\n"
	      "};\n"
	      "\n"
	      "/* This thread's summary stash. */\n"
	      "static __thread uint32_t summary_depth MN_TLS_IE;\t/* pushed, stored or not */\n"
	      "static __thread struct summary_access summary_stash[SUMMARY_STASH] MN_TLS_IE;\n"
	      "\n"
	      "/* N = 1: every access is sent, and summaries go to the backend as they are. */\n"
	      "static inline __attribute__((always_inline)) int summary_every_access(void)\n"
	      "{\n"
	      "\treturn mn_sample_lo == 1 && mn_sample_span == 1;\n"
	      "}\n"
	      "\n"
	      "/* N > 1: one summarized access on top of this thread's stash. */\n"
	      "static inline __attribute__((always_inline)) void\n"
	      "summary_stash_push(uint32_t site, const void *start, int64_t step, uint32_t size,\n"
	      "\t\t   uint32_t store)\n"
	      "{\n"
	      "\tuint32_t i = mn_load_signal(&summary_depth);\n"
	      "\tstruct summary_access *a;\n"
	      "\n"
	      "\t/* The slot is ours before it is written: a handler now pushes above it. */\n"
	      "\tmn_store_signal(&summary_depth, i + 1);\n"
	      "\tif (__builtin_expect(i >= SUMMARY_STASH, 0))\n"
	      "\t\treturn;\n"
	      "\ta = &summary_stash[i];\n"
	      "\tmn_store_signal(&a->start, (uint64_t)(uintptr_t)start);\n"
	      "\tmn_store_signal(&a->step, step);\n"
	      "\tmn_store_signal(&a->site, site);\n"
	      "\tmn_store_signal(&a->size, size);\n"
	      "\tmn_store_signal(&a->store, store);\n"
	      "}\n"
	      "\n"
	      "/*\n"
	      " * Sends the summarized access a of iteration k as its per-access entry point\n"
	      " * would have sent it (value 0: not sent); returns the next period, at least 1.\n"
	      " */\n"
	      "static inline __attribute__((always_inline)) uint64_t\n"
	      "summary_send(const struct summary_access *a, uint64_t k)\n"
	      "{\n"
	      "\tconst void *addr = (const void *)(uintptr_t)(a->start + k * (uint64_t)a->step);\n"
	      "\tint32_t period;\n"
	      "\n", f);
	/*
	 * A load or store with no send_<event>() is not sent, and none is summarized; or, with the
	 * pointer flag, sent only for pointer values (send_<event>_ptr()), which stay per access.
	 */
	if (g->send_done[store->code] && g->send_done[load->code])
		fputs("\tif (a->store)\n"
		      "\t\tperiod = send_store(a->site, addr, 0, a->size);\n"
		      "\telse\n"
		      "\t\tperiod = send_load(a->site, addr, 0, a->size);\n", f);
	else if (g->send_done[store->code] && g->send_ptr_done[load->code])
		fputs("\t/* Loads are sent only for pointer values, per access: only stores are\n"
		      "\t * summarized. */\n"
		      "\tperiod = send_store(a->site, addr, 0, a->size);\n", f);
	else if (g->send_done[load->code] && g->send_ptr_done[store->code])
		fputs("\t/* Stores are sent only for pointer values, per access: only loads are\n"
		      "\t * summarized. */\n"
		      "\tperiod = send_load(a->site, addr, 0, a->size);\n", f);
	else if (g->send_done[store->code])
		fputs("\t/* Only stores are sent, so only stores are summarized. */\n"
		      "\tperiod = send_store(a->site, addr, 0, a->size);\n", f);
	else
		fputs("\t/* Only loads are sent, so only loads are summarized. */\n"
		      "\tperiod = send_load(a->site, addr, 0, a->size);\n", f);
	fputs("\treturn period > 0 ? (uint64_t)period : 1;\n"
	      "}\n"
	      "\n"
	      "/*\n"
	      " * N > 1: the summary of loop site, whose `accesses` entries are the top of the\n"
	      " * stash, run `iterations` times.  Walks the countdown over the iterations x\n"
	      " * accesses positions as the per-access entry points would have counted it down:\n"
	      " * the position where it reaches 1 or less is sent, and the period then drawn\n"
	      " * counts from there; ", f);
	if (loops)
		fputs("loop events are sent, so loop_invoke, loop_iter at each\n"
		      " * iteration and loop_exit go around and between the samples, in order:\n"
		      " * O(iterations + samples).\n", f);
	else
		fputs("no loop event is sent, so it jumps from sample to\n"
		      " * sample: O(samples + 1), not O(iterations).\n", f);
	fputs(" * Pops the entries; returns 0 when the summary is lost (too few entries, or\n"
	      " * one not stored), when its loop_summary record must go out alone.\n"
	      " */\n"
	      "static __attribute__((noinline)) int\n"
	      "summary_sample(uint32_t site, uint32_t accesses, uint64_t iterations)\n"
	      "{\n"
	      "\tuint32_t depth = mn_load_signal(&summary_depth);\n"
	      "\tconst struct summary_access *a;\n"
	      "\tint32_t left = sample_countdown;\n"
	      "\tuint64_t total, p;\n"
	      "\n"
	      "\tif (accesses > depth) {\n"
	      "\t\t/* Entries were lost before: none below belongs to a whole summary. */\n"
	      "\t\tmn_store_signal(&summary_depth, 0);\n"
	      "\t\treturn 0;\n"
	      "\t}\n"
	      "\tif (accesses && depth > SUMMARY_STASH) {\n"
	      "\t\tmn_store_signal(&summary_depth, depth - accesses);\n"
	      "\t\treturn 0;\n"
	      "\t}\n"
	      "\ta = summary_stash + (depth - accesses);\n"
	      "\t/* Positions, capped where no walk gets in a lifetime, so that p cannot wrap. */\n"
	      "\tif (__builtin_mul_overflow(iterations, (uint64_t)accesses, &total) ||\n"
	      "\t    total > UINT64_C(1) << 62)\n"
	      "\t\ttotal = UINT64_C(1) << 62;\n"
	      "\t/* The first position sent: the countdown is at 1 or less there. */\n"
	      "\tp = left > 1 ? (uint64_t)left - 1 : 0;\n", f);
	if (loops)
		fputs("\t__mnemo_loop_invoke(site);\n"
		      "\tfor (uint64_t k = 0; k < iterations; k++) {\n"
		      "\t\tuint64_t end = k * accesses + accesses;\n"
		      "\n"
		      "\t\t__mnemo_loop_iter(site);\n"
		      "\t\twhile (p < end && p < total)\n"
		      "\t\t\tp += summary_send(&a[p - k * accesses], k);\n"
		      "\t}\n"
		      "\t__mnemo_loop_exit(site);\n", f);
	else
		fputs("\twhile (p < total) {\n"
		      "\t\tuint64_t k = p / accesses;\n"
		      "\n"
		      "\t\tp += summary_send(&a[p - k * accesses], k);\n"
		      "\t}\n", f);
	fputs("\t/* Where the per-access countdown would stand after the last position. */\n"
	      "\tif (total)\n"
	      "\t\tsample_countdown = (int32_t)(p - total + 1);\n"
	      "\t/* The entries are read: only now may a handler's pushes reuse their slots. */\n"
	      "\tmn_signal_fence();\n"
	      "\tmn_store_signal(&summary_depth, depth - accesses);\n"
	      "\treturn 1;\n"
	      "}\n", f);
	g->summary_sampling_done = true;
}

/*
 * A summary entry point of a sampled build: at N = 1 its record, as put_callback() writes it
 * without sampling; at N > 1 a push on the stash (_load, _store) or the walk
 * (put_summary_sampling()).
 */
static void put_sampled_summary(struct gen *g, const struct abi_entry *e,
				const struct mn_spec_event *ev)
{
	FILE *f = g->f;

	if (!g->summary_sampling_done)
		put_summary_sampling(g);
	fputc('\n', f);
	put_layout(g, ev);
	fprintf(f, "MN_ENTRY void %s(%s)\n{\n\tuint64_t w[%u];\n\n", e->fn, e->params,
		g->w->nwords[ev->code]);
	if (!strcmp(ev->name, "loop_summary"))
		fputs("\tif (!summary_every_access() &&\n"
		      "\t    summary_sample(site, accesses, iterations))\n"
		      "\t\treturn;\n", f);
	else
		fprintf(f, "\tif (!summary_every_access()) {\n"
			"\t\tsummary_stash_push(site, start, step, size, %d);\n"
			"\t\treturn;\n"
			"\t}\n", !strcmp(ev->name, "loop_summary_store"));
	put_record_words(g, e, ev);
	fputs("}\n", f);
}

/*
 * Sampled builds with mixed loops on: the frames and the walk the mixed entry points use at
 * N > 1, after the stash (put_summary_sampling()), which holds a mixed loop's summarized accesses
 * from its open to its close.  The walk is summary_sample()'s over a part of a loop: it jumps from
 * sample to sample with no loop event sent, else also takes one turn per iteration (loop_iter).
 * See the comment written for what it does and why.
 */
static void put_mixed_sampling(struct gen *g)
{
	const struct abi_entry *e = abi_entry("loop_summary");
	const struct mn_spec_event *ev = mn_spec_event_find(g->c, e->event);
	bool loops = sends_loop_events(g);
	FILE *f = g->f;

	fputs("\n/*\n"
	      " * Mixed loops under sampling.  At N = 1 the four entry points push their\n"
	      " * records, as without sampling.  At N > 1 they push none: the loop's summarized\n"
	      " * accesses stay on the stash from __mnemo_loop_summary_open to its close.\n"
	      " * Summarized access j of iteration k is at position k x accesses + j; a mixed\n"
	      " * access of rank r in iteration k comes right before position k x accesses + r.\n",
	      f);
	if (loops)
		fputs(" * The countdown runs over the summarized and the mixed accesses in program\n"
		      " * order, as the per-access entry points would have: the same countdown, the\n"
		      " * same draws, the same records.  A mixed access first walks the positions\n"
		      " * before it not walked yet, sending those the countdown picks as\n"
		      " * summary_sample() does, then counts itself down as __mnemo_load or\n"
		      " * __mnemo_store would; the close walks the rest.  Loop events are sent, and\n"
		      " * must come in order: loop_invoke at the open, loop_iter before the first\n"
		      " * access of each iteration and, at the close, for each iteration left, and\n"
		      " * loop_exit at the close, where the per-access build sends them.\n", f);
	else
		fputs(" * No loop event is sent, so order matters only within a site: a mixed access\n"
		      " * counts itself down at once, as __mnemo_load or __mnemo_store would, and the\n"
		      " * close walks all the loop's positions, jumping from sample to sample.  The\n"
		      " * same one access in N, but not the per-access build's same accesses: walking\n"
		      " * the positions before each mixed access (as with loop events) keeps the\n"
		      " * countdown in memory through the loop, which took a histogram's loop from\n"
		      " * 1.75 to 9.9 times its native time at N = 1000; counted down at once, it stays\n"
		      " * in a register.\n", f);
	fputs(" *\n"
	      " * The open loops are a stack of frames, like the stash: a signal handler may run\n"
	      " * a whole mixed loop in the middle of another, above its frame and entries, and\n"
	      " * pops them at its close.  An open claims its frame (mixed_depth) before writing\n"
	      " * it.  A loop with too few entries or one not stored, or with no frame to hold\n"
	      " * it, is lost as a summary is: its loop_summary record goes out alone\n"
	      " * (summary_lost()), and the backend, which holds no entry for it at N > 1,\n"
	      " * counts it lost; its mixed accesses are still counted down one by one.  Never\n"
	      " * more than MIXED_FRAMES frames are written.\n"
	      " */\n"
	      "#define MIXED_FRAMES 32\n"
	      "\n"
	      "/* One open mixed loop, at N > 1. */\n"
	      "struct mixed_frame {\n"
	      "\tuint64_t pos;\t\t/* its next summarized position not walked */\n"
	      "\tuint64_t iters;\t\t/* its iterations begun (loop_iter sent) */\n"
	      "\tuint32_t base;\t\t/* its first entry on the stash */\n"
	      "\tuint32_t accesses;\t/* its summarized accesses: entries from base */\n"
	      "\tuint32_t site;\t\t/* the loop */\n"
	      "\tuint32_t lost;\t\t/* 1: nothing of it is walked; its close says lost */\n"
	      "};\n"
	      "\n"
	      "/* This thread's open mixed loops. */\n"
	      "static __thread uint32_t mixed_depth MN_TLS_IE;\t/* opened, stored or not */\n"
	      "static __thread struct mixed_frame mixed_frames[MIXED_FRAMES] MN_TLS_IE;\n"
	      "\n"
	      "/* A lost mixed loop's loop_summary record, alone (the backend counts it lost). */\n"
	      "static __attribute__((noinline, cold)) void\n"
	      "summary_lost(uint32_t site, uint32_t accesses, uint64_t iterations)\n"
	      "{\n", f);
	put_record(g, e, ev);
	fputs("}\n"
	      "\n"
	      "/*\n"
	      " * The position of summarized access `rank` of iteration `iteration` in a loop of\n"
	      " * `accesses` of them (a rank past them is the next iteration's first), capped\n"
	      " * where no walk gets in a lifetime, so that positions cannot wrap.\n"
	      " */\n"
	      "static inline __attribute__((always_inline)) uint64_t\n"
	      "mixed_position(uint64_t iteration, uint32_t rank, uint32_t accesses)\n"
	      "{\n"
	      "\tuint64_t p;\n"
	      "\n"
	      "\tif (__builtin_mul_overflow(iteration, (uint64_t)accesses, &p) ||\n"
	      "\t    p > UINT64_C(1) << 62)\n"
	      "\t\treturn UINT64_C(1) << 62;\n"
	      "\treturn p + (rank < accesses ? rank : accesses);\n"
	      "}\n"
	      "\n"
	      "/*\n"
	      " * Walks frame f's countdown over its positions [f->pos, to) as summary_sample()\n"
	      " * walks a whole loop's: the first position sent is where the countdown is at 1 or\n"
	      " * less, and the countdown is left where the per-access one would stand after\n"
	      " * position to - 1.", f);
	if (loops)
		fputs("  loop_iter goes out before the first position of each iteration\n"
		      " * not begun, up to iteration `iters` - 1.", f);
	fputs("\n * A frame whose entries are no longer on the stash (a lost summary above them\n"
	      " * took them) becomes lost.\n"
	      " */\n"
	      "static __attribute__((noinline)) void\n", f);
	fprintf(f, "mixed_walk(struct mixed_frame *f, %suint64_t to)\n",
		loops ? "uint64_t iters, " : "");
	fputs("{\n"
	      "\tconst struct summary_access *a = summary_stash + f->base;\n"
	      "\tuint32_t n = f->accesses;\n"
	      "\tint32_t left = sample_countdown;\n"
	      "\tuint64_t from = f->pos, p;\n"
	      "\n"
	      "\tif (mn_load_signal(&summary_depth) < f->base + n) {\n"
	      "\t\tf->lost = 1;\n"
	      "\t\treturn;\n"
	      "\t}\n"
	      "\tp = from + (left > 1 ? (uint64_t)left - 1 : 0);\n", f);
	if (loops)
		fputs("\tfor (uint64_t k = f->iters; k < iters; k++) {\n"
		      "\t\t/* Iteration k begins after the positions of those before it. */\n"
		      "\t\tuint64_t end = mixed_position(k, 0, n);\n"
		      "\n"
		      "\t\tif (end > to)\n"
		      "\t\t\tend = to;\n"
		      "\t\twhile (p < end) {\n"
		      "\t\t\tuint64_t j = p / n;\n"
		      "\n"
		      "\t\t\tp += summary_send(&a[p - j * n], j);\n"
		      "\t\t}\n"
		      "\t\t__mnemo_loop_iter(f->site);\n"
		      "\t\tf->iters = k + 1;\n"
		      "\t}\n", f);
	fputs("\twhile (p < to) {\n"
	      "\t\tuint64_t k = p / n;\n"
	      "\n"
	      "\t\tp += summary_send(&a[p - k * n], k);\n"
	      "\t}\n"
	      "\tif (to > from) {\n"
	      "\t\tsample_countdown = (int32_t)(p - to + 1);\n"
	      "\t\tf->pos = to;\n"
	      "\t}\n"
	      "}\n"
	      "\n", f);
	if (loops)
		fputs("/*\n"
		      " * N > 1, at a mixed access of rank `rank` in iteration `iteration` of the\n"
		      " * innermost open mixed loop: the walk up to it, inline when the countdown\n"
		      " * picks none of the positions and the iteration is begun.\n"
		      " */\n"
		      "static inline __attribute__((always_inline)) void\n"
		      "mixed_to(uint64_t iteration, uint32_t rank)\n"
		      "{\n"
		      "\tuint32_t d = mn_load_signal(&mixed_depth);\n"
		      "\tint32_t left = sample_countdown;\n"
		      "\tstruct mixed_frame *f;\n"
		      "\tuint64_t to;\n"
		      "\n"
		      "\t/* No loop open, or its frame not stored (lost): the access goes alone. */\n"
		      "\tif (__builtin_expect(d - 1 >= MIXED_FRAMES, 0))\n"
		      "\t\treturn;\n"
		      "\tf = &mixed_frames[d - 1];\n"
		      "\tif (__builtin_expect(f->lost, 0))\n"
		      "\t\treturn;\n"
		      "\tto = mixed_position(iteration, rank, f->accesses);\n"
		      "\tif (__builtin_expect(iteration < f->iters, 1)) {\n"
		      "\t\tif (to <= f->pos)\n"
		      "\t\t\treturn;\n"
		      "\t\tif (left > 0 && to - f->pos < (uint64_t)left) {\n"
		      "\t\t\tsample_countdown = left - (int32_t)(to - f->pos);\n"
		      "\t\t\tf->pos = to;\n"
		      "\t\t\treturn;\n"
		      "\t\t}\n"
		      "\t}\n"
		      "\tmixed_walk(f, iteration + 1, to);\n"
		      "}\n"
		      "\n", f);
	fputs(	      "/* N > 1: mixed loop site opens; its `accesses` entries top the stash. */\n"
	      "static __attribute__((noinline)) void\n"
	      "mixed_open(uint32_t site, uint32_t accesses)\n"
	      "{\n"
	      "\tuint32_t depth = mn_load_signal(&summary_depth);\n"
	      "\tuint32_t i = mn_load_signal(&mixed_depth);\n"
	      "\tuint32_t lost = accesses > depth || (accesses && depth > SUMMARY_STASH) ||\n"
	      "\t\t\ti >= MIXED_FRAMES;\n"
	      "\tstruct mixed_frame *f;\n"
	      "\n"
	      "\t/* The frame is ours before it is written: a handler now opens above it. */\n"
	      "\tmn_store_signal(&mixed_depth, i + 1);\n"
	      "\tif (lost) {\n"
	      "\t\t/* Its entries go now, as summary_sample() takes a lost summary's. */\n"
	      "\t\tdepth = accesses > depth ? 0 : depth - accesses;\n"
	      "\t\tmn_store_signal(&summary_depth, depth);\n"
	      "\t}\n"
	      "\tif (i >= MIXED_FRAMES) {\n"
	      "\t\t/* No frame to hold it: lost now, and its close only pops the depth. */\n"
	      "\t\tsummary_lost(site, accesses, 1);\n"
	      "\t\treturn;\n"
	      "\t}\n"
	      "\tf = &mixed_frames[i];\n"
	      "\tmn_store_signal(&f->pos, 0);\n"
	      "\tmn_store_signal(&f->iters, 0);\n"
	      "\tmn_store_signal(&f->base, lost ? depth : depth - accesses);\n"
	      "\tmn_store_signal(&f->accesses, accesses);\n"
	      "\tmn_store_signal(&f->site, site);\n"
	      "\tmn_store_signal(&f->lost, lost);\n", f);
	if (loops)
		fputs("\tif (!lost)\n"
		      "\t\t__mnemo_loop_invoke(site);\n", f);
	fputs("}\n"
	      "\n"
	      "/*\n"
	      " * N > 1: mixed loop site closes after `iterations` iterations.  Its innermost\n"
	      " * frame walks the rest", f);
	fputs(loops ? " (with loop_iter for the iterations not begun), sends\n"
		      " * loop_exit, and pops" : ", and pops", f);
	fputs(" with its entries.  Frames above it, loops\n"
	      " * that a signal handler left by jumping out, are popped too, each lost; a close\n"
	      " * with no frame of its loop pops nothing.\n"
	      " */\n"
	      "static __attribute__((noinline)) void\n"
	      "mixed_close(uint32_t site, uint64_t iterations)\n"
	      "{\n"
	      "\tuint32_t d = mn_load_signal(&mixed_depth), i = d, depth;\n"
	      "\tstruct mixed_frame *f;\n"
	      "\n"
	      "\tif (d > MIXED_FRAMES) {\n"
	      "\t\t/* Its frame was not stored: lost at the open, which said so. */\n"
	      "\t\tmn_store_signal(&mixed_depth, d - 1);\n"
	      "\t\treturn;\n"
	      "\t}\n"
	      "\twhile (i && mixed_frames[i - 1].site != site)\n"
	      "\t\ti--;\n"
	      "\tif (!i)\n"
	      "\t\treturn;\n"
	      "\tfor (uint32_t j = i; j < d; j++)\n"
	      "\t\tsummary_lost(mixed_frames[j].site, mixed_frames[j].accesses, 1);\n"
	      "\tf = &mixed_frames[i - 1];\n"
	      "\tif (!f->lost)\n", f);
	fprintf(f, "\t\tmixed_walk(f, %smixed_position(iterations, 0, f->accesses));\n",
		loops ? "iterations, " : "");
	fputs("\tif (f->lost)\n"
	      "\t\tsummary_lost(site, f->accesses, iterations);\n", f);
	if (loops)
		fputs("\telse\n"
		      "\t\t__mnemo_loop_exit(site);\n", f);
	fputs("\t/* The entries are read: only now may a handler's pushes reuse their slots. */\n"
	      "\tmn_signal_fence();\n"
	      "\tdepth = mn_load_signal(&summary_depth);\n"
	      "\tmn_store_signal(&summary_depth, depth < f->base ? depth : f->base);\n"
	      "\tmn_store_signal(&mixed_depth, i - 1);\n"
	      "}\n", f);
}

/*
 * Mixed loops on: the state their entry points share and the loop_summary_at record, once, above
 * the first of them, and in a sampled build what they use at N > 1 (put_mixed_sampling()).  See
 * the comment written for what it does and why.
 */
static void put_mixed_state(struct gen *g)
{
	const struct abi_entry *e = abi_entry("loop_summary_at");
	const struct mn_spec_event *ev = mn_spec_event_find(g->c, e->event);
	FILE *f = g->f;

	fputs("\n/*\n"
	      " * Mixed loops.  A mixed record carries its iteration in one bit, `next`: 1 when\n"
	      " * it is in the iteration after the previous mixed record's of the innermost open\n"
	      " * mixed loop, 0 when in the same one.  mixed_last is that previous record's\n"
	      " * iteration; any other gap is first said by a loop_summary_at record, and the\n"
	      " * mixed record then has next = 0.  __mnemo_loop_summary_open sets it to\n"
	      " * UINT64_MAX, iteration -1, so that iteration 0 is the next one;\n"
	      " * __mnemo_loop_summary_close to UINT64_MAX - 1, after which every iteration\n"
	      " * is a gap: when a signal handler ran a whole mixed loop between two mixed\n"
	      " * records of another, the second resynchronizes with loop_summary_at.\n"
	      " *\n"
	      " * Initial-exec TLS, read and written with signal-ordered accesses (barrier.h),\n"
	      " * as a handler on this thread must see them in program order.  The backend\n"
	      " * keeps each open loop's last iteration itself, so a handler that runs between\n"
	      " * the read and the write changes nothing that the record sent says.\n"
	      " */\n", f);
	/* A sampled build has defined it with the countdown (put_sampling()). */
	if (!g->sample)
		fputs("#define MN_TLS_IE __attribute__((tls_model(\"initial-exec\")))\n", f);
	fputs("static __thread uint64_t mixed_last MN_TLS_IE;\n"
	      "\n", f);
	put_layout(g, ev);
	fputs("/* Out of line: the mixed entry points, inlined at every access, stay lean. */\n"
	      "static __attribute__((noinline)) void mixed_at(uint64_t iteration)\n{\n", f);
	put_record(g, e, ev);
	fputs("}\n"
	      "\n"
	      "/*\n"
	      " * The `next` bit of a mixed record in iteration `iteration`, after the\n"
	      " * loop_summary_at record that the gap from the previous one may need.\n"
	      " */\n"
	      "static inline __attribute__((always_inline)) uint64_t\n"
	      "mixed_next(uint64_t iteration)\n"
	      "{\n"
	      "\tuint64_t d = iteration - mn_load_signal(&mixed_last);\n"
	      "\n"
	      "\tif (d > 1) {\n"
	      "\t\tmixed_at(iteration);\n"
	      "\t\td = 0;\n"
	      "\t}\n"
	      "\tmn_store_signal(&mixed_last, iteration);\n"
	      "\treturn d;\n"
	      "}\n", f);
	if (g->sample)
		put_mixed_sampling(g);
	g->mixed_done = true;
}

/*
 * Values as sets, when a chosen module takes `value`: the slots the runtime points at the
 * session's, the record, and the check every value-checking entry point inlines.
 */
static void put_value_check(struct gen *g)
{
	const struct abi_entry *e = abi_entry("value");
	const struct mn_spec_event *ev = mn_spec_event_find(g->c, "value");
	FILE *f = g->f;

	fputs("\n/*\n"
	      " * Values as sets (abi.h, struct mn_value_set): module ", f);
	put_comment_text(f, g->values->name);
	fputs(" takes `value`.\n"
	      " * Each load and store it takes checks its value against the site's published\n"
	      " * set, and sends a `value` record only when the set lacks it; in summarized and\n"
	      " * mixed loops the pass calls __mnemo_value at the access instead.  A constant\n"
	      " * load costs one compare once the backend has published its value.\n"
	      " */\n"
	      "struct mn_value_set *__mnemo_value_sets;\n"
	      "uint32_t __mnemo_value_sites;\n"
	      "\n", f);
	put_layout(g, ev);
	fputs("/* Out of line: the check, inlined at every access, stays lean. */\n"
	      "static __attribute__((noinline, cold)) void value_send(uint32_t site, "
	      "uint64_t value)\n{\n", f);
	put_record(g, e, ev);
	fputs("}\n"
	      "\n"
	      "/*\n"
	      " * Sends value unless site's slot has it (abi.h: linear probing from its hash).\n"
	      " * Acquire: the values of the bits seen were written before them.  No slots yet\n"
	      " * (or a site past them): sent.\n"
	      " */\n"
	      "static inline __attribute__((always_inline)) void\n"
	      "value_check(uint32_t site, uint64_t value)\n"
	      "{\n"
	      "\tif (__builtin_expect(site < __mnemo_value_sites, 1)) {\n"
	      "\t\tconst struct mn_value_set *vs = &__mnemo_value_sets[site];\n"
	      "\t\tuint32_t used = __atomic_load_n(&vs->used, __ATOMIC_ACQUIRE);\n"
	      "\t\tuint32_t i = MN_VALUE_SET_HASH(value);\n"
	      "\n"
	      "\t\tif (used == MN_VALUE_SET_ALL)\n"
	      "\t\t\treturn;\n"
	      "\t\tfor (unsigned k = 0; k < MN_VALUE_SET_MAX && (used >> i & 1); k++) {\n"
	      "\t\t\tif (vs->values[i] == value)\n"
	      "\t\t\t\treturn;\n"
	      "\t\t\ti = (i + 1) % MN_VALUE_SET_MAX;\n"
	      "\t\t}\n"
	      "\t}\n"
	      "\tvalue_send(site, value);\n"
	      "}\n", f);
}

/*
 * __mnemo_value: the check, or empty when no chosen module takes `value`; and
 * __mnemo_value_done, which is no event: whether a site needs no more values (abi.h).
 */
static void put_value_entry(const struct gen *g, const struct abi_entry *e)
{
	FILE *f = g->f;

	if (!g->values) {
		fprintf(f, "\n/* value: no chosen module takes it; not sent. */\n"
			"MN_ENTRY void %s(%s)\n{\n}\n", e->fn, e->params);
		fputs("\n/* Not an event; no value is checked, so none is done. */\n"
		      "MN_ENTRY uint32_t __mnemo_value_done(uint32_t site)\n{\n\treturn 0;\n}\n", f);
		return;
	}
	fprintf(f, "\n/* A summarized or mixed access's value (abi.h). */\n"
		"MN_ENTRY void %s(%s)\n{\n\tvalue_check(site, value);\n}\n", e->fn, e->params);
	fputs("\n/* Not an event: whether site needs no more values, in a loop's preheader. */\n"
	      "MN_ENTRY uint32_t __mnemo_value_done(uint32_t site)\n"
	      "{\n"
	      "\treturn site < __mnemo_value_sites &&\n"
	      "\t       __atomic_load_n(&__mnemo_value_sets[site].used, __ATOMIC_RELAXED) ==\n"
	      "\t       MN_VALUE_SET_ALL;\n"
	      "}\n", f);
}

/*
 * The start of a mixed entry point's body in a sampled build, to its record: at N > 1 the frame
 * (open, close) or the walk and the access's countdown (mixed_load, mixed_store) of
 * put_mixed_sampling(), and a return; at N = 1 what put_mixed() writes without sampling.
 */
static void put_sampled_mixed_head(const struct gen *g, const struct abi_entry *e,
				   unsigned nwords)
{
	const struct mn_spec_event *load = mn_spec_event_find(g->c, "load");
	const struct mn_spec_event *store = mn_spec_event_find(g->c, "store");
	bool is_store = !strcmp(e->event, "mixed_store");
	const char *kind = is_store ? "store" : "load";
	FILE *f = g->f;

	if (!strcmp(e->event, "loop_summary_open")) {
		fprintf(f, "\tuint64_t w[%u];\n\n"
			"\tif (!summary_every_access()) {\n"
			"\t\tmixed_open(site, accesses);\n"
			"\t\treturn;\n"
			"\t}\n"
			"\t/* Iteration -1: iteration 0 is the next one. */\n"
			"\tmn_store_signal(&mixed_last, UINT64_MAX);\n", nwords);
		return;
	}
	if (!strcmp(e->event, "loop_summary_close")) {
		fprintf(f, "\tuint64_t w[%u];\n\n"
			"\tif (!summary_every_access()) {\n"
			"\t\tmixed_close(site, iterations);\n"
			"\t\treturn;\n"
			"\t}\n"
			"\t/* No iteration: an enclosing loop's next mixed record resyncs. */\n"
			"\tmn_store_signal(&mixed_last, UINT64_MAX - 1);\n", nwords);
		return;
	}
	fputs("\tif (!summary_every_access()) {\n", f);
	/*
	 * A load or store with no send_<event>() is not sent, and none is made mixed; or, with the
	 * pointer flag, sent only for pointer values (send_<event>_ptr()), which stay per access.
	 */
	if (g->send_ptr_done[(is_store ? store : load)->code] &&
	    !g->send_done[(is_store ? store : load)->code]) {
		fprintf(f, "\t\t/* A %s is sent only for a pointer value, per access, so none is "
			"mixed. */\n", kind);
	} else if (!g->send_done[(is_store ? store : load)->code]) {
		fprintf(f, "\t\t/* No %s is sent, so none is mixed. */\n", kind);
	} else {
		fputs("\t\tint32_t left;\n\n", f);
		if (sends_loop_events(g))
			fprintf(f, "\t\t/* The summarized accesses before it, then itself as "
				"__mnemo_%s. */\n\t\tmixed_to(iteration, rank);\n", kind);
		else
			fputs("\t\t/* At once: the close walks the summarized accesses (no loop "
			      "events). */\n", f);
		fprintf(f, "\t\tleft = sample_countdown - 1;\n"
			"\t\tif (__builtin_expect(left > 0, 1)) {\n"
			"\t\t\tsample_countdown = left;\n"
			"\t\t\treturn;\n"
			"\t\t}\n"
			"\t\tsample_countdown = send_%s(site, addr, 0, size);\n", kind);
	}
	fputs("\t\treturn;\n"
	      "\t}\n", f);
}

/*
 * An entry point of mixed loops: empty when they are off; else its record, after setting
 * mixed_last (open, close) or computing the position's `next` bit (mixed_load, mixed_store).
 * In a sampled build, that at N = 1 only (put_sampled_mixed_head()).
 */
static void put_mixed(struct gen *g, const struct abi_entry *e)
{
	const struct mn_spec_event *ev = mn_spec_event_find(g->c, e->event);  /* NULL when off */
	FILE *f = g->f;
	unsigned nwords;

	if (!(g->plan & MNEMO_PLAN_MIXED_ON)) {
		fprintf(f, "\n/* %s: mixed loops are off (%s); not sent. */\n", e->event,
			g->mixed_off);
		fprintf(f, "MN_ENTRY void %s(%s)\n{\n}\n", e->fn, e->params);
		return;
	}
	if (!g->mixed_done)
		put_mixed_state(g);
	fputc('\n', f);
	put_layout(g, ev);
	nwords = g->w->nwords[ev->code];
	if (g->sample && (!strcmp(e->event, "mixed_load") || !strcmp(e->event, "mixed_store"))) {
		/* The record out of line, so that the entry point inlines: its countdown then
		 * stays in a register through the loop at N > 1 (a call would keep it in memory). */
		fprintf(f, "/* N = 1: the record, out of line. */\n"
			"static __attribute__((noinline)) void %s_record(%s)\n{\n"
			"\tuint64_t next = mixed_next(iteration);\n\tuint64_t w[%u];\n\n",
			e->event, e->params, nwords);
		put_record_words(g, e, ev);
		fprintf(f, "}\n\nMN_ENTRY void %s(%s)\n{\n", e->fn, e->params);
		put_sampled_mixed_head(g, e, nwords);
		fprintf(f, "\t%s_record(site, addr, size, iteration, rank);\n}\n", e->event);
		return;
	}
	fprintf(f, "MN_ENTRY void %s(%s)\n{\n", e->fn, e->params);
	if (g->sample)
		put_sampled_mixed_head(g, e, nwords);
	else if (!strcmp(e->event, "loop_summary_open"))
		fprintf(f, "\tuint64_t w[%u];\n\n"
			"\t/* Iteration -1: iteration 0 is the next one. */\n"
			"\tmn_store_signal(&mixed_last, UINT64_MAX);\n", nwords);
	else if (!strcmp(e->event, "loop_summary_close"))
		fprintf(f, "\tuint64_t w[%u];\n\n"
			"\t/* No iteration: an enclosing loop's next mixed record resyncs. */\n"
			"\tmn_store_signal(&mixed_last, UINT64_MAX - 1);\n", nwords);
	else
		fprintf(f, "\tuint64_t next = mixed_next(iteration);\n\tuint64_t w[%u];\n\n",
			nwords);
	put_record_words(g, e, ev);
	fputs("}\n", f);
}

/*
 * With the pointer flag, the comment above a load or store entry point (or its send function)
 * whose record differs from the layout: its code, or its value sent as 0.  Nothing otherwise.
 */
static void put_access_note(const struct gen *g, const struct abi_entry *e,
			    const struct mn_spec_event *ev)
{
	int value = mn_spec_arg_find(ev, "value");

	if (pointer_coded(g, e))
		fprintf(g->f, "/* %s of a pointer value: the same record, its code or'ed with\n"
			" * MN_CODE_POINTER (the wire's pointer flag); always per access. */\n",
			ev->name);
	else if (value >= 0 && g->w->arg[ev->code][value].bits && zeroes_arg(g, e, ev, value))
		fprintf(g->f, "/* %s of a non-pointer value: `value` is sent as 0, as no module\n"
			" * that takes every %s uses it (the pointer-only modules get only\n"
			" * pointer records). */\n", ev->name, ev->name);
}

static void put_callback(struct gen *g, const struct abi_entry *e)
{
	const struct mn_spec_event *ev = mn_spec_event_find(g->c, e->event);
	enum body body;
	bool vcheck;
	FILE *f = g->f;

	if (e->accesses == MIXED) {
		put_mixed(g, e);
		return;
	}
	if (e->accesses == VALUE) {
		put_value_entry(g, e);
		return;
	}
	if (!ev) {   /* THREADS, in a catalogue older than them */
		fprintf(f, "\n/* %s: not in the catalogue; not sent. */\n", e->event);
		fprintf(f, "MN_ENTRY void %s(%s)\n{\n}\n", e->fn, e->params);
		return;
	}
	body = body_of(g, e);
	vcheck = checks_values(g, e);
	if (body == BODY_EMPTY && vcheck) {
		fprintf(f, "\n/* %s: no chosen module takes it here; its value is checked "
			"(`value`). */\n", ev->name);
		fprintf(f, "MN_ENTRY void %s(%s)\n{\n\tvalue_check(site, value);\n}\n", e->fn,
			e->params);
		return;
	}
	if (body == BODY_EMPTY && e->accesses == SUMMARY) {
		fprintf(f, "\n/* %s: loop summaries are off (%s); not sent. */\n", ev->name,
			g->summary_off);
		fprintf(f, "MN_ENTRY void %s(%s)\n{\n}\n", e->fn, e->params);
		return;
	}
	if (body == BODY_EMPTY && !g->w->nwords[ev->code]) {
		fprintf(f, "\n/* %s: no chosen module uses it; not sent. */\n", ev->name);
		fprintf(f, "MN_ENTRY void %s(%s)\n{\n}\n", e->fn, e->params);
		return;
	}
	if (body == BODY_EMPTY) {
		fprintf(f, "\n/* %s of a non-pointer value: every chosen module that uses %s takes "
			"only\n * pointer accesses (accesses: pointer); not sent. */\n", ev->name,
			ev->name);
		fprintf(f, "MN_ENTRY void %s(%s)\n{\n}\n", e->fn, e->params);
		return;
	}
	if (e->accesses == SUMMARY && g->sample) {
		put_sampled_summary(g, e, ev);
		return;
	}
	fputc('\n', f);
	if (body == BODY_COUNTDOWN) {
		/* A pointer-coded record has a send function of its own: send_<event>_ptr(). */
		const char *suffix = pointer_coded(g, e) ? "_ptr" : "";
		bool *done = pointer_coded(g, e) ? g->send_ptr_done : g->send_done;

		/* Sampled: the record goes out of line, once per event, above its first entry. */
		if (!done[ev->code]) {
			if (!g->send_done[ev->code] && !g->send_ptr_done[ev->code])
				put_layout(g, ev);
			if (pointer_coded(g, e)) {
				fprintf(f, "/* A sampled %s of a pointer value: sends it, its code "
					"or'ed with\n * MN_CODE_POINTER (the wire's pointer flag), "
					"returns the next period. */\n", ev->name);
			} else {
				put_access_note(g, e, ev);
				fprintf(f, "/* A sampled %s: sends it, returns the next period. */"
					"\n", ev->name);
			}
			fprintf(f, "static __attribute__((noinline, cold)) int32_t send_%s%s(%s)"
				"\n{\n", ev->name, suffix, e->params);
			put_record(g, e, ev);
			fputs("\treturn sample_period();\n}\n\n", f);
			done[ev->code] = true;
		}
		fprintf(f, "MN_ENTRY void %s(%s)\n{\n"
			"\tint32_t left = sample_countdown - 1;\n\n%s"
			"\tif (__builtin_expect(left > 0, 1)) {\n"
			"\t\tsample_countdown = left;\n"
			"\t\treturn;\n"
			"\t}\n"
			"\tsample_countdown = send_%s%s(", e->fn, e->params,
			vcheck ? "\tvalue_check(site, value);\n" : "", ev->name, suffix);
		put_param_names(f, e->params);
		fputs(");\n}\n", f);
		return;
	}
	/* The layout once, above the first of the event's entry points that has a body. */
	if (e->accesses != POINTER || !wants_all_accesses(g, ev))
		put_layout(g, ev);
	else if (!pointer_coded(g, e))
		fprintf(f, "/* %s of a pointer value: the same record as any other %s. */\n",
			ev->name, ev->name);
	put_access_note(g, e, ev);
	fprintf(f, "MN_ENTRY void %s(%s)\n{\n", e->fn, e->params);
	put_record(g, e, ev);
	if (vcheck)
		fputs("\tvalue_check(site, value);\n", f);
	fputs("}\n", f);
}

/*
 * Whether the access entry points count down: sample_var is the `sample:` of the first chosen
 * module that lists load or store and declares one; sampling is on when every module that lists
 * load or store declares that same variable, else sample_blocker names the first that does not.
 */
static void plan_sampling(struct gen *g)
{
	const struct mn_spec_event *load = mn_spec_event_find(g->c, "load");
	const struct mn_spec_event *store = mn_spec_event_find(g->c, "store");
	uint32_t accesses = (UINT32_C(1) << load->code) | (UINT32_C(1) << store->code);

	for (unsigned i = 0; i < g->nm && !g->sample_var; i++)
		if ((g->m[i]->events & accesses) && g->m[i]->sample)
			g->sample_var = g->m[i]->sample;
	if (!g->sample_var)
		return;
	for (unsigned i = 0; i < g->nm; i++) {
		if (!(g->m[i]->events & accesses))
			continue;
		if (!g->m[i]->sample || strcmp(g->m[i]->sample, g->sample_var)) {
			g->sample_blocker = g->m[i]->name;
			return;
		}
	}
	g->sample = true;
}

/* The entry points of __mnemo_summary_plan (abi.h), with their k. */
static const struct {
	const char *fn;
	unsigned k;
	bool per_access;   /* any body is state 2, whatever it sends (pointer_create) */
} plan_entries[] = {
	{ "__mnemo_load", MNEMO_PLAN_LOAD, false },
	{ "__mnemo_store", MNEMO_PLAN_STORE, false },
	{ "__mnemo_load_ptr", MNEMO_PLAN_LOAD_PTR, false },
	{ "__mnemo_store_ptr", MNEMO_PLAN_STORE_PTR, false },
	{ "__mnemo_pointer_create", MNEMO_PLAN_POINTER_CREATE, true },
	/* k = 5 is the three loop events together: the highest of their states. */
	{ "__mnemo_loop_invoke", MNEMO_PLAN_LOOP, false },
	{ "__mnemo_loop_iter", MNEMO_PLAN_LOOP, false },
	{ "__mnemo_loop_exit", MNEMO_PLAN_LOOP, false },
};

#define NPLAN (sizeof(plan_entries) / sizeof(plan_entries[0]))

/* The plan state of entry point e: what body_of() says its body does. */
static unsigned plan_state(const struct gen *g, const struct abi_entry *e, bool per_access)
{
	const struct mn_spec_event *ev = mn_spec_event_find(g->c, e->event);
	int value = mn_spec_arg_find(ev, "value");

	switch (body_of(g, e)) {
	case BODY_EMPTY:
		return checks_values(g, e) ? MNEMO_PLAN_VALUE_CHECKED : MNEMO_PLAN_EMPTY;
	case BODY_COUNTDOWN:   /* summaries count down the same way: put_summary_sampling() */
	case BODY_RECORD:
		break;
	}
	if (per_access)
		return MNEMO_PLAN_PER_ACCESS;
	/* Summary and mixed records carry no MN_CODE_POINTER: the backend would give a summarized
	 * pointer access to the modules that take every access only. */
	if (pointer_coded(g, e))
		return MNEMO_PLAN_PER_ACCESS;
	if (value >= 0 && g->w->arg[ev->code][value].bits && !zeroes_arg(g, e, ev, value))
		return MNEMO_PLAN_PER_ACCESS;
	return checks_values(g, e) ? MNEMO_PLAN_VALUE_CHECKED : MNEMO_PLAN_SUMMARIZABLE;
}

/*
 * __mnemo_summary_plan (abi.h) for the bodies this run writes: each entry point's state, and
 * MNEMO_PLAN_ON when some state is 1, unless summarize is false (--no-summarize) or with
 * --all-events; MNEMO_PLAN_MIXED_ON with it unless the catalogue lacks the events of mixed loops
 * (sampled builds too).  Sets g->plan, and g->summary_off and g->mixed_off
 * to why either is off.  Call after plan_sampling(), with g->w the modules' wire (without the
 * summary events).
 */
static void summary_plan(struct gen *g, bool summarize)
{
	bool some = false;

	g->plan = 0;
	for (unsigned i = 0; i < NPLAN; i++) {
		const struct abi_entry *e = NULL;
		unsigned k = plan_entries[i].k, st;

		for (unsigned j = 0; j < NABI && !e; j++)
			if (abi[j].fn && !strcmp(abi[j].fn, plan_entries[i].fn))
				e = &abi[j];
		assert(e);
		st = plan_state(g, e, plan_entries[i].per_access);
		if (st > MNEMO_PLAN_STATE(g->plan, k))
			g->plan = (g->plan & ~(UINT32_C(3) << 2 * k)) | (uint32_t)st << 2 * k;
	}
	for (unsigned k = 0; k <= MNEMO_PLAN_LOOP; k++)
		some |= MNEMO_PLAN_STATE(g->plan, k) == MNEMO_PLAN_SUMMARIZABLE ||
			MNEMO_PLAN_STATE(g->plan, k) == MNEMO_PLAN_VALUE_CHECKED;
	if (g->all_events)
		g->summary_off = "--all-events";
	else if (!summarize)
		g->summary_off = "--no-summarize";
	else if (!some)
		g->summary_off = "no entry point has state 1 or 3";
	else
		g->plan |= MNEMO_PLAN_ON;
	/*
	 * A countdown does not keep loops from being mixed: the mixed entry points run it over the
	 * summarized and the mixed accesses in order at N > 1 (put_mixed_sampling()).
	 */
	if (!(g->plan & MNEMO_PLAN_ON))
		g->mixed_off = g->summary_off;
	else if (!mn_spec_mixed_events(g->c))
		g->mixed_off = "the catalogue lacks their events";
	else
		g->plan |= MNEMO_PLAN_MIXED_ON;
}

/* __mnemo_summary_plan, with its states spelt out in a comment. */
static void put_summary_plan(const struct gen *g)
{
	static const char *const names[] = { "load", "store", "load_ptr", "store_ptr",
					     "pointer_create", "loop events" };
	FILE *f = g->f;

	fputs("\n/*\n"
	      " * Loop summaries (abi.h), per entry point: 0 empty, 1 may be summarized, 2 per\n"
	      " * access, 3 may be summarized, its value checked:", f);
	for (unsigned k = 0; k <= MNEMO_PLAN_LOOP; k++)
		fprintf(f, "%s %s %u", k ? "," : "", names[k], MNEMO_PLAN_STATE(g->plan, k));
	if (g->plan & MNEMO_PLAN_MIXED_ON)
		fputs(";\n * on, mixed loops on.\n */\n", f);
	else if (g->plan & MNEMO_PLAN_ON)
		fprintf(f, ";\n * on, mixed loops off (%s).\n */\n", g->mixed_off);
	else
		fprintf(f, ";\n * off (%s).\n */\n", g->summary_off);
	fprintf(f, "__attribute__((used)) const uint32_t __mnemo_summary_plan = 0x%08x;\n",
		(unsigned)g->plan);
}

static void put_heap_site(const struct gen *g, const struct abi_entry *e)
{
	if (g->heap)
		fprintf(g->f, "\n/* Not an event: the site of this thread's next heap call, for "
			"the heap interposer. */\nMN_ENTRY void %s(%s)\n{\n"
			"\tmn_heap_pending_site = site;\n}\n", e->fn, e->params);
	else
		fprintf(g->f, "\n/* Not an event; no heap event is sent, so nothing to remember. */"
			"\nMN_ENTRY void %s(%s)\n{\n}\n", e->fn, e->params);
}

static void put_wire(const struct gen *g)
{
	FILE *f = g->f;

	fputs("\n/* How each sent event is packed (queue.h); events not listed are not sent. */\n"
	      "const struct mn_wire __mnemo_wire = {\n\t.nwords = {\n", f);
	for (unsigned i = 0; i < g->c->nevents; i++) {
		const struct mn_spec_event *ev = &g->c->event[i];

		if (!g->w->nwords[ev->code])
			continue;
		fprintf(f, "\t\t[");
		put_code_name(f, ev->name);
		fprintf(f, "] = %u,\n", g->w->nwords[ev->code]);
	}
	fputs("\t},\n\t.arg = {\n", f);
	for (unsigned i = 0; i < g->c->nevents; i++) {
		const struct mn_spec_event *ev = &g->c->event[i];

		if (!g->w->nwords[ev->code])
			continue;
		fprintf(f, "\t\t[");
		put_code_name(f, ev->name);
		fputs("] = {\n", f);
		for (unsigned a = 0; a < ev->nargs; a++) {
			const struct mn_wire_arg *wa = &g->w->arg[ev->code][a];

			if (wa->bits)
				fprintf(f, "\t\t\t[%u] = { .word = %u, .shift = %u, .bits = %u },"
					"\t/* %s */\n", a, wa->word, wa->shift, wa->bits,
					ev->arg[a].name);
		}
		fputs("\t\t},\n", f);
	}
	fputs("\t},\n", f);
	if (g->w->flags & MN_WIRE_POINTER)
		fputs("\t/* __mnemo_load_ptr and __mnemo_store_ptr: code | MN_CODE_POINTER. */\n"
		      "\t.flags = MN_WIRE_POINTER,\n", f);
	else
		fputs("\t.flags = 0,\n", f);
	fputs("};\n", f);
}

/* Whether some chosen module takes heap_alloc's `context` (abi.h, __mnemo_ctx_enter). */
static bool alloc_contexts(const struct gen *g)
{
	const struct mn_spec_event *ev = mn_spec_event_find(g->c, "heap_alloc");
	int a = ev ? mn_spec_arg_find(ev, "context") : -1;

	return a >= 0 && g->w->arg[ev->code][a].bits;
}

/*
 * The allocation contexts' entry points and flag (abi.h).  With no module taking them, enter
 * returns 0 and leave does nothing, and the pass, reading __mnemo_alloc_contexts 0, calls
 * neither: a build for other modules has no code of them.
 */
static void put_alloc_contexts(const struct gen *g)
{
	FILE *f = g->f;

	if (!alloc_contexts(g)) {
		fputs("\n/* Allocation contexts: no chosen module takes heap_alloc's context. */\n"
		      "__attribute__((used)) const uint32_t __mnemo_alloc_contexts = 0;\n"
		      "MN_ENTRY uint64_t __mnemo_ctx_enter(uint32_t site)\n{\n\treturn 0;\n}\n"
		      "MN_ENTRY void __mnemo_ctx_leave(uint64_t saved)\n{\n}\n", f);
		return;
	}
	fputs("\n/*\n * Allocation contexts: this thread's two innermost call sites entered and not\n"
	      " * left (the innermost in the low 32 bits), which heap_alloc sends as its\n"
	      " * context, masked to MNEMO_ALLOC_DEPTH (mn_alloc_context_mask).  leave restores\n"
	      " * what enter returned: a value, so a longjmp past leaves is repaired at the next.\n"
	      " */\n"
	      "__attribute__((used)) const uint32_t __mnemo_alloc_contexts = 1;\n"
	      "/* Volatile: LLVM takes malloc for glibc's, which reads no program memory, and\n"
	      " * would drop enter's store before an allocation as dead under leave's. */\n"
	      "static __thread volatile uint64_t ctx_callers\n"
	      "\t__attribute__((tls_model(\"initial-exec\")));\n\n"
	      "MN_ENTRY uint64_t __mnemo_ctx_enter(uint32_t site)\n{\n"
	      "\tuint64_t saved = ctx_callers;\n\n"
	      "\tctx_callers = saved << 32 | site;\n"
	      "\treturn saved;\n}\n\n"
	      "MN_ENTRY void __mnemo_ctx_leave(uint64_t saved)\n{\n"
	      "\tctx_callers = saved;\n}\n\n"
	      "static inline uint64_t alloc_context(void)\n{\n"
	      "\treturn ctx_callers & mn_alloc_context_mask;\n}\n", f);
}

/* Writes the whole of callbacks.c to g->f; plan_sampling() and summary_plan() have run. */
static void generate(struct gen *g)
{
	/* Emit only the helpers some argument needs: an unused static function draws a warning. */
	for (unsigned i = 0; i < g->c->nevents; i++) {
		const struct mn_spec_event *ev = &g->c->event[i];
		const struct abi_entry *e = abi_entry(ev->name);

		for (unsigned a = 0; a < ev->nargs; a++) {
			const struct abi_param *p = abi_param(e, ev->arg[a].name);

			if (g->w->arg[ev->code][a].bits && ev->arg[a].bits < p->cbits)
				g->need_fit[p->fit] = true;
		}
	}
	put_header(g);
	put_alloc_contexts(g);
	if (g->values)
		put_value_check(g);
	for (unsigned i = 0; i < NABI; i++) {
		if (!abi[i].fn)
			continue;   /* loop_summary_at: sent by the mixed entry points */
		if (abi[i].event)
			put_callback(g, &abi[i]);
		else
			put_heap_site(g, &abi[i]);
	}
	put_wire(g);
}

/* ---- Files ------------------------------------------------------------------------------ */

/* mkdir -p; returns 0 or -errno. */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);

	if (len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, len + 1);
	for (char *p = path + 1; ; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;

		*p = 0;
		if (mkdir(path, 0777) && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			break;
	}
	return 0;
}

/* True when path holds exactly len bytes equal to buf. */
static bool same_content(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "rb");
	bool same = false;
	char *old;

	if (!f)
		return false;
	old = malloc(len + 1);
	if (old)
		same = fread(old, 1, len + 1, f) == len && !memcmp(old, buf, len);
	free(old);
	fclose(f);
	return same;
}

/*
 * Writes len bytes of buf to dir/name, unless the file already holds them (so that make does not
 * rebuild), through a temporary file and a rename (so that a reader never sees half a file).
 * Returns 0, or -errno after printing why.
 */
static int write_file(const char *dir, const char *name, const char *buf, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;
	int fd, ret;

	ret = make_dirs(dir);
	if (ret) {
		fprintf(stderr, PROG ": %s: cannot create: %s\n", dir, strerror(-ret));
		return ret;
	}
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= (int)sizeof(tmp)) {
		fprintf(stderr, PROG ": %s: path too long\n", dir);
		return -ENAMETOOLONG;
	}
	if (same_content(path, buf, len))
		return 0;

	fd = mkstemp(tmp);
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, PROG ": %s: cannot create: %s\n", tmp, strerror(errno));
		return ret;
	}
	fchmod(fd, 0644);
	f = fdopen(fd, "wb");
	if (!f) {
		ret = -errno;
		close(fd);
		goto fail;
	}
	if (fwrite(buf, 1, len, f) != len || fflush(f)) {
		ret = -errno;
		fclose(f);
		goto fail;
	}
	if (fclose(f)) {
		ret = -errno;
		goto fail;
	}
	if (rename(tmp, path)) {
		ret = -errno;
		goto fail;
	}
	return 0;

fail:
	fprintf(stderr, PROG ": %s: cannot write: %s\n", path, strerror(-ret));
	unlink(tmp);
	return ret;
}

/* ---- Command line ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
	static const char text[] =
		"usage: " PROG " [--catalogue FILE] [--modules-dir DIR] --modules a,b\n"
		"                        [--backend PATH] [--all-events] [--no-summarize]\n"
		"                        [--queue=pingpong|lamport] [--unit] -o OUTDIR\n"
		"       " PROG " [--catalogue FILE] [--modules-dir DIR] --list | --defaults\n"
		"       " PROG " [--catalogue FILE] --check DIR/<name>/events.yaml\n"
		"\n"
		"Writes OUTDIR/callbacks.c, the frontend callbacks specialized for the chosen\n"
		"modules (empty bodies for events no module uses, only the arguments some module\n"
		"uses for the others), and prints heap=1 or heap=0: whether the program must link\n"
		"libmnemo-heap.a.\n"
		"\n"
		"  --catalogue FILE     the event catalogue\n"
		"                       (default: <bindir>/../share/mnemo/events.yaml)\n"
		"  --modules-dir DIR    module specs are DIR/<name>/events.yaml\n"
		"                       (default: <bindir>/../share/mnemo/modules)\n"
		"  --modules a,b        the modules to specialize for, in backend order\n"
		"  --backend PATH       the mnemo-backend the program runs (__mnemo_backend_path)\n"
		"  -o, --output OUTDIR  where to write callbacks.c; created if missing\n"
		"  --all-events         no specialization, the baseline of PROMPT's Table 8:\n"
		"                       callbacks.c sends every event of the catalogue with every\n"
		"                       argument, as if a module (" ALL_EVENTS ") used them all with\n"
		"                       `accesses: all` (so heap=1, no sampling, no loop\n"
		"                       summaries nor mixed loops); the program still runs only\n"
		"                       the chosen modules, which drop the rest\n"
		"  --no-summarize       no loop summaries nor mixed loops: __mnemo_summary_plan\n"
		"                       says off, and the __mnemo_loop_summary* and\n"
		"                       __mnemo_mixed_* entry points are empty, so the pass keeps\n"
		"                       every access of every loop (by default summaries are on\n"
		"                       when some load or store entry point sends no value, or\n"
		"                       when loop events are sent, and mixed loops with them)\n"
		"  --queue=KIND         pingpong (default): records go through the inline push of\n"
		"                       the ping-pong queue (PROMPT 5.2); lamport: through the\n"
		"                       out-of-line mn_queue_push_lamport(), a conventional queue,\n"
		"                       the baseline of the overhead breakdown (docs/internals.md)\n"
		"  --unit               the callbacks of a shared library (mnemo-cc -shared): hidden,\n"
		"                       sites moved by the unit's base, silent until the program's\n"
		"                       runtime registers the unit (runtime/unit.h)\n"
		"  --list               list the modules in DIR with their doc line\n"
		"  --defaults           print the default modules in DIR, those whose spec says\n"
		"                       `default: true`, as a,b (mnemo-cc's set without -m)\n"
		"  --check FILE         validate one module spec (module: must name its folder)\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit status: 0 on success, 1 when a file is invalid or cannot be written, 2 on a\n"
		"usage error.  Errors read \"" PROG ": <file>:<line>:<column>: <what>\".\n";

	fputs(text, f);
}

/* <dir of this executable>/../share/mnemo/<rel>, for the defaults; NULL when unknown. */
static char *default_path(const char *rel)
{
	char exe[PATH_MAX], *out;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	if (asprintf(&out, "%s/../share/mnemo/%s", dirname(exe), rel) < 0)
		return NULL;
	return out;
}

/* "a, b, c" of a NULL-terminated list, into buf. */
static void join(char *buf, size_t size, char *const *names)
{
	buf[0] = 0;
	for (char *const *p = names; *p; p++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", p == names ? "" : ", ", *p);
	if (!names[0])
		snprintf(buf, size, "none");
}

static bool listed(char *const *names, const char *name)
{
	for (char *const *p = names; *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

/*
 * --list: every module of dir with its doc line; --defaults (defaults true): the default set, the
 * modules whose spec says `default: true`, as "a,b" on one line (what mnemo-cc builds for without
 * -m).  Returns the exit status.
 */
static int list_modules(const struct mn_catalogue *c, const char *dir, bool defaults)
{
	struct mn_spec_error err;
	char **names, path[PATH_MAX];
	int status = 0, n = 0;

	if (mn_spec_module_names(&names, dir, &err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 1;
	}
	for (char **p = names; *p; p++) {
		struct mn_module_spec *m;

		snprintf(path, sizeof(path), "%s/%s/events.yaml", dir, *p);
		if (mn_spec_module_load(&m, c, path, *p, &err)) {
			fprintf(stderr, PROG ": %s\n", err.msg);
			status = 1;
			continue;
		}
		if (!defaults)
			printf("%-20s %s\n", m->name, m->doc);
		else if (m->is_default)
			printf("%s%s", n++ ? "," : "", m->name);
		mn_spec_module_free(m);
	}
	if (defaults)
		putchar('\n');
	mn_spec_names_free(names);
	return status;
}

/* --check FILE: validate one spec, whose folder names the module.  Returns the exit status. */
static int check_module(const struct mn_catalogue *c, const char *path)
{
	char copy[PATH_MAX], *folder;
	struct mn_spec_error err;
	struct mn_module_spec *m;

	snprintf(copy, sizeof(copy), "%s", path);
	folder = basename(dirname(copy));
	if (mn_spec_module_load(&m, c, path, folder, &err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 1;
	}
	printf("%s: module '%s' is valid\n", path, m->name);
	mn_spec_module_free(m);
	return 0;
}

/*
 * Splits "a,b" into at most MN_MAX_MODULES names that all exist in dir, and loads their specs
 * into m[]; *n is how many were loaded (free them even on failure).  Returns the exit status.
 */
static int load_modules(struct mn_module_spec **m, unsigned *n, const struct mn_catalogue *c,
			const char *dir, const char *list)
{
	char *copy = strdup(list), *save = NULL, **known, path[PATH_MAX], buf[1024];
	struct mn_spec_error err;
	int status = 1;

	*n = 0;
	if (!copy || mn_spec_module_names(&known, dir, &err)) {
		fprintf(stderr, PROG ": %s\n", copy ? err.msg : "out of memory");
		free(copy);
		return 1;
	}
	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		if (!listed(known, name)) {
			join(buf, sizeof(buf), known);
			fprintf(stderr, PROG ": unknown module '%s' (known: %s)\n", name, buf);
			goto out;
		}
		for (unsigned i = 0; i < *n; i++) {
			if (!strcmp(m[i]->name, name)) {
				fprintf(stderr, PROG ": module '%s' is given twice\n", name);
				goto out;
			}
		}
		if (*n == MN_MAX_MODULES) {
			fprintf(stderr, PROG ": more than %d modules\n", MN_MAX_MODULES);
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s/events.yaml", dir, name);
		if (mn_spec_module_load(&m[*n], c, path, name, &err)) {
			fprintf(stderr, PROG ": %s\n", err.msg);
			goto out;
		}
		(*n)++;
	}
	if (!*n) {
		join(buf, sizeof(buf), known);
		fprintf(stderr, PROG ": --modules names no module (known: %s)\n", buf);
		goto out;
	}
	status = 0;
out:
	mn_spec_names_free(known);
	free(copy);
	return status;
}

/*
 * --all-events: *all becomes a module spec that lists every event of c with every argument and
 * `accesses: all`, and no `sample:`; all but the loop summary events, which no module lists (and
 * summaries are off, as in a build without specialization).  Put first among the modules, it
 * makes the packing send everything, gives every access entry point a body, and, being a module
 * that needs every access, turns sampling off with the runtime's usual note when a chosen
 * module's variable asks for it.
 */
static void all_events_spec(struct mn_module_spec *all, const struct mn_catalogue *c)
{
	*all = (struct mn_module_spec){
		.path = "(" PROG " --all-events)",
		.name = ALL_EVENTS,
		.doc = "every event of the catalogue with every argument",
		.accesses = MN_ACCESSES_ALL,
	};
	for (unsigned i = 0; i < c->nevents; i++) {
		const struct mn_spec_event *ev = &c->event[i];

		/* `value`: its load and store records carry every value already. */
		if (mn_spec_summary_event(ev) || !strcmp(ev->name, "value"))
			continue;
		all->events |= UINT32_C(1) << ev->code;
		all->args[ev->code] = (uint8_t)((1u << ev->nargs) - 1);
	}
}

/*
 * The one chosen module that takes `value` into *vm, or NULL; 1 with a message when two do: the
 * program checks values against one published set per site (abi.h).
 */
static int value_module(const struct mn_module_spec **vm, const struct mn_catalogue *c,
			struct mn_module_spec *const *m, unsigned n)
{
	const struct mn_spec_event *value = mn_spec_event_find(c, "value");

	*vm = NULL;
	for (unsigned i = 0; value && i < n; i++) {
		if (!(m[i]->events & UINT32_C(1) << value->code))
			continue;
		if (*vm) {
			fprintf(stderr, PROG ": modules %s and %s both take 'value'; one published "
				"value set per site serves one module: build them apart\n",
				(*vm)->name, m[i]->name);
			return 1;
		}
		*vm = m[i];
	}
	return 0;
}

/*
 * --unit (`mnemo-cc -shared`): the callbacks of a shared library, a linked unit of its own
 * (runtime/unit.h), made from the program's text.  Everything callbacks.c defines becomes hidden,
 * so that a library's callbacks and tables never bind to another unit's; __mnemo_value_sets and
 * __mnemo_value_sites are the program's (declared in abi.h, defined as stand-ins by
 * libmnemo-unit.a); and every entry point with a body and a site first adds the unit's base to
 * it, or returns at once while the unit is not registered: one load and branch per event, in
 * library code only.  Returns the new text (malloc'ed), or NULL when out of memory.
 */
static char *unit_text(const char *text)
{
	static const char entry_def[] = "#define MN_ENTRY __attribute__((used))\n";
	static const char unit_defs[] =
		"#define MN_ENTRY __attribute__((used))\n"
		"\n"
		"/*\n"
		" * A linked unit (mnemo-specialize --unit, runtime/unit.h): a shared library with\n"
		" * site ids of its own, which the program's runtime moves to [base + 1, base +\n"
		" * count].  Until it does (a plain program, a unit refused), nothing is sent.\n"
		" */\n"
		"extern uint32_t __mnemo_unit_base __attribute__((visibility(\"hidden\")));\n"
		"#define MN_UNIT_SITE_OR(site, ret)\t\t\t\t\t\t\\\n"
		"\tdo {\t\t\t\t\t\t\t\t\\\n"
		"\t\tuint32_t base_ = __mnemo_unit_base;\t\t\t\\\n"
		"\t\tif (__builtin_expect(base_ == UINT32_MAX, 0))\t\t\\\n"
		"\t\t\treturn ret;\t\t\t\t\t\\\n"
		"\t\tsite += base_;\t\t\t\t\t\t\\\n"
		"\t\t(void)site;  /* bodies that send no site */\t\t\\\n"
		"\t} while (0)\n"
		"#define MN_UNIT_SITE(site) MN_UNIT_SITE_OR(site, )\n"
		"#pragma GCC visibility push(hidden)\n";
	static const char sets_def[] =
		"struct mn_value_set *__mnemo_value_sets;\nuint32_t __mnemo_value_sites;\n";
	static const char sets_unit[] =
		"/* __mnemo_value_sets, __mnemo_value_sites: the program's (abi.h). */\n";
	size_t len = strlen(text), cap = len + sizeof(unit_defs) + 64 * 1024, n = 0;
	char *out = malloc(cap);
	const char *p = text;

	if (!out)
		return NULL;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) + 1 : strlen(p);
		const char *add = NULL;

		if (n + ll + sizeof(unit_defs) + 64 > cap) {
			char *o = realloc(out, cap *= 2);

			if (!o) {
				free(out);
				return NULL;
			}
			out = o;
		}
		if (!strncmp(p, entry_def, ll) && ll == sizeof(entry_def) - 1) {
			memcpy(out + n, unit_defs, sizeof(unit_defs) - 1);
			n += sizeof(unit_defs) - 1;
			p += ll;
			continue;
		}
		if (!strncmp(p, sets_def, sizeof(sets_def) - 1)) {
			memcpy(out + n, sets_unit, sizeof(sets_unit) - 1);
			n += sizeof(sets_unit) - 1;
			p += sizeof(sets_def) - 1;
			continue;
		}
		/* "MN_ENTRY <type> <name>(uint32_t site, ...)\n{\n" and a body that is not "}". */
		if (!strncmp(p, "MN_ENTRY ", 9) && memmem(p, ll, "(uint32_t site", 14) &&
		    !strncmp(p + ll, "{\n", 2) && strncmp(p + ll + 2, "}\n", 2))
			add = !strncmp(p, "MN_ENTRY void ", 14) ? "\tMN_UNIT_SITE(site);\n" :
			      "\tMN_UNIT_SITE_OR(site, 0);\n";
		memcpy(out + n, p, ll);
		n += ll;
		p += ll;
		if (add) {
			memcpy(out + n, "{\n", 2);
			n += 2;
			p += 2;
			memcpy(out + n, add, strlen(add));
			n += strlen(add);
		}
	}
	out[n] = '\0';
	return out;
}

/* The default mode: write outdir/callbacks.c and print heap=.  Returns the exit status. */
static int specialize(const struct mn_catalogue *c, const char *dir, const char *modules,
		      const char *backend, const char *outdir, bool lamport, bool all_events,
		      bool summarize, bool unit)
{
	struct mn_module_spec *m[MN_MAX_MODULES], all;
	const struct mn_module_spec *gm[MN_MAX_MODULES + 1];
	char *buf = NULL, names[MN_MAX_MODULES * MN_SPEC_NAME_MAX] = "";
	struct mn_spec_error err;
	struct mn_wire wire;
	struct gen g = { 0 };
	size_t len = 0;
	unsigned n;
	int status;

	status = load_modules(m, &n, c, dir, modules);
	if (status)
		goto out;
	status = 1;
	/* "a,b" as recorded in the binary: the modules in backend order, nothing else. */
	for (unsigned i = 0; i < n; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? "," : "",
			 m[i]->name);
	/* What the generator sees: with --all-events, the stand-in first, then the chosen ones. */
	if (all_events) {
		all_events_spec(&all, c);
		gm[g.nm++] = &all;
	}
	for (unsigned i = 0; i < n; i++)
		gm[g.nm++] = m[i];
	if (mn_spec_pack(&wire, c, gm, g.nm, &err)) {
		fprintf(stderr, PROG ": %s (modules %s)\n", err.msg, modules);
		goto out;
	}
	if (value_module(&g.values, c, m, n))
		goto out;
	g.c = c;
	g.m = gm;
	g.w = &wire;
	g.modules = names;
	g.backend = backend ? backend : "";
	g.heap = mn_spec_uses_heap(&wire, c);
	g.lamport = lamport;
	g.all_events = all_events;
	plan_sampling(&g);
	/* The plan from the modules' wire; then the summary events join the wire, when on. */
	summary_plan(&g, summarize);
	if ((g.plan & MNEMO_PLAN_ON) &&
	    mn_spec_pack_summaries(&wire, c, g.plan & MNEMO_PLAN_MIXED_ON, &err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		goto out;
	}
	g.f = open_memstream(&buf, &len);
	if (!g.f) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	generate(&g);
	if (fclose(g.f)) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	if (unit) {
		char *u = unit_text(buf);

		if (!u) {
			fprintf(stderr, PROG ": out of memory\n");
			goto out;
		}
		free(buf);
		buf = u;
		len = strlen(u);
	}
	if (write_file(outdir, "callbacks.c", buf, len))
		goto out;
	printf("heap=%d\n", g.heap);
	status = fflush(stdout) ? 1 : 0;
out:
	free(buf);
	for (unsigned i = 0; i < n; i++)
		mn_spec_module_free(m[i]);
	return status;
}

int main(int argc, char **argv)
{
	enum {
		OPT_CATALOGUE = 256, OPT_MODULES_DIR, OPT_MODULES, OPT_BACKEND, OPT_LIST, OPT_CHECK,
		OPT_DEFAULTS, OPT_QUEUE, OPT_ALL_EVENTS, OPT_NO_SUMMARIZE, OPT_UNIT,
	};
	static const struct option opts[] = {
		{ "catalogue", required_argument, NULL, OPT_CATALOGUE },
		{ "modules-dir", required_argument, NULL, OPT_MODULES_DIR },
		{ "modules", required_argument, NULL, OPT_MODULES },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "output", required_argument, NULL, 'o' },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "defaults", no_argument, NULL, OPT_DEFAULTS },
		{ "check", required_argument, NULL, OPT_CHECK },
		{ "queue", required_argument, NULL, OPT_QUEUE },
		{ "all-events", no_argument, NULL, OPT_ALL_EVENTS },
		{ "no-summarize", no_argument, NULL, OPT_NO_SUMMARIZE },
		{ "unit", no_argument, NULL, OPT_UNIT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *catalogue = NULL, *dir = NULL, *modules = NULL, *backend = NULL, *outdir = NULL;
	char *check = NULL, *def_catalogue = NULL, *def_dir = NULL;
	struct mn_catalogue *c = NULL;
	struct mn_spec_error err;
	bool list = false, defaults = false, lamport = false, all_events = false, summarize = true;
	bool unit = false;
	int opt, status = 2;

	opterr = 0;  /* our own messages, with our own prefix */
	while ((opt = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_CATALOGUE: catalogue = optarg; break;
		case OPT_MODULES_DIR: dir = optarg; break;
		case OPT_MODULES: modules = optarg; break;
		case OPT_BACKEND: backend = optarg; break;
		case 'o': outdir = optarg; break;
		case OPT_LIST: list = true; break;
		case OPT_DEFAULTS: defaults = true; break;
		case OPT_CHECK: check = optarg; break;
		case OPT_QUEUE:
			if (!strcmp(optarg, "lamport") || !strcmp(optarg, "pingpong")) {
				lamport = optarg[0] == 'l';
				break;
			}
			fprintf(stderr, PROG ": --queue: unknown queue '%s' (known: pingpong, "
				"lamport)\n", optarg);
			return 2;
		case OPT_ALL_EVENTS: all_events = true; break;
		case OPT_NO_SUMMARIZE: summarize = false; break;
		case OPT_UNIT: unit = true; break;
		case 'h': usage(stdout); return 0;
		case ':':
			fprintf(stderr, PROG ": option '%s' needs an argument (see --help)\n",
				argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, PROG ": unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	if ((list + defaults + !!check + !!modules) != 1) {
		fprintf(stderr, PROG ": give exactly one of --modules, --list, --defaults, --check "
			"(see --help)\n");
		return 2;
	}
	if (modules && !outdir) {
		fprintf(stderr, PROG ": missing -o OUTDIR (see --help)\n");
		return 2;
	}
	if (!catalogue)
		catalogue = def_catalogue = default_path("events.yaml");
	if (!dir)
		dir = def_dir = default_path("modules");
	if (!catalogue || !dir) {
		fprintf(stderr, PROG ": cannot locate the default --catalogue and --modules-dir\n");
		goto out;
	}

	status = 1;
	if (mn_spec_catalogue_load(&c, catalogue, &err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		goto out;
	}
	if (check_abi(c))
		goto out;
	if (list || defaults)
		status = list_modules(c, dir, defaults);
	else if (check)
		status = check_module(c, check);
	else
		status = specialize(c, dir, modules, backend, outdir, lamport, all_events,
				    summarize, unit);
out:
	mn_spec_catalogue_free(c);
	free(def_catalogue);
	free(def_dir);
	return status;
}
