/*
 * dependence over several program threads (README, "Threads"), unit level: the module's own
 * handlers fed made-up event streams.
 *
 * test_interleaved: random per-thread scripts (calls, loops 0 to 3 deep, a loop met again under a
 * call, loads and stores of 1 to 16 bytes, some across words or a 4 KiB page, loop summaries,
 * which the threads take in closed form on words of their own) on memory private to
 * each thread, fed to one state interleaved in random chunks through the .thread hook (each
 * thread's in its order, as the driver gives them), and to another state one thread after the
 * other with no hook (one thread's stream after another's, as a single-threaded run of the same
 * work would).  Within a thread nothing changes (per loop, program order), and the threads share
 * no word, so the two sections must be equal byte for byte, with and without contexts.
 *
 * test_tags: the thread tags of access ids (README, "Thread tags") against runs alone: random
 * scripts on memory all threads share, of up to 100 threads, up to 70 of them live at once (more
 * than there are tags), that start, end and release and acquire a few objects, some with clock
 * resets, fed alike to a state with tags and one without: equal sections.
 *
 * test_cross: a stream written by hand, with answers written by hand: sources of another thread,
 * ordered or not by releases and acquires (hb.h), a row of an access whose words disagree, the
 * destination's innermost loop, and the within-thread rows beside them.
 */
#define _GNU_SOURCE
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

enum { S_F1 = 1, S_F2, S_F3, S_L1, S_L2, S_L3, S_L4, S_L5, S_L6, S_ACC0 };
#define NFUNC 3
#define NLOOP 6
#define NACC 24
#define NTHREADS 4
#define REGION 256   /* bytes of a thread's memory, across a page boundary */

static void *state(void)
{
	void *st = calloc(1, DEP->state_size);

	assert_non_null(st);
	assert_int_equal(DEP->init(st, NULL), 0);
	return st;
}

static void done(void *st)
{
	DEP->fini(st);
	free(st);
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

/* ---- Random per-thread scripts --------------------------------------------------------------- */

enum ev_kind { EV_FUNC_ENTRY, EV_FUNC_EXIT, EV_INVOKE, EV_ITER, EV_EXIT, EV_LOAD, EV_STORE,
	       EV_SUMMARY, EV_ACQUIRE, EV_RELEASE };

#define MAXACC 3

struct ev {
	enum ev_kind kind;
	uint32_t site, size;       /* EV_SUMMARY: size is the number of accesses */
	uint64_t addr;             /* EV_SUMMARY: the iterations */
	struct mn_summary_access acc[MAXACC];
};

struct script {
	struct ev *v;
	unsigned n, cap, at;
	uint64_t base;             /* the thread's memory */
};

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
	return next() % n;
}

static void add(struct script *s, enum ev_kind kind, uint32_t site, uint64_t addr, uint32_t size)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		assert_non_null(s->v);
	}
	s->v[s->n++] = (struct ev){ kind, site, size, addr, { { 0 } } };
}

/* A loop summary (module.h) on the thread's memory: 1 to 3 streams of 8 bytes (sometimes 4,
 * which the closed form refuses), steps -16 to 16, 1 to 10 iterations. */
static void summary(struct script *s)
{
	static const int64_t steps[] = { -16, -8, 0, 8, 16 };
	unsigned n = 1 + (unsigned)below(MAXACC);
	struct ev *e;

	add(s, EV_SUMMARY, S_L1 + (uint32_t)below(NLOOP), 1 + below(10), n);
	e = &s->v[s->n - 1];
	for (unsigned j = 0; j < n; j++) {
		int64_t step = steps[below(5)];
		uint32_t site = S_ACC0 + (uint32_t)below(NACC);

		e->acc[j] = (struct mn_summary_access){
			.start = s->base + (step < 0 ? 200 : 0) + 8 * below(7), .step = step,
			.site = site, .size = below(8) ? 8 : 4, .store = site % 2 };
	}
}

static void block(struct script *s, unsigned depth);

/* An access of 1 to 16 bytes in the thread's memory; an outer loop's body repeats at a stride. */
static void access(struct script *s, uint64_t off)
{
	static const uint32_t sizes[] = { 1, 2, 4, 8, 8, 8, 16 };
	uint32_t size = sizes[below(7)], site = S_ACC0 + (uint32_t)below(NACC);

	add(s, site % 2 ? EV_STORE : EV_LOAD, site, s->base + (off + below(REGION)) % REGION, size);
}

static void loop(struct script *s, unsigned depth)
{
	uint32_t site = S_L1 + (uint32_t)below(NLOOP);
	unsigned iters = 1 + (unsigned)below(6);

	add(s, EV_INVOKE, site, 0, 0);
	for (unsigned k = 0; k < iters; k++) {
		add(s, EV_ITER, site, 0, 0);
		block(s, depth + 1);
	}
	add(s, EV_EXIT, site, 0, 0);
}

static void block(struct script *s, unsigned depth)
{
	unsigned n = 1 + (unsigned)below(4);

	for (unsigned i = 0; i < n; i++) {
		uint64_t r = below(10);

		if (r < 2 && depth < 3) {
			loop(s, depth);
		} else if (r == 9) {
			summary(s);
		} else if (r < 3 && depth < 3) {
			uint32_t f = S_F1 + (uint32_t)below(NFUNC);

			add(s, EV_FUNC_ENTRY, f, 0, 0);
			block(s, depth + 1);
			add(s, EV_FUNC_EXIT, f, 0, 0);
		} else {
			access(s, 8 * below(4));
		}
	}
}

static void feed(void *st, const struct ev *e)
{
	switch (e->kind) {
	case EV_FUNC_ENTRY: DEP->func_entry(st, e->site); break;
	case EV_FUNC_EXIT: DEP->func_exit(st, e->site); break;
	case EV_INVOKE: DEP->loop_invoke(st, e->site); break;
	case EV_ITER: DEP->loop_iter(st, e->site); break;
	case EV_EXIT: DEP->loop_exit(st, e->site); break;
	case EV_LOAD: DEP->load(st, e->site, e->addr, 0, e->size); break;
	case EV_STORE: DEP->store(st, e->site, e->addr, 0, e->size); break;
	case EV_SUMMARY: DEP->loop_summary(st, e->site, e->addr, e->acc, e->size); break;
	case EV_ACQUIRE: DEP->sync_acquire(st, e->addr); break;
	case EV_RELEASE: DEP->sync_release(st, e->addr); break;
	}
}

/* The two states' sections are equal byte for byte. */
static void same_sections(uint64_t seed, const char *a, void *sa, const char *b, void *sb)
{
	char *x = section(sa), *y = section(sb);

	if (strcmp(x, y)) {
		unsigned line = 1;
		size_t i = 0;

		while (x[i] && x[i] == y[i])
			line += x[i++] == '\n';
		fail_msg("seed %llu: sections differ from line %u:\n  %-7s %.200s\n  %-7s %.200s",
			 (unsigned long long)seed, line, a, x + i, b, y + i);
	}
	free(x);
	free(y);
}

/* Threads' scripts interleaved (through .thread, thread_end at each one's end) into one state,
 * one after the other into another: equal sections. */
static void run_seed(uint64_t seed, bool ends)
{
	struct script s[NTHREADS] = { 0 };
	void *mt = state(), *serial = state();
	unsigned left = NTHREADS;

	rng = seed * 0x9e3779b97f4a7c15u | 1;
	for (unsigned t = 0; t < NTHREADS; t++) {
		/* pages apart, each across a page boundary */
		s[t].base = UINT64_C(0x300000000) + t * 0x10000 + 4096 - REGION / 2;
		add(&s[t], EV_FUNC_ENTRY, S_F1, 0, 0);
		for (unsigned k = 0; k < 4; k++)
			block(&s[t], 0);
		add(&s[t], EV_FUNC_EXIT, S_F1, 0, 0);
	}
	for (unsigned t = 0; t < NTHREADS; t++)
		for (unsigned i = 0; i < s[t].n; i++)
			feed(serial, &s[t].v[i]);
	while (left) {
		unsigned t = (unsigned)below(NTHREADS), chunk = 1 + (unsigned)below(40);

		if (s[t].at == s[t].n)
			continue;
		DEP->thread(mt, t + 1);
		for (; chunk && s[t].at < s[t].n; chunk--)
			feed(mt, &s[t].v[s[t].at++]);
		if (s[t].at == s[t].n) {
			left--;
			if (ends && t)
				DEP->thread_end(mt, t + 1);
		}
	}
	same_sections(seed, "threads", mt, "serial", serial);
	for (unsigned t = 0; t < NTHREADS; t++)
		free(s[t].v);
	done(mt);
	done(serial);
}

#define TAG_THREADS 100
#define TAG_LIVE 70

/* A short script on the memory every thread shares, with releases and acquires of objects 1-3. */
static void shared_script(struct script *s)
{
	s->base = UINT64_C(0x300000000) + 4096 - REGION / 2;
	for (unsigned k = 1 + (unsigned)below(3); k; k--) {
		if (!below(3))
			add(s, below(2) ? EV_ACQUIRE : EV_RELEASE, 0, 1 + below(3), 0);
		block(s, 0);
	}
}

/* The threads' scripts interleaved alike into a state with tags and one without. */
static void run_tags(uint64_t seed, const char *clock_limit)
{
	static struct script s[TAG_THREADS + 1];
	void *st[2];
	unsigned live[TAG_LIVE], nlive = 1, started = 1;
	char *x;

	rng = seed * 0x9e3779b97f4a7c15u | 1;
	memset(s, 0, sizeof(s));
	for (unsigned t = 1; t <= TAG_THREADS; t++)
		shared_script(&s[t]);
	if (clock_limit)
		setenv("MNEMO_DEP_CLOCK_LIMIT", clock_limit, 1);
	for (int k = 0; k < 2; k++) {
		setenv("MNEMO_DEP_TAGS", k ? "0" : "1", 1);
		st[k] = state();
	}
	unsetenv("MNEMO_DEP_TAGS");
	unsetenv("MNEMO_DEP_CLOCK_LIMIT");
	live[0] = 1;   /* the main thread, which never ends */
	while (nlive) {
		unsigned i = (unsigned)below(nlive), t = live[i], chunk = 1 + (unsigned)below(8);
		bool start = started < TAG_THREADS && nlive < TAG_LIVE && !below(2);

		if (start)
			t = live[nlive++] = ++started;
		for (int k = 0; k < 2; k++) {
			DEP->thread(st[k], t);
			if (start)
				DEP->thread_start(st[k], t, 1);
		}
		for (; chunk && s[t].at < s[t].n; chunk--, s[t].at++)
			for (int k = 0; k < 2; k++)
				feed(st[k], &s[t].v[s[t].at]);
		if (s[t].at < s[t].n || (t == 1 && started < TAG_THREADS))
			continue;
		for (int k = 0; k < 2; k++)
			if (t != 1)
				DEP->thread_end(st[k], t);
		for (i = 0; live[i] != t; i++)
			;
		live[i] = live[--nlive];
	}
	x = section(st[0]);
	if (!strstr(x, "cross_thread:"))
		fail_msg("seed %llu: no cross-thread row", (unsigned long long)seed);
	free(x);
	same_sections(seed, "tags", st[0], "runs", st[1]);
	for (unsigned t = 1; t <= TAG_THREADS; t++)
		free(s[t].v);
	done(st[0]);
	done(st[1]);
}

static void test_tags(void **st)
{
	for (uint64_t seed = 1; seed <= 60; seed++)
		run_tags(seed, seed % 3 ? NULL : "300");
}

static void test_interleaved(void **st)
{
	for (uint64_t seed = 1; seed <= 300; seed++)
		run_seed(seed, seed % 2);
	setenv("MNEMO_DEP_CONTEXT", "1", 1);
	for (uint64_t seed = 301; seed <= 400; seed++)
		run_seed(seed, seed % 2);
	unsetenv("MNEMO_DEP_CONTEXT");
}

/* ---- Across threads, by hand ----------------------------------------------------------------- */

#define X UINT64_C(0x200000000)
#define Y (X + 64)
#define Z (X + 128)
#define W (X + 192)
enum { A_MAIN = S_ACC0, A_LD2, A_ST2, A_LD3, A_LD3B, A_ST2B, A_LD3C, A_STY, A_LDY, A_STZ,
       A_LDZ, A_SUMW, A_LDW, A_STW3, A_SUMR };

static void expect(const char *text, const char *row)
{
	if (!strstr(text, row))
		fail_msg("no row '%s' in:\n%s", row, text);
}

static void test_cross(void **st_)
{
	const struct mn_summary_access sumw = { W, 8, A_SUMW, 8, true };
	const struct mn_summary_access sumr = { W, 8, A_SUMR, 8, false };
	void *st = state();
	char *text;

	/* main: x = ...; then creates thread 2 (a release of key 1) and thread 3 (key 2) */
	DEP->func_entry(st, S_F1);
	DEP->store(st, A_MAIN, X, 0, 8);
	DEP->sync_release(st, 1);
	DEP->sync_release(st, 2);
	/* thread 2: in loop L1, reads x (ordered after main's store), writes it back; then
	 * releases m (key 10); stores Y (two words) before releasing m2 (11) and its second word
	 * again after; Z's second word before releasing m3 (12), its first after */
	DEP->thread(st, 2);
	DEP->thread_start(st, 2, 1);
	DEP->sync_acquire(st, 1);
	DEP->func_entry(st, S_F2);
	DEP->loop_invoke(st, S_L1);
	DEP->loop_iter(st, S_L1);
	DEP->load(st, A_LD2, X, 0, 8);
	DEP->store(st, A_ST2, X, 0, 8);
	DEP->sync_release(st, 10);
	DEP->store(st, A_STY, Y, 0, 16);
	DEP->sync_release(st, 11);
	DEP->store(st, A_STY, Y + 8, 0, 8);
	DEP->store(st, A_STZ, Z + 8, 0, 8);
	DEP->sync_release(st, 12);
	DEP->store(st, A_STZ, Z, 0, 8);
	/* a summarized loop stores W .. W + 24: in closed form, its words then thread 2's */
	DEP->loop_summary(st, S_L2, 4, &sumw, 1);
	/* thread 3: reads x with no acquire of thread 2's (unordered), then after acquiring m
	 * (ordered); Y after m2 only, Z after m3 */
	DEP->thread(st, 3);
	DEP->thread_start(st, 3, 1);
	DEP->sync_acquire(st, 2);
	DEP->load(st, A_LD3, X, 0, 8);
	DEP->sync_acquire(st, 10);
	DEP->load(st, A_LD3B, X, 0, 8);
	DEP->sync_acquire(st, 11);
	DEP->load(st, A_LDY, Y, 0, 16);
	DEP->sync_acquire(st, 12);
	DEP->load(st, A_LDZ, Z, 0, 16);
	DEP->load(st, A_LDW, W + 8, 0, 8);
	DEP->store(st, A_STW3, W + 16, 0, 8);
	/* thread 2 again, still in L1's first iteration: writes x after thread 3's reads */
	DEP->thread(st, 2);
	/* a summarized loop reads W .. W + 24: W + 16 is thread 3's, so it is expanded */
	DEP->loop_summary(st, S_L2, 4, &sumr, 1);
	DEP->store(st, A_ST2B, X, 0, 8);
	DEP->loop_exit(st, S_L1);
	DEP->func_exit(st, S_F2);
	DEP->sync_release(st, 20);   /* the join key, its last event */
	DEP->thread_end(st, 2);
	/* main joins thread 2 (its end released key 20) and reads x */
	DEP->thread(st, 1);
	DEP->sync_acquire(st, 20);
	DEP->load(st, A_LD3C, X, 0, 8);
	DEP->func_exit(st, S_F1);
	text = section(st);

	/* within thread 2: the war of its own load inside L1's iteration */
	expect(text, "- {loop: 4, kind: war, src: 11, dst: 12, carried: false, count: 1}");
	/* across: main's store read and overwritten in thread 2's loop L1, ordered by the create */
	expect(text, "- {kind: raw, src: 10, dst: 11, loop: 4, count: 1, ordered: 1, unordered: 0}");
	expect(text, "- {kind: waw, src: 10, dst: 12, loop: 4, count: 1, ordered: 1, unordered: 0}");
	/* thread 3 reads thread 2's store before and after acquiring m */
	expect(text, "- {kind: raw, src: 12, dst: 13, loop: 0, count: 1, ordered: 0, unordered: 1}");
	expect(text, "- {kind: raw, src: 12, dst: 14, loop: 0, count: 1, ordered: 1, unordered: 0}");
	/* Y: one word ordered, one not: unordered; Z: the same the other way round */
	expect(text, "- {kind: raw, src: 17, dst: 18, loop: 0, count: 1, ordered: 0, unordered: 1}");
	expect(text, "- {kind: raw, src: 19, dst: 20, loop: 0, count: 1, ordered: 0, unordered: 1}");
	/* thread 2's last store: waw on its own store (within, L1), war on thread 3's last read,
	 * which thread 2 never synchronized with */
	expect(text, "- {loop: 4, kind: waw, src: 12, dst: 15, carried: false, count: 1}");
	expect(text, "- {kind: war, src: 14, dst: 15, loop: 4, count: 1, ordered: 0, unordered: 1}");
	/* thread 3 reads a word of thread 2's summary, unordered (its stamp is after m3's release),
	 * then stores W + 16; thread 2's second summary finds that store, and its own on the rest */
	expect(text, "- {kind: raw, src: 21, dst: 22, loop: 0, count: 1, ordered: 0, unordered: 1}");
	expect(text, "- {kind: raw, src: 23, dst: 24, loop: 5, count: 1, ordered: 0, unordered: 1}");
	expect(text, "- {loop: 4, kind: raw, src: 21, dst: 24, carried: false, count: 3}");
	/* main reads it after the join */
	expect(text, "- {kind: raw, src: 15, dst: 16, loop: 0, count: 1, ordered: 1, unordered: 0}");
	free(text);
	done(st);
}

/* Clock resets with threads (a limit of 16 ticks): each run begins with a tick, so switches
 * reset the clock too; after each reset the runs start again from the current one, and a word
 * stored by thread 2 and then loaded by thread 1 is still thread 2's, never thread 1's own. */
static void test_reset(void **st_)
{
	void *st;
	char *text;

	setenv("MNEMO_DEP_CLOCK_LIMIT", "16", 1);
	st = state();
	unsetenv("MNEMO_DEP_CLOCK_LIMIT");
	DEP->store(st, A_MAIN, X, 0, 8);
	DEP->sync_release(st, 1);
	DEP->thread(st, 2);
	DEP->thread_start(st, 2, 1);
	DEP->sync_acquire(st, 1);
	DEP->loop_invoke(st, S_L1);
	for (int i = 0; i < 20; i++)   /* a reset: main's store forgotten */
		DEP->loop_iter(st, S_L1);
	DEP->loop_exit(st, S_L1);
	for (int i = 0; i < 40; i++) {
		DEP->thread(st, 2);
		DEP->store(st, A_STY, Y, 0, 8);
		DEP->thread(st, 1);
		DEP->load(st, A_LDY, Y, 0, 8);
		DEP->load(st, A_LD3C, X, 0, 8);
	}
	text = section(st);
	/* every load of Y that found a source found thread 2's; X only ever main's own loads */
	expect(text, "kind: raw, src: 17, dst: 18, loop: 0, count: ");
	expect(text, ", ordered: 0, unordered: ");
	if (strstr(text, "kind: raw, src: 17, dst: 18, carried") || strstr(text, "src: 10,") ||
	    strstr(text, "clock_resets: 0"))
		fail_msg("a source taken for the wrong thread, or no reset:\n%s", text);
	free(text);
	done(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cross),
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_reset),
	};

	unsetenv("MNEMO_DEP_CONTEXT");
	unsetenv("MNEMO_DEP_LOOP");
	unsetenv("MNEMO_DEP_CLOCK_LIMIT");
	unsetenv("MNEMO_DEP_TAGS");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
