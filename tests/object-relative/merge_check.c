/*
 * The merge laws of the object-relative module (modules/object-relative/README.md "Merging"),
 * driven through its restore(), merge() and emit() as `mnemo merge` drives them:
 *   merge_check roundtrip P...     emit(restore(P)) is P's section byte for byte
 *   merge_check laws A B C OUT     on three runs: merge commutative and associative byte for
 *                                  byte, over states and over merged profiles read back;
 *                                  merged counts the sums (minima, maxima) of the inputs';
 *                                  writes merge(A, B, C) to OUT as a profile for merge.sh
 *   merge_check refuse P TEXT      restore(P) fails and its message contains TEXT
 * Profiles must hold object-relative alone (its section is the file's last block).  Prints
 * "FAIL: ..." for every failed check and exits 1; "ok ..." lines otherwise.
 */
#define _GNU_SOURCE   /* open_memstream */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "profile.h"
#include "modtest.h"

extern const struct mn_module mn_module_object_relative;
static const struct mn_module *const M = &mn_module_object_relative;

static int failures;

#define CHECK(cond, ...)                                                                          \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "FAIL: " __VA_ARGS__);                                    \
			fputc('\n', stderr);                                                      \
			failures++;                                                               \
		}                                                                                 \
	} while (0)

static void die(const char *what)
{
	fprintf(stderr, "FAIL: %s\n", what);
	exit(1);
}

/* Where the line "modules:" starts: what comes before it is the run's header. */
static const char *modules_block(const char *text)
{
	const char *m = strstr(text, "\nmodules:\n");

	if (!m)
		die("a profile without a 'modules:' line");
	return m + 1;
}

static void *restore_path(const char *path)
{
	return mt_restored_path(M, NULL, path);
}

/* emit(st) as section text; st is freed. */
static char *emit(void *st)
{
	char *text = mt_emit_text(M, st, NULL);

	mt_state_free(M, st);
	return text;
}

/* merge(a, b): b folded into a, b freed; a returned. */
static void *merge(void *a, void *b)
{
	return mt_fold(M, a, b);
}

/* A profile file: the header of `like` (everything before `modules:`) and the section. */
static void write_profile(const char *path, const char *like, const char *section)
{
	char *head = strndup(like, (size_t)(modules_block(like) - like));

	if (!head)
		die("no memory");
	mt_write_profile(path, head, M->name, section);
	free(head);
}

static int roundtrip(int n, char **paths)
{
	for (int i = 0; i < n; i++) {
		char *text = mt_section_text(paths[i], M->name);
		char *got = emit(restore_path(paths[i]));

		CHECK(!strcmp(got, text), "%s: emit(restore(p)) differs from p:\n"
		      "%s\n---- expected ----\n%s", paths[i], got, text);
		if (!strcmp(got, text))
			printf("ok emit(restore(p)) == p: %s (%zu bytes)\n", paths[i], strlen(got));
		free(text);
		free(got);
	}
	return 0;
}

/* ---- Sums: the merged section against its inputs', read with the profile reader ------------ */

static uint64_t u64(const struct mn_pnode *map, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_u64(mn_pnode_get(map, key), &v))
		die(key);
	return v;
}

/* The row of seq whose `key` is id, or NULL. */
static const struct mn_pnode *row(const struct mn_pnode *seq, const char *key, uint64_t id)
{
	for (size_t i = 0; i < mn_pnode_len(seq); i++)
		if (u64(mn_pnode_at(seq, i), key) == id)
			return mn_pnode_at(seq, i);
	return NULL;
}

static void check_sums(const char *merged, char **in, int n)
{
	struct mn_profile *m = mt_open(merged, NULL), *p[3];
	const struct mn_pnode *ms = mn_profile_module(m, M->name), *s[3];
	const struct mn_pnode *mg = mn_pnode_get(ms, "groups");
	const struct mn_pnode *mi = mn_pnode_get(ms, "instructions");
	static const char *const counts[] = { "accesses", "unattributed" };
	uint64_t sum = 0, rows = 0, lmads = 0;
	size_t checked = 0;

	for (int k = 0; k < n; k++) {
		p[k] = mt_open(in[k], NULL);
		s[k] = mn_profile_module(p[k], M->name);
		sum += u64(s[k], "events");
	}
	CHECK(u64(ms, "events") == sum, "events: %" PRIu64 ", expected the sum %" PRIu64,
	      u64(ms, "events"), sum);
	CHECK(mn_pnode_len(mn_pnode_get(ms, "runs")) == (size_t)n, "runs: expected %d", n);
	sum = 0;
	for (int k = 0; k < n; k++)
		sum += u64(mn_pnode_get(s[k], "sample_quality"), "accesses");
	CHECK(u64(mn_pnode_get(ms, "sample_quality"), "accesses") == sum,
	      "sample_quality.accesses: expected the sum %" PRIu64, sum);
	/* Every group: objects and bytes add, lifetime buckets add, min and max combine. */
	for (size_t i = 0; i < mn_pnode_len(mg); i++) {
		const struct mn_pnode *g = mn_pnode_at(mg, i);
		const struct mn_pnode *h = mn_pnode_get(g, "lifetime_log2");
		uint64_t id = u64(g, "group"), obj = 0, bytes = 0, lo = UINT64_MAX, hi = 0;
		uint64_t bucket[65] = { 0 };

		for (int k = 0; k < n; k++) {
			const struct mn_pnode *r = row(mn_pnode_get(s[k], "groups"), "group", id);
			const struct mn_pnode *rh = mn_pnode_get(r, "lifetime_log2");

			if (!r)
				continue;
			obj += u64(r, "objects");
			bytes += u64(r, "bytes");
			if (!rh)
				continue;
			lo = u64(r, "lifetime_min") < lo ? u64(r, "lifetime_min") : lo;
			hi = u64(r, "lifetime_max") > hi ? u64(r, "lifetime_max") : hi;
			for (size_t b = 0; b < mn_pnode_len(rh); b++) {
				uint64_t v;

				mn_pnode_u64(mn_pnode_at(rh, b), &v);
				bucket[b] += v;
			}
		}
		CHECK(u64(g, "objects") == obj && u64(g, "bytes") == bytes,
		      "group %" PRIu64 ": objects and bytes not the sums", id);
		if (!h)
			continue;
		CHECK(u64(g, "lifetime_min") == lo && u64(g, "lifetime_max") == hi,
		      "group %" PRIu64 ": lifetime_min/max not the min/max of the runs'", id);
		for (size_t b = 0; b < mn_pnode_len(h); b++) {
			uint64_t v;

			mn_pnode_u64(mn_pnode_at(h, b), &v);
			CHECK(v == bucket[b], "group %" PRIu64 ": lifetime_log2[%zu] %" PRIu64
			      ", expected the sum %" PRIu64, id, b, v, bucket[b]);
		}
		checked++;
	}
	/* Every instruction: its counts add; its stream rows and LMADs are the inputs' together. */
	for (size_t i = 0; i < mn_pnode_len(mi); i++) {
		const struct mn_pnode *x = mn_pnode_at(mi, i), *st = mn_pnode_get(x, "streams");
		uint64_t id = u64(x, "site");

		for (int c = 0; c < 2; c++) {
			sum = 0;
			for (int k = 0; k < n; k++) {
				const struct mn_pnode *r = row(mn_pnode_get(s[k], "instructions"),
							       "site", id);

				sum += r ? u64(r, counts[c]) : 0;
			}
			CHECK(u64(x, counts[c]) == sum, "instruction %" PRIu64 ": %s %" PRIu64
			      ", expected the sum %" PRIu64, id, counts[c], u64(x, counts[c]), sum);
		}
		rows += mn_pnode_len(st);
		for (size_t j = 0; j < mn_pnode_len(st); j++)
			lmads += mn_pnode_len(mn_pnode_get(mn_pnode_at(st, j), "lmads"));
	}
	for (int k = 0; k < n; k++) {
		const struct mn_pnode *ki = mn_pnode_get(s[k], "instructions");

		for (size_t i = 0; i < mn_pnode_len(ki); i++) {
			const struct mn_pnode *st = mn_pnode_get(mn_pnode_at(ki, i), "streams");

			rows -= mn_pnode_len(st);
			for (size_t j = 0; j < mn_pnode_len(st); j++)
				lmads -= mn_pnode_len(mn_pnode_get(mn_pnode_at(st, j), "lmads"));
		}
	}
	CHECK(!rows && !lmads, "the merged stream rows and LMADs are not the inputs' together");
	CHECK(checked > 0 && mn_pnode_len(mi) > 0, "nothing to compare in %s", merged);
	printf("ok merged counts are the sums: %zu groups with lifetimes, %zu instructions\n",
	       checked, mn_pnode_len(mi));
	for (int k = 0; k < n; k++)
		mn_profile_close(p[k]);
	mn_profile_close(m);
}

static int laws(char **in, const char *out)
{
	char *text = mt_read_file(in[0]), *ab, *ba, *ab_c, *a_bc, *tmp, *x;
	char path[4096];
	int same;

	ab = emit(merge(restore_path(in[0]), restore_path(in[1])));
	ba = emit(merge(restore_path(in[1]), restore_path(in[0])));
	CHECK(!strcmp(ab, ba), "merge(a, b) != merge(b, a):\n%s\n---- merge(b, a) ----\n%s", ab,
	      ba);
	if (!strcmp(ab, ba))
		printf("ok merge(a, b) == merge(b, a)\n");

	/* Over states, in both groupings. */
	{
		void *l = merge(merge(restore_path(in[0]), restore_path(in[1])),
				restore_path(in[2]));
		void *r = merge(restore_path(in[0]), merge(restore_path(in[1]),
							   restore_path(in[2])));

		ab_c = emit(l);
		a_bc = emit(r);
	}
	same = !strcmp(ab_c, a_bc);
	CHECK(same, "merge(merge(a, b), c) != merge(a, merge(b, c)) (states)");
	if (same)
		printf("ok merge(merge(a, b), c) == merge(a, merge(b, c)), states\n");
	/* And through merged profiles written and read back, as `mnemo merge` chains them. */
	snprintf(path, sizeof(path), "%s.ab", out);
	write_profile(path, text, ab);
	tmp = emit(restore_path(path));
	CHECK(!strcmp(tmp, ab), "emit(restore(merge(a, b))) != merge(a, b)");
	if (!strcmp(tmp, ab))
		printf("ok emit(restore(p)) == p for a merged p\n");
	free(tmp);
	x = emit(merge(restore_path(path), restore_path(in[2])));
	CHECK(!strcmp(x, ab_c), "merge(read(merge(a, b)), c) != merge(merge(a, b), c)");
	free(x);
	snprintf(path, sizeof(path), "%s.bc", out);
	tmp = emit(merge(restore_path(in[1]), restore_path(in[2])));
	write_profile(path, text, tmp);
	free(tmp);
	x = emit(merge(restore_path(in[0]), restore_path(path)));
	CHECK(!strcmp(x, ab_c), "merge(a, read(merge(b, c))) != merge(merge(a, b), c)");
	if (!strcmp(x, ab_c))
		printf("ok merge(a, read(merge(b, c))) == merge(read(merge(a, b)), c)\n");
	free(x);
	/* Every order of the three folds to the same bytes. */
	{
		static const int perm[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
						{ 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };

		for (int k = 0; k < 6; k++) {
			x = emit(merge(merge(restore_path(in[perm[k][0]]),
					     restore_path(in[perm[k][1]])),
				       restore_path(in[perm[k][2]])));
			CHECK(!strcmp(x, ab_c), "the fold in order %d %d %d differs", perm[k][0],
			      perm[k][1], perm[k][2]);
			free(x);
		}
	}
	CHECK(strcmp(ab, ab_c), "merge(a, b) == merge(a, b, c): c added nothing");
	write_profile(out, text, ab_c);
	check_sums(out, in, 3);
	free(text);
	free(ab);
	free(ba);
	free(ab_c);
	free(a_bc);
	return 0;
}

static int refuse(const char *path, const char *want)
{
	char err[1024];
	int e = mt_try_restore_path(M, NULL, path, err, sizeof(err));

	CHECK(e == -EINVAL, "%s: restore returned %d, expected -EINVAL", path, e);
	CHECK(strstr(err, want), "%s: message '%s' lacks '%s'", path, err, want);
	if (e == -EINVAL && strstr(err, want))
		printf("ok refused: %s\n", err);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "roundtrip"))
		roundtrip(argc - 2, argv + 2);
	else if (argc == 6 && !strcmp(argv[1], "laws"))
		laws(argv + 2, argv[5]);
	else if (argc == 4 && !strcmp(argv[1], "refuse"))
		refuse(argv[2], argv[3]);
	else
		die("usage: merge_check roundtrip P... | laws A B C OUT | refuse P TEXT");
	return failures ? 1 : 0;
}
