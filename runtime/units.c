/*
 * The program's side of linked units (unit.h): the instrumented shared libraries that register
 * with this runtime.  Registration records a unit; the session's start (runtime.c, setup()) lays
 * out the site table of every accepted unit after the program's, each with its base (program
 * first at 0, then units in order of registration, so the same program and libraries give the
 * same ids), and describes the units to the backend (session.h, units_off: one line per unit,
 * "name \t path \t first \t last \t why \n", first and last 0 and why set when it is not
 * profiled).  Then mn_units_start() publishes the bases, which turns the units' callbacks on,
 * and registers their globals.  A unit that registers once the session runs (dlopen) is refused:
 * its table cannot join the backend's any more; it stays silent, and the end-of-run record says
 * which unit was not profiled and why.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"
#include "barrier.h"
#include "queue.h"
#include "runtime_internal.h"
#include "unit.h"

#define MN_VISIBLE __attribute__((visibility("default")))
#define UNITS_MAX 64

#pragma weak __mnemo_modules
#pragma weak __mnemo_wire
#pragma weak __mnemo_pass_abi
#pragma weak __mnemo_site_table
#pragma weak __mnemo_site_table_size

/* One registered unit: what it says of itself, and what the session start decided. */
struct unit_row {
	struct mn_unit *u;
	char path[256];
	const char *name;       /* the path's last component */
	const char *why;        /* NULL: accepted; else why it is not profiled */
	uint32_t base;
};

static struct {
	struct unit_row row[UNITS_MAX];
	unsigned n;
	uint32_t lost;          /* registrations beyond UNITS_MAX */
	uint32_t started;       /* the session's layout is fixed; later units are refused */
} units;

/* Bytes of a site table's first line ("mnemo-sites/N\n", abi.h), or 0 when it has none. */
static size_t header_len(const char *table, uint64_t size)
{
	const char *nl = size ? memchr(table, '\n', size) : NULL;

	return nl ? (size_t)(nl - table) + 1 : 0;
}

/* Why the program's session cannot take unit u, or NULL. */
static const char *refusal(const struct mn_unit *u)
{
	if (u->version != MN_UNIT_VERSION)
		return "built by another mnemo (unit layout)";
	if (!&__mnemo_pass_abi || !&__mnemo_wire || !__mnemo_modules)
		return "the program is not instrumented";
	if (u->pass_abi != MNEMO_ABI_VERSION)
		return "instrumented for another mnemo ABI";
	if (strcmp(u->modules, __mnemo_modules))
		return "built for other modules than the program";
	if (memcmp(u->wire, &__mnemo_wire, sizeof(__mnemo_wire)))
		return "its events are packed differently from the program's (other modules or "
		       "options)";
	if (u->q_cur != &mn_q_cur)
		return "it binds the runtime's symbols to its own (linked with -Bsymbolic?), so "
		       "its events cannot reach the program's queue";
	if (!&__mnemo_site_table || !&__mnemo_site_table_size ||
	    !header_len(u->site_table, u->site_table_size) ||
	    header_len(u->site_table, u->site_table_size) !=
	    header_len(__mnemo_site_table, __mnemo_site_table_size) ||
	    memcmp(u->site_table, __mnemo_site_table,
		   header_len(u->site_table, u->site_table_size)))
		return "its site table has another format than the program's";
	return NULL;
}

MN_VISIBLE void __mnemo_unit_register(struct mn_unit *u)
{
	struct unit_row *r;
	Dl_info info;

	if (units.n == UNITS_MAX) {
		units.lost++;
		return;
	}
	r = &units.row[units.n];
	r->u = u;
	mn_rt_quiet++;
	if (dladdr(u, &info) && info.dli_fname)
		snprintf(r->path, sizeof(r->path), "%s", info.dli_fname);
	mn_rt_quiet--;
	r->name = strrchr(r->path, '/') ? strrchr(r->path, '/') + 1 : r->path;
	r->why = refusal(u);
	if (!r->why && mn_load_acquire(&units.started))
		r->why = "loaded after the profile's session started (dlopen)";
	units.n++;
}

/*
 * Unit r's site lines without the header, with the one field that holds a site id (the 8th,
 * `loop`, abi.h; a later format must keep it there or change this) moved by the unit's base,
 * into dst (NULL: only counted).  Returns the bytes.
 */
static uint64_t rebased_lines(const struct unit_row *r, char *dst)
{
	const char *c = r->u->site_table + header_len(r->u->site_table, r->u->site_table_size);
	const char *end = r->u->site_table + r->u->site_table_size;
	unsigned field = 0;
	uint64_t n = 0;
	char num[16];

	while (c < end) {
		if (field == 7 && *c != '\t' && *c != '\n') {
			unsigned long v = 0;

			while (c < end && *c >= '0' && *c <= '9')
				v = v * 10 + (unsigned long)(*c++ - '0');
			int k = snprintf(num, sizeof(num), "%lu", v ? v + r->base : 0);

			if (dst)
				memcpy(dst + n, num, (size_t)k);
			n += (uint64_t)k;
			continue;
		}
		field = *c == '\n' ? 0 : field + (*c == '\t');
		if (dst)
			dst[n] = *c;
		n++;
		c++;
	}
	return n;
}

void mn_units_layout(uint32_t program_count, uint64_t *sites_len, uint64_t *text_len,
		     uint32_t *total_count)
{
	uint32_t base = program_count;

	*sites_len = *text_len = 0;
	for (unsigned i = 0; i < units.n; i++) {
		struct unit_row *r = &units.row[i];

		if (!r->why && r->u->site_count > UINT32_MAX - 1 - base)
			r->why = "too many sites in all";
		if (!r->why) {
			r->base = base;
			base += r->u->site_count;
			*sites_len += rebased_lines(r, NULL);
		}
		*text_len += strlen(r->name) + strlen(r->path) + 2 * 11 + 5 +
			     (r->why ? strlen(r->why) : 0);
	}
	*total_count = base;
}

uint64_t mn_units_copy_sites(char *dst)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < units.n; i++) {
		const struct unit_row *r = &units.row[i];

		if (r->why)
			continue;
		n += rebased_lines(r, dst + n);
	}
	return n;
}

uint64_t mn_units_copy_text(char *dst, uint64_t cap)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < units.n && n < cap; i++) {
		const struct unit_row *r = &units.row[i];
		int k = snprintf(dst + n, cap - n, "%s\t%s\t%u\t%u\t%s\n", r->name, r->path,
				 r->why ? 0 : r->base + 1,
				 r->why ? 0 : r->base + r->u->site_count, r->why ? r->why : "");

		if (k < 0 || (uint64_t)k >= cap - n)
			break;
		n += (uint64_t)k;
	}
	return n;
}

void mn_units_start(bool verbose)
{
	mn_store_release(&units.started, 1);
	for (unsigned i = 0; i < units.n; i++) {
		struct unit_row *r = &units.row[i];

		if (verbose && r->why)
			dprintf(STDERR_FILENO, "mnemo: library %s not profiled: %s\n", r->path,
				r->why);
		else if (verbose)
			dprintf(STDERR_FILENO, "mnemo: library %s: sites %u..%u\n", r->path,
				r->base + 1, r->base + r->u->site_count);
		if (r->why)
			continue;
		r->u->thread_site = __mnemo_thread_site;
		r->u->acquire = __mnemo_acquire;
		r->u->release = __mnemo_release;
		/* Turns the unit's callbacks on; before its globals, which they send. */
		mn_store_release(r->u->base, r->base);
		if (r->u->register_globals)
			r->u->register_globals();
	}
}

/* Appends s to buf at *n, within len.  Async-signal-safe. */
static void put(char *buf, size_t len, size_t *n, const char *s)
{
	while (*s && *n < len)
		buf[(*n)++] = *s++;
}

size_t mn_units_reason(char *buf, size_t len)
{
	size_t n = 0;

	for (unsigned i = 0; i < units.n; i++) {
		const struct unit_row *r = &units.row[i];

		if (!r->why)
			continue;
		put(buf, len, &n, n ? "; library " : "library ");
		put(buf, len, &n, r->name);
		put(buf, len, &n, " not profiled: ");
		put(buf, len, &n, r->why);
	}
	if (units.lost)
		put(buf, len, &n, n ? "; libraries beyond 64 not profiled" :
			"libraries beyond 64 not profiled");
	return n;
}
