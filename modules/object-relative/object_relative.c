/*
 * object-relative: LEAP, the lossy object-relative memory profiler of Wu et al. ("Object-Relative
 * Addressing", sections 2 and 4).  Every load and store address is translated to (instruction,
 * group, object, offset, time); the stream is decomposed vertically by (instruction, group), and
 * each (object, offset) sub-stream is compressed into at most MNEMO_OBJREL_LMADS (default 30)
 * linear descriptors (lmad.h).  Beside it: per-group object counts, bytes and lifetimes, and the
 * paper's sample quality (4.1).  Schema: README.md.
 *
 * Groups: a heap object's group is its allocation site, a global's is its own site (`global`
 * event); objects are numbered within their group from 0 in allocation order.  Time is the
 * module's clock: the number of events it handled before this one (loads, stores, allocations,
 * reallocations, frees, globals, and with MNEMO_OBJREL_STACK=1 stack objects).  Stack objects are
 * tracked only on request: most programs' stack traffic is spills and locals whose objects live for
 * one call, which multiply objects without exposing regularity; without it their accesses are
 * unattributed.
 *
 * Lossless mode (MNEMO_OBJREL_LOSSLESS=1; WHOMP, the paper's section 3): beside the LMADs, the
 * translated stream is decomposed horizontally into four streams (instruction site, group, object,
 * offset), each appended to a Sequitur grammar (sequitur.h), and the raw addresses of the same
 * accesses to a fifth one for comparison.  Unattributed accesses are left out of all five and
 * counted.  `mnemo expand` (tools/expand.c) reads the grammars back.
 *
 * One worker (shard: none): an object's accesses come from every instruction, so a split by site
 * would need every worker to track every object, and a split by address would cut streams.
 */
#define _GNU_SOURCE   /* open_memstream */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "lmad.h"
#include "module.h"
#include "objects.h"
#include "sequitur.h"
#include "sitevec.h"

#define LMADS_ENV "MNEMO_OBJREL_LMADS"
#define LOSSLESS_ENV "MNEMO_OBJREL_LOSSLESS"
#define STACK_ENV "MNEMO_OBJREL_STACK"
#define LMADS_MAX 1000000u

/* A group's kind is its objects' (objects.h). */
static const char *const kind_names[] = {
	[MN_OBJ_HEAP] = "heap", [MN_OBJ_STACK] = "stack", [MN_OBJ_GLOBAL] = "global"
};

struct group {
	uint32_t site;
	bool seen;
	enum mn_obj_kind kind;
	uint64_t objects, bytes;     /* objects made, sum of their sizes when made */
	uint64_t *life;              /* lifetimes of its objects so far (freed, then live at end) */
	size_t nlife, alife;
};

struct stream {
	uint32_t group;
	struct objrel_lmads l;
};

struct insn {
	uint32_t site;
	bool store;
	uint64_t accesses, unattributed;
	struct stream *s;            /* s[0..n): one per group it touched, in order of first touch */
	uint32_t n, alloc;
	uint32_t last;               /* index of the stream used last: the cheap guess */
};

/* The horizontal streams of lossless mode, in the order of the profile's `lossless.streams`. */
enum { LL_INSN, LL_GROUP, LL_OBJECT, LL_OFFSET, LL_STREAMS };

static const char *const ll_names[LL_STREAMS] = { "instruction", "group", "object", "offset" };

struct lossless {
	struct mn_seq *g[LL_STREAMS];  /* the four streams' grammars */
	struct mn_seq *raw;            /* the raw addresses of the same accesses */
	uint64_t unattributed;         /* accesses left out: no object holds their address */
	bool broken;                   /* an append failed: appending stopped, the streams end early */
};

struct objrel {
	struct mn_objects objs;
	struct lossless *ll;         /* NULL unless MNEMO_OBJREL_LOSSLESS=1 */
	struct mn_sitevec groups;    /* struct group by site id */
	struct mn_sitevec insns;     /* struct insn by site id */
	uint64_t clock;
	uint32_t limit;              /* LMADs per (instruction, group) */
	bool stack;                  /* MNEMO_OBJREL_STACK=1: stack objects are objects */
	uint64_t nomem;              /* events dropped for lack of memory */
	uint64_t unknown_frees;      /* frees and reallocs of addresses no object starts at */
};

static struct group *group_get(struct objrel *r, uint32_t site)
{
	struct group *g = mn_sitevec_get(&r->groups, site);

	if (g) {
		g->site = site;
		g->seen = true;
	}
	return g;
}

static void life_add(struct objrel *r, struct group *g, uint64_t life)
{
	if (g->nlife == g->alife) {
		size_t a = g->alife ? 2 * g->alife : 8;
		uint64_t *v = realloc(g->life, a * sizeof(*v));

		if (!v) {
			r->nomem++;
			return;
		}
		g->life = v;
		g->alife = a;
	}
	g->life[g->nlife++] = life;
}

static void new_object(struct objrel *r, uint32_t site, uint64_t addr, uint64_t size,
		       enum mn_obj_kind kind)
{
	struct group *g = group_get(r, site);

	if (!g || !mn_objects_alloc(&r->objs, &(struct mn_obj){ .addr = addr, .size = size,
			.kind = kind, .group = site, .serial = g->objects, .born = r->clock })) {
		r->nomem++;
		return;
	}
	g->kind = kind;
	g->objects++;
	g->bytes += size;
}

static void end_object(struct objrel *r, uint32_t s)
{
	struct mn_obj *x = mn_obj(&r->objs, s);
	struct group *g = mn_sitevec_find(&r->groups, x->group);

	if (g)
		life_add(r, g, r->clock - x->born);
}

static void or_heap_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	struct objrel *r = st;

	new_object(r, site, addr, size, MN_OBJ_HEAP);
	r->clock++;
}

static void or_global(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	struct objrel *r = st;

	new_object(r, site, addr, size, MN_OBJ_GLOBAL);
	r->clock++;
}

static void or_heap_realloc(void *st, uint32_t site, uint64_t old_addr, uint64_t addr,
			    uint64_t size)
{
	struct objrel *r = st;
	uint32_t s = old_addr ? mn_objects_at(&r->objs, old_addr) : 0;

	if (s)
		mn_objects_move(&r->objs, s, addr, size);
	else {
		if (old_addr)
			r->unknown_frees++;
		new_object(r, site, addr, size, MN_OBJ_HEAP);
	}
	r->clock++;
}

static void or_heap_free(void *st, uint32_t site, uint64_t addr)
{
	struct objrel *r = st;
	uint32_t s;

	if (addr) {
		s = mn_objects_at(&r->objs, addr);
		if (s) {
			end_object(r, s);
			mn_objects_release(&r->objs, s);
		} else {
			r->unknown_frees++;
		}
	}
	r->clock++;
}

/*
 * A stack object whose free never came (longjmp, an exception through frames without cleanups)
 * is ended when a new one starts at its address, so its slot does not stay live forever.
 */
static void or_stack_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	struct objrel *r = st;
	uint32_t s;

	if (!r->stack)
		return;
	s = mn_objects_at(&r->objs, addr);
	if (s) {
		end_object(r, s);
		mn_objects_release(&r->objs, s);
	}
	new_object(r, site, addr, size, MN_OBJ_STACK);
	r->clock++;
}

static void or_stack_free(void *st, uint32_t site, uint64_t addr)
{
	struct objrel *r = st;
	uint32_t s;

	if (!r->stack)
		return;
	s = mn_objects_at(&r->objs, addr);
	if (s) {
		end_object(r, s);
		mn_objects_release(&r->objs, s);
	}
	r->clock++;
}

static struct stream *stream_of(struct objrel *r, struct insn *in, uint32_t group)
{
	struct stream *s;

	if (in->n && in->s[in->last].group == group)
		return &in->s[in->last];
	for (uint32_t i = 0; i < in->n; i++)
		if (in->s[i].group == group) {
			in->last = i;
			return &in->s[i];
		}
	if (in->n == in->alloc) {
		uint32_t a = in->alloc ? 2 * in->alloc : 2;

		s = realloc(in->s, (size_t)a * sizeof(*s));
		if (!s)
			return NULL;
		in->s = s;
		in->alloc = a;
	}
	s = &in->s[in->n];
	s->group = group;
	objrel_lmads_init(&s->l, r->limit);
	in->last = in->n++;
	return s;
}

/*
 * Lossless mode: one access to every grammar.  All memory an append needs is reserved before it
 * changes anything, but a failure after the first grammar took the access would leave the streams
 * of unequal lengths; so the first failure stops every append (`complete: false`).
 */
static void lossless_add(struct objrel *r, uint32_t site, uint64_t addr,
			 const struct mn_obj *x)
{
	struct lossless *ll = r->ll;
	uint64_t v[LL_STREAMS] = { site, x->group, x->serial, addr - x->addr };

	if (ll->broken)
		return;
	for (int i = 0; i < LL_STREAMS; i++)
		if (mn_seq_append(ll->g[i], v[i])) {
			ll->broken = true;
			return;
		}
	if (mn_seq_append(ll->raw, addr))
		ll->broken = true;
}

/* The one handler behind load and store: translate, decompose, compress. */
static void on_access(struct objrel *r, uint32_t site, uint64_t addr, bool store)
{
	struct insn *in = mn_sitevec_get(&r->insns, site);
	uint64_t t = r->clock++;
	struct mn_obj *x;
	struct stream *s;
	uint32_t slot;
	uint64_t p[OBJREL_LMAD_DIMS];

	if (!in) {
		r->nomem++;
		return;
	}
	in->site = site;
	in->store = store;
	in->accesses++;
	slot = mn_objects_find(&r->objs, addr);
	if (!slot) {
		in->unattributed++;
		if (r->ll)
			r->ll->unattributed++;
		return;
	}
	x = mn_obj(&r->objs, slot);
	if (r->ll)
		lossless_add(r, site, addr, x);
	s = stream_of(r, in, x->group);
	if (!s) {
		r->nomem++;
		return;
	}
	p[0] = x->serial;
	p[1] = addr - x->addr;
	objrel_lmads_add(&s->l, p, t);
}

static void or_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, false);
}

static void or_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, true);
}

/* MNEMO_OBJREL_LMADS: a count from 1 to LMADS_MAX, else the default. */
static uint32_t lmad_limit(void)
{
	const char *e = getenv(LMADS_ENV);
	char *end;
	unsigned long v;

	if (!e || !*e)
		return OBJREL_LMAD_LIMIT;
	v = strtoul(e, &end, 10);
	return *end || v < 1 || v > LMADS_MAX ? OBJREL_LMAD_LIMIT : (uint32_t)v;
}

static void lossless_free(struct lossless *ll)
{
	if (!ll)
		return;
	for (int i = 0; i < LL_STREAMS; i++)
		mn_seq_destroy(ll->g[i]);
	mn_seq_destroy(ll->raw);
	free(ll);
}

/* MNEMO_OBJREL_LOSSLESS=1: the grammars in *llp; otherwise NULL.  0 or -ENOMEM. */
static int lossless_init(struct lossless **llp)
{
	const char *e = getenv(LOSSLESS_ENV);
	struct lossless *ll;
	int err = 0;

	*llp = NULL;
	if (!e || strcmp(e, "1"))
		return 0;
	ll = calloc(1, sizeof(*ll));
	if (!ll)
		return -ENOMEM;
	for (int i = 0; i < LL_STREAMS && !err; i++)
		err = mn_seq_create(&ll->g[i]);
	if (!err)
		err = mn_seq_create(&ll->raw);
	if (err) {
		lossless_free(ll);
		return err;
	}
	*llp = ll;
	return 0;
}

static int or_init(void *st, const struct mn_run *run)
{
	struct objrel *r = st;
	uint32_t nsites = run ? mn_run_site_count(run) : 0;
	int err;

	r->limit = lmad_limit();
	r->stack = getenv(STACK_ENV) && !strcmp(getenv(STACK_ENV), "1");
	err = lossless_init(&r->ll);
	if (err)
		return err;
	err = mn_objects_init(&r->objs);
	if (err) {
		lossless_free(r->ll);
		return err;
	}
	if (mn_sitevec_init(&r->groups, sizeof(struct group), nsites) ||
	    mn_sitevec_init(&r->insns, sizeof(struct insn), nsites)) {
		mn_sitevec_free(&r->groups);
		mn_objects_free(&r->objs);
		lossless_free(r->ll);
		return -ENOMEM;
	}
	return 0;
}

static void or_fini(void *st)
{
	struct objrel *r = st;
	struct group *g;
	struct insn *in;

	MN_SITEVEC_FOREACH(&r->groups, id, g)
		free(g->life);
	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		for (uint32_t i = 0; i < in->n; i++)
			objrel_lmads_free(&in->s[i].l);
		free(in->s);
	}
	mn_sitevec_free(&r->groups);
	mn_sitevec_free(&r->insns);
	mn_objects_free(&r->objs);
	lossless_free(r->ll);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int by_group(const void *a, const void *b)
{
	uint32_t x = ((const struct stream *)a)->group, y = ((const struct stream *)b)->group;

	return x < y ? -1 : x > y;
}

static void emit_lmad(struct mn_prof *p, const struct objrel_lmad *l)
{
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "object", l->start[0]);
	mn_prof_kv_u64(p, "offset", l->start[1]);
	mn_prof_kv_i64(p, "object_stride", l->stride[0]);
	mn_prof_kv_i64(p, "offset_stride", l->stride[1]);
	mn_prof_kv_u64(p, "count", l->count);
	mn_prof_kv_u64(p, "first_time", l->first);
	mn_prof_kv_u64(p, "last_time", l->last);
	mn_prof_map_end(p);
}

static void emit_stream(struct mn_prof *p, const struct stream *s)
{
	const struct objrel_lmads *l = &s->l;

	mn_prof_map_begin(p);
	mn_prof_kv_site(p, "group", s->group);
	mn_prof_kv_u64(p, "accesses", l->points);
	mn_prof_kv_u64(p, "captured", l->captured);
	mn_prof_kv_bool(p, "full", l->full);
	mn_prof_kv_u64(p, "object_min", l->min[0]);
	mn_prof_kv_u64(p, "object_max", l->max[0]);
	mn_prof_kv_u64(p, "object_granularity", l->gran[0]);
	mn_prof_kv_u64(p, "offset_min", l->min[1]);
	mn_prof_kv_u64(p, "offset_max", l->max[1]);
	mn_prof_kv_u64(p, "offset_granularity", l->gran[1]);
	mn_prof_key(p, "lmads");
	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < l->n; i++)
		emit_lmad(p, &l->v[i]);
	mn_prof_seq_end(p);
	mn_prof_map_end(p);
}

/* One rule as the text mn_seq_write() writes for it ("R1 -> 18 3 R2"), as a string of the list. */
static int emit_rule(void *arg, uint64_t id, const struct mn_seq_sym *rhs, size_t n)
{
	struct mn_prof *p = arg;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "R%" PRIu64 " ->", id);
	for (size_t i = 0; i < n; i++)
		fprintf(f, rhs[i].rule ? " R%" PRIu64 : " %" PRIu64, rhs[i].value);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	mn_prof_str(p, text);
	free(text);
	return 0;
}

/* A grammar whose rules could not all be listed (no memory) has a list that does not parse or
 * does not give `length` symbols: `mnemo expand` refuses it. */
static void emit_grammar(struct mn_prof *p, const char *name, struct mn_seq *g)
{
	mn_prof_key(p, name);
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "length", mn_seq_length(g));
	mn_prof_kv_u64(p, "rules", mn_seq_rules_count(g));
	mn_prof_kv_u64(p, "size", mn_seq_size(g));
	mn_prof_key(p, "grammar");
	mn_prof_seq_begin(p);
	mn_seq_rules(g, emit_rule, p);
	mn_prof_seq_end(p);
	mn_prof_map_end(p);
}

static void emit_lossless(struct mn_prof *p, struct objrel *r)
{
	struct lossless *ll = r->ll;
	uint64_t total = 0, raw = mn_seq_size(ll->raw);

	for (int i = 0; i < LL_STREAMS; i++)
		total += mn_seq_size(ll->g[i]);
	mn_prof_key(p, "lossless");
	mn_prof_map_begin(p);
	mn_prof_kv_bool(p, "complete", !ll->broken);
	mn_prof_kv_u64(p, "accesses", mn_seq_length(ll->g[LL_INSN]));
	mn_prof_kv_u64(p, "unattributed", ll->unattributed);
	mn_prof_kv_u64(p, "grammar_size", total);
	mn_prof_kv_u64(p, "raw_address_grammar_size", raw);
	mn_prof_kv_f64(p, "size_ratio", raw ? (double)total / (double)raw : 0.0);
	mn_prof_key(p, "streams");
	mn_prof_map_begin(p);
	for (int i = 0; i < LL_STREAMS; i++)
		emit_grammar(p, ll_names[i], ll->g[i]);
	mn_prof_map_end(p);
	mn_prof_map_end(p);
}

static double fraction(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

static int or_emit(void *st, struct mn_prof *p)
{
	struct objrel *r = st;
	uint64_t accesses = 0, captured = 0, ninsns = 0, full_insns = 0, nomem = r->nomem;
	struct group *g;
	struct insn *in;

	/* Objects alive at the end live until the end: their lifetimes join their groups'. */
	for (uint32_t s = 1; s <= r->objs.n; s++)
		if (mn_obj(&r->objs, s)->live)
			end_object(r, s);
	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		uint64_t c = 0;

		for (uint32_t i = 0; i < in->n; i++) {
			c += in->s[i].l.captured;
			nomem += in->s[i].l.nomem;
		}
		qsort(in->s, in->n, sizeof(*in->s), by_group);
		accesses += in->accesses;
		captured += c;
		ninsns++;
		full_insns += c == in->accesses;
	}

	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "lmad_limit", r->limit);
	mn_prof_kv_bool(p, "stack_objects", r->stack);
	mn_prof_kv_u64(p, "events", r->clock);
	mn_prof_key(p, "sample_quality");
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "accesses", accesses);
	mn_prof_kv_u64(p, "captured_accesses", captured);
	mn_prof_kv_f64(p, "captured_fraction", fraction(captured, accesses));
	mn_prof_kv_u64(p, "instructions", ninsns);
	mn_prof_kv_u64(p, "captured_instructions", full_insns);
	mn_prof_kv_f64(p, "instruction_fraction", fraction(full_insns, ninsns));
	mn_prof_map_end(p);
	mn_prof_key(p, "lost");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "aliased_granules", r->objs.aliases);
	mn_prof_kv_u64(p, "nomem", nomem);
	mn_prof_kv_u64(p, "unknown_frees", r->unknown_frees);
	mn_prof_map_end(p);

	mn_prof_key(p, "groups");
	mn_prof_seq_begin(p);
	MN_SITEVEC_FOREACH(&r->groups, id, g) {
		if (!g->seen)
			continue;
		qsort(g->life, g->nlife, sizeof(*g->life), cmp_u64);
		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "group", g->site);
		mn_prof_kv_str(p, "kind", kind_names[g->kind]);
		mn_prof_kv_u64(p, "objects", g->objects);
		mn_prof_kv_u64(p, "bytes", g->bytes);
		if (g->nlife) {
			mn_prof_kv_u64(p, "lifetime_min", g->life[0]);
			mn_prof_kv_u64(p, "lifetime_median", g->life[(g->nlife - 1) / 2]);
			mn_prof_kv_u64(p, "lifetime_max", g->life[g->nlife - 1]);
		}
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);

	mn_prof_key(p, "instructions");
	mn_prof_seq_begin(p);
	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		mn_prof_map_begin(p);
		mn_prof_kv_site(p, "site", in->site);
		mn_prof_kv_str(p, "access", in->store ? "store" : "load");
		mn_prof_kv_u64(p, "accesses", in->accesses);
		mn_prof_kv_u64(p, "unattributed", in->unattributed);
		mn_prof_key(p, "streams");
		mn_prof_seq_begin(p);
		for (uint32_t i = 0; i < in->n; i++)
			emit_stream(p, &in->s[i]);
		mn_prof_seq_end(p);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	if (r->ll)
		emit_lossless(p, r);
	mn_prof_map_end(p);
	return 0;
}

const struct mn_module mn_module_object_relative = {
	.name = "object-relative",
	.doc = "object-relative accesses (instruction, group, object, offset) as LMADs; lifetimes",
	.state_size = sizeof(struct objrel),
	.shard = MN_SHARD_NONE,
	.init = or_init,
	.fini = or_fini,
	.load = or_load,
	.store = or_store,
	.heap_alloc = or_heap_alloc,
	.heap_realloc = or_heap_realloc,
	.heap_free = or_heap_free,
	.stack_alloc = or_stack_alloc,
	.stack_free = or_stack_free,
	.global = or_global,
	.emit = or_emit,
};
