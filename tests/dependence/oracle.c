/*
 * dep-oracle: the dependence module against a deliberately simple reference, on one recorded
 * event stream (bench/queue/recording.h, made by mnemo-record from a program built for the
 * dependence module: tests/dependence/oracle.sh).
 *
 *	dep-oracle RECORDING [--context] [--clock-limit N]
 *
 * (a) The module, driven through the backend's own decoder (mn_worker_run) with 1, 2 and 4
 *     workers, merged in worker order as the backend merges them, its section emitted with the
 *     profile writer and read back with libmnemo-profile.
 * (b) The reference, written from modules/dependence/README.md and sharing no code with the
 *     module: a hash map from each 8-byte word to its last writer and last reader (site, the
 *     calling context as a list of sites, clock), a plain array for the stack of functions and
 *     loops holding every iteration start of every live loop, no shadow memory, no context
 *     manager, no parallelism, no buffering.  Loop summaries (codes 17-19) it expands itself,
 *     from their description in docs/internals.md and sharing no code with backend/driver.c: a
 *     plain array of pending accesses, each summary replayed as the events it stands for.  Mixed
 *     loops (codes 20-24, described in events.yaml) likewise: a plain array of open ones, each
 *     with its accesses copied off the pending array, replayed slot by slot up to each mixed
 *     access (iteration k is slots k(n+1), its loop_iter, and k(n+1)+1+j, its access j).
 *
 * Both become sorted text lines, one per loop, one per dependence and one for the losses, and
 * must be equal.  --context sets MNEMO_DEP_CONTEXT=1 for the module and keys the reference by
 * context; --clock-limit N sets MNEMO_DEP_CLOCK_LIMIT=N (the clock resets of README).  Every
 * worker's count of summarized accesses must also equal the reference's, with none lost.
 * --no-summaries: the recording must hold no summary record (a --mnemo-no-summarize build).
 * --nest first rewrites the stream as if signal handlers had run summarized or mixed loops inside
 * others (nest_summaries()), so that both sides' pending stacks hold more than one loop's accesses
 * and mixed loops run with others open.  Mixed loops count as summaries in what it prints.
 * --save FILE writes the reference's lines but the count of summarized accesses, sorted, to FILE
 * (oracle.sh compares the builds with and without summaries: the expanded stream must give what
 * the per-access one gives).
 * Exit status 0 when every worker count agrees with the reference, 1 when one does not (the first
 * differing lines are printed, expected and got), 2 on a usage or input error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_internal.h"
#include "module.h"
#include "profile.h"
#include "recording.h"

#define PROG "dep-oracle"
#define USAGE "usage: " PROG " RECORDING [--context] [--clock-limit N] [--no-summaries] [--nest] " \
	"[--save FILE]"
#define MAX_CTX 64          /* README: contexts are the outermost 64 frames */
#define ADDR48 ((UINT64_C(1) << 48) - 1)   /* addresses are 48 bits on the wire */

extern const struct mn_module mn_module_dependence;

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

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

/* ---- Lines: a growable list of strings, compared sorted -------------------------------------- */

struct lines {
	char **s;
	size_t n, cap;
};

static void lines_add(struct lines *l, char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->s = xrealloc(l->s, l->cap * sizeof(*l->s));
	}
	l->s[l->n++] = s;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->s[i]);
	free(l->s);
	memset(l, 0, sizeof(*l));
}

/* ---- A string-keyed hash map (FNV-1a, linear probing), values by index ----------------------- */

struct strmap {
	char **keys;         /* by index */
	size_t n;
	size_t *slots;       /* index + 1; 0 empty */
	size_t nslots;
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* The index of key, added (a copy) when new; *added says which. */
static size_t strmap_get(struct strmap *m, const char *key, bool *added)
{
	size_t i;

	if (2 * (m->n + 1) > m->nslots) {
		size_t ns = m->nslots ? 2 * m->nslots : 1024;
		size_t *slots = xcalloc(ns, sizeof(*slots));

		for (size_t k = 0; k < m->n; k++) {
			for (i = fnv(m->keys[k]) & (ns - 1); slots[i]; i = (i + 1) & (ns - 1))
				;
			slots[i] = k + 1;
		}
		free(m->slots);
		m->slots = slots;
		m->nslots = ns;
		m->keys = xrealloc(m->keys, ns / 2 * sizeof(*m->keys));
	}
	for (i = fnv(key) & (m->nslots - 1); m->slots[i]; i = (i + 1) & (m->nslots - 1)) {
		if (!strcmp(m->keys[m->slots[i] - 1], key)) {
			*added = false;
			return m->slots[i] - 1;
		}
	}
	m->keys[m->n] = strdup(key);
	if (!m->keys[m->n])
		die("out of memory");
	m->slots[i] = ++m->n;
	*added = true;
	return m->n - 1;
}

static void strmap_free(struct strmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* ---- The reference --------------------------------------------------------------------------- */

struct rframe {
	uint32_t site;
	bool loop;
	uint32_t inv;        /* loops: clock at the invoke */
	uint32_t *starts;    /* loops: clock at the start of each iteration of this invocation */
	size_t n, cap;
};

/* A calling context: the outermost MAX_CTX frames of the stack, as (site, is a loop). */
struct rctx {
	unsigned n;
	uint32_t site[MAX_CTX];
	bool loop[MAX_CTX];
};

/* What the reference remembers of one access: its site, its context and the clock. */
struct racc {
	bool set;
	uint32_t site, ctx, clock;
};

struct rword {
	uint64_t word;       /* address >> 3, + 1; 0: empty slot */
	struct racc writer, reader;
};

struct rdep {
	uint64_t count, dmin, dmax, stamp;
	bool carried;
};

/* A summarized access waiting for the loop_summary record that closes it. */
struct rpending {
	uint32_t site, size;
	uint64_t start;          /* its address in iteration 0 */
	uint64_t step;           /* bytes per iteration, two's complement */
	bool store;
};

/* An open mixed loop: its summarized accesses and how many slots of them were replayed. */
struct rmixed {
	uint32_t site;
	uint64_t n;
	struct rpending *acc;    /* [n], a copy */
	uint64_t slots;          /* iteration k: slot k(n+1) its loop_iter, k(n+1)+1+j access j */
	uint64_t last;           /* the iteration of its latest mixed record; UINT64_MAX: none */
};

struct ref {
	bool context;
	uint32_t clock, limit;
	struct rframe *st;
	size_t depth, cap;
	/* contexts, interned by their text */
	struct strmap ctx_names;
	struct rctx *ctxs;
	size_t cur_ctx;          /* the current stack's context; SIZE_MAX: to be computed */
	/* words: open addressing on word + 1 */
	struct rword *words;
	size_t nwords, nslots;
	/* results */
	struct strmap dep_keys;
	struct rdep *deps;
	uint64_t stamp, resets;
	/* per loop site */
	uint64_t *inv, *iter;
	uint32_t nsites;
	/* loop summaries: the pending accesses, first pushed first */
	struct rpending *pend;
	size_t npend, pendcap;
	uint64_t summaries, summarized;   /* summaries: loop_summary records and mixed loops */
	uint64_t mixed_loops;
	/* the open mixed loops, innermost last */
	struct rmixed *mixed;
	size_t nmixed, mixedcap;
};

static struct rword *word_get(struct ref *r, uint64_t word)
{
	size_t i;

	if (2 * (r->nwords + 1) > r->nslots) {
		size_t ns = r->nslots ? 2 * r->nslots : 1 << 16;
		struct rword *w = xcalloc(ns, sizeof(*w));

		for (size_t k = 0; k < r->nslots; k++) {
			if (!r->words[k].word)
				continue;
			i = (r->words[k].word * 0x9e3779b97f4a7c15u >> 20) & (ns - 1);
			while (w[i].word)
				i = (i + 1) & (ns - 1);
			w[i] = r->words[k];
		}
		free(r->words);
		r->words = w;
		r->nslots = ns;
	}
	for (i = ((word + 1) * 0x9e3779b97f4a7c15u >> 20) & (r->nslots - 1); r->words[i].word;
	     i = (i + 1) & (r->nslots - 1))
		if (r->words[i].word == word + 1)
			return &r->words[i];
	r->words[i] = (struct rword){ .word = word + 1 };
	r->nwords++;
	return &r->words[i];
}

static void site_count(struct ref *r, uint32_t site, bool invoke)
{
	if (site >= r->nsites) {
		uint32_t n = site + 1024;

		r->inv = xrealloc(r->inv, n * sizeof(*r->inv));
		r->iter = xrealloc(r->iter, n * sizeof(*r->iter));
		memset(r->inv + r->nsites, 0, (n - r->nsites) * sizeof(*r->inv));
		memset(r->iter + r->nsites, 0, (n - r->nsites) * sizeof(*r->iter));
		r->nsites = n;
	}
	if (invoke)
		r->inv[site]++;
	else
		r->iter[site]++;
}

/* README: the clock counts loop events; at the limit every word forgets and the past is clock 0. */
static void tick(struct ref *r)
{
	if (r->clock >= r->limit) {
		free(r->words);
		r->words = NULL;
		r->nwords = r->nslots = 0;
		for (size_t i = 0; i < r->depth; i++) {
			r->st[i].inv = 0;
			for (size_t k = 0; k < r->st[i].n; k++)
				r->st[i].starts[k] = 0;
		}
		r->clock = 0;
		r->resets++;
	}
	r->clock++;
}

static void push(struct ref *r, uint32_t site, bool loop)
{
	if (r->depth == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->st = xrealloc(r->st, r->cap * sizeof(*r->st));
		memset(r->st + r->depth, 0, (r->cap - r->depth) * sizeof(*r->st));
	}
	r->st[r->depth].site = site;
	r->st[r->depth].loop = loop;
	r->st[r->depth].inv = r->clock;
	r->st[r->depth].n = 0;
	r->depth++;
	r->cur_ctx = SIZE_MAX;
}

/* The innermost frame of site (a loop frame when loop_only), or -1. */
static long find(const struct ref *r, uint32_t site, bool loop_only)
{
	for (size_t i = r->depth; i-- > 0;)
		if (r->st[i].site == site && (!loop_only || r->st[i].loop))
			return (long)i;
	return -1;
}

static void on_func_entry(struct ref *r, uint32_t site)
{
	push(r, site, false);
}

/* func_exit and loop_exit: the innermost frame of the site goes, with everything above it. */
static void on_exit_event(struct ref *r, uint32_t site)
{
	long i = find(r, site, false);

	if (i >= 0) {
		r->depth = (size_t)i;
		r->cur_ctx = SIZE_MAX;
	}
}

static void on_loop_invoke(struct ref *r, uint32_t site)
{
	tick(r);
	site_count(r, site, true);
	/* A loop invoked with its own frame on top: that frame is stale (context.h). */
	if (r->depth && r->st[r->depth - 1].site == site && r->st[r->depth - 1].loop)
		r->depth--;
	push(r, site, true);
}

static void on_loop_iter(struct ref *r, uint32_t site)
{
	long i;
	struct rframe *f;

	tick(r);
	site_count(r, site, false);
	i = find(r, site, true);
	if (i < 0)
		return;
	if (r->depth != (size_t)i + 1)
		r->cur_ctx = SIZE_MAX;
	r->depth = (size_t)i + 1;
	f = &r->st[i];
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 16;
		f->starts = xrealloc(f->starts, f->cap * sizeof(*f->starts));
	}
	f->starts[f->n++] = r->clock;
}

/* The current context's index (interned by its text). */
static uint32_t current_ctx(struct ref *r)
{
	char buf[MAX_CTX * 16 + 1];
	size_t len = 0, i;
	bool added;

	if (r->cur_ctx != SIZE_MAX)
		return (uint32_t)r->cur_ctx;
	buf[0] = '\0';
	for (i = 0; i < r->depth && i < MAX_CTX; i++)
		len += (size_t)sprintf(buf + len, "%s%u", i ? "," : "", r->st[i].site);
	r->cur_ctx = strmap_get(&r->ctx_names, buf, &added);
	if (added) {
		struct rctx *c;

		r->ctxs = xrealloc(r->ctxs, r->ctx_names.n * sizeof(*r->ctxs));
		c = &r->ctxs[r->cur_ctx];
		c->n = (unsigned)i;
		for (i = 0; i < c->n; i++) {
			c->site[i] = r->st[i].site;
			c->loop[i] = r->st[i].loop;
		}
	}
	return (uint32_t)r->cur_ctx;
}

/* The first function frame above frame i in context c, or 0. */
static uint32_t via_of(const struct rctx *c, size_t i)
{
	for (size_t j = i + 1; j < c->n; j++)
		if (!c->loop[j])
			return c->site[j];
	return 0;
}

/* Iteration starts of f at or before clock: plain binary search over the array. */
static size_t starts_upto(const struct rframe *f, uint32_t clock)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f->starts[mid] <= clock)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void ctx_text(char *buf, const struct rctx *c)
{
	size_t len = (size_t)sprintf(buf, "[");

	for (unsigned i = 0; i < c->n; i++)
		len += (size_t)sprintf(buf + len, "%s%u", i ? "," : "", c->site[i]);
	sprintf(buf + len, "]");
}

static void add_dep(struct ref *r, uint32_t loop, const char *kind, const struct racc *src,
		    uint32_t dst_site, uint32_t dst_ctx, uint32_t src_via, uint32_t dst_via,
		    bool carried, uint64_t distance)
{
	char key[2 * (MAX_CTX * 11 + 3) + 200], sc[MAX_CTX * 11 + 3], dc[MAX_CTX * 11 + 3];
	struct rdep *d;
	size_t i;
	bool added;

	sc[0] = dc[0] = '\0';
	if (r->context) {
		ctx_text(sc, &r->ctxs[src->ctx]);
		ctx_text(dc, &r->ctxs[dst_ctx]);
	}
	snprintf(key, sizeof(key), "dep loop=%u kind=%s src=%u src_via=%u dst=%u dst_via=%u "
		 "carried=%d%s%s%s%s", loop, kind, src->site, src_via, dst_site, dst_via, carried,
		 r->context ? " src_ctx=" : "", sc, r->context ? " dst_ctx=" : "", dc);
	i = strmap_get(&r->dep_keys, key, &added);
	if (added) {
		r->deps = xrealloc(r->deps, r->dep_keys.n * sizeof(*r->deps));
		r->deps[i] = (struct rdep){ .dmin = UINT64_MAX, .carried = carried };
	}
	d = &r->deps[i];
	if (d->stamp != r->stamp) {   /* once per dynamic access */
		d->stamp = r->stamp;
		d->count++;
	}
	if (carried && distance < d->dmin)
		d->dmin = distance;
	if (carried && distance > d->dmax)
		d->dmax = distance;
}

/* One dependence instance from src to the access now: every loop frame whose invocation holds
 * the source, or loop 0. */
static void instance(struct ref *r, const struct racc *src, uint32_t dst_site, const char *kind)
{
	uint32_t dst_ctx = current_ctx(r);
	bool any = false;

	for (size_t i = 0; i < r->depth; i++) {
		const struct rframe *f = &r->st[i];
		size_t k;

		if (!f->loop || f->inv > src->clock)
			continue;
		any = true;
		k = starts_upto(f, src->clock);
		add_dep(r, f->site, kind, src, dst_site, dst_ctx, via_of(&r->ctxs[src->ctx], i),
			via_of(&r->ctxs[dst_ctx], i), k < f->n, f->n - k);
	}
	if (!any)
		add_dep(r, 0, kind, src, dst_site, dst_ctx, 0, 0, false, 0);
}

static void on_access(struct ref *r, uint32_t site, uint64_t addr, uint64_t size, bool store)
{
	uint64_t end = addr + size;
	struct racc me;

	if (!size)
		return;
	me = (struct racc){ true, site, current_ctx(r), r->clock };
	r->stamp++;
	for (uint64_t w = addr / 8; w * 8 < end; w++) {
		struct rword *m = word_get(r, w);

		if (m->writer.set)
			instance(r, &m->writer, site, store ? "waw" : "raw");
		if (store && m->reader.set)
			instance(r, &m->reader, site, "war");
		if (store) {
			m->writer = me;
			m->reader.set = false;
		} else {
			m->reader = me;
		}
	}
}

/* v as argument i of a record of event code carries it: cut to its bits, 0 when not sent. */
static uint64_t as_sent(const struct mn_wire *wire, unsigned code, unsigned i, uint64_t v)
{
	unsigned bits = wire->arg[code][i].bits;

	return bits >= 64 ? v : v & ((UINT64_C(1) << bits) - 1);
}

static void on_summary_access(struct ref *r, const struct mn_wire *wire, const uint64_t *rec,
			      unsigned code)
{
	if (r->npend == r->pendcap) {
		r->pendcap = r->pendcap ? 2 * r->pendcap : 64;
		r->pend = xrealloc(r->pend, r->pendcap * sizeof(*r->pend));
	}
	r->pend[r->npend++] = (struct rpending){
		.site = (uint32_t)mn_wire_get(wire, rec, code, 0),
		.start = mn_wire_get(wire, rec, code, 1),
		.step = mn_wire_get(wire, rec, code, 2),
		.size = (uint32_t)mn_wire_get(wire, rec, code, 3),
		.store = code == MN_EV_LOOP_SUMMARY_STORE,
	};
}

/*
 * loop_summary(site, n, iterations) stands for the events the per-access build would have sent:
 * loop_invoke; each iteration k, loop_iter and then the top n pending accesses in the order they
 * were pushed, at (start + k * step) mod 2^48; loop_exit.  Loop events only when the wire sends
 * them; an access's site and size as a load or store record would carry them.
 */
static void on_summary(struct ref *r, const struct mn_wire *wire, uint32_t site, uint64_t n,
		       uint64_t iters)
{
	const struct rpending *acc;

	if (n > r->npend)
		die("a loop summary of %" PRIu64 " accesses with %zu pending", n, r->npend);
	r->npend -= n;
	acc = r->pend + r->npend;   /* the popped entries stay in place until the next push */
	r->summaries++;
	r->summarized += n * iters;
	if (wire->nwords[MN_EV_LOOP_INVOKE])
		on_loop_invoke(r, site);
	for (uint64_t k = 0; k < iters; k++) {
		if (wire->nwords[MN_EV_LOOP_ITER])
			on_loop_iter(r, site);
		for (uint64_t j = 0; j < n; j++) {
			unsigned code = acc[j].store ? MN_EV_STORE : MN_EV_LOAD;

			on_access(r, (uint32_t)as_sent(wire, code, 0, acc[j].site),
				  (acc[j].start + k * acc[j].step) & ADDR48,
				  as_sent(wire, code, 3, acc[j].size), acc[j].store);
		}
	}
	if (wire->nwords[MN_EV_LOOP_EXIT])
		on_exit_event(r, site);
}

/* A summarized access of iteration k, as a load or store record would carry it. */
static void replay_access(struct ref *r, const struct mn_wire *wire, const struct rpending *a,
			  uint64_t k)
{
	unsigned code = a->store ? MN_EV_STORE : MN_EV_LOAD;

	on_access(r, (uint32_t)as_sent(wire, code, 0, a->site), (a->start + k * a->step) & ADDR48,
		  as_sent(wire, code, 3, a->size), a->store);
}

/*
 * loop_summary_open(site, n): the top n pending accesses become the summarized accesses of a
 * mixed loop, open until its loop_summary_close; loop_invoke when the wire sends it.
 */
static void on_mixed_open(struct ref *r, const struct mn_wire *wire, uint32_t site, uint64_t n)
{
	struct rmixed *f;

	if (n > r->npend)
		die("a mixed loop of %" PRIu64 " summarized accesses with %zu pending", n,
		    r->npend);
	if (r->nmixed == r->mixedcap) {
		r->mixedcap = r->mixedcap ? 2 * r->mixedcap : 16;
		r->mixed = xrealloc(r->mixed, r->mixedcap * sizeof(*r->mixed));
	}
	f = &r->mixed[r->nmixed++];
	f->site = site;
	f->n = n;
	f->acc = xcalloc(n, sizeof(*f->acc));
	r->npend -= n;
	memcpy(f->acc, r->pend + r->npend, n * sizeof(*f->acc));
	f->slots = 0;
	f->last = UINT64_MAX;
	if (wire->nwords[MN_EV_LOOP_INVOKE])
		on_loop_invoke(r, site);
}

/* Replays the slots of mixed loop f up to slot `upto` (not included). */
static void mixed_replay(struct ref *r, const struct mn_wire *wire, struct rmixed *f,
			 uint64_t upto)
{
	for (; f->slots < upto; f->slots++) {
		uint64_t k = f->slots / (f->n + 1), q = f->slots % (f->n + 1);

		if (q)
			replay_access(r, wire, &f->acc[q - 1], k);
		else if (wire->nwords[MN_EV_LOOP_ITER])
			on_loop_iter(r, f->site);
	}
}

static struct rmixed *mixed_top(struct ref *r, const char *what)
{
	if (!r->nmixed)
		die("a %s record with no mixed loop open", what);
	return &r->mixed[r->nmixed - 1];
}

/*
 * mixed_load/mixed_store(site, address, size, position): an access of the innermost open mixed
 * loop, in the iteration after its previous one's when position & 1 (iteration 0 after none),
 * else in the same one (or loop_summary_at's), after position >> 1 of its summarized accesses.
 * What the loop ran before it is replayed first.
 */
static void on_mixed_access(struct ref *r, const struct mn_wire *wire, const uint64_t *rec,
			    unsigned code)
{
	struct rmixed *f = mixed_top(r, "mixed access");
	uint64_t position = mn_wire_get(wire, rec, code, 3), rank = position >> 1;
	unsigned as = code == MN_EV_MIXED_STORE ? MN_EV_STORE : MN_EV_LOAD;

	if (position & 1)
		f->last++;
	if (f->last == UINT64_MAX || rank > f->n)
		die("a mixed access in no iteration, or after more than all %" PRIu64
		    " summarized accesses", f->n);
	mixed_replay(r, wire, f, f->last * (f->n + 1) + 1 + rank);
	on_access(r, (uint32_t)as_sent(wire, as, 0, mn_wire_get(wire, rec, code, 0)),
		  as_sent(wire, as, 1, mn_wire_get(wire, rec, code, 1)),
		  as_sent(wire, as, 3, mn_wire_get(wire, rec, code, 2)), as == MN_EV_STORE);
}

/* loop_summary_close(site, iterations): the rest of the innermost open mixed loop's slots, then
 * loop_exit when the wire sends it. */
static void on_mixed_close(struct ref *r, const struct mn_wire *wire, uint32_t site,
			   uint64_t iters)
{
	struct rmixed *f = mixed_top(r, "loop_summary_close");

	if (f->site != site)
		die("loop_summary_close of loop %u with loop %u open", site, f->site);
	mixed_replay(r, wire, f, iters * (f->n + 1));
	if (wire->nwords[MN_EV_LOOP_EXIT])
		on_exit_event(r, site);
	r->summaries++;
	r->mixed_loops++;
	r->summarized += f->n * iters;
	free(f->acc);
	r->nmixed--;
}

static void ref_run(struct ref *r, const struct mn_wire *wire, const uint64_t *words, size_t n)
{
	size_t i = 0;

	while (i < n) {
		const uint64_t *rec = words + i;
		unsigned code = rec[0] & 0xff;
		uint32_t site;

		if (!rec[0]) {
			i++;
			continue;
		}
		if (code >= MN_WIRE_MAX_EVENTS || !wire->nwords[code] || wire->nwords[code] > n - i)
			die("corrupt record at word %zu", i);
		i += wire->nwords[code];
		site = (uint32_t)mn_wire_get(wire, rec, code, 0);
		switch (code) {
		case MN_EV_LOAD:
		case MN_EV_STORE:
			on_access(r, site, mn_wire_get(wire, rec, code, 1),
				  mn_wire_get(wire, rec, code, 3), code == MN_EV_STORE);
			break;
		case MN_EV_FUNC_ENTRY:
			on_func_entry(r, site);
			break;
		case MN_EV_FUNC_EXIT:
		case MN_EV_LOOP_EXIT:
			on_exit_event(r, site);
			break;
		case MN_EV_LOOP_INVOKE:
			on_loop_invoke(r, site);
			break;
		case MN_EV_LOOP_ITER:
			on_loop_iter(r, site);
			break;
		case MN_EV_LOOP_SUMMARY_LOAD:
		case MN_EV_LOOP_SUMMARY_STORE:
			on_summary_access(r, wire, rec, code);
			break;
		case MN_EV_LOOP_SUMMARY:
			on_summary(r, wire, site, mn_wire_get(wire, rec, code, 1),
				   mn_wire_get(wire, rec, code, 2));
			break;
		case MN_EV_LOOP_SUMMARY_OPEN:
			on_mixed_open(r, wire, site, mn_wire_get(wire, rec, code, 1));
			break;
		case MN_EV_MIXED_LOAD:
		case MN_EV_MIXED_STORE:
			on_mixed_access(r, wire, rec, code);
			break;
		case MN_EV_LOOP_SUMMARY_AT:
			mixed_top(r, "loop_summary_at")->last = mn_wire_get(wire, rec, code, 0);
			break;
		case MN_EV_LOOP_SUMMARY_CLOSE:
			on_mixed_close(r, wire, site, mn_wire_get(wire, rec, code, 1));
			break;
		default:
			break;
		}
	}
	if (r->npend)
		die("the recording ends with %zu summarized accesses no loop_summary closed",
		    r->npend);
	if (r->nmixed)
		die("the recording ends inside %zu mixed loops", r->nmixed);
}

static void ref_lines(struct ref *r, struct lines *out)
{
	for (uint32_t s = 0; s < r->nsites; s++)
		if (r->inv[s])
			lines_add(out, xasprintf("loop %u invocations=%" PRIu64
						 " iterations=%" PRIu64, s, r->inv[s], r->iter[s]));
	for (size_t i = 0; i < r->dep_keys.n; i++) {
		const struct rdep *d = &r->deps[i];

		const char *key = r->dep_keys.keys[i];

		if (d->carried)
			lines_add(out, xasprintf("%s count=%" PRIu64 " min=%" PRIu64
						 " max=%" PRIu64, key, d->count, d->dmin, d->dmax));
		else
			lines_add(out, xasprintf("%s count=%" PRIu64, key, d->count));
	}
	/* README rule 1: every word of every access is tracked, nothing clipped */
	lines_add(out, xasprintf("lost aliases=0 nomem=0 clipped=0 clock_resets=%" PRIu64,
				 r->resets));
}

static void ref_free(struct ref *r)
{
	for (size_t i = 0; i < r->cap; i++)
		free(r->st[i].starts);
	free(r->st);
	free(r->ctxs);
	free(r->words);
	free(r->deps);
	free(r->inv);
	free(r->iter);
	free(r->pend);
	free(r->mixed);
	strmap_free(&r->ctx_names);
	strmap_free(&r->dep_keys);
}

/* ---- The module, through the driver ---------------------------------------------------------- */

static uint64_t u64_of(const struct mn_profile *p, const struct mn_pnode *n, const char *key)
{
	uint64_t v;

	if (mn_pnode_u64(mn_pnode_get(n, key), &v))
		die("%s: row without a count '%s' at line %u", mn_profile_path(p), key,
		    mn_pnode_line(n));
	return v;
}

/* A context list as the reference writes it: [1,2,3]. */
static void list_text(char *buf, size_t len, const struct mn_pnode *n)
{
	size_t k = (size_t)snprintf(buf, len, "[");

	for (size_t i = 0; i < mn_pnode_len(n) && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "," : "",
				      mn_pnode_str(mn_pnode_at(n, i), NULL));
	if (k < len)
		snprintf(buf + k, len - k, "]");
}

static void section_lines(const char *path, struct lines *out)
{
	struct mn_profile *p;
	const struct mn_pnode *sec, *loops, *deps, *lost;
	char err[512];

	if (mn_profile_open(&p, path, err, sizeof(err)))
		die("%s", err);
	sec = mn_profile_module(p, "dependence");
	loops = mn_pnode_get(sec, "loops");
	deps = mn_pnode_get(sec, "dependences");
	lost = mn_pnode_get(sec, "lost");
	if (!sec || mn_pnode_kind(loops) != MN_PNODE_SEQ || mn_pnode_kind(deps) != MN_PNODE_SEQ ||
	    mn_pnode_kind(lost) != MN_PNODE_MAP)
		die("%s: no dependence section with loops, dependences and lost", path);
	for (size_t i = 0; i < mn_pnode_len(loops); i++) {
		const struct mn_pnode *l = mn_pnode_at(loops, i);

		lines_add(out, xasprintf("loop %" PRIu64 " invocations=%" PRIu64
					 " iterations=%" PRIu64, u64_of(p, l, "loop"),
					 u64_of(p, l, "invocations"), u64_of(p, l, "iterations")));
	}
	for (size_t i = 0; i < mn_pnode_len(deps); i++) {
		const struct mn_pnode *d = mn_pnode_at(deps, i);
		bool carried = false;
		char ctx[2 * 1024] = "", sc[1024], dc[1024], dist[64] = "";
		uint64_t via_s = 0, via_d = 0;

		mn_pnode_bool(mn_pnode_get(d, "carried"), &carried);
		if (mn_pnode_get(d, "src_via"))
			via_s = u64_of(p, d, "src_via");
		if (mn_pnode_get(d, "dst_via"))
			via_d = u64_of(p, d, "dst_via");
		if (mn_pnode_get(d, "src_context")) {
			list_text(sc, sizeof(sc), mn_pnode_get(d, "src_context"));
			list_text(dc, sizeof(dc), mn_pnode_get(d, "dst_context"));
			snprintf(ctx, sizeof(ctx), " src_ctx=%s dst_ctx=%s", sc, dc);
		}
		if (carried)
			snprintf(dist, sizeof(dist), " min=%" PRIu64 " max=%" PRIu64,
				 u64_of(p, d, "min_distance"), u64_of(p, d, "max_distance"));
		lines_add(out, xasprintf("dep loop=%" PRIu64 " kind=%s src=%" PRIu64
					 " src_via=%" PRIu64 " dst=%" PRIu64 " dst_via=%" PRIu64
					 " carried=%d%s count=%" PRIu64 "%s", u64_of(p, d, "loop"),
					 mn_pnode_str(mn_pnode_get(d, "kind"), NULL),
					 u64_of(p, d, "src"), via_s, u64_of(p, d, "dst"), via_d,
					 carried, ctx, u64_of(p, d, "count"), dist));
	}
	lines_add(out, xasprintf("lost aliases=%" PRIu64 " nomem=%" PRIu64 " clipped=%" PRIu64
				 " clock_resets=%" PRIu64, u64_of(p, lost, "aliases"),
				 u64_of(p, lost, "nomem"), u64_of(p, lost, "clipped"),
				 u64_of(p, lost, "clock_resets")));
	mn_profile_close(p);
}

/* Runs the module with n workers over the recording and returns its section as lines, and the
 * driver's count of summarized accesses (every worker's must be worker 0's) as one more. */
static void module_lines(unsigned n, const struct mn_wire *wire, const uint64_t *words,
			 size_t nwords, struct lines *out)
{
	const struct mn_module *m = &mn_module_dependence;
	struct mn_worker w[4];
	struct mn_decode_stats st[4] = { 0 };
	char path[] = "/tmp/dep-oracle.XXXXXX";
	struct mn_prof *p;
	FILE *f = NULL;
	int fd, err;

	for (unsigned i = 0; i < n; i++) {
		w[i] = (struct mn_worker){ .mod = m, .state = xcalloc(1, m->state_size), .id = i,
					   .nworkers = n };
		err = m->init(w[i].state, NULL);
		if (err)
			die("module init: %s", strerror(-err));
	}
	for (unsigned i = 0; i < n; i++) {
		mn_worker_run(&w[i], wire, words, nwords, &st[i]);
		mn_worker_finish(&w[i], &st[i]);
		if (st[i].corrupt)
			die("the driver found %" PRIu64 " corrupt records", st[i].corrupt);
		if (st[i].summarized != st[0].summarized)
			lines_add(out, xasprintf("summarized by worker %u: %" PRIu64 ", worker 0: %"
						 PRIu64, i, st[i].summarized, st[0].summarized));
	}
	lines_add(out, xasprintf("summarized accesses=%" PRIu64 " lost_summaries=%" PRIu64
				 " lost_pending=%" PRIu64, st[0].summarized, st[0].lost_summaries,
				 st[0].lost_pending));
	for (unsigned i = 1; i < n; i++) {   /* as backend.c: in worker order, into worker 0 */
		m->merge(w[0].state, w[i].state);
		m->fini(w[i].state);
		free(w[i].state);
	}
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
	mn_prof_key(p, "dependence");
	err = m->emit(w[0].state, p);
	mn_prof_map_end(p);
	mn_prof_map_end(p);
	if (err || mn_prof_close(p) || fclose(f))
		die("emit failed (%d)", err);
	m->fini(w[0].state);
	free(w[0].state);
	section_lines(path, out);
	unlink(path);
}

/* ---- Nesting summaries (--nest) ------------------------------------------------------------- */

static bool is_summary_access(unsigned code)
{
	return code == MN_EV_LOOP_SUMMARY_LOAD || code == MN_EV_LOOP_SUMMARY_STORE;
}

static unsigned code_at(const uint64_t *words, const size_t *rec, size_t i)
{
	return words[rec[i]] & 0xff;
}

/*
 * The end (one past its last record) of the summary group starting at record i of rec[] (record
 * offsets, rec[nrec] = the end), and in *ins the record before which a group nested into it
 * goes; 0 when no group starts at i.  A group is access records then the loop_summary closing
 * exactly them (nested before the loop_summary), or access records (maybe none) then the
 * loop_summary_open taking exactly them, the loop's records and its loop_summary_close, with no
 * other loop_summary_open between (nested right after the open).
 */
static size_t group_end(const struct mn_wire *wire, const uint64_t *words, const size_t *rec,
			size_t nrec, size_t i, size_t *ins)
{
	size_t j = i;

	while (j < nrec && is_summary_access(code_at(words, rec, j)))
		j++;
	if (j == nrec)
		return 0;
	if (code_at(words, rec, j) == MN_EV_LOOP_SUMMARY) {
		if (j == i || mn_wire_get(wire, words + rec[j], MN_EV_LOOP_SUMMARY, 1) != j - i)
			return 0;
		*ins = j;
		return j + 1;
	}
	if (code_at(words, rec, j) != MN_EV_LOOP_SUMMARY_OPEN ||
	    mn_wire_get(wire, words + rec[j], MN_EV_LOOP_SUMMARY_OPEN, 1) != j - i)
		return 0;
	*ins = j + 1;
	for (j++; j < nrec; j++) {
		if (code_at(words, rec, j) == MN_EV_LOOP_SUMMARY_OPEN)
			return 0;
		if (code_at(words, rec, j) == MN_EV_LOOP_SUMMARY_CLOSE)
			return j + 1;
	}
	return 0;
}

/*
 * Rewrites words[0..n) as if a signal handler had run a summarized or mixed loop inside another
 * one: of every two summary groups in a row, the second moves into the first (group_end()), and
 * what lay between them follows.  The stream stays one the module must handle (a mixed loop's
 * records say where they are in their own loop), and the pending stacks of both sides must then
 * be stacks.  Returns how many groups moved.
 */
static uint64_t nest_summaries(const struct mn_wire *wire, uint64_t *words, size_t n)
{
	uint64_t *out = xcalloc(n, sizeof(*out));
	size_t *rec = xcalloc(n + 1, sizeof(*rec)), nrec = 0, o = 0, i = 0;
	uint64_t moved = 0;

	for (size_t w = 0; w < n; nrec++) {
		unsigned code = words[w] & 0xff;

		if (words[w] && (code >= MN_WIRE_MAX_EVENTS || !wire->nwords[code] ||
				 wire->nwords[code] > n - w))
			die("corrupt record at word %zu", w);
		rec[nrec] = w;
		w += words[w] ? wire->nwords[code] : 1;
	}
	rec[nrec] = n;
#define COPY(from, to) (memcpy(out + o, words + rec[from], (rec[to] - rec[from]) * 8), \
			o += rec[to] - rec[from])
	while (i < nrec) {
		size_t ins1, ins2, e1 = group_end(wire, words, rec, nrec, i, &ins1), j, e2 = 0;

		if (!e1) {
			COPY(i, i + 1);
			i++;
			continue;
		}
		for (j = e1; j < nrec && !is_summary_access(code_at(words, rec, j)) &&
			     code_at(words, rec, j) != MN_EV_LOOP_SUMMARY_OPEN;
		     j++)
			;
		if (j < nrec)
			e2 = group_end(wire, words, rec, nrec, j, &ins2);
		if (!e2) {
			COPY(i, e1);
			i = e1;
			continue;
		}
		COPY(i, ins1);       /* the first group up to where the second goes */
		COPY(j, e2);         /* the second group, whole */
		COPY(ins1, e1);      /* the rest of the first group */
		COPY(e1, j);         /* what lay between them */
		moved++;
		i = e2;
	}
#undef COPY
	memcpy(words, out, n * sizeof(*words));
	free(out);
	free(rec);
	return moved;
}

/* ---- Comparing ------------------------------------------------------------------------------- */

static bool same(const char *what, struct lines *want, struct lines *got)
{
	size_t i = 0, j = 0, shown = 0;

	qsort(want->s, want->n, sizeof(*want->s), by_str);
	qsort(got->s, got->n, sizeof(*got->s), by_str);
	while ((i < want->n || j < got->n) && shown < 10) {
		int c = i == want->n ? 1 : j == got->n ? -1 : strcmp(want->s[i], got->s[j]);

		if (!c) {
			i++, j++;
			continue;
		}
		if (!shown++)
			fprintf(stderr, "%s: differs from the reference (%zu lines expected, "
				"%zu got)\n", what, want->n, got->n);
		if (c < 0)
			fprintf(stderr, "  expected: %s\n", want->s[i++]);
		else
			fprintf(stderr, "  got:      %s\n", got->s[j++]);
	}
	return !shown;
}

static void save_lines(const char *path, struct lines *l)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("%s: %s", path, strerror(errno));
	qsort(l->s, l->n, sizeof(*l->s), by_str);
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%s\n", l->s[i]);
	if (fclose(f))
		die("%s: write error", path);
}

int main(int argc, char **argv)
{
	struct mn_rec_header h;
	struct mn_wire wire;
	struct ref r = { .cur_ctx = SIZE_MAX, .limit = UINT32_MAX };
	struct lines want = { 0 };
	uint64_t *words;
	const char *path = NULL, *save = NULL;
	bool ok = true, no_summaries = false, nest = false;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--context")) {
			r.context = true;
			setenv("MNEMO_DEP_CONTEXT", "1", 1);
		} else if (!strcmp(argv[i], "--clock-limit") && i + 1 < argc) {
			r.limit = (uint32_t)strtoul(argv[++i], NULL, 10);
			setenv("MNEMO_DEP_CLOCK_LIMIT", argv[i], 1);
		} else if (!strcmp(argv[i], "--no-summaries")) {
			no_summaries = true;
		} else if (!strcmp(argv[i], "--nest")) {
			nest = true;
		} else if (!strcmp(argv[i], "--save") && i + 1 < argc) {
			save = argv[++i];
		} else if (argv[i][0] != '-' && !path) {
			path = argv[i];
		} else {
			die(USAGE);
		}
	}
	if (!path)
		die(USAGE);
	unsetenv("MNEMO_DEP_LOOP");
	if (!r.context)
		unsetenv("MNEMO_DEP_CONTEXT");
	f = fopen(path, "rb");
	if (!f || fread(&h, sizeof(h), 1, f) != 1 || h.magic != MN_REC_MAGIC ||
	    h.version != MN_REC_VERSION || h.header != sizeof(h))
		die("%s: not a version %u recording", path, MN_REC_VERSION);
	words = xcalloc(h.words, sizeof(*words));
	if (fread(words, 8, h.words, f) != h.words)
		die("%s: short read", path);
	fclose(f);
	memcpy(wire.nwords, h.nwords, sizeof(wire.nwords));
	memcpy(wire.arg, h.arg, sizeof(wire.arg));

	if (nest && !nest_summaries(&wire, words, h.words))
		die("%s: --nest: no two summaries in a row to nest", path);
	ref_run(&r, &wire, words, h.words);
	if (no_summaries && r.summaries) {
		fprintf(stderr, "%s: %" PRIu64 " loop summaries in a recording that should have "
			"none\n", path, r.summaries);
		ok = false;
	}
	ref_lines(&r, &want);
	if (save)
		save_lines(save, &want);
	lines_add(&want, xasprintf("summarized accesses=%" PRIu64 " lost_summaries=0 "
				   "lost_pending=0", r.summarized));
	for (unsigned n = 1; n <= 4; n *= 2) {
		struct lines got = { 0 };
		char what[600];

		module_lines(n, &wire, words, h.words, &got);
		snprintf(what, sizeof(what), "%s%s, %u worker%s", path,
			 r.context ? " --context" : "", n, n > 1 ? "s" : "");
		ok &= same(what, &want, &got);
		lines_free(&got);
	}
	printf("%s%s%s: %" PRIu64 " events, %" PRIu64 " summarized accesses in %" PRIu64
	       " summaries, %" PRIu64 " of them mixed loops, %zu dependences, %" PRIu64
	       " clock resets: module with 1, 2, 4 workers "
	       "%s the reference\n", path, r.context ? " --context" : "", nest ? " --nest" : "",
	       h.events, r.summarized, r.summaries, r.mixed_loops, r.dep_keys.n, r.resets,
	       ok ? "equals" : "DIFFERS FROM");
	lines_free(&want);
	ref_free(&r);
	free(words);
	return ok ? 0 : 1;
}
