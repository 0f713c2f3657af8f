/*
 * The queue's Lamport mode: the conventional single-producer ring (Lamport's, the Liberty
 * queues') that PROMPT 5.2's ping-pong buffers improve on, kept as the baseline row of bench/run.sh's
 * breakdown (PROMPT's Table 8) and nothing else.  queue.h says what it does for its callers and
 * queue_internal.h lays out its part of the shared memory ("Lamport mode").
 *
 * Not part of the production queue: this file is linked only into the bench's builds
 * (bench/queue/CMakeLists.txt): mnemo-backend-lamport and the bench's other baseline backends,
 * lib/mnemo/libmnemo-queue-lamport.a, which `mnemo-cc --mnemo-queue=lamport` links into a
 * program (build tree only, never installed), and the Lamport tests.  queue/queue.c forwards to it
 * through weak references (queue/queue_local.h) and refuses a Lamport queue where it is absent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "barrier.h"
#include "queue.h"
#include "queue_internal.h"
#include "queue_local.h"

/* ---- Producer ---------------------------------------------------------------------------------- */

/* The consumer sleeps, or is about to: wake it, once per sleep (whoever clears sleepers wakes). */
static void lamport_wake(struct mn_queue *q)
{
	struct mn_qhdr *h = q->hdr;

	if (mn_exchange_acquire(&h->sleepers, 0)) {
		/* Changes the futex word, so a consumer not yet asleep does not go to sleep. */
		mn_fetch_add_release(&h->stream, 2);
		mn_q_futex_wake(&h->stream, INT_MAX);
	}
}

static inline bool lamport_room(const struct mn_queue *q, uint64_t need)
{
	return q->lwrite + need - q->lread <= q->ring_words;
}

/*
 * Waits until `need` words of the ring are free.  Returns 0, -ECANCELED when the stream ended
 * meanwhile (a finish on another thread, or in a handler), or -EPIPE after failing the queue (the
 * consumer exited, never attached, or detached).  Under lpushing; takes busy to fail the queue.
 */
static int lamport_wait(struct mn_queue *q, uint64_t need)
{
	struct mn_qhdr *h = q->hdr;
	uint32_t *lread_lo = (uint32_t *)&h->lread;  /* little-endian: the half that moves */
	int64_t next_check;
	int ret = 0;

	for (int i = 0; i < MN_QUEUE_SPIN; i++) {
		/* The consumer's reads of the words it released happen before our stores over them;
		 * pairs with the release store in mn_queue_release(). */
		q->lread = mn_load_acquire(&h->lread);
		if (lamport_room(q, need))
			return 0;
		mn_cpu_relax();
	}
	if (mn_exchange_acquire(&q->prod->planes[0].busy, 1))
		return -ECANCELED;  /* only a finish holds it: the stream is ending */
	next_check = mn_q_now_ns() + MN_QUEUE_WAIT_NS;
	for (;;) {
		if (mn_load_relaxed(&q->disabled) ||
		    (mn_load_relaxed(&h->stream) & MN_QSTREAM_END)) {
			q->disabled = true;
			ret = -ECANCELED;
			break;
		}
		/* Pairs with the release in mn_queue_detach() / mn_queue_forget_consumer(). */
		if ((mn_load_acquire(&h->detached) & q->all_mask) == q->all_mask) {
			mn_q_fail(q, "every backend detached");
			ret = -EPIPE;
			break;
		}
		mn_store_relaxed(&h->prod_waiting, 1);
		/* Store buffering with mn_queue_release(): either we see its lread, or it sees
		 * prod_waiting; and with mn_q_lamport_pop(): either it sees our lwrite, or we see
		 * sleepers (a wake the push missed is made up here). */
		mn_fence_seq_cst();
		if (mn_load_relaxed(&h->sleepers))
			lamport_wake(q);
		/* As above, pairs with the release store in mn_queue_release(). */
		q->lread = mn_load_acquire(&h->lread);
		if (lamport_room(q, need))
			break;
		mn_q_futex_wait(lread_lo, (uint32_t)q->lread, MN_QUEUE_WAIT_NS);
		if (mn_q_now_ns() >= next_check) {
			if (mn_q_check_consumers(q, q->all_mask & ~mn_load_acquire(&h->detached))) {
				ret = -EPIPE;
				break;
			}
			next_check = mn_q_now_ns() + MN_QUEUE_WAIT_NS;
		}
	}
	mn_store_relaxed(&h->prod_waiting, 0);
	/* Pairs with the exchange above (and the one in mn_queue_producer_finish()). */
	mn_store_release(&q->prod->planes[0].busy, 0);
	return ret;
}

/*
 * The whole push is guarded by lpushing, a flag only this thread and its signal handlers touch
 * (signal-ordered, no atomic instruction): a handler that finds it set drops its event.  A handler
 * that runs between the test and the set finishes its push before this one reads any state.
 */
MN_EXPORT void mn_queue_push_lamport(const uint64_t *words, unsigned n)
{
	struct mn_queue *q = mn_q_producer();
	uint64_t pad, need, *dst;
	int saved_errno;

	if (!q)
		return;
	if (!q->lamport) {
		mn_queue_push(words, n);
		return;
	}
	if (&mn_q_cur != q->prod->planes[0].cur_ptr) {
		mn_q_drop_thread(q);
		return;
	}
	if (mn_load_signal(&q->lpushing)) {
		mn_q_drop_other(q);  /* a handler that interrupted a push on this thread */
		return;
	}
	mn_store_signal(&q->lpushing, 1);
	/* The flag is set before any state is read, as a handler on this thread sees it. */
	mn_signal_fence();
	if (mn_load_relaxed(&q->disabled) || n == 0 || n > MN_WIRE_MAX_WORDS) {
		mn_q_drop_other(q);  /* finished, failed, abandoned (a fork child) */
		goto out;
	}
	if (!mn_q_base) {
		/* A newer thread whose TLS block took the exited producer thread's address. */
		mn_q_drop_thread(q);
		goto out;
	}
	/* A record never crosses the ring's end (pops hand out whole records): zeros before it. */
	pad = q->lwoff + n > q->ring_words ? q->ring_words - q->lwoff : 0;
	need = pad + n;
	if (!lamport_room(q, need)) {
		int r;

		saved_errno = errno;
		r = lamport_wait(q, need);
		errno = saved_errno;
		if (r) {
			mn_q_drop_other(q);
			goto out;
		}
	}
	dst = buf_of(q, 0) + q->lwoff;
	if (pad) {
		for (uint64_t i = 0; i < pad; i++)
			dst[i] = 0;
		dst = buf_of(q, 0);
	}
	for (unsigned i = 0; i < n; i++)
		dst[i] = words[i];
	q->lwrite += need;
	q->lwoff = (uint64_t)(dst - buf_of(q, 0)) + n;
	if (q->lwoff == q->ring_words)
		q->lwoff = 0;
	/* Publish: the record's words happen before the index that covers them; pairs with the
	 * acquire load of lwrite in mn_q_lamport_pop(). */
	mn_store_release(&q->hdr->lwrite, q->lwrite);
	/* No fence (one per record would be the cost of a seq_cst store): a consumer going to sleep
	 * just now may be missed, which costs it one futex timeout at most (queue_internal.h). */
	if (mn_load_relaxed(&q->hdr->sleepers)) {
		saved_errno = errno;
		lamport_wake(q);
		errno = saved_errno;
	}
out:
	/* Our state changes happen before the flag clears, as a handler sees them. */
	mn_signal_fence();
	mn_store_signal(&q->lpushing, 0);
}

/* ---- Consumer ---------------------------------------------------------------------------------- */

/*
 * Whatever is published, as soon as it is.  The end is looked at before lwrite, so
 * an end seen covers every push before it.
 */
int mn_q_lamport_pop(struct mn_queue *q, const uint64_t **words, size_t *nwords)
{
	struct mn_qhdr *h = q->hdr;
	int spins = 0;

	for (;;) {
		/* Pairs with the release in mn_queue_producer_finish() (the end, and what the
		 * producer wrote before it). */
		uint32_t s = mn_load_acquire(&h->stream);
		/* Pairs with the release in mn_queue_push_lamport(): the records below lwrite. */
		uint64_t w = mn_load_acquire(&h->lwrite);

		if (w != q->lr) {
			uint64_t avail = w - q->lr, to_end = q->ring_words - q->lroff;

			if (avail > q->ring_words)
				return -EIO;
			q->lheld = avail < to_end ? avail : to_end;
			*words = buf_of(q, 0) + q->lroff;
			*nwords = q->lheld;
			q->held = HELD_BUF;
			return 1;
		}
		if (s & MN_QSTREAM_END) {
			q->ended = true;
			return 0;
		}
		if (q->dead) {
			q->died = true;  /* an unpublished last record is lost */
			q->ended = true;
			return 0;
		}
		if (spins < MN_QUEUE_SPIN) {
			spins++;
			mn_cpu_relax();
			continue;
		}
		if (mn_q_producer_exited(q)) {
			q->dead = true;  /* look at lwrite once more */
			continue;
		}
		mn_store_relaxed(&h->sleepers, 1);
		/* Store buffering with lamport_wait() and mn_queue_producer_finish(): either we
		 * see its lwrite or end, or it sees sleepers (the push itself may miss it:
		 * queue_internal.h). */
		mn_fence_seq_cst();
		if (mn_load_relaxed(&h->stream) == s && mn_load_relaxed(&h->lwrite) == w)
			mn_q_futex_wait(&h->stream, s, MN_QUEUE_WAIT_NS);
		mn_store_relaxed(&h->sleepers, 0);
	}
}

void mn_q_lamport_release(struct mn_queue *q)
{
	struct mn_qhdr *h = q->hdr;

	q->lr += q->lheld;
	q->lroff += q->lheld;
	if (q->lroff == q->ring_words)
		q->lroff = 0;
	q->lheld = 0;
	/* Our reads of those words happen before the producer's stores over them; pairs with the
	 * acquire loads of lread in lamport_wait(). */
	mn_store_release(&h->lread, q->lr);
	/* Store buffering with lamport_wait(): either it sees lread, or we see prod_waiting. */
	mn_fence_seq_cst();
	if (mn_load_relaxed(&h->prod_waiting))
		mn_q_futex_wake((uint32_t *)&h->lread, 1);
}
