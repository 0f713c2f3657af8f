/*
 * null: decodes every event of a dependence profiler's event set and discards it, keeping only a
 * count per event kind.  It exists to measure what the frontend (instrumentation, callbacks, queue)
 * and the backend's decode loop cost, with no analysis on top: the bench harness's "frontend cost"
 * line is the slowdown under this module.  Schema: README.md.
 *
 * Each handler is one increment, so that the backend's share of the cost is decoding and dispatch,
 * not the module.  The counts are exact: a test checks them against programs whose event counts
 * are known by construction.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "module.h"

enum kind {
	LOAD,
	STORE,
	HEAP_ALLOC,
	HEAP_FREE,
	FUNC_ENTRY,
	FUNC_EXIT,
	LOOP_INVOKE,
	LOOP_ITER,
	LOOP_EXIT,
	NKINDS,
};

/* In enum kind order: the section's keys, the catalogue's event names. */
static const char *const kind_name[NKINDS] = {
	"load", "store", "heap_alloc", "heap_free", "func_entry", "func_exit",
	"loop_invoke", "loop_iter", "loop_exit",
};

struct null_state {
	uint64_t count[NKINDS];
	bool restored;   /* from a profile by restore(): a whole run's counts, every kind */
};

static void null_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	((struct null_state *)st)->count[LOAD]++;
}

static void null_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	((struct null_state *)st)->count[STORE]++;
}

static void null_heap_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	((struct null_state *)st)->count[HEAP_ALLOC]++;
}

static void null_heap_free(void *st, uint32_t site, uint64_t addr)
{
	((struct null_state *)st)->count[HEAP_FREE]++;
}

static void null_func_entry(void *st, uint32_t site)
{
	((struct null_state *)st)->count[FUNC_ENTRY]++;
}

static void null_func_exit(void *st, uint32_t site)
{
	((struct null_state *)st)->count[FUNC_EXIT]++;
}

static void null_loop_invoke(void *st, uint32_t site)
{
	((struct null_state *)st)->count[LOOP_INVOKE]++;
}

static void null_loop_iter(void *st, uint32_t site)
{
	((struct null_state *)st)->count[LOOP_ITER]++;
}

static void null_loop_exit(void *st, uint32_t site)
{
	((struct null_state *)st)->count[LOOP_EXIT]++;
}

/*
 * Workers own accesses and heap events by address, so those counts add up; function and loop
 * events reach every worker (module.h), so each worker counted all of them and `into` has them.
 * A restored state is another run (`mnemo merge`): all of its counts add.
 */
/*
 * A loop summary counts what its expansion would have: the loop's three events (null declares
 * them, so the wire sends them) and each access once per iteration.  O(accesses), where the
 * expansion costs O(accesses x iterations): null then measures the frontend, not the expansion.
 */
static void null_loop_summary(void *st, uint32_t site, uint64_t iterations,
			      const struct mn_summary_access *acc, unsigned n)
{
	struct null_state *s = st;

	s->count[LOOP_INVOKE]++;
	s->count[LOOP_ITER] += iterations;
	s->count[LOOP_EXIT]++;
	for (unsigned j = 0; j < n; j++)
		s->count[acc[j].store ? STORE : LOAD] += iterations;
}

static void null_merge(void *into_, void *from_)
{
	struct null_state *into = into_, *from = from_;
	unsigned last = from->restored ? NKINDS - 1 : HEAP_FREE;

	for (unsigned k = LOAD; k <= last; k++)
		into->count[k] += from->count[k];
}

static int null_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *section,
			char *err, size_t errlen)
{
	struct null_state *n = st;
	const struct mn_pnode *counts = mn_pfield_node(prof, section, "counts", MN_PNODE_MAP, err,
						       errlen);
	int ret;

	if (!counts)
		return -EINVAL;
	for (unsigned k = 0; k < NKINDS; k++)
		if ((ret = mn_pfield_u64(prof, counts, kind_name[k], &n->count[k], err, errlen)))
			return ret == -ENOENT ? -EINVAL : ret;
	n->restored = true;
	return 0;
}

static int null_emit(void *st, struct mn_prof *p)
{
	struct null_state *n = st;

	mn_prof_map_begin(p);
	mn_prof_key(p, "counts");
	mn_prof_map_begin(p);
	for (unsigned k = 0; k < NKINDS; k++)
		mn_prof_kv_u64(p, kind_name[k], n->count[k]);
	mn_prof_map_end(p);
	mn_prof_map_end(p);
	return 0;
}

/* Counts only: a mixed loop's accesses may come in any order. */
static bool null_mixed_whole(const void *st)
{
	return true;
}

/* Counts only: nothing kept per thread. */
static void null_thread(void *st, uint32_t thread)
{
}

const struct mn_module mn_module_null = {
	.name = "null",
	.doc = "counts events and discards them; measures the frontend and queue cost",
	.state_size = sizeof(struct null_state),
	.shard = MN_SHARD_ADDRESS,
	.shard_shift = 3,
	.thread = null_thread,   /* counts only */
	.load = null_load,
	.store = null_store,
	.heap_alloc = null_heap_alloc,
	.heap_free = null_heap_free,
	.func_entry = null_func_entry,
	.func_exit = null_func_exit,
	.loop_invoke = null_loop_invoke,
	.loop_iter = null_loop_iter,
	.loop_exit = null_loop_exit,
	.loop_summary = null_loop_summary,
	.mixed_whole = null_mixed_whole,
	.merge = null_merge,
	.emit = null_emit,
	.restore = null_restore,
};
