/*
 * libFuzzer target for the modules' restore() (backend/module.h), the parser of untrusted profile
 * text every module brings to `mnemo merge` (tools/merge.c).  README.md here.
 *
 * Each input goes through a memfd, reopened by its /proc/self/fd path, as in fuzz_profile.c.  An
 * input the reader refuses is left alone (fuzz_profile fuzzes the reader).  For one it opens,
 * every built-in module (backend/registry.h) whose section is there and which has restore() gets
 * a state, zeroed then init() on the run mn_run_from_sites() makes from the profile's `sites:`, as
 * mnemo merge does, and:
 *
 * - restore() returns 0, -ENOMEM, or -EINVAL with a message that starts with the profile's path;
 * - a section it accepts is accepted again; two states restored from it merge() and emit()
 *   without error, and the profile that result makes is read back and restored;
 * - emit∘restore is idempotent: the section emit() writes for the state restored alone, in a
 *   complete profile with the same `sites:` rows, restores to a state whose emit() writes the
 *   same bytes.
 *
 * Everything is finalized (fini(), also after a refused restore()) and freed: LeakSanitizer is on.
 * A broken contract aborts, naming the module and what differs, and libFuzzer keeps the input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "module.h"
#include "profile.h"
#include "registry.h"

/* A table larger than this costs the fuzzer time without reaching new code. */
#define SITE_COUNT_CAP 65536u

/* Reports the broken contract and aborts, so libFuzzer keeps the input. */
#define check(cond, ...)                                                                \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "fuzz_restore: %s:%d: contract broken: %s\n",  \
				__FILE__, __LINE__, #cond);                             \
			fprintf(stderr, "fuzz_restore: " __VA_ARGS__);                  \
			fputc('\n', stderr);                                            \
			abort();                                                        \
		}                                                                       \
	} while (0)

/* The input's memfd and the one profiles written here are read back from. */
static int in_fd = -1, out_fd = -1;
static char in_path[64], out_path[64];

static void fill(int fd, const void *data, size_t size)
{
	check(ftruncate(fd, 0) == 0, "ftruncate");
	for (size_t off = 0; off < size;) {
		ssize_t n = pwrite(fd, (const char *)data + off, size - off, (off_t)off);

		check(n > 0, "pwrite");
		off += (size_t)n;
	}
}

static int open_fd(const char *name, char *path, size_t len)
{
	int fd = memfd_create(name, 0);

	if (fd < 0) {
		perror("fuzz_restore: memfd_create");
		exit(1);
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* ---- States ---------------------------------------------------------------------------------- */

/* A state fresh from init(), or NULL when init() ran out of memory. */
static void *fresh(const struct mn_module *mod, const struct mn_run *run)
{
	void *st = calloc(1, mod->state_size ? mod->state_size : 1);
	int ret;

	check(st != NULL, "out of memory");
	ret = mod->init ? mod->init(st, run) : 0;
	if (ret == -ENOMEM) {
		free(st);
		return NULL;
	}
	check(ret == 0, "module '%s': init() returned %d", mod->name, ret);
	return st;
}

static void drop(const struct mn_module *mod, void *st)
{
	if (!st)
		return;
	if (mod->fini)
		mod->fini(st);
	free(st);
}

/*
 * restore() of sec of prof into a fresh state: returns restore()'s answer, checked against the
 * contract, and the state in *stp when it is 0 (else the state is finalized and freed).
 */
static int restore(const struct mn_module *mod, const struct mn_run *run,
		   const struct mn_profile *prof, const struct mn_pnode *sec, void **stp)
{
	const char *path = mn_profile_path(prof);
	size_t plen = strlen(path);
	void *st = fresh(mod, run);
	char err[1024];
	int ret;

	*stp = NULL;
	if (!st)
		return -ENOMEM;
	memset(err, 'x', sizeof(err));
	ret = mod->restore(st, prof, sec, err, sizeof(err));
	if (ret == 0) {
		*stp = st;
		return 0;
	}
	check(ret == -EINVAL || ret == -ENOMEM, "module '%s': restore() returned %d", mod->name,
	      ret);
	if (ret == -EINVAL) {
		check(memchr(err, '\0', sizeof(err)) != NULL,
		      "module '%s': restore() refused without a message", mod->name);
		check(strncmp(err, path, plen) == 0 && err[plen] == ':' && strlen(err) > plen + 2,
		      "module '%s': restore()'s message does not start with '%s:': %s", mod->name,
		      path, err);
	}
	drop(mod, st);
	return ret;
}

/* ---- Profiles written here ------------------------------------------------------------------- */

/* sites: every row of prof, as mnemo merge writes them (mn_prof_site_row()). */
static void write_sites(struct mn_prof *w, const struct mn_profile *prof)
{
	mn_prof_key(w, "sites");
	mn_prof_map_begin(w);
	for (size_t i = 0; i < mn_profile_site_count(prof); i++)
		mn_prof_site_row(w, mn_profile_site_at(prof, i));
	mn_prof_map_end(w);
}

/*
 * A complete profile with prof's sites: rows and one module, whose section st's emit() writes:
 * the text, NUL-terminated, with its length in *len.  emit() and the writer must succeed.
 */
static char *write_profile(const struct mn_module *mod, void *st, const struct mn_profile *prof,
			   size_t *len)
{
	struct mn_prof *w;
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	int ret, closed;

	check(f != NULL, "open_memstream");
	check(mn_prof_open(&w, f) == 0, "mn_prof_open");
	mn_prof_map_begin(w);
	mn_prof_kv_str(w, "format", MN_PROFILE_FORMAT);
	mn_prof_kv_bool(w, "complete", true);
	write_sites(w, prof);
	mn_prof_key(w, "modules");
	mn_prof_map_begin(w);
	mn_prof_key(w, mod->name);
	ret = mod->emit(st, w);
	mn_prof_map_end(w);
	mn_prof_map_end(w);
	closed = mn_prof_close(w);
	check(fclose(f) == 0, "fclose");
	check(ret == 0, "module '%s': emit() returned %d", mod->name, ret);
	check(closed == 0, "module '%s': the profile with its section does not close: %d "
	      "(a malformed section?)", mod->name, closed);
	return text;
}

/* Opens text as a profile (at out_path); the reader must take what the writer wrote. */
static struct mn_profile *read_back(const struct mn_module *mod, const char *text, size_t len,
				    const char *what)
{
	struct mn_profile *p = NULL;
	char err[1024];
	int ret;

	fill(out_fd, text, len);
	ret = mn_profile_open(&p, out_path, err, sizeof(err));
	check(ret == 0, "module '%s': %s is not read back: %s\n--- profile ---\n%s", mod->name,
	      what, err, text);
	return p;
}

/* Aborts, showing the first line in which a and b differ, when they do. */
static void same_text(const struct mn_module *mod, const char *a, const char *b)
{
	size_t line = 1, start = 0, i = 0;

	for (; a[i] && a[i] == b[i]; i++)
		if (a[i] == '\n') {
			line++;
			start = i + 1;
		}
	if (a[i] == b[i])
		return;
	check(false, "module '%s': emit(restore(emit(restore(s)))) differs from emit(restore(s)) "
	      "at line %zu of the profile:\n  first:  %.*s\n  second: %.*s", mod->name, line,
	      (int)strcspn(a + start, "\n"), a + start, (int)strcspn(b + start, "\n"), b + start);
}

/* ---- One module ------------------------------------------------------------------------------ */

static void fuzz_module(const struct mn_module *mod, const struct mn_run *run,
			const struct mn_profile *prof, const struct mn_pnode *sec)
{
	struct mn_profile *p1, *p3;
	void *a, *b, *c, *d;
	char *first, *second, *merged;
	size_t len1, len2, len3;
	int ret;

	ret = restore(mod, run, prof, sec, &a);
	if (ret)
		return;

	/* Idempotence: what emit() wrote restores, and emit() writes it again. */
	first = write_profile(mod, a, prof, &len1);
	drop(mod, a);
	p1 = read_back(mod, first, len1, "the section emit() wrote");
	ret = restore(mod, run, p1, mn_profile_module(p1, mod->name), &d);
	check(ret == 0 || ret == -ENOMEM, "module '%s': restore() refuses the section its emit() "
	      "wrote (%d)\n--- profile ---\n%s", mod->name, ret, first);
	if (d) {
		second = write_profile(mod, d, prof, &len2);
		drop(mod, d);
		same_text(mod, first, second);
		free(second);
	}
	mn_profile_close(p1);
	free(first);

	/* Two states of the section merge, emit, and what they write restores. */
	if (!mod->merge)
		return;
	ret = restore(mod, run, prof, sec, &b);
	check(ret == 0 || ret == -ENOMEM, "module '%s': restore() accepted the section once, "
	      "then returned %d", mod->name, ret);
	ret = restore(mod, run, prof, sec, &c);
	check(ret == 0 || ret == -ENOMEM, "module '%s': restore() accepted the section once, "
	      "then returned %d", mod->name, ret);
	if (!b || !c) {
		drop(mod, b);
		drop(mod, c);
		return;
	}
	mod->merge(b, c);
	drop(mod, c);
	merged = write_profile(mod, b, prof, &len3);
	drop(mod, b);
	p3 = read_back(mod, merged, len3, "the merged section");
	ret = restore(mod, run, p3, mn_profile_module(p3, mod->name), &d);
	check(ret == 0 || ret == -ENOMEM, "module '%s': restore() refuses the section its merge() "
	      "and emit() wrote (%d)\n--- profile ---\n%s", mod->name, ret, merged);
	drop(mod, d);
	mn_profile_close(p3);
	free(merged);
}

/* ---- The target ------------------------------------------------------------------------------ */

/* The run mnemo merge would make: the profile's rows, as many ids as it says it has (capped). */
static struct mn_run *run_of(const struct mn_profile *prof)
{
	const struct mn_binary *bin = mn_profile_binary(prof);
	size_t n = mn_profile_site_count(prof);
	const struct mn_site **rows = malloc((n ? n : 1) * sizeof(*rows));
	struct mn_run *run;
	uint32_t count;
	char why[256];
	int ret;

	check(rows != NULL, "out of memory");
	for (size_t i = 0; i < n; i++)
		rows[i] = mn_profile_site_at(prof, i);
	count = bin && bin->site_table_hash && bin->site_table_hash[0] ? bin->site_count :
		n ? rows[n - 1]->id : 0;
	if (count > SITE_COUNT_CAP)
		count = SITE_COUNT_CAP;
	ret = mn_run_from_sites(&run, rows, n, count, why, sizeof(why));
	free(rows);
	if (ret == -ENOMEM)
		return NULL;
	check(ret == 0, "mn_run_from_sites() returned %d: %s", ret, ret == -EINVAL ? why : "");
	check(mn_run_site_count(run) == count, "mn_run_from_sites(): %u sites, not %u",
	      mn_run_site_count(run), count);
	return run;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	in_fd = open_fd("fuzz_restore_in", in_path, sizeof(in_path));
	out_fd = open_fd("fuzz_restore_out", out_path, sizeof(out_path));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mn_profile *prof = NULL;
	struct mn_run *run;

	fill(in_fd, data, size);
	if (mn_profile_open(&prof, in_path, NULL, 0))
		return 0;   /* the reader's refusals are fuzz_profile's business */
	run = run_of(prof);
	for (size_t i = 0; run && i < mn_module_count(); i++) {
		const struct mn_module *mod = mn_module_at(i);
		const struct mn_pnode *sec = mn_profile_module(prof, mod->name);

		if (sec && mod->restore && mod->emit)
			fuzz_module(mod, run, prof, sec);
	}
	mn_run_destroy(run);
	mn_profile_close(prof);
	return 0;
}
