/*
 * `mnemo expand`: the lossless object-relative stream of a profile, regenerated.  The
 * object-relative module run with MNEMO_OBJREL_LOSSLESS=1 writes `lossless.streams` in its
 * section: four Sequitur grammars (instruction, group, object, offset), each a list of rules in
 * the text form of mn_seq_write() (modules/object-relative/sequitur.h).  This command parses them
 * back with mn_seq_parse(), checks each against its `length`, and prints the expanded stream:
 * one access a line, as "instruction group object offset", or one stream's values alone.
 *
 * A command the module contributes to `mnemo` (mn_command_expand, modules/commands.def).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo_internal.h"
#include "profile.h"
#include "sequitur.h"

#define NSTREAMS 4

static const char *const stream_names[NSTREAMS] = { "instruction", "group", "object", "offset" };

static void print_expand_help(FILE *out)
{
	fputs("Usage: mnemo expand [OPTIONS] PROFILE\n"
	      "\n"
	      "Prints the object-relative stream a profile holds losslessly: the program built\n"
	      "with `mnemo-cc -m object-relative` and run with MNEMO_OBJREL_LOSSLESS=1 keeps the\n"
	      "instruction, group, object and offset of every attributed load and store as four\n"
	      "Sequitur grammars, which this command expands.  One access a line, in program\n"
	      "order: `instruction group object offset` (site ids, object numbers within their\n"
	      "group, byte offsets), or the values of one stream with --stream.\n"
	      "\n"
	      "Options:\n"
	      "      --module M       the section to read (default object-relative)\n"
	      "      --stream S       print only stream S: instruction, group, object or offset\n"
	      "  -h, --help           print this help\n"
	      "\n"
	      "Example: MNEMO_OBJREL_LOSSLESS=1 ./prog && mnemo expand prog.mnemo.yaml | head\n", out);
}

/* An expanded stream: its symbols, in order. */
struct vec {
	uint64_t *v;
	size_t n, cap;
};

static int push(void *arg, uint64_t symbol)
{
	struct vec *s = arg;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = symbol;
	return 0;
}

/* Fails with "PROFILE:LINE:COL: what" about node n, exit status 1. */
static void __attribute__((noreturn, format(printf, 3, 4)))
bad(const struct mn_profile *p, const struct mn_pnode *n, const char *fmt, ...)
{
	char what[512], err[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	mn_pnode_errorf(p, n, err, sizeof(err), "%s", what);
	die(1, "%s", err);
}

/* Parses stream node s (a mapping with `length` and `grammar`) and expands it into *out. */
static void expand_stream(const struct mn_profile *p, const struct mn_pnode *s, const char *name,
			  struct vec *out)
{
	const struct mn_pnode *rules;
	struct mn_seq *g;
	uint64_t length;
	char *text = NULL, msg[1024];
	size_t len = 0;
	FILE *f;
	int err;

	if (mn_pnode_kind(s) != MN_PNODE_MAP)
		bad(p, s, "lossless: no stream '%s'", name);
	/* "file:line:col: field 'length': expected ..." from the reader, for stream `name`. */
	if (mn_pfield_u64(p, s, "length", &length, msg, sizeof(msg)))
		die(1, "%s (lossless stream '%s')", msg, name);
	rules = mn_pfield_node(p, s, "grammar", MN_PNODE_SEQ, msg, sizeof(msg));
	if (!rules)
		die(1, "%s (lossless stream '%s')", msg, name);
	f = open_memstream(&text, &len);
	if (!f)
		die(1, "%s", strerror(errno));
	for (size_t i = 0; i < mn_pnode_len(rules); i++) {
		const char *r = mn_pnode_str(mn_pnode_at(rules, i), NULL);

		if (!r)
			bad(p, mn_pnode_at(rules, i), "lossless stream '%s': expected a rule string",
			    name);
		fprintf(f, "%s\n", r);
	}
	if (fclose(f))
		die(1, "%s", strerror(ENOMEM));
	f = fmemopen(text, len, "r");
	if (!f)
		die(1, "%s", strerror(errno));
	err = mn_seq_parse(&g, f);
	fclose(f);
	free(text);
	if (err == -EINVAL)
		bad(p, rules, "lossless stream '%s': not a valid grammar", name);
	if (err)
		die(1, "%s: %s", mn_profile_path(p), strerror(-err));
	err = mn_seq_expand(g, push, out);
	mn_seq_destroy(g);
	if (err)
		die(1, "%s", strerror(-err));
	if (out->n != length)
		bad(p, s, "lossless stream '%s': the grammar gives %zu symbols, 'length' says %" PRIu64,
		    name, out->n, length);
}

static int cmd_expand(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "module", required_argument, NULL, 'm' },
		{ "stream", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *module = "object-relative";
	const struct mn_pnode *sec, *ll, *streams;
	struct vec v[NSTREAMS] = { 0 };
	struct mn_profile *p;
	bool complete;
	char err[1024];
	int c, only = -1;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":m:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!*optarg)
				usage_error("expand ", "--module: empty module name");
			module = optarg;
			break;
		case 's':
			for (only = 0; only < NSTREAMS && strcmp(optarg, stream_names[only]); only++)
				;
			if (only == NSTREAMS)
				usage_error("expand ", "--stream: expected instruction, group, object "
					    "or offset, got '%s'", optarg);
			break;
		case 'h':
			print_expand_help(stdout);
			return 0;
		default:
			option_error("expand ", c, argv);
		}
	}
	if (optind >= argc)
		usage_error("expand ", "no profile given");
	if (argc - optind > 1)
		usage_error("expand ", "one profile at a time, got %d", argc - optind);

	if (mn_profile_open(&p, argv[optind], err, sizeof(err)))
		die(1, "%s", err);
	sec = mn_profile_module(p, module);
	if (!sec)
		die(1, "%s: no '%s' section", argv[optind], module);
	ll = mn_pnode_get(sec, "lossless");
	if (!ll)
		die(1, "%s: the '%s' section has no lossless streams (run the program with "
		    "MNEMO_OBJREL_LOSSLESS=1)", argv[optind], module);
	if (mn_pfield_bool(p, ll, "complete", &complete, err, sizeof(err)))
		die(1, "%s", err);
	if (!complete)
		bad(p, ll, "lossless: the streams are not complete (the module ran out of memory)");
	streams = mn_pnode_get(ll, "streams");
	for (int i = 0; i < NSTREAMS; i++)
		if (only < 0 || only == i)
			expand_stream(p, mn_pnode_get(streams, stream_names[i]), stream_names[i],
				      &v[i]);
	if (only >= 0) {
		for (size_t k = 0; k < v[only].n; k++)
			printf("%" PRIu64 "\n", v[only].v[k]);
	} else {
		for (int i = 1; i < NSTREAMS; i++)
			if (v[i].n != v[0].n)
				bad(p, streams, "lossless: stream '%s' has %zu symbols, '%s' %zu",
				    stream_names[i], v[i].n, stream_names[0], v[0].n);
		for (size_t k = 0; k < v[0].n; k++)
			printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", v[0].v[k],
			       v[1].v[k], v[2].v[k], v[3].v[k]);
	}
	if (fflush(stdout) || ferror(stdout))
		die(1, "stdout: %s", strerror(errno ? errno : EIO));
	for (int i = 0; i < NSTREAMS; i++)
		free(v[i].v);
	mn_profile_close(p);
	return 0;
}

const struct mn_command mn_command_expand = {
	.name = "expand",
	.doc = "print the lossless object-relative stream a profile holds",
	.help = print_expand_help,
	.main = cmd_expand,
};
