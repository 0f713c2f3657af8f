/*
 * The LMAD compressor of modules/object-relative/lmad.h driven directly: the paper's offset
 * stream (section 4) and the cap of 30 LMADs per stream, answers written from the paper.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lmad.h"

static void add(struct objrel_lmads *s, uint64_t obj, uint64_t off, uint64_t t, bool captured)
{
	uint64_t p[OBJREL_LMAD_DIMS] = { obj, off };

	assert_int_equal(objrel_lmads_add(s, p, t), captured);
}

static void expect(const struct objrel_lmad *l, uint64_t obj, uint64_t off, int64_t obj_stride,
		   int64_t off_stride, uint64_t count)
{
	assert_int_equal(l->start[0], obj);
	assert_int_equal(l->start[1], off);
	assert_int_equal(l->stride[0], obj_stride);
	assert_int_equal(l->stride[1], off_stride);
	assert_int_equal(l->count, count);
}

/* 0, 8, ..., 80, 4, 8, ..., 36: the paper's [0, 8, 10] (strides) and [4, 4, 9] (points), that is
 * [0, 8, 11] and [4, 4, 9] counting points. */
static void test_paper_stream(void **state)
{
	struct objrel_lmads s;
	uint64_t t = 0;

	objrel_lmads_init(&s, OBJREL_LMAD_LIMIT);
	for (uint64_t off = 0; off <= 80; off += 8)
		add(&s, 0, off, t++, true);
	for (uint64_t off = 4; off <= 36; off += 4)
		add(&s, 0, off, t++, true);
	assert_int_equal(s.n, 2);
	expect(&s.v[0], 0, 0, 0, 8, 11);
	expect(&s.v[1], 0, 4, 0, 4, 9);
	assert_int_equal(s.v[0].first, 0);
	assert_int_equal(s.v[0].last, 10);
	assert_int_equal(s.v[1].first, 11);
	assert_int_equal(s.v[1].last, 19);
	assert_int_equal(s.points, 20);
	assert_int_equal(s.captured, 20);
	assert_false(s.full);
	assert_int_equal(s.min[1], 0);
	assert_int_equal(s.max[1], 80);
	assert_int_equal(s.gran[1], 4);
	assert_int_equal(s.gran[0], 0);
	objrel_lmads_free(&s);
}

/* Figure 3's per-instruction streams: objects 0, 1, 2 at one offset are one LMAD of stride (1, 0). */
static void test_figure3_stream(void **state)
{
	struct objrel_lmads s;

	objrel_lmads_init(&s, OBJREL_LMAD_LIMIT);
	for (uint64_t k = 0; k < 3; k++)
		add(&s, k, 4, 2 * k + 1, true);
	assert_int_equal(s.n, 1);
	expect(&s.v[0], 0, 4, 1, 0, 3);
	objrel_lmads_free(&s);
}

/*
 * 30 pairs (0, 100) make 30 LMADs [0, 100, 2]; the 61st point, 0, would start a 31st: not captured,
 * and nor is any later point, even 200, which would have extended the 30th.  Every point still
 * updates min, max and granularity: offsets 0, 100, 200, 1000, 6 give granularity gcd = 2.
 */
static void test_cap(void **state)
{
	struct objrel_lmads s;
	uint64_t t = 0;

	objrel_lmads_init(&s, OBJREL_LMAD_LIMIT);
	for (int i = 0; i < 30; i++) {
		add(&s, 0, 0, t++, true);
		add(&s, 0, 100, t++, true);
	}
	assert_int_equal(s.n, 30);
	for (int i = 0; i < 30; i++)
		expect(&s.v[i], 0, 0, 0, 100, 2);
	assert_false(s.full);
	assert_int_equal(s.gran[1], 100);

	add(&s, 0, 0, t++, false);
	assert_true(s.full);
	assert_int_equal(s.n, 30);
	add(&s, 0, 200, t++, false);
	add(&s, 0, 1000, t++, false);
	add(&s, 3, 6, t++, false);
	assert_int_equal(s.n, 30);
	expect(&s.v[29], 0, 0, 0, 100, 2);
	assert_int_equal(s.points, 64);
	assert_int_equal(s.captured, 60);
	assert_int_equal(s.min[1], 0);
	assert_int_equal(s.max[1], 1000);
	assert_int_equal(s.gran[1], 2);
	assert_int_equal(s.min[0], 0);
	assert_int_equal(s.max[0], 3);
	assert_int_equal(s.gran[0], 3);
	objrel_lmads_free(&s);
}

/* The limit is settable: with 2, the third LMAD is refused. */
static void test_limit(void **state)
{
	struct objrel_lmads s;

	objrel_lmads_init(&s, 2);
	add(&s, 0, 0, 0, true);
	add(&s, 0, 8, 1, true);
	add(&s, 0, 0, 2, true);
	add(&s, 0, 4, 3, true);
	add(&s, 0, 0, 4, false);
	assert_int_equal(s.n, 2);
	assert_true(s.full);
	objrel_lmads_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paper_stream),
		cmocka_unit_test(test_figure3_stream),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
