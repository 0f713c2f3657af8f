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
#define MN_QUEUE_SPIN_SLEPT     (MN_QUEUE_SPIN / 32)   /* ... after a producer wait that slept */
#define MN_QUEUE_WAIT_NS        (50 * 1000 * 1000L)    /* futex timeout: liveness check period */
#define MN_QUEUE_DROP_STRIPES   16

enum { HELD_NONE, HELD_BUF, HELD_TAIL };

struct drop_stripe {
	uint64_t n;
	uint8_t pad[MN_QUEUE_LINE - sizeof(uint64_t)];
};

/*
 * The producer's private state of one lane (queue.c, "Lanes"), on a cache line of its own: the
 * thread that holds the lane writes it, the others only when they take or hand back the lane.
 * Guarded by busy, except where said.
 */
struct mn_qplane {
	uint32_t busy;                 /* try-lock; never waited on */
	uint32_t lane;                 /* its index, 0..nlanes-1 */
	bool filling;                  /* buffer `seq` is owned and being filled */
	uint64_t seq;                  /* the buffer being filled, or the next one to fill */
	uint64_t **cur_ptr;            /* &mn_q_cur of the thread holding it: identifies it */
	uint32_t thread;               /* that thread's number (1: the producer thread) */
	bool slept;                    /* its last wait for a free buffer slept (acquire_slot()) */
} __attribute__((aligned(MN_QUEUE_LINE)));

/*
 * The producer's lanes, in a private mapping of their own rather than on the heap: the runtime's
 * allocations must not move the program's heap blocks (profiles state addresses and strides).
 */
struct mn_qprod {
	uint64_t free_lanes[MN_QUEUE_MAX_LANES / 64];  /* bit l: lane l free; atomic */
	uint32_t threads;              /* thread numbers given so far; atomic */
	size_t bytes;                  /* of the mapping */
	struct mn_qplane planes[];     /* [nlanes]: each lane's private state */
};

/* A consumer's view of the lanes. */
struct mn_qcons {
	uint32_t next_lane;            /* where the round robin looks first */
	uint32_t held_lane;            /* the lane of the popped buffer */
	uint32_t held_thread;          /* and its thread */
	uint32_t tail_lane;            /* the stream ended: lanes whose tail was looked at */
	uint32_t pad;
	uint64_t next_ticket;          /* the ticket a buffer must carry to be read next (or none) */
	uint64_t cseq[];               /* [nlanes]: each lane's next sequence number to read */
};

/* Process-local handle; one type for both sides, `is_producer` tells which. */
struct mn_queue {
	/* Both sides: the mapping and its configuration (copied from the header once). */
	struct drop_stripe dropped_threads[MN_QUEUE_DROP_STRIPES];  /* first: cache-line aligned */
	uint8_t *base;
	struct mn_qhdr *hdr;
	size_t map_bytes;
	uint64_t buf_bytes;            /* lane 0's buffers */
	uint64_t lane_bytes;           /* the other lanes' */
	uint64_t bufs_off;
	uint64_t lanes_off;
	uint32_t nbufs;                /* per lane */
	uint32_t nlanes;
	uint32_t nconsumers;
	bool is_producer;
	bool lamport;                  /* the Lamport mode: the buffers are one ring (ring_words) */
	uint64_t ring_words;

	/* Producer: guarded by prod->planes[0].busy (lane 0's), except where said. */
	struct mn_qprod *prod;
	int fd;                        /* the memfd */
	bool started;
	bool disabled;                 /* drop everything: finished, failed or abandoned; read
					* by every lane's slow path */
	bool failed;                   /* the failure hook ran */
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
	struct mn_qcons *cons;
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

/* Slots g are numbered over every lane: g = lane * nbufs + buffer (queue_internal.h). */
static inline struct mn_qctl *ctl_of(const struct mn_queue *q, uint32_t g)
{
	return (struct mn_qctl *)(q->base + MN_QUEUE_CTL_OFF + (size_t)g * sizeof(struct mn_qctl));
}

static inline struct mn_qlane *lane_of(const struct mn_queue *q, uint32_t lane)
{
	return (struct mn_qlane *)(q->base + q->lanes_off + (size_t)lane * sizeof(struct mn_qlane));
}

/* Bytes of slot g's buffer. */
static inline uint64_t buf_bytes_of(const struct mn_queue *q, uint32_t g)
{
	return g < q->nbufs ? q->buf_bytes : q->lane_bytes;
}

static inline uint64_t *buf_of(const struct mn_queue *q, uint32_t g)
{
	if (g < q->nbufs)
		return (uint64_t *)(q->base + q->bufs_off + (size_t)g * q->buf_bytes);
	return (uint64_t *)(q->base + q->bufs_off + (size_t)q->nbufs * q->buf_bytes +
			    (size_t)(g - q->nbufs) * q->lane_bytes);
}

/* The slot of lane `lane`'s buffer number seq. */
static inline uint32_t slot_index(const struct mn_queue *q, uint32_t lane, uint64_t seq)
{
	return lane * q->nbufs + (uint32_t)(seq % q->nbufs);
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
