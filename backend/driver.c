/*
 * The backend driver's hot loop (PROMPT 5.3 "Backend Driver"): decodes the records of a popped
 * buffer with the session's wire format and calls the module's handler for each event.
 *
 * Records are 1..MN_WIRE_MAX_WORDS words; word 0's low 8 bits are the event code, and the code
 * alone gives the length (wire.nwords[code]), so a buffer is walked record by record.  A zero word
 * where a record would start is one word of unwritten space (mn_queue_pop(): a reservation never
 * filled, or a dead producer's tail) and is skipped.  A record that cannot be right (code 0 under a
 * non-zero word, an event the wire does not send, a length past the end of the buffer) means the
 * rest of the buffer cannot be framed either: it is counted as corrupt and the buffer's decoding
 * stops.
 *
 * Speed: under a cheap module (null: one counter per event) the decoder, not the program, sets the
 * pace of most bench programs.  It took about 3.5 ns a record, most of it waiting on a chain of
 * dependent loads from each record to the next (see dispatch()); breaking the chain was expected to
 * halve that.  Measured: 2.6 to 2.8 ns a record (bench programs aos 19.5 s -> 13.1 s, linkedlist
 * 3.1 s -> 2.4 s), with the decoders made once per buffer (decoding takes no branch) and the loop
 * for one worker (no ownership tests) adding a little.
 *
 * Data parallelism: struct mn_worker carries the ownership predicate of PROMPT's execute_if_mine.
 * Site-sharded modules own events by site id, address-sharded ones by address >> shard_shift, and
 * context events (function, loop, program) go to every worker.  With one worker it always owns.
 *
 * Loop summaries (issue 17; the pass's side: pass/README.md): loop_summary_load/store records push
 * one access each on the worker's pending stack; a loop_summary record pops the top n and expands
 * them into the calls the per-access build would have made (summary_close()).  A stack, not a
 * list: a signal handler may run a summarized loop between another loop's access records and its
 * loop_summary, and its records then sit on top.  Every worker reads every record, so every worker
 * keeps the same stack and expands its own share.  Summary records are a few per loop exit,
 * against one record per access otherwise: their cases are out of line, and the decode loop does
 * not change for them.
 *
 * Mixed loops (issue 17, "Loops that also hold other accesses"; the records: events.yaml, codes
 * 20-24): a loop_summary_open record makes the top n pending entries the summarized accesses of an
 * open mixed loop, a frame on the worker's stack of them, where they stay until the loop's
 * loop_summary_close.  The mixed_load/mixed_store records of the innermost frame carry their place
 * in the loop (iteration, rank among the summarized accesses); before each, the frame's expansion
 * is sent up to that place (mixed_access(), frame_complete()), and the rest at the close.  So the
 * module gets the events the per-access build would have sent, in its order.  A frame's accesses
 * sit below whatever is pushed while it is open (a signal handler's summaries or mixed loops), and
 * nothing pops below them (pending_floor()).  A frame goes to a module's loop_summary handler
 * only when the module says the interleaving does not matter to it (mn_module.mixed_whole),
 * whole at its close; otherwise it is expanded.  Mixed records come
 * one per mixed access, but their cases are out of line too: the decode loop stays as it was for
 * plain records.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backend_internal.h"
#include "shadow.h"

bool mn_wire_valid(const struct mn_wire *w, char *why, size_t whylen)
{
	if (w->flags & ~MN_WIRE_POINTER) {
		snprintf(why, whylen, "unknown flags %#x", (unsigned)w->flags);
		return false;
	}
	for (unsigned c = 0; c < MN_WIRE_MAX_EVENTS; c++) {
		unsigned n = w->nwords[c];

		if (n > MN_WIRE_MAX_WORDS || (c == 0 && n)) {
			snprintf(why, whylen, "event code %u has %u words (at most %d)", c, n,
				 MN_WIRE_MAX_WORDS);
			return false;
		}
		for (unsigned i = 0; i < MN_WIRE_MAX_ARGS; i++) {
			const struct mn_wire_arg *a = &w->arg[c][i];

			if (!a->bits)
				continue;
			if (!n || a->word >= n || a->bits > 64 || a->shift + a->bits > 64 ||
			    (a->word == 0 && a->shift < 8)) {
				snprintf(why, whylen, "event code %u argument %u: word %u shift %u "
					 "bits %u does not fit", c, i, a->word, a->shift, a->bits);
				return false;
			}
		}
	}
	return true;
}

/* execute_if_mine: does worker w own this shard key? */
static inline bool owns(const struct mn_worker *w, uint64_t key)
{
	return key % w->nworkers == w->id;
}

static inline bool owns_site(const struct mn_worker *w, uint64_t site)
{
	return w->mod->shard != MN_SHARD_SITE || owns(w, site);
}

static inline bool owns_addr(const struct mn_worker *w, uint64_t site, uint64_t addr)
{
	if (w->mod->shard == MN_SHARD_ADDRESS)
		return owns(w, addr >> w->mod->shard_shift);
	return owns_site(w, site);
}

/* An access of size bytes at addr: with shard_worker (module.h), one that spans keys goes to
 * every worker. */
static inline bool owns_access(const struct mn_worker *w, uint64_t site, uint64_t addr,
			       uint64_t size)
{
	if (w->mod->shard_worker && size > 1 &&
	    (addr >> w->mod->shard_shift) != ((addr + size - 1) >> w->mod->shard_shift))
		return true;
	return owns_addr(w, site, addr);
}

/*
 * One event code's decoder, made from the wire format once per buffer: argument i is
 * (rec[word[i]] >> shift[i]) & mask[i].  An argument not sent has word 0 and mask 0, so it decodes
 * as 0, as mn_wire_get() says, and decoding takes no branch.
 */
struct decoder {
	uint64_t mask[MN_WIRE_MAX_ARGS];
	uint8_t word[MN_WIRE_MAX_ARGS];
	uint8_t shift[MN_WIRE_MAX_ARGS];
	uint8_t nwords;              /* record length; 0: the event is not sent */
} __attribute__((aligned(64)));

/* The decoders of every byte value: those the wire sends, and length 0 for all others. */
static void decoders_make(struct decoder dec[256], const struct mn_wire *wire)
{
	memset(dec, 0, 256 * sizeof(*dec));
	for (unsigned c = 1; c < MN_WIRE_MAX_EVENTS; c++) {
		struct decoder *d = &dec[c];

		d->nwords = wire->nwords[c];
		for (unsigned i = 0; i < MN_WIRE_MAX_ARGS; i++) {
			const struct mn_wire_arg *a = &wire->arg[c][i];

			if (!a->bits)
				continue;
			d->word[i] = a->word;
			d->shift[i] = a->shift;
			d->mask[i] = a->bits == 64 ? UINT64_MAX : (UINT64_C(1) << a->bits) - 1;
		}
	}
	/* A pointer's load or store: the plain code's record with MN_CODE_POINTER set (queue.h). */
	if (wire->flags & MN_WIRE_POINTER) {
		dec[MN_EV_LOAD | MN_CODE_POINTER] = dec[MN_EV_LOAD];
		dec[MN_EV_STORE | MN_CODE_POINTER] = dec[MN_EV_STORE];
	}
}

/* ---- Loop summaries -------------------------------------------------------------------------- */

#define ADDR_MASK ((UINT64_C(1) << 48) - 1)   /* addresses are 48 bits on the wire */
#define ITER_MAX ((UINT64_C(1) << 48) - 1)    /* iterations too */

/*
 * One open mixed loop: its summarized accesses, pending[base..base + n) of its worker, and how
 * far their expansion has gone.  The expansion runs behind the loop's mixed records: each one
 * first sends what comes before it in the loop, the close sends the rest.
 */
struct mn_mixed_frame {
	size_t base;                 /* its accesses on the pending stack */
	uint64_t k;                  /* the iteration being expanded */
	uint64_t last;               /* iteration of its latest mixed record; UINT64_MAX: none */
	uint32_t site;               /* the loop */
	uint32_t n;                  /* its summarized accesses; 0 when lost */
	uint32_t j;                  /* those of iteration k sent */
	bool begun;                  /* loop_iter of iteration k sent */
	bool lost;                   /* its accesses were not all pending: nothing is expanded */
	bool whole;                  /* goes to loop_summary at its close (mn_module.mixed_whole) */
};

/* The bottom of w's pending stack for a summary or mixed loop closing or opening now: the
 * innermost open mixed loop's accesses lie below it, and are not theirs. */
static inline size_t pending_floor(const struct mn_worker *w)
{
	const struct mn_mixed_frame *f;

	if (!w->nframes)
		return 0;
	f = &w->frames[w->nframes - 1];
	return f->base + f->n;
}

/*
 * Drops the top n entries of w's pending stack, those of a summary or mixed loop that is lost:
 * every entry above floor when there are fewer (records were lost before them, so those there
 * belong to no whole summary any more).
 */
static void pending_drop(struct mn_worker *w, size_t n, size_t floor)
{
	size_t from_stored;

	if (n > w->npending - floor + w->unstored) {
		w->npending = floor;
		w->unstored = 0;
		return;
	}
	from_stored = n > w->unstored ? n - w->unstored : 0;
	w->unstored -= n - from_stored;
	w->npending -= from_stored;
}

/* True when the top n entries of w's pending stack are stored and above floor; else they are
 * dropped (pending_drop()) and the summary or mixed loop they belong to is lost. */
static bool pending_whole(struct mn_worker *w, size_t n, size_t floor)
{
	if (n <= w->npending - floor && (!n || !w->unstored))
		return true;
	pending_drop(w, n, floor);
	return false;
}

/*
 * The array p of *cap size-byte entries with its capacity doubled (from `first`), at most max, and
 * *cap updated; NULL when it is at max already or realloc fails (p and *cap are then as they were).
 */
static void *stack_grow(void *p, size_t *cap, size_t size, size_t first, size_t max)
{
	size_t want = *cap ? 2 * *cap : first;
	void *q;

	if (*cap >= max)
		return NULL;
	if (want > max)
		want = max;
	/* Whole cache lines of its own: the workers of other modules, on other threads, write
	 * theirs at every mixed record, and a shared line would travel between the cores. */
	q = mn_lines_alloc(want * size);
	if (!q)
		return NULL;
	if (p)
		memcpy(q, p, *cap * size);
	free(p);
	*cap = want;
	return q;
}

/*
 * Makes room for one more stored entry on w's pending stack.  False when there is none: an entry
 * is unstored already (later ones must stay above it), the bound is reached, or realloc failed.
 */
static __attribute__((noinline)) bool pending_grow(struct mn_worker *w)
{
	struct mn_summary_access *p;

	if (w->unstored)
		return false;
	p = stack_grow(w->pending, &w->pending_cap, sizeof(*p), 64,
		       w->pending_max ? w->pending_max : MN_PENDING_MAX);
	if (p)
		w->pending = p;
	return p != NULL;
}

/* A loop_summary_load/store record: one access on top of the pending stack.  Never fails: an
 * entry that cannot be stored is counted in w->unstored, and the summary closing it is lost. */
static inline void pending_push(struct mn_worker *w, uint32_t site, uint64_t start, uint64_t step,
				uint32_t size, bool store)
{
	if (__builtin_expect(w->npending == w->pending_cap || w->unstored, 0) && !pending_grow(w)) {
		w->unstored++;
		return;
	}
	w->pending[w->npending++] = (struct mn_summary_access){
		.start = start, .step = (int64_t)step, .site = site, .size = size, .store = store,
	};
}

/*
 * The iterations of one expansion, with ownership by address tested per access (by_addr) or not
 * at all (one worker, or a site-sharded module whose accesses summary_close() filtered already).
 * acc[0..n) are popped entries, so their start is advanced in place: no multiply per access.
 */
static inline __attribute__((always_inline)) void
expand_iterations(const struct mn_module *m, void *state, const struct mn_worker *w,
		  void (*iter)(void *, uint32_t), uint32_t site, uint64_t iters,
		  struct mn_summary_access *acc, unsigned n, bool by_addr)
{
	void (*const load)(void *, uint32_t, uint64_t, uint64_t, uint32_t) = m->load;
	void (*const store)(void *, uint32_t, uint64_t, uint64_t, uint32_t) = m->store;
	const unsigned shift = m->shard_shift, id = w->id, nworkers = w->nworkers;
	const bool spans = m->shard_worker != NULL;   /* owns_access() */

	for (uint64_t k = 0; k < iters; k++) {
		if (iter)
			iter(state, site);
		for (unsigned j = 0; j < n; j++) {
			struct mn_summary_access *a = &acc[j];
			uint64_t addr = a->start & ADDR_MASK;

			a->start += (uint64_t)a->step;
			if (!by_addr || ((addr >> shift) % nworkers) == id ||
			    (spans && ((addr + a->size - 1) >> shift) != (addr >> shift)))
				(a->store ? store : load)(state, a->site, addr, 0, a->size);
		}
	}
}

/*
 * A loop_summary(site, n, iters) record: pops the top n entries of w's pending stack and hands
 * them to m->loop_summary (one worker) or expands them: loop_invoke(site); iters times {
 * loop_iter(site); each access in push order }; loop_exit(site), exactly as the per-access records
 * would have come, through the same ownership tests, the loop events only when the wire sends them
 * (dec[].nwords).
 *
 * A summary that finds fewer than n entries on the stack (above the accesses of the innermost
 * open mixed loop, which are not its), or whose top n hold unstored ones, is lost: counted in
 * st->lost_summaries and not expanded (pending_whole()).
 */
static __attribute__((noinline)) void
summary_close(const struct mn_module *m, void *state, struct mn_worker *w,
	      const struct decoder *dec, uint32_t site, unsigned n, uint64_t iters,
	      struct mn_decode_stats *st, bool sharded)
{
	/* The loop events the per-access build would have sent, and this module handles. */
	void (*const invoke)(void *, uint32_t) =
		dec[MN_EV_LOOP_INVOKE].nwords ? m->loop_invoke : NULL;
	void (*const iter)(void *, uint32_t) = dec[MN_EV_LOOP_ITER].nwords ? m->loop_iter : NULL;
	void (*const leave)(void *, uint32_t) = dec[MN_EV_LOOP_EXIT].nwords ? m->loop_exit : NULL;
	struct mn_summary_access *acc;
	unsigned kept = 0;

	if (!pending_whole(w, n, pending_floor(w))) {
		st->lost_summaries++;
		return;
	}
	w->npending -= n;
	acc = w->pending + w->npending;   /* stays valid: nothing is pushed until we return */
	st->summarized += iters * n;
	if (m->loop_summary && (!sharded || m->shard_worker)) {   /* module.h */
		m->loop_summary(state, site, iters, acc, n);
		return;
	}

	/* Keep only the accesses this worker handles: a handler, and (site sharding) its site.
	 * Whether it owns one by address varies per iteration: tested there. */
	for (unsigned j = 0; j < n; j++) {
		const struct decoder *d = &dec[acc[j].store ? MN_EV_STORE : MN_EV_LOAD];

		if (!(acc[j].store ? m->store : m->load))
			continue;
		/* An argument the wire does not send arrives as 0 in a record: here too. */
		acc[j].site &= (uint32_t)d->mask[0];
		acc[j].size &= (uint32_t)d->mask[3];
		if (sharded && m->shard == MN_SHARD_SITE && !owns(w, acc[j].site))
			continue;
		acc[kept++] = acc[j];
	}

	if (invoke)
		invoke(state, site);
	if (kept && sharded && m->shard == MN_SHARD_ADDRESS)
		expand_iterations(m, state, w, iter, site, iters, acc, kept, true);
	else if (kept || iter)
		expand_iterations(m, state, w, iter, site, iters, acc, kept, false);
	if (leave)
		leave(state, site);
}

/* ---- Mixed loops ----------------------------------------------------------------------------- */

/* Makes room for one more frame on w's stack.  False when there is none: the bound is reached,
 * or realloc failed. */
static __attribute__((noinline)) bool frames_grow(struct mn_worker *w)
{
	struct mn_mixed_frame *f = stack_grow(w->frames, &w->frames_cap, sizeof(*f), 8,
					      w->frames_max ? w->frames_max : MN_FRAMES_MAX);

	if (f)
		w->frames = f;
	return f != NULL;
}

/*
 * A load or store as its record would have come: site, address and size as the wire carries them
 * for a load or store (0 when it does not send one), value 0, to the module's handler when the
 * worker owns it.
 */
static inline void send_access(const struct mn_module *m, void *state, const struct mn_worker *w,
			       const struct decoder *dec, bool store, uint32_t site, uint64_t addr,
			       uint32_t size, bool sharded)
{
	const struct decoder *d = &dec[store ? MN_EV_STORE : MN_EV_LOAD];
	void (*const h)(void *, uint32_t, uint64_t, uint64_t, uint32_t) =
		store ? m->store : m->load;

	site &= (uint32_t)d->mask[0];
	addr &= d->mask[1];
	size &= (uint32_t)d->mask[3];
	if (h && (!sharded || owns_access(w, site, addr, size)))
		h(state, site, addr, 0, size);
}

/* Sends the summarized accesses [from, to) of frame f's iteration k. */
static inline __attribute__((always_inline)) void
frame_accesses(const struct mn_module *m, void *state, const struct mn_worker *w,
	       const struct decoder *dec, const struct mn_mixed_frame *f, uint64_t k, unsigned from,
	       unsigned to, bool sharded)
{
	for (unsigned j = from; j < to; j++) {
		const struct mn_summary_access *a = &w->pending[f->base + j];

		send_access(m, state, w, dec, a->store, a->site,
			    (a->start + k * (uint64_t)a->step) & ADDR_MASK, a->size, sharded);
	}
}

/* Completes frame f's iterations before K: for each, its loop_iter unless sent, then its
 * accesses not sent yet. */
static inline __attribute__((always_inline)) void
frame_complete(const struct mn_module *m, void *state, const struct mn_worker *w,
	       const struct decoder *dec, struct mn_mixed_frame *f, uint64_t K, bool sharded)
{
	void (*const iter)(void *, uint32_t) = dec[MN_EV_LOOP_ITER].nwords ? m->loop_iter : NULL;

	for (; f->k < K; f->k++) {
		if (!f->begun && iter)
			iter(state, f->site);
		frame_accesses(m, state, w, dec, f, f->k, f->j, f->n, sharded);
		f->j = 0;
		f->begun = false;
	}
}

/*
 * A loop_summary_open(site, n) record: a frame for the loop, whose accesses are the top n pending
 * entries (they stay there), and loop_invoke(site) when the wire sends it.  When the entries are
 * not all there, or the frame stack is full, the loop is lost (st->lost_summaries): its mixed
 * records are then handled as plain loads and stores, nothing of it is expanded, its entries
 * are dropped (pending_drop()), and its close only pops the frame.
 */
static __attribute__((noinline)) void
mixed_open(const struct mn_module *m, void *state, struct mn_worker *w, const struct decoder *dec,
	   uint32_t site, unsigned n, struct mn_decode_stats *st, bool sharded)
{
	/* One worker owns everything, as loop_summary needs (module.h). */
	const bool whole = !sharded && m->loop_summary && m->mixed_whole && m->mixed_whole(state);
	void (*const invoke)(void *, uint32_t) =
		dec[MN_EV_LOOP_INVOKE].nwords ? m->loop_invoke : NULL;
	size_t floor = pending_floor(w);
	struct mn_mixed_frame *f;

	if (w->frames_over || (w->nframes == w->frames_cap && !frames_grow(w))) {
		w->frames_over++;
		st->lost_summaries++;
		pending_drop(w, n, floor);
		return;
	}
	f = &w->frames[w->nframes++];
	if (!pending_whole(w, n, floor)) {
		st->lost_summaries++;
		*f = (struct mn_mixed_frame){ .base = w->npending, .site = site, .lost = true };
		return;
	}
	*f = (struct mn_mixed_frame){ .base = w->npending - n, .last = UINT64_MAX, .site = site,
				      .n = n, .whole = whole };
	if (invoke && !whole)
		invoke(state, site);
}

/* A loop_summary_at(iteration) record: the innermost frame's next mixed record is in iteration. */
static __attribute__((noinline)) void mixed_at(struct mn_worker *w, uint64_t iteration)
{
	if (!w->frames_over && w->nframes)
		w->frames[w->nframes - 1].last = iteration;
}

/*
 * Frame f's expansion up to a mixed record's place: iteration `last`, rank (that many of its
 * summarized accesses come first).  A place behind what was sent already (not in a well-formed
 * stream) sends nothing more.
 */
static __attribute__((noinline)) void
mixed_advance(const struct mn_module *m, void *state, const struct mn_worker *w,
	      const struct decoder *dec, struct mn_mixed_frame *f, unsigned rank, bool sharded)
{
	void (*const iter)(void *, uint32_t) = dec[MN_EV_LOOP_ITER].nwords ? m->loop_iter : NULL;

	/* last is UINT64_MAX only in a stream that never named an iteration: keep to k. */
	frame_complete(m, state, w, dec, f, f->last <= ITER_MAX ? f->last : f->k, sharded);
	if (!f->begun) {
		if (iter)
			iter(state, f->site);
		f->begun = true;
	}
	if (rank > f->n)
		rank = f->n;
	if (f->j < rank) {
		frame_accesses(m, state, w, dec, f, f->k, f->j, rank, sharded);
		f->j = rank;
	}
}

/*
 * A mixed_load/mixed_store(site, addr, size, position) record: the innermost frame's expansion up
 * to the access's place, iteration `last` (position & 1: the one after the previous record's),
 * rank position >> 1, then the access as a load or store record.  With no frame open, the access
 * alone, counted in st->lost_summaries.  Inline, with the expansion out of line: a loop's second
 * record in an iteration (a histogram's store after its load) usually has nothing to expand.
 */
static inline __attribute__((always_inline)) void
mixed_access(const struct mn_module *m, void *state, struct mn_worker *w,
	     const struct decoder *dec, struct mn_decode_stats *st, bool store, uint32_t site,
	     uint64_t addr, uint32_t size, unsigned position, bool sharded)
{
	struct mn_mixed_frame *f;

	if (__builtin_expect(w->frames_over || !w->nframes, 0)) {
		/* A lost loop's access, or one with no loop open. */
		st->lost_summaries += !w->frames_over;
		goto send;
	}
	f = &w->frames[w->nframes - 1];
	if (f->lost || f->whole)
		goto send;
	f->last += position & 1;
	if (f->last != f->k || !f->begun || f->j < (position >> 1))
		mixed_advance(m, state, w, dec, f, position >> 1, sharded);
send:
	send_access(m, state, w, dec, store, site, addr, size, sharded);
}

/*
 * A loop_summary_close(site, iterations) record: the innermost frame of the loop completes
 * iterations [0, iterations) and sends loop_exit(site) when the wire sends it; its accesses leave
 * the pending stack, with whatever was pushed above them and never closed (st->lost_pending), and
 * the frame is popped.  Frames above it (loops left without their close: a signal handler that
 * jumped out of one) are popped too and counted lost; a close that matches no open frame is
 * counted lost and changes nothing.
 */
static __attribute__((noinline)) void
mixed_close(const struct mn_module *m, void *state, struct mn_worker *w,
	    const struct decoder *dec, uint32_t site, uint64_t iterations,
	    struct mn_decode_stats *st, bool sharded)
{
	void (*const leave)(void *, uint32_t) = dec[MN_EV_LOOP_EXIT].nwords ? m->loop_exit : NULL;
	struct mn_mixed_frame *f;
	size_t i = w->nframes;

	if (w->frames_over) {
		w->frames_over--;   /* a lost loop's close */
		return;
	}
	while (i && w->frames[i - 1].site != site)
		i--;
	if (!i) {
		st->lost_summaries++;
		return;
	}
	f = &w->frames[--i];
	st->lost_summaries += w->nframes - 1 - i;
	if (f->whole) {
		m->loop_summary(state, site, iterations, &w->pending[f->base], f->n);
		st->summarized += iterations * f->n;
	} else if (!f->lost) {
		frame_complete(m, state, w, dec, f, iterations, sharded);
		if (leave)
			leave(state, site);
		st->summarized += iterations * f->n;
	}
	st->lost_pending += w->npending - (f->base + f->n) + w->unstored;
	w->npending = f->base;
	w->unstored = 0;
	w->nframes = i;
}

/* ---- Threads of the program ------------------------------------------------------------------- */

/* One thread's pending stack and open mixed loops, parked while other threads' buffers come. */
struct mn_parked {
	uint32_t thread;
	struct mn_summary_access *pending;
	size_t npending, pending_cap, unstored;
	struct mn_mixed_frame *frames;
	size_t nframes, frames_cap, frames_over;
};

static void park_out(struct mn_parked *p, const struct mn_worker *w)
{
	*p = (struct mn_parked){ w->thread, w->pending, w->npending, w->pending_cap, w->unstored,
				 w->frames, w->nframes, w->frames_cap, w->frames_over };
}

static void park_in(struct mn_worker *w, const struct mn_parked *p)
{
	w->pending = p->pending;
	w->npending = p->npending;
	w->pending_cap = p->pending_cap;
	w->unstored = p->unstored;
	w->frames = p->frames;
	w->nframes = p->nframes;
	w->frames_cap = p->frames_cap;
	w->frames_over = p->frames_over;
}

/* The current thread's stacks: lost (counted when st is set) and freed. */
static void stacks_drop(struct mn_worker *w, struct mn_decode_stats *st)
{
	/* An open mixed loop's accesses are still on the pending stack: counted there. */
	if (st)
		st->lost_pending += w->npending + w->unstored;
	free(w->pending);
	w->pending = NULL;
	w->npending = w->pending_cap = w->unstored = 0;
	free(w->frames);
	w->frames = NULL;
	w->nframes = w->frames_cap = w->frames_over = 0;
}

int mn_worker_thread(struct mn_worker *w, uint32_t thread, struct mn_decode_stats *st)
{
	int ret = 0;

	if (w->thread == thread)
		return 0;
	if (w->npending || w->unstored || w->nframes || w->frames_over) {
		if (w->nparked == w->parked_cap) {
			size_t cap = w->parked_cap ? 2 * w->parked_cap : 8;
			struct mn_parked *p = realloc(w->parked, cap * sizeof(*p));

			if (p) {
				w->parked = p;
				w->parked_cap = cap;
			}
		}
		if (w->nparked < w->parked_cap) {
			park_out(&w->parked[w->nparked++], w);
		} else {
			stacks_drop(w, st);
			ret = -ENOMEM;
		}
		w->pending = NULL;
		w->frames = NULL;
		w->npending = w->pending_cap = w->unstored = 0;
		w->nframes = w->frames_cap = w->frames_over = 0;
	} else {
		stacks_drop(w, NULL);   /* empty: only the allocations go */
	}
	w->thread = thread;
	if (w->mod->thread)
		w->mod->thread(w->state, thread);
	for (size_t i = 0; i < w->nparked; i++) {
		if (w->parked[i].thread != thread)
			continue;
		park_in(w, &w->parked[i]);
		w->parked[i] = w->parked[--w->nparked];
		break;
	}
	return ret;
}

void mn_worker_finish(struct mn_worker *w, struct mn_decode_stats *st)
{
	stacks_drop(w, st);
	while (w->nparked) {
		park_in(w, &w->parked[--w->nparked]);
		stacks_drop(w, st);
	}
	free(w->parked);
	w->parked = NULL;
	w->parked_cap = 0;
}

/* ---- Decoding -------------------------------------------------------------------------------- */

/*
 * Calls m's handler of event `code` for the record at rec (a NULL handler skips the event), and
 * returns the record's length.  With `sharded` false (one worker, which owns everything) the
 * ownership tests compile away.
 *
 * Each case takes its decoder, and so the length, from dec[<its own code>], a constant address,
 * not from dec[code]: the CPU predicts the jump to the case and goes on to the next record at once.
 * Through dec[code] every record would wait for the one before (load word 0, look its length up,
 * add, load the next word 0: about 13 cycles, most of the decoder's time).
 */
static inline __attribute__((always_inline)) size_t
dispatch(const struct mn_module *m, void *st, struct mn_worker *w, const struct decoder *dec,
	 const uint64_t *rec, unsigned code, struct mn_decode_stats *stats, bool sharded)
{
	const struct decoder *d;

#define ARG(i) ((rec[d->word[i]] >> d->shift[i]) & d->mask[i])
#define MINE_ADDR(a) (!sharded || owns_addr(w, ARG(0), (a)))
#define MINE_ACCESS(a, size) (!sharded || owns_access(w, ARG(0), (a), (size)))
	switch (code) {
	case MN_EV_LOAD:
		d = &dec[MN_EV_LOAD];
		if (m->load && MINE_ACCESS(ARG(1), ARG(3)))
			m->load(st, (uint32_t)ARG(0), ARG(1), ARG(2), (uint32_t)ARG(3));
		return d->nwords;
	case MN_EV_STORE:
		d = &dec[MN_EV_STORE];
		if (m->store && MINE_ACCESS(ARG(1), ARG(3)))
			m->store(st, (uint32_t)ARG(0), ARG(1), ARG(2), (uint32_t)ARG(3));
		return d->nwords;
	/* A pointer's access: m's plain handlers may be filtered out (pointer_only), not these. */
	case MN_EV_LOAD | MN_CODE_POINTER:
		d = &dec[MN_EV_LOAD | MN_CODE_POINTER];
		if (w->mod->load && MINE_ACCESS(ARG(1), ARG(3)))
			w->mod->load(st, (uint32_t)ARG(0), ARG(1), ARG(2), (uint32_t)ARG(3));
		return d->nwords;
	case MN_EV_STORE | MN_CODE_POINTER:
		d = &dec[MN_EV_STORE | MN_CODE_POINTER];
		if (w->mod->store && MINE_ACCESS(ARG(1), ARG(3)))
			w->mod->store(st, (uint32_t)ARG(0), ARG(1), ARG(2), (uint32_t)ARG(3));
		return d->nwords;
	case MN_EV_POINTER_CREATE:
		d = &dec[MN_EV_POINTER_CREATE];
		if (m->pointer_create && MINE_ADDR(ARG(1)))
			m->pointer_create(st, (uint32_t)ARG(0), ARG(1), (uint32_t)ARG(2));
		return d->nwords;
	case MN_EV_HEAP_ALLOC:
		d = &dec[MN_EV_HEAP_ALLOC];
		if (m->heap_alloc_context && MINE_ADDR(ARG(1)))
			m->heap_alloc_context(st, (uint32_t)ARG(0), ARG(3), ARG(1), ARG(2));
		else if (m->heap_alloc && MINE_ADDR(ARG(1)))
			m->heap_alloc(st, (uint32_t)ARG(0), ARG(1), ARG(2));
		return d->nwords;
	case MN_EV_HEAP_REALLOC:
		d = &dec[MN_EV_HEAP_REALLOC];
		/* Two addresses: the owner of either one hears of it. */
		if (m->heap_realloc && (MINE_ADDR(ARG(1)) || MINE_ADDR(ARG(2))))
			m->heap_realloc(st, (uint32_t)ARG(0), ARG(1), ARG(2), ARG(3));
		return d->nwords;
	case MN_EV_HEAP_FREE:
		d = &dec[MN_EV_HEAP_FREE];
		if (m->heap_free && MINE_ADDR(ARG(1)))
			m->heap_free(st, (uint32_t)ARG(0), ARG(1));
		return d->nwords;
	case MN_EV_STACK_ALLOC:
		d = &dec[MN_EV_STACK_ALLOC];
		if (m->stack_alloc && MINE_ADDR(ARG(1)))
			m->stack_alloc(st, (uint32_t)ARG(0), ARG(1), ARG(2));
		return d->nwords;
	case MN_EV_STACK_FREE:
		d = &dec[MN_EV_STACK_FREE];
		if (m->stack_free && MINE_ADDR(ARG(1)))
			m->stack_free(st, (uint32_t)ARG(0), ARG(1));
		return d->nwords;
	case MN_EV_GLOBAL:
		d = &dec[MN_EV_GLOBAL];
		if (m->global && MINE_ADDR(ARG(1)))
			m->global(st, (uint32_t)ARG(0), ARG(1), ARG(2));
		return d->nwords;
	/* Context events reach every worker: each keeps its own context (PROMPT 5.3). */
	case MN_EV_FUNC_ENTRY:
		d = &dec[MN_EV_FUNC_ENTRY];
		if (m->func_entry)
			m->func_entry(st, (uint32_t)ARG(0));
		return d->nwords;
	case MN_EV_FUNC_EXIT:
		d = &dec[MN_EV_FUNC_EXIT];
		if (m->func_exit)
			m->func_exit(st, (uint32_t)ARG(0));
		return d->nwords;
	case MN_EV_LOOP_INVOKE:
		d = &dec[MN_EV_LOOP_INVOKE];
		if (m->loop_invoke)
			m->loop_invoke(st, (uint32_t)ARG(0));
		return d->nwords;
	case MN_EV_LOOP_ITER:
		d = &dec[MN_EV_LOOP_ITER];
		if (m->loop_iter)
			m->loop_iter(st, (uint32_t)ARG(0));
		return d->nwords;
	case MN_EV_LOOP_EXIT:
		d = &dec[MN_EV_LOOP_EXIT];
		if (m->loop_exit)
			m->loop_exit(st, (uint32_t)ARG(0));
		return d->nwords;
	case MN_EV_PROGRAM_START:
		d = &dec[MN_EV_PROGRAM_START];
		if (m->program_start)
			m->program_start(st, (uint32_t)ARG(0));
		return d->nwords;
	case MN_EV_PROGRAM_END:
		d = &dec[MN_EV_PROGRAM_END];
		if (m->program_end)
			m->program_end(st, (uint32_t)ARG(0), (uint32_t)ARG(1));
		return d->nwords;
	/* Loop summaries: every worker keeps the stack; summary_close() applies ownership. */
	case MN_EV_LOOP_SUMMARY_LOAD:
		d = &dec[MN_EV_LOOP_SUMMARY_LOAD];
		pending_push(w, (uint32_t)ARG(0), ARG(1), ARG(2), (uint32_t)ARG(3), false);
		return d->nwords;
	case MN_EV_LOOP_SUMMARY_STORE:
		d = &dec[MN_EV_LOOP_SUMMARY_STORE];
		pending_push(w, (uint32_t)ARG(0), ARG(1), ARG(2), (uint32_t)ARG(3), true);
		return d->nwords;
	case MN_EV_LOOP_SUMMARY:
		d = &dec[MN_EV_LOOP_SUMMARY];
		summary_close(m, st, w, dec, (uint32_t)ARG(0), (unsigned)ARG(1), ARG(2), stats,
			      sharded);
		return d->nwords;
	/* Mixed loops: every worker keeps the frames; the helpers apply ownership. */
	case MN_EV_LOOP_SUMMARY_OPEN:
		d = &dec[MN_EV_LOOP_SUMMARY_OPEN];
		mixed_open(m, st, w, dec, (uint32_t)ARG(0), (unsigned)ARG(1), stats, sharded);
		return d->nwords;
	case MN_EV_MIXED_LOAD:
		d = &dec[MN_EV_MIXED_LOAD];
		mixed_access(m, st, w, dec, stats, false, (uint32_t)ARG(0), ARG(1),
			     (uint32_t)ARG(2), (unsigned)ARG(3), sharded);
		return d->nwords;
	case MN_EV_MIXED_STORE:
		d = &dec[MN_EV_MIXED_STORE];
		mixed_access(m, st, w, dec, stats, true, (uint32_t)ARG(0), ARG(1),
			     (uint32_t)ARG(2), (unsigned)ARG(3), sharded);
		return d->nwords;
	case MN_EV_LOOP_SUMMARY_AT:
		d = &dec[MN_EV_LOOP_SUMMARY_AT];
		mixed_at(w, ARG(0));
		return d->nwords;
	case MN_EV_LOOP_SUMMARY_CLOSE:
		d = &dec[MN_EV_LOOP_SUMMARY_CLOSE];
		mixed_close(m, st, w, dec, (uint32_t)ARG(0), ARG(1), stats, sharded);
		return d->nwords;
	/* Threads and their order (module.h): every worker, like the context events. */
	case MN_EV_SYNC_ACQUIRE:
		d = &dec[MN_EV_SYNC_ACQUIRE];
		if (m->sync_acquire)
			m->sync_acquire(st, ARG(0));
		return d->nwords;
	case MN_EV_SYNC_RELEASE:
		d = &dec[MN_EV_SYNC_RELEASE];
		if (m->sync_release)
			m->sync_release(st, ARG(0));
		return d->nwords;
	case MN_EV_THREAD_START:
		d = &dec[MN_EV_THREAD_START];
		if (m->thread_start)
			m->thread_start(st, w->thread, (uint32_t)ARG(0));
		return d->nwords;
	case MN_EV_THREAD_END:
		d = &dec[MN_EV_THREAD_END];
		if (m->thread_end)
			m->thread_end(st, w->thread);
		return d->nwords;
	/* Values as sets (backend.h): a site's values reach the worker that owns the site. */
	case MN_EV_VALUE:
		d = &dec[MN_EV_VALUE];
		stats->values++;
		if (m->value && (!sharded || owns_site(w, ARG(0))))
			m->value(st, (uint32_t)ARG(0), ARG(1));
		return d->nwords;
	default:   /* a code the catalogue added after this backend was built */
		return dec[code].nwords;
	}
#undef MINE_ADDR
#undef ARG
}

/* How far ahead of the record being decoded run() prefetches: 1 KiB, 16 cache lines. */
#define PREFETCH_WORDS 128
/* How many records ahead of the one being handled run() prefetches its access's metadata. */
#define AHEAD_RECORDS 16

/*
 * The module's shadow mapping, copied once per buffer: a handler may replace its shadow in the
 * middle of one (dependence's clock reset frees it), and the hints must not read freed memory;
 * hints from a stale copy only miss.
 */
struct shadow_map {
	const unsigned char *base;
	uint64_t fold_mask;
	uint8_t granule_shift, meta_shift;
};

/*
 * The record after words[j] for the lookahead of run(), which prefetches the shadow metadata of
 * an access record's address in each of sm[0..nsm) (mn_module.shadow; a lane's members may have
 * several): nwords when the words end or are corrupt there
 * (run() says which; the lookahead just stops).  Every record's argument 1 is taken for an
 * address, without a test of the code: an event whose argument 1 is not one gets a useless hint,
 * which costs less than the branch (a prefetch never faults; for an event without argument 1 it
 * is always the same line).  Measured, 2026-11-26, 2 cores, dependence, backend CPU: hashtable
 * -40%, graph -38%, bintree -7%; a list that fits in L2 +6%, SQLite +3%: the decoding, not the
 * hints.
 */
static inline size_t ahead(const struct decoder *dec, const uint64_t *words, size_t j,
			   size_t nwords, const struct shadow_map *sm, unsigned nsm)
{
	const uint64_t *rec = words + j;
	const struct decoder *d = &dec[rec[0] & 0xff];
	uint64_t addr;

	if (__builtin_expect((size_t)d->nwords - 1 >= nwords - j, 0))
		return rec[0] ? nwords : j + 1;
	addr = (rec[d->word[1]] >> d->shift[1]) & d->mask[1];
	for (unsigned k = 0; k < nsm; k++)
		__builtin_prefetch(sm[k].base + MN_SHADOW_OFFSET(addr, sm[k].fold_mask,
								 sm[k].granule_shift,
								 sm[k].meta_shift), 0);
	return j + d->nwords;
}

/* The decode loop, instantiated with and without sharding, and with and without the lookahead
 * (sm NULL: none) (mn_worker_run()). */
static inline __attribute__((always_inline)) void
run(struct mn_worker *w, const struct mn_module *mod, const struct decoder *dec,
    const uint64_t *words, size_t nwords, struct mn_decode_stats *st, bool sharded,
    const struct shadow_map *sm)
{
	/* A copy that no handler can change, so its pointers stay in registers across the calls. */
	const struct mn_module m = *mod;
	void *state = w->state;
	uint64_t events = 0, values = st->values;
	size_t i = 0, j = 0;

	for (unsigned k = 0; sm && k < AHEAD_RECORDS && j < nwords; k++)
		j = ahead(dec, words, j, nwords, sm, 1);
	while (i < nwords) {
		const uint64_t *rec = words + i;
		unsigned code = (unsigned)(rec[0] & 0xff);

		/* The producer wrote these words with streaming stores, from another core: they come
		 * from memory, and the load of word 0 stalled the loop (a third of its time under
		 * null).  Ask for them well ahead; past the end of the buffer the hint is harmless. */
		__builtin_prefetch(rec + PREFETCH_WORDS);

		/* One test for the rare cases: a zero word (code 0 has length 0), a code the wire does
		 * not send, a record running past the end. */
		if (__builtin_expect((size_t)dec[code].nwords - 1 >= nwords - i, 0)) {
			if (!rec[0]) {
				i++;   /* unwritten space */
				continue;
			}
			st->corrupt++;
			break;
		}
		if (sm && j < nwords)
			j = ahead(dec, words, j, nwords, sm, 1);
		i += dispatch(&m, state, w, dec, rec, code, st, sharded);
		events++;
	}
	st->events += events - (st->values - values);
}

/*
 * w's module as the decode loop calls it: with the wire's pointer flag, a pointer_only module has
 * no handler for plain loads and stores (records of other values, and the accesses of summaries
 * and mixed loops, which are never a pointer's then); dispatch() calls w->mod's for a pointer's.
 * Also tells a sharded worker its share, once.
 */
static struct mn_module worker_module(struct mn_worker *w, const struct mn_wire *wire)
{
	struct mn_module m = *w->mod;

	if ((wire->flags & MN_WIRE_POINTER) && m.pointer_only)
		m.load = m.store = NULL;
	if (w->nworkers > 1 && m.shard_worker && !w->told) {
		m.shard_worker(w->state, w->id, w->nworkers);
		w->told = true;
	}
	return m;
}

/* The mapping of the shadow w's module names (mn_module.shadow), or false when it names none. */
static bool shadow_of(const struct mn_worker *w, struct shadow_map *sm)
{
	const struct mn_shadow *sh = w->mod->shadow ? w->mod->shadow(w->state) : NULL;

	if (sh)
		*sm = (struct shadow_map){ sh->base, sh->fold_mask, sh->granule_shift,
					   sh->meta_shift };
	return sh != NULL;
}

void mn_worker_run(struct mn_worker *w, const struct mn_wire *wire, const uint64_t *words,
		   size_t nwords, struct mn_decode_stats *st)
{
	struct decoder dec[256];   /* by the low byte of word 0: every byte value has an entry */
	const struct mn_module m = worker_module(w, wire);
	struct shadow_map sm;
	bool sh = shadow_of(w, &sm);

	decoders_make(dec, wire);
	/* Four instances, so that a module without a shadow keeps the loop it had before the
	 * lookahead existed (a test of sh per record cost null 15% on a list walk). */
	if (w->nworkers == 1 && sh)
		run(w, &m, dec, words, nwords, st, false, &sm);
	else if (w->nworkers == 1)
		run(w, &m, dec, words, nwords, st, false, NULL);
	else if (sh)
		run(w, &m, dec, words, nwords, st, true, &sm);
	else
		run(w, &m, dec, words, nwords, st, true, NULL);
}

/* ---- Lanes: one decode for several modules --------------------------------------------------- */

/* One handler of a load or store in a lane: w NULL when its worker owns every access. */
struct lane_sub {
	void (*fn)(void *, uint32_t, uint64_t, uint64_t, uint32_t);
	void *state;
	const struct mn_worker *w;
};

/* The lane's workers as its decode loop calls them (lane_make()). */
struct lane {
	struct mn_module m[MN_LANE_MAX];       /* worker_module() of each */
	struct lane_sub sub[4][MN_LANE_MAX];   /* handlers of load, store, a pointer's load, store */
	unsigned nsub[4];
};

enum { SUB_LOAD, SUB_STORE, SUB_PTR_LOAD, SUB_PTR_STORE };

static void lane_add(struct lane *L, unsigned kind, void (*fn)(void *, uint32_t, uint64_t,
		     uint64_t, uint32_t), struct mn_worker *w)
{
	if (fn)
		L->sub[kind][L->nsub[kind]++] = (struct lane_sub){
			fn, w->state, w->nworkers > 1 ? w : NULL };
}

static void lane_make(struct lane *L, struct mn_worker *const *ws, unsigned n,
		      const struct mn_wire *wire)
{
	memset(L->nsub, 0, sizeof(L->nsub));
	for (unsigned k = 0; k < n; k++) {
		L->m[k] = worker_module(ws[k], wire);
		lane_add(L, SUB_LOAD, L->m[k].load, ws[k]);
		lane_add(L, SUB_STORE, L->m[k].store, ws[k]);
		lane_add(L, SUB_PTR_LOAD, ws[k]->mod->load, ws[k]);
		lane_add(L, SUB_PTR_STORE, ws[k]->mod->store, ws[k]);
	}
}

/* A load or store record, decoded once, to every handler of its kind that owns it. */
static inline __attribute__((always_inline)) size_t
lane_access(const struct lane *L, unsigned kind, const struct decoder *d, const uint64_t *rec)
{
	const struct lane_sub *s = L->sub[kind];
	const uint32_t site = (uint32_t)((rec[d->word[0]] >> d->shift[0]) & d->mask[0]);
	const uint64_t addr = (rec[d->word[1]] >> d->shift[1]) & d->mask[1];
	const uint64_t value = (rec[d->word[2]] >> d->shift[2]) & d->mask[2];
	const uint32_t size = (uint32_t)((rec[d->word[3]] >> d->shift[3]) & d->mask[3]);

	for (unsigned k = 0, n = L->nsub[kind]; k < n; k++)
		if (!s[k].w || owns_access(s[k].w, site, addr, size))
			s[k].fn(s[k].state, site, addr, value, size);
	return d->nwords;
}

/* Any other record: each worker's dispatch(), in lane order.  Returns the record's length. */
static size_t lane_other(const struct lane *L, struct mn_worker *const *ws, unsigned n,
			 const struct decoder *dec, const uint64_t *rec, unsigned code,
			 struct mn_decode_stats *const *st)
{
	size_t len = dec[code].nwords;

	for (unsigned k = 0; k < n; k++) {
		if (ws[k]->nworkers > 1)
			dispatch(&L->m[k], ws[k]->state, ws[k], dec, rec, code, st[k], true);
		else
			dispatch(&L->m[k], ws[k]->state, ws[k], dec, rec, code, st[k], false);
	}
	return len;
}

void mn_lane_run(struct mn_worker *const *ws, unsigned n, const struct mn_wire *wire,
		 const uint64_t *words, size_t nwords, struct mn_decode_stats *const *st)
{
	struct decoder dec[256];
	struct lane L;
	struct shadow_map sm[MN_LANE_MAX];
	unsigned nsm = 0;
	uint64_t events = 0, values[MN_LANE_MAX];
	size_t i = 0, j = 0;

	if (n == 1) {   /* the loop made for one module */
		mn_worker_run(ws[0], wire, words, nwords, st[0]);
		return;
	}
	decoders_make(dec, wire);
	lane_make(&L, ws, n, wire);
	for (unsigned k = 0; k < n; k++) {
		nsm += shadow_of(ws[k], &sm[nsm]);
		values[k] = st[k]->values;
	}

	for (unsigned k = 0; nsm && k < AHEAD_RECORDS && j < nwords; k++)
		j = ahead(dec, words, j, nwords, sm, nsm);
	while (i < nwords) {
		const uint64_t *rec = words + i;
		unsigned code = (unsigned)(rec[0] & 0xff);

		__builtin_prefetch(rec + PREFETCH_WORDS);   /* as in run() */
		if (__builtin_expect((size_t)dec[code].nwords - 1 >= nwords - i, 0)) {
			if (!rec[0]) {
				i++;
				continue;
			}
			for (unsigned k = 0; k < n; k++)
				st[k]->corrupt++;
			break;
		}
		if (nsm && j < nwords)
			j = ahead(dec, words, j, nwords, sm, nsm);
		switch (code) {
		case MN_EV_LOAD:
			i += lane_access(&L, SUB_LOAD, &dec[MN_EV_LOAD], rec);
			break;
		case MN_EV_STORE:
			i += lane_access(&L, SUB_STORE, &dec[MN_EV_STORE], rec);
			break;
		case MN_EV_LOAD | MN_CODE_POINTER:
			i += lane_access(&L, SUB_PTR_LOAD, &dec[MN_EV_LOAD | MN_CODE_POINTER], rec);
			break;
		case MN_EV_STORE | MN_CODE_POINTER:
			i += lane_access(&L, SUB_PTR_STORE, &dec[MN_EV_STORE | MN_CODE_POINTER], rec);
			break;
		default:
			i += lane_other(&L, ws, n, dec, rec, code, st);
		}
		events++;
	}
	for (unsigned k = 0; k < n; k++)
		st[k]->events += events - (st[k]->values - values[k]);
}

void mn_word_wake(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void mn_word_wait(uint32_t *w, uint32_t v, unsigned timeout_ms)
{
	struct timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (long)(timeout_ms % 1000) * 1000000L,
	};

	/* EAGAIN (changed already), EINTR and ETIMEDOUT all mean: look again. */
	syscall(SYS_futex, w, FUTEX_WAIT, v, &ts, NULL, 0);
}
