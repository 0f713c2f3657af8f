/*
 * Tests of shadow memory (backend/shadow.h): the mapping's arithmetic on addresses from every
 * region of the x86-64 layout; lookups of real heap, thread-stack, global and mmap addresses;
 * aliases (refused, counted, never written through, also when threads race for a slice); clearing;
 * the memory-cost bound, measured as the process's RSS; several instances at once; the
 * reservation's fallback to a smaller fold; and the shadow-cost module, driven directly.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "module.h"
#include "profile.h"
#include "shadow.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)

static long page_bytes(void)
{
	return sysconf(_SC_PAGESIZE);
}

/*
 * Field `field` of /proc/self/statm (0 size, 1 resident), in bytes; resident from VmRSS in
 * /proc/self/status, which the kernel sums exactly, where statm may read its per-CPU RSS counters
 * approximately (off by their batch on each CPU: hundreds of KiB after threads have run).
 */
static uint64_t statm(int field)
{
	unsigned long v[2];
	char line[256];
	FILE *f;

	if (field == 1) {
		f = fopen("/proc/self/status", "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "VmRSS: %lu kB", &v[1]) == 1)
				break;
		fclose(f);
		return (uint64_t)v[1] * KiB;
	}
	f = fopen("/proc/self/statm", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu %lu", &v[0], &v[1]), 2);
	fclose(f);
	return (uint64_t)v[field] * page_bytes();
}

static uint64_t resident(const struct mn_shadow *sh)
{
	uint64_t b = UINT64_MAX;

	assert_int_equal(mn_shadow_resident(sh, &b), 0);
	return b;
}

static struct mn_shadow *make(unsigned granule, unsigned meta)
{
	struct mn_shadow *sh = NULL;
	int ret = mn_shadow_create(&sh, granule, meta);

	if (ret)
		fail_msg("mn_shadow_create(granule %u, meta %u): expected 0, got %d", granule, meta,
			 ret);
	return sh;
}

/* ---- Arguments ------------------------------------------------------------------------------- */

static void test_create_invalid(void **state)
{
	static const unsigned bad_granule[] = {0, 2, 3, 4, 16};
	static const unsigned bad_meta[] = {0, 3, 5, 32, 64};
	static const unsigned bad_fold[] = {0, 29, 48, 64};
	struct mn_shadow *const sentinel = (struct mn_shadow *)&sentinel, *sh = sentinel;

	for (size_t i = 0; i < sizeof(bad_granule) / sizeof(*bad_granule); i++) {
		int ret = mn_shadow_create(&sh, bad_granule[i], 8);

		if (ret != -EINVAL)
			fail_msg("granule %u: expected -EINVAL, got %d", bad_granule[i], ret);
	}
	for (size_t i = 0; i < sizeof(bad_meta) / sizeof(*bad_meta); i++) {
		int ret = mn_shadow_create(&sh, 8, bad_meta[i]);

		if (ret != -EINVAL)
			fail_msg("meta %u: expected -EINVAL, got %d", bad_meta[i], ret);
	}
	for (size_t i = 0; i < sizeof(bad_fold) / sizeof(*bad_fold); i++) {
		int ret = mn_shadow_create_folded(&sh, 8, 8, bad_fold[i]);

		if (ret != -EINVAL)
			fail_msg("fold %u: expected -EINVAL, got %d", bad_fold[i], ret);
	}
	assert_ptr_equal(sh, sentinel);
	mn_shadow_destroy(NULL);
}

/* ---- The mapping's arithmetic ---------------------------------------------------------------- */

/* Every granule and metadata size: the default fold keeps the reservation within 8 TiB. */
static void test_default_folds(void **state)
{
	static const struct {
		unsigned granule, meta, fold;
		uint64_t reserved;
	} want[] = {
		{8, 1, 42, 512 * GiB}, {8, 2, 42, 1 * TiB},  {8, 4, 42, 2 * TiB},
		{8, 8, 42, 4 * TiB},   {8, 16, 42, 8 * TiB}, {1, 1, 42, 4 * TiB},
		{1, 2, 42, 8 * TiB},   {1, 4, 41, 8 * TiB},  {1, 8, 40, 8 * TiB},
		{1, 16, 39, 8 * TiB},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		struct mn_shadow *sh = make(want[i].granule, want[i].meta);

		if (mn_shadow_fold_bits(sh) != want[i].fold ||
		    mn_shadow_reserved_bytes(sh) != want[i].reserved)
			fail_msg("granule %u meta %u: expected fold %u reserving %" PRIu64
				 " GiB, got fold %u reserving %" PRIu64 " GiB",
				 want[i].granule, want[i].meta, want[i].fold,
				 want[i].reserved / GiB, mn_shadow_fold_bits(sh),
				 mn_shadow_reserved_bytes(sh) / GiB);
		assert_int_equal(mn_shadow_granule_bytes(sh), want[i].granule);
		assert_int_equal(mn_shadow_meta_bytes(sh), want[i].meta);
		mn_shadow_destroy(sh);
	}
}

/* Addresses from every region of the Linux x86-64 layout, with their window and folded offset. */
static const struct region_addr {
	const char *what;
	uint64_t addr, window, fold42;
} layout[] = {
	{"non-PIE global", 0x000000601238, 0x00, 0x000000601238},
	{"PIE global", 0x555555558014, 0x15, 0x015555558014},
	{"brk heap", 0x5555557792a0, 0x15, 0x0155557792a0},
	{"PIE, top of ASLR", 0x565555554010, 0x15, 0x025555554010},
	{"ASan heap", 0x502000000010, 0x14, 0x002000000010},
	{"mmap region", 0x7f1234567008, 0x1f, 0x031234567008},
	{"thread stack", 0x7f0abcdef0f8, 0x1f, 0x030abcdef0f8},
	{"mmap, bottom of ASLR", 0x7eff00001000, 0x1f, 0x02ff00001000},
	{"main stack", 0x7ffcdeadbeef, 0x1f, 0x03fcdeadbeef},
	{"top of user space", 0x7fffffffffff, 0x1f, 0x03ffffffffff},
};

static void test_mapping(void **state)
{
	static const struct {
		unsigned granule, meta;
	} cfg[] = {{8, 8}, {8, 1}, {8, 16}, {1, 1}, {1, 16}};

	for (size_t c = 0; c < sizeof(cfg) / sizeof(*cfg); c++) {
		struct mn_shadow *sh = make(cfg[c].granule, cfg[c].meta);
		unsigned fold = mn_shadow_fold_bits(sh);
		unsigned char *base = mn_shadow_map(sh, 0);

		assert_true(mn_shadow_is_shadow(sh, base));
		assert_true(mn_shadow_is_shadow(sh, base + mn_shadow_reserved_bytes(sh) - 1));
		assert_false(mn_shadow_is_shadow(sh, base + mn_shadow_reserved_bytes(sh)));
		assert_false(mn_shadow_is_shadow(sh, base - 1));
		assert_false(mn_shadow_is_shadow(sh, &fold));
		for (size_t i = 0; i < sizeof(layout) / sizeof(*layout); i++) {
			const struct region_addr *r = &layout[i];
			uint64_t folded = r->addr & ((UINT64_C(1) << fold) - 1);
			uint64_t want = folded / cfg[c].granule * cfg[c].meta;
			uint64_t got = (unsigned char *)mn_shadow_map(sh, r->addr) - base;

			/* The literal table is for the 42-bit fold; other folds mask further. */
			if (fold == 42 &&
			    (folded != r->fold42 || mn_shadow_window(sh, r->addr) != r->window))
				fail_msg("%s %#" PRIx64 ": expected window %#" PRIx64
					 " fold %#" PRIx64 ", got window %#" PRIx64
					 " fold %#" PRIx64,
					 r->what, r->addr, r->window, r->fold42,
					 mn_shadow_window(sh, r->addr), folded);
			if (got != want)
				fail_msg("granule %u meta %u, %s %#" PRIx64
					 ": expected shadow offset %#" PRIx64 ", got %#" PRIx64,
					 cfg[c].granule, cfg[c].meta, r->what, r->addr, want, got);
			assert_int_equal(mn_shadow_slice(sh, r->addr), folded >> 30);
			assert_true(mn_shadow_is_shadow(sh, mn_shadow_map(sh, r->addr)));
			/* Every byte of a granule shares its shadow; the next granule's follows it
			 * unless the fold wraps there. */
			uint64_t first = r->addr & ~(uint64_t)(cfg[c].granule - 1);
			uint64_t next = first + cfg[c].granule;

			assert_ptr_equal(mn_shadow_map(sh, first),
					 mn_shadow_map(sh, first + cfg[c].granule - 1));
			if (next & ((UINT64_C(1) << fold) - 1))
				assert_int_equal((unsigned char *)mn_shadow_map(sh, next) -
							 (unsigned char *)mn_shadow_map(sh, first),
						 cfg[c].meta);
			/* Nothing claimed yet: peek finds no metadata. */
			assert_null(mn_shadow_peek(sh, r->addr));
		}
		assert_int_equal(mn_shadow_aliases(sh), 0);
		mn_shadow_destroy(sh);
	}
}

/* ---- Real addresses from every region -------------------------------------------------------- */

static uint64_t a_global[4];

struct regions {
	const char *what[6];
	uint64_t addr[6];
	size_t n;
};

static void *thread_stack_addr(void *arg)
{
	volatile uint64_t local = 1;
	struct regions *r = arg;

	/* The thread is gone by the time the shadow is looked up: only the address is needed. */
	r->what[r->n] = "thread stack";
	r->addr[r->n++] = (uintptr_t)&local;
	return NULL;
}

/* A heap object (small: brk, or ASan's allocator), a large heap block (mmap), a global, an mmap'd
 * region, the main stack, a thread's stack. */
static void regions_get(struct regions *r, void **heap, void **big, void **map)
{
	volatile uint64_t local = 2;
	pthread_t t;

	memset(r, 0, sizeof(*r));
	*heap = malloc(64);
	*big = malloc(4 * MiB);
	*map = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_non_null(*heap);
	assert_non_null(*big);
	assert_true(*map != MAP_FAILED);
	r->what[r->n] = "heap";
	r->addr[r->n++] = (uintptr_t)*heap + 8;
	r->what[r->n] = "large heap block";
	r->addr[r->n++] = (uintptr_t)*big + 3 * MiB;
	r->what[r->n] = "global";
	r->addr[r->n++] = (uintptr_t)&a_global[1];
	r->what[r->n] = "mmap region";
	r->addr[r->n++] = (uintptr_t)*map + 4096;
	r->what[r->n] = "main stack";
	r->addr[r->n++] = (uintptr_t)&local;
	assert_int_equal(pthread_create(&t, NULL, thread_stack_addr, r), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(r->n, 6);
}

static void regions_put(void *heap, void *big, void *map)
{
	free(heap);
	free(big);
	munmap(map, 4 * MiB);
}

/* Unfolded (47 bits, one byte per word: 16 TiB), no two addresses can alias.  The regions are
 * made first, as in test_regions_default(), so the thread stack glibc caches is an ordinary one. */
static void test_regions_unfolded(void **state)
{
	struct mn_shadow *sh = NULL;
	struct regions r;
	void *heap, *big, *map;

	regions_get(&r, &heap, &big, &map);
	assert_int_equal(mn_shadow_create_folded(&sh, 8, 1, 47), 0);
	for (size_t i = 0; i < r.n; i++) {
		unsigned char *p = mn_shadow_get(sh, r.addr[i]);

		if (!p)
			fail_msg("%s %#" PRIx64 ": expected shadow, got NULL", r.what[i],
				 r.addr[i]);
		assert_ptr_equal(p, mn_shadow_map(sh, r.addr[i]));
		*p = 0xa0 + i;
	}
	for (size_t i = 0; i < r.n; i++) {
		const unsigned char *p = mn_shadow_peek(sh, r.addr[i]);

		assert_non_null(p);
		if (*p != 0xa0 + i)
			fail_msg("%s: expected metadata %#zx, got %#x", r.what[i], 0xa0 + i, *p);
	}
	assert_int_equal(mn_shadow_aliases(sh), 0);
	regions_put(heap, big, map);
	mn_shadow_destroy(sh);
}

/*
 * The default fold (42 bits, 8 bytes per word).  In an ordinary layout no two of these regions
 * fold together (shadow.h, "Why 42").  Under ASan the small heap lives at 0x50..., next to the
 * PIE's window: a collision there is possible, and then it must be a true, counted alias.
 *
 * The regions are made before the shadow: mappings made while a reservation exists land below
 * it, a multiple of 4 TiB lower, onto the slices of the mappings made before it (shadow.h,
 * "Shadowing one's own addresses").
 */
static void test_regions_default(void **state)
{
	struct mn_shadow *sh;
	struct regions r;
	void *heap, *big, *map;
	uint64_t aliases = 0;
	bool ok[6];

	regions_get(&r, &heap, &big, &map);
	sh = make(8, 8);
	for (size_t i = 0; i < r.n; i++) {
		uint64_t *p = mn_shadow_get(sh, r.addr[i]);

		print_message("%-16s %#014" PRIx64 "  window %#4" PRIx64 "  slice %#5" PRIx64
			      "  %s\n",
			      r.what[i], r.addr[i], mn_shadow_window(sh, r.addr[i]),
			      mn_shadow_slice(sh, r.addr[i]), p ? "shadow" : "ALIAS");
		ok[i] = p != NULL;
		if (p) {
			*p = r.addr[i];
			continue;
		}
		aliases++;
		if (mn_shadow_aliases(sh) != aliases)
			fail_msg("%s: an alias, expected %" PRIu64 " counted, got %" PRIu64,
				 r.what[i], aliases, mn_shadow_aliases(sh));
		/* It is a true collision: an earlier region of another window owns the slice. */
		bool found = false;
		for (size_t j = 0; j < i; j++)
			found |= ok[j] &&
				 mn_shadow_slice(sh, r.addr[j]) == mn_shadow_slice(sh, r.addr[i]) &&
				 mn_shadow_window(sh, r.addr[j]) != mn_shadow_window(sh, r.addr[i]);
		if (!found)
			fail_msg("%s: NULL but no other window's region shares its slice",
				 r.what[i]);
		if (!UNDER_ASAN)
			fail_msg("%s aliases %#" PRIx64 ": not expected in an ordinary layout",
				 r.what[i], r.addr[i]);
	}
	for (size_t i = 0; i < r.n; i++) {
		const uint64_t *p = mn_shadow_peek(sh, r.addr[i]);

		if (!ok[i]) {
			assert_null(p);
			continue;
		}
		assert_non_null(p);
		if (*p != r.addr[i])
			fail_msg("%s: expected metadata %#" PRIx64 ", got %#" PRIx64, r.what[i],
				 r.addr[i], *p);
	}
	assert_int_equal(mn_shadow_aliases(sh), aliases);
	regions_put(heap, big, map);
	mn_shadow_destroy(sh);
}

/* ---- Aliases --------------------------------------------------------------------------------- */

static void test_alias(void **state)
{
	struct mn_shadow *sh = make(8, 8);
	const uint64_t a = 0x555500001000, other = a + (UINT64_C(1) << 42);
	uint64_t *p, *q;

	p = mn_shadow_get(sh, a);
	assert_non_null(p);
	*p = 0x5a5a5a5a5a5a5a5a;
	assert_true(mn_shadow_owns(sh, a));
	assert_false(mn_shadow_owns(sh, other));
	assert_ptr_equal(mn_shadow_map(sh, other), p); /* the raw mapping does collide */

	/* Another window: refused and counted; peek refuses without counting. */
	assert_null(mn_shadow_get(sh, other));
	assert_int_equal(mn_shadow_aliases(sh), 1);
	assert_null(mn_shadow_peek(sh, other));
	assert_int_equal(mn_shadow_aliases(sh), 1);
	assert_null(mn_shadow_get(sh, other + 8 * MiB));
	assert_int_equal(mn_shadow_aliases(sh), 2);
	/* Beyond 47 bits an address is just one more window. */
	assert_null(mn_shadow_get(sh, a | UINT64_C(1) << 63));
	assert_int_equal(mn_shadow_aliases(sh), 3);

	/* Clearing the other window's range leaves the owner's metadata alone. */
	mn_shadow_clear(sh, other - 4096, 16 * KiB);
	mn_shadow_clear(sh, other & ~(GiB - 1), GiB);
	if (*p != 0x5a5a5a5a5a5a5a5a)
		fail_msg("owner's metadata: expected 0x5a5a5a5a5a5a5a5a, got %#" PRIx64, *p);

	/* The other window can still claim a free slice; the owner's slice stays the owner's. */
	q = mn_shadow_get(sh, other + GiB);
	assert_non_null(q);
	assert_ptr_not_equal(q, p);
	assert_ptr_equal(mn_shadow_get(sh, a + 8), p + 1);
	assert_int_equal(mn_shadow_aliases(sh), 3);
	mn_shadow_destroy(sh);
}

#define RACERS 8
#define LOOKUPS 20000

struct racer {
	struct mn_shadow *sh;
	pthread_barrier_t *go;
	uint64_t base; /* first address this thread looks up */
	uint64_t got, refused;
};

/* Looks up LOOKUPS consecutive words from base, writing each one it gets. */
static void *race(void *arg)
{
	struct racer *r = arg;

	pthread_barrier_wait(r->go);
	for (uint64_t j = 0; j < LOOKUPS; j++) {
		uint64_t *p = mn_shadow_get(r->sh, r->base + 8 * j);

		if (p) {
			*p = r->base + 8 * j;
			r->got++;
		} else {
			r->refused++;
		}
	}
	return NULL;
}

static void run_racers(struct racer *r, struct mn_shadow *sh, uint64_t (*base)(unsigned))
{
	pthread_barrier_t go;
	pthread_t t[RACERS];

	assert_int_equal(pthread_barrier_init(&go, NULL, RACERS), 0);
	for (unsigned i = 0; i < RACERS; i++) {
		r[i] = (struct racer){.sh = sh, .go = &go, .base = base(i)};
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (unsigned i = 0; i < RACERS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&go);
}

/* Thread i: window 0x10 + i, all in the same slice. */
static uint64_t base_windows(unsigned i)
{
	return (UINT64_C(0x10) + i) << 42 | 3 * GiB | i * LOOKUPS * 8;
}

/* Thread i: one window, disjoint words of one slice (a worker sharded by address). */
static uint64_t base_words(unsigned i)
{
	return UINT64_C(0x7f0000000000) + 5 * GiB + i * LOOKUPS * 8;
}

static void test_alias_threads(void **state)
{
	struct mn_shadow *sh = make(8, 8);
	struct racer r[RACERS];
	unsigned winners = 0;

	/* Eight windows race for one slice: exactly one wins every lookup, the rest none. */
	run_racers(r, sh, base_windows);
	for (unsigned i = 0; i < RACERS; i++) {
		if (r[i].got == LOOKUPS && !r[i].refused)
			winners++;
		else if (r[i].got || r[i].refused != LOOKUPS)
			fail_msg("window %u: expected all %d lookups or none, got %" PRIu64
				 " and %" PRIu64 " refused",
				 i, LOOKUPS, r[i].got, r[i].refused);
	}
	assert_int_equal(winners, 1);
	assert_int_equal(mn_shadow_aliases(sh), (RACERS - 1) * LOOKUPS);
	for (unsigned i = 0; i < RACERS; i++) {
		const uint64_t *p = mn_shadow_peek(sh, r[i].base + 8);

		if (r[i].got)
			assert_int_equal(*p, r[i].base + 8);
		else
			assert_null(p);
	}

	/* Eight threads of one window on disjoint words: every lookup succeeds, nothing lost. */
	run_racers(r, sh, base_words);
	for (unsigned i = 0; i < RACERS; i++) {
		assert_int_equal(r[i].got, LOOKUPS);
		for (uint64_t j = 0; j < LOOKUPS; j++) {
			const uint64_t *p = mn_shadow_peek(sh, r[i].base + 8 * j);

			assert_non_null(p);
			if (*p != r[i].base + 8 * j)
				fail_msg("thread %u word %" PRIu64 ": expected %#" PRIx64
					 ", got %#" PRIx64,
					 i, j, r[i].base + 8 * j, *p);
		}
	}
	assert_int_equal(mn_shadow_aliases(sh), (RACERS - 1) * LOOKUPS);
	mn_shadow_destroy(sh);
}

/* ---- Clearing -------------------------------------------------------------------------------- */

static void test_clear(void **state)
{
	struct mn_shadow *sh = make(8, 8);
	const uint64_t a = 0x7f0000000000, span = 64 * KiB; /* 64 KiB of shadow: 16 pages */
	const uint64_t pg = page_bytes();
	const uint64_t lo = a + 12, hi = a + 12 + 40000; /* clears words a+8 .. a+40008 */

	assert_int_equal(resident(sh), 0);
	for (uint64_t x = a; x < a + span; x += 8)
		*(uint64_t *)mn_shadow_get(sh, x) = ~x;
	assert_int_equal(resident(sh), span);

	mn_shadow_clear(sh, lo, hi - lo);
	for (uint64_t x = a; x < a + span; x += 8) {
		uint64_t want = x + 8 > lo && x < hi ? 0 : ~x;
		uint64_t got = *(const uint64_t *)mn_shadow_peek(sh, x);

		if (got != want)
			fail_msg("word %#" PRIx64 " after clearing [%#" PRIx64 ", %#" PRIx64 "): "
				 "expected %#" PRIx64 ", got %#" PRIx64,
				 x, lo, hi, want, got);
	}
	/* Shadow bytes [8, 40016) were cleared: the whole pages [4096, 36864) went back. */
	if (resident(sh) != span - 8 * pg)
		fail_msg("after a partial clear: expected %" PRIu64 " bytes resident, got %" PRIu64,
			 span - 8 * pg, resident(sh));

	/* Nothing to do: no length; a never-written range, even with partial pages at both ends,
	 * commits nothing. */
	mn_shadow_clear(sh, a, 0);
	mn_shadow_clear(sh, a + 1 * MiB + 24, 3 * 4096 + 100);
	mn_shadow_clear(sh, a + 2 * MiB + 24, 100);
	assert_int_equal(resident(sh), span - 8 * pg);
	assert_int_equal(*(const uint64_t *)mn_shadow_peek(sh, a), ~a);

	/* A range wider than the folded space clears every slice the window owns. */
	*(uint64_t *)mn_shadow_get(sh, a + 7 * GiB) = 1;
	mn_shadow_clear(sh, 0, UINT64_MAX);
	assert_int_equal(resident(sh), 0);
	assert_int_equal(*(const uint64_t *)mn_shadow_peek(sh, a), 0);
	assert_int_equal(*(const uint64_t *)mn_shadow_peek(sh, a + 7 * GiB), 0);
	mn_shadow_destroy(sh);
}

/* ---- Memory cost ----------------------------------------------------------------------------- */

/* The constant: a page of the tag table, and the kernel's per-CPU RSS counters, which statm may
 * read up to a batch (32 pages) per CPU stale. */
#define COST_SLACK (512 * KiB)

/*
 * Writing the metadata of every granule of n bytes of program addresses grows the process's RSS
 * by ratio * n, give or take a constant; clearing them gives it back.  The program addresses are
 * a real region, reserved PROT_NONE so that it costs nothing itself.
 */
static void check_cost(unsigned granule, unsigned meta, uint64_t n)
{
	const uint64_t slack = COST_SLACK;
	struct mn_shadow *sh = make(granule, meta);
	uint64_t want = n / granule * meta, rss0, rss1, rss2;
	void *region = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint64_t a = (uintptr_t)region;

	assert_true(region != MAP_FAILED);
	rss0 = statm(1);
	for (uint64_t x = a; x < a + n; x += granule) {
		void *p = mn_shadow_get(sh, x);

		assert_non_null(p);
		memset(p, 0xa5, meta);
	}
	rss1 = statm(1);
	print_message("granule %u meta %u: %" PRIu64 " MiB of program -> RSS +%" PRIu64
		      " KiB (ratio bound %" PRIu64 " KiB + %" PRIu64 " KiB)\n",
		      granule, meta, n / MiB, (rss1 - rss0) / KiB, want / KiB, slack / KiB);
	if (rss1 > rss0 + want + slack)
		fail_msg("granule %u meta %u: RSS grew %" PRIu64 " KiB for %" PRIu64 " KiB of "
			 "program, expected at most %" PRIu64 " KiB",
			 granule, meta, (rss1 - rss0) / KiB, n / KiB, (want + slack) / KiB);
	if (rss1 + slack < rss0 + want)
		fail_msg("granule %u meta %u: RSS grew only %" PRIu64
			 " KiB, expected about %" PRIu64 ": is RSS measured?",
			 granule, meta, (rss1 - rss0) / KiB, want / KiB);
	assert_int_equal(resident(sh), want);

	mn_shadow_clear(sh, a, n);
	rss2 = statm(1);
	if (rss2 > rss0 + slack)
		fail_msg("granule %u meta %u: after clearing, expected RSS within %" PRIu64
			 " KiB of "
			 "%" PRIu64 " KiB, got %" PRIu64 " KiB",
			 granule, meta, slack / KiB, rss0 / KiB, rss2 / KiB);
	assert_int_equal(resident(sh), 0);
	munmap(region, n);
	mn_shadow_destroy(sh);
}

static void test_cost(void **state)
{
	uint64_t rss0, rss1;
	struct mn_shadow *sh;

	/*
	 * The reservation itself costs a constant.  A first shadow and a first measurement fault in
	 * the code and libc's data they use (file pages, 64 KiB at a time) before the baseline.
	 */
	mn_shadow_destroy(make(8, 8));
	statm(1);
	rss0 = statm(1);
	sh = make(8, 8);
	rss1 = statm(1);
	if (rss1 > rss0 + COST_SLACK)
		fail_msg("creating a 4 TiB shadow: expected RSS +%" PRIu64
			 " KiB at most, got +%" PRIu64 " KiB",
			 COST_SLACK / KiB, (rss1 - rss0) / KiB);
	assert_int_equal(resident(sh), 0);
	mn_shadow_destroy(sh);

	check_cost(8, 8, 32 * MiB);
	check_cost(8, 1, 32 * MiB);
	check_cost(8, 16, 16 * MiB);
	check_cost(1, 1, 8 * MiB);
	check_cost(1, 4, 8 * MiB);
}

/* ---- Several instances, and the fallback ----------------------------------------------------- */

/* The eight instances of eight data-parallel workers, at the largest metadata (8 TiB each). */
static void test_instances(void **state)
{
	struct mn_shadow *sh[8];

	for (unsigned i = 0; i < 8; i++) {
		sh[i] = make(8, 16);
		if (mn_shadow_fold_bits(sh[i]) != 42)
			fail_msg("instance %u: expected the 42-bit fold, got %u (the address space "
				 "for "
				 "8 TiB ran out)",
				 i, mn_shadow_fold_bits(sh[i]));
		*(uint64_t *)mn_shadow_get(sh[i], (uintptr_t)&sh[i]) = i + 1;
	}
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(*(const uint64_t *)mn_shadow_peek(sh[i], (uintptr_t)&sh[i]),
				 i + 1);
		mn_shadow_destroy(sh[i]);
	}
}

/*
 * With the address space limited, the reservation shrinks its fold, down to a point.  The limit is
 * put back before anything is checked: a failed check must not leave the next tests without room.
 */
static void test_fallback(void **state)
{
	struct mn_shadow *const sentinel = (struct mn_shadow *)&sentinel, *sh = sentinel, *none;
	struct rlimit old, lim;
	int ret, ret_folded, ret_tiny;
	unsigned fold = 0;
	uint64_t reserved = 0, meta = 0;

	assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
	lim = old;

	/* Room for 512 GiB, not 1 TiB: the 4 TiB shadow falls back to a 39-bit fold. */
	lim.rlim_cur = statm(0) + 768 * GiB;
	assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
	ret = mn_shadow_create(&sh, 8, 8);
	if (!ret) {
		fold = mn_shadow_fold_bits(sh);
		reserved = mn_shadow_reserved_bytes(sh);
		*(uint64_t *)mn_shadow_get(sh, (uintptr_t)&sh) = 7;
		meta = *(const uint64_t *)mn_shadow_peek(sh, (uintptr_t)&sh);
		mn_shadow_destroy(sh);
	}
	/* No fallback when a fold is asked for. */
	none = sentinel;
	ret_folded = mn_shadow_create_folded(&none, 8, 8, 42);
	if (!ret_folded)
		mn_shadow_destroy(none);
	/* No room even for the smallest fold (64 GiB of address space at this ratio). */
	none = sentinel;
	lim.rlim_cur = statm(0) + 16 * MiB;
	assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
	ret_tiny = mn_shadow_create(&none, 8, 8);
	assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
	if (!ret_tiny)
		mn_shadow_destroy(none);

	if (ret || fold != 39 || reserved != 512 * GiB || meta != 7)
		fail_msg(
			"RLIMIT_AS with 768 GiB free: expected 0, a 39-bit fold, 512 GiB reserved, "
			"metadata 7; got %d, fold %u, %" PRIu64 " GiB, metadata %" PRIu64,
			ret, fold, reserved / GiB, meta);
	if (ret_folded != -ENOMEM)
		fail_msg("fold 42 asked for with 768 GiB free: expected -ENOMEM, got %d",
			 ret_folded);
	if (ret_tiny != -ENOMEM || none != sentinel)
		fail_msg("16 MiB free: expected -ENOMEM and *sp untouched, got %d", ret_tiny);
}

/* ---- The shadow-cost module ------------------------------------------------------------------ */

extern const struct mn_module mn_module_shadow_cost;
#define SC (&mn_module_shadow_cost)

static void *sc_new(void)
{
	void *st = calloc(1, SC->state_size);

	assert_non_null(st);
	assert_int_equal(SC->init(st, NULL), 0);
	return st;
}

static char *sc_emit(void *st)
{
	struct mn_prof *p;
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(mn_prof_open(&p, f), 0);
	assert_int_equal(SC->emit(st, p), 0);
	assert_int_equal(mn_prof_close(p), 0);
	fclose(f);
	return text;
}

static void expect_line(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("expected the section to have '%s', got:\n%s", line, text);
}

static void test_module(void **state)
{
	void *w0 = sc_new(), *w1 = sc_new();
	const uint64_t page = 0x7f0000010000;
	char *text;

	assert_int_equal(SC->shard, MN_SHARD_ADDRESS);
	assert_true(SC->shard_shift >= 3);
	/* Worker 0: page 0x..10; words +0 (three accesses, one unaligned), +8, +0x100. */
	SC->store(w0, 1, page, 0, 0);
	SC->load(w0, 2, page + 4, 0, 0);
	SC->load(w0, 3, page + 8, 0, 0);
	SC->store(w0, 4, page + 0x107, 0, 0);
	SC->load(w0, 5, page + 0, 0, 0);
	/* Worker 1: the next page; one word, twice. */
	SC->load(w1, 6, page + 4096, 0, 0);
	SC->store(w1, 6, page + 4096, 0, 0);
	/* An alias: counted as an access, not as a word. */
	SC->load(w1, 7, page + 4096 + (UINT64_C(1) << 42), 0, 0);

	SC->merge(w0, w1);
	SC->fini(w1);
	free(w1);
	text = sc_emit(w0);
	expect_line(text, "shadow: {granule_bytes: 8, meta_bytes: 8, fold_bits: 42}");
	expect_line(text, "accesses: {load: 5, store: 3}");
	expect_line(text, "words_touched: 4\n");
	expect_line(text, "shadow_bytes_written: 32\n");
	expect_line(text, "aliased: 1\n");
	free(text);
	SC->fini(w0);
	free(w0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_invalid),
		cmocka_unit_test(test_default_folds),
		cmocka_unit_test(test_mapping),
		cmocka_unit_test(test_regions_unfolded),
		cmocka_unit_test(test_regions_default),
		cmocka_unit_test(test_alias),
		cmocka_unit_test(test_alias_threads),
		cmocka_unit_test(test_clear),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_instances),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_module),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
