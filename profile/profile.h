/*
 * Profiles: the writer modules and the backend use (libyaml emitter), and the reader every client
 * uses (libmnemo-profile).  Format: README "Reading a profile"; format string MN_PROFILE_FORMAT.
 *
 * Writer errors are sticky: after the first failure every call is a no-op and mn_prof_close()
 * returns the error, so emit functions need not check each call.
 */
#ifndef MNEMO_PROFILE_H
#define MNEMO_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MN_PROFILE_FORMAT "mnemo-profile/1"

/* ---- Writer (profile.c) ------------------------------------------------------------------------
 *
 * Block style by default; mn_prof_*_flow() for one-line rows.  Keys are written plain; strings are
 * quoted only when a YAML 1.1 or 1.2 reader would otherwise take them for something else (a number,
 * a boolean, null, an empty value); doubles in the shortest form that reads back to the same bits.
 * The same calls give byte-identical output.  A misused call (a value where a key belongs, an end
 * without a begin) is an error like any other: -EINVAL from mn_prof_close().
 */

#ifdef __cplusplus
extern "C" {
#endif

struct mn_prof;

/* Starts a YAML stream on f (not closed by the writer).  Returns 0 or -errno. */
int mn_prof_open(struct mn_prof **pp, FILE *f);
/* Ends the stream; returns 0 or the first error (-errno, or -EIO for an emitter failure). */
int mn_prof_close(struct mn_prof *p);

void mn_prof_map_begin(struct mn_prof *p);
void mn_prof_map_begin_flow(struct mn_prof *p);   /* {a: 1, b: 2} on one line: table rows */
void mn_prof_map_end(struct mn_prof *p);
void mn_prof_seq_begin(struct mn_prof *p);
void mn_prof_seq_begin_flow(struct mn_prof *p);
void mn_prof_seq_end(struct mn_prof *p);
void mn_prof_key(struct mn_prof *p, const char *key);
void mn_prof_str(struct mn_prof *p, const char *s);
void mn_prof_u64(struct mn_prof *p, uint64_t v);
void mn_prof_i64(struct mn_prof *p, int64_t v);
void mn_prof_f64(struct mn_prof *p, double v);     /* shortest round-tripping decimal */
void mn_prof_bool(struct mn_prof *p, bool v);
void mn_prof_null(struct mn_prof *p);
/* A site id: written as an integer, and remembered so the profile's `sites:` table lists it. */
void mn_prof_site(struct mn_prof *p, uint32_t site);
/* The referenced site ids so far, for the backend: a bitmap of nbits, or NULL when none. */
const uint64_t *mn_prof_sites_used(const struct mn_prof *p, size_t *nbits);

/* A key and its value in one call, for table rows: mn_prof_kv_u64(p, "executions", n). */
void mn_prof_kv_str(struct mn_prof *p, const char *key, const char *s);
void mn_prof_kv_u64(struct mn_prof *p, const char *key, uint64_t v);
void mn_prof_kv_i64(struct mn_prof *p, const char *key, int64_t v);
void mn_prof_kv_f64(struct mn_prof *p, const char *key, double v);
void mn_prof_kv_bool(struct mn_prof *p, const char *key, bool v);
void mn_prof_kv_site(struct mn_prof *p, const char *key, uint32_t site);

struct mn_site;   /* a row of the `sites:` table, declared with the reader below */
/*
 * Writes one row of the `sites:` table, `<id>: {kind, function, file, line, column, ...}` on one
 * line: name, type_size, loop and fields only when set, so a row without them reads as it did
 * before the site table had them; a site of kind `unknown` is its kind alone.  The one writer of
 * rows, for the backend and for `mnemo merge`, so that a merged profile's rows are byte for byte
 * the ones the run wrote.
 */
void mn_prof_site_row(struct mn_prof *p, const struct mn_site *s);

/*
 * The file a profile goes to.  An existing regular file is replaced only once the new profile is
 * whole: it is written to a temporary file beside its target and renamed into place by
 * mn_prof_file_commit(), so no reader (and no failed write) sees half of it, and the target may be
 * a profile the new one was made from.  A target that is not a regular file (/dev/null,
 * /dev/stdout, a FIFO) is written in place: renaming over it would replace it.  A symbolic link
 * is followed: the file it names is replaced, the link stays.
 */
struct mn_prof_file {
	FILE *f;         /* write the profile here */
	char *tmp;       /* the temporary file; NULL when writing in place */
	char *path;      /* the file the profile ends up in */
};
/* Opens the file for path (created with 0666 less the umask).  Returns 0 or -errno. */
int mn_prof_file_open(struct mn_prof_file *o, const char *path);
/* Closes it and renames it into place.  Returns 0, or -errno after removing the temporary file. */
int mn_prof_file_commit(struct mn_prof_file *o);
/* Closes it and removes the temporary file: the target stays as it was.  Never fails. */
void mn_prof_file_abort(struct mn_prof_file *o);

#ifdef __cplusplus
}
#endif

/* ---- End of the writer (profile.c) -------------------------------------------------------------- */

/* ---- Reader (libmnemo-profile) ---------------------------------------------------------------
 *
 * Loads a whole profile into memory (libyaml's document API) and validates its frame: the
 * format string, `complete`, `program`, the `sites` table (a mapping from integer ids to site
 * mappings) and `modules` (a mapping from module names to sections).  A profile may be a stream
 * of several YAML documents: the first holds the header; `sites` and `modules` of the later ones
 * are added to it.  Module sections are not interpreted: walk them with the mn_pnode_* calls.
 * Build with `pkg-config --cflags --libs mnemo-profile` and include <mnemo/profile.h>.
 *
 * Every pointer a profile hands out (nodes, strings, sites) lives until mn_profile_close().
 * Nothing is modified after mn_profile_open(), so one profile may be read from many threads.
 */

#ifdef __cplusplus
extern "C" {
#endif

struct mn_profile;   /* a loaded profile */
struct mn_pnode;     /* one YAML node of it: a scalar, a sequence or a mapping */

enum mn_pnode_kind {
	MN_PNODE_NONE = 0,   /* only for a NULL node */
	MN_PNODE_SCALAR,
	MN_PNODE_SEQ,
	MN_PNODE_MAP,
};

/* The `program:` mapping.  Fields the profile does not give read as the "unknown" value. */
struct mn_program {
	size_t argc;
	const char *const *argv;     /* argc strings, then NULL */
	int64_t pid;                 /* -1: unknown */
	int exit_status;             /* 0-255; -1: killed by a signal, or unknown */
	int signal;                  /* the signal that ended the program, or 0 */
	double wall_seconds;         /* < 0: unknown */
	int64_t events;              /* events profiled; -1: unknown */
	/* Of the accesses profiled, those that arrived as loop summaries (each access once, not one
	 * event per record); -1: unknown (a profile written before the key existed). */
	int64_t summarized_accesses;
};

/*
 * One row of the `sites:` table.  Strings are "" and numbers 0 where the profile gives none: loop
 * and fields are written only when set (pass/README.md "The site table"), so profiles of binaries
 * built before they existed read the same.  New members go at the end.
 */
struct mn_site {
	uint32_t id;
	const char *kind;            /* load, store, pointer, alloc, ... (runtime/abi.h) */
	const char *function;
	const char *file;            /* "" without debug info */
	uint32_t line, column;
	const char *name;            /* callee, variable or type name */
	uint64_t type_size;
	uint32_t loop;               /* load, store: the innermost loop's site in its function;
				      * 0 outside every loop */
	const char *fields;          /* alloc, realloc, stack, global: the structure's layout,
				      * "Name/size:field@offset,..."; "" when unknown */
	const char *unit;            /* the shared library the site is in (the profile's
				      * `units:`); "" or NULL for the program */
};

/*
 * The `binary:` mapping: which instrumented build wrote the profile.  Two profiles of one binary
 * have the same site_count and site_table_hash; `mnemo merge` refuses others, and `mnemo-use`
 * matches sites by id only when its build's site table hashes the same.  Profiles written before
 * the key existed read as site_count 0 and hash "".
 */
struct mn_binary {
	uint32_t site_count;         /* the highest site id of the binary's table */
	const char *site_table_hash; /* FNV-1a 64 of the table blob, 16 lowercase hex digits */
};

/*
 * Loads and validates the profile at path.  Returns 0 and sets *pp, or returns -errno (the errno
 * of a failed open or read, -EINVAL for a file that is not a valid profile, -ENOMEM) and, when
 * errbuf is not NULL, writes one line saying why: "<path>:<line>:<col>: <what>" when a place in
 * the file is to blame, "<path>: <what>" otherwise, e.g.
 *   prog.mnemo.yaml:14:3: expected a mapping for 'sites'
 *   x.yaml: not a mnemo profile (format: 'foo', expected 'mnemo-profile/1')
 */
int mn_profile_open(struct mn_profile **pp, const char *path, char *errbuf, size_t errlen);
/* Frees everything the profile handed out.  NULL is fine. */
void mn_profile_close(struct mn_profile *p);

const char *mn_profile_path(const struct mn_profile *p);
/* The first document's top-level mapping. */
const struct mn_pnode *mn_profile_root(const struct mn_profile *p);
const struct mn_program *mn_profile_program(const struct mn_profile *p);
const struct mn_binary *mn_profile_binary(const struct mn_profile *p);
/* `complete:`; when false and reason is not NULL, *reason is `incomplete_reason` or "". */
bool mn_profile_complete(const struct mn_profile *p, const char **reason);

/* Sites, in increasing id order; mn_profile_site() returns NULL for an id the table lacks. */
size_t mn_profile_site_count(const struct mn_profile *p);
const struct mn_site *mn_profile_site_at(const struct mn_profile *p, size_t i);
const struct mn_site *mn_profile_site(const struct mn_profile *p, uint32_t id);

/* Module sections, in file order; mn_profile_module() returns NULL for a module the file lacks. */
size_t mn_profile_module_count(const struct mn_profile *p);
const char *mn_profile_module_name(const struct mn_profile *p, size_t i);
const struct mn_pnode *mn_profile_module_section(const struct mn_profile *p, size_t i);
const struct mn_pnode *mn_profile_module(const struct mn_profile *p, const char *name);

/*
 * Generic nodes.  Every function takes NULL and answers as for a missing node (kind NONE, length
 * 0, NULL, -EINVAL), so lookups chain: mn_pnode_get(mn_pnode_get(sec, "summary"), "loads").
 */
enum mn_pnode_kind mn_pnode_kind(const struct mn_pnode *n);
/* Items of a sequence, entries of a mapping, 0 for a scalar. */
size_t mn_pnode_len(const struct mn_pnode *n);
/* The i-th item of a sequence, or the i-th value of a mapping; NULL when i >= length. */
const struct mn_pnode *mn_pnode_at(const struct mn_pnode *n, size_t i);
/* The i-th key of a mapping as a node, or as a string (NULL when that key is not a scalar). */
const struct mn_pnode *mn_pnode_key_node(const struct mn_pnode *n, size_t i);
const char *mn_pnode_key(const struct mn_pnode *n, size_t i);
/* The value of the first entry of a mapping whose key is the scalar key; NULL when none. */
const struct mn_pnode *mn_pnode_get(const struct mn_pnode *n, const char *key);
/* A scalar's text (NUL-terminated; *len, when not NULL, gets its length); NULL for a collection. */
const char *mn_pnode_str(const struct mn_pnode *n, size_t *len);
/* A plain scalar `~`, `null`, `Null`, `NULL` or empty. */
bool mn_pnode_is_null(const struct mn_pnode *n);
/*
 * Typed scalars, YAML 1.2 core schema, unquoted only ("12" is a string): integers in decimal, 0x
 * hex or 0o octal; floats as strtod reads them plus .inf/-.inf/.nan; true/false.  Return 0 and set
 * *v, -EINVAL when the node is not such a scalar, -ERANGE when it does not fit.
 */
int mn_pnode_u64(const struct mn_pnode *n, uint64_t *v);
int mn_pnode_i64(const struct mn_pnode *n, int64_t *v);
int mn_pnode_f64(const struct mn_pnode *n, double *v);   /* integers are fine too */
int mn_pnode_bool(const struct mn_pnode *n, bool *v);
/* Where the node starts in the file, 1-based. */
unsigned mn_pnode_line(const struct mn_pnode *n);
unsigned mn_pnode_column(const struct mn_pnode *n);
/*
 * Writes "<path>:<line>:<col>: <what>" about node n of profile p ("<path>: <what>" when n is NULL)
 * into errbuf, for clients that report a section not matching its schema.  Returns -EINVAL.
 */
int mn_pnode_errorf(const struct mn_profile *p, const struct mn_pnode *n, char *errbuf,
		    size_t errlen, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Typed fields of a row (a mapping), for walking a module's tables: the value of `key` in map.
 * Return 0 and set *v; -ENOENT when the key is missing (*v untouched: a default stays), -EINVAL
 * when the value is not of the type (or out of range for the u32 form).  On either failure,
 * when errbuf is not NULL, one line names the place and the field:
 *   prog.mnemo.yaml:41:7: field 'count': expected an unsigned integer, found 'many'
 *   prog.mnemo.yaml:41:7: missing field 'count'
 * A missing map (NULL) is reported as a missing field of the profile.  mn_pfield_str() accepts
 * any scalar, null as "" included; mn_pfield_node() returns the value node or NULL (with the
 * message when errbuf is given).
 */
int mn_pfield_u64(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		  uint64_t *v, char *errbuf, size_t errlen);
int mn_pfield_u32(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		  uint32_t *v, char *errbuf, size_t errlen);
int mn_pfield_i64(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		  int64_t *v, char *errbuf, size_t errlen);
int mn_pfield_f64(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		  double *v, char *errbuf, size_t errlen);
int mn_pfield_bool(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		   bool *v, char *errbuf, size_t errlen);
int mn_pfield_str(const struct mn_profile *p, const struct mn_pnode *map, const char *key,
		  const char **v, char *errbuf, size_t errlen);
const struct mn_pnode *mn_pfield_node(const struct mn_profile *p, const struct mn_pnode *map,
				      const char *key, enum mn_pnode_kind kind, char *errbuf,
				      size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* MNEMO_PROFILE_H */
