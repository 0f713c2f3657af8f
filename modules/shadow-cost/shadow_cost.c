/*
 * shadow-cost: for every load and store, writes the 8 bytes of shadow memory (backend/shadow.h) of
 * the 8-byte word holding the access's first byte: the last site that accessed the word and how
 * many times it was accessed.  It answers no question about the program: it exists so that the
 * bench harness's peak RSS under it is the backend's cost of shadow memory alone (shadow at ratio
 * 1 plus the backend's constant).  Schema: README.md.
 *
 * The section's numbers are exact and do not depend on the number of workers: workers own
 * addresses by 4 KiB page (shard_shift 12), each word's accesses all reach its page's owner, and
 * merge() adds counts of disjoint words.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "backend.h"
#include "module.h"
#include "shadow.h"

/* One 8-byte word's shadow. */
struct word {
	uint32_t site;	  /* the last load or store site that accessed the word */
	uint32_t touches; /* accesses to it, saturating */
};

struct shadow_cost {
	struct mn_shadow *sh;
	uint64_t loads, stores;
	uint64_t words;	  /* distinct words accessed: shadow words whose touches left 0 */
	uint64_t aliased; /* aliased lookups of merged-in workers; this one's are in sh */
	/* Restored from a profile (`mnemo merge`): the run's shadow configuration, written
	 * instead of sh's (a setting: merged profiles all have the same). */
	bool restored;
	uint64_t granule_bytes, meta_bytes, fold_bits;
};

static int sc_init(void *st, const struct mn_run *run)
{
	struct shadow_cost *s = st;
	int ret = mn_shadow_create(&s->sh, 8, sizeof(struct word));

	if (!ret && mn_run_verbose(run))
		fprintf(stderr,
			"mnemo: shadow-cost: %u-bit fold, %llu GiB of address space reserved\n",
			mn_shadow_fold_bits(s->sh),
			(unsigned long long)(mn_shadow_reserved_bytes(s->sh) >> 30));
	return ret;
}

static void sc_fini(void *st)
{
	mn_shadow_destroy(((struct shadow_cost *)st)->sh);
}

static inline void touch(struct shadow_cost *s, uint32_t site, uint64_t addr)
{
	struct word *w = mn_shadow_get(s->sh, addr);

	if (!w)
		return; /* an alias: counted by the shadow, reported as aliased */
	s->words += !w->touches;
	w->site = site;
	w->touches += w->touches != UINT32_MAX;
}

static void sc_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	struct shadow_cost *s = st;

	s->loads++;
	touch(s, site, addr);
}

static void sc_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	struct shadow_cost *s = st;

	s->stores++;
	touch(s, site, addr);
}

static void sc_merge(void *into_, void *from_)
{
	struct shadow_cost *into = into_, *from = from_;

	into->loads += from->loads;
	into->stores += from->stores;
	into->words += from->words;
	into->aliased += from->aliased + mn_shadow_aliases(from->sh);
}

/*
 * `mnemo merge`: another run's counts add (README, "Merging"); words_touched of several runs is
 * the sum of each run's distinct words.  The same sums as sc_merge() makes of workers.
 */
static int sc_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *section,
		      char *err, size_t errlen)
{
	struct shadow_cost *s = st;
	const struct mn_pnode *sh, *acc;
	int ret = 0;

	sh = mn_pfield_node(prof, section, "shadow", MN_PNODE_MAP, err, errlen);
	acc = mn_pfield_node(prof, section, "accesses", MN_PNODE_MAP, err, errlen);
	if (!sh || !acc)
		return -EINVAL;
	if ((ret = mn_pfield_u64(prof, sh, "granule_bytes", &s->granule_bytes, err, errlen)) ||
	    (ret = mn_pfield_u64(prof, sh, "meta_bytes", &s->meta_bytes, err, errlen)) ||
	    (ret = mn_pfield_u64(prof, sh, "fold_bits", &s->fold_bits, err, errlen)) ||
	    (ret = mn_pfield_u64(prof, acc, "load", &s->loads, err, errlen)) ||
	    (ret = mn_pfield_u64(prof, acc, "store", &s->stores, err, errlen)) ||
	    (ret = mn_pfield_u64(prof, section, "words_touched", &s->words, err, errlen)) ||
	    (ret = mn_pfield_u64(prof, section, "aliased", &s->aliased, err, errlen)))
		return ret == -ENOENT ? -EINVAL : ret;
	s->restored = true;
	return 0;
}

static int sc_emit(void *st, struct mn_prof *p)
{
	struct shadow_cost *s = st;

	mn_prof_map_begin(p);
	mn_prof_key(p, "shadow");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "granule_bytes",
		       s->restored ? s->granule_bytes : mn_shadow_granule_bytes(s->sh));
	mn_prof_kv_u64(p, "meta_bytes", s->restored ? s->meta_bytes : mn_shadow_meta_bytes(s->sh));
	mn_prof_kv_u64(p, "fold_bits", s->restored ? s->fold_bits : mn_shadow_fold_bits(s->sh));
	mn_prof_map_end(p);
	mn_prof_key(p, "accesses");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "load", s->loads);
	mn_prof_kv_u64(p, "store", s->stores);
	mn_prof_map_end(p);
	mn_prof_kv_u64(p, "words_touched", s->words);
	mn_prof_kv_u64(p, "shadow_bytes_written", s->words * sizeof(struct word));
	mn_prof_kv_u64(p, "aliased", s->aliased + mn_shadow_aliases(s->sh));
	mn_prof_map_end(p);
	return 0;
}

/* The shadow's configuration: runs merge only with the same. */
static const char *const sc_settings[] = { "shadow", NULL };

const struct mn_module mn_module_shadow_cost = {
	.name = "shadow-cost",
	.doc = "writes 8 bytes of shadow per word accessed; measures what shadow memory costs the "
	       "backend",
	.state_size = sizeof(struct shadow_cost),
	.shard = MN_SHARD_ADDRESS,
	.shard_shift = 12,
	.thread = mn_thread_sums,   /* counts per word; a word's last site is whichever came last */
	.init = sc_init,
	.fini = sc_fini,
	.load = sc_load,
	.store = sc_store,
	.merge = sc_merge,
	.emit = sc_emit,
	.restore = sc_restore,
	.settings = sc_settings,
};
