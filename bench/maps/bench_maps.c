/*
 * bench-maps: the reduction maps (backend/map.h) counting the memory dependences of a real run,
 * against GLib's GHashTable doing the same counting (bench/maps/README.md).  The counterpart of
 * PROMPT's Table 12.
 *
 *	bench-maps RECORDING [-n INSERTS] [-r REPEATS] [-b BUFFER] [-v]
 *
 * The keys come from a recording made by mnemo-record (bench/queue/recording.h, version 2) of a
 * bench program built for the `deps` spec (modules/deps: loads and stores, site and address).
 * Replaying its loads and stores against a last-writer table, one per 8-byte word, gives each
 * load that reads a word some store wrote a read-after-write dependence (store site, load site),
 * packed as one key: the stream a dependence profiler inserts into its count map.  The first
 * INSERTS of them (default 10 million; the stream is cycled if the recording has fewer, which the
 * header then says) are inserted by every row:
 *
 *   GHashTable          g_hash_table_lookup() of the key; a hit increments the count in place, a
 *                       miss g_hash_table_add()s a new {key, count} (key and value the same
 *                       pointer, GLib's set mode); g_int64_hash / g_int64_equal
 *   Mnemo, unbuffered   mn_map_count_insert() into a map with 0 threads and no buffer: each
 *                       insert straight into its table (buffering off)
 *   Mnemo, 1 thread     the same with 0 pool threads and a 4096-entry buffer, reduced by the
 *                       inserting thread itself when full: one thread does all the work, as
 *                       GHashTable's row does
 *   Mnemo, N threads    the inserting thread and N - 1 pool threads reducing its full buffers
 *
 * Threads are counted as the threads that work on the map, the inserting one included, so that
 * "1 thread" uses the CPU GHashTable's row uses: a map with one pool thread already keeps two
 * cores busy (one inserting, one reducing).
 *   limit               the buffered insert's own stores, into a ring of 4 buffers as the map's,
 *                       nothing reducing them: what mn_map_count_insert() costs when reduction is
 *                       free (PROMPT's "baseline")
 *
 * Time is wall-clock from the first insert until the map is complete (mn_map_flush() returned);
 * setup and teardown are outside it.  Each row runs REPEATS times (default 7), round-robin with
 * the others, and keeps its fastest run.  After every run each map's contents are checked against
 * a reference computed by sorting the keys: a checksum over the (key, count) pairs in increasing
 * key order, the number of keys and the total count.  The exit status is 1 if any run disagrees
 * (or lost an insert), 2 on a usage or input error, and 0 otherwise, whether or not the targets
 * were met: this is a measurement.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glib.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "map.h"
#include "queue.h"
#include "recording.h"

#define PROG "bench-maps"

/* Event codes are fixed by events.yaml ("never reuse or renumber one"); arguments in its order. */
#define EV_LOAD   1
#define EV_STORE  2
#define ARG_SITE  0
#define ARG_ADDR  1

/* The targets of the issue. */
#define TARGET_VS_GLIB 3.0   /* Mnemo, 1 thread: at least 3 times GHashTable's inserts/s */

/*
 * Entries a buffer, 4 times MN_MAP_BUFFER_DEFAULT: on a 2-core machine the owner and two pool
 * threads share the cores, and only buffers this big make the pool's sleeps and wake-ups between
 * jobs rare enough for 2 pool threads to beat 1 (README.md).  -b changes it.
 */
#define BUFFER 262144

static void die(const char *what, const char *why)
{
	fprintf(stderr, PROG ": %s: %s\n", what, why);
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- The keys: dependences of the recorded run ----------------------------------------------- */

/* The last store site of each 8-byte word: open addressing on word + 1 (0 is empty). */
struct writers {
	uint64_t *word;
	uint32_t *site;
	size_t mask, count;
};

static size_t writers_slot(const struct writers *w, uint64_t word)
{
	size_t i = (size_t)((word * UINT64_C(0x9e3779b97f4a7c15)) >> 20) & w->mask;

	while (w->word[i] && w->word[i] != word)
		i = (i + 1) & w->mask;
	return i;
}

static void writers_grow(struct writers *w)
{
	struct writers n = { .mask = w->mask ? w->mask * 2 + 1 : 0xffff, .count = w->count };

	n.word = calloc(n.mask + 1, sizeof(*n.word));
	n.site = calloc(n.mask + 1, sizeof(*n.site));
	if (!n.word || !n.site)
		die("last-writer table", strerror(ENOMEM));
	for (size_t i = 0; w->mask && i <= w->mask; i++)
		if (w->word[i]) {
			size_t j = writers_slot(&n, w->word[i]);

			n.word[j] = w->word[i];
			n.site[j] = w->site[i];
		}
	free(w->word);
	free(w->site);
	*w = n;
}

struct stream {
	uint64_t *keys;          /* n keys */
	size_t n;
	uint64_t events, loads, stores, deps;  /* of one pass over the recording */
	size_t distinct;
};

/*
 * Reads the recording and fills st with the first n dependence keys of its loads and stores,
 * cycling through the recording (with the last-writer table carried over) if one pass is short.
 */
static void make_keys(struct stream *st, const char *path, size_t n)
{
	struct mn_rec_header h;
	struct mn_wire wire;
	struct writers wr = { 0 };
	uint64_t *words;
	size_t bytes, got = 0, k = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h))
		die(path, fd < 0 ? strerror(errno) : "shorter than a recording header");
	if (h.magic != MN_REC_MAGIC || h.version != MN_REC_VERSION || h.header != sizeof(h))
		die(path, "not a recording of version 2 (bench/queue/recording.h)");
	memcpy(wire.nwords, h.nwords, sizeof(wire.nwords));
	memcpy(wire.arg, h.arg, sizeof(wire.arg));
	if (!wire.arg[EV_LOAD][ARG_SITE].bits || !wire.arg[EV_LOAD][ARG_ADDR].bits ||
	    !wire.arg[EV_STORE][ARG_SITE].bits || !wire.arg[EV_STORE][ARG_ADDR].bits)
		die(path, "its loads and stores carry no site and address (record with the deps "
		    "spec, bench/maps/modules/deps)");
	bytes = (size_t)h.words * 8;
	words = malloc(bytes ? bytes : 1);
	if (!words)
		die(path, strerror(ENOMEM));
	while (got < bytes) {
		ssize_t r = read(fd, (char *)words + got, bytes - got);

		if (r <= 0)
			die(path, r < 0 ? strerror(errno) : "shorter than its header says");
		got += (size_t)r;
	}
	close(fd);

	st->keys = malloc(n * sizeof(*st->keys));
	if (!st->keys)
		die("keys", strerror(ENOMEM));
	st->n = n;
	writers_grow(&wr);
	for (unsigned pass = 0; k < n; pass++) {
		size_t before = k;

		/* The first pass reads it all, for the header's counts; the others stop at n. */
		for (uint64_t i = 0; i < h.words && (k < n || !pass);) {
			const uint64_t *rec = words + i;
			unsigned code = rec[0] & 0xff, len;
			uint64_t site, word;
			size_t j;

			len = code < MN_WIRE_MAX_EVENTS ? wire.nwords[code] : 0;
			if (!len || len > h.words - i)
				die(path, "corrupt: a record with no length or past the end");
			i += len;
			if (!pass)
				st->events++;
			if (code != EV_LOAD && code != EV_STORE)
				continue;
			site = mn_wire_get(&wire, rec, code, ARG_SITE);
			word = (mn_wire_get(&wire, rec, code, ARG_ADDR) >> 3) + 1;
			j = writers_slot(&wr, word);
			if (code == EV_STORE) {
				if (!pass)
					st->stores++;
				if (!wr.word[j]) {
					wr.word[j] = word;
					if (++wr.count > wr.mask / 2) {
						wr.site[j] = (uint32_t)site;
						writers_grow(&wr);
						continue;
					}
				}
				wr.site[j] = (uint32_t)site;
				continue;
			}
			if (!pass)
				st->loads++;
			if (!wr.word[j])
				continue;    /* nothing stored there yet: no dependence */
			if (!pass)
				st->deps++;
			if (k < n)
				st->keys[k++] = mn_map_key(wr.site[j], (uint32_t)site);
		}
		if (k == before)
			die(path, "holds no load of a word a store wrote: no dependences to count");
	}
	free(wr.word);
	free(wr.site);
	free(words);
}

/* ---- The reference and the checksum ---------------------------------------------------------- */

struct sum {
	uint64_t hash;           /* over (key, count) in increasing key order */
	uint64_t keys, total;
};

static void sum_add(struct sum *s, uint64_t key, uint64_t count)
{
	/* FNV-1a over the two words: order-sensitive, so it checks the iteration order too. */
	s->hash = (s->hash ^ key) * UINT64_C(0x100000001b3);
	s->hash = (s->hash ^ count) * UINT64_C(0x100000001b3);
	s->keys++;
	s->total += count;
}

static bool sum_eq(const struct sum *a, const struct sum *b)
{
	return a->hash == b->hash && a->keys == b->keys && a->total == b->total;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static struct sum reference(const struct stream *st)
{
	uint64_t *k = malloc(st->n * sizeof(*k));
	struct sum s = { .hash = UINT64_C(0xcbf29ce484222325) };

	if (!k)
		die("reference", strerror(ENOMEM));
	memcpy(k, st->keys, st->n * sizeof(*k));
	qsort(k, st->n, sizeof(*k), cmp_u64);
	for (size_t i = 0, j; i < st->n; i = j) {
		for (j = i; j < st->n && k[j] == k[i]; j++)
			;
		sum_add(&s, k[i], j - i);
	}
	free(k);
	return s;
}

static int sum_one(void *arg, uint64_t key, const struct mn_map_value *v)
{
	sum_add(arg, key, v->value);
	return 0;
}

/* ---- The rows -------------------------------------------------------------------------------- */

enum row_kind { ROW_GLIB, ROW_MNEMO, ROW_ROWS, ROW_LIMIT };

struct row {
	const char *name;
	enum row_kind kind;
	unsigned threads;        /* ROW_MNEMO: pool threads */
	size_t buffer;           /* ROW_MNEMO: entries a buffer, 0 for -b's; ROW_ROWS: memo bits */
	double best;             /* fastest run, seconds */
	double *runs;            /* every run, seconds (for -v) */
	struct sum got;          /* of the last run */
	bool bad;                /* some run disagreed with the reference or lost inserts */
};

struct glib_entry {
	gint64 key;              /* first: g_int64_hash and g_int64_equal read the key through it */
	uint64_t count;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct glib_entry *x = *(struct glib_entry *const *)a;
	const struct glib_entry *y = *(struct glib_entry *const *)b;

	return ((uint64_t)x->key > (uint64_t)y->key) - ((uint64_t)x->key < (uint64_t)y->key);
}

static double run_glib(const struct stream *st, struct sum *s)
{
	GHashTable *t = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	struct glib_entry **all;
	GHashTableIter it;
	gpointer key;
	double t0, t1;
	size_t n = 0;

	t0 = now();
	for (size_t i = 0; i < st->n; i++) {
		gint64 k = (gint64)st->keys[i];
		struct glib_entry *e = g_hash_table_lookup(t, &k);

		if (e) {
			e->count++;
		} else {
			e = g_new(struct glib_entry, 1);
			e->key = k;
			e->count = 1;
			g_hash_table_add(t, e);
		}
	}
	t1 = now();

	all = malloc(g_hash_table_size(t) * sizeof(*all) + 1);
	if (!all)
		die("GHashTable row", strerror(ENOMEM));
	g_hash_table_iter_init(&it, t);
	while (g_hash_table_iter_next(&it, &key, NULL))
		all[n++] = key;
	qsort(all, n, sizeof(*all), cmp_entry);
	*s = (struct sum){ .hash = UINT64_C(0xcbf29ce484222325) };
	for (size_t i = 0; i < n; i++)
		sum_add(s, (uint64_t)all[i]->key, all[i]->count);
	free(all);
	g_hash_table_destroy(t);
	return t1 - t0;
}

static double run_mnemo(const struct stream *st, unsigned threads, size_t buffer, struct sum *s,
			bool *lost)
{
	struct mn_map *m;
	double t0, t1;
	int err = mn_map_create(&m, MN_MAP_COUNT, 0, threads, buffer);

	if (err)
		die("mn_map_create", strerror(-err));
	if (mn_map_threads(m) != threads)
		die("mn_map_create", "got fewer threads than asked for");
	t0 = now();
	for (size_t i = 0; i < st->n; i++)
		mn_map_count_insert(m, st->keys[i]);
	mn_map_flush(m);
	t1 = now();
	*s = (struct sum){ .hash = UINT64_C(0xcbf29ce484222325) };
	err = mn_map_foreach(m, sum_one, s);
	if (err)
		die("mn_map_foreach", strerror(-err));
	*lost = mn_map_lost(m) != 0;
	mn_map_destroy(m);
	return t1 - t0;
}

static int by_key0(const void *a, const void *b, void *arg)
{
	uint64_t x = mn_row_key(*(struct mn_row *const *)a)[0];
	uint64_t y = mn_row_key(*(struct mn_row *const *)b)[0];

	(void)arg;
	return (x > y) - (x < y);
}

/*
 * The same counts in a row map (map.h, struct mn_rows: the dependence module's), keys of one word
 * and three zeros, each insert a lookup and an increment in place; with memo_bits, through a memo
 * of 2^memo_bits recent rows first, as the module counts its rows.
 */
static double run_rows(const struct stream *st, unsigned memo_bits, struct sum *s)
{
	struct mn_rows m = { 0 };
	struct mn_row **v;
	double t0, t1;

	if (memo_bits && mn_rows_memo_init(&m, memo_bits))
		die("mn_rows_memo_init", strerror(ENOMEM));
	t0 = now();
	for (size_t i = 0; i < st->n; i++) {
		uint64_t key[MN_ROWS_KEY_WORDS] = { st->keys[i] };
		struct mn_rows_memo *slot = NULL;
		struct mn_row *row;

		if (memo_bits) {
			uint32_t h = (uint32_t)(key[0] * UINT64_C(0x9e3779b97f4a7c15) >> 32);

			slot = mn_rows_memo_slot(&m, h);
			if (mn_rows_memo_hit(&m, slot, key[0], 0, 0)) {
				mn_rows_memo_count(slot, false, 0);
				continue;
			}
		}
		if (!(row = mn_rows_get(&m, key)))
			die("mn_rows_get", strerror(ENOMEM));
		row->count++;
		if (slot)
			mn_rows_memo_set(&m, slot, key[0], 0, 0, row);
	}
	mn_rows_memo_flush(&m);
	t1 = now();
	if (!(v = mn_rows_sorted(&m, by_key0, NULL)))
		die("mn_rows_sorted", strerror(ENOMEM));
	*s = (struct sum){ .hash = UINT64_C(0xcbf29ce484222325) };
	for (size_t i = 0; i < m.n; i++)
		sum_add(s, mn_row_key(v[i])[0], v[i]->count);
	free(v);
	mn_rows_free(&m);
	return t1 - t0;
}

/* The buffered insert's stores alone: a ring of 4 buffers of `buffer` keys, as the map's. */
static double run_limit(const struct stream *st, size_t buffer)
{
	uint64_t *b = aligned_alloc(64, buffer * 4 * sizeof(*b)), *cur;
	unsigned which = 0;
	uint32_t fill = 0;
	double t0, t1;

	if (!b)
		die("limit row", strerror(ENOMEM));
	memset(b, 0, buffer * 4 * sizeof(*b));   /* faulted in, as the map's are at creation */
	cur = b;
	t0 = now();
	for (size_t i = 0; i < st->n; i++) {
		cur[fill++] = st->keys[i];
		if (__builtin_expect(fill == buffer, 0)) {
			/* The compiler must keep the stores: the buffer is "read" here. */
			__asm__ volatile("" : : "r"(cur) : "memory");
			which = (which + 1) % 4;
			cur = b + which * buffer;
			fill = 0;
		}
	}
	__asm__ volatile("" : : "r"(cur) : "memory");
	t1 = now();
	free(b);
	return t1 - t0;
}

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " RECORDING [-n INSERTS] [-r REPEATS] [-b BUFFER] [-v]\n"
		"  (a recording of the deps spec: bench/maps/run.sh makes one; see "
		"bench/maps/README.md)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct row rows[] = {
		{ .name = "GHashTable", .kind = ROW_GLIB },
		{ .name = "Mnemo, unbuffered", .kind = ROW_MNEMO, .threads = 0, .buffer = 1 },
		{ .name = "Mnemo, 1 thread", .kind = ROW_MNEMO, .threads = 0, .buffer = 4096 },
		{ .name = "Mnemo, 2 threads", .kind = ROW_MNEMO, .threads = 1 },
		{ .name = "Mnemo, 3 threads", .kind = ROW_MNEMO, .threads = 2 },
		{ .name = "Mnemo, row map", .kind = ROW_ROWS, .buffer = 0 },
		{ .name = "row map + memo", .kind = ROW_ROWS, .buffer = 14 },
		{ .name = "limit: buffer stores", .kind = ROW_LIMIT },
	};
	enum { GLIB, UNBUF, T1, T2, T3, ROWS, ROWS_MEMO, LIMIT, NROWS };
	size_t n = 10000000, buffer = BUFFER;
	unsigned repeats = 7;
	bool verbose = false, bad = false;
	struct stream st = { 0 };
	struct sum ref;
	double r1, r2;
	int c;

	_Static_assert(sizeof(rows) / sizeof(rows[0]) == NROWS, "one row each");
	while ((c = getopt(argc, argv, "n:r:b:vh")) != -1) {
		char *end;

		switch (c) {
		case 'n':
			n = strtoull(optarg, &end, 10);
			if (*end || !n)
				usage();
			break;
		case 'r':
			repeats = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !repeats)
				usage();
			break;
		case 'b':
			buffer = strtoull(optarg, &end, 10);
			if (*end || !buffer || buffer > UINT32_MAX)
				usage();
			break;
		case 'v':
			verbose = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();

	for (unsigned i = 0; i < NROWS; i++) {
		rows[i].runs = calloc(repeats, sizeof(double));
		if (!rows[i].runs)
			die("runs", strerror(ENOMEM));
	}
	make_keys(&st, argv[optind], n);
	ref = reference(&st);
	printf("%zu inserts into a count map: the read-after-write dependences (store site, load "
	       "site) of %s\n", st.n, argv[optind]);
	printf("  one pass of the recording: %" PRIu64 " events, %" PRIu64 " loads, %" PRIu64
	       " stores, %" PRIu64 " dependences%s; %" PRIu64 " distinct keys\n",
	       st.events, st.loads, st.stores, st.deps,
	       st.deps < st.n ? " (cycled to make up the inserts)" : "", ref.keys);
	printf("  buffers of %zu entries (the library's default: %d); best of %u runs a row, "
	       "round-robin; %ld CPUs online; load average at start ", buffer,
	       MN_MAP_BUFFER_DEFAULT, repeats, sysconf(_SC_NPROCESSORS_ONLN));
	{
		FILE *f = fopen("/proc/loadavg", "r");
		double l = -1;

		if (f && fscanf(f, "%lf", &l) != 1)
			l = -1;
		if (f)
			fclose(f);
		printf("%.2f\n\n", l);
	}
	fflush(stdout);

	for (unsigned r = 0; r < repeats; r++) {
		for (unsigned i = 0; i < NROWS; i++) {
			struct row *w = &rows[i];
			bool lost = false;
			double t = 0;

			switch (w->kind) {
			case ROW_GLIB:
				t = run_glib(&st, &w->got);
				break;
			case ROW_MNEMO:
				t = run_mnemo(&st, w->threads, w->buffer ? w->buffer : buffer,
					      &w->got, &lost);
				break;
			case ROW_ROWS:
				t = run_rows(&st, (unsigned)w->buffer, &w->got);
				break;
			case ROW_LIMIT:
				t = run_limit(&st, buffer);
				w->got = ref;
				break;
			}
			if (!sum_eq(&w->got, &ref) || lost) {
				w->bad = true;
				if (verbose)
					fprintf(stderr, PROG ": %s, run %u: %" PRIu64 " keys, "
						"total %" PRIu64 ", checksum %016" PRIx64 "%s\n",
						w->name, r, w->got.keys, w->got.total,
						w->got.hash, lost ? ", lost inserts" : "");
			}
			if (!r || t < w->best)
				w->best = t;
			w->runs[r] = t;
		}
	}

	printf("%-22s %9s %10s %12s %14s  %s\n", "row", "ms", "ns/insert", "M inserts/s",
	       "vs GHashTable", "contents");
	for (unsigned i = 0; i < NROWS; i++) {
		const struct row *w = &rows[i];

		printf("%-22s %9.1f %10.2f %12.1f %13.2fx  %s\n", w->name, w->best * 1e3,
		       w->best * 1e9 / (double)st.n, (double)st.n / w->best / 1e6,
		       rows[GLIB].best / w->best,
		       w->kind == ROW_LIMIT ? "-" : w->bad ? "DIFFER" : "same");
		bad |= w->bad;
	}
	if (verbose) {
		printf("\nevery run, ms, in order:\n");
		for (unsigned i = 0; i < NROWS; i++) {
			printf("  %-22s", rows[i].name);
			for (unsigned r = 0; r < repeats; r++)
				printf(" %6.1f", rows[i].runs[r] * 1e3);
			printf("\n");
		}
	}
	r1 = rows[GLIB].best / rows[T1].best;
	r2 = rows[T1].best / rows[T2].best;
	printf("\ncontents: %s (%" PRIu64 " keys, %" PRIu64 " inserts, checksum %016" PRIx64
	       " over (key, count) by increasing key)\n",
	       bad ? "SOME ROWS DIFFER from the reference" : "every row agrees with the reference",
	       ref.keys, ref.total, ref.hash);
	printf("target: Mnemo, 1 thread, at least %.0fx GHashTable's inserts/s: %.2fx  %s\n",
	       TARGET_VS_GLIB, r1, r1 >= TARGET_VS_GLIB ? "PASS" : "FAIL");
	printf("target: Mnemo, 2 threads, faster than 1 thread:           %.2fx  %s\n", r2,
	       r2 > 1.0 ? "PASS" : "FAIL");
	printf("anchor: PROMPT's htmap_count, 1 thread: 126 ms for 10 million inserts (12.6 "
	       "ns/insert)\n");
	free(st.keys);
	return bad ? 1 : 0;
}
