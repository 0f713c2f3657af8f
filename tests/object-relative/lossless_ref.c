/*
 * objrel-lossless-ref: the object-relative stream of one recorded event stream (bench/queue/
 * recording.h, made by mnemo-record from a program built for the object-relative module), by a
 * deliberately simple reference written from modules/object-relative/README.md and sharing no
 * code with the module: the live objects in one array sorted by address, searched by bisection,
 * no shadow memory.  Loop summaries and mixed loops it expands itself (ref_summaries.h), sharing
 * no code with backend/driver.c either.
 *
 *	objrel-lossless-ref RECORDING
 *
 * Prints one line per load or store that lies in a live object, in stream order (a summary's
 * accesses where its loop_summary record is, a mixed loop's between its mixed records and at its
 * close, as the backend expands them), as `mnemo expand` prints the lossless streams:
 * "instruction group object offset".  Unattributed accesses are left out, as the module leaves
 * them out.  Ends with one line on stderr, "summarized: N", the accesses that came as loop
 * summaries (the profile's summarized_accesses).  Exit status 0, or 2 on a usage or input error
 * (a summary without its accesses, accesses no summary closed, a mixed loop's record out of place
 * or a mixed loop left open), or when two live objects overlap (the reference's one assumption;
 * the module would then pick by granule).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue.h"
#include "recording.h"
#include "ref_objects.h"
#include "ref_summaries.h"

#define PROG "objrel-lossless-ref"

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, PROG ": ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

/* One load or store: its line when it lies in a live object (ctx: the struct ref_objects). */
static void on_access(void *ctx, uint32_t site, uint64_t addr, uint64_t size, bool store)
{
	const struct ref_obj *o = ref_find(ctx, addr);

	(void)size;
	(void)store;
	if (o)
		printf("%" PRIu32 " %" PRIu32 " %" PRIu64 " %" PRIu64 "\n", site, o->group,
		       o->serial, addr - o->addr);
}

int main(int argc, char **argv)
{
	struct mn_rec_header h;
	struct mn_wire wire;
	struct ref_objects objs = { 0 };
	struct ref_summaries sums = { 0 };
	uint64_t *words;
	FILE *f;

	if (argc != 2)
		die("usage: " PROG " RECORDING");
	f = fopen(argv[1], "rb");
	if (!f || fread(&h, sizeof(h), 1, f) != 1 || h.magic != MN_REC_MAGIC ||
	    h.version != MN_REC_VERSION || h.header != sizeof(h))
		die("%s: not a version %u recording", argv[1], MN_REC_VERSION);
	words = ref_xrealloc(NULL, h.words * sizeof(*words));
	if (fread(words, 8, h.words, f) != h.words)
		die("%s: short read", argv[1]);
	fclose(f);
	memcpy(wire.nwords, h.nwords, sizeof(wire.nwords));
	memcpy(wire.arg, h.arg, sizeof(wire.arg));

	for (size_t i = 0; i < h.words;) {
		const uint64_t *rec = words + i;
		unsigned code = rec[0] & 0xff;
		uint64_t a;

		if (!rec[0]) {
			i++;
			continue;
		}
		if (code >= MN_WIRE_MAX_EVENTS || !wire.nwords[code] || wire.nwords[code] > h.words - i)
			die("corrupt record at word %zu", i);
		i += wire.nwords[code];
		if (code == MN_EV_LOAD || code == MN_EV_STORE) {
			on_access(&objs, (uint32_t)mn_wire_get(&wire, rec, code, 0),
				  mn_wire_get(&wire, rec, code, 1),
				  mn_wire_get(&wire, rec, code, 3), code == MN_EV_STORE);
		} else if (ref_is_summary(code)) {
			if (!ref_summary_event(&sums, &wire, rec, code, on_access, &objs))
				die("the loop summary record at word %zu does not fit the "
				    "records before it (too few accesses pending, or no "
				    "such mixed loop open)", i - wire.nwords[code]);
		} else if (!ref_objects_event(&objs, &wire, rec, code, &a)) {
			die("objects overlap at 0x%" PRIx64 ": the reference cannot decide", a);
		}
	}
	if (sums.n)
		die("the recording ends with %zu summarized accesses no loop_summary closed",
		    sums.n);
	if (sums.nm)
		die("the recording ends inside %zu mixed loops", sums.nm);
	if (fflush(stdout) || ferror(stdout))
		die("stdout: write error");
	fprintf(stderr, "summarized: %" PRIu64 "\n", sums.accesses);
	free(words);
	ref_objects_free(&objs);
	ref_summaries_free(&sums);
	return 0;
}
