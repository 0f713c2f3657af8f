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
 * Data parallelism: struct mn_worker carries the ownership predicate of PROMPT's execute_if_mine.
 * Site-sharded modules own events by site id, address-sharded ones by address >> shard_shift, and
 * context events (function, loop, program) go to every worker.  With one worker it always owns.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
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

/* execute_if_mine: does worker w own this shard key?  Always with one worker. */
static inline bool owns(const struct mn_worker *w, uint64_t key)
{
	return w->nworkers == 1 || key % w->nworkers == w->id;
}

static inline bool owns_site(const struct mn_worker *w, uint64_t site)
{
	return w->nworkers == 1 || w->mod->shard != MN_SHARD_SITE || owns(w, site);
}

static inline bool owns_addr(const struct mn_worker *w, uint64_t site, uint64_t addr)
{
	if (w->nworkers == 1)
		return true;
	if (w->mod->shard == MN_SHARD_ADDRESS)
		return owns(w, addr >> w->mod->shard_shift);
	return owns_site(w, site);
}

/* Calls the handler of event `code` for the record at rec; a NULL handler skips the event. */
static inline void dispatch(struct mn_worker *w, const struct mn_wire *wire, const uint64_t *rec,
			    unsigned code)
{
	const struct mn_module *m = w->mod;
	void *st = w->state;

#define ARG(i) mn_wire_get(wire, rec, code, (i))
	switch (code) {
	case MN_EV_LOAD:
		if (m->load && owns_addr(w, ARG(0), ARG(1)))
			m->load(st, (uint32_t)ARG(0), ARG(1), ARG(2), (uint32_t)ARG(3));
		break;
	case MN_EV_STORE:
		if (m->store && owns_addr(w, ARG(0), ARG(1)))
			m->store(st, (uint32_t)ARG(0), ARG(1), ARG(2), (uint32_t)ARG(3));
		break;
	case MN_EV_POINTER_CREATE:
		if (m->pointer_create && owns_addr(w, ARG(0), ARG(1)))
			m->pointer_create(st, (uint32_t)ARG(0), ARG(1), (uint32_t)ARG(2));
		break;
	case MN_EV_HEAP_ALLOC:
		if (m->heap_alloc && owns_addr(w, ARG(0), ARG(1)))
			m->heap_alloc(st, (uint32_t)ARG(0), ARG(1), ARG(2));
		break;
	case MN_EV_HEAP_REALLOC:
		/* Two addresses: the owner of either one hears of it. */
		if (m->heap_realloc &&
		    (owns_addr(w, ARG(0), ARG(1)) || owns_addr(w, ARG(0), ARG(2))))
			m->heap_realloc(st, (uint32_t)ARG(0), ARG(1), ARG(2), ARG(3));
		break;
	case MN_EV_HEAP_FREE:
		if (m->heap_free && owns_addr(w, ARG(0), ARG(1)))
			m->heap_free(st, (uint32_t)ARG(0), ARG(1));
		break;
	case MN_EV_STACK_ALLOC:
		if (m->stack_alloc && owns_addr(w, ARG(0), ARG(1)))
			m->stack_alloc(st, (uint32_t)ARG(0), ARG(1), ARG(2));
		break;
	case MN_EV_STACK_FREE:
		if (m->stack_free && owns_addr(w, ARG(0), ARG(1)))
			m->stack_free(st, (uint32_t)ARG(0), ARG(1));
		break;
	case MN_EV_GLOBAL:
		if (m->global && owns_addr(w, ARG(0), ARG(1)))
			m->global(st, (uint32_t)ARG(0), ARG(1), ARG(2));
		break;
	/* Context events reach every worker: each keeps its own context (PROMPT 5.3). */
	case MN_EV_FUNC_ENTRY:
		if (m->func_entry)
			m->func_entry(st, (uint32_t)ARG(0));
		break;
	case MN_EV_FUNC_EXIT:
		if (m->func_exit)
			m->func_exit(st, (uint32_t)ARG(0));
		break;
	case MN_EV_LOOP_INVOKE:
		if (m->loop_invoke)
			m->loop_invoke(st, (uint32_t)ARG(0));
		break;
	case MN_EV_LOOP_ITER:
		if (m->loop_iter)
			m->loop_iter(st, (uint32_t)ARG(0));
		break;
	case MN_EV_LOOP_EXIT:
		if (m->loop_exit)
			m->loop_exit(st, (uint32_t)ARG(0));
		break;
	case MN_EV_PROGRAM_START:
		if (m->program_start)
			m->program_start(st, (uint32_t)ARG(0));
		break;
	case MN_EV_PROGRAM_END:
		if (m->program_end)
			m->program_end(st, (uint32_t)ARG(0), (uint32_t)ARG(1));
		break;
	default:
		break;   /* a code the catalogue added after this backend was built */
	}
#undef ARG
}

void mn_worker_run(struct mn_worker *w, const struct mn_wire *wire, const uint64_t *words,
		   size_t nwords, struct mn_decode_stats *st)
{
	size_t i = 0;
	uint64_t events = 0;

	while (i < nwords) {
		uint64_t w0 = words[i];
		unsigned code = (unsigned)(w0 & 0xff), n;

		if (!w0) {
			i++;   /* unwritten space */
			continue;
		}
		n = code < MN_WIRE_MAX_EVENTS ? wire->nwords[code] : 0;
		if (!n || n > nwords - i) {
			st->corrupt++;
			break;
		}
		dispatch(w, wire, words + i, code);
		events++;
		i += n;
	}
	st->events += events;
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
