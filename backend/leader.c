/*
 * The leader's last job (backend 0): wait for every backend's section, then write the profile
 * (DESIGN.md "Profile") to a temporary file and rename it into place, so a reader never sees half a
 * profile and a failed run never clobbers an older one.  Every temporary file is this run's own
 * (section files: mn_section_prefix(); the profile's: mn_prof_file_open()), so runs that write the
 * same profile path each leave a whole profile of their own there, and the last rename wins.
 *
 *   format: mnemo-profile/1
 *   program: {argv: [./prog, a], pid: 123, exit_status: 0, signal: null, wall_seconds: 0.53,
 *             events: 123456, summarized_accesses: 0}   (one line)
 *   binary: {site_count: 412, site_table_hash: 9f0c...}   (FNV-1a 64 of the site table blob;
 *                                    the program's own, without its shared libraries')
 *   units:                          (only when shared libraries built with mnemo registered)
 *     - {name: libz.so.1, path: /usr/lib/libz.so.1, first: 413, last: 530}
 *     - {name: libx.so, path: ./libx.so, profiled: false, why: ...}
 *   complete: true
 *   incomplete_reason: ...          (only when complete is false; reasons joined by "; ")
 *   threads:                        (only when threads other than the main one sent events)
 *     count: 5                      (threads that sent events, the main one included)
 *     list:                         (by id: 1 the main thread, then in order of first event;
 *       - {id: 1, events: 1234}      the first MN_THREADS_LISTED, `more:` counts the others;
 *       - {id: 2, events: 9, creator: 1, site: 31}   creator: the thread that called
 *                                    pthread_create, 0 when it had sent no event, absent for the
 *                                    main thread; site: the call's (kind thread), when the pass
 *                                    saw it)
 *   sites:
 *     12: {kind: load, function: main, file: prog.c, line: 12, column: 9, loop: 10}
 *     420: {kind: load, ..., unit: libz.so.1}   (a site of a shared library: its unit)
 *   modules:
 *     value-pattern: {...}          (each section copied verbatim, in session module order)
 *
 * Each section file (backend.c, write_section) is read twice with libyaml's parser: once for its
 * frame (events, corrupt records, the site ids it references), once to copy its `section` node's
 * events into the profile's emitter, styles and all.  Only the sites some section references are
 * listed, and the `function` site of each one's enclosing function, so that a client can place a
 * site within its function (line offsets survive edits elsewhere in the file).
 */
#define _GNU_SOURCE   /* sigabbrev_np, qsort_r */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <yaml.h>

#include "backend_internal.h"
#include "map.h"         /* mn_bits_set() */

#define WAIT_SLICE_MS     100   /* futex wait between liveness checks */
#define START_TIMEOUT_S   10.0  /* a backend still not RUNNING after this never started */

struct section {
	bool ok;                 /* the backend wrote a readable section */
	bool duplicate;          /* the same module ran twice: this copy is left out, silently */
	char why[300];           /* else why not */
	uint64_t events;
	uint64_t corrupt;
	uint64_t summarized;     /* accesses that arrived as loop summaries */
	uint64_t lost_summaries; /* loop summaries not expanded (driver.c) */
	uint64_t lost_pending;   /* summarized accesses no loop summary closed */
	uint64_t threads_left_out; /* threads whose events it did not get (module.h, .thread) */
	uint64_t peak_rss_kib;   /* the backend's own resources, for `backend:` in the profile */
	uint64_t cpu_us;
};

/* Reasons the profile is incomplete, joined by "; ". */
struct reasons {
	char buf[4096];
	size_t len;
};

static void reason(struct reasons *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason(struct reasons *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->len + 3 >= sizeof(r->buf))
		return;
	if (r->len) {
		memcpy(r->buf + r->len, "; ", 3);
		r->len += 2;
	}
	va_start(ap, fmt);
	n = vsnprintf(r->buf + r->len, sizeof(r->buf) - r->len, fmt, ap);
	va_end(ap);
	if (n > 0) {
		size_t room = sizeof(r->buf) - r->len;

		r->len += (size_t)n < room ? (size_t)n : room - 1;
	}
}

static double monotonic_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool mn_pid_dead(int pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	bool zombie = false;

	if (pid <= 0)
		return false;
	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		p = strrchr(buf, ')');   /* "pid (comm) S ...": comm may hold spaces and parens */
		zombie = p && (p[2] == 'Z' || p[2] == 'X');
	}
	fclose(f);
	return zombie;
}

/*
 * Waits until backend i leaves NONE/RUNNING; returns its final state.  A dead process, or one that
 * never started, counts as FAILED and *why says so.
 */
static uint32_t wait_backend(struct mn_session *s, unsigned i, char *why, size_t whylen)
{
	double start = monotonic_now();

	for (;;) {
		/* Pairs with the release stores of that backend (backend.c). */
		uint32_t st = mn_load_acquire(&s->backend[i].state);
		pid_t pid = s->backend[i].pid;

		if (st == MN_BACKEND_WRITTEN || st == MN_BACKEND_FAILED) {
			const char *w = s->backend[i].why;

			if (st == MN_BACKEND_FAILED)
				snprintf(why, whylen, "%.*s", (int)sizeof(s->backend[i].why),
					 w[0] ? w : "no reason given");
			return st;
		}
		if (st == MN_BACKEND_RUNNING && mn_pid_dead(pid)) {
			/* It may have finished and exited since the load above. */
			st = mn_load_acquire(&s->backend[i].state);
			if (st == MN_BACKEND_WRITTEN || st == MN_BACKEND_FAILED)
				continue;
			snprintf(why, whylen, "its backend (pid %d) died", (int)pid);
			return MN_BACKEND_FAILED;
		}
		if (st == MN_BACKEND_NONE && monotonic_now() - start > START_TIMEOUT_S) {
			snprintf(why, whylen, "its backend never started");
			return MN_BACKEND_FAILED;
		}
		mn_word_wait(&s->backend[i].state, st, WAIT_SLICE_MS);
	}
}

/* ---- Section files --------------------------------------------------------------------------- */

struct sfile {
	yaml_parser_t parser;
	FILE *f;
	char *why;
	size_t whylen;
};

static bool sfile_open(struct sfile *sf, const char *path, char *why, size_t whylen)
{
	memset(sf, 0, sizeof(*sf));
	sf->why = why;
	sf->whylen = whylen;
	sf->f = fopen(path, "re");
	if (!sf->f) {
		snprintf(why, whylen, "cannot read its section '%s': %s", path, strerror(errno));
		return false;
	}
	if (!yaml_parser_initialize(&sf->parser)) {
		fclose(sf->f);
		snprintf(why, whylen, "cannot read its section: %s", strerror(ENOMEM));
		return false;
	}
	yaml_parser_set_input_file(&sf->parser, sf->f);
	return true;
}

static void sfile_close(struct sfile *sf)
{
	yaml_parser_delete(&sf->parser);
	fclose(sf->f);
}

static bool next(struct sfile *sf, yaml_event_t *ev)
{
	if (yaml_parser_parse(&sf->parser, ev))
		return true;
	snprintf(sf->why, sf->whylen, "its section file is malformed: line %zu: %s",
		 sf->parser.problem_mark.line + 1,
		 sf->parser.problem ? sf->parser.problem : "parse error");
	return false;
}

/* Reads up to the frame mapping's first key: stream, document and mapping start. */
static bool frame_begin(struct sfile *sf)
{
	static const yaml_event_type_t want[] = {
		YAML_STREAM_START_EVENT, YAML_DOCUMENT_START_EVENT, YAML_MAPPING_START_EVENT,
	};
	yaml_event_t ev;

	for (size_t i = 0; i < 3; i++) {
		if (!next(sf, &ev))
			return false;
		yaml_event_type_t t = ev.type;

		yaml_event_delete(&ev);
		if (t != want[i]) {
			snprintf(sf->why, sf->whylen, "its section file is not a mapping");
			return false;
		}
	}
	return true;
}

/*
 * Reads the next key of the frame into key[]; false at the end of the frame (*end set) or on
 * error (*end clear).
 */
static bool frame_key(struct sfile *sf, char *key, size_t keylen, bool *end)
{
	yaml_event_t ev;

	*end = false;
	if (!next(sf, &ev))
		return false;
	if (ev.type == YAML_MAPPING_END_EVENT) {
		yaml_event_delete(&ev);
		*end = true;
		return false;
	}
	if (ev.type != YAML_SCALAR_EVENT) {
		yaml_event_delete(&ev);
		snprintf(sf->why, sf->whylen, "its section file has a non-scalar key");
		return false;
	}
	snprintf(key, keylen, "%s", (const char *)ev.data.scalar.value);
	yaml_event_delete(&ev);
	return true;
}

/*
 * Consumes one node.  With p, its events go to the profile (copied); without, they are dropped.
 * With bits, a flow of integer scalars is OR-ed into the bitmap instead (sites_used).
 */
static bool node(struct sfile *sf, struct mn_prof *p, uint64_t **bits, size_t *nwords,
		 uint64_t *scalar_out)
{
	unsigned depth = 0;
	yaml_event_t ev;

	do {
		if (!next(sf, &ev))
			return false;
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			depth++;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_SCALAR_EVENT:
			if (scalar_out || bits) {
				char *end;
				unsigned long long v;

				errno = 0;
				v = strtoull((const char *)ev.data.scalar.value, &end, 10);
				if (errno || *end || end == (char *)ev.data.scalar.value) {
					yaml_event_delete(&ev);
					snprintf(sf->why, sf->whylen,
						 "its section file has a bad number at line %zu",
						 sf->parser.mark.line + 1);
					return false;
				}
				if (scalar_out)
					*scalar_out = v;
				if (bits && v <= UINT32_MAX && !mn_bits_set(bits, nwords, v)) {
					yaml_event_delete(&ev);
					snprintf(sf->why, sf->whylen, "%s", strerror(ENOMEM));
					return false;
				}
			}
			break;
		default:
			break;
		}
		if (p)
			mn_prof_emit_event(p, &ev);
		else
			yaml_event_delete(&ev);
	} while (depth);
	return true;
}

/* Pass 1: the frame's counters and the section's site ids, OR-ed into *bits. */
static bool section_scan(const char *path, struct section *sec, uint64_t **bits, size_t *nwords)
{
	struct sfile sf;
	char key[64];
	bool end, ok, have_section = false;

	if (!sfile_open(&sf, path, sec->why, sizeof(sec->why)))
		return false;
	ok = frame_begin(&sf);
	while (ok && frame_key(&sf, key, sizeof(key), &end)) {
		if (!strcmp(key, "events"))
			ok = node(&sf, NULL, NULL, NULL, &sec->events);
		else if (!strcmp(key, "corrupt"))
			ok = node(&sf, NULL, NULL, NULL, &sec->corrupt);
		else if (!strcmp(key, "summarized"))
			ok = node(&sf, NULL, NULL, NULL, &sec->summarized);
		else if (!strcmp(key, "lost_summaries"))
			ok = node(&sf, NULL, NULL, NULL, &sec->lost_summaries);
		else if (!strcmp(key, "lost_pending"))
			ok = node(&sf, NULL, NULL, NULL, &sec->lost_pending);
		else if (!strcmp(key, "threads_left_out"))
			ok = node(&sf, NULL, NULL, NULL, &sec->threads_left_out);
		else if (!strcmp(key, "peak_rss_kib"))
			ok = node(&sf, NULL, NULL, NULL, &sec->peak_rss_kib);
		else if (!strcmp(key, "cpu_us"))
			ok = node(&sf, NULL, NULL, NULL, &sec->cpu_us);
		else if (!strcmp(key, "sites_used"))
			ok = node(&sf, NULL, bits, nwords, NULL);
		else
			ok = node(&sf, NULL, NULL, NULL, NULL);
		have_section |= !strcmp(key, "section");
	}
	ok = ok && end;
	if (ok && !have_section) {
		snprintf(sec->why, sizeof(sec->why), "its section file has no section");
		ok = false;
	}
	sfile_close(&sf);
	return ok;
}

/* Pass 2: copies the `section` node into the profile. */
static bool section_copy(const char *path, struct mn_prof *p, char *why, size_t whylen)
{
	struct sfile sf;
	char key[64];
	bool end, ok;

	if (!sfile_open(&sf, path, why, whylen))
		return false;
	ok = frame_begin(&sf);
	while (ok && frame_key(&sf, key, sizeof(key), &end)) {
		if (!strcmp(key, "section")) {
			ok = node(&sf, p, NULL, NULL, NULL);
			break;
		}
		ok = node(&sf, NULL, NULL, NULL, NULL);
	}
	sfile_close(&sf);
	return ok;
}

/* ---- The profile ----------------------------------------------------------------------------- */

static void write_program(struct mn_prof *p, const struct mn_leader_input *in, bool ended,
			  uint64_t events, uint64_t summarized)
{
	const struct mn_session *s = in->s;
	const char *argv = (const char *)s + s->argv_off;
	double wall = -1;

	mn_prof_map_begin_flow(p);
	mn_prof_key(p, "argv");
	mn_prof_seq_begin_flow(p);
	if (s->argv_off >= sizeof(*s)) {
		size_t off = 0;

		for (uint32_t k = 0; k < s->argc && off < s->argv_len; k++) {
			const char *a = argv + off;
			const char *nul = memchr(a, '\0', s->argv_len - off);

			if (!nul)
				break;
			mn_prof_str(p, a);
			off += (size_t)(nul - a) + 1;
		}
	}
	mn_prof_seq_end(p);
	if (!s->reproducible)
		mn_prof_kv_i64(p, "pid", s->producer_pid);
	if (s->image && !s->reproducible && s->parent_pid)
		mn_prof_kv_i64(p, "parent_pid", s->parent_pid);
	if (s->image)
		mn_prof_kv_u64(p, "image", s->image);
	if (ended && s->exec_ended)
		mn_prof_kv_bool(p, "exec", true);   /* ended by exec: no exit status */
	mn_prof_key(p, "exit_status");
	if (ended && !s->term_signal && !s->exec_ended)
		mn_prof_i64(p, s->exit_status);
	else
		mn_prof_null(p);
	mn_prof_key(p, "signal");
	if (ended && s->term_signal)
		mn_prof_i64(p, s->term_signal);
	else
		mn_prof_null(p);
	if (!s->reproducible) {
		mn_prof_key(p, "wall_seconds");
		if (s->start_monotonic > 0)
			wall = (ended ? s->end_monotonic : in->stream_end_monotonic) -
			       s->start_monotonic;
		if (wall >= 0)
			mn_prof_f64(p, (double)(long long)(wall * 1e6 + 0.5) / 1e6);   /* us */
		else
			mn_prof_null(p);
	}
	mn_prof_kv_u64(p, "events", events);
	mn_prof_kv_u64(p, "summarized_accesses", summarized);
	mn_prof_map_end(p);
}

/* ---- Function sites ------------------------------------------------------------------------- */

static int cmp_fsite(const void *a, const void *b, void *arg)
{
	const struct mn_run *run = arg;
	const struct mn_run_site *x = mn_run_site(run, *(const uint32_t *)a);
	const struct mn_run_site *y = mn_run_site(run, *(const uint32_t *)b);
	int c = strcmp(x->function, y->function);

	if (!c)
		c = strcmp(x->file, y->file);
	if (!c)
		c = (*(const uint32_t *)a > *(const uint32_t *)b) -
		    (*(const uint32_t *)a < *(const uint32_t *)b);
	return c;
}

/*
 * The function site of site's enclosing function in fs[0..n) (sorted by cmp_fsite), or 0: the
 * one of the same name and file, else the lowest id of the same name (static functions of two
 * files may share a name; without debug info files are "" and the first wins).
 */
static uint32_t function_site(const struct mn_run *run, const uint32_t *fs, size_t n,
			      const struct mn_run_site *site)
{
	size_t lo = 0, hi = n;
	uint32_t first = 0;

	while (lo < hi) {   /* the first entry whose function is not below site->function */
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(mn_run_site(run, fs[mid])->function, site->function) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n; i++) {
		const struct mn_run_site *f = mn_run_site(run, fs[i]);

		if (strcmp(f->function, site->function))
			break;
		if (!first)
			first = fs[i];
		if (!strcmp(f->file, site->file))
			return fs[i];
	}
	return first;
}

/* Adds to the bitmap the function site of every site it holds.  False when out of memory. */
static bool add_function_sites(const struct mn_run *run, uint64_t **bits, size_t *nwords)
{
	uint32_t count = mn_run_site_count(run), *fs;
	size_t n = 0, words = *nwords;
	bool ok = true;

	if (!count || !words)
		return true;
	fs = malloc((size_t)count * sizeof(*fs));
	if (!fs)
		return false;
	for (uint32_t id = 1; id <= count; id++)
		if (!strcmp(mn_run_site(run, id)->kind, "function"))
			fs[n++] = id;
	qsort_r(fs, n, sizeof(*fs), cmp_fsite, (void *)run);
	/* Only the words there were before: the function sites added need no function site. */
	for (size_t w = 0; w < words && ok; w++) {
		for (uint64_t m = (*bits)[w]; m && ok; m &= m - 1) {
			uint32_t id = (uint32_t)(w * 64 + (unsigned)__builtin_ctzll(m));
			const struct mn_run_site *site = mn_run_site(run, id);
			uint32_t f;

			if (!site || !site->function[0])
				continue;
			f = function_site(run, fs, n, site);
			if (f)
				ok = mn_bits_set(bits, nwords, f);
		}
	}
	free(fs);
	return ok;
}

/*
 * The shared library (runtime/unit.h) whose range holds site id, from the session's unit lines
 * "name \t path \t first \t last \t why \n", into name (size MN_UNIT_NAME); false for the
 * program's own sites.
 */
#define MN_UNIT_NAME 256
static bool unit_of(const struct mn_session *s, uint32_t id, char *name)
{
	const char *t = (const char *)s + s->units_off, *end = t + s->units_len;

	if (!s->units_len || id <= s->program_site_count)
		return false;
	while (t < end) {
		const char *nl = memchr(t, '\n', (size_t)(end - t));
		unsigned long first, last;
		int len;

		if (!nl)
			break;
		if (sscanf(t, "%*[^\t]%n\t%*[^\t]\t%lu\t%lu", &len, &first, &last) == 2 &&
		    first && first <= id && id <= last && len < MN_UNIT_NAME) {
			memcpy(name, t, (size_t)len);
			name[len] = '\0';
			return true;
		}
		t = nl + 1;
	}
	return false;
}

/*
 * `units:`, when shared libraries built with mnemo registered: each with its name, path and
 * range of ids, or, when it was not profiled, why.
 */
static void write_units(struct mn_prof *p, const struct mn_session *s)
{
	const char *t = (const char *)s + s->units_off, *end = t + s->units_len;

	if (!s->units_len)
		return;
	mn_prof_key(p, "units");
	mn_prof_seq_begin(p);
	while (t < end) {
		const char *nl = memchr(t, '\n', (size_t)(end - t)), *f[5];
		char line[1024], *c;
		unsigned n = 0;

		if (!nl || (size_t)(nl - t) >= sizeof(line))
			break;
		memcpy(line, t, (size_t)(nl - t));
		line[nl - t] = '\0';
		t = nl + 1;
		f[n++] = line;
		for (c = line; *c && n < 5; c++)
			if (*c == '\t') {
				*c = '\0';
				f[n++] = c + 1;
			}
		if (n != 5)
			continue;
		mn_prof_map_begin_flow(p);
		mn_prof_kv_str(p, "name", f[0]);
		mn_prof_kv_str(p, "path", f[1]);
		if (f[4][0]) {
			mn_prof_kv_bool(p, "profiled", false);
			mn_prof_kv_str(p, "why", f[4]);
		} else {
			mn_prof_kv_u64(p, "first", strtoull(f[2], NULL, 10));
			mn_prof_kv_u64(p, "last", strtoull(f[3], NULL, 10));
		}
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
}

static void write_binary(struct mn_prof *p, const struct mn_run *run,
			 const struct mn_session *s)
{
	char hash[17];

	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)run->blob_hash);
	mn_prof_key(p, "binary");
	mn_prof_map_begin_flow(p);
	/* The program's own table: linked units' sites follow it (units:). */
	mn_prof_kv_u64(p, "site_count", s->program_sites_len ? s->program_site_count :
			mn_run_site_count(run));
	mn_prof_kv_str(p, "site_table_hash", hash);
	mn_prof_map_end(p);
}

static void write_sites(struct mn_prof *p, const struct mn_run *run, const uint64_t *bits,
			size_t nwords, const struct mn_session *s)
{
	char unit[MN_UNIT_NAME];

	mn_prof_key(p, "sites");
	mn_prof_map_begin(p);
	for (size_t w = 0; w < nwords; w++) {
		for (uint64_t m = bits[w]; m; m &= m - 1) {
			uint32_t id = (uint32_t)(w * 64 + (unsigned)__builtin_ctzll(m));
			const struct mn_run_site *site = mn_run_site(run, id);
			/* 0 ("no site"), or an id beyond the table: unknown */
			struct mn_site row = { .id = id, .kind = "unknown" };

			if (site)
				row = (struct mn_site){
					.id = id, .kind = site->kind, .function = site->function,
					.file = site->file, .line = site->line,
					.column = site->column, .name = site->name,
					.type_size = site->type_size, .loop = site->loop,
					.fields = site->fields,
					.unit = unit_of(s, id, unit) ? unit : "",
				};
			mn_prof_site_row(p, &row);
		}
	}
	mn_prof_map_end(p);
}

static const char *module_name(const struct mn_session *s, unsigned i, char *buf)
{
	memcpy(buf, s->modules[i], MN_MODULE_NAME_MAX);
	buf[MN_MODULE_NAME_MAX] = '\0';
	return buf;
}

/*
 * Prints the line that says no profile was written, with every module's cause (modules of one
 * cause named together): a failure found here, a section file that cannot be read or a backend
 * that died, has had no line of its own, and "no module produced a section" alone says nothing.
 */
static void say_no_section(const struct mn_session *s, const struct section *sec,
			   char (*names)[MN_MODULE_NAME_MAX + 1])
{
	struct reasons why = { .len = 0 };

	for (unsigned i = 0; i < s->nmodules; i++) {
		char who[MN_MAX_MODULES * (MN_MODULE_NAME_MAX + 2)];
		size_t len = 0;
		bool seen = false;

		for (unsigned j = 0; j < i && !seen; j++)
			seen = !strcmp(sec[j].why, sec[i].why);
		if (seen)   /* named with the first module of the same cause */
			continue;
		for (unsigned j = i; j < s->nmodules; j++)
			if (!strcmp(sec[j].why, sec[i].why) && len < sizeof(who))
				len += (size_t)snprintf(who + len, sizeof(who) - len, "%s%s",
							len ? ", " : "", names[j]);
		reason(&why, "%s: %s", who, sec[i].why[0] ? sec[i].why : "no reason given");
	}
	dprintf(STDERR_FILENO, "mnemo: no profile written to '%s': no module produced a section "
		"(%s)\n", s->output, why.buf);
}

static void write_backend(struct mn_prof *p, const char *key, const struct section *sec)
{
	mn_prof_key(p, key);
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "events", sec->events);
	mn_prof_kv_u64(p, "peak_rss_kib", sec->peak_rss_kib);
	mn_prof_kv_f64(p, "cpu_seconds", (double)sec->cpu_us / 1e6);
	mn_prof_map_end(p);
}

/*
 * What profiling cost, per backend process (the bench harness reads it): one entry per module's
 * process, keyed by the module; or, when one process hosted them all, one entry keyed by the
 * modules that wrote a section, joined by '+', with the process's peak memory and CPU time (the
 * section written last saw the most of both).
 */
static void write_backends(struct mn_prof *p, const struct mn_session *s,
			   const struct section *sec, char names[][MN_MODULE_NAME_MAX + 1])
{
	char key[MN_MAX_MODULES * (MN_MODULE_NAME_MAX + 1)] = "";
	struct section one = { 0 };
	size_t len = 0;

	mn_prof_key(p, "backend");
	mn_prof_map_begin(p);
	for (unsigned i = 0; i < s->nmodules; i++) {
		if (!sec[i].ok || sec[i].duplicate)
			continue;
		if (s->nbackends == 1) {
			len += (size_t)snprintf(key + len, sizeof(key) - len, "%s%s", len ? "+" : "",
						names[i]);
			one.events = sec[i].events > one.events ? sec[i].events : one.events;
			if (sec[i].peak_rss_kib > one.peak_rss_kib)
				one.peak_rss_kib = sec[i].peak_rss_kib;
			if (sec[i].cpu_us > one.cpu_us)
				one.cpu_us = sec[i].cpu_us;
			continue;
		}
		write_backend(p, names[i], &sec[i]);
	}
	if (len)
		write_backend(p, key, &one);
	mn_prof_map_end(p);
}

/* ---- The leader's steps -------------------------------------------------------------------- */

/* What the leader gathers from the backends and the session before it writes the profile. */
struct finish {
	const struct mn_leader_input *in;
	struct mn_session *s;
	struct section sec[MN_MAX_MODULES];                   /* per module, in session order */
	char names[MN_MAX_MODULES][MN_MODULE_NAME_MAX + 1];
	unsigned nsections;       /* sections to copy: read fine, no duplicate */
	uint64_t events;          /* events of the stream, the most any backend decoded */
	uint64_t summarized;      /* accesses that arrived as loop summaries, likewise */
	bool ended;               /* the end-of-run record arrived */
	struct reasons r;         /* why the profile is incomplete */
	uint64_t *bits;           /* bitmap of the site ids the sections reference */
	size_t nwords;
};

/* Waits for module i's backend and reads the frame of the section it wrote, if it did. */
static void collect_section(struct finish *f, unsigned i)
{
	struct mn_session *s = f->s;
	struct section *sec = &f->sec[i];
	uint32_t st;

	module_name(s, i, f->names[i]);
	if (i == f->in->index)
		st = mn_load_acquire(&s->backend[i].state);   /* our own, final */
	else
		st = wait_backend(s, i, sec->why, sizeof(sec->why));
	if (st == MN_BACKEND_FAILED && i == f->in->index)
		snprintf(sec->why, sizeof(sec->why), "%.*s", (int)sizeof(s->backend[i].why),
			 s->backend[i].why);
	if (st != MN_BACKEND_WRITTEN)
		return;
	sec->ok = section_scan(s->backend[i].section_path, sec, &f->bits, &f->nwords);
	for (unsigned j = 0; j < i && sec->ok; j++)
		if (f->sec[j].ok && !strcmp(f->names[j], f->names[i]))
			sec->duplicate = true;
	if (!sec->ok || sec->duplicate)
		return;
	f->nsections++;
	/* Every backend reads every event; a leader without a module decodes none. */
	if (sec->events > f->events)
		f->events = sec->events;
	/* The same for summaries: each backend counted the stream's once. */
	if (sec->summarized > f->summarized)
		f->summarized = sec->summarized;
}

static void collect_sections(struct finish *f)
{
	for (unsigned i = 0; i < f->s->nmodules; i++)
		collect_section(f, i);
}

/* How the event stream ended, and the reasons that makes the profile incomplete. */
static void note_stream_end(struct finish *f)
{
	const struct mn_session *s = f->s;
	struct reasons *r = &f->r;

	/* The end-of-run record: ordered by the release in mn_queue_producer_finish() and the
	 * acquire in the mn_queue_pop() that saw the end (session.h, "Ordering"). */
	f->ended = f->in->stream_ended && mn_load_relaxed(&s->ended) == 1;
	if (!f->in->stream_ended)
		reason(r, "the leading backend lost the event stream");
	if (f->in->producer_died)
		reason(r, "the program ended without flushing (killed by SIGKILL?); events after "
			  "the last flushed buffer are lost");
	if (f->ended && s->term_signal) {
		const char *abbrev = sigabbrev_np(s->term_signal);

		reason(r, "the program was killed by signal %d%s%s%s", s->term_signal,
		       abbrev ? " (SIG" : "", abbrev ? abbrev : "", abbrev ? ")" : "");
	}
	/* The runtime explains its own drops in end_reason; the counters speak only if it did not. */
	if (f->ended && s->end_reason[0]) {
		reason(r, "%.*s", (int)sizeof(s->end_reason), s->end_reason);
	} else if (f->ended) {
		if (s->dropped_thread_events)
			reason(r, "%llu events from threads other than the first were dropped",
			       (unsigned long long)s->dropped_thread_events);
		if (s->dropped_other_events)
			reason(r, "%llu events were dropped",
			       (unsigned long long)s->dropped_other_events);
	}
}

/* The reasons each module's section makes the profile incomplete: failed, or lost events. */
static void note_module_losses(struct finish *f)
{
	for (unsigned i = 0; i < f->s->nmodules; i++) {
		const struct section *sec = &f->sec[i];
		const char *name = f->names[i];

		if (sec->duplicate)
			continue;
		if (!sec->ok)
			reason(&f->r, "module %s failed: %s", name, sec->why);
		else if (sec->corrupt)
			reason(&f->r, "module %s: %llu corrupt event records (the rest of each such "
				      "buffer was skipped)",
			       name, (unsigned long long)sec->corrupt);
		/* Per module, like corrupt records: a backend short of memory loses alone. */
		if (sec->ok && sec->lost_summaries)
			reason(&f->r, "module %s: %llu loop summaries lost (their accesses were "
				      "not all received or could not be stored; not expanded)",
			       name, (unsigned long long)sec->lost_summaries);
		if (sec->ok && sec->lost_pending)
			reason(&f->r, "module %s: %llu summarized accesses never closed by a loop "
				      "summary (lost)",
			       name, (unsigned long long)sec->lost_pending);
		if (sec->ok && sec->threads_left_out)
			reason(&f->r, "module %s: the events of %llu thread%s other than the main "
				      "thread were left out (it keeps call and loop context, which "
				      "the backend does not keep per thread yet)",
			       name, (unsigned long long)sec->threads_left_out,
			       sec->threads_left_out == 1 ? "" : "s");
	}
}

/* Copies each section under `modules:`, in session order.  -EIO when one cannot be read. */
static int copy_sections(struct finish *f, struct mn_prof *p)
{
	const struct mn_session *s = f->s;
	int err = 0;

	mn_prof_key(p, "modules");
	mn_prof_map_begin(p);
	for (unsigned i = 0; i < s->nmodules; i++) {
		char why[300];

		if (!f->sec[i].ok || f->sec[i].duplicate)
			continue;
		mn_prof_key(p, f->names[i]);
		if (!section_copy(s->backend[i].section_path, p, why, sizeof(why))) {
			/* It read fine a moment ago: only I/O fails here, and fails the profile. */
			mn_backend_msg("%s: %s", f->names[i], why);
			err = -EIO;
			break;
		}
	}
	mn_prof_map_end(p);
	return err;
}

/* `threads:`, when threads other than the main one sent events: the first MN_THREADS_LISTED
 * (a program of thousands of short threads lists these), `more:` counting the others. */
static void write_threads(struct mn_prof *p, const struct mn_leader_input *in)
{
	uint64_t count = in->nthreads, listed = 0;

	mn_prof_key(p, "threads");
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "count", count);
	mn_prof_key(p, "list");
	mn_prof_seq_begin(p);
	for (uint32_t t = 1; t <= MN_THREADS_LISTED; t++) {
		if (!in->threads[t].buffers)
			continue;
		mn_prof_map_begin_flow(p);
		mn_prof_kv_u64(p, "id", t);
		mn_prof_kv_u64(p, "events", in->threads[t].events);
		if (in->threads[t].started)
			mn_prof_kv_u64(p, "creator", in->threads[t].creator);
		if (in->threads[t].site)
			mn_prof_kv_u64(p, "site", in->threads[t].site);
		mn_prof_map_end(p);
		listed++;
	}
	mn_prof_seq_end(p);
	if (count > listed)
		mn_prof_kv_u64(p, "more", count - listed);
	mn_prof_map_end(p);
}

/* The profile's document, in the order of the format (the comment atop this file). */
static int write_document(struct finish *f, struct mn_prof *p)
{
	const struct mn_leader_input *in = f->in;
	int err;

	mn_prof_map_begin(p);
	mn_prof_kv_str(p, "format", MN_PROFILE_FORMAT);
	mn_prof_key(p, "program");
	write_program(p, in, f->ended, f->events, f->summarized);
	if (in->run)   /* NULL only when the table could not be loaded */
		write_binary(p, in->run, in->s);
	write_units(p, in->s);
	if (!in->s->reproducible)
		write_backends(p, f->s, f->sec, f->names);
	mn_prof_kv_bool(p, "complete", f->r.len == 0);
	if (f->r.len)
		mn_prof_kv_str(p, "incomplete_reason", f->r.buf);
	if (in->nthreads)
		write_threads(p, in);
	write_sites(p, in->run, f->bits, f->nwords, in->s);
	err = copy_sections(f, p);
	mn_prof_map_end(p);
	return err;
}

/* The listed threads' creation sites, for `sites:`. */
static bool add_thread_sites(struct finish *f)
{
	for (uint32_t t = 1; f->in->nthreads && t <= MN_THREADS_LISTED; t++)
		if (f->in->threads[t].site && !mn_bits_set(&f->bits, &f->nwords, f->in->threads[t].site))
			return false;
	return true;
}

/*
 * Writes the profile to a temporary file and renames it into place.  Returns 0, or -ENODATA when
 * no module produced a section (said here), or another -errno; the file is left alone on failure.
 */
static int write_profile(struct finish *f)
{
	struct mn_prof *p = NULL;
	struct mn_prof_file out = { 0 };
	int err;

	if (!f->nsections) {
		say_no_section(f->s, f->sec, f->names);
		return -ENODATA;
	}
	if (!add_thread_sites(f) || !add_function_sites(f->in->run, &f->bits, &f->nwords))
		return -ENOMEM;
	err = mn_prof_file_open(&out, f->s->output);
	if (!err)
		err = mn_prof_open(&p, out.f);
	if (!err)
		err = write_document(f, p);
	if (p) {
		int e = mn_prof_close(p);

		if (!err)
			err = e;
	}
	if (out.f && !err)
		err = mn_prof_file_commit(&out);
	mn_prof_file_abort(&out);
	return err;
}

/*
 * Every section file of this run, also one a backend left when it died writing it (its path
 * checked first: it may have died writing the name).  A backend removes its own after a failure,
 * and again after the profile (backend.c): the names are this run's alone.
 */
static void remove_section_files(const struct mn_session *s)
{
	for (unsigned i = 0; i < s->nmodules; i++)
		if (mn_section_path_ours(s, i, s->backend[i].section_path))
			unlink(s->backend[i].section_path);
}

/* Says why the profile could not be written, or (-v) that it was. */
static void say_outcome(const struct finish *f, int err)
{
	const struct mn_session *s = f->s;

	if (err && err != -ENODATA)
		dprintf(STDERR_FILENO, "mnemo: cannot write profile '%s': %s\n", s->output,
			strerror(-err));
	else if (!err && s->verbose)
		mn_backend_msg("profile written to '%s'%s", s->output,
			       f->r.len ? " (incomplete)" : "");
}

/* Tells the program the profile is done, written or not. */
static void publish_outcome(struct mn_session *s, int err)
{
	/* Publishes the renamed file; pairs with the runtime's acquire load of profile_done. */
	mn_store_release(&s->profile_done, err ? MN_PROFILE_FAILED : MN_PROFILE_WRITTEN);
	mn_word_wake(&s->profile_done);
}

int mn_leader_finish(const struct mn_leader_input *in)
{
	struct finish f = { .in = in, .s = in->s, .events = in->events };
	int err;

	collect_sections(&f);
	note_stream_end(&f);
	note_module_losses(&f);
	/* An image that made no event of its own before its exec (a fork child on its way to
	 * another program): nothing to say, so no file (runtime.c, "Sessions of a process tree"). */
	err = in->stream_ended && f.s->ended && f.s->exec_ended == MN_EXEC_EMPTY ? 0 :
	      write_profile(&f);
	remove_section_files(f.s);
	free(f.bits);
	say_outcome(&f, err);
	publish_outcome(f.s, err);
	return err;
}
