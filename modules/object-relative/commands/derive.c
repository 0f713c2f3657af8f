/*
 * `mnemo derive`: LEAP's two post-processors (Wu et al., 4.2) on a profile's object-relative
 * LMADs: the dependence frequency of every (store, load) pair and every instruction's dominant
 * stride within objects (modules/object-relative/derive.h says how).  Prints YAML, one row a
 * pair or an instruction, with the sites' source locations.
 *
 * A command the module contributes to `mnemo` (mn_command_derive, modules/commands.def).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive.h"
#include "mnemo_internal.h"
#include "objrel_load.h"
#include "profile.h"

static void print_derive_help(FILE *out)
{
	fputs("Usage: mnemo derive [OPTIONS] PROFILE\n"
	      "\n"
	      "Derives, from the LMADs of a profile of the object-relative module, what the\n"
	      "LEAP paper derives (section 4.2):\n"
	      "  dependences  every (store, load) pair where the load read a location whose last\n"
	      "               write was by the store; frequency = such executions of the load\n"
	      "               over all its executions (locations are 8-byte words of an object)\n"
	      "  strides      every instruction's most frequent non-zero stride within an object,\n"
	      "               and whether it is strongly strided (that stride in >= 70% of its\n"
	      "               executions)\n"
	      "The LMADs are a sample: a stream that reached its LMAD limit captured nothing\n"
	      "after.  Frequencies are estimated from what was captured (conflicts of the\n"
	      "observed executions; strided points of the captured ones), scaled by the share\n"
	      "of executions attributed to an object.  A merged profile (mnemo merge) is\n"
	      "replayed run by run: its counts are the sums of the runs'.\n"
	      "\n"
	      "Options:\n"
	      "      --module M       the section to read (default object-relative)\n"
	      "      --granularity N  location size in bytes, a power of two (default 8)\n"
	      "      --strong         only strongly strided instructions\n"
	      "  -h, --help           print this help\n"
	      "\n"
	      "Example: mnemo-cc -m object-relative -O2 -g prog.c -o prog && ./prog &&\n"
	      "         mnemo derive prog.mnemo.yaml\n", out);
}

/* "file:line", or "" without debug info (the site table's row). */
static void location(const struct mn_profile *p, uint32_t site, char *buf, size_t len)
{
	const struct mn_site *s = mn_profile_site(p, site);

	if (s && s->file[0])
		snprintf(buf, len, "%s:%" PRIu32, s->file, s->line);
	else
		buf[0] = '\0';
}

/* A YAML double-quoted scalar (paths may hold anything). */
static void print_quoted(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\x%02x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int cmd_derive(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "module", required_argument, NULL, 'm' },
		{ "granularity", required_argument, NULL, 'g' },
		{ "strong", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *module = "object-relative";
	unsigned shift = 3;
	bool strong_only = false;
	struct objrel_loaded l;
	struct objrel_dep *deps;
	struct objrel_stride *strides;
	size_t ndeps, nstrides;
	struct mn_profile *p;
	char err[1024], a[512], b[512];
	int c, e;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":m:g:sh", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!*optarg)
				usage_error("derive ", "--module: empty module name");
			module = optarg;
			break;
		case 'g': {
			char *end;
			unsigned long g = strtoul(optarg, &end, 10);

			if (*end || !g || g > 4096 || (g & (g - 1)))
				usage_error("derive ", "--granularity: expected a power of two from 1 "
					    "to 4096, got '%s'", optarg);
			for (shift = 0; (1ul << shift) < g; shift++)
				;
			break;
		}
		case 's':
			strong_only = true;
			break;
		case 'h':
			print_derive_help(stdout);
			return 0;
		default:
			option_error("derive ", c, argv);
		}
	}
	if (optind >= argc)
		usage_error("derive ", "no profile given");
	if (argc - optind > 1)
		usage_error("derive ", "one profile at a time, got %d", argc - optind);

	if (mn_profile_open(&p, argv[optind], err, sizeof(err)))
		die(1, "%s", err);
	if (objrel_load(p, module, &l, err, sizeof(err)))
		die(1, "%s", err);
	e = objrel_derive_deps(l.insns, l.n, shift, &deps, &ndeps);
	if (!e)
		e = objrel_derive_strides(l.insns, l.n, &strides, &nstrides);
	if (e)
		die(1, "%s: %s", argv[optind], strerror(-e));

	printf("# derived from the '%s' LMADs of %s (mnemo derive --help)\n", module, argv[optind]);
	printf("granularity: %u\n", 1u << shift);
	printf("dependences:   # read after write, by load then store\n");
	for (size_t i = 0; i < ndeps; i++) {
		const struct objrel_dep *d = &deps[i];

		location(p, d->store, a, sizeof(a));
		location(p, d->load, b, sizeof(b));
		printf("- {store: %" PRIu32 ", load: %" PRIu32 ", frequency: %.6g, conflicts: %"
		       PRIu64 ", observed: %" PRIu64 ", load_accesses: %" PRIu64
		       ", load_unattributed: %" PRIu64 ", store_at: ", d->store, d->load,
		       objrel_dep_frequency(d), d->conflicts, d->observed, d->load_accesses,
		       d->load_unattributed);
		print_quoted(a);
		fputs(", load_at: ", stdout);
		print_quoted(b);
		puts("}");
	}
	printf("strides:       # the most frequent non-zero stride within an object, by site\n");
	for (size_t i = 0; i < nstrides; i++) {
		const struct objrel_stride *s = &strides[i];

		if (strong_only && !objrel_strongly_strided(s))
			continue;
		location(p, s->site, a, sizeof(a));
		printf("- {site: %" PRIu32 ", stride: %" PRId64 ", fraction: %.6g, strong: %s, "
		       "strided: %" PRIu64 ", captured: %" PRIu64 ", accesses: %" PRIu64
		       ", unattributed: %" PRIu64 ", at: ", s->site, s->stride,
		       objrel_stride_fraction(s), objrel_strongly_strided(s) ? "true" : "false",
		       s->strided, s->captured, s->accesses, s->unattributed);
		print_quoted(a);
		puts("}");
	}
	if (fflush(stdout) || ferror(stdout))
		die(1, "stdout: %s", strerror(errno ? errno : EIO));
	free(deps);
	free(strides);
	objrel_loaded_free(&l);
	mn_profile_close(p);
	return 0;
}

const struct mn_command mn_command_derive = {
	.name = "derive",
	.doc = "dependence frequencies and strides from object-relative LMADs",
	.help = print_derive_help,
	.main = cmd_derive,
};
