/*
 * StructSlim's arithmetic (modules/structure-affinity/affinity.c) and the cache model (cache.c) on
 * made-up inputs whose answers follow from the paper's equations by hand: gcd strides (Eq. 2-3),
 * the size (Eq. 5), fields (Eq. 6), affinities (Eq. 7), complete-linkage clusters and the advice.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "affinity.h"
#include "cache.h"

static struct sa_layout lay;   /* 32 KiB: not on the test's stack */

/* A stream of `accesses` accesses costing 1 each. */
static struct sa_stream st(uint32_t loop, uint32_t site, uint64_t stride, uint64_t offset,
			   uint64_t accesses)
{
	return (struct sa_stream){ .loop = loop, .site = site, .stride = stride, .offset = offset,
				   .bytes = 4, .accesses = accesses, .cost = accesses };
}

static void expect_advice(const struct sa_layout *l, const char *want)
{
	char got[256];

	sa_layout_advice(l, got, sizeof(got));
	if (strcmp(got, want))
		fail_msg("advice: expected \"%s\", got \"%s\"", want, got);
}

static void expect_near(double got, double want, const char *what)
{
	if (got < want - 1e-12 || got > want + 1e-12)
		fail_msg("%s: expected %.15g, got %.15g", what, want, got);
}

static void test_gcd_stride(void **state)
{
	uint64_t stride = 0;

	assert_int_equal(sa_gcd(48, 32), 16);
	assert_int_equal(sa_gcd(0, 24), 24);
	assert_int_equal(sa_gcd(24, 0), 24);
	assert_int_equal(sa_gcd(7, 993), 1);
	/* The paper's example: Arr[2].a, Arr[5].a, Arr[7].a of 16-byte elements. */
	sa_stride_add(&stride, 2 * 16, 5 * 16);
	assert_int_equal(stride, 48);
	sa_stride_add(&stride, 5 * 16, 7 * 16);
	assert_int_equal(stride, 16);
	/* Equal addresses say nothing; order does not matter. */
	sa_stride_add(&stride, 64, 64);
	assert_int_equal(stride, 16);
	sa_stride_add(&stride, 7 * 16, 3 * 16);
	assert_int_equal(stride, 16);
}

/* Euclid's gcd, the definition sa_gcd() and sa_stride_add()'s shortcuts must agree with. */
static uint64_t euclid(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * sa_gcd() (binary) and sa_stride_add() (a power-of-two stride by its lowest set bit) against
 * Euclid, on pairs from a fixed xorshift sequence: multiples of 2^k and odd factors, as offsets are.
 */
static void test_gcd_fast_paths(void **state)
{
	uint64_t x = 88172645463325252u;

	for (int i = 0; i < 100000; i++) {
		uint64_t a, b, stride, want;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a = (x & 0xffff) << (x >> 60);
		b = ((x >> 16) & 0xffffff) << ((x >> 56) & 15);
		assert_int_equal(sa_gcd(a, b), euclid(a, b));
		stride = (x & 1) ? UINT64_C(1) << ((x >> 40) & 15) : a;
		want = b ? euclid(stride, b) : stride;
		sa_stride_add(&stride, 1000 + b, 1000);
		if (stride != want)
			fail_msg("stride: expected %" PRIu64 ", got %" PRIu64, want, stride);
	}
}

/* Figure 1: a and c (0, 8) in loop 1, b and d (4, 12) in loop 2; strides 16 and 32. */
static void test_figure1(void **state)
{
	struct sa_stream s[] = {
		st(1, 10, 16, 0, 100), st(1, 11, 32, 8 + 16 * 3, 100),
		st(2, 12, 16, 4 + 16 * 5, 100), st(2, 13, 48, 12, 100),
	};

	sa_layout_build(&lay, s, 4, 0, NULL, 0.8);
	assert_int_equal(lay.inferred, 16);
	assert_int_equal(lay.used, 16);
	assert_int_equal(lay.source, SA_SIZE_STRIDES);
	assert_int_equal(lay.nfields, 4);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(lay.field[i].offset, 4 * i);
		assert_int_equal(lay.field[i].cost, 100);
	}
	expect_near(lay.affinity[0][2], 1.0, "A(0, 8)");
	expect_near(lay.affinity[1][3], 1.0, "A(4, 12)");
	expect_near(lay.affinity[0][1], 0.0, "A(0, 4)");
	expect_near(lay.affinity[2][3], 0.0, "A(8, 12)");
	expect_near(lay.affinity[3][3], 1.0, "A(12, 12)");
	assert_int_equal(lay.nclusters, 2);
	assert_int_equal(lay.cluster[0], 0);
	assert_int_equal(lay.cluster[2], 0);
	assert_int_equal(lay.cluster[1], 1);
	assert_int_equal(lay.cluster[3], 1);
	expect_advice(&lay, "split into {0, 8} and {4, 12}");
	assert_int_equal(sa_layout_field(&lay, 8), 2);
	assert_int_equal(sa_layout_field(&lay, 6), -1);
}

/*
 * Field names from the site table's `fields`: exact offsets, a field inside a member
 * ("member+delta"), offsets beyond the size taken modulo it, the first of members sharing an
 * offset, an anonymous member (no name), and strings that do not parse (nothing named).
 */
static void test_names(void **state)
{
	struct sa_stream s[] = {
		st(1, 10, 32, 0, 10), st(1, 11, 32, 4, 10), st(2, 12, 32, 12, 10),
		st(2, 13, 32, 20, 10), st(2, 14, 32, 24, 10),
	};
	static const char *const bad[] = { "", "S", "S:a@0", "S/x:a@0", "S/16:a", "S/16:a@0,b@",
					   "S/16:a@0,,b@4" };

	/* Size 32 from the strides, a 16-byte structure: 20 and 24 are 4 and 8 of the next one. */
	sa_layout_build(&lay, s, 5, 0, NULL, 0.8);
	assert_int_equal(lay.nfields, 5);
	assert_true(sa_layout_name(&lay, "ns::pair<int, long>/16:a@0,f1@4,f2@4,in@8,@12"));
	assert_string_equal(lay.type, "ns::pair<int, long>");
	assert_string_equal(lay.field[0].name, "a");
	assert_string_equal(lay.field[1].name, "f1");
	assert_string_equal(lay.field[2].name, "");     /* 12: the anonymous member */
	assert_string_equal(lay.field[3].name, "f1");   /* 20 mod 16 */
	assert_string_equal(lay.field[4].name, "in");   /* 24 mod 16 */
	expect_advice(&lay, "split into {a, f1} and {12, f1, in}");

	sa_layout_build(&lay, s, 5, 0, NULL, 0.8);
	assert_true(sa_layout_name(&lay, "T/16:x@0,in@4"));
	assert_string_equal(lay.field[2].name, "in+8");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sa_layout_build(&lay, s, 5, 0, NULL, 0.8);
		if (sa_layout_name(&lay, bad[i]))
			fail_msg("'%s': expected no names", bad[i]);
		assert_string_equal(lay.type, "");
		assert_string_equal(lay.field[0].name, "");
	}
}

/*
 * Eq. 7 with unequal costs: loop 1 touches all four once (N each), loop 2 the first two 9 more
 * times.  A(hot, cold) = (N + N) / (10N + N) = 2/11; A(hot1, hot2) = A(cold1, cold2) = 1.
 */
static void test_hot_cold(void **state)
{
	struct sa_stream s[] = {
		st(1, 1, 16, 0, 1000), st(1, 2, 16, 4, 1000), st(1, 3, 16, 8, 1000),
		st(1, 4, 16, 12, 1000), st(2, 5, 16, 0, 9000), st(2, 6, 16, 4, 9000),
	};

	sa_layout_build(&lay, s, 6, 0, NULL, 0.8);
	assert_int_equal(lay.field[0].cost, 10000);
	assert_int_equal(lay.field[2].cost, 1000);
	expect_near(lay.affinity[0][1], 1.0, "A(hot1, hot2)");
	expect_near(lay.affinity[2][3], 1.0, "A(cold1, cold2)");
	expect_near(lay.affinity[0][2], 2.0 / 11.0, "A(hot1, cold1)");
	expect_near(lay.affinity[3][1], 2.0 / 11.0, "A(cold2, hot2)");
	expect_advice(&lay, "split into {0, 4} and {8, 12}");
	/* A threshold under 2/11 keeps them together. */
	sa_layout_build(&lay, s, 6, 0, NULL, 0.18);
	expect_advice(&lay, "do not split: all fields are used together");
}

/*
 * a-b and b-c are used together, a and c never: single linkage would chain all three; complete
 * linkage joins the closer pair (a, b: more cost in common) and leaves c alone.
 */
static void test_complete_linkage(void **state)
{
	struct sa_stream s[] = {
		st(1, 1, 24, 0, 100), st(1, 2, 24, 8, 100),   /* a, b */
		st(2, 3, 24, 8, 10), st(2, 4, 24, 16, 10),    /* b, c */
	};

	sa_layout_build(&lay, s, 4, 0, NULL, 0.8);
	expect_near(lay.affinity[0][1], 200.0 / 210.0, "A(a, b)");
	expect_near(lay.affinity[1][2], 20.0 / 120.0, "A(b, c)");
	assert_true(lay.affinity[1][2] < 0.8);
	expect_advice(&lay, "split into {0, 8} and {16}");
	/* Threshold 0: a cluster needs every pair at 0 or more, which A(a, c) = 0 is. */
	sa_layout_build(&lay, s, 4, 0, NULL, 0.0);
	expect_advice(&lay, "do not split: all fields are used together");
	/* Threshold 1: only identical use; none here. */
	sa_layout_build(&lay, s, 4, 0, NULL, 1.0);
	expect_advice(&lay, "split into {0}, {8} and {16}");
}

/* No stride (every instance touched once per stream): size unknown, declared or raw offsets. */
static void test_unknown_size(void **state)
{
	struct sa_stream s[] = {
		st(1, 1, 0, 0, 50), st(1, 2, 0, 16, 50), st(2, 3, 0, 8, 50),
	};

	sa_layout_build(&lay, s, 3, 0, NULL, 0.8);
	assert_int_equal(lay.inferred, 0);
	assert_int_equal(lay.used, 0);
	assert_int_equal(lay.source, SA_SIZE_OBJECT);
	assert_int_equal(lay.nfields, 3);
	assert_int_equal(lay.field[2].offset, 16);
	expect_advice(&lay, "split into {0, 16} and {8}");

	sa_layout_build(&lay, s, 3, 12, NULL, 0.8);
	assert_int_equal(lay.used, 12);
	assert_int_equal(lay.source, SA_SIZE_DECLARED);
	/* 16 mod 12 = 4 */
	assert_int_equal(lay.field[1].offset, 4);

	/* Strides win over a declared size, which is only reported beside them. */
	s[0].stride = 32;
	s[1].stride = 48;
	sa_layout_build(&lay, s, 3, 24, NULL, 0.8);
	assert_int_equal(lay.inferred, 16);
	assert_int_equal(lay.declared, 24);
	assert_int_equal(lay.used, 16);
	assert_int_equal(lay.nfields, 2);   /* 0, 16 -> 0; 8 */
	assert_int_equal(lay.field[0].cost, 100);
	expect_advice(&lay, "split into {0} and {8}");
}

/*
 * Strides a multiple of the declared size (every loop unrolled twice: six ints, {a, d}, {b, e, f},
 * {c}, each instruction twice, at offsets k and 24 + k, stride 48): the declared 24 is used and
 * the offsets folded into it, each member one field; with a declared size that does not divide
 * the inferred one, or a larger one, the strides win as before.
 */
static void test_folded_size(void **state)
{
	struct sa_stream s[] = {
		st(1, 1, 48, 0, 50), st(1, 2, 48, 12, 50),
		st(1, 3, 48, 24, 50), st(1, 4, 48, 36, 50),
		st(2, 5, 48, 4, 50), st(2, 6, 48, 16, 50), st(2, 7, 48, 20, 50),
		st(2, 8, 48, 28, 50), st(2, 9, 48, 40, 50), st(2, 10, 48, 44, 50),
		st(3, 11, 48, 8, 50), st(3, 12, 48, 32, 50),
	};
	const char *fields = "six/24:a@0,b@4,c@8,d@12,e@16,f@20";

	sa_layout_build(&lay, s, 12, 24, NULL, 0.8);
	assert_int_equal(lay.inferred, 48);
	assert_int_equal(lay.declared, 24);
	assert_int_equal(lay.used, 24);
	assert_int_equal(lay.source, SA_SIZE_FOLDED);
	assert_true(sa_layout_agree(&lay));
	assert_int_equal(lay.nfields, 6);
	for (uint32_t i = 0; i < 6; i++) {
		assert_int_equal(lay.field[i].offset, 4 * i);
		assert_int_equal(lay.field[i].cost, 100);
	}
	assert_int_equal(sa_layout_offset(&lay, &s[3]), 12);
	assert_true(sa_layout_name(&lay, fields));
	expect_advice(&lay, "split into {a, d}, {b, e, f} and {c}");

	/* Without a declared size the strides are all there is: 48, fields of two elements. */
	sa_layout_build(&lay, s, 12, 0, NULL, 0.8);
	assert_int_equal(lay.used, 48);
	assert_int_equal(lay.source, SA_SIZE_STRIDES);
	assert_int_equal(lay.nfields, 12);

	/* Equal: strides, agreeing.  Declared 36 (not dividing 48) and 96 (larger): strides win. */
	sa_layout_build(&lay, s, 12, 48, NULL, 0.8);
	assert_int_equal(lay.source, SA_SIZE_STRIDES);
	assert_true(sa_layout_agree(&lay));
	sa_layout_build(&lay, s, 12, 36, NULL, 0.8);
	assert_int_equal(lay.used, 48);
	assert_int_equal(lay.source, SA_SIZE_STRIDES);
	assert_false(sa_layout_agree(&lay));
	sa_layout_build(&lay, s, 12, 96, NULL, 0.8);
	assert_int_equal(lay.used, 48);
	assert_int_equal(lay.source, SA_SIZE_STRIDES);
	assert_false(sa_layout_agree(&lay));

	/* Three times (stride 72) folds the same way. */
	for (size_t i = 0; i < 12; i++)
		s[i].stride = 72;
	sa_layout_build(&lay, s, 12, 24, NULL, 0.8);
	assert_int_equal(lay.inferred, 72);
	assert_int_equal(lay.used, 24);
	assert_int_equal(lay.source, SA_SIZE_FOLDED);
	assert_int_equal(lay.nfields, 6);
}

/*
 * A stride of 1 (a byte walk over a member array, or an irregular pattern: StructSlim 4.2.2)
 * leaves the size to the other streams: a 40-byte record {int id; char name[20]; double v, w},
 * id and v read together, w alone, name walked bytewise, is 40 bytes of four fields, not one
 * field of a 1-byte structure.  Strides of 1 alone give size 1; strides of 3 and 4, gcd 1.
 */
static void test_unit_stride(void **state)
{
	struct sa_stream s[] = {
		st(1, 1, 40, 0, 100), st(1, 2, 40, 24, 100), st(2, 3, 40, 32, 100),
		st(3, 4, 1, 4, 20), { 0 },
	};

	sa_layout_build(&lay, s, 4, 40, NULL, 0.8);
	assert_int_equal(lay.inferred, 40);
	assert_int_equal(lay.used, 40);
	assert_int_equal(lay.source, SA_SIZE_STRIDES);
	assert_true(sa_layout_agree(&lay));
	assert_int_equal(lay.nfields, 4);
	assert_int_equal(lay.field[1].offset, 4);
	assert_true(sa_layout_name(&lay, "rec/40:id@0,name@4,v@24,w@32"));
	expect_advice(&lay, "split into {id, v}, {name} and {w}");

	/* Without a declared size, the same. */
	sa_layout_build(&lay, s, 4, 0, NULL, 0.8);
	assert_int_equal(lay.inferred, 40);
	assert_int_equal(lay.nfields, 4);

	/* Only strides of 1: size 1, one field. */
	sa_layout_build(&lay, &s[3], 1, 40, NULL, 0.8);
	assert_int_equal(lay.inferred, 1);
	assert_int_equal(lay.used, 1);
	assert_int_equal(lay.nfields, 1);

	/*
	 * A rotated loop reads name[0] before its loop (stride 40, offset 4) and name[1..] in it
	 * (stride 1, first at 5): with the layout, the walk's field is the member it is in, name;
	 * without, its first offset, a field of its own.
	 */
	s[3].offset = 5;
	s[4] = st(4, 5, 40, 4, 10);
	sa_layout_build(&lay, s, 5, 40, "rec/40:id@0,name@4,v@24,w@32", 0.8);
	assert_int_equal(lay.nfields, 4);
	assert_int_equal(lay.field[1].offset, 4);
	assert_int_equal(lay.field[1].cost, 30);
	assert_int_equal(sa_layout_offset(&lay, &s[3]), 4);
	assert_true(sa_layout_name(&lay, "rec/40:id@0,name@4,v@24,w@32"));
	expect_advice(&lay, "split into {id, v}, {name} and {w}");
	sa_layout_build(&lay, s, 5, 40, NULL, 0.8);
	assert_int_equal(lay.nfields, 5);
	assert_int_equal(sa_layout_offset(&lay, &s[3]), 5);
	/* A layout of another size than the one used (memory not used as declared): offsets. */
	sa_layout_build(&lay, s, 5, 40, "rec/24:id@0,name@4", 0.8);
	assert_int_equal(lay.nfields, 5);

	/* Strides of 3 and 4 are no unit strides: their gcd, 1, is the size. */
	s[0].stride = 3;
	s[1].stride = 4;
	sa_layout_build(&lay, s, 2, 0, NULL, 0.8);
	assert_int_equal(lay.inferred, 1);
}

static void test_edge_advice(void **state)
{
	struct sa_stream one[] = { st(1, 1, 8, 0, 5), st(2, 2, 8, 8, 5) };
	struct sa_stream many[SA_FIELDS_MAX + 3];

	sa_layout_build(&lay, NULL, 0, 0, NULL, 0.8);
	expect_advice(&lay, "no fields: no access was attributed");
	sa_layout_build(&lay, one, 2, 0, NULL, 0.8);
	assert_int_equal(lay.inferred, 8);
	expect_advice(&lay, "do not split: one field is accessed");

	/* More fields than the limit: the smallest offsets are kept, the other streams counted. */
	for (uint32_t i = 0; i < SA_FIELDS_MAX + 3; i++)
		many[i] = st(1, i, 0, 4 * (SA_FIELDS_MAX + 2 - i), 1);
	sa_layout_build(&lay, many, SA_FIELDS_MAX + 3, 0, NULL, 0.8);
	assert_int_equal(lay.nfields, SA_FIELDS_MAX);
	assert_int_equal(lay.dropped_streams, 3);
	assert_int_equal(lay.field[0].offset, 0);
	assert_int_equal(lay.field[SA_FIELDS_MAX - 1].offset, 4 * (SA_FIELDS_MAX - 1));
	expect_advice(&lay, "do not split: all fields are used together");
}

/* Two sets of two ways, 64-byte lines: LRU order, L2 refills, latency sums, multi-line accesses. */
static void test_cache(void **state)
{
	struct sa_cache_config cfg = { .bytes = { 256, 1024 }, .ways = { 2, 4 }, .line = 64,
				       .latency = { 4, 12, 200 } };
	struct sa_cache c;

	assert_int_equal(sa_cache_init(&c, &cfg), 0);
	assert_int_equal(c.level[0].sets, 2);
	assert_int_equal(c.level[1].sets, 4);
	assert_int_equal(sa_cache_access(&c, 0, 4), 200);      /* line 0, set 0: cold */
	assert_int_equal(sa_cache_access(&c, 60, 4), 4);       /* same line */
	assert_int_equal(sa_cache_access(&c, 128, 8), 200);    /* line 2, set 0 */
	assert_int_equal(sa_cache_access(&c, 256, 8), 200);    /* line 4, set 0: evicts line 0 */
	assert_int_equal(sa_cache_access(&c, 0, 1), 12);       /* from L2; evicts line 2 */
	assert_int_equal(sa_cache_access(&c, 256, 1), 4);      /* line 4 stayed */
	assert_int_equal(sa_cache_access(&c, 120, 16), 12 + 200);  /* line 1 cold, 2 from L2 */
	assert_int_equal(c.found[SA_L1], 2);
	assert_int_equal(c.found[SA_L2], 2);
	assert_int_equal(c.found[SA_MEMORY], 4);
	sa_cache_free(&c);

	cfg.line = 48;
	assert_int_equal(sa_cache_init(&c, &cfg), -EINVAL);
	cfg.line = 64;
	cfg.bytes[1] = 1000;
	assert_int_equal(sa_cache_init(&c, &cfg), -EINVAL);
	cfg.bytes[1] = 1024;
	cfg.ways[0] = 0;
	assert_int_equal(sa_cache_init(&c, &cfg), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcd_stride),
		cmocka_unit_test(test_gcd_fast_paths),
		cmocka_unit_test(test_figure1),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_hot_cold),
		cmocka_unit_test(test_complete_linkage),
		cmocka_unit_test(test_unknown_size),
		cmocka_unit_test(test_folded_size),
		cmocka_unit_test(test_unit_stride),
		cmocka_unit_test(test_edge_advice),
		cmocka_unit_test(test_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
