/*
 * The event queue's shared memory, documented like a file format (never installed).
 *
 * One anonymous memfd, created by the producer and mapped MAP_SHARED by it and by every consumer
 * (each consumer inherits the fd).  Everything in it starts zeroed.  All integers are little-endian
 * native words; every field that two processes touch is read and written only through barrier.h.
 *
 *   offset                        size                      what
 *   0                             256                       struct mn_qhdr (below)
 *   MN_QUEUE_SLOTS_OFF  = 256     64 * MN_QUEUE_MAX_CONSUMERS  struct mn_qslot, one per consumer
 *   MN_QUEUE_CTL_OFF    = 2304    128 * nbufs               struct mn_qctl, one per buffer
 *   ...                                                     zero up to header_bytes
 *   header_bytes (page multiple)  buf_bytes * nbufs         the buffers, each page aligned
 *   extra_off                     extra_bytes, rounded up   caller-owned (the session block)
 *                                 to a page
 *
 * With nbufs <= 14 the header fits in one page.  Changing any offset, size or meaning below changes
 * the format: bump MN_QUEUE_VERSION (a consumer refuses any other version with -EPROTO).
 *
 * Protocol (sequence numbers s = 0, 1, 2, ... count buffers; buffer s lives in slot k = s % nbufs,
 * on lap L = s / nbufs of that slot):
 *
 *   producer fills slot k  -- only after ctl[k].freed == L (every earlier lap handed back)
 *   producer publishes s   -- sfence; ctl[k].used, .readers (bit i per consumer still attached),
 *                             .filled = L + 1; then hdr.stream += 2 (release); futex-wake stream
 *   consumer reads s       -- once (hdr.stream >> 1) != s mod 2^31 (acquire), reads used bytes
 *   consumer releases s    -- clears its bit in ctl[k].readers (acq_rel); the one that clears the
 *                             last bit zeroes the used bytes, then ctl[k].freed = L + 1 (release)
 *                             and futex-wakes the producer if hdr.prod_waiting
 *   end of stream          -- hdr.stream |= 1 (release) after the last publish; futex-wake stream
 *
 * Invariant: outside the bytes of records a buffer holds zeros, because every lap's used bytes are
 * zeroed before the slot is handed back.  That is what lets a consumer scan the buffer a dead
 * producer was filling: its records end at the last non-zero word (give or take the arguments of
 * the last record that happen to be zero), and a zero word where a record would start is never
 * the start of a record (word 0 carries the event code, never 0).
 *
 * Detached consumers: a consumer that detaches sets its bit in hdr.detached, then clears its bit
 * in every buffer it has not released; the producer leaves detached consumers out of .readers when
 * it publishes, and, while it waits for a slot, clears detached consumers' bits from it too (that
 * covers a detach racing with a publish).  Whoever clears the last bit frees the slot.  A consumer
 * that dies without detaching is noticed by the producer while it waits (every futex timeout); the
 * queue then fails (mn_queue_set_failure_hook()).
 *
 * Counters are 32 bits and wrap: only equality is ever tested, and no party is more than nbufs
 * sequence numbers (far below 2^31) ahead of another.
 *
 * Lamport mode (hdr.mode == MN_QMODE_LAMPORT, one consumer; queue.h says what it is for): the
 * buffers are one ring of R = nbufs * buf_bytes / 8 words, and none of ctl[], the readers bits or
 * the buffer sequence numbers are used.  Word positions p = 0, 1, 2, ... live at ring[p % R].
 *
 *   producer pushes        -- plain stores of the record at lwrite % R (a record that would cross
 *                             the ring's end is preceded by zero words up to it), only once
 *                             lwrite + its words - lread <= R; then hdr.lwrite += words (release)
 *   consumer reads         -- [lread, lwrite) up to the ring's end, once lwrite != lread (acquire)
 *   consumer releases      -- hdr.lread += the words it read (release); seq_cst fence; futex-wakes
 *                             the low half of lread if hdr.prod_waiting
 *   consumer sleeps        -- sleepers = 1; seq_cst fence; re-reads lwrite and stream; futex-waits
 *                             on stream.  The producer, after a push, reads sleepers without a
 *                             fence (a fence per record would be the cost of a seq_cst store): when
 *                             set, it clears it, adds 2 to stream and futex-wakes stream.  A wake
 *                             it misses that way costs the consumer one futex timeout at most; the
 *                             producer's own waits (ring full, below) and the end of stream use
 *                             the fenced handshake and miss none.
 *   producer waits         -- prod_waiting = 1; seq_cst fence; wakes a sleeping consumer; re-reads
 *                             lread; futex-waits on its low half
 *   end of stream          -- as in the ping-pong mode: stream |= 1 after the last push
 *
 * A consumer reads nothing the producer has not published, so a dead producer's last record, if
 * unpublished, is lost rather than returned incomplete.
 */
#ifndef MNEMO_QUEUE_INTERNAL_H
#define MNEMO_QUEUE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "queue.h"

/* Gives a symbol default visibility in a build that defaults to hidden (STYLE rule 3). */
#ifndef MN_EXPORT
#define MN_EXPORT __attribute__((visibility("default")))
#endif

#define MN_QUEUE_MAGIC         UINT64_C(0x3145554555514e4d)  /* "MNQUEUE1" little-endian */
#define MN_QUEUE_VERSION       2u  /* 2: the Lamport mode (mode, lwrite, lread) */
#define MN_QUEUE_LINE          64u
#define MN_QUEUE_PAGE          4096u
/* MN_QUEUE_MAX_CONSUMERS (queue.h): one bit each in mn_qctl.readers and mn_qhdr.detached. */
#define MN_QUEUE_SLOTS_OFF     256u
#define MN_QUEUE_CTL_OFF       (MN_QUEUE_SLOTS_OFF + MN_QUEUE_LINE * MN_QUEUE_MAX_CONSUMERS)

/* hdr.mode */
#define MN_QMODE_PINGPONG      0u
#define MN_QMODE_LAMPORT       1u

/* hdr.stream: published buffer count in bits 31..1 (Lamport mode: wake-ups), end of stream in
 * bit 0. */
#define MN_QSTREAM_END         1u
#define MN_QSTREAM_COUNT_MASK  UINT32_C(0x7fffffff)

/*
 *   offset  size  field          written by / when
 *   0       8     magic          creator, once, before the fd is shared
 *   8       4     version
 *   12      4     header_bytes   bytes before buffer 0 (multiple of 4096)
 *   16      8     buf_bytes      bytes per buffer (multiple of 4096)
 *   24      4     nbufs          >= 2
 *   28      4     nconsumers     1..MN_QUEUE_MAX_CONSUMERS
 *   32      8     bufs_off       == header_bytes
 *   40      8     extra_off      == bufs_off + nbufs * buf_bytes
 *   48      8     extra_bytes    as asked for; the mapping is rounded up to a page
 *   56      8     map_bytes      size of the memfd
 *   64      4     producer_pid   creator; mn_queue_producer_start() rewrites it before producing
 *   68      4     mode           creator: MN_QMODE_*
 *   72      56    reserved (zero)
 *   128     4     stream         producer: futex word consumers sleep on (see MN_QSTREAM_*)
 *   132     4     prod_waiting   producer: 1 while it may sleep on some ctl[k].freed (Lamport
 *                                mode: on lread)
 *   136     8     lwrite         producer, Lamport mode: words pushed (padding included)
 *   144     48    reserved
 *   192     4     sleepers       consumers: how many may sleep on stream (producer skips the wake
 *                                when 0)
 *   196     4     detached       consumers (or the producer, for a consumer it gave up on): bit i
 *                                once consumer i left for good
 *   200     8     lread          the consumer, Lamport mode: words released; the producer
 *                                futex-waits on its low 32 bits
 *   208     48    reserved
 */
struct mn_qhdr {
	uint64_t magic;
	uint32_t version;
	uint32_t header_bytes;
	uint64_t buf_bytes;
	uint32_t nbufs;
	uint32_t nconsumers;
	uint64_t bufs_off;
	uint64_t extra_off;
	uint64_t extra_bytes;
	uint64_t map_bytes;
	int32_t producer_pid;
	uint32_t mode;
	uint32_t reserved0[14];

	/* Cache line 2: written by the producer only. */
	uint32_t stream;
	uint32_t prod_waiting;
	uint64_t lwrite;
	uint32_t reserved1[12];

	/* Cache line 3: written by the consumers (and sleepers cleared by a Lamport producer). */
	uint32_t sleepers;
	uint32_t detached;
	uint64_t lread;
	uint32_t reserved2[12];
};

/* Consumer slot states. */
enum {
	MN_QSLOT_NONE = 0,      /* not attached yet */
	MN_QSLOT_ATTACHED = 1,  /* pid is valid */
	MN_QSLOT_DETACHED = 2,  /* left for good (or the producer gave up on it) */
};

/*
 * One per consumer, each on its own cache line, at MN_QUEUE_SLOTS_OFF + 64 * i.
 *   0   4   pid       the consumer's pid, stored before state
 *   4   4   state     MN_QSLOT_*; NONE -> ATTACHED by compare-and-swap (so an index attaches once)
 *   8   8   released  buffers this consumer released (diagnostics only)
 */
struct mn_qslot {
	int32_t pid;
	uint32_t state;
	uint64_t released;
	uint8_t reserved[48];
};

/*
 * One per buffer, at MN_QUEUE_CTL_OFF + 128 * k: a line the producer writes when it publishes, and
 * a line the consumers write when they release.
 *   0   4   filled    lap + 1 of the contents last published in this slot
 *   8   8   used      bytes of records in it (a multiple of 8)
 *   64  4   readers   bit i set while consumer i has yet to release it
 *   68  4   freed     laps of this slot handed back to the producer; futex word it sleeps on
 */
struct mn_qctl {
	uint32_t filled;
	uint32_t reserved0;
	uint64_t used;
	uint8_t reserved1[48];

	uint32_t readers;
	uint32_t freed;
	uint8_t reserved2[56];
};

_Static_assert(sizeof(struct mn_qhdr) == MN_QUEUE_SLOTS_OFF, "mn_qhdr is the first 256 bytes");
_Static_assert(offsetof(struct mn_qhdr, producer_pid) == 64, "format: producer_pid at 64");
_Static_assert(offsetof(struct mn_qhdr, stream) == 128, "format: stream on its own line");
_Static_assert(offsetof(struct mn_qhdr, sleepers) == 192, "format: consumer line at 192");
_Static_assert(offsetof(struct mn_qhdr, lwrite) == 136 && offsetof(struct mn_qhdr, lread) == 200,
	       "format: Lamport indices on the producer's and the consumers' lines");
_Static_assert(sizeof(struct mn_qslot) == MN_QUEUE_LINE, "one consumer slot per cache line");
_Static_assert(sizeof(struct mn_qctl) == 2 * MN_QUEUE_LINE, "two cache lines per buffer");
_Static_assert(offsetof(struct mn_qctl, readers) == MN_QUEUE_LINE, "consumer half on line 2");
_Static_assert(MN_QUEUE_CTL_OFF == 2304, "format: buffer controls at 2304");
_Static_assert(MN_QUEUE_MAX_CONSUMERS <= 32, "readers is a 32-bit mask");

/* Bytes before buffer 0 for nbufs buffers. */
static inline uint64_t mn_qhdr_bytes(uint32_t nbufs)
{
	uint64_t b = MN_QUEUE_CTL_OFF + (uint64_t)nbufs * sizeof(struct mn_qctl);

	return (b + MN_QUEUE_PAGE - 1) & ~(uint64_t)(MN_QUEUE_PAGE - 1);
}

#endif /* MNEMO_QUEUE_INTERNAL_H */
