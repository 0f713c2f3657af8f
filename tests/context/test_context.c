/*
 * Tests of the context manager (backend/context.h): encode/decode round trips with recursion and
 * the depth limit, robust pops (longjmp, returns from inside loops, stray events), the profile
 * writer, allocation failures (realloc and calloc are wrapped at link time, see CMakeLists.txt),
 * and a seeded random check against a plain array stack that also feeds two context managers the
 * same events and requires the same ids from both, as data-parallel workers do.
 */
#include <errno.h>
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

#include "context.h"
#include "profile.h"

/* ---- Allocation failures on demand: -Wl,--wrap=realloc,--wrap=calloc ------------------------- */

void *__real_realloc(void *p, size_t n);
void *__real_calloc(size_t n, size_t size);

static bool fail_realloc, fail_calloc;

void *__wrap_realloc(void *p, size_t n)
{
	return fail_realloc ? NULL : __real_realloc(p, n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_calloc ? NULL : __real_calloc(n, size);
}

/* ---- Helpers --------------------------------------------------------------------------------- */

static struct mn_ctx *ctx_new(unsigned max_depth)
{
	struct mn_ctx *c;

	assert_int_equal(mn_ctx_create(&c, max_depth), 0);
	assert_non_null(c);
	return c;
}

/* Checks that id decodes to want[0..n), outermost first, with a message saying both. */
static void check_decode(const struct mn_ctx *c, uint32_t id, const uint32_t *want, unsigned n,
			 const char *what)
{
	static uint32_t got[4096];
	int depth = mn_ctx_decode(c, id, got, 4096);

	if (depth < 0)
		fail_msg("%s: decode of id %u failed: %d", what, id, depth);
	if ((unsigned)depth != n || memcmp(got, want, n * sizeof(*want))) {
		char w[2048] = "", g[2048] = "";
		size_t wl = 0, gl = 0;

		for (unsigned k = 0; k < n && wl < sizeof(w) - 16; k++)
			wl += (size_t)snprintf(w + wl, sizeof(w) - wl, " %u", want[k]);
		for (int k = 0; k < depth && k < 4096 && gl < sizeof(g) - 16; k++)
			gl += (size_t)snprintf(g + gl, sizeof(g) - gl, " %u", got[k]);
		fail_msg("%s: id %u: expected [%s ] (depth %u), got [%s ] (depth %d)", what, id, w,
			 n, g, depth);
	}
	assert_int_equal(mn_ctx_id_depth(c, id), depth);
}

static struct mn_ctx_stats stats(const struct mn_ctx *c)
{
	struct mn_ctx_stats st;

	mn_ctx_stats(c, &st);
	return st;
}

enum { MAIN = 1, F = 2, G = 3, H = 4, L1 = 10, L2 = 11, L3 = 12 };

/* ---- Basics ---------------------------------------------------------------------------------- */

static void test_empty(void **state)
{
	struct mn_ctx *c = ctx_new(8);
	uint32_t sites[4] = { 99, 99, 99, 99 };

	assert_int_equal(mn_ctx_current(c), 0);
	assert_int_equal(mn_ctx_depth(c), 0);
	assert_int_equal(mn_ctx_id_count(c), 1);
	assert_int_equal(mn_ctx_max_depth(c), 8);
	assert_int_equal(mn_ctx_decode(c, 0, sites, 4), 0);
	assert_int_equal(sites[0], 99);
	assert_int_equal(mn_ctx_decode(c, 1, sites, 4), -EINVAL);
	assert_int_equal(mn_ctx_id_depth(c, 1), -EINVAL);
	assert_true(mn_ctx_valid(c));
	mn_ctx_destroy(c);
	mn_ctx_destroy(NULL);
}

static void test_push_pop_frames(void **state)
{
	struct mn_ctx *c = ctx_new(8);
	uint32_t id_main, id_loop, id_f;

	mn_ctx_push(c, MAIN, MN_CTX_FUNCTION);
	id_main = mn_ctx_current(c);
	mn_ctx_push(c, L1, MN_CTX_LOOP);
	id_loop = mn_ctx_current(c);
	for (int i = 0; i < 3; i++) {
		mn_ctx_iter(c, L1);
		mn_ctx_push(c, F, MN_CTX_FUNCTION);
		id_f = mn_ctx_current(c);
		assert_int_equal(id_f, 3);   /* the same id every iteration */
		mn_ctx_pop(c, F);
		assert_int_equal(mn_ctx_current(c), id_loop);
	}
	mn_ctx_iter(c, L1);

	/* Ids are dense from 1 in order of first appearance. */
	assert_int_equal(id_main, 1);
	assert_int_equal(id_loop, 2);
	assert_int_equal(mn_ctx_id_count(c), 4);
	check_decode(c, mn_ctx_current(c), (uint32_t[]){ MAIN, L1 }, 2, "main/L1");
	check_decode(c, 3, (uint32_t[]){ MAIN, L1, F }, 3, "main/L1/f");
	assert_int_equal(mn_ctx_id_parent(c, 3), id_loop);
	assert_int_equal(mn_ctx_id_site(c, 3), F);
	assert_int_equal(mn_ctx_id_site(c, 0), 0);

	/* The frames: kinds, sites, the loop's iteration count, invocation serials. */
	assert_int_equal(mn_ctx_depth(c), 2);
	assert_int_equal(mn_ctx_frame_site(c, 0), MAIN);
	assert_int_equal(mn_ctx_frame_kind(c, 0), MN_CTX_FUNCTION);
	assert_int_equal(mn_ctx_frame_iter(c, 0), 0);
	assert_int_equal(mn_ctx_frame_serial(c, 0), 1);
	assert_int_equal(mn_ctx_frame_id(c, 0), id_main);
	assert_int_equal(mn_ctx_frame_site(c, 1), L1);
	assert_int_equal(mn_ctx_frame_kind(c, 1), MN_CTX_LOOP);
	assert_int_equal(mn_ctx_frame_iter(c, 1), 4);
	assert_int_equal(mn_ctx_frame_serial(c, 1), 2);   /* the three calls of f were 3, 4, 5 */
	assert_int_equal(mn_ctx_frame_id(c, 1), id_loop);

	/* A second invocation of the loop: a new serial, iterations from 0, the same id. */
	mn_ctx_pop(c, L1);
	mn_ctx_push(c, L1, MN_CTX_LOOP);
	assert_int_equal(mn_ctx_current(c), id_loop);
	assert_int_equal(mn_ctx_frame_serial(c, 1), 6);
	assert_int_equal(mn_ctx_frame_iter(c, 1), 0);
	mn_ctx_pop(c, L1);
	mn_ctx_pop(c, MAIN);
	assert_int_equal(mn_ctx_current(c), 0);

	struct mn_ctx_stats st = stats(c);
	assert_int_equal(st.pushes, 6);
	assert_int_equal(st.unwound + st.unmatched + st.reopened + st.truncated + st.nomem, 0);
	assert_int_equal(st.ids, 4);
	assert_true(mn_ctx_valid(c));
	mn_ctx_destroy(c);
}

/* The same site under different parents is a different context. */
static void test_same_site_different_parents(void **state)
{
	struct mn_ctx *c = ctx_new(8);
	uint32_t a, b;

	mn_ctx_push(c, MAIN, MN_CTX_FUNCTION);
	mn_ctx_push(c, F, MN_CTX_FUNCTION);
	mn_ctx_push(c, H, MN_CTX_FUNCTION);
	a = mn_ctx_current(c);
	mn_ctx_pop(c, H);
	mn_ctx_pop(c, F);
	mn_ctx_push(c, G, MN_CTX_FUNCTION);
	mn_ctx_push(c, H, MN_CTX_FUNCTION);
	b = mn_ctx_current(c);
	assert_int_not_equal(a, b);
	check_decode(c, a, (uint32_t[]){ MAIN, F, H }, 3, "main/f/h");
	check_decode(c, b, (uint32_t[]){ MAIN, G, H }, 3, "main/g/h");
	assert_true(mn_ctx_valid(c));
	mn_ctx_destroy(c);
}

/* ---- Recursion and the depth limit ----------------------------------------------------------- */

/* Direct and mutual recursion below the limit: each level is its own id and decodes exactly. */
static void test_recursion_round_trip(void **state)
{
	struct mn_ctx *c = ctx_new(64);
	uint32_t want[64], ids[64];
	unsigned n = 0;

	want[n++] = MAIN;
	mn_ctx_push(c, MAIN, MN_CTX_FUNCTION);
	/* main -> f -> L1 -> f -> L1 -> ... (recursion from inside a loop) */
	for (int level = 0; level < 10; level++) {
		mn_ctx_push(c, F, MN_CTX_FUNCTION);
		want[n++] = F;
		ids[n - 1] = mn_ctx_current(c);
		check_decode(c, ids[n - 1], want, n, "recursion, f level");
		mn_ctx_push(c, L1, MN_CTX_LOOP);
		mn_ctx_iter(c, L1);
		want[n++] = L1;
		ids[n - 1] = mn_ctx_current(c);
		check_decode(c, ids[n - 1], want, n, "recursion, loop level");
	}
	/* then mutual recursion g <-> h */
	for (int level = 0; level < 6; level++) {
		want[n] = level & 1 ? H : G;
		mn_ctx_push(c, want[n++], MN_CTX_FUNCTION);
		ids[n - 1] = mn_ctx_current(c);
		check_decode(c, ids[n - 1], want, n, "mutual recursion");
	}
	assert_int_equal(mn_ctx_id_count(c), n + 1);   /* one id per level, nothing else */

	/* Unwind (the f levels return from inside their loop: func_exit closes it), then go down
	 * the same way again: every id is found, none is new. */
	for (int level = 5; level >= 0; level--)
		mn_ctx_pop(c, level & 1 ? H : G);
	for (int level = 0; level < 10; level++)
		mn_ctx_pop(c, F);
	assert_int_equal(mn_ctx_current(c), 1);
	assert_int_equal(stats(c).unwound, 0);   /* closing loops is normal */
	for (int level = 0; level < 10; level++) {
		mn_ctx_push(c, F, MN_CTX_FUNCTION);
		assert_int_equal(mn_ctx_current(c), ids[1 + 2 * level]);
		mn_ctx_push(c, L1, MN_CTX_LOOP);
		assert_int_equal(mn_ctx_current(c), ids[2 + 2 * level]);
	}
	assert_int_equal(mn_ctx_id_count(c), n + 1);
	assert_true(mn_ctx_valid(c));
	mn_ctx_destroy(c);
}

/* Beyond the limit the id stays the deepest kept frame's; the frames are still there. */
static void test_depth_limit(void **state)
{
	const unsigned limit = 4, deep = 1000;
	struct mn_ctx *c = ctx_new(limit);
	uint32_t kept, sites[8];

	mn_ctx_push(c, MAIN, MN_CTX_FUNCTION);
	for (unsigned i = 1; i < deep; i++) {
		/* f recurses from inside its loop every other level */
		if (i % 2)
			mn_ctx_push(c, F, MN_CTX_FUNCTION);
		else
			mn_ctx_push(c, L1, MN_CTX_LOOP);
		if (i % 2 == 0)
			for (unsigned k = 0; k < i % 5; k++)
				mn_ctx_iter(c, L1);
	}
	kept = mn_ctx_current(c);
	check_decode(c, kept, (uint32_t[]){ MAIN, F, L1, F }, limit, "beyond the limit");
	assert_int_equal(mn_ctx_id_count(c), limit + 1);   /* bounded, however deep */
	assert_int_equal(mn_ctx_depth(c), deep);
	assert_int_equal(stats(c).truncated, deep - limit);
	/* Frames beyond the limit keep everything but their own id. */
	assert_int_equal(mn_ctx_frame_site(c, deep - 1), (deep - 1) % 2 ? F : L1);
	assert_int_equal(mn_ctx_frame_id(c, deep - 1), kept);
	assert_int_equal(mn_ctx_frame_kind(c, 998), MN_CTX_LOOP);
	assert_int_equal(mn_ctx_frame_iter(c, 998), 998 % 5);
	assert_int_equal(mn_ctx_frame_serial(c, 998), 999);

	/* A decode into a short buffer gives the outermost sites and the full depth. */
	assert_int_equal(mn_ctx_decode(c, kept, sites, 2), limit);
	assert_int_equal(sites[0], MAIN);
	assert_int_equal(sites[1], F);

	/* Unwind by returns from inside loops (func_exit only): pops still match sites beyond the
	 * limit, and below it the ids come back exactly. */
	for (unsigned d = deep; d > 3; d = mn_ctx_depth(c)) {
		mn_ctx_pop(c, F);
		assert_int_equal(mn_ctx_frame_site(c, mn_ctx_depth(c) - 1), L1);
		if (mn_ctx_depth(c) <= limit)
			check_decode(c, mn_ctx_current(c), (uint32_t[]){ MAIN, F, L1 },
				     mn_ctx_depth(c), "unwound below the limit");
	}
	assert_int_equal(mn_ctx_depth(c), 3);
	assert_int_equal(mn_ctx_current(c), 3);
	assert_int_equal(stats(c).unwound, 0);
	assert_int_equal(stats(c).unmatched, 0);
	mn_ctx_pop(c, F);
	mn_ctx_pop(c, MAIN);
	assert_int_equal(mn_ctx_current(c), 0);
	assert_int_equal(mn_ctx_depth(c), 0);
	assert_true(mn_ctx_valid(c));
	mn_ctx_destroy(c);
}

/* Limits 0 and 1: every id 0, or only the outermost function. */
static void test_tiny_limits(void **state)
{
	struct mn_ctx *c0 = ctx_new(0), *c1 = ctx_new(1);

	for (int i = 0; i < 5; i++) {
		mn_ctx_push(c0, MAIN + i, MN_CTX_FUNCTION);
		mn_ctx_push(c1, MAIN + i, MN_CTX_FUNCTION);
		assert_int_equal(mn_ctx_current(c0), 0);
		assert_int_equal(mn_ctx_current(c1), 1);
	}
	check_decode(c1, 1, (uint32_t[]){ MAIN }, 1, "limit 1");
	assert_int_equal(mn_ctx_id_count(c0), 1);
	assert_int_equal(mn_ctx_id_count(c1), 2);
	assert_int_equal(mn_ctx_depth(c0), 5);
	assert_int_equal(mn_ctx_frame_site(c0, 4), MAIN + 4);
	assert_true(mn_ctx_valid(c0));
	assert_true(mn_ctx_valid(c1));
	mn_ctx_destroy(c0);
	mn_ctx_destroy(c1);
}

/* ---- Robust pops ----------------------------------------------------------------------------- */

static void test_robust_pops(void **state)
{
	struct mn_ctx *c = ctx_new(16);
	uint32_t in_loop;

	mn_ctx_push(c, MAIN, MN_CTX_FUNCTION);
	mn_ctx_push(c, L1, MN_CTX_LOOP);
	mn_ctx_iter(c, L1);
	in_loop = mn_ctx_current(c);

	/* longjmp out of f -> g -> h back into main's loop: no exits, then the loop iterates. */
	mn_ctx_push(c, F, MN_CTX_FUNCTION);
	mn_ctx_push(c, G, MN_CTX_FUNCTION);
	mn_ctx_push(c, L2, MN_CTX_LOOP);
	mn_ctx_push(c, H, MN_CTX_FUNCTION);
	mn_ctx_iter(c, L1);
	assert_int_equal(mn_ctx_current(c), in_loop);
	assert_int_equal(mn_ctx_frame_iter(c, 1), 2);
	assert_int_equal(stats(c).unwound, 3);   /* f, g, h; not the loop L2 */

	/* An exit with no frame of its site: ignored. */
	mn_ctx_pop(c, G);
	mn_ctx_iter(c, L3);
	mn_ctx_iter(c, MAIN);   /* a function site is not a loop */
	assert_int_equal(mn_ctx_current(c), in_loop);
	assert_int_equal(stats(c).unmatched, 3);

	/* A return from inside nested loops: func_exit closes them, quietly. */
	mn_ctx_push(c, F, MN_CTX_FUNCTION);
	mn_ctx_push(c, L2, MN_CTX_LOOP);
	mn_ctx_iter(c, L2);
	mn_ctx_push(c, L3, MN_CTX_LOOP);
	mn_ctx_iter(c, L3);
	mn_ctx_pop(c, F);
	assert_int_equal(mn_ctx_current(c), in_loop);
	assert_int_equal(stats(c).unwound, 3);

	/* A loop whose exit was not instrumented, invoked again: its stale frame is replaced. */
	mn_ctx_push(c, L2, MN_CTX_LOOP);
	mn_ctx_iter(c, L2);
	mn_ctx_iter(c, L2);
	mn_ctx_push(c, L2, MN_CTX_LOOP);
	assert_int_equal(mn_ctx_depth(c), 3);
	assert_int_equal(mn_ctx_frame_iter(c, 2), 0);
	assert_int_equal(stats(c).reopened, 1);
	/* ... but a recursive function may of course call itself. */
	mn_ctx_push(c, F, MN_CTX_FUNCTION);
	mn_ctx_push(c, F, MN_CTX_FUNCTION);
	assert_int_equal(mn_ctx_depth(c), 5);

	/* A pop of an outer frame closes everything above it. */
	mn_ctx_pop(c, MAIN);
	assert_int_equal(mn_ctx_current(c), 0);
	assert_int_equal(mn_ctx_depth(c), 0);
	assert_int_equal(stats(c).unwound, 5);
	mn_ctx_pop(c, MAIN);
	mn_ctx_iter(c, L1);
	assert_int_equal(stats(c).unmatched, 5);
	assert_true(mn_ctx_valid(c));
	mn_ctx_destroy(c);
}

/* ---- Output ---------------------------------------------------------------------------------- */

static void test_emit(void **state)
{
	struct mn_ctx *c = ctx_new(200);
	struct mn_prof *p;
	char *text = NULL;
	size_t len, nbits;
	const uint64_t *bits;
	uint32_t deep;
	FILE *f;

	mn_ctx_push(c, MAIN, MN_CTX_FUNCTION);
	mn_ctx_push(c, L1, MN_CTX_LOOP);
	mn_ctx_push(c, F, MN_CTX_FUNCTION);
	for (int i = 0; i < 150; i++)   /* deeper than emit's buffer on the stack */
		mn_ctx_push(c, G, MN_CTX_FUNCTION);
	deep = mn_ctx_current(c);

	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(mn_prof_open(&p, f), 0);
	mn_prof_map_begin(p);
	mn_prof_key(p, "outside");
	assert_int_equal(mn_ctx_emit(c, p, 0), 0);
	mn_prof_key(p, "in_f");
	assert_int_equal(mn_ctx_emit(c, p, 3), 0);
	mn_prof_key(p, "deep");
	assert_int_equal(mn_ctx_emit(c, p, deep), 0);
	assert_int_equal(mn_ctx_emit(c, p, 100000), -EINVAL);
	mn_prof_map_end(p);
	bits = mn_prof_sites_used(p, &nbits);
	assert_non_null(bits);
	for (uint32_t s = 0; s < 64; s++) {
		bool want = s == MAIN || s == L1 || s == F || s == G;

		if (want != (s < nbits && (bits[s / 64] >> (s % 64) & 1)))
			fail_msg("site %u: expected %s in the site table, got the opposite", s,
				 want ? "listed" : "not listed");
	}
	assert_int_equal(mn_prof_close(p), 0);
	fclose(f);

	if (!strstr(text, "outside: []\n") || !strstr(text, "in_f: [1, 10, 2]\n") ||
	    !strstr(text, "deep: [1, 10, 2, 3, 3,"))
		fail_msg("expected outside: [], in_f: [1, 10, 2], deep: [1, 10, 2, 3, 3, ...]; "
			 "got\n%s",
			 text);
	free(text);
	mn_ctx_destroy(c);
}

/* ---- Out of memory --------------------------------------------------------------------------- */

/* The intern table cannot grow: new contexts get their parent's id; nothing breaks. */
static void test_nomem_ids(void **state)
{
	struct mn_ctx *c = ctx_new(8);
	uint32_t count, id;

	mn_ctx_push(c, MAIN, MN_CTX_FUNCTION);
	mn_ctx_push(c, F, MN_CTX_FUNCTION);
	mn_ctx_pop(c, F);
	/* 600 distinct children of main: the node array and the hash table grow on the way. */
	for (uint32_t s = 100; s < 700; s++) {
		mn_ctx_push(c, s, MN_CTX_FUNCTION);
		mn_ctx_pop(c, s);
	}
	count = mn_ctx_id_count(c);
	assert_int_equal(count, 603);
	assert_true(mn_ctx_valid(c));

	/* Fill the tables to their current capacity, then fail every growth. */
	fail_realloc = fail_calloc = true;
	for (uint32_t s = 700; s < 2000; s++) {
		mn_ctx_push(c, s, MN_CTX_FUNCTION);
		mn_ctx_push(c, F, MN_CTX_FUNCTION);
		id = mn_ctx_current(c);
		mn_ctx_pop(c, F);
		mn_ctx_pop(c, s);
	}
	fail_realloc = fail_calloc = false;
	assert_true(stats(c).nomem > 0);
	assert_true(mn_ctx_id_count(c) < 2 * count);
	/* The last ones fell back on their parents: main/s/f became main/f. */
	check_decode(c, id, (uint32_t[]){ MAIN, F }, 2, "after intern failures");
	assert_int_equal(mn_ctx_depth(c), 1);
	assert_true(mn_ctx_valid(c));

	/* Memory again: new contexts are interned again. */
	mn_ctx_push(c, 5000, MN_CTX_FUNCTION);
	check_decode(c, mn_ctx_current(c), (uint32_t[]){ MAIN, 5000 }, 2, "memory back");
	assert_true(mn_ctx_valid(c));
	mn_ctx_destroy(c);
}

/* The stack cannot grow: the frames above are counted, pops take them off by count. */
static void test_nomem_frames(void **state)
{
	struct mn_ctx *c = ctx_new(1000);
	uint32_t top;
	unsigned kept;

	fail_realloc = true;
	for (int i = 0; i < 100; i++)
		mn_ctx_push(c, F, MN_CTX_FUNCTION);
	fail_realloc = false;
	kept = mn_ctx_depth(c);
	assert_true(kept < 100);
	top = mn_ctx_current(c);
	assert_int_equal(stats(c).nomem, 100 - kept);
	assert_int_equal(stats(c).pushes, 100);

	/* Pushes stay counted, even with memory back, until the lost frames are popped. */
	mn_ctx_push(c, G, MN_CTX_FUNCTION);
	mn_ctx_iter(c, L1);
	assert_int_equal(mn_ctx_current(c), top);
	mn_ctx_pop(c, G);
	for (unsigned i = kept; i < 100; i++) {
		mn_ctx_pop(c, F);
		assert_int_equal(mn_ctx_current(c), top);
	}
	mn_ctx_pop(c, F);
	assert_int_equal(mn_ctx_depth(c), kept - 1);
	assert_int_equal(stats(c).unmatched, 0);

	/* And then the stack grows again. */
	for (int i = 0; i < 200; i++)
		mn_ctx_push(c, G, MN_CTX_FUNCTION);
	assert_int_equal(mn_ctx_depth(c), kept - 1 + 200);
	assert_true(mn_ctx_valid(c));
	mn_ctx_destroy(c);

	fail_calloc = true;
	assert_int_equal(mn_ctx_create(&c, 8), -ENOMEM);
	fail_calloc = false;
	assert_null(c);
}

/* ---- Against a reference: a plain array stack ------------------------------------------------ */

struct ref_frame {
	uint32_t site;
	enum mn_ctx_kind kind;
	uint64_t iter, serial;
};

struct ref {
	struct ref_frame f[4096];
	unsigned depth, max_depth;
	uint64_t serial, truncated, unwound, unmatched, reopened;
};

static unsigned ref_find(const struct ref *r, uint32_t site, bool loop_only)
{
	for (unsigned i = r->depth; i > 0; i--)
		if (r->f[i - 1].site == site && (!loop_only || r->f[i - 1].kind == MN_CTX_LOOP))
			return i;
	return 0;
}

static void ref_close_above(struct ref *r, unsigned i)
{
	for (; r->depth > i; r->depth--)
		r->unwound += r->f[r->depth - 1].kind == MN_CTX_FUNCTION;
}

static void ref_push(struct ref *r, uint32_t site, enum mn_ctx_kind kind)
{
	if (kind == MN_CTX_LOOP && r->depth && r->f[r->depth - 1].site == site &&
	    r->f[r->depth - 1].kind == MN_CTX_LOOP) {
		r->depth--;
		r->reopened++;
	}
	assert_true(r->depth < 4096);
	r->f[r->depth++] = (struct ref_frame){ site, kind, 0, ++r->serial };
	r->truncated += r->depth > r->max_depth;
}

static void ref_pop(struct ref *r, uint32_t site)
{
	unsigned i = ref_find(r, site, false);

	if (!i) {
		r->unmatched++;
		return;
	}
	ref_close_above(r, i);
	r->depth = i - 1;
}

static void ref_iter(struct ref *r, uint32_t site)
{
	unsigned i = ref_find(r, site, true);

	if (!i) {
		r->unmatched++;
		return;
	}
	ref_close_above(r, i);
	r->f[i - 1].iter++;
}

static uint64_t rng_state;

static uint64_t rng(void)   /* xorshift64* */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

static unsigned below(unsigned n)
{
	return (unsigned)(rng() % n);
}

/* Compares everything c shows with the reference, after step `step`. */
static void check_against(const struct mn_ctx *c, const struct ref *r, unsigned step)
{
	uint32_t want[4096];
	char what[64];
	struct mn_ctx_stats st;

	if (mn_ctx_depth(c) != r->depth)
		fail_msg("step %u: depth: expected %u, got %u", step, r->depth, mn_ctx_depth(c));
	for (unsigned i = 0; i < r->depth; i++) {
		const struct ref_frame *f = &r->f[i];

		if (mn_ctx_frame_site(c, i) != f->site || mn_ctx_frame_kind(c, i) != f->kind ||
		    mn_ctx_frame_iter(c, i) != f->iter || mn_ctx_frame_serial(c, i) != f->serial)
			fail_msg("step %u: frame %u: expected site %u kind %d iter %" PRIu64
				 " serial %" PRIu64 ", got site %u kind %d iter %" PRIu64
				 " serial %" PRIu64,
				 step, i, f->site, f->kind, f->iter, f->serial,
				 mn_ctx_frame_site(c, i), mn_ctx_frame_kind(c, i),
				 mn_ctx_frame_iter(c, i), mn_ctx_frame_serial(c, i));
		want[i] = f->site;
	}
	snprintf(what, sizeof(what), "step %u, current", step);
	check_decode(c, mn_ctx_current(c), want, r->depth < r->max_depth ? r->depth : r->max_depth,
		     what);
	/* Every frame's id is the context with that frame on top. */
	if (r->depth) {
		unsigned i = below(r->depth);

		snprintf(what, sizeof(what), "step %u, frame %u", step, i);
		unsigned n = i + 1 < r->max_depth ? i + 1 : r->max_depth;

		check_decode(c, mn_ctx_frame_id(c, i), want, n, what);
	}
	mn_ctx_stats(c, &st);
	if (st.pushes != r->serial || st.truncated != r->truncated || st.unwound != r->unwound ||
	    st.unmatched != r->unmatched || st.reopened != r->reopened || st.nomem)
		fail_msg("step %u: stats: expected pushes %" PRIu64 " truncated %" PRIu64
			 " unwound %" PRIu64 " unmatched %" PRIu64 " reopened %" PRIu64
			 " nomem 0, got %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			 " %" PRIu64,
			 step, r->serial, r->truncated, r->unwound, r->unmatched, r->reopened,
			 st.pushes, st.truncated, st.unwound, st.unmatched, st.reopened, st.nomem);
}

enum { NFUNCS = 6, NLOOPS = 5, LOOP0 = 100 };   /* functions 1..6, loops 100..104 */

static uint32_t any_site(void)
{
	return below(3) ? 1 + below(NFUNCS) : LOOP0 + below(NLOOPS);
}

/*
 * One random run: mostly well-nested events, with stray exits and iterations, longjmps, returns
 * from inside loops, missing loop exits and bursts of recursion far beyond the limit.  Two context
 * managers (two workers) get every event; the second also answers queries between events, which
 * must not change anything.
 */
static void random_run(uint64_t seed, unsigned max_depth, unsigned steps)
{
	struct mn_ctx *a = ctx_new(max_depth), *b = ctx_new(max_depth);
	struct ref *r = calloc(1, sizeof(*r));
	uint32_t count = 1, scratch[8];

	assert_non_null(r);
	r->max_depth = max_depth;
	rng_state = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	for (unsigned step = 0; step < steps; step++) {
		const struct ref_frame *top = r->depth ? &r->f[r->depth - 1] : NULL;
		unsigned op = below(100), burst = 0;
		uint32_t site;

		if (r->depth > 60 && op < 45)
			op += 45;   /* keep the depth wandering around a few dozen */
		if (op < 28) {                                  /* call */
			site = 1 + below(NFUNCS);
			ref_push(r, site, MN_CTX_FUNCTION);
			mn_ctx_push(a, site, MN_CTX_FUNCTION);
			mn_ctx_push(b, site, MN_CTX_FUNCTION);
		} else if (op < 44) {                           /* loop invocation */
			site = LOOP0 + below(NLOOPS);
			if (top && top->kind == MN_CTX_LOOP && !below(4))
				site = top->site;   /* a missed loop exit */
			ref_push(r, site, MN_CTX_LOOP);
			mn_ctx_push(a, site, MN_CTX_LOOP);
			mn_ctx_push(b, site, MN_CTX_LOOP);
		} else if (op < 45) {                           /* deep recursion */
			burst = 100 + below(200);
			site = 1 + below(NFUNCS);
			for (unsigned k = 0; k < burst && r->depth < 4000; k++) {
				enum mn_ctx_kind kind = k % 3 == 2 ? MN_CTX_LOOP : MN_CTX_FUNCTION;
				uint32_t s = kind == MN_CTX_LOOP ? LOOP0 : site;

				ref_push(r, s, kind);
				mn_ctx_push(a, s, kind);
				mn_ctx_push(b, s, kind);
			}
		} else if (op < 72) {                           /* return, loop exit */
			site = top ? top->site : any_site();
			ref_pop(r, site);
			mn_ctx_pop(a, site);
			mn_ctx_pop(b, site);
		} else if (op < 78) {                           /* longjmp, or a stray exit */
			site = any_site();
			ref_pop(r, site);
			mn_ctx_pop(a, site);
			mn_ctx_pop(b, site);
		} else if (op < 96) {                           /* iteration */
			site = LOOP0 + below(NLOOPS);
			if (top && top->kind == MN_CTX_LOOP && below(5))
				site = top->site;
			ref_iter(r, site);
			mn_ctx_iter(a, site);
			mn_ctx_iter(b, site);
		} else {                                        /* stray iteration */
			site = any_site();
			ref_iter(r, site);
			mn_ctx_iter(a, site);
			mn_ctx_iter(b, site);
		}

		/* Queries on one worker only. */
		(void)mn_ctx_decode(b, mn_ctx_current(b), scratch, 8);
		(void)mn_ctx_id_depth(b, below(mn_ctx_id_count(b)));

		check_against(a, r, step);
		if (mn_ctx_current(a) != mn_ctx_current(b) ||
		    mn_ctx_id_count(a) != mn_ctx_id_count(b))
			fail_msg("step %u: the two workers disagree: ids %u and %u, counts %u and "
				 "%u",
				 step, mn_ctx_current(a), mn_ctx_current(b), mn_ctx_id_count(a),
				 mn_ctx_id_count(b));
		/* Ids are handed out densely in order: a step adds at most one (a burst several),
		 * and a new id is the current one. */
		if (mn_ctx_id_count(a) != count) {
			if (!burst && (mn_ctx_id_count(a) != count + 1 ||
				       mn_ctx_current(a) != count))
				fail_msg("step %u: expected new id %u to be current, got "
					 "current %u and %u ids",
					 step, count, mn_ctx_current(a), mn_ctx_id_count(a));
			count = mn_ctx_id_count(a);
		}
		if (step % 257 == 0 && !mn_ctx_valid(a))
			fail_msg("step %u: mn_ctx_valid() failed", step);
	}
	assert_true(mn_ctx_valid(a));
	assert_true(mn_ctx_valid(b));
	/* Every id decodes the same in both workers. */
	for (uint32_t id = 0; id < mn_ctx_id_count(a); id++) {
		static uint32_t sa[4096], sb[4096];
		int da = mn_ctx_decode(a, id, sa, 4096), db = mn_ctx_decode(b, id, sb, 4096);

		assert_int_equal(da, db);
		assert_true(da >= 0 && (unsigned)da <= max_depth && da <= 4096);
		assert_memory_equal(sa, sb, (size_t)da * sizeof(*sa));
	}
	print_message("seed %" PRIu64 ", limit %u: %u steps, %u ids, %" PRIu64 " unwound, %" PRIu64
		      " unmatched, %" PRIu64 " truncated\n",
		      seed, max_depth, steps, mn_ctx_id_count(a), r->unwound, r->unmatched,
		      r->truncated);
	mn_ctx_destroy(a);
	mn_ctx_destroy(b);
	free(r);
}

static void test_against_reference(void **state)
{
	static const unsigned limits[] = { 0, 1, 3, 8, 32, 4096 };

	for (uint64_t seed = 1; seed <= 4; seed++)
		for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++)
			random_run(seed, limits[l], 20000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_push_pop_frames),
		cmocka_unit_test(test_same_site_different_parents),
		cmocka_unit_test(test_recursion_round_trip),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_tiny_limits),
		cmocka_unit_test(test_robust_pops),
		cmocka_unit_test(test_emit),
		cmocka_unit_test(test_nomem_ids),
		cmocka_unit_test(test_nomem_frames),
		cmocka_unit_test(test_against_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
