/*
 * What the tests of a module's restore(), merge() and emit() share: a module driven as `mnemo
 * merge` drives it (tools/merge.c: a state from init() and restore() per profile, folded with
 * merge(), written by emit()), a module's section cut out of a profile file as text, and a section
 * written back as the only one of a profile file.  Header-only, for tests only; every function
 * takes the module it drives, or the name of the section it reads.
 *
 * Section text is a section as emit() writes it on its own: a block mapping, unindented.  In a
 * profile file the same lines stand under "  <name>:" (below "modules:"), indented by four.
 *
 * Whatever goes wrong where the caller expects success (a file that cannot be read, a profile
 * without the section, init(), restore() or emit() failing) fails the test: with cmocka's
 * fail_msg() when cmocka.h is included before this header, otherwise with "FAIL: <why>" on stderr
 * and exit status 1.  The includer defines _GNU_SOURCE first (open_memstream, strdup).
 */
#ifndef MNEMO_TEST_MODTEST_H
#define MNEMO_TEST_MODTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "profile.h"

#ifdef fail_msg
#define MT_FAIL(...) fail_msg(__VA_ARGS__)
#else
#define MT_FAIL(...) (fprintf(stderr, "FAIL: " __VA_ARGS__), fputc('\n', stderr), exit(1))
#endif

/*
 * The smallest header the reader takes, for mt_write_profile(): no program, no sites.  Three
 * lines: with "modules:" and the key, a section's line n is the file's line n + 5 (tests expect
 * restore()'s messages to name such lines).
 */
#define MT_HEAD "format: " MN_PROFILE_FORMAT "\ncomplete: true\nsites: {}\n"

/* The file at path, whole and NUL-terminated (malloc'd). */
static inline char *mt_read_file(const char *path)
{
	FILE *f = fopen(path, "r"), *m;
	char *text = NULL, buf[65536];
	size_t len = 0, n;

	if (!f)
		MT_FAIL("cannot read %s", path);
	m = open_memstream(&text, &len);
	if (!m)
		MT_FAIL("out of memory");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	fclose(f);
	fclose(m);
	return text;
}

/* The section `name` of the profile file at path, as section text (malloc'd). */
static inline char *mt_section_text(const char *path, const char *name)
{
	char *text = mt_read_file(path), *key, *at, *out = NULL;
	size_t len = 0;
	FILE *m;

	if (asprintf(&key, "\n  %s:\n", name) < 0)
		MT_FAIL("out of memory");
	at = strstr(text, key);
	free(key);
	if (!at)
		MT_FAIL("%s: no %s section", path, name);
	m = open_memstream(&out, &len);
	if (!m)
		MT_FAIL("out of memory");
	/* The section's lines are those indented by four; the next module's key or EOF ends it. */
	at = strchr(at + 1, '\n') + 1;
	while (!strncmp(at, "    ", 4)) {
		char *nl = strchr(at, '\n');
		size_t n = nl ? (size_t)(nl - at) : strlen(at);

		fprintf(m, "%.*s\n", (int)(n - 4), at + 4);
		if (!nl)
			break;
		at = nl + 1;
	}
	fclose(m);
	free(text);
	return out;
}

/*
 * m's emit() of st as section text (malloc'd).  With rc NULL a failure of emit() or of the writer
 * fails the test; otherwise *rc is 0 or that failure's -errno, and NULL is returned on a failure.
 */
static inline char *mt_emit_text(const struct mn_module *m, void *st, int *rc)
{
	char *text = NULL, *out = NULL, *line, *nl;
	size_t len = 0, olen = 0;
	struct mn_prof *p = NULL;
	FILE *f = open_memstream(&text, &len), *o;
	int e;

	if (!f || mn_prof_open(&p, f))
		MT_FAIL("out of memory");
	e = m->emit(st, p);
	if (!e)
		e = mn_prof_close(p);
	else
		mn_prof_close(p);
	fclose(f);
	if (rc)
		*rc = e;
	else if (e)
		MT_FAIL("%s: emit() of the state failed: %d", m->name, e);
	if (e) {
		free(text);
		return NULL;
	}
	/* The writer frames a stream; a section's text has no document markers. */
	o = open_memstream(&out, &olen);
	if (!o)
		MT_FAIL("out of memory");
	for (line = text; *line; line = nl ? nl + 1 : line + strlen(line)) {
		size_t n;

		nl = strchr(line, '\n');
		n = nl ? (size_t)(nl - line) : strlen(line);
		if (n != 3 || (strncmp(line, "---", 3) && strncmp(line, "...", 3)))
			fwrite(line, 1, n + (nl != NULL), o);
	}
	fclose(o);
	free(text);
	return out;
}

/*
 * Writes a profile file at path: head (a profile's lines before "modules:", e.g. MT_HEAD), then
 * section text as its only section, `name`.
 */
static inline void mt_write_profile(const char *path, const char *head, const char *name,
				    const char *section)
{
	FILE *f = fopen(path, "w");

	if (!f)
		MT_FAIL("cannot write %s", path);
	fprintf(f, "%smodules:\n  %s:\n", head, name);
	while (*section) {
		const char *nl = strchr(section, '\n');
		size_t n = nl ? (size_t)(nl - section) : strlen(section);

		fprintf(f, "    %.*s\n", (int)n, section);
		section += n + (nl != NULL);
	}
	if (fclose(f))
		MT_FAIL("cannot write %s", path);
}

/* The profile at path, opened; with name, it must have that module's section. */
static inline struct mn_profile *mt_open(const char *path, const char *name)
{
	struct mn_profile *p;
	char why[1024];

	if (mn_profile_open(&p, path, why, sizeof(why)))
		MT_FAIL("%s", why);
	if (name && !mn_profile_module(p, name))
		MT_FAIL("%s: no %s section", path, name);
	return p;
}

/* A state of m fresh from init(), for run (NULL for a module that needs none). */
static inline void *mt_state_new(const struct mn_module *m, const struct mn_run *run)
{
	void *st = calloc(1, m->state_size);
	int e;

	if (!st)
		MT_FAIL("out of memory");
	e = m->init(st, run);
	if (e)
		MT_FAIL("%s: init() returned %d", m->name, e);
	return st;
}

static inline void mt_state_free(const struct mn_module *m, void *st)
{
	m->fini(st);
	free(st);
}

/*
 * restore() of prof's section of m into a fresh state: 0 and the state in *stp, or restore()'s
 * failure with its message in err (*stp NULL).
 */
static inline int mt_try_restore(const struct mn_module *m, const struct mn_run *run,
				 const struct mn_profile *prof, void **stp, char *err,
				 size_t errlen)
{
	void *st = mt_state_new(m, run);
	int e;

	err[0] = '\0';
	e = m->restore(st, prof, mn_profile_module(prof, m->name), err, errlen);
	if (e) {
		mt_state_free(m, st);
		st = NULL;
	}
	*stp = st;
	return e;
}

/* A state restored from prof; a failure of restore() fails the test. */
static inline void *mt_restored(const struct mn_module *m, const struct mn_run *run,
				const struct mn_profile *prof)
{
	char err[1024];
	void *st;
	int e = mt_try_restore(m, run, prof, &st, err, sizeof(err));

	if (e)
		MT_FAIL("restore(%s): %d: %s", mn_profile_path(prof), e, err);
	return st;
}

/* A state restored from the profile at path, which is closed again: states keep none of it. */
static inline void *mt_restored_path(const struct mn_module *m, const struct mn_run *run,
				     const char *path)
{
	struct mn_profile *p = mt_open(path, NULL);
	void *st = mt_restored(m, run, p);

	mn_profile_close(p);
	return st;
}

/* restore() of the profile at path into a fresh state, then discarded: restore()'s return, err. */
static inline int mt_try_restore_path(const struct mn_module *m, const struct mn_run *run,
				      const char *path, char *err, size_t errlen)
{
	struct mn_profile *p = mt_open(path, NULL);
	void *st;
	int e = mt_try_restore(m, run, p, &st, err, errlen);

	if (st)
		mt_state_free(m, st);
	mn_profile_close(p);
	return e;
}

/* merge(into, from), from freed after; into returned. */
static inline void *mt_fold(const struct mn_module *m, void *into, void *from)
{
	m->merge(into, from);
	mt_state_free(m, from);
	return into;
}

#endif /* MNEMO_TEST_MODTEST_H */
