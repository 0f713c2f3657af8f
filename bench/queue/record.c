/*
 * mnemo-record: records the event stream of a real profiled run for bench/queue to replay (and
 * bench/maps to mine for dependences).
 *
 * The runtime starts it in place of mnemo-backend (MNEMO_BACKEND=/path/to/mnemo-record) as
 * `mnemo-record --fd N --index 0 [--numa-node K]` (K is ignored).  It attaches to the queue as the
 * run's only consumer, takes the wire format from the session, and appends the records of the
 * first MNEMO_RECORD_EVENTS events (default 10 million) to MNEMO_RECORD_FILE in the format of
 * recording.h; it keeps popping and discarding the rest, so the program runs to its end unchanged.
 * Records are written as popped but for one bit: on a wire with the pointer flag (queue.h), a load
 * or store of a pointer value comes with MN_CODE_POINTER in its code, which the recording loses
 * (its format has no flags, and its readers frame records by a code below MN_WIRE_MAX_EVENTS).
 * At the end of the stream it reports the profile as written (no profile file is made: the
 * recording is the product), so the program's end-of-run wait returns at once.
 *
 * Only single-module runs (the bench's `mix` spec): a leader would have to wait for the others.
 * Failures print "mnemo-record: <what>: <why>", mark the slot and the profile failed so the
 * program never waits for nothing, and exit 1; the program itself still runs to its end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recording.h"
#include "session.h"

#define OUT_WORDS (1u << 17)  /* 1 MiB of output buffered between writes */
#define EV_LOAD   1u          /* events.yaml: codes never change */
#define EV_STORE  2u

struct recorder {
	struct mn_session *s;
	uint8_t nwords[MN_WIRE_MAX_EVENTS];
	struct mn_wire_arg arg[MN_WIRE_MAX_EVENTS][MN_WIRE_MAX_ARGS];  /* for bench/maps */
	uint8_t flags;            /* the session's wire.flags: MN_WIRE_POINTER, or 0 */
	uint64_t cap;             /* events to record */
	uint64_t events;          /* events seen */
	uint64_t recorded;        /* events written */
	uint64_t words;           /* words written */
	uint64_t corrupt;         /* buffers cut short by a record with no length or past the end */
	FILE *f;
	int err;                  /* first write error, as errno */
	size_t nout;
	uint64_t out[OUT_WORDS];
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write, so the line does not interleave with the program's stderr. */
	dprintf(STDERR_FILENO, "mnemo-record: %s\n", buf);
}

/* The session words are futex words shared with another process: not FUTEX_PRIVATE. */
static void word_wake(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void flush_out(struct recorder *r)
{
	if (r->nout && !r->err && fwrite(r->out, 8, r->nout, r->f) != r->nout)
		r->err = errno ? errno : EIO;
	r->nout = 0;
}

/*
 * The event code of a record whose word 0 is w0: its low 8 bits, less MN_CODE_POINTER for a load
 * or store of a pointer value on a wire with the pointer flag (0x81, 0x82: the length and layout
 * of 1, 2); 0, which no event has, when that is no code below MN_WIRE_MAX_EVENTS.
 */
static unsigned event_code(const struct recorder *r, uint64_t w0)
{
	unsigned code = w0 & 0xff;

	if ((r->flags & MN_WIRE_POINTER) &&
	    (code == (EV_LOAD | MN_CODE_POINTER) || code == (EV_STORE | MN_CODE_POINTER)))
		code &= ~MN_CODE_POINTER;
	return code < MN_WIRE_MAX_EVENTS ? code : 0;
}

/* Frames one popped buffer: counts every event, appends the first `cap` to the file. */
static void take(struct recorder *r, const uint64_t *w, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned code, len;

		if (!w[i]) {          /* unwritten space where a record would start: skip it */
			i++;
			continue;
		}
		code = event_code(r, w[i]);
		len = r->nwords[code];
		if (!code || !len || len > n - i) {
			r->corrupt++;
			return;
		}
		if (r->recorded < r->cap) {
			if (r->nout + len > OUT_WORDS)
				flush_out(r);
			memcpy(r->out + r->nout, w + i, 8u * len);
			/* The code without MN_CODE_POINTER: recording.h has no flags. */
			r->out[r->nout] = (w[i] & ~UINT64_C(0xff)) | code;
			r->nout += len;
			r->words += len;
			r->recorded++;
		}
		r->events++;
		i += len;
	}
}

/* Writes the header over the placeholder and closes; 0 or an errno. */
static int finish_file(struct recorder *r)
{
	struct mn_rec_header h = {
		.magic = MN_REC_MAGIC,
		.version = MN_REC_VERSION,
		.header = sizeof(h),
		.events = r->recorded,
		.words = r->words,
	};
	int err;

	flush_out(r);
	memcpy(h.nwords, r->nwords, sizeof(h.nwords));
	memcpy(h.arg, r->arg, sizeof(h.arg));
	err = r->err;
	if (!err && (fseek(r->f, 0, SEEK_SET) || fwrite(&h, sizeof(h), 1, r->f) != 1))
		err = errno ? errno : EIO;
	if (fclose(r->f) && !err)
		err = errno ? errno : EIO;
	r->f = NULL;
	return err;
}

/* Tells the runtime how it ended: the slot (on failure, with why) and profile_done. */
static void report(struct mn_session *s, unsigned index, bool ok, const char *why)
{
	__typeof__(s->backend[0]) *slot = &s->backend[index];

	if (!ok) {
		snprintf(slot->why, sizeof(slot->why), "%s", why);
		/* Publishes why; pairs with the runtime's acquire load of the state. */
		mn_store_release(&slot->state, MN_BACKEND_FAILED);
		word_wake(&slot->state);
	}
	/* Nothing to publish but the end: pairs with the runtime's acquire load of profile_done
	 * in wait_for_profile() (runtime/runtime.c), as backend/leader.c does. */
	mn_store_release(&s->profile_done, ok ? MN_PROFILE_WRITTEN : MN_PROFILE_FAILED);
	word_wake(&s->profile_done);
}

static int record(int fd, unsigned index)
{
	static struct recorder r;     /* 1 MiB of output buffer: not on the stack */
	const char *path = getenv("MNEMO_RECORD_FILE"), *cap = getenv("MNEMO_RECORD_EVENTS");
	struct mn_queue *q;
	const uint64_t *w;
	char why[300];
	size_t n;
	int ret, err;

	ret = mn_queue_attach(&q, fd, index);
	if (ret) {
		say("cannot attach to the event queue (fd %d, consumer %u): %s", fd, index,
		    strerror(-ret));
		return 1;
	}
	r.s = mn_queue_extra(q);
	if (!r.s || mn_queue_extra_bytes(q) < sizeof(*r.s) || r.s->magic != MN_SESSION_MAGIC ||
	    r.s->version != MN_SESSION_VERSION) {
		say("the queue carries no session of version %u (a program from another Mnemo "
		    "build?)", MN_SESSION_VERSION);
		mn_queue_detach(q);
		return 1;
	}
	r.s->backend[index].pid = (int32_t)getpid();
	/* Publishes pid; the runtime reads it after an acquire load of state. */
	mn_store_release(&r.s->backend[index].state, MN_BACKEND_RUNNING);
	word_wake(&r.s->backend[index].state);

	why[0] = '\0';
	if (r.s->nmodules != 1 || index != 0)
		snprintf(why, sizeof(why), "records single-module runs only (this one has %u)",
			 r.s->nmodules);
	else if (!path || !*path)
		snprintf(why, sizeof(why), "MNEMO_RECORD_FILE is not set: nowhere to record to");
	if (!why[0]) {
		char *end;

		errno = 0;
		r.cap = cap && *cap ? strtoull(cap, &end, 10) : 10000000;
		if (cap && *cap && (errno || *end))
			snprintf(why, sizeof(why), "MNEMO_RECORD_EVENTS='%s' is not a count", cap);
	}
	r.flags = r.s->wire.flags;
	for (unsigned c = 0; !why[0] && c < MN_WIRE_MAX_EVENTS; c++) {
		r.nwords[c] = r.s->wire.nwords[c];
		memcpy(r.arg[c], r.s->wire.arg[c], sizeof(r.arg[c]));
		if (r.nwords[c] > MN_WIRE_MAX_WORDS)
			snprintf(why, sizeof(why), "corrupt wire format: event %u has %u words", c,
				 r.nwords[c]);
	}
	if (!why[0]) {
		struct mn_rec_header placeholder = { 0 };

		r.f = fopen(path, "we");
		if (!r.f || fwrite(&placeholder, sizeof(placeholder), 1, r.f) != 1)
			snprintf(why, sizeof(why), "cannot write '%s': %s", path, strerror(errno));
	}
	if (why[0]) {
		say("%s", why);
		if (r.f)
			fclose(r.f);
		report(r.s, index, false, why);
		mn_queue_detach(q);
		return 1;
	}

	while ((ret = mn_queue_pop(q, &w, &n)) > 0) {
		take(&r, w, n);
		mn_queue_release(q);
	}
	r.s->backend[index].events = r.events;
	err = finish_file(&r);
	if (ret < 0 || err) {
		if (ret < 0)
			snprintf(why, sizeof(why), "cannot read the event queue: %s",
				 strerror(-ret));
		else
			snprintf(why, sizeof(why), "cannot write '%s': %s", path, strerror(err));
		say("%s", why);
		report(r.s, index, false, why);
		mn_queue_detach(q);
		return 1;
	}
	say("recorded %" PRIu64 " of %" PRIu64 " events (%" PRIu64 " words, %.1f MB%s) to %s",
	    r.recorded, r.events, r.words, r.words * 8 / 1e6,
	    r.corrupt ? ", some buffers cut short by corrupt records" : "", path);
	report(r.s, index, true, NULL);
	mn_queue_detach(q);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fd", required_argument, NULL, 'f' },
		{ "index", required_argument, NULL, 'i' },
		/* The runtime may name the backends' memory node; a recorder need not care. */
		{ "numa-node", required_argument, NULL, 'n' },
		{ 0 }
	};
	int fd = -1, index = -1, c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': fd = atoi(optarg); break;
		case 'i': index = atoi(optarg); break;
		case 'n': break;
		default:
			fprintf(stderr, "usage: mnemo-record --fd N --index I (started by the "
				"Mnemo runtime with MNEMO_BACKEND=mnemo-record; see "
				"bench/queue/README.md)\n");
			return 2;
		}
	}
	if (fd < 0 || index < 0) {
		fprintf(stderr, "mnemo-record: --fd and --index are required (it is started by the "
			"Mnemo runtime: MNEMO_BACKEND=mnemo-record)\n");
		return 2;
	}
	return record(fd, (unsigned)index);
}
