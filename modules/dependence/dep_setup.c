/*
 * The dependence module's setup: its settings (README), init and fini, and the module itself
 * (struct mn_module).  The section (emit, restore, merge) is dep_io.c's.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dep.h"

/* ---- Setup and merge ---------------------------------------------------------------------- */

/* MNEMO_DEP_LOOP (README rule 8): a loop site id, or file:line with the file as in the site table
 * or its last path components.  Marks every loop it names as a target; -EINVAL for none. */
static int target_resolve(struct dep *d, const struct mn_run *run, const char *want)
{
	const char *colon = strrchr(want, ':');
	char *end;
	unsigned long line = strtoul(colon ? colon + 1 : want, &end, 10);
	size_t flen = colon ? (size_t)(colon - want) : 0;
	unsigned found = 0;

	for (uint32_t id = 1; *want && !*end && id <= mn_run_site_count(run); id++) {
		const struct mn_run_site *rs = mn_run_site(run, id);
		size_t len = strlen(rs->file);
		struct site *s;

		if (strcmp(rs->kind, "loop") || (colon ? rs->line != line : id != line))
			continue;
		if (colon && (len < flen || memcmp(rs->file + len - flen, want, flen) ||
			      (len > flen && rs->file[len - flen - 1] != '/')))
			continue;
		if (!(s = mn_sitevec_get(&d->sites, id)))
			return -ENOMEM;
		s->target = true;
		found++;
	}
	if (!found)
		fprintf(stderr, "mnemo: dependence: MNEMO_DEP_LOOP=%s names no loop (give a loop "
			"site id or file:line)\n", want);
	d->target_mode = true;
	return found ? 0 : -EINVAL;
}

/* With several workers: which pages are this worker's (on_span()). */
static void dep_shard_worker(void *st, unsigned id, unsigned nworkers)
{
	struct dep *d = st;

	d->wid = id;
	d->nw = nworkers;
}

/* For the driver's prefetch of each access's word (module.h); NULL if it could not be had. */
static struct mn_shadow *dep_shadow(void *st)
{
	return ((struct dep *)st)->sh;
}

static void dep_fini(void *st)
{
	struct dep *d = st;

	for (unsigned i = 0; i < d->loop_cap; i++) {
		mn_starts_free(&d->loops[i].starts);
		free(d->loops[i].outer);
		free(d->loops[i].outer_used);
	}
	free(d->loops);
	mn_rows_free(&d->deps);
	mn_spans_free(&d->span_rows);
	mn_accesses_free(&d->acc);
	mn_sitevec_free(&d->sites);
	mn_shadow_destroy(d->sh);
	mn_ctx_destroy(d->ctx);
	memset(d, 0, sizeof(*d));
}

static int dep_init(void *st, const struct mn_run *run)
{
	struct dep *d = st;
	int err = mn_module_options(&mn_module_dependence, d);

	if (err)
		return err;
	d->run = run;
	d->clock_limit = (uint32_t)d->clock_opt;
	err = mn_rows_memo_use(&d->deps, d->memo, MEMO_BITS);
	if (!err)
		err = mn_ctx_create(&d->ctx, CTX_DEPTH);
	if (!err)
		err = mn_shadow_create(&d->sh, 8, sizeof(struct word));
	if (!err)
		err = mn_sitevec_init(&d->sites, sizeof(struct site), mn_run_site_count(run));
	if (!err && *d->loop_opt)
		err = target_resolve(d, run, d->loop_opt);
	if (err)
		dep_fini(d);
	return err;
}

/* Settings (README); the clock limit is for the tests of clock resets. */
static const struct mn_option dep_options[] = {
	{ "MNEMO_DEP_CONTEXT", MN_OPT_BOOL, offsetof(struct dep, context), "0", 0, 0, NULL,
	  "also key each row by the calling contexts of both accesses" },
	{ "MNEMO_DEP_LOOP", MN_OPT_TEXT, offsetof(struct dep, loop_opt), "", 0, 0, NULL,
	  "only the loops at file:line (a loop site's file, or its last path components) or of a "
	  "loop site id" },
	{ "MNEMO_DEP_CLOCK_LIMIT", MN_OPT_UINT, offsetof(struct dep, clock_opt), "4294967295", 2,
	  4294967295.0, NULL, NULL },
	{ 0 },
};

static const char *const dep_settings[] = { "granularity", "context", "target", NULL };

const struct mn_module mn_module_dependence = {
	.name = "dependence",
	.doc = "memory dependences per loop (raw/war/waw), loop-carried or not, with distances",
	.state_size = sizeof(struct dep),
	.shard = MN_SHARD_ADDRESS,
	.shard_shift = PAGE_SHIFT,
	.init = dep_init,
	.fini = dep_fini,
	.load = dep_load,
	.store = dep_store,
	.func_entry = dep_func_entry,
	.func_exit = dep_func_exit,
	.loop_invoke = dep_loop_invoke,
	.loop_iter = dep_loop_iter,
	.loop_exit = dep_loop_exit,
	.loop_summary = dep_loop_summary,
	.shard_worker = dep_shard_worker,
	.shadow = dep_shadow,
	.merge = dep_merge,
	.emit = dep_emit,
	.restore = dep_restore,
	.settings = dep_settings,
	.options = dep_options,
};
