/*
 * `mnemo merge -o OUT IN...`: the profiles of several runs of one binary, reduced into one.
 *
 * Every input is read with libmnemo-profile and checked to be of the same binary (`binary:`, else
 * the site rows both list).  Each module section is then rebuilt into a state by the module's own
 * restore(), on an mn_run made from the inputs' `sites:` rows (so the module sees the kinds, loops
 * and layouts it saw in the run), the states are folded in input order with the module's merge()
 * (the fold the backend uses across workers) and the result is written by its emit(): the merge
 * rules are each module's own (module.h; its README, "Merging").
 *
 * The header (docs/internals.md, "mnemo merge"): one input is copied as it is, so merge(p) == p
 * byte for byte.  Several give `program: {argv (only when every run had the same), runs (summed),
 * exit_status and signal (when every run agrees, else null), wall_seconds (summed in integer
 * microseconds, only when every run has it), events (summed), summarized_accesses (summed, only
 * when every run has it)}`, no `backend:`, `complete` when all are, and `incomplete_reason` as the
 * distinct reasons of all, sorted and joined by "; ".
 * Every rule is commutative and associative, so the header does not depend on the inputs' order
 * or grouping either.  `sites:` is the union of the inputs' rows.
 *
 * OUT is written to a temporary file in its folder and renamed into place (mn_prof_file_open(): a
 * device such as /dev/null is written in place): an input named as OUT is read in full before,
 * and a merge that fails leaves OUT as it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "mnemo_internal.h"
#include "module.h"
#include "profile.h"
#include "registry.h"

void print_merge_help(FILE *out)
{
	fputs("Usage: mnemo merge -o OUT PROFILE...\n"
	      "\n"
	      "Merges the profiles of several runs of the same binary (several inputs) into\n"
	      "one, module by module, with the merge each module documents in its README\n"
	      "(\"Merging\"): counts add, constants stay constant only if equal everywhere, sets\n"
	      "unite, minima and maxima combine.  The result does not depend on the order of\n"
	      "the profiles; one profile merges into itself byte for byte.\n"
	      "\n"
	      "Refuses (exit status 1, nothing written) profiles of different binaries (their\n"
	      "`binary:` or site tables differ), with different module sets or different\n"
	      "module settings, and sections that do not follow their module's schema.\n"
	      "\n"
	      "The header of several runs: program.runs counts them, events,\n"
	      "summarized_accesses and wall_seconds add, argv, exit_status and signal are\n"
	      "kept where every run agrees; complete only when every run was; the\n"
	      "per-backend `backend:` costs are left out.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output OUT     write the merged profile to OUT (`-`: standard output);\n"
	      "                       OUT may be one of the inputs\n"
	      "  -h, --help           print this help\n"
	      "\n"
	      "Example: mnemo merge -o all.yaml run1.yaml run2.yaml run3.yaml\n", out);
}

struct input {
	const char *path;
	struct mn_profile *prof;
};

/* The output file; its temporary file is removed at exit unless it was renamed into place. */
static struct mn_prof_file outf;

static void remove_tmp(void)
{
	mn_prof_file_abort(&outf);
}

/* ---- One binary ------------------------------------------------------------------------------ */

/* The input's `binary:`, or NULL when it has none (written before the key existed). */
static const struct mn_binary *binary_of(const struct input *in)
{
	const struct mn_binary *b = mn_profile_binary(in->prof);

	return b && b->site_table_hash && b->site_table_hash[0] ? b : NULL;
}

/* One row of the union of the inputs' `sites:`, and the input it was first seen in. */
struct urow {
	const struct mn_site *s;
	size_t in;
};

static int cmp_urow(const void *a_, const void *b_)
{
	const struct urow *a = a_, *b = b_;

	if (a->s->id != b->s->id)
		return a->s->id < b->s->id ? -1 : 1;
	return (a->in > b->in) - (a->in < b->in);
}

/* The first field in which two rows of one id differ, written into what; false when none. */
static bool row_differs(const struct mn_site *a, const struct mn_site *b, char *what, size_t len)
{
#define STR_FIELD(f)                                                                             \
	if (strcmp(a->f, b->f)) {                                                                \
		snprintf(what, len, "site %u: " #f " '%s' and '%s'", a->id, a->f, b->f);         \
		return true;                                                                     \
	}
#define NUM_FIELD(f)                                                                             \
	if (a->f != b->f) {                                                                      \
		snprintf(what, len, "site %u: " #f " %llu and %llu", a->id,                      \
			 (unsigned long long)a->f, (unsigned long long)b->f);                    \
		return true;                                                                     \
	}
	STR_FIELD(kind)
	STR_FIELD(function)
	STR_FIELD(file)
	NUM_FIELD(line)
	NUM_FIELD(column)
	STR_FIELD(name)
	NUM_FIELD(type_size)
	NUM_FIELD(loop)
	STR_FIELD(fields)
#undef STR_FIELD
#undef NUM_FIELD
	return false;
}

/*
 * Checks that the inputs are of one binary and makes the union of their site rows, by id, into
 * *rows (one per id).  Dies naming both files and the first difference.  Returns the rows' count;
 * *ref is the first input's `binary:` that has one, or NULL.
 */
static size_t one_binary(const struct input *in, size_t n, struct urow **rows,
			 const struct mn_binary **ref, size_t *ref_in)
{
	struct urow *all;
	size_t total = 0, k = 0;
	char what[512];

	*ref = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct mn_binary *b = binary_of(&in[i]);

		if (!b)
			continue;
		if (!*ref) {
			*ref = b;
			*ref_in = i;
			continue;
		}
		if (b->site_count != (*ref)->site_count)
			die(1, "merge: '%s' and '%s' are profiles of different binaries "
			    "(binary.site_count %u and %u)", in[*ref_in].path, in[i].path,
			    (*ref)->site_count, b->site_count);
		if (strcmp(b->site_table_hash, (*ref)->site_table_hash))
			die(1, "merge: '%s' and '%s' are profiles of different binaries "
			    "(binary.site_table_hash %s and %s)", in[*ref_in].path, in[i].path,
			    (*ref)->site_table_hash, b->site_table_hash);
	}
	for (size_t i = 0; i < n; i++)
		total += mn_profile_site_count(in[i].prof);
	all = xmalloc(total * sizeof(*all));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < mn_profile_site_count(in[i].prof); j++)
			all[k++] = (struct urow){ mn_profile_site_at(in[i].prof, j), i };
	qsort(all, total, sizeof(*all), cmp_urow);
	/*
	 * Rows of one id must agree.  Needed when an input has no `binary:`; with one, the same
	 * hash means the same table, and a difference is a profile edited by hand: refused too.
	 */
	k = 0;
	for (size_t j = 0; j < total; j++) {
		if (k && all[k - 1].s->id == all[j].s->id) {
			if (row_differs(all[k - 1].s, all[j].s, what, sizeof(what)))
				die(1, "merge: '%s' and '%s' are profiles of different binaries "
				    "(%s)", in[all[k - 1].in].path, in[all[j].in].path, what);
			continue;
		}
		all[k++] = all[j];
	}
	*rows = all;
	return k;
}

/* ---- The run modules see -------------------------------------------------------------------- */

/*
 * The site table the binary had, as far as the profiles tell it (mn_run_from_sites(): the rows
 * the inputs list, "unknown" lines for the ids they do not).
 */
static struct mn_run *make_run(const struct urow *rows, size_t nrows, uint32_t count)
{
	const struct mn_site **sites = xmalloc((nrows ? nrows : 1) * sizeof(*sites));
	struct mn_run *run;
	char why[256];
	int err;

	for (size_t i = 0; i < nrows; i++)
		sites[i] = rows[i].s;
	err = mn_run_from_sites(&run, sites, nrows, count, why, sizeof(why));
	free(sites);
	if (err)
		die(1, "merge: cannot make the site table for the modules: %s",
		    err == -EINVAL ? why : strerror(-err));
	return run;
}

/* ---- Writing nodes --------------------------------------------------------------------------- */

/* Writes a scalar as the writer wrote it: typed when it is a plain typed scalar, else a string. */
static void copy_scalar(struct mn_prof *w, const struct mn_pnode *n)
{
	uint64_t u;
	int64_t i;
	double d;
	bool b;

	if (mn_pnode_is_null(n))
		mn_prof_null(w);
	else if (!mn_pnode_bool(n, &b))
		mn_prof_bool(w, b);
	else if (!mn_pnode_u64(n, &u))
		mn_prof_u64(w, u);
	else if (!mn_pnode_i64(n, &i))
		mn_prof_i64(w, i);
	else if (!mn_pnode_f64(n, &d))
		mn_prof_f64(w, d);
	else
		mn_prof_str(w, mn_pnode_str(n, NULL));
}

/* Copies a node: collections in block style down to block_depth levels, in flow style below. */
static void copy_node(struct mn_prof *w, const struct mn_pnode *n, unsigned block_depth)
{
	switch (mn_pnode_kind(n)) {
	case MN_PNODE_MAP:
		if (block_depth)
			mn_prof_map_begin(w);
		else
			mn_prof_map_begin_flow(w);
		for (size_t i = 0; i < mn_pnode_len(n); i++) {
			mn_prof_key(w, mn_pnode_key(n, i) ? mn_pnode_key(n, i) : "");
			copy_node(w, mn_pnode_at(n, i), block_depth ? block_depth - 1 : 0);
		}
		mn_prof_map_end(w);
		break;
	case MN_PNODE_SEQ:
		if (block_depth)
			mn_prof_seq_begin(w);
		else
			mn_prof_seq_begin_flow(w);
		for (size_t i = 0; i < mn_pnode_len(n); i++)
			copy_node(w, mn_pnode_at(n, i), block_depth ? block_depth - 1 : 0);
		mn_prof_seq_end(w);
		break;
	default:
		copy_scalar(w, n);
		break;
	}
}

/* True when two nodes are the same YAML (scalars by text, keys in order). */
static bool node_equal(const struct mn_pnode *a, const struct mn_pnode *b)
{
	if (mn_pnode_kind(a) != mn_pnode_kind(b))
		return false;
	if (mn_pnode_kind(a) == MN_PNODE_SCALAR)
		return !strcmp(mn_pnode_str(a, NULL), mn_pnode_str(b, NULL));
	if (mn_pnode_len(a) != mn_pnode_len(b))
		return false;
	for (size_t i = 0; i < mn_pnode_len(a); i++) {
		const char *ka = mn_pnode_key(a, i), *kb = mn_pnode_key(b, i);

		if (mn_pnode_kind(a) == MN_PNODE_MAP && (!ka || !kb || strcmp(ka, kb)))
			return false;
		if (!node_equal(mn_pnode_at(a, i), mn_pnode_at(b, i)))
			return false;
	}
	return true;
}

/*
 * The shared libraries of the runs (`units:`, leader.c): the same in every input, or the merge is
 * refused (their sites would share ids); NULL when the runs had none.
 */
static const struct mn_pnode *one_units(const struct input *in, size_t n)
{
	const struct mn_pnode *u = mn_pnode_get(mn_profile_root(in[0].prof), "units");

	for (size_t i = 1; i < n; i++) {
		const struct mn_pnode *v = mn_pnode_get(mn_profile_root(in[i].prof), "units");

		if (!u != !v || (u && !node_equal(u, v)))
			die(1, "merge: '%s' and '%s' are runs with different shared libraries "
			    "(units:)", in[0].path, in[i].path);
	}
	return u;
}

/* A node as short text for a message: a scalar's text, a collection's flow form, cut at 60. */
static void node_text(const struct mn_pnode *n, char *buf, size_t len)
{
	size_t k = 0;

	if (!n) {
		snprintf(buf, len, "(none)");
		return;
	}
	if (mn_pnode_kind(n) == MN_PNODE_SCALAR) {
		snprintf(buf, len, "'%s'", mn_pnode_str(n, NULL));
		return;
	}
	k += (size_t)snprintf(buf + k, len - k, mn_pnode_kind(n) == MN_PNODE_MAP ? "{" : "[");
	for (size_t i = 0; i < mn_pnode_len(n) && k < len; i++) {
		char item[80];

		node_text(mn_pnode_at(n, i), item, sizeof(item));
		if (mn_pnode_kind(n) == MN_PNODE_MAP)
			k += (size_t)snprintf(buf + k, len - k, "%s%s: %s", i ? ", " : "",
					      mn_pnode_key(n, i) ? mn_pnode_key(n, i) : "?", item);
		else
			k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", item);
	}
	if (k < len)
		snprintf(buf + k, len - k, mn_pnode_kind(n) == MN_PNODE_MAP ? "}" : "]");
	if (strlen(buf) > 60)
		snprintf(buf + 57, len - 57, "...");
}

/* ---- The header ------------------------------------------------------------------------------ */

/* program: of several runs (see the top of this file). */
static void write_program(struct mn_prof *w, const struct input *in, size_t n)
{
	static const char *const agree[] = { "exit_status", "signal" };
	const struct mn_pnode *prog[n];
	uint64_t runs = 0, events = 0, wall_us = 0, summarized = 0;
	bool same_argv = true, all_events = true, all_wall = true, all_summarized = true;

	for (size_t i = 0; i < n; i++) {
		const struct mn_pnode *r;
		uint64_t v;
		double d;

		prog[i] = mn_pnode_get(mn_profile_root(in[i].prof), "program");
		r = mn_pnode_get(prog[i], "runs");
		runs += r && !mn_pnode_u64(r, &v) ? v : 1;
		if (!mn_pnode_get(prog[i], "argv") ||
		    !node_equal(mn_pnode_get(prog[i], "argv"), mn_pnode_get(prog[0], "argv")))
			same_argv = false;
		if (!mn_pnode_u64(mn_pnode_get(prog[i], "events"), &v))
			events += v;
		else
			all_events = false;
		/* Absent from profiles written before loop summaries: then the sum would lie. */
		if (!mn_pnode_u64(mn_pnode_get(prog[i], "summarized_accesses"), &v))
			summarized += v;
		else
			all_summarized = false;
		/* Integer microseconds, the unit the leader rounds to: the sum is exact. */
		if (!mn_pnode_f64(mn_pnode_get(prog[i], "wall_seconds"), &d) && d >= 0 && d < 1e12)
			wall_us += (uint64_t)llround(d * 1e6);
		else
			all_wall = false;
	}
	mn_prof_map_begin_flow(w);
	if (same_argv) {
		mn_prof_key(w, "argv");
		copy_node(w, mn_pnode_get(prog[0], "argv"), 0);
	}
	mn_prof_kv_u64(w, "runs", runs);
	for (size_t k = 0; k < sizeof(agree) / sizeof(agree[0]); k++) {
		const struct mn_pnode *v0 = mn_pnode_get(prog[0], agree[k]);
		bool same = v0 && mn_pnode_kind(v0) == MN_PNODE_SCALAR;

		for (size_t i = 1; i < n && same; i++)
			same = node_equal(v0, mn_pnode_get(prog[i], agree[k]));
		mn_prof_key(w, agree[k]);
		if (same)
			copy_scalar(w, v0);
		else
			mn_prof_null(w);
	}
	if (all_wall)
		mn_prof_kv_f64(w, "wall_seconds", (double)wall_us / 1e6);
	if (all_events)
		mn_prof_kv_u64(w, "events", events);
	if (all_summarized)
		mn_prof_kv_u64(w, "summarized_accesses", summarized);
	mn_prof_map_end(w);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* incomplete_reason of several runs: every "; "-separated reason of each, distinct, sorted. */
static char *merged_reason(const struct input *in, size_t n)
{
	char **atoms = NULL, *out;
	size_t natoms = 0, len = 1, k = 0;

	for (size_t i = 0; i < n; i++) {
		const char *r = NULL, *p;

		if (mn_profile_complete(in[i].prof, &r) || !r)
			continue;
		for (p = r; *p;) {
			const char *end = strstr(p, "; ");
			size_t l = end ? (size_t)(end - p) : strlen(p);

			if (l) {
				atoms = xrealloc(atoms, (natoms + 1) * sizeof(*atoms));
				atoms[natoms++] = xasprintf("%.*s", (int)l, p);
			}
			p += l + (end ? 2 : 0);
		}
	}
	if (natoms)
		qsort(atoms, natoms, sizeof(*atoms), cmp_str);
	for (size_t i = 0; i < natoms; i++)
		len += strlen(atoms[i]) + 2;
	out = xmalloc(len);
	out[0] = '\0';
	for (size_t i = 0; i < natoms; i++) {
		if (i && !strcmp(atoms[i], atoms[i - 1]))
			continue;
		k += (size_t)sprintf(out + k, "%s%s", k ? "; " : "", atoms[i]);
	}
	for (size_t i = 0; i < natoms; i++)
		free(atoms[i]);
	free(atoms);
	return out;
}

/* sites: the rows, as the leader writes them (mn_prof_site_row()). */
static void write_sites(struct mn_prof *w, const struct urow *rows, size_t n)
{
	mn_prof_key(w, "sites");
	mn_prof_map_begin(w);
	for (size_t i = 0; i < n; i++)
		mn_prof_site_row(w, rows[i].s);
	mn_prof_map_end(w);
}

/* ---- Modules --------------------------------------------------------------------------------- */

/*
 * The modules of the merged profile, in the inputs' order when they all have the same, else by
 * name (so that the order of the inputs does not matter).  Dies when the sets differ.
 */
static const char **module_order(const struct input *in, size_t n, size_t *count)
{
	size_t m = mn_profile_module_count(in[0].prof);
	const char **names = xmalloc((m ? m : 1) * sizeof(*names));
	bool same_order = true;

	for (size_t j = 0; j < m; j++)
		names[j] = mn_profile_module_name(in[0].prof, j);
	for (size_t i = 1; i < n; i++) {
		for (size_t j = 0; j < m; j++)
			if (!mn_profile_module(in[i].prof, names[j]))
				die(1, "merge: module '%s' is in '%s' but not in '%s'", names[j],
				    in[0].path, in[i].path);
		for (size_t j = 0; j < mn_profile_module_count(in[i].prof); j++) {
			const char *name = mn_profile_module_name(in[i].prof, j);

			if (!mn_profile_module(in[0].prof, name))
				die(1, "merge: module '%s' is in '%s' but not in '%s'", name,
				    in[i].path, in[0].path);
			if (j >= m || strcmp(name, names[j]))
				same_order = false;
		}
	}
	if (!same_order)
		qsort(names, m, sizeof(*names), cmp_str);
	*count = m;
	return names;
}

/* Dies at the first of a module's settings (module.h) that differs between two inputs. */
static void check_settings(const struct mn_module *mod, const struct input *in, size_t n)
{
	for (const char *const *key = mod->settings; key && *key; key++) {
		const struct mn_pnode *v0 = mn_pnode_get(mn_profile_module(in[0].prof, mod->name),
							 *key);

		for (size_t i = 1; i < n; i++) {
			const struct mn_pnode *v = mn_pnode_get(mn_profile_module(in[i].prof,
										  mod->name), *key);
			char a[96], b[96];

			if ((!v0 && !v) || (v0 && v && node_equal(v0, v)))
				continue;
			node_text(v0, a, sizeof(a));
			node_text(v, b, sizeof(b));
			die(1, "merge: module '%s': setting '%s' differs: %s in '%s', %s in '%s'",
			    mod->name, *key, a, in[0].path, b, in[i].path);
		}
	}
}

/*
 * A state of mod, fresh from init(), restored from input in's section: module_state_restore(),
 * which `mnemo report` checks profiles with too (mnemo.c).
 */
static void *restored(const struct mn_module *mod, const struct mn_run *run,
		      const struct input *in)
{
	char err[1280];
	void *st = module_state_restore(mod, run, in->prof, err, sizeof(err));

	if (!st)
		die(1, "merge: %s", err);
	return st;
}

/* Folds every input's section of mod and writes the result (the value of `<name>:`). */
static void merge_module(struct mn_prof *w, const struct mn_module *mod, const struct mn_run *run,
			 const struct input *in, size_t n)
{
	void *into = restored(mod, run, &in[0]);
	int ret;

	for (size_t i = 1; i < n; i++) {
		void *from = restored(mod, run, &in[i]);

		mod->merge(into, from);
		module_state_free(mod, from);
	}
	ret = mod->emit(into, w);
	if (ret)
		die(1, "merge: module '%s' cannot write its section: %s", mod->name,
		    strerror(-ret));
	module_state_free(mod, into);
}

/*
 * Every site the merged sections reference should be a row of some input: a module that writes
 * another (a bug) would leave a reader without its kind and place.  Said, not fatal.
 */
static void check_sites(const struct mn_prof *w, const struct urow *rows, size_t nrows)
{
	size_t nbits, r = 0;
	const uint64_t *used = mn_prof_sites_used(w, &nbits);

	for (size_t id = 0; used && id < nbits; id++) {
		if (!(used[id / 64] >> (id % 64) & 1))
			continue;
		while (r < nrows && rows[r].s->id < id)
			r++;
		if (r == nrows || rows[r].s->id != id)
			warning("merge: a merged section references site %zu, which no input lists "
				"in its sites:", id);
	}
}

/* ---- The command ----------------------------------------------------------------------------- */

/*
 * Opens the output: a memory stream for "-" (written out once whole), else mn_prof_file_open()'s
 * (a temporary file beside a regular file, or in place: /dev/null stays a device).
 */
static FILE *open_out(const char *out, char **mem, size_t *memlen)
{
	FILE *f;
	int ret;

	if (!strcmp(out, "-")) {
		f = open_memstream(mem, memlen);
		if (!f)
			die(1, "merge: %s", strerror(errno));
		return f;
	}
	ret = mn_prof_file_open(&outf, out);
	if (ret)
		die(1, "merge: cannot write '%s': %s", out, strerror(-ret));
	atexit(remove_tmp);
	return outf.f;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, **names, *reason;
	const struct mn_binary *ref;
	const struct mn_pnode *units;
	struct input *in;
	struct urow *rows;
	struct mn_prof *w;
	struct mn_run *run;
	size_t n, nrows, nmods, ref_in = 0, memlen = 0;
	char err[1024], *mem = NULL;
	uint32_t count;
	bool complete = true;
	FILE *f;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				usage_error("merge ", "--output: empty file name");
			out = optarg;
			break;
		case 'h':
			print_merge_help(stdout);
			return 0;
		default:
			option_error("merge ", c, argv);
		}
	}
	if (!out)
		usage_error("merge ", "no output: give -o OUT (or -o - for standard output)");
	if (optind >= argc)
		usage_error("merge ", "no profiles to merge");
	n = (size_t)(argc - optind);
	in = xmalloc(n * sizeof(*in));
	for (size_t i = 0; i < n; i++) {
		in[i].path = argv[optind + (int)i];
		ret = mn_profile_open(&in[i].prof, in[i].path, err, sizeof(err));
		if (ret)
			die(1, "merge: %s", err);
	}

	nrows = one_binary(in, n, &rows, &ref, &ref_in);
	units = one_units(in, n);
	names = module_order(in, n, &nmods);
	for (size_t j = 0; j < nmods; j++) {
		const struct mn_module *mod = mn_module_find(names[j]);

		if (!mod)
			die(1, "merge: module '%s' (in '%s') is not built into this mnemo",
			    names[j], in[0].path);
		if (!mod->restore || !mod->emit || (n > 1 && !mod->merge))
			die(1, "merge: module %s cannot be merged (it has no %s)", names[j],
			    !mod->restore ? "restore()" : !mod->emit ? "emit()" : "merge()");
		check_settings(mod, in, n);
	}
	count = ref ? ref->site_count : nrows ? rows[nrows - 1].s->id : 0;
	/* Sites of shared libraries (units:) follow the binary's own. */
	if (nrows && rows[nrows - 1].s->id > count)
		count = rows[nrows - 1].s->id;
	if (ref && count > PROFILE_SITE_COUNT_MAX)
		die(1, "merge: '%s': binary.site_count %u is implausible (more than %u sites)",
		    in[ref_in].path, count, PROFILE_SITE_COUNT_MAX);
	if (!ref && count > PROFILE_SITE_COUNT_MAX)
		die(1, "merge: '%s': site %u is implausible (more than %u sites)",
		    in[rows[nrows - 1].in].path, count, PROFILE_SITE_COUNT_MAX);
	run = make_run(rows, nrows, count);

	f = open_out(out, &mem, &memlen);
	if ((ret = mn_prof_open(&w, f)))
		die(1, "merge: cannot write '%s': %s", out, strerror(-ret));
	mn_prof_map_begin(w);
	mn_prof_kv_str(w, "format", MN_PROFILE_FORMAT);
	if (n > 1) {
		mn_prof_key(w, "program");
		write_program(w, in, n);
	} else if (mn_pnode_get(mn_profile_root(in[0].prof), "program")) {
		mn_prof_key(w, "program");
		copy_node(w, mn_pnode_get(mn_profile_root(in[0].prof), "program"), 0);
	}
	if (ref) {
		mn_prof_key(w, "binary");
		mn_prof_map_begin_flow(w);
		mn_prof_kv_u64(w, "site_count", ref->site_count);
		mn_prof_kv_str(w, "site_table_hash", ref->site_table_hash);
		mn_prof_map_end(w);
	}
	if (units) {
		mn_prof_key(w, "units");
		copy_node(w, units, 1);
	}
	/* One run's own costs; of several, they would only say which run came first. */
	if (n == 1 && mn_pnode_get(mn_profile_root(in[0].prof), "backend")) {
		mn_prof_key(w, "backend");
		copy_node(w, mn_pnode_get(mn_profile_root(in[0].prof), "backend"), 1);
	}
	for (size_t i = 0; i < n; i++)
		complete &= mn_profile_complete(in[i].prof, NULL);
	mn_prof_kv_bool(w, "complete", complete);
	if (!complete) {
		char *r = NULL;

		if (n == 1)
			mn_profile_complete(in[0].prof, &reason);
		else
			reason = r = merged_reason(in, n);
		if (reason && reason[0])
			mn_prof_kv_str(w, "incomplete_reason", reason);
		free(r);
	}
	write_sites(w, rows, nrows);
	mn_prof_key(w, "modules");
	mn_prof_map_begin(w);
	for (size_t j = 0; j < nmods; j++) {
		mn_prof_key(w, names[j]);
		merge_module(w, mn_module_find(names[j]), run, in, n);
	}
	mn_prof_map_end(w);
	mn_prof_map_end(w);
	check_sites(w, rows, nrows);
	if ((ret = mn_prof_close(w)))
		die(1, "merge: cannot write '%s': %s", out, ret == -EINVAL ?
		    "a module wrote a malformed section" : strerror(-ret));
	if (f != outf.f) {   /* "-": the memory stream */
		if (fclose(f))
			die(1, "merge: cannot write the standard output: %s", strerror(errno));
		if (fwrite(mem, 1, memlen, stdout) != memlen || fflush(stdout))
			die(1, "merge: cannot write the standard output: %s", strerror(errno));
		free(mem);
	} else if ((ret = mn_prof_file_commit(&outf))) {
		die(1, "merge: cannot write '%s': %s", out, strerror(-ret));
	}

	mn_run_destroy(run);
	free(names);
	free(rows);
	for (size_t i = 0; i < n; i++)
		mn_profile_close(in[i].prof);
	free(in);
	return 0;
}
