/*
 * What the parts of the `mnemo` command share; never installed.  mnemo.c holds main, the command
 * dispatch, the main help and the helpers below; run.c holds `mnemo run`; report.c holds
 * `mnemo report` and its table renderer; merge.c holds `mnemo merge`.  Modules contribute
 * commands of their own (struct mn_command, below): `mnemo expand` and `mnemo derive` are
 * object-relative's, in modules/object-relative/commands/.  Every message goes to stderr as
 * `mnemo: <what>: <why>`; the exit codes are listed at the top of mnemo.c.
 */
#ifndef MNEMO_TOOLS_INTERNAL_H
#define MNEMO_TOOLS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define WIDTH 100          /* output fits a terminal this wide */

/* ---- Messages and exits (mnemo.c) ------------------------------------------------------------ */

/* Prints "mnemo: <fmt>" and a newline on stderr, after flushing stdout, and exits with code. */
void __attribute__((noreturn, format(printf, 2, 3))) die(int code, const char *fmt, ...);

/* Prints "mnemo: <fmt>" and a newline on stderr, after flushing stdout; returns. */
void __attribute__((format(printf, 1, 2))) warning(const char *fmt, ...);

/*
 * Prints "mnemo: <fmt>" on stderr, then "Try 'mnemo <cmd>--help'.", and exits with 2.  cmd is
 * the command followed by a space ("run "), or NULL for mnemo itself.
 */
void __attribute__((noreturn, format(printf, 2, 3))) usage_error(const char *cmd,
								 const char *fmt, ...);

/*
 * Exits through usage_error() for what getopt_long() returned when an option was wrong: ':' (the
 * option argv[optind - 1] needs a value) or anything else (argv[optind - 1] is unknown).
 */
void __attribute__((noreturn)) option_error(const char *cmd, int c, char **argv);

/*
 * Parses s as a decimal number from 0 to max: no sign, no leading ' ' (strtoull() still skips
 * other leading white space), nothing after the digits.  Returns true and sets *v, or returns
 * false and leaves *v unspecified.
 */
bool parse_uint(const char *s, unsigned long long max, unsigned long long *v);

/* ---- Memory (mnemo.c): these never return NULL; they die with status 1 when memory is out ---- */

/* malloc(n), n == 0 included. */
void *xmalloc(size_t n);

/* realloc(p, n), n == 0 included. */
void *xrealloc(void *p, size_t n);

/* A copy of s, to free. */
char *xstrdup(const char *s);

/* The formatted text in a string of its own, to free. */
char *__attribute__((format(printf, 1, 2))) xasprintf(const char *fmt, ...);

/* ---- Pointer sets (mnemo.c) -------------------------------------------------------------------- */

/*
 * A set of pointers, for walks that must reach each node once: a YAML alias makes one node
 * reachable from many places, and a few hundred bytes of aliases of aliases would expand to
 * gigabytes.  Zeroed is empty.
 */
struct ptrset {
	const void **v;             /* open addressing on the pointer; NULL: empty */
	size_t n, cap;
};

/* Adds p; returns false when it was there already.  Dies with status 1 when memory is out. */
bool ptrset_add(struct ptrset *s, const void *p);

/* Frees the set's memory; it is empty again. */
void ptrset_free(struct ptrset *s);

/* ---- Text layout (mnemo.c) ------------------------------------------------------------------- */

/* Display columns of UTF-8 text: every byte that does not continue a character. */
size_t ucols(const char *s);

/* A copy of s, to free, cut to at most cols display columns, ending in "…" when cut. */
char *ellipsize(const char *s, size_t cols);

/*
 * Prints s and a newline to out, word-wrapped to WIDTH; the first line continues at column col,
 * the next ones start at column indent.  A word longer than a line is not cut.
 */
void print_wrapped(FILE *out, size_t col, size_t indent, const char *s);

/* ---- Installed modules (mnemo.c) ------------------------------------------------------------- */

/* One module installed in share/mnemo/modules. */
struct modspec {
	char *name;                 /* the name of its folder */
	char *doc;                  /* `doc:` of its events.yaml, or NULL */
};

/* The folder of the installed modules, $prefix/share/mnemo/modules, to free. */
char *modules_dir(void);

/*
 * Sets *out to the modules installed in modules_dir(), sorted by name, and returns how many (0
 * when none); returns -1, with *out NULL, when the folder cannot be opened.  Free with
 * free_modules().
 */
ssize_t list_modules(struct modspec **out);

/* Frees what list_modules() returned: the n modules of m (n may be -1 or 0). */
void free_modules(struct modspec *m, ssize_t n);

/* ---- Module sections, read by the modules' own code (mnemo.c) ------------------------------- */

struct mn_module;
struct mn_profile;
struct mn_run;

/*
 * The most sites a profile may claim (binary.site_count, else its highest site id): a binary's
 * table has one line per site the pass made, and the run made from a profile costs about 16 bytes
 * per id, so a count above this is a damaged or hand-made profile, refused before the table is
 * made rather than after hundreds of megabytes.
 */
#define PROFILE_SITE_COUNT_MAX (1u << 24)

/*
 * A state of module mod, fresh from its init() on run, rebuilt by its restore() from its section
 * of prof: how `mnemo merge` reads a section and `mnemo report` checks one.  Returns the state,
 * to free with module_state_free(), or NULL with one line in err: "module '<name>': <why>", where
 * a section that breaks the module's schema names the file, line, column and field at fault.
 */
void *module_state_restore(const struct mn_module *mod, const struct mn_run *run,
			   const struct mn_profile *prof, char *err, size_t errlen);

/* Finalizes and frees a state module_state_restore() returned; NULL is a no-op. */
void module_state_free(const struct mn_module *mod, void *st);

/*
 * Checks one profile by the rules `mnemo merge` reads it with: a plausible site count, then every
 * section of a module built into mnemo restored by module_state_restore() on a run made from the
 * profile's `sites:` (a section of a module this mnemo lacks is not checked).  Returns 0, or -1
 * with one line in err, the one merge gives for that profile (without its "merge: ").
 */
int profile_check(const struct mn_profile *prof, char *err, size_t errlen);

/*
 * What the schema of a module (mn_module.schema) declares of a node of its section: the schema
 * of its rows, and whether the node is a table of such rows or one of them (the section, a
 * mapping field).  s NULL: nothing is declared (a module mnemo lacks, a part of no schema).
 * The text report and the HTML page's table weights walk sections with it (report.c).
 */
struct decl {
	const struct mn_schema *s;
	bool table;
};

/* What is declared of the value at key of node d: an item of a table is one of its rows. */
struct decl decl_at(struct decl d, const char *key);

/* ---- Commands -------------------------------------------------------------------------------- */

/*
 * One `mnemo` subcommand.  A module contributes one by defining `const struct mn_command
 * mn_command_<c_name>` in modules/<name>/commands/ (compiled into mnemo only) and listing
 * MN_COMMAND(c_name) in modules/commands.def; mnemo.c then dispatches `mnemo <name>`, lists it in
 * `mnemo --help` and answers `mnemo help <name>`.
 */
struct mn_command {
	const char *name;                 /* `mnemo <name>` */
	const char *doc;                  /* one line for `mnemo --help` */
	void (*help)(FILE *out);          /* `mnemo help <name>` and, by convention, --help */
	int (*main)(int argc, char **argv);   /* argv[0] is the name; returns the exit status */
};

/* ---- mnemo's own commands (run.c, report.c, merge.c) ---------------------------------------- */

/* Prints the help of `mnemo run` to out. */
void print_run_help(FILE *out);

/*
 * `mnemo run`, argv[0] being "run": runs the program and ends as it did (same exit status, or
 * the same signal re-raised); returns (0) only after --help.  Dies with 2 on bad usage or when
 * the program cannot be started (no pipe, no fork), with 126 or 127 when it cannot be executed.
 */
int cmd_run(int argc, char **argv);

/* Prints the help of `mnemo report` to out. */
void print_report_help(FILE *out);

/*
 * `mnemo report`, argv[0] being "report": prints the profiles named in argv to stdout.  Returns
 * 0; 1 when a profile cannot be read, fails profile_check() or lacks a --module (the rest is
 * printed); 2 when --sort
 * names a column that no table has (nothing is printed).  Dies with 2 on bad usage, with 1 when
 * stdout cannot be written.
 */
int cmd_report(int argc, char **argv);

/* Prints the help of `mnemo merge` to out. */
void print_merge_help(FILE *out);

/*
 * `mnemo merge`, argv[0] being "merge": merges the profiles of several runs of one binary into
 * the -o file (merge.c).  Returns 0 (after --help too).  Dies with 2 on bad usage, with 1 when a
 * profile cannot be read, the profiles cannot be merged (different binaries, module sets or
 * settings, a section that does not restore) or the output cannot be written.
 */
int cmd_merge(int argc, char **argv);

#endif
