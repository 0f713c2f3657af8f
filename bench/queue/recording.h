/*
 * The recording file of bench/queue: an event stream exactly as it crossed the queue of a real
 * profiled run, written by mnemo-record (record.c) and replayed by bench-queue (bench_queue.c).
 *
 * A file format, so documented like one.  Little-endian native words:
 *
 *   offset  size         field
 *   0       8            magic       "MNRECRD1"
 *   8       4            version     MN_REC_VERSION
 *   12      4            header      bytes before the first record (576)
 *   16      8            events      records in the file
 *   24      8            words       64-bit words of records after the header
 *   32      32           nwords[32]  record length in words by event code: the session's
 *                                    wire.nwords (0 = the run did not send that event)
 *   64      512          arg[32][4]  where each argument sits, by event code and catalogue
 *                                    order: the session's wire.arg (struct mn_wire_arg: word,
 *                                    shift, bits, pad; bits 0 = not sent)
 *   576     8 * words    the records back to back, as popped, zero words (unwritten space)
 *                        left out: word 0 of each carries the event code in its low 8 bits
 *
 * So the recording is self-describing: a reader frames it with nwords[] alone and decodes the
 * arguments with arg[] (mn_wire_get() on a struct mn_wire made of the two), and needs neither the
 * session nor the module spec it was made with.  Changing any of this means a new version.
 *
 * Version 1 (bench/queue alone) had no arg[]: records started at 64.  Version 2 added it for
 * bench/maps, which replays the loads and stores of a recording to find its dependences.
 */
#ifndef MNEMO_BENCH_RECORDING_H
#define MNEMO_BENCH_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "queue.h"  /* MN_WIRE_MAX_EVENTS, struct mn_wire_arg */

#define MN_REC_MAGIC   UINT64_C(0x3144524345524e4d)  /* "MNRECRD1" little-endian */
#define MN_REC_VERSION 2u

struct mn_rec_header {
	uint64_t magic;
	uint32_t version;
	uint32_t header;
	uint64_t events;
	uint64_t words;
	uint8_t nwords[MN_WIRE_MAX_EVENTS];
	struct mn_wire_arg arg[MN_WIRE_MAX_EVENTS][MN_WIRE_MAX_ARGS];
};

_Static_assert(sizeof(struct mn_wire_arg) == 4, "format: an argument's place is 4 bytes");
_Static_assert(offsetof(struct mn_rec_header, nwords) == 32, "format: nwords at 32");
_Static_assert(offsetof(struct mn_rec_header, arg) == 64, "format: arg at 64");
_Static_assert(sizeof(struct mn_rec_header) == 576, "format: records start at 576");

#endif /* MNEMO_BENCH_RECORDING_H */
