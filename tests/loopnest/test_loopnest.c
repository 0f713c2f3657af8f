/*
 * Loop nests (backend/loopnest.h): the clock and its resets, frames in step with the context
 * stack (opened on invoke, closed through the hook on exit, also when a function returns from
 * inside a loop), iteration starts one at a time and T at once, holding() on shallow and deep
 * stacks against a plain walk, loops met twice (dup), via(), and threads' stacks swapped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loopnest.h"

struct seen {
	unsigned resets, closes;
	unsigned closed[64];       /* the index of each frame closed, in order */
};

static void on_reset(void *arg)
{
	((struct seen *)arg)->resets++;
}

static void on_close(void *arg, unsigned i)
{
	struct seen *s = arg;

	s->closed[s->closes++ % 64] = i;
}

static const struct mn_loopnest_hooks hooks = { on_reset, on_close };

static struct mn_loopnest *nest_new(struct seen *s, uint32_t limit, uint64_t *lost)
{
	struct mn_loopnest *n = calloc(1, sizeof(*n));
	struct mn_ctx *ctx;

	assert_non_null(n);
	assert_int_equal(mn_ctx_create(&ctx, 64), 0);
	mn_loopnest_init(n, ctx, limit, &hooks, s, lost);
	return n;
}

static void nest_free(struct mn_loopnest *n)
{
	mn_ctx_destroy(n->ctx);
	mn_loopnest_free(n);
	free(n);
}

static struct mn_loop *enter(struct mn_loopnest *n, uint32_t site, bool target)
{
	mn_loopnest_invoke(n, site);
	return mn_loopnest_open(n, site, target);
}

/* Clock ticks on invoke and iter; frames open and close with the context stack. */
static void test_frames(void **state)
{
	struct seen s = { 0 };
	uint64_t lost = 0;
	struct mn_loopnest *n = nest_new(&s, UINT32_MAX, &lost);
	struct mn_loop *l = enter(n, 10, true);

	(void)state;
	assert_non_null(l);
	assert_int_equal(n->clock, 1);
	assert_int_equal(l->inv, 1);
	assert_int_equal(n->in_target, 1);
	for (int k = 0; k < 3; k++)
		mn_loopnest_iter(n, 10);
	assert_int_equal(n->clock, 4);
	assert_int_equal(l->starts.n, 3);
	assert_ptr_equal(mn_loopnest_top(n, 10), l);
	mn_loopnest_func_entry(n, 20);
	assert_null(mn_loopnest_top(n, 10));   /* a function frame on top */
	assert_non_null(enter(n, 30, false));
	assert_int_equal(n->n, 2);
	assert_int_equal(mn_loopnest_holding(n, 4), 1);   /* loop 30 began at clock 5 */
	assert_int_equal(mn_loopnest_holding(n, 5), 2);
	assert_int_equal(mn_loopnest_holding(n, 0), 0);
	mn_loopnest_exit(n, 20);   /* returns from inside loop 30: it closes */
	assert_int_equal(n->n, 1);
	assert_int_equal(s.closes, 1);
	assert_int_equal(s.closed[0], 1);
	mn_loopnest_close_all(n);   /* closes, and stays */
	assert_int_equal(s.closes, 2);
	assert_int_equal(n->n, 1);
	mn_loopnest_exit(n, 10);
	assert_int_equal(n->n, 0);
	assert_int_equal(n->in_target, 0);
	assert_int_equal(lost, 0);
	nest_free(n);
}

/* The clock resets when it would pass its limit: the hook first, then every frame at clock 0. */
static void test_reset(void **state)
{
	struct seen s = { 0 };
	uint64_t lost = 0;
	struct mn_loopnest *n = nest_new(&s, 5, &lost);
	struct mn_loop *l = enter(n, 10, false);

	(void)state;
	for (int k = 0; k < 4; k++)
		mn_loopnest_iter(n, 10);
	assert_int_equal(n->clock, 5);
	assert_int_equal(s.resets, 0);
	mn_loopnest_iter(n, 10);
	assert_int_equal(s.resets, 1);
	assert_int_equal(n->clock, 1);
	assert_int_equal(l->inv, 0);
	assert_int_equal(l->starts.n, 5);   /* counts go on: only their clocks are forgotten */
	assert_int_equal(mn_loopnest_holding(n, 0), 1);
	nest_free(n);
}

/* T iterations at once are T iterations one by one. */
static void test_iter_n(void **state)
{
	struct seen s = { 0 };
	uint64_t lost = 0;
	struct mn_loopnest *a = nest_new(&s, UINT32_MAX, &lost);
	struct mn_loopnest *b = nest_new(&s, UINT32_MAX, &lost);
	struct mn_loop *la = enter(a, 10, false), *lb = enter(b, 10, false);

	(void)state;
	for (int k = 0; k < 1000; k++)
		mn_loopnest_iter(a, 10);
	mn_loopnest_iter_n(b, lb, 1000);
	assert_int_equal(a->clock, b->clock);
	assert_int_equal(la->starts.n, lb->starts.n);
	for (uint32_t c = 0; c <= a->clock; c += 37)
		assert_int_equal(mn_starts_upto(&la->starts, c), mn_starts_upto(&lb->starts, c));
	assert_int_equal(mn_ctx_frame_iter(a->ctx, 0), mn_ctx_frame_iter(b->ctx, 0));
	nest_free(a);
	nest_free(b);
}

/* A recursion through loops: holding() searches deep stacks as a walk would; dup marks every
 * frame from the second frame of a loop on. */
static void test_deep_and_dup(void **state)
{
	struct seen s = { 0 };
	uint64_t lost = 0;
	struct mn_loopnest *n = nest_new(&s, UINT32_MAX, &lost);

	(void)state;
	for (uint32_t k = 0; k < 30; k++) {   /* 60 frames: within the context's depth */
		mn_loopnest_func_entry(n, 1);
		assert_non_null(enter(n, k < 15 ? 100 + k : 100, false));
		mn_loopnest_iter(n, k < 15 ? 100 + k : 100);
	}
	assert_int_equal(n->n, 30);
	for (unsigned i = 0; i < 30; i++)
		assert_int_equal(n->loops[i].dup, i >= 15);
	for (uint32_t c = 0; c <= n->clock; c++) {
		unsigned walk = n->n;

		while (walk > 0 && n->loops[walk - 1].inv > c)
			walk--;
		assert_int_equal(mn_loopnest_holding(n, c), walk);
	}
	nest_free(n);
}

/* via(): the function frame nearest the loop on a context's path out to the loop's frame. */
static void test_via(void **state)
{
	struct seen s = { 0 };
	uint64_t lost = 0;
	struct mn_loopnest *n = nest_new(&s, UINT32_MAX, &lost);
	struct mn_loop *l;
	uint32_t inner, body;

	(void)state;
	mn_loopnest_func_entry(n, 1);
	l = enter(n, 10, false);
	body = mn_ctx_current(n->ctx);
	mn_loopnest_func_entry(n, 20);
	mn_loopnest_func_entry(n, 30);
	assert_non_null(enter(n, 40, false));
	inner = mn_ctx_current(n->ctx);
	assert_int_equal(mn_loopnest_via(n, inner, l->fid), 20);
	assert_int_equal(mn_loopnest_via(n, inner, l->fid), 20);   /* cached */
	assert_int_equal(mn_loopnest_via(n, body, l->fid), 0);
	assert_int_equal(mn_loopnest_via(n, inner, n->loops[1].fid), 0);
	nest_free(n);
}

/*
 * Threads (issue 22): two threads' frames and context stacks on one nest, swapped; the clock and
 * context ids shared; a parked stack's reset and free; a thread's end closing its frames.
 */
static void test_threads(void **state)
{
	struct seen s = { 0 };
	uint64_t lost = 0;
	struct mn_loopnest *n = nest_new(&s, UINT32_MAX, &lost);
	struct mn_loopnest_stack one = { 0 }, two = { 0 };
	struct mn_loop *l;
	uint32_t id;

	(void)state;
	mn_loopnest_func_entry(n, 1);
	enter(n, 10, true);
	mn_loopnest_iter(n, 10);
	id = mn_ctx_current(n->ctx);
	assert_int_equal(mn_loopnest_switch(n, &one, &two), 0);   /* thread 2: nothing yet */
	assert_int_equal(n->n, 0);
	assert_int_equal(n->in_target, 0);
	assert_int_equal(mn_ctx_depth(n->ctx), 0);
	mn_loopnest_func_entry(n, 1);
	l = enter(n, 10, false);
	assert_int_equal(l->inv, 3);   /* one clock */
	assert_int_equal(mn_ctx_current(n->ctx), id);   /* one id for one path */
	mn_loopnest_iter(n, 10);
	assert_int_equal(mn_loopnest_switch(n, &two, &one), 0);   /* thread 1 again */
	assert_int_equal(n->n, 1);
	assert_int_equal(n->in_target, 1);
	assert_int_equal(n->loops[0].inv, 1);
	assert_int_equal(n->loops[0].starts.n, 1);
	assert_ptr_equal(mn_loopnest_top(n, 10), &n->loops[0]);
	mn_loopnest_stack_reset(&two);   /* a reset reaches the parked thread's frames */
	assert_int_equal(two.loops[0].inv, 0);
	assert_int_equal(two.loops[0].starts.n, 1);
	mn_loopnest_end(n);   /* thread 1 ends: its frame closes and goes */
	assert_int_equal(s.closes, 1);
	assert_int_equal(n->n, 0);
	assert_int_equal(mn_ctx_depth(n->ctx), 0);
	mn_loopnest_stack_free(&two);
	assert_int_equal(lost, 0);
	nest_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_iter_n),
		cmocka_unit_test(test_deep_and_dup),
		cmocka_unit_test(test_via),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
