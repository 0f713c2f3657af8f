/*
 * The queue's process-local side, never installed: the handle (struct mn_queue) and what queue.c
 * shares with the Lamport mode, which lives in bench/queue/lamport.c and is linked only into the
 * bench's builds (the breakdown's baseline: bench/queue/CMakeLists.txt).  queue_internal.h is the
 * shared memory; this is what each process keeps about it.
 */
#ifndef MNEMO_QUEUE_LOCAL_H
#define MNEMO_QUEUE_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "queue.h"
#include "queue_internal.h"

#define MN_QUEUE_SPIN           2000                   /* pause iterations before sleeping */
#define MN_QUEUE_WAIT_NS        (50 * 1000 * 1000L)    /* futex timeout: liveness check period */
#define MN_QUEUE_DROP_STRIPES   16

enum { HELD_NONE, HELD_BUF, HELD_TAIL };

struct drop_stripe {
	uint64_t n;
	uint8_t pad[MN_QUEUE_LINE - sizeof(uint64_t)];
};

/* Process-local handle; one type for both sides, `is_producer` tells which. */
struct mn_queue {
	/* Both sides: the mapping and its configuration (copied from the header once). */
	struct drop_stripe dropped_threads[MN_QUEUE_DROP_STRIPES];  /* first: cache-line aligned */
	uint8_t *base;
	struct mn_qhdr *hdr;
	size_t map_bytes;
	uint64_t buf_bytes;
	uint64_t bufs_off;
	uint32_t nbufs;
	uint32_t nconsumers;
	bool is_producer;
	bool lamport;                  /* the Lamport mode: the buffers are one ring (ring_words) */
	uint64_t ring_words;

	/* Producer: guarded by busy, except where said. */
	uint32_t busy;                 /* try-lock; never waited on */
	int fd;                        /* the memfd */
	bool started;
	bool filling;                  /* buffer `seq` is owned and being filled */
	bool disabled;                 /* drop everything: finished, failed or abandoned */
	bool failed;                   /* the failure hook ran */
	uint64_t seq;                  /* the buffer being filled, or the next one to fill */
	uint64_t **cur_ptr;            /* &mn_q_cur of the producer thread: identifies it */
	pid_t pid;                     /* the producing process */
	uint32_t all_mask;             /* one bit per consumer */
	int64_t start_ns;
	void (*hook)(const char *why); /* set before producing */
	uint64_t dropped_other;        /* atomic, relaxed */
	char why[128];
	/* Producer, Lamport mode: owned by the push that set lpushing (the producer thread). */
	uint32_t lpushing;             /* a push is under way; signal-ordered */
	uint64_t lwrite;               /* words pushed; hdr.lwrite once published */
	uint64_t lwoff;                /* lwrite % ring_words */
	uint64_t lread;                /* hdr.lread as last seen */

	/* Consumer. */
	unsigned index;
	uint32_t bit;
	uint64_t cseq;                 /* next sequence number to read */
	int held;                      /* HELD_* */
	int pidfd;                     /* the producer, or -1: fall back to kill() */
	pid_t producer_pid;
	bool dead;                     /* producer process gone: nothing more will be published */
	bool died;                     /* the stream ended by that death */
	bool ended;
	uint64_t lr;                   /* Lamport mode: words released */
	uint64_t lroff;                /* lr % ring_words */
	uint64_t lheld;                /* words of the popped, unreleased part */
	struct zeroer *zeroer;         /* mn_queue_zero_behind(): frees slots on its thread */
};

_Static_assert(offsetof(struct mn_queue, dropped_threads) == 0, "stripes start the handle");

/* ---- Addressing the mapping --------------------------------------------------------------------- */

static inline struct mn_qslot *slot_of(const struct mn_queue *q, unsigned i)
{
	return (struct mn_qslot *)(q->base + MN_QUEUE_SLOTS_OFF + (size_t)i * sizeof(struct mn_qslot));
}

static inline struct mn_qctl *ctl_of(const struct mn_queue *q, uint32_t k)
{
	return (struct mn_qctl *)(q->base + MN_QUEUE_CTL_OFF + (size_t)k * sizeof(struct mn_qctl));
}

static inline uint64_t *buf_of(const struct mn_queue *q, uint32_t k)
{
	return (uint64_t *)(q->base + q->bufs_off + (size_t)k * q->buf_bytes);
}

static inline uint32_t slot_index(const struct mn_queue *q, uint64_t seq)
{
	return (uint32_t)(seq % q->nbufs);
}

static inline uint32_t lap_of(const struct mn_queue *q, uint64_t seq)
{
	return (uint32_t)(seq / q->nbufs);
}

/* ---- queue.c's helpers the Lamport mode uses (queue.c says what each does) ---------------------- */

struct mn_queue *mn_q_producer(void);   /* the process's producer handle, or NULL (acquire) */
int64_t mn_q_now_ns(void);
int mn_q_futex_wait(uint32_t *w, uint32_t val, long timeout_ns);
void mn_q_futex_wake(uint32_t *w, int n);
void mn_q_drop_thread(struct mn_queue *q);       /* counts an event of another thread */
void mn_q_drop_other(struct mn_queue *q);        /* counts any other dropped event */
void mn_q_fail(struct mn_queue *q, const char *why);   /* under busy */
bool mn_q_check_consumers(struct mn_queue *q, uint32_t pending);
bool mn_q_producer_exited(struct mn_queue *q);

/* ---- The Lamport mode (bench/queue/lamport.c; weak references in queue.c) ------------------------ */

/* mn_queue_pop() of a Lamport queue: whatever is published, as soon as it is. */
int mn_q_lamport_pop(struct mn_queue *q, const uint64_t **words, size_t *nwords);
/* mn_queue_release() of a Lamport queue: hands the words popped back to the producer. */
void mn_q_lamport_release(struct mn_queue *q);

#endif
