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

bool mn_wire_valid(const struct mn_wire *w, char *why, size_t whylen)
{
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
}

/* ---- Loop summaries -------------------------------------------------------------------------- */

#define ADDR_MASK ((UINT64_C(1) << 48) - 1)   /* addresses are 48 bits on the wire */

/*
 * Makes room for one more stored entry on w's pending stack.  False when there is none: an entry
 * is unstored already (later ones must stay above it), the bound is reached, or realloc failed.
 */
static __attribute__((noinline)) bool pending_grow(struct mn_worker *w)
{
	size_t max = w->pending_max ? w->pending_max : MN_PENDING_MAX;
	size_t cap = w->pending_cap ? 2 * w->pending_cap : 64;
	struct mn_summary_access *p;

	if (w->unstored || w->pending_cap >= max)
		return false;
	if (cap > max)
		cap = max;
	p = realloc(w->pending, cap * sizeof(*p));
	if (!p)
		return false;
	w->pending = p;
	w->pending_cap = cap;
	return true;
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

	for (uint64_t k = 0; k < iters; k++) {
		if (iter)
			iter(state, site);
		for (unsigned j = 0; j < n; j++) {
			struct mn_summary_access *a = &acc[j];
			uint64_t addr = a->start & ADDR_MASK;

			a->start += (uint64_t)a->step;
			if (!by_addr || ((addr >> shift) % nworkers) == id)
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
 * A summary that finds fewer than n entries on the stack, or whose top n hold unstored ones, is
 * lost: counted in st->lost_summaries and not expanded.  Too few entries means records were lost
 * before it (the entries there belong to no whole summary any more): the stack is emptied.
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

	if (n > w->npending + w->unstored) {
		st->lost_summaries++;
		w->npending = 0;
		w->unstored = 0;
		return;
	}
	if (n && w->unstored) {
		size_t from_stored = n > w->unstored ? n - w->unstored : 0;

		st->lost_summaries++;
		w->unstored -= n - from_stored;
		w->npending -= from_stored;
		return;
	}
	w->npending -= n;
	acc = w->pending + w->npending;   /* stays valid: nothing is pushed until we return */
	st->summarized += iters * n;
	if (!sharded && m->loop_summary) {
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

void mn_worker_finish(struct mn_worker *w, struct mn_decode_stats *st)
{
	if (st)
		st->lost_pending += w->npending + w->unstored;
	free(w->pending);
	w->pending = NULL;
	w->npending = w->pending_cap = w->unstored = 0;
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
	switch (code) {
	case MN_EV_LOAD:
		d = &dec[MN_EV_LOAD];
		if (m->load && MINE_ADDR(ARG(1)))
			m->load(st, (uint32_t)ARG(0), ARG(1), ARG(2), (uint32_t)ARG(3));
		return d->nwords;
	case MN_EV_STORE:
		d = &dec[MN_EV_STORE];
		if (m->store && MINE_ADDR(ARG(1)))
			m->store(st, (uint32_t)ARG(0), ARG(1), ARG(2), (uint32_t)ARG(3));
		return d->nwords;
	case MN_EV_POINTER_CREATE:
		d = &dec[MN_EV_POINTER_CREATE];
		if (m->pointer_create && MINE_ADDR(ARG(1)))
			m->pointer_create(st, (uint32_t)ARG(0), ARG(1), (uint32_t)ARG(2));
		return d->nwords;
	case MN_EV_HEAP_ALLOC:
		d = &dec[MN_EV_HEAP_ALLOC];
		if (m->heap_alloc && MINE_ADDR(ARG(1)))
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
	default:   /* a code the catalogue added after this backend was built */
		return dec[code].nwords;
	}
#undef MINE_ADDR
#undef ARG
}

/* The decode loop, instantiated with and without sharding (mn_worker_run()). */
static inline __attribute__((always_inline)) void
run(struct mn_worker *w, const struct decoder *dec, const uint64_t *words, size_t nwords,
    struct mn_decode_stats *st, bool sharded)
{
	/* A copy that no handler can change, so its pointers stay in registers across the calls. */
	const struct mn_module m = *w->mod;
	void *state = w->state;
	uint64_t events = 0;
	size_t i = 0;

	while (i < nwords) {
		const uint64_t *rec = words + i;
		unsigned code = (unsigned)(rec[0] & 0xff);

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
		i += dispatch(&m, state, w, dec, rec, code, st, sharded);
		events++;
	}
	st->events += events;
}

void mn_worker_run(struct mn_worker *w, const struct mn_wire *wire, const uint64_t *words,
		   size_t nwords, struct mn_decode_stats *st)
{
	struct decoder dec[256];   /* by the low byte of word 0: every byte value has an entry */

	decoders_make(dec, wire);
	if (w->nworkers == 1)
		run(w, dec, words, nwords, st, false);
	else
		run(w, dec, words, nwords, st, true);
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
