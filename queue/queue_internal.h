/*
 * The event queue's shared memory, documented like a file format (never installed).
 *
 * One anonymous memfd, created by the producer and mapped MAP_SHARED by it and by every consumer
 * (each consumer inherits the fd).  Everything in it starts zeroed.  All integers are little-endian
 * native words; every field that two processes touch is read and written only through barrier.h.
 *
 * The buffers come in L = nlanes lanes of nbufs buffers each.  A lane is one thread's stream at a
 * time: lane 0 is the producer thread's (the one that called mn_queue_producer_start()), lanes
 * 1..L-1 are taken by other threads of the producing process at their first event and handed back
 * at their exit (queue.c, "Lanes").  Lane 0's buffers are buf_bytes each, the others' lane_bytes.
 * Buffer k of lane l is slot g = l * nbufs + k: ctl[g] is its control block.
 *
 *   offset                        size                      what
 *   0                             256                       struct mn_qhdr (below)
 *   MN_QUEUE_SLOTS_OFF  = 256     64 * MN_QUEUE_MAX_CONSUMERS  struct mn_qslot, one per consumer
 *   MN_QUEUE_CTL_OFF    = 2304    128 * nlanes * nbufs      struct mn_qctl, one per buffer
 *   lanes_off                     64 * nlanes               struct mn_qlane, one per lane
 *   ...                                                     zero up to header_bytes
 *   header_bytes (page multiple)  buf_bytes * nbufs         lane 0's buffers, each page aligned
 *   + nbufs * buf_bytes           lane_bytes * nbufs        lane 1's, then lane 2's, ... lane L-1's
 *                                 * (nlanes - 1)
 *   extra_off                     extra_bytes, rounded up   caller-owned (the session block)
 *                                 to a page
 *
 * Changing any offset, size or meaning below changes the format: bump MN_QUEUE_VERSION (a
 * consumer refuses any other version with -EPROTO).
 *
 * Protocol, per lane l (sequence numbers s = 0, 1, 2, ... count lane l's buffers; buffer s lives in
 * slot g = l * nbufs + s % nbufs, on lap L = s / nbufs of that slot):
 *
 *   producer fills slot g  -- only after ctl[g].freed == L (every earlier lap handed back)
 *   producer publishes s   -- sfence; ctl[g].used, .thread, .readers (bit i per consumer still
 *                             attached), .filled = L + 1; lane[l].published = s + 1 (release);
 *                             then hdr.stream += 2 (release); futex-wake stream
 *   consumer reads s       -- once lane[l].published != s mod 2^32 (acquire), reads used bytes;
 *                             it reads hdr.stream (acquire) before it looks at the lanes, and
 *                             sleeps on that value, so a publish after its look wakes it
 *   consumer releases s    -- clears its bit in ctl[g].readers (acq_rel); the one that clears the
 *                             last bit zeroes the used bytes, then ctl[g].freed = L + 1 (release)
 *                             and futex-wakes the producer if lane[l].prod_waiting
 *   end of stream          -- hdr.stream |= 1 (release) after lane 0's last publish; futex-wake
 *                             stream.  Other lanes may still be written (their threads run on):
 *                             once every lane is drained, a consumer reads each lane's unpublished
 *                             buffer, if lane[l].holding says there is one, as the tail of a dead
 *                             producer (below).
 *   producer holds s       -- after ctl[g].freed == L: lane[l].held_seq = s, .holding = 1
 *                             (release); before publishing s: .holding = 0
 *
 *   producer orders s      -- (mn_queue_order(), after the record of a synchronization) t =
 *                             fetch_add(hdr.tickets, 1) + 1; ctl[g].ticket = t; publishes s at
 *                             once, however full, with nothing that can block in between
 *
 * Consumers take the lanes round robin, a buffer at a time, so no lane starves; within a lane
 * buffers come in order.  A buffer with a ticket waits until every lower ticket was read (each
 * consumer counts them, mn_qcons.next_ticket), so buffers of different lanes that end at
 * ordering points come in the order of their tickets.  No wait can deadlock: a ticket is taken
 * only by a thread that publishes it at once, and every buffer a lane published before it has a
 * lower ticket or none.  Once the stream has ended (or the producer died), a ticket that never
 * came (a thread still running after the end) is skipped: the lowest one waiting goes first.  A buffer holds the records of one thread only (ctl[g].thread, numbered
 * 1 for the producer thread, then 2, 3, ... in the order threads took a lane).
 *
 * Invariant: outside the bytes of records a buffer holds zeros, because every lap's used bytes are
 * zeroed before the slot is handed back.  That is what lets a consumer scan the buffer a dead
 * producer was filling (or a lane's after the end of stream): its records end at the last non-zero
 * word (give or take the arguments of the last record that happen to be zero), and a zero word
 * where a record would start is never the start of a record (word 0 carries the event code, never
 * 0).
 *
 * Detached consumers: a consumer that detaches sets its bit in hdr.detached, then clears its bit
 * in every buffer of every lane it has not released; the producer leaves detached consumers out of
 * .readers when it publishes, and, while it waits for a slot, clears detached consumers' bits from
 * it too (that covers a detach racing with a publish).  Whoever clears the last bit frees the slot.
 * A consumer that dies without detaching is noticed by the producer while it waits (every futex
 * timeout); the queue then fails (mn_queue_set_failure_hook()).
 *
 * Counters are 32 bits and wrap: only equality is ever tested, and no party is more than nbufs
 * sequence numbers (far below 2^31) ahead of another in a lane.
 *
 * Lamport mode (hdr.mode == MN_QMODE_LAMPORT, one consumer, one lane; queue.h says what it is for):
 * lane 0's buffers are one ring of R = nbufs * buf_bytes / 8 words, and none of ctl[], the readers bits or
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
#define MN_QUEUE_VERSION       4u  /* 2: the Lamport mode (mode, lwrite, lread); 3: lanes;
				    * 4: tickets */
#define MN_QUEUE_LINE          64u
#define MN_QUEUE_PAGE          4096u
/* MN_QUEUE_MAX_CONSUMERS (queue.h): one bit each in mn_qctl.readers and mn_qhdr.detached. */
#define MN_QUEUE_SLOTS_OFF     256u
#define MN_QUEUE_CTL_OFF       (MN_QUEUE_SLOTS_OFF + MN_QUEUE_LINE * MN_QUEUE_MAX_CONSUMERS)
/* MN_QUEUE_MAX_LANES (queue.h): lanes in one queue. */

/* hdr.mode */
#define MN_QMODE_PINGPONG      0u
#define MN_QMODE_LAMPORT       1u

/* hdr.stream: buffers published in any lane, in bits 31..1 (Lamport mode: wake-ups), end of
 * stream in bit 0.  Only a futex word and the end: consumers count buffers per lane. */
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
 *   72      4     nlanes         1..MN_QUEUE_MAX_LANES (1 in the Lamport mode)
 *   76      4     reserved (zero)
 *   80      8     lane_bytes     bytes per buffer of lanes 1.. (multiple of 4096)
 *   88      8     lanes_off      == MN_QUEUE_CTL_OFF + 128 * nlanes * nbufs
 *   96      32    reserved (zero)
 *   128     4     stream         producer: futex word consumers sleep on (see MN_QSTREAM_*)
 *   132     4     prod_waiting   producer, Lamport mode: 1 while it may sleep on lread (the
 *                                ping-pong mode's is per lane: mn_qlane)
 *   136     8     lwrite         producer, Lamport mode: words pushed (padding included)
 *   144     8     tickets        producer threads: tickets handed out (mn_queue_order())
 *   152     40    reserved
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
	uint32_t nlanes;
	uint32_t reserved0a;
	uint64_t lane_bytes;
	uint64_t lanes_off;
	uint32_t reserved0[8];

	/* Cache line 2: written by the producer only. */
	uint32_t stream;
	uint32_t prod_waiting;
	uint64_t lwrite;
	uint64_t tickets;
	uint32_t reserved1[10];

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
 * One per buffer, at MN_QUEUE_CTL_OFF + 128 * g: a line the producer writes when it publishes, and
 * a line the consumers write when they release.
 *   0   4   filled    lap + 1 of the contents last published in this slot
 *   4   4   thread    the thread whose records it holds (1: the producer thread)
 *   8   8   used      bytes of records in it (a multiple of 8)
 *   16  8   ticket    its place among ordering points (mn_queue_order()), or 0 for none
 *   64  4   readers   bit i set while consumer i has yet to release it
 *   68  4   freed     laps of this slot handed back to the producer; futex word it sleeps on
 */
struct mn_qctl {
	uint32_t filled;
	uint32_t thread;
	uint64_t used;
	uint64_t ticket;
	uint8_t reserved1[40];

	uint32_t readers;
	uint32_t freed;
	uint8_t reserved2[56];
};

/*
 * One per lane, at lanes_off + 64 * l, written by the producer only.
 *   0   4   published     buffers this lane published; consumers read buffer s once it differs
 *                         from s (mod 2^32)
 *   4   4   prod_waiting  1 while the lane's producer thread may sleep on some ctl[g].freed
 *   8   4   thread        the thread that last took the lane (stored before its first record);
 *                         what a consumer names the lane's unpublished tail by
 *   12  4   holding       1 while the lane's producer holds buffer held_seq (acquired, not yet
 *                         published): the only buffer of the lane a tail can be in, so that a
 *                         consumer never scans (and so never commits the pages of) one nobody
 *                         wrote
 *   16  4   held_seq      that buffer's sequence number (mod 2^32), stored before holding
 */
struct mn_qlane {
	uint32_t published;
	uint32_t prod_waiting;
	uint32_t thread;
	uint32_t holding;
	uint32_t held_seq;
	uint8_t reserved[44];
};

_Static_assert(sizeof(struct mn_qhdr) == MN_QUEUE_SLOTS_OFF, "mn_qhdr is the first 256 bytes");
_Static_assert(offsetof(struct mn_qhdr, producer_pid) == 64, "format: producer_pid at 64");
_Static_assert(offsetof(struct mn_qhdr, stream) == 128, "format: stream on its own line");
_Static_assert(offsetof(struct mn_qhdr, nlanes) == 72 && offsetof(struct mn_qhdr, lanes_off) == 88,
	       "format: lanes at 72..95");
_Static_assert(sizeof(struct mn_qlane) == MN_QUEUE_LINE, "one lane per cache line");
_Static_assert(offsetof(struct mn_qhdr, sleepers) == 192, "format: consumer line at 192");
_Static_assert(offsetof(struct mn_qhdr, lwrite) == 136 && offsetof(struct mn_qhdr, lread) == 200,
	       "format: Lamport indices on the producer's and the consumers' lines");
_Static_assert(sizeof(struct mn_qslot) == MN_QUEUE_LINE, "one consumer slot per cache line");
_Static_assert(sizeof(struct mn_qctl) == 2 * MN_QUEUE_LINE, "two cache lines per buffer");
_Static_assert(offsetof(struct mn_qctl, readers) == MN_QUEUE_LINE, "consumer half on line 2");
_Static_assert(MN_QUEUE_CTL_OFF == 2304, "format: buffer controls at 2304");
_Static_assert(MN_QUEUE_MAX_CONSUMERS <= 32, "readers is a 32-bit mask");

/* Offset of lane 0's struct mn_qlane for nlanes lanes of nbufs buffers. */
static inline uint64_t mn_qlanes_off(uint32_t nbufs, uint32_t nlanes)
{
	return MN_QUEUE_CTL_OFF + (uint64_t)nlanes * nbufs * sizeof(struct mn_qctl);
}

/* Bytes before buffer 0 for nlanes lanes of nbufs buffers. */
static inline uint64_t mn_qhdr_bytes(uint32_t nbufs, uint32_t nlanes)
{
	uint64_t b = mn_qlanes_off(nbufs, nlanes) + (uint64_t)nlanes * sizeof(struct mn_qlane);

	return (b + MN_QUEUE_PAGE - 1) & ~(uint64_t)(MN_QUEUE_PAGE - 1);
}

#endif /* MNEMO_QUEUE_INTERNAL_H */
