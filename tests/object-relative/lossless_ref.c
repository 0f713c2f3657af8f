/*
 * objrel-lossless-ref: the object-relative stream of one recorded event stream (bench/queue/
 * recording.h, made by mnemo-record from a program built for the object-relative module), by a
 * deliberately simple reference written from modules/object-relative/README.md and sharing no
 * code with the module: the live objects in one array sorted by address, searched by bisection,
 * no shadow memory.
 *
 *	objrel-lossless-ref RECORDING
 *
 * Prints one line per load or store that lies in a live object, in stream order, as `mnemo expand`
 * prints the lossless streams: "instruction group object offset".  Unattributed accesses are left
 * out, as the module leaves them out.  Exit status 0, or 2 on a usage or input error, or when two
 * live objects overlap (the reference's one assumption; the module would then pick by granule).
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

#define PROG "objrel-lossless-ref"

/* Event codes of the catalogue (events.yaml) and their arguments' catalogue positions. */
enum { EV_LOAD = 1, EV_STORE = 2, EV_HEAP_ALLOC = 4, EV_HEAP_REALLOC = 5, EV_HEAP_FREE = 6,
       EV_GLOBAL = 9 };

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

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

struct obj {
	uint64_t addr, size;     /* size 0 counts as 1 byte (README) */
	uint32_t group;
	uint64_t serial;
	bool global;
};

static struct obj *live;         /* sorted by addr */
static size_t nlive, caplive;
static uint64_t *serials;        /* next object number by group (site) */
static size_t nserials;

/* The index of the first live object with addr > a. */
static size_t upper(uint64_t a)
{
	size_t lo = 0, hi = nlive;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (live[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t extent(const struct obj *o)
{
	return o->size ? o->size : 1;
}

/* The live object holding a, or NULL. */
static struct obj *find(uint64_t a)
{
	size_t i = upper(a);

	return i && a - live[i - 1].addr < extent(&live[i - 1]) ? &live[i - 1] : NULL;
}

static void insert(struct obj o)
{
	size_t i = upper(o.addr);

	if ((i && live[i - 1].addr + extent(&live[i - 1]) > o.addr) ||
	    (i < nlive && o.addr + extent(&o) > live[i].addr))
		die("objects overlap at 0x%" PRIx64 ": the reference cannot decide", o.addr);
	if (nlive == caplive) {
		caplive = caplive ? 2 * caplive : 1024;
		live = xrealloc(live, caplive * sizeof(*live));
	}
	memmove(&live[i + 1], &live[i], (nlive - i) * sizeof(*live));
	live[i] = o;
	nlive++;
}

static void erase(struct obj *o)
{
	size_t i = (size_t)(o - live);

	memmove(&live[i], &live[i + 1], (nlive - i - 1) * sizeof(*live));
	nlive--;
}

/* The live heap object starting at a, or NULL. */
static struct obj *heap_at(uint64_t a)
{
	struct obj *o = find(a);

	return o && o->addr == a && !o->global ? o : NULL;
}

static void new_object(uint32_t site, uint64_t addr, uint64_t size, bool global)
{
	if (site >= nserials) {
		size_t n = 2 * (size_t)site + 16;

		serials = xrealloc(serials, n * sizeof(*serials));
		memset(serials + nserials, 0, (n - nserials) * sizeof(*serials));
		nserials = n;
	}
	insert((struct obj){ addr, size, site, serials[site]++, global });
}

int main(int argc, char **argv)
{
	struct mn_rec_header h;
	struct mn_wire wire;
	uint64_t *words;
	FILE *f;

	if (argc != 2)
		die("usage: " PROG " RECORDING");
	f = fopen(argv[1], "rb");
	if (!f || fread(&h, sizeof(h), 1, f) != 1 || h.magic != MN_REC_MAGIC ||
	    h.version != MN_REC_VERSION || h.header != sizeof(h))
		die("%s: not a version %u recording", argv[1], MN_REC_VERSION);
	words = xrealloc(NULL, h.words * sizeof(*words));
	if (fread(words, 8, h.words, f) != h.words)
		die("%s: short read", argv[1]);
	fclose(f);
	memcpy(wire.nwords, h.nwords, sizeof(wire.nwords));
	memcpy(wire.arg, h.arg, sizeof(wire.arg));

	for (size_t i = 0; i < h.words;) {
		const uint64_t *rec = words + i;
		unsigned code = rec[0] & 0xff;
		uint32_t site;
		struct obj *o;

		if (!rec[0]) {
			i++;
			continue;
		}
		if (code >= MN_WIRE_MAX_EVENTS || !wire.nwords[code] || wire.nwords[code] > h.words - i)
			die("corrupt record at word %zu", i);
		i += wire.nwords[code];
		site = (uint32_t)mn_wire_get(&wire, rec, code, 0);
		switch (code) {
		case EV_LOAD:
		case EV_STORE: {
			uint64_t a = mn_wire_get(&wire, rec, code, 1);

			o = find(a);
			if (o)
				printf("%" PRIu32 " %" PRIu32 " %" PRIu64 " %" PRIu64 "\n", site,
				       o->group, o->serial, a - o->addr);
			break;
		}
		case EV_HEAP_ALLOC:
			new_object(site, mn_wire_get(&wire, rec, code, 1),
				   mn_wire_get(&wire, rec, code, 2), false);
			break;
		case EV_GLOBAL:
			new_object(site, mn_wire_get(&wire, rec, code, 1),
				   mn_wire_get(&wire, rec, code, 2), true);
			break;
		case EV_HEAP_REALLOC: {
			uint64_t old = mn_wire_get(&wire, rec, code, 1);
			uint64_t addr = mn_wire_get(&wire, rec, code, 2);
			uint64_t size = mn_wire_get(&wire, rec, code, 3);

			o = old ? heap_at(old) : NULL;
			if (o) {   /* moved: the same object, its group and number kept */
				struct obj moved = *o;

				erase(o);
				moved.addr = addr;
				moved.size = size;
				insert(moved);
			} else {
				new_object(site, addr, size, false);
			}
			break;
		}
		case EV_HEAP_FREE:
			o = heap_at(mn_wire_get(&wire, rec, code, 1));
			if (o)
				erase(o);
			break;
		default:
			break;
		}
	}
	if (fflush(stdout) || ferror(stdout))
		die("stdout: write error");
	free(words);
	free(live);
	free(serials);
	return 0;
}
