/*
 * mnemo: the command-line tool.  `mnemo run` runs a program built with mnemo-cc under explicit
 * profiling options (run.c); `mnemo report` prints profiles as tables with source locations
 * (report.c); `mnemo merge` merges the profiles of several runs (merge.c, with the modules linked
 * in for their restore and merge); modules add commands of their own (modules/commands.def:
 * object-relative's `mnemo expand` and `mnemo derive`, modules/object-relative/commands/).  This
 * file is the rest: main and the command dispatch, `mnemo --help`, `mnemo help COMMAND` and
 * `--version`, and the helpers the commands use (mnemo_internal.h): messages and
 * exits, memory, text layout, the list of installed modules, and module sections read by the
 * modules' own restore(), the one set of rules merge and report read profiles by.
 *
 * The tool finds its companions relative to itself ($bindir/../share/mnemo), so it works the same
 * from the build tree and from an install prefix (docs/internals.md, "Build products").
 *
 * Exit codes: 0 success; 1 a profile could not be read (or merged); 2 bad usage; 126/127 the program could
 * not be run; otherwise `mnemo run` ends exactly as the program did, signal included.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "backend.h"
#include "mnemo_internal.h"
#include "module.h"
#include "profile.h"
#include "registry.h"

#ifndef MNEMO_VERSION
#define MNEMO_VERSION "0.0.0"
#endif

static char prefix[PATH_MAX];   /* $bindir/.. */

/* ---- Messages and exits ---------------------------------------------------------------------- */

/* The start every message shares: stdout flushed first, so that the two keep their order. */
static void vmessage(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("mnemo: ", stderr);
	vfprintf(stderr, fmt, ap);
}

void die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'mnemo %s--help'.\n", cmd ? cmd : "");
	exit(2);
}

void option_error(const char *cmd, int c, char **argv)
{
	if (c == ':')
		usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
	usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

bool parse_uint(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return *s && !*end && !errno && *s != '-' && *s != '+' && *s != ' ' && *v <= max;
}

/* ---- Memory ---------------------------------------------------------------------------------- */

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die(1, "%s", strerror(ENOMEM));
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die(1, "%s", strerror(ENOMEM));
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die(1, "%s", strerror(ENOMEM));
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die(1, "%s", strerror(ENOMEM));
	return s;
}

/* ---- Pointer sets ---------------------------------------------------------------------------- */

static size_t ptrset_slot(const void **v, size_t cap, const void *p)
{
	size_t i = (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15u >> 20) & (cap - 1);

	while (v[i] && v[i] != p)
		i = (i + 1) & (cap - 1);
	return i;
}

bool ptrset_add(struct ptrset *s, const void *p)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		const void **v = xmalloc(cap * sizeof(*v));

		memset(v, 0, cap * sizeof(*v));
		for (size_t k = 0; k < s->cap; k++)
			if (s->v[k])
				v[ptrset_slot(v, cap, s->v[k])] = s->v[k];
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	i = ptrset_slot(s->v, s->cap, p);
	if (s->v[i])
		return false;
	s->v[i] = p;
	s->n++;
	return true;
}

void ptrset_free(struct ptrset *s)
{
	free(s->v);
	*s = (struct ptrset){ 0 };
}

/* ---- Text layout ----------------------------------------------------------------------------- */

/* Display columns of UTF-8 text: every byte that does not continue a character. */
size_t ucols(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Bytes of the longest prefix of s that fits in cols display columns. */
static size_t ubytes(const char *s, size_t cols)
{
	size_t i = 0, n = 0;

	while (s[i]) {
		size_t j = i + 1;

		while (((unsigned char)s[j] & 0xc0) == 0x80)
			j++;
		if (n + 1 > cols)
			break;
		n++;
		i = j;
	}
	return i;
}

/* A copy of s cut to at most cols display columns, ending in "…" when cut. */
char *ellipsize(const char *s, size_t cols)
{
	size_t b;

	if (ucols(s) <= cols)
		return xstrdup(s);
	if (cols == 0)
		return xstrdup("");
	b = ubytes(s, cols - 1);
	return xasprintf("%.*s…", (int)b, s);
}

/* Prints s word-wrapped to WIDTH; the first line continues at column col, the next at indent. */
void print_wrapped(FILE *out, size_t col, size_t indent, const char *s)
{
	while (*s) {
		size_t room = col < WIDTH ? WIDTH - col : 1, len = strlen(s), cut;

		if (ucols(s) <= room) {
			fputs(s, out);
			break;
		}
		cut = ubytes(s, room);
		while (cut > 0 && s[cut] != ' ')
			cut--;
		if (cut == 0) {   /* one word longer than the line */
			cut = strcspn(s, " ");
			if (cut >= len) {
				fputs(s, out);
				break;
			}
		}
		fprintf(out, "%.*s\n%*s", (int)cut, s, (int)indent, "");
		s += cut;
		while (*s == ' ')
			s++;
		col = indent;
	}
	fputc('\n', out);
}

/* ---- Installed modules ----------------------------------------------------------------------- */

/* The installation prefix: the parent of the folder this executable is in. */
static void find_prefix(const char *argv0)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0)
		exe[n] = '\0';
	else if (!realpath(argv0, exe))
		snprintf(exe, sizeof(exe), "%s", argv0);
	snprintf(prefix, sizeof(prefix), "%s", dirname(dirname(exe)));
}

static int cmp_modspec(const void *a, const void *b)
{
	return strcmp(((const struct modspec *)a)->name, ((const struct modspec *)b)->name);
}

char *modules_dir(void)
{
	return xasprintf("%s/share/mnemo/modules", prefix);
}

/* Reads `module:` and `doc:` of a module spec; leaves them NULL when it cannot. */
static void read_modspec(const char *path, char **name, char **doc)
{
	yaml_parser_t ps;
	yaml_document_t d;
	FILE *f = fopen(path, "rb");

	*name = *doc = NULL;
	if (!f)
		return;
	if (!yaml_parser_initialize(&ps)) {
		fclose(f);
		return;
	}
	yaml_parser_set_input_file(&ps, f);
	if (yaml_parser_load(&ps, &d)) {
		yaml_node_t *root = yaml_document_get_root_node(&d);

		if (root && root->type == YAML_MAPPING_NODE) {
			for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
			     pr < root->data.mapping.pairs.top; pr++) {
				yaml_node_t *k = yaml_document_get_node(&d, pr->key);
				yaml_node_t *v = yaml_document_get_node(&d, pr->value);

				if (k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE)
					continue;
				if (!strcmp((char *)k->data.scalar.value, "module") && !*name)
					*name = xstrdup((char *)v->data.scalar.value);
				else if (!strcmp((char *)k->data.scalar.value, "doc") && !*doc)
					*doc = xstrdup((char *)v->data.scalar.value);
			}
		}
		yaml_document_delete(&d);
	}
	yaml_parser_delete(&ps);
	fclose(f);
}

/* The modules installed in share/mnemo/modules, sorted by name; -1 when the folder is missing. */
ssize_t list_modules(struct modspec **out)
{
	char *dir = modules_dir();
	DIR *dp = opendir(dir);
	struct modspec *m = NULL;
	struct dirent *de;
	size_t n = 0;

	*out = NULL;
	if (!dp) {
		free(dir);
		return -1;
	}
	while ((de = readdir(dp))) {
		char *spec;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		spec = xasprintf("%s/%s/events.yaml", dir, de->d_name);
		if (stat(spec, &st) == 0 && S_ISREG(st.st_mode)) {
			m = xrealloc(m, (n + 1) * sizeof(*m));
			read_modspec(spec, &m[n].name, &m[n].doc);
			/* The folder's name is the module's (the specializer checks they agree). */
			free(m[n].name);
			m[n].name = xstrdup(de->d_name);
			n++;
		}
		free(spec);
	}
	closedir(dp);
	free(dir);
	if (n)
		qsort(m, n, sizeof(*m), cmp_modspec);
	*out = m;
	return (ssize_t)n;
}

void free_modules(struct modspec *m, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++) {
		free(m[i].name);
		free(m[i].doc);
	}
	free(m);
}

/* ---- Module sections ------------------------------------------------------------------------- */

void *module_state_restore(const struct mn_module *mod, const struct mn_run *run,
			   const struct mn_profile *prof, char *err, size_t errlen)
{
	size_t size = mod->state_size ? mod->state_size : 1;
	void *st = xmalloc(size);
	char why[1024] = "";
	int ret;

	memset(st, 0, size);
	if (mod->init && (ret = mod->init(st, run))) {
		snprintf(err, errlen, "module '%s' cannot start: %s", mod->name,
			 strerror(ret < 0 ? -ret : ret));
		free(st);
		return NULL;
	}
	ret = mod->restore(st, prof, mn_profile_module(prof, mod->name), why, sizeof(why));
	if (!ret)
		return st;
	if (ret == -EINVAL)
		snprintf(err, errlen, "module '%s': %s", mod->name,
			 why[0] ? why : "its section does not follow the schema");
	else
		snprintf(err, errlen, "module '%s': cannot read its section of '%s': %s", mod->name,
			 mn_profile_path(prof), strerror(-ret));
	module_state_free(mod, st);
	return NULL;
}

void module_state_free(const struct mn_module *mod, void *st)
{
	if (st && mod->fini)
		mod->fini(st);
	free(st);
}

int profile_check(const struct mn_profile *prof, char *err, size_t errlen)
{
	const struct mn_binary *bin = mn_profile_binary(prof);
	size_t nrows = mn_profile_site_count(prof);
	const struct mn_site **rows;
	struct mn_run *run;
	uint32_t count;
	char why[256];
	int ret = 0;

	/* The count and the run as merge makes them from this profile alone (merge.c). */
	if (bin && bin->site_table_hash && bin->site_table_hash[0]) {
		count = bin->site_count;
		/* Sites of shared libraries (units:) follow the binary's own. */
		if (nrows && mn_profile_site_at(prof, nrows - 1)->id > count)
			count = mn_profile_site_at(prof, nrows - 1)->id;
		if (count > PROFILE_SITE_COUNT_MAX) {
			snprintf(err, errlen, "'%s': binary.site_count %u is implausible (more than "
				 "%u sites)", mn_profile_path(prof), count, PROFILE_SITE_COUNT_MAX);
			return -1;
		}
	} else {
		count = nrows ? mn_profile_site_at(prof, nrows - 1)->id : 0;
		if (count > PROFILE_SITE_COUNT_MAX) {
			snprintf(err, errlen, "'%s': site %u is implausible (more than %u sites)",
				 mn_profile_path(prof), count, PROFILE_SITE_COUNT_MAX);
			return -1;
		}
	}
	rows = xmalloc((nrows ? nrows : 1) * sizeof(*rows));
	for (size_t i = 0; i < nrows; i++)
		rows[i] = mn_profile_site_at(prof, i);
	ret = mn_run_from_sites(&run, rows, nrows, count, why, sizeof(why));
	free(rows);
	if (ret) {
		snprintf(err, errlen, "cannot make the site table for the modules: %s",
			 ret == -EINVAL ? why : strerror(-ret));
		return -1;
	}
	ret = 0;
	for (size_t i = 0; i < mn_profile_module_count(prof) && !ret; i++) {
		const struct mn_module *mod = mn_module_find(mn_profile_module_name(prof, i));
		void *st;

		if (!mod || !mod->restore)
			continue;
		st = module_state_restore(mod, run, prof, err, errlen);
		if (!st)
			ret = -1;
		module_state_free(mod, st);
	}
	mn_run_destroy(run);
	return ret;
}

/* ---- Help ------------------------------------------------------------------------------------ */

static const struct {
	const char *type, *env, *def, *doc;
} options[] = {
#define MN_OPTION(type, field, env, def, doc) { #type, #env, #def, doc },
#include "options.def"
#undef MN_OPTION
};

static const struct {
	const char *env;
	unsigned min, max;
} option_ranges[] = {
#define MN_OPTION_RANGE(env, min, max, why) { #env, min, max },
#include "options.def"
#undef MN_OPTION_RANGE
};

/* Each built-in module's settings (module.h, struct mn_option), those meant for users. */
static void print_module_options(FILE *out)
{
	for (size_t i = 0; i < mn_module_count(); i++) {
		const struct mn_module *m = mn_module_at(i);

		for (const struct mn_option *o = m->options; o && o->env; o++) {
			char name[96];
			char *doc;
			size_t col;

			if (!o->doc)
				continue;
			mn_option_usage(o, name, sizeof(name));
			if (*o->def)
				doc = xasprintf("%s: %s; default %s", m->name, o->doc, o->def);
			else
				doc = xasprintf("%s: %s", m->name, o->doc);
			col = fprintf(out, "  %-20s ", name);
			print_wrapped(out, col, 23, doc);
			free(doc);
		}
	}
}

static void print_environment(FILE *out)
{
	fputs("Environment of a profiled program (the runtime reads it; `mnemo run` sets it\n"
	      "from its options):\n", out);
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		const char *type = options[i].type, *def = options[i].def;
		char *name, *doc, range[48] = "";
		size_t col;

		if (!strcmp(type, "uint"))
			name = xasprintf("%s=N", options[i].env);
		else if (!strcmp(type, "bool"))
			name = xasprintf("%s=1", options[i].env);
		else
			name = xstrdup(options[i].env);
		for (size_t k = 0; k < sizeof(option_ranges) / sizeof(option_ranges[0]); k++)
			if (!strcmp(option_ranges[k].env, options[i].env))
				snprintf(range, sizeof(range), " (%u to %u)", option_ranges[k].min,
					 option_ranges[k].max);
		if (!strcmp(type, "str") || !strcmp(def, "\"\""))
			doc = xasprintf("%s%s", options[i].doc, range);
		else
			doc = xasprintf("%s; default %s%s", options[i].doc, def, range);
		col = fprintf(out, "  %-20s ", name);
		print_wrapped(out, col, 23, doc);
		free(name);
		free(doc);
	}
	print_module_options(out);
}

/* ---- Commands -------------------------------------------------------------------------------- */

#define MN_COMMAND(c_name) extern const struct mn_command mn_command_##c_name;
#include "commands.def"
#undef MN_COMMAND

static const struct mn_command command_run = {
	"run", "run a program built with mnemo-cc and write its profile", print_run_help, cmd_run,
};
static const struct mn_command command_report = {
	"report", "print one or more profiles as tables with source locations", print_report_help,
	cmd_report,
};
static const struct mn_command command_merge = {
	"merge", "merge the profiles of several runs of one binary into one", print_merge_help,
	cmd_merge,
};

/* Every command but help, in the order `mnemo --help` lists them: the modules' after report. */
static const struct mn_command *const commands[] = {
	&command_run,
	&command_report,
#define MN_COMMAND(c_name) &mn_command_##c_name,
#include "commands.def"
#undef MN_COMMAND
	&command_merge,
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The command called name (not help), or NULL. */
static const struct mn_command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

/* "run, report, ..., help": every command's name, for the messages that list them. */
static const char *command_names(void)
{
	static char names[512];
	size_t len = 0;

	for (size_t i = 0; i < NCOMMANDS && len < sizeof(names); i++)
		len += snprintf(names + len, sizeof(names) - len, "%s, ", commands[i]->name);
	if (len < sizeof(names))
		snprintf(names + len, sizeof(names) - len, "help");
	return names;
}

static void print_main_help(FILE *out)
{
	struct modspec *m;
	ssize_t n = list_modules(&m);

	fputs("mnemo: a memory profiler for C and C++ programs (PROMPT-style: compiler-inserted\n"
	      "events, a shared-memory queue, profiling modules in one backend process).\n"
	      "\n"
	      "Usage: mnemo COMMAND [OPTIONS] [ARGS...]\n"
	      "       mnemo help COMMAND      (or: mnemo COMMAND --help)\n"
	      "\n"
	      "Commands:\n", out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i]->name, commands[i]->doc);
	fputs("  help     print the help of a command\n"
	      "\n"
	      "Build the program first with mnemo-cc (C) or mnemo-c++ (C++), which take every\n"
	      "clang-19 option, e.g. `mnemo-cc -m value-pattern -O2 -g prog.c -o prog`; then\n"
	      "`./prog` alone writes prog.mnemo.yaml.\n"
	      "\n", out);
	if (n > 0) {
		fputs("Modules:\n", out);
		for (ssize_t i = 0; i < n; i++) {
			size_t col = fprintf(out, "  %-20s ", m[i].name);

			print_wrapped(out, col, 23,
				      m[i].doc ? m[i].doc : "(no doc in its events.yaml)");
		}
	} else {
		char *dir = modules_dir();

		fprintf(out, "Modules: none installed in %s\n", dir);
		free(dir);
	}
	free_modules(m, n);
	fputc('\n', out);
	print_environment(out);
	fputs("\n"
	      "Options:\n"
	      "  -h, --help           print this help\n"
	      "  -V, --version        print the version\n", out);
}

/* ---- main ------------------------------------------------------------------------------------ */

static int help_for(const char *cmd)
{
	const struct mn_command *c = find_command(cmd);

	if (c)
		c->help(stdout);
	else if (!strcmp(cmd, "help"))
		print_main_help(stdout);
	else
		usage_error(NULL, "unknown command '%s' (commands: %s)", cmd, command_names());
	return 0;
}

int main(int argc, char **argv)
{
	const struct mn_command *command;
	const char *cmd;

	find_prefix(argv[0]);
	if (argc < 2) {
		fprintf(stderr, "Usage: mnemo COMMAND [OPTIONS] [ARGS...]; commands: %s.\n"
			"Try 'mnemo --help'.\n", command_names());
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		print_main_help(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("mnemo %s (profile format %s)\n", MNEMO_VERSION, MN_PROFILE_FORMAT);
		return 0;
	}
	if (!strcmp(cmd, "help")) {
		if (argc > 2)
			return help_for(argv[2]);
		print_main_help(stdout);
		return 0;
	}
	command = find_command(cmd);
	if (command)
		return command->main(argc - 1, argv + 1);
	if (cmd[0] == '-')
		usage_error(NULL, "unknown option '%s'", cmd);
	usage_error(NULL, "unknown command '%s' (commands: %s)", cmd, command_names());
}
