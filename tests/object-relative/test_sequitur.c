/*
 * Sequitur (modules/object-relative/sequitur*.c) against its definition.  Every grammar built here
 * is checked for what Sequitur promises: it expands to the input exactly, no digram occurs twice
 * (two overlapping occurrences inside a run "aaa" count once), every rule but the start rule is
 * used at least twice and has at least two symbols, and the counts (rules, size) agree with the
 * rules read back.  Small cases have their grammars derived by hand from the algorithm (comments
 * at each); random ones (seeded) over alphabets of 2..50 symbols, with and without planted
 * repeats, check the invariants; and the text form must round-trip.
 */
#define _GNU_SOURCE
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

#include "sequitur.h"

/* ---- Reading a grammar back ------------------------------------------------------------------ */

struct grammar {
	size_t nrules;
	size_t *first;                /* rule i: sym[first[i] .. first[i + 1]) */
	struct mn_seq_sym *sym;
	size_t nsym;
	size_t sym_cap, first_cap;
};

static int collect(void *arg, uint64_t id, const struct mn_seq_sym *rhs, size_t n)
{
	struct grammar *g = arg;

	assert_int_equal(id, g->nrules);
	if (g->nsym + n >= g->sym_cap) {
		g->sym_cap = 2 * (g->nsym + n) + 16;
		g->sym = realloc(g->sym, g->sym_cap * sizeof(*g->sym));
		assert_non_null(g->sym);
	}
	if (g->nrules + 2 >= g->first_cap) {
		g->first_cap = 2 * g->nrules + 16;
		g->first = realloc(g->first, g->first_cap * sizeof(*g->first));
		assert_non_null(g->first);
	}
	memcpy(g->sym + g->nsym, rhs, n * sizeof(*rhs));
	g->first[g->nrules] = g->nsym;
	g->nsym += n;
	g->nrules++;
	g->first[g->nrules] = g->nsym;
	return 0;
}

static void grammar_free(struct grammar *g)
{
	free(g->first);
	free(g->sym);
}

struct vec {
	uint64_t *v;
	size_t n, cap;
};

static int push(void *arg, uint64_t symbol)
{
	struct vec *o = arg;

	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 64;
		o->v = realloc(o->v, o->cap * sizeof(*o->v));
		assert_non_null(o->v);
	}
	o->v[o->n++] = symbol;
	return 0;
}

/* One digram occurrence, for sorting. */
struct occ {
	uint64_t a, b;                /* the symbols, rule ids tagged by the top bit of ... */
	uint8_t ra, rb;               /* ... these flags instead, so terminals keep all 64 bits */
	size_t rule, pos;
};

static int occ_cmp(const void *x, const void *y)
{
	const struct occ *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	if (p->ra != q->ra)
		return p->ra < q->ra ? -1 : 1;
	if (p->rb != q->rb)
		return p->rb < q->rb ? -1 : 1;
	if (p->rule != q->rule)
		return p->rule < q->rule ? -1 : 1;
	return p->pos < q->pos ? -1 : p->pos > q->pos;
}

static bool occ_same(const struct occ *p, const struct occ *q)
{
	return p->a == q->a && p->b == q->b && p->ra == q->ra && p->rb == q->rb;
}

/* Digram uniqueness, rule utility, counts, and expand == in[0..n).  Returns the grammar's size. */
static uint64_t check_grammar(struct mn_seq *s, const uint64_t *in, size_t n)
{
	struct grammar g = { 0 };
	struct vec out = { 0 };
	struct occ *occ;
	size_t nocc = 0, *uses;

	assert_int_equal(mn_seq_rules(s, collect, &g), 0);
	assert_int_equal(g.nrules, mn_seq_rules_count(s));
	assert_int_equal(g.nsym, mn_seq_size(s));
	assert_int_equal(mn_seq_length(s), n);

	/* rule utility (and every rule id in range) */
	uses = calloc(g.nrules, sizeof(*uses));
	assert_non_null(uses);
	for (size_t i = 0; i < g.nsym; i++) {
		if (g.sym[i].rule) {
			assert_true(g.sym[i].value < g.nrules);
			assert_true(g.sym[i].value != 0);
			uses[g.sym[i].value]++;
		}
	}
	for (size_t r = 1; r < g.nrules; r++) {
		if (uses[r] < 2)
			fail_msg("rule utility: expected R%zu used >= 2 times, got %zu", r,
				 uses[r]);
		if (g.first[r + 1] - g.first[r] < 2)
			fail_msg("expected R%zu to have >= 2 symbols, got %zu", r,
				 g.first[r + 1] - g.first[r]);
	}
	free(uses);

	/* digram uniqueness */
	occ = malloc((g.nsym + 1) * sizeof(*occ));
	assert_non_null(occ);
	for (size_t r = 0; r < g.nrules; r++) {
		for (size_t i = g.first[r]; i + 1 < g.first[r + 1]; i++) {
			occ[nocc++] = (struct occ){ g.sym[i].value, g.sym[i + 1].value,
						    g.sym[i].rule, g.sym[i + 1].rule, r, i };
		}
	}
	qsort(occ, nocc, sizeof(*occ), occ_cmp);
	for (size_t i = 0; i < nocc;) {
		size_t j = i + 1;

		while (j < nocc && occ_same(&occ[i], &occ[j]))
			j++;
		/* Only two overlapping occurrences (x x x within one rule) may share a digram. */
		if (j - i > 2 || (j - i == 2 && (occ[i].rule != occ[i + 1].rule ||
						 occ[i + 1].pos != occ[i].pos + 1)))
			fail_msg("digram uniqueness: expected (%s%llu, %s%llu) once, got %zu times",
				 occ[i].ra ? "R" : "", (unsigned long long)occ[i].a,
				 occ[i].rb ? "R" : "", (unsigned long long)occ[i].b, j - i);
		i = j;
	}
	free(occ);
	grammar_free(&g);

	assert_int_equal(mn_seq_expand(s, push, &out), 0);
	if (out.n != n)
		fail_msg("expand: expected %zu symbols, got %zu", n, out.n);
	for (size_t i = 0; i < n; i++) {
		if (out.v[i] != in[i])
			fail_msg("expand: at %zu expected %llu, got %llu", i,
				 (unsigned long long)in[i], (unsigned long long)out.v[i]);
	}
	free(out.v);
	return mn_seq_size(s);
}

static struct mn_seq *build(const uint64_t *in, size_t n)
{
	struct mn_seq *s;

	assert_int_equal(mn_seq_create(&s), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(mn_seq_append(s, in[i]), 0);
	return s;
}

/* The grammar's text, malloc'd. */
static char *text_of(struct mn_seq *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(mn_seq_write(s, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static int parse_text(struct mn_seq **sp, const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	assert_non_null(f);
	ret = mn_seq_parse(sp, f);
	fclose(f);
	return ret;
}

/* write -> parse -> expand == in, and the parsed grammar writes the same text. */
static void check_round_trip(struct mn_seq *s, const uint64_t *in, size_t n)
{
	char *text = text_of(s), *again;
	struct mn_seq *p;

	assert_int_equal(parse_text(&p, text), 0);
	assert_int_equal(mn_seq_rules_count(p), mn_seq_rules_count(s));
	check_grammar(p, in, n);
	again = text_of(p);
	assert_string_equal(again, text);
	assert_int_equal(mn_seq_append(p, 1), -EPERM);
	mn_seq_destroy(p);
	free(text);
	free(again);
}

#define ANY_SIZE UINT64_MAX

/*
 * Builds the grammar of a string of characters, checks it, and compares its size and text with
 * want_size (unless ANY_SIZE) and want (unless NULL).
 */
static void check_string(const char *str, const char *want, uint64_t want_size)
{
	size_t n = strlen(str);
	uint64_t *in = malloc((n + 1) * sizeof(*in));
	struct mn_seq *s;
	char *text;

	assert_non_null(in);
	for (size_t i = 0; i < n; i++)
		in[i] = (unsigned char)str[i];
	s = build(in, n);
	if (check_grammar(s, in, n) != want_size && want_size != ANY_SIZE)
		fail_msg("\"%s\": expected size %llu, got %llu", str,
			 (unsigned long long)want_size, (unsigned long long)mn_seq_size(s));
	text = text_of(s);
	if (want && strcmp(text, want))
		fail_msg("\"%s\": expected\n%sgot\n%s", str, want, text);
	check_round_trip(s, in, n);
	free(text);
	mn_seq_destroy(s);
	free(in);
}

/* ---- Fixed cases ----------------------------------------------------------------------------- */

static void test_empty_and_tiny(void **state)
{
	check_string("", "R0 ->\n", 0);
	check_string("a", "R0 -> 97\n", 1);
	check_string("ab", "R0 -> 97 98\n", 2);
	/* "aa", "aaa": overlapping digrams are not repeats. */
	check_string("aa", "R0 -> 97 97\n", 2);
	check_string("aaa", "R0 -> 97 97 97\n", 3);
	/* "aaaa": the 4th a makes (a a) repeat without overlap: S -> A A, A -> a a. */
	check_string("aaaa", "R0 -> R1 R1\nR1 -> 97 97\n", 4);
}

/*
 * The Sequitur paper's example (Nevill-Manning and Witten, Figure 1), traced by hand:
 *   abcdbc:      (b c) repeats             S -> a A d A,      A -> b c
 *   abcdbca b c: (b c) is A, reused        S -> a A d A a A
 *                (a A) repeats             S -> B d A B,      B -> a A
 *   ...d:        (B d) repeats             S -> C A C,        C -> B d
 *                B is now used once, so expanded:  C -> a A d
 * giving S -> C A C, C -> a A d, A -> b c: 3 rules, size 8; numbered by first use from S.
 */
static void test_paper_abcdbcabcd(void **state)
{
	check_string("abcdbcabcd", "R0 -> R1 R2 R1\nR1 -> 97 R2 100\nR2 -> 98 99\n", 8);
}

/*
 * The WHOMP paper's example, "abcabcabc", traced by hand:
 *   abcab:  (a b) repeats                    S -> A c A,    A -> a b
 *   c:      (A c) repeats                    S -> B B,      B -> A c; A used once: B -> a b c
 *   ab:     (a b) repeats inside B           S -> B B C,    B -> C c,  C -> a b
 *   c:      (C c) is B, reused: S -> B B B;  C used once:   B -> a b c
 * giving S -> B B B, B -> a b c (size 6).  The paper prints S -> AA, A -> aBB, B -> bc, which
 * is not Sequitur's grammar and does not even derive the string (it gives abcbcabcbc).
 */
static void test_whomp_abcabcabc(void **state)
{
	check_string("abcabcabc", "R0 -> R1 R1 R1\nR1 -> 97 98 99\n", 6);
}

/* Runs and repeats whose grammars are checked for the invariants only. */
static void test_fixed_strings(void **state)
{
	static const char *const str[] = {
		"abababab", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "abbbabcbb", "aabaaab",
		"abcabdabcabdabcabd", "xyxyxyxyzxyxyxyxyzxyxyxyxyz", "abcbcabcbcbcbc",
		("pease porridge hot, pease porridge cold, "
		 "pease porridge in the pot, nine days old"),
	};

	for (size_t i = 0; i < sizeof(str) / sizeof(str[0]); i++)
		check_string(str[i], NULL, ANY_SIZE);
}

/* ---- Random sequences ------------------------------------------------------------------------ */

static uint64_t rng = UINT64_C(0x9e3779b97f4a7c15);

static uint64_t next_rand(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * UINT64_C(2685821657736338717);
}

/*
 * 200 seeded sequences of up to 20000 symbols over 2..50 symbols: a third uniform, a third built
 * from copies of a few random blocks (plenty of repeats, deep rules), a third uniform with long
 * runs of one symbol.
 */
static void test_random(void **state)
{
	uint64_t *in = malloc(20000 * sizeof(*in)), block[8][64];
	uint64_t total_in = 0, total_size = 0;

	assert_non_null(in);
	for (int t = 0; t < 200; t++) {
		size_t n = next_rand() % 20001, alpha = 2 + next_rand() % 49;
		struct mn_seq *s;

		for (int b = 0; b < 8; b++) {
			for (int k = 0; k < 64; k++)
				block[b][k] = next_rand() % alpha;
		}
		for (size_t i = 0; i < n;) {
			switch (t % 3) {
			case 0:
				in[i++] = next_rand() % alpha;
				break;
			case 1: {
				size_t b = next_rand() % 8, len = 1 + next_rand() % 64;

				for (size_t k = 0; k < len && i < n; k++)
					in[i++] = block[b][k];
				break;
			}
			default: {
				size_t len = 1 + next_rand() % 12;
				uint64_t v = next_rand() % alpha;

				for (size_t k = 0; k < len && i < n; k++)
					in[i++] = v;
				break;
			}
			}
		}
		s = build(in, n);
		total_in += n;
		total_size += check_grammar(s, in, n);
		if (t % 20 == 0)
			check_round_trip(s, in, n);
		mn_seq_destroy(s);
	}
	print_message("random: %llu symbols in, grammars of %llu symbols in all\n",
		      (unsigned long long)total_in, (unsigned long long)total_size);
	free(in);
}

/* A periodic stream, the shape WHOMP's object-relative substreams have: the grammar is tiny. */
static void test_periodic(void **state)
{
	size_t n = 100000;
	uint64_t *in = malloc(n * sizeof(*in));
	struct mn_seq *s;
	uint64_t size;

	assert_non_null(in);
	for (size_t i = 0; i < n; i++)
		in[i] = (i % 7) * 8;
	s = build(in, n);
	size = check_grammar(s, in, n);
	if (size > 64)
		fail_msg("period 7 x %zu: expected a grammar of <= 64 symbols, got %llu", n / 7,
			 (unsigned long long)size);
	check_round_trip(s, in, n);
	mn_seq_destroy(s);
	free(in);
}

/* ---- Values and text ------------------------------------------------------------------------- */

static void test_large_values(void **state)
{
	static const uint64_t val[] = { UINT64_MAX, 0, UINT64_C(1) << 63, UINT64_MAX - 1, 1,
					(UINT64_C(1) << 63) - 1 };
	uint64_t in[600];
	struct mn_seq *s;
	char *text;

	for (size_t i = 0; i < 600; i++)
		in[i] = val[(i * i + i / 7) % 6];
	s = build(in, 600);
	check_grammar(s, in, 600);
	check_round_trip(s, in, 600);
	mn_seq_destroy(s);

	/* A terminal's value never collides with a rule's. */
	in[0] = UINT64_MAX;
	in[1] = 0;
	in[2] = UINT64_MAX;
	in[3] = 0;
	s = build(in, 4);
	check_grammar(s, in, 4);
	text = text_of(s);
	assert_string_equal(text, "R0 -> R1 R1\nR1 -> 18446744073709551615 0\n");
	free(text);
	mn_seq_destroy(s);
}

static void test_parse(void **state)
{
	static const char *const bad[] = {
		"",                                   /* no R0 */
		"R1 -> 5 6\n",                        /* not from R0 */
		"R0 -> R1 R1\nR2 -> 5 6\n",           /* not dense */
		"R0 -> R1\n",                         /* R1 undefined */
		"R0 -> R1 R1\nR1 -> R1 5\n",          /* R1 derives itself */
		"R0 -> 5\nR1 -> 6 7\n",               /* R1 unused */
		"R0 -> R1 R1\nR1 ->\n",               /* R1 empty */
		"R0 -> -1\n",                         /* no sign */
		"R0 -> 18446744073709551616\n",       /* 2^64 */
		"R0 -> 5x\n",                         /* junk */
		"R0 5\n",                             /* no arrow */
	};
	struct mn_seq *s = NULL;
	static const uint64_t want[] = { 'a', 'b', 'c', 'b', 'c', 'a', 'b', 'c', 'b', 'c' };
	struct vec out = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = parse_text(&s, bad[i]);

		if (ret != -EINVAL)
			fail_msg("parse \"%s\": expected -EINVAL, got %d", bad[i], ret);
	}
	assert_null(s);

	/* Any grammar parses, not only Sequitur's: the WHOMP paper's S -> AA, A -> aBB, B -> bc. */
	assert_int_equal(parse_text(&s, "# comment\nR0 -> R1 R1\n\nR1 -> 97 R2 R2\nR2 -> 98 99\n"),
			 0);
	assert_int_equal(mn_seq_length(s), 10);
	assert_int_equal(mn_seq_size(s), 7);
	assert_int_equal(mn_seq_expand(s, push, &out), 0);
	assert_int_equal(out.n, 10);
	assert_memory_equal(out.v, want, sizeof(want));
	free(out.v);
	mn_seq_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_tiny),
		cmocka_unit_test(test_paper_abcdbcabcd),
		cmocka_unit_test(test_whomp_abcabcabc),
		cmocka_unit_test(test_fixed_strings),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_periodic),
		cmocka_unit_test(test_large_values),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
