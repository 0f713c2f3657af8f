/*
 * Rows per loop frame (backend/nestrows.h): an instance counts a row in every frame that holds
 * both accesses, once per destination access, carried with its distance in the innermost; the
 * one-word path (memo tallies, counts owed to the frames below and paid when a frame ends) gives
 * what the walk gives; many instances at once (add_n) what as many single ones give; and below a
 * loop met twice, rows that two frames share count once per access.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nestrows.h"

#define KIND 0   /* one kind of instance */

struct fix {
	struct mn_loopnest nest;
	struct mn_rows rows;
	struct mn_spans spans;
	uint64_t lost;
	struct mn_nestrows r;      /* last: its memo is 1 MiB */
};

/* The test's row key: the pair, the loop site (frames of one loop share rows), kind, carried. */
static void key(void *arg, uint64_t *k, uint32_t src, uint32_t dst, const struct mn_loop *l,
		unsigned kind, bool carried)
{
	(void)arg;
	k[0] = src | (uint64_t)dst << 32;
	k[1] = l ? l->site : 0;
	k[2] = kind << 1 | carried;
	k[3] = 0;
}

static void on_reset(void *arg)
{
	(void)arg;
}

static void on_close(void *arg, unsigned i)
{
	mn_nestrows_pay(&((struct fix *)arg)->r, i);
}

static const struct mn_loopnest_hooks hooks = { on_reset, on_close };

static struct fix *fix_new(void)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct mn_ctx *ctx;

	assert_non_null(f);
	assert_int_equal(mn_ctx_create(&ctx, 64), 0);
	mn_loopnest_init(&f->nest, ctx, UINT32_MAX, &hooks, f, &f->lost);
	assert_int_equal(mn_nestrows_init(&f->r, &f->rows, &f->nest, key, f, &f->lost, &f->spans),
			 0);
	return f;
}

static void fix_free(struct fix *f)
{
	assert_int_equal(f->lost, 0);
	mn_nestrows_free(&f->r);
	mn_rows_free(&f->rows);
	mn_spans_free(&f->spans);
	mn_ctx_destroy(f->nest.ctx);
	mn_loopnest_free(&f->nest);
	free(f);
}

static void enter(struct fix *f, uint32_t site)
{
	mn_loopnest_invoke(&f->nest, site);
	assert_non_null(mn_loopnest_open(&f->nest, site, false));
}

/* One destination access with one instance from src at sclock (in all its words: words times). */
static void dest(struct fix *f, uint32_t src, uint32_t dst, uint32_t sclock, bool one_word,
		   unsigned words)
{
	mn_nestrows_next(&f->r);
	for (unsigned w = 0; w < words; w++)
		mn_nestrows_add(&f->r, src, dst, KIND, mn_loopnest_holding(&f->nest, sclock),
				sclock, one_word);
}

/* The row of (src, dst, loop, carried) after every pending count went in; NULL: none. */
static const struct mn_row *row(struct fix *f, uint32_t src, uint32_t dst, uint32_t loop,
				bool carried)
{
	uint64_t k[4];
	const struct mn_row *e;

	key(NULL, k, src, dst, NULL, KIND, carried);
	k[1] = loop;
	mn_nestrows_flush(&f->r);
	for (struct mn_rows_cursor c = { 0 }; (e = mn_rows_next(&f->rows, &c));)
		if (!memcmp(mn_row_key(e), k, sizeof(k)))
			return e;
	return NULL;
}

static uint64_t count(struct fix *f, uint32_t src, uint32_t dst, uint32_t loop, bool carried)
{
	const struct mn_row *e = row(f, src, dst, loop, carried);

	return e ? e->count : 0;
}

/* Once per destination access, whatever its words; carried at its distance. */
static void test_once(void **state)
{
	struct fix *f = fix_new();
	uint32_t sclock;

	(void)state;
	enter(f, 10);
	mn_loopnest_iter(&f->nest, 10);
	sclock = f->nest.clock;   /* the source runs in iteration 1 */
	mn_loopnest_iter(&f->nest, 10);
	dest(f, 1, 2, sclock, false, 3);
	assert_int_equal(count(f, 1, 2, 10, true), 1);
	dest(f, 1, 2, sclock, false, 2);
	assert_int_equal(count(f, 1, 2, 10, true), 2);
	assert_int_equal(row(f, 1, 2, 10, true)->min, 1);
	assert_int_equal(row(f, 1, 2, 10, true)->max, 1);
	dest(f, 1, 2, 0, true, 1);   /* before the loop: loop 0 */
	dest(f, 1, 2, 0, true, 1);
	assert_int_equal(count(f, 1, 2, 0, false), 2);
	fix_free(f);
}

/* The one-word path (memo tallies, counts owed below) against the walk, in a nest of three. */
static void test_owed(void **state)
{
	struct fix *f = fix_new();
	uint32_t sclock;

	(void)state;
	enter(f, 10);
	mn_loopnest_iter(&f->nest, 10);
	enter(f, 11);
	mn_loopnest_iter(&f->nest, 11);
	enter(f, 12);
	mn_loopnest_iter(&f->nest, 12);
	sclock = f->nest.clock;
	for (int k = 0; k < 4; k++) {
		dest(f, 1, 2, sclock, true, 1);    /* one word */
		dest(f, 3, 4, sclock, false, 1);   /* the walk */
	}
	assert_int_equal(count(f, 1, 2, 12, false), 4);
	assert_int_equal(count(f, 3, 4, 12, false), 4);
	assert_int_equal(count(f, 3, 4, 11, false), 4);
	assert_int_equal(count(f, 1, 2, 11, false), 0);   /* owed by frame 11 until it ends */
	mn_loopnest_exit(&f->nest, 12);
	mn_loopnest_exit(&f->nest, 11);
	assert_int_equal(count(f, 1, 2, 11, false), 4);
	assert_int_equal(count(f, 1, 2, 10, false), 0);
	mn_loopnest_close_all(&f->nest);   /* before reading: every frame pays */
	assert_int_equal(count(f, 1, 2, 10, false), 4);
	assert_int_equal(count(f, 3, 4, 10, false), 4);
	fix_free(f);
}

/* add_n: c instances at once, as c one-word instances one by one. */
static void test_add_n(void **state)
{
	struct fix *a = fix_new(), *b = fix_new();
	struct fix *both[2] = { a, b };
	uint32_t sclock = 0;

	(void)state;
	for (int i = 0; i < 2; i++) {
		enter(both[i], 10);
		mn_loopnest_iter(&both[i]->nest, 10);
		enter(both[i], 11);
		mn_loopnest_iter(&both[i]->nest, 11);
		sclock = both[i]->nest.clock;
		mn_loopnest_iter(&both[i]->nest, 11);
		mn_loopnest_iter(&both[i]->nest, 11);
	}
	for (int k = 0; k < 5; k++)
		dest(a, 1, 2, sclock, true, 1);
	mn_nestrows_add_n(&b->r, 1, 2, 2, true, 2, KIND, 5);
	for (int i = 0; i < 2; i++) {
		mn_loopnest_close_all(&both[i]->nest);
		assert_int_equal(count(both[i], 1, 2, 11, true), 5);
		assert_int_equal(row(both[i], 1, 2, 11, true)->min, 2);
		assert_int_equal(row(both[i], 1, 2, 11, true)->max, 2);
		assert_int_equal(count(both[i], 1, 2, 10, false), 5);
	}
	fix_free(a);
	fix_free(b);
}

/* A loop met twice: the rows its two frames share count once per destination access. */
static void test_dup(void **state)
{
	struct fix *f = fix_new();
	uint32_t sclock;

	(void)state;
	enter(f, 10);
	mn_loopnest_iter(&f->nest, 10);
	mn_loopnest_func_entry(&f->nest, 1);
	enter(f, 10);
	assert_true(f->nest.loops[1].dup);
	mn_loopnest_iter(&f->nest, 10);
	sclock = f->nest.clock;
	for (int k = 0; k < 3; k++) {   /* in the same iteration: both frames' row is one */
		dest(f, 1, 2, sclock, true, 1);
		dest(f, 3, 4, sclock, false, 2);
	}
	assert_int_equal(count(f, 1, 2, 10, false), 3);
	assert_int_equal(count(f, 3, 4, 10, false), 3);
	mn_loopnest_iter(&f->nest, 10);   /* carried in the inner frame, not in the outer */
	for (int k = 0; k < 2; k++)
		dest(f, 1, 2, sclock, true, 1);
	assert_int_equal(count(f, 1, 2, 10, true), 2);
	assert_int_equal(count(f, 1, 2, 10, false), 5);
	fix_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_once),
		cmocka_unit_test(test_owed),
		cmocka_unit_test(test_add_n),
		cmocka_unit_test(test_dup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
