/*
 * objrel-derived-check: LEAP's derived profiles (`mnemo derive`, modules/object-relative/derive.h)
 * against the exact ones, over one recorded event stream (bench/queue/recording.h) of a program
 * built for object-relative and dependence (so that loads and stores carry their sizes).
 *
 *	objrel-derived-check [--stack] [--verbose] RECORDING
 *
 * The derived side: the object-relative module driven over the recording through the backend's
 * decoder (mn_worker_run), its section emitted with the profile writer, read back as `mnemo
 * derive` reads it (objrel_load), and derived.  --stack sets MNEMO_OBJREL_STACK=1 for it.
 *
 * The exact side, from the raw stream and sharing no code with the module:
 *  - dependences by the dependence module's rule (modules/dependence/README.md): every 8-byte
 *    word an access covers (on its first 4 KiB page) keeps its last store; a load depends on
 *    the last store of each word it reads, once per execution; a pair's frequency is the load's
 *    executions that depend on the store over all its executions;
 *  - strides: the offset difference between consecutive executions of an instruction that fall
 *    in the same live object (a sorted array of live objects, as objrel-lossless-ref keeps; stack
 *    objects with --stack); an instruction is strongly strided when one non-zero stride covers at
 *    least 70% of its executions;
 *  - loop summaries and mixed loops expanded into the accesses they stand for as
 *    objrel-lossless-ref expands them (ref_summaries.h).
 *
 * Prints one line: the dependence pairs (every pair either side has), how many have exactly the
 * right number of conflicts and how many a frequency within 0.10 of the exact one (the paper's
 * "off by no more than 10%", Figure 6); the strongly strided instructions, how many the derived
 * profile identifies with the same stride (the paper's 88%), and how many more it claims.
 * --verbose lists every pair and instruction that differs.  Exit status 0, or 2 on a usage or
 * input error.  The figures are measurements, not pass/fail: the LMADs are lossy by design.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_internal.h"
#include "derive.h"
#include "module.h"
#include "objrel_load.h"
#include "profile.h"
#include "recording.h"
#include "ref_objects.h"
#include "ref_summaries.h"

#define PROG "objrel-derived-check"
#define PAGE 4096

extern const struct mn_module mn_module_object_relative;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, PROG ": ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory");
	return p;
}

/* The live objects: ref_objects.h, each new object hiding what it overlaps. */
static struct ref_objects objs = { .hide = true };

/* ---- The exact side: per instruction, per pair, per word ------------------------------------- */

struct tally {
	int64_t stride;
	uint64_t count;
};

struct insn {
	bool seen, store, have_prev;
	uint64_t execs;
	uint32_t prev_group;
	uint64_t prev_serial, prev_offset;
	struct tally *t;         /* its strides within objects and their counts */
	size_t nt;
};

static struct insn *insns;
static size_t ninsns;

static struct insn *insn_get(uint32_t site)
{
	if (site >= ninsns) {
		size_t n = 2 * (size_t)site + 16;

		insns = xrealloc(insns, n * sizeof(*insns));
		memset(insns + ninsns, 0, (n - ninsns) * sizeof(*insns));
		ninsns = n;
	}
	return &insns[site];
}

struct word {
	uint64_t word;           /* + 1; 0: empty */
	uint32_t store;
};

static struct word *words_v;
static size_t nwords_used, nwords_cap;

static struct word *word_slot(struct word *v, size_t cap, uint64_t w)
{
	size_t i = (size_t)((w + 1) * 0x9e3779b97f4a7c15u >> 20) & (cap - 1);

	while (v[i].word && v[i].word != w + 1)
		i = (i + 1) & (cap - 1);
	return &v[i];
}

static struct word *word_get(uint64_t w)
{
	struct word *s;

	if (2 * (nwords_used + 1) > nwords_cap) {
		size_t cap = nwords_cap ? 2 * nwords_cap : 1 << 16;
		struct word *v = xcalloc(cap, sizeof(*v));

		for (size_t i = 0; i < nwords_cap; i++)
			if (words_v[i].word)
				*word_slot(v, cap, words_v[i].word - 1) = words_v[i];
		free(words_v);
		words_v = v;
		nwords_cap = cap;
	}
	s = word_slot(words_v, nwords_cap, w);
	if (!s->word) {
		s->word = w + 1;
		nwords_used++;
	}
	return s;
}

struct pair {
	uint32_t store, load;
	uint64_t exact;          /* the load's executions that depended on the store */
	double derived;          /* the derived frequency */
	uint64_t stamp;          /* the load execution that last counted it */
};

static struct pair *pairs;
static size_t npairs, cappairs;
static uint32_t *pair_index;     /* open addressing: index + 1 into pairs, 0: empty */
static size_t index_cap;

static size_t pair_hash(uint32_t store, uint32_t load, size_t cap)
{
	return (size_t)((((uint64_t)store << 32 | load) + 1) * 0x9e3779b97f4a7c15u >> 24) &
	       (cap - 1);
}

static struct pair *pair_get(uint32_t store, uint32_t load)
{
	size_t i;

	if (2 * (npairs + 1) > index_cap) {
		index_cap = index_cap ? 2 * index_cap : 1024;
		free(pair_index);
		pair_index = xcalloc(index_cap, sizeof(*pair_index));
		for (size_t k = 0; k < npairs; k++) {
			for (i = pair_hash(pairs[k].store, pairs[k].load, index_cap); pair_index[i];
			     i = (i + 1) & (index_cap - 1))
				;
			pair_index[i] = (uint32_t)k + 1;
		}
	}
	for (i = pair_hash(store, load, index_cap); pair_index[i]; i = (i + 1) & (index_cap - 1)) {
		struct pair *p = &pairs[pair_index[i] - 1];

		if (p->store == store && p->load == load)
			return p;
	}
	if (npairs == cappairs) {
		cappairs = cappairs ? 2 * cappairs : 256;
		pairs = xrealloc(pairs, cappairs * sizeof(*pairs));
	}
	pairs[npairs] = (struct pair){ .store = store, .load = load };
	pair_index[i] = (uint32_t)++npairs;
	return &pairs[npairs - 1];
}

static uint64_t load_execs_stamp;

static void tally(struct insn *in, int64_t stride)
{
	for (size_t i = 0; i < in->nt; i++)
		if (in->t[i].stride == stride) {
			in->t[i].count++;
			return;
		}
	in->t = xrealloc(in->t, (in->nt + 1) * sizeof(*in->t));
	in->t[in->nt++] = (struct tally){ stride, 1 };
}

static void on_access(uint32_t site, uint64_t addr, uint64_t size, bool store)
{
	struct insn *in = insn_get(site);
	uint64_t end = addr + (size ? size : 1), page_end = (addr / PAGE + 1) * PAGE;
	struct ref_obj *o = ref_find(&objs, addr);

	in->seen = true;
	in->store = store;
	in->execs++;
	if (o) {
		uint64_t off = addr - o->addr;

		if (in->have_prev && in->prev_group == o->group && in->prev_serial == o->serial &&
		    off != in->prev_offset)
			tally(in, (int64_t)(off - in->prev_offset));
		in->have_prev = true;
		in->prev_group = o->group;
		in->prev_serial = o->serial;
		in->prev_offset = off;
	} else {
		in->have_prev = false;
	}
	if (end > page_end)
		end = page_end;
	load_execs_stamp++;
	for (uint64_t w = addr / 8; w * 8 < end; w++) {
		struct word *m = word_get(w);

		if (store) {
			m->store = site;
		} else if (m->store) {
			struct pair *p = pair_get(m->store, site);

			if (p->stamp != load_execs_stamp) {   /* once per execution */
				p->stamp = load_execs_stamp;
				p->exact++;
			}
		}
	}
}

/* An access a loop summary stands for (ref_summaries.h). */
static void on_summarized(void *ctx, uint32_t site, uint64_t addr, uint64_t size, bool store)
{
	(void)ctx;
	on_access(site, addr, size, store);
}

static void exact_run(const struct mn_wire *wire, const uint64_t *w, size_t n, bool stack)
{
	struct ref_summaries sums = { 0 };

	objs.stack = stack;
	for (size_t i = 0; i < n;) {
		const uint64_t *rec = w + i;
		unsigned code = rec[0] & 0xff;
		uint64_t at;

		if (!rec[0]) {
			i++;
			continue;
		}
		if (code >= MN_WIRE_MAX_EVENTS || !wire->nwords[code] || wire->nwords[code] > n - i)
			die("corrupt record at word %zu", i);
		i += wire->nwords[code];
		if (code == MN_EV_LOAD || code == MN_EV_STORE) {
			on_access((uint32_t)mn_wire_get(wire, rec, code, 0),
				  mn_wire_get(wire, rec, code, 1), mn_wire_get(wire, rec, code, 3),
				  code == MN_EV_STORE);
		} else if (ref_is_summary(code)) {
			if (!ref_summary_event(&sums, wire, rec, code, on_summarized, NULL))
				die("the loop summary record at word %zu does not fit the records "
				    "before it (too few accesses pending, or no such mixed loop "
				    "open)", i - wire->nwords[code]);
		} else {
			ref_objects_event(&objs, wire, rec, code, &at);   /* hides: never refused */
		}
	}
	if (sums.n)
		die("the recording ends with %zu summarized accesses no loop_summary closed",
		    sums.n);
	if (sums.nm)
		die("the recording ends inside %zu mixed loops", sums.nm);
	ref_summaries_free(&sums);
}

/* ---- The derived side --------------------------------------------------------------------- */

static void module_profile(const struct mn_wire *wire, const uint64_t *words, size_t nwords,
			   char *path)
{
	const struct mn_module *m = &mn_module_object_relative;
	struct mn_worker w = { .mod = m, .id = 0, .nworkers = 1 };
	struct mn_decode_stats st = { 0 };
	struct mn_prof *p;
	FILE *f = NULL;
	int fd, err;

	w.state = xcalloc(1, m->state_size);
	err = m->init(w.state, NULL);
	if (err)
		die("module init: %s", strerror(-err));
	mn_worker_run(&w, wire, words, nwords, &st);
	mn_worker_finish(&w, &st);
	if (st.corrupt)
		die("the driver found %" PRIu64 " corrupt records", st.corrupt);
	if (st.lost_summaries || st.lost_pending)
		die("the driver lost %" PRIu64 " loop summaries and %" PRIu64 " pending accesses",
		    st.lost_summaries, st.lost_pending);
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		die("cannot make a temporary file: %s", strerror(errno));
	if (mn_prof_open(&p, f))
		die("mn_prof_open failed");
	mn_prof_map_begin(p);
	mn_prof_kv_str(p, "format", MN_PROFILE_FORMAT);
	mn_prof_key(p, "program");
	mn_prof_map_begin(p);
	mn_prof_map_end(p);
	mn_prof_kv_bool(p, "complete", true);
	mn_prof_key(p, "modules");
	mn_prof_map_begin(p);
	mn_prof_key(p, "object-relative");
	err = m->emit(w.state, p);
	mn_prof_map_end(p);
	mn_prof_map_end(p);
	if (err || mn_prof_close(p) || fclose(f))
		die("emit failed (%d)", err);
	m->fini(w.state);
	free(w.state);
}

/* The exact strongest non-zero stride of in, or false for none. */
static bool exact_stride(const struct insn *in, int64_t *stride, uint64_t *count)
{
	size_t best = SIZE_MAX;

	for (size_t k = 0; k < in->nt; k++)
		if (best == SIZE_MAX || in->t[k].count > in->t[best].count ||
		    (in->t[k].count == in->t[best].count && in->t[k].stride < in->t[best].stride))
			best = k;
	if (best == SIZE_MAX)
		return false;
	*stride = in->t[best].stride;
	*count = in->t[best].count;
	return true;
}

int main(int argc, char **argv)
{
	struct mn_rec_header h;
	struct mn_wire wire;
	struct objrel_loaded l;
	struct objrel_dep *deps;
	struct objrel_stride *strides;
	struct mn_profile *prof;
	size_t ndeps, nstrides, exact = 0, within = 0, strong = 0, identified = 0, extra = 0;
	char path[] = "/tmp/objrel-derived.XXXXXX", err[1024];
	const char *rec = NULL;
	bool stack = false, verbose = false;
	uint64_t *words;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--stack"))
			stack = true;
		else if (!strcmp(argv[i], "--verbose"))
			verbose = true;
		else if (argv[i][0] != '-' && !rec)
			rec = argv[i];
		else
			die("usage: " PROG " [--stack] [--verbose] RECORDING");
	}
	if (!rec)
		die("usage: " PROG " [--stack] [--verbose] RECORDING");
	f = fopen(rec, "rb");
	if (!f || fread(&h, sizeof(h), 1, f) != 1 || h.magic != MN_REC_MAGIC ||
	    h.version != MN_REC_VERSION || h.header != sizeof(h))
		die("%s: not a version %u recording", rec, MN_REC_VERSION);
	words = xcalloc(h.words, sizeof(*words));
	if (fread(words, 8, h.words, f) != h.words)
		die("%s: short read", rec);
	fclose(f);
	memcpy(wire.nwords, h.nwords, sizeof(wire.nwords));
	memcpy(wire.arg, h.arg, sizeof(wire.arg));
	if (!wire.arg[MN_EV_LOAD][3].bits)
		die("%s: loads carry no size: build the program for object-relative,dependence", rec);

	if (stack)
		setenv("MNEMO_OBJREL_STACK", "1", 1);
	else
		unsetenv("MNEMO_OBJREL_STACK");
	unsetenv("MNEMO_OBJREL_LOSSLESS");
	unsetenv("MNEMO_OBJREL_LMADS");
	module_profile(&wire, words, h.words, path);
	if (mn_profile_open(&prof, path, err, sizeof(err)))
		die("%s", err);
	if (objrel_load(prof, "object-relative", &l, err, sizeof(err)))
		die("%s", err);
	if (objrel_derive_deps(l.insns, l.n, 3, &deps, &ndeps) ||
	    objrel_derive_strides(l.insns, l.n, &strides, &nstrides))
		die("out of memory");
	unlink(path);

	exact_run(&wire, words, h.words, stack);
	for (size_t i = 0; i < ndeps; i++)
		pair_get(deps[i].store, deps[i].load)->derived = objrel_dep_frequency(&deps[i]);
	for (size_t i = 0; i < npairs; i++) {
		const struct pair *p = &pairs[i];
		uint64_t execs = insn_get(p->load)->execs;
		double fe = execs ? (double)p->exact / (double)execs : 0;
		/* Exactly right: the estimate gives the exact count of conflicts. */
		bool same = llround(p->derived * (double)execs) == (long long)p->exact;

		exact += same;
		within += fabs(fe - p->derived) <= 0.10 + 1e-9;
		if (verbose && !same)
			printf("  pair store %" PRIu32 " load %" PRIu32 ": exact %.4f (%" PRIu64
			       " of %" PRIu64 "), derived %.4f\n", p->store, p->load, fe, p->exact,
			       execs, p->derived);
	}
	for (size_t site = 0; site < ninsns; site++) {
		const struct insn *in = &insns[site];
		const struct objrel_stride *d = NULL;
		int64_t stride;
		uint64_t count;
		bool es, ds;

		if (!in->seen)
			continue;
		for (size_t k = 0; k < nstrides; k++)
			if (strides[k].site == site)
				d = &strides[k];
		es = exact_stride(in, &stride, &count) &&
		     (double)count >= OBJREL_STRONG_STRIDE * (double)in->execs;
		ds = d && objrel_strongly_strided(d);
		strong += es;
		identified += es && ds && d->stride == stride;
		extra += ds && !(es && d->stride == stride);
		if (verbose && (es || ds) && !(es && ds && d->stride == stride))
			printf("  site %zu: exact %s%" PRId64 ", derived %s%" PRId64 "\n", site,
			       es ? "strong " : "", es ? stride : 0, ds ? "strong " : "",
			       ds ? d->stride : 0);
	}
	printf("pairs %zu exact %zu (%.1f%%) within10 %zu (%.1f%%); strided %zu identified %zu "
	       "(%.1f%%) extra %zu\n", npairs, exact, npairs ? 100.0 * exact / npairs : 100.0,
	       within, npairs ? 100.0 * within / npairs : 100.0, strong, identified,
	       strong ? 100.0 * identified / strong : 100.0, extra);
	free(deps);
	free(strides);
	objrel_loaded_free(&l);
	mn_profile_close(prof);
	free(words);
	return 0;
}
