/*
 * Section schemas: a module declares each table of its profile section once, as a C table of
 * field descriptors beside its handlers, and the backend writes, restores, validates, merges and
 * frees the section from it (issue 21; docs/internals.md "Section schemas").
 *
 * A schema describes a C struct, a row: its fields in the order the profile writes them, each
 * with its key, type, offset in the struct and reduction (how two rows of one key fold).  The
 * module's state is the section's top row; its tables are fields too, whose rows are described
 * by a schema of their own:
 *
 *	static const struct mn_field func_fields[] = {
 *		MN_FIELD("site", MN_FT_SITE, MN_NO_OFFSET, MN_R_KEY),   // the sitevec's index
 *		MN_FIELD("entries", MN_FT_U64, offsetof(struct func, entries), MN_R_SUM),
 *	};
 *	static const struct mn_schema funcs = MN_SCHEMA("functions", struct func, func_fields,
 *							.flow = true);
 *	static const struct mn_field top_fields[] = {
 *		MN_FIELD("lost_events", MN_FT_U64, offsetof(struct st, lost), MN_R_SUM,
 *			 .flags = MN_FF_OPT),
 *		MN_FIELD("functions", MN_FT_SITES, offsetof(struct st, funcs), MN_R_UNION,
 *			 .sub = &funcs),
 *	};
 *
 * writes `lost_events: 3` (only when not 0) and `functions:` as a block sequence of rows
 * `- {site: 5, entries: 3}`, by increasing site id.  mn_schema_emit() of a state restored by
 * mn_schema_restore() gives the section back byte for byte; mn_schema_merge() folds two states
 * so that the result does not depend on the order of the folds when every reduction is
 * commutative and associative (module.h, merge()).
 *
 * Derived fields (fractions, flags) are computed at emit from merged integers and never merged;
 * on restore they are checked: a derived value the file gives must be the one its row's other
 * fields make.
 */
#ifndef MNEMO_SCHEMA_H
#define MNEMO_SCHEMA_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "profile.h"
#include "sitevec.h"
#include "spans.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A growable array of fixed-size elements, for lists, maps and nested tables of a row. */
struct mn_vec {
	void *v;
	uint32_t n, cap;
};

/* Room for cap elements of elem bytes.  0 or -ENOMEM (then the vector is unchanged). */
int mn_vec_reserve(struct mn_vec *a, size_t elem, uint32_t cap);

/* A new zeroed element at the end, or NULL without memory. */
static inline void *mn_vec_push(struct mn_vec *a, size_t elem)
{
	char *e;

	if (__builtin_expect(a->n == a->cap, 0) &&
	    mn_vec_reserve(a, elem, a->cap ? 2 * a->cap : 4))
		return NULL;
	e = (char *)a->v + (size_t)a->n++ * elem;
	memset(e, 0, elem);
	return e;
}

static inline void mn_vec_free(struct mn_vec *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

/*
 * Containers with their insertion logic, for small per-row tables.  A bounded set of 64-bit
 * values: at most cap of them, then only "capped" (what restore and merge know as MN_R_SET).
 * mn_set64_add() returns 1 when v is new and added; 0 when it was there, or the set is capped;
 * -ENOSPC when v is new and the set held cap values: it is capped now; -ENOMEM.
 */
struct mn_set64 {
	struct mn_vec v;          /* uint64_t; its first member, so a LIST field can name the set */
	bool capped;
};

static inline int mn_set64_add(struct mn_set64 *s, uint64_t v, uint32_t cap)
{
	uint64_t *p = (uint64_t *)s->v.v;

	if (s->capped)
		return 0;
	for (uint32_t i = 0; i < s->v.n; i++)
		if (p[i] == v)
			return 0;
	if (s->v.n >= cap) {
		s->capped = true;
		return -ENOSPC;
	}
	if (!(p = (uint64_t *)mn_vec_push(&s->v, sizeof(*p))))
		return -ENOMEM;
	*p = v;
	return 1;
}

/* Rows of bounded counters, fields key (MN_R_KEY) and count (MN_R_SUM): the .sub of a KV field
 * `{key: count, ...}` (.arg 1), in increasing key order. */
extern const struct mn_schema mn_count64_rows;

/* Bounded counters: key counted c more times; -ENOSPC when it is new and cap keys are there
 * already (nothing counted), -ENOMEM; else 0. */
struct mn_count64 {
	uint64_t key, count;
};

static inline int mn_count64_add(struct mn_vec *a, uint64_t key, uint64_t c, uint32_t cap)
{
	struct mn_count64 *p = (struct mn_count64 *)a->v;

	for (uint32_t i = 0; i < a->n; i++)
		if (p[i].key == key) {
			p[i].count += c;
			return 0;
		}
	if (a->n >= cap)
		return -ENOSPC;
	if (!(p = (struct mn_count64 *)mn_vec_push(a, sizeof(*p))))
		return -ENOMEM;
	p->key = key;
	p->count = c;
	return 0;
}

/* Entry counts of functions (or of any sites) by site id: a struct mn_sitevec of uint64_t, the
 * .sub of its MN_FT_SITES field, written `- {site: 5, entries: 3}`. */
extern const struct mn_schema mn_entries_rows;

/* Counts an entry of site in v; 1 when it found no memory (the caller's loss), else 0. */
static inline unsigned mn_entries_add(struct mn_sitevec *v, uint32_t site)
{
	uint64_t *e = (uint64_t *)mn_sitevec_get(v, site);

	if (e)
		++*e;
	return !e;
}

/*
 * Space-Saving (Metwally et al., 2005): counters of the most frequent keys, at most slots of them,
 * in a vector of struct mn_topk.  While at most slots keys came the counts are exact; beyond, a
 * new key evicts the smallest counter and inherits its count as err, so count - err is a lower
 * bound on the key's true count.  Adding c at once is adding 1 c times.  Merged vectors (the
 * union of runs' counters, counts and errs added) may hold more than slots; they take no adds.
 */
struct mn_topk {
	int64_t key;
	uint64_t count, err;
};

/* Counts key c times.  0, or -ENOMEM (nothing counted). */
static inline int mn_topk_add(struct mn_vec *a, int64_t key, uint64_t c, uint32_t slots)
{
	struct mn_topk *p = (struct mn_topk *)a->v, *min = NULL;

	for (uint32_t i = 0; i < a->n; i++) {
		if (p[i].key == key) {
			p[i].count += c;
			return 0;
		}
		if (!min || p[i].count < min->count)
			min = &p[i];
	}
	if (a->n >= slots) {
		min->err = min->count;
		min->key = key;
		min->count += c;
		return 0;
	}
	if (!(p = (struct mn_topk *)mn_vec_push(a, sizeof(*p))))
		return -ENOMEM;
	p->key = key;
	p->count = c;
	return 0;
}

/* The order of counters by lower bound (count - err), descending, then by key: a schema's order. */
int mn_topk_order(const void *a, const void *b);
/* Rows of counters in that order, fields key, count (MN_R_SUM) and err (MN_R_SUM): the .sub of a
 * KV field, whose .arg 1 writes `{key: count, ...}` and 2 `{key: err, ...}`. */
extern const struct mn_schema mn_topk_rows;
/* The first counter in that order, NULL when none; *all: the sum of the counts. */
const struct mn_topk *mn_topk_best(const struct mn_vec *a, uint64_t *all);

enum mn_ftype {
	MN_FT_U64,     /* uint64_t */
	MN_FT_U32,     /* uint32_t */
	MN_FT_I64,     /* int64_t */
	MN_FT_F64,     /* double, written in the shortest form that reads back to the same bits */
	MN_FT_BOOL,    /* bool */
	MN_FT_SITE,    /* uint32_t, a site id: the profile's `sites:` table lists it */
	MN_FT_ENUM,    /* uint8_t, the index of the value among .choices, "load|store" */
	MN_FT_LIST,    /* struct mn_vec of .elem (U64 or I64): `[1, 2]` */
	MN_FT_KV,      /* struct mn_vec of .sub rows: `{key: value, ...}`, the key .sub's first
			* field and the value its field number .arg */
	MN_FT_ROWS,    /* struct mn_vec of .sub rows: a sequence of rows */
	MN_FT_SITES,   /* struct mn_sitevec (sitevec.h) of .sub rows by site id: a sequence of
			* rows; the sub-schema's first field is the MN_FT_SITE key, whose offset is
			* MN_NO_OFFSET when the row does not hold its id.  With .choices a site
			* kind, every site of that kind in the run's site table (the const struct
			* mn_run * at .arg of the top row) has a row when written, marked as
			* restore() marks rows (MN_FF_HIDDEN): a program's every loop, run or not */
	MN_FT_MAP,     /* one mapping: the .sub row at .offset (offset 0 and .sub's fields at
			* the row's own offsets for members of the row itself), flow when .sub's
			* flow says; merged and released by .sub's fields */
	MN_FT_CHOICE,  /* unsigned, the index of the value among .choices, as MN_FT_ENUM: a module
			* setting's MN_OPT_CHOICE (module.h) */
	MN_FT_ROWMAP,  /* struct mn_rows (map.h) of .sub rows: a sequence of rows.  A row is the
			* map's key words followed by its struct mn_row (mn_row_key()): .sub is
			* an MN_ROWMAP_SCHEMA(), key fields at their offsets in the key words,
			* the others at MN_ROWMAP_ROW(count), (min), (max).
			* restore() refuses a row whose count is 0 (map.h: a row is counted) */
	MN_FT_CTX,     /* uint32_t, a context id (context.h) of the struct mn_ctx * at offset
			* .arg of the top row: written as its sites, outermost first ([12, 40]),
			* restored by interning (at most the manager's max_depth frames); in
			* tables ordered by rank (ctxrank.h), so that the order does not depend on
			* the run; merged from a restored state by mn_ctx_translate() (ids are per
			* run).  ROWMAP keys only */
};

/* How the fields of two rows of one key fold (merge), and what restore() checks. */
enum mn_reduce {
	MN_R_NONE = 0,  /* not merged: derived fields, views */
	MN_R_KEY,       /* part of the row's key: equal in rows that fold */
	MN_R_SUM,
	MN_R_MIN,
	MN_R_MAX,       /* of booleans: or */
	MN_R_SAME,      /* a setting of the run: mn_schema_merge() fails when the two differ */
	MN_R_CONST,     /* a constant of the module: init() sets it, restore() refuses another */
	MN_R_SET,       /* LIST of a struct mn_set64: the union, at most .arg values; one more and
			 * the set is capped (then the values no longer count) */
	MN_R_UNION,     /* KV, ROWS, SITES: rows of a key in both fold by .sub's reductions, the
			 * others are added */
	MN_R_FOLD,      /* .fold(into, from) of the field's own */
};

/* A ROWMAP row's member m of struct mn_row (count, min, max), as a field's offset. */
#define MN_ROWMAP_ROW(m) (MN_ROWS_KEY_WORDS * 8 + offsetof(struct mn_row, m))
/* The rows of a ROWMAP: its key words, then its struct mn_row. */
#define MN_ROWMAP_SCHEMA(namestr, fieldarray, ...)                                              \
	{ .name = (namestr), .size = MN_ROWS_KEY_WORDS * 8 + sizeof(struct mn_row),           \
	  .fields = (fieldarray), .nfields = sizeof(fieldarray) / sizeof((fieldarray)[0]),       \
	  __VA_ARGS__ }

/* Flags of a field. */
#define MN_FF_OPT        0x001u  /* written only when not 0 (a list or table: not empty) */
#define MN_FF_DERIVED    0x002u  /* written as .derive computes it; checked by restore() */
#define MN_FF_VIEW       0x004u  /* another field's data (same offset), written another way:
				  * not merged, not freed */
#define MN_FF_ONE        0x008u  /* LIST: written as its one value, only when it has one */
#define MN_FF_MANY       0x010u  /* LIST: written only when it has two values or more */
#define MN_FF_SORTED     0x020u  /* LIST: written ascending; restore() wants it strictly so */
#define MN_FF_NONZERO    0x040u  /* KV: pairs whose value is 0 are left out; a SITES table's
				  * key: restore() refuses site 0 */
#define MN_FF_ATTACH     0x080u  /* KV view: each key must be one the field it views gave */
#define MN_FF_FLOW       0x100u  /* LIST, KV, ROWS, SITES: the sequence on one line */
#define MN_FF_NULL       0x200u  /* written `null` when the bool at .aux is false */
#define MN_FF_CONTEXT    0x400u  /* any field: what every worker of a run counts alike
				  * (context events): merged only from restored states */
#define MN_FF_HIDDEN     0x800u  /* state that is not in the profile: neither written nor read
				  * (restore() sets it to .arg when not 0: a mark that the row
				  * was listed), merged by its reduction */
#define MN_FF_REQUIRED  0x1000u  /* with .when: restore() wants the field when .when of the
				  * row read so far says so, and ignores it otherwise */
#define MN_FF_PRESENT   0x2000u  /* written only when the bool at .aux is true; restore() sets
				  * it to whether the field is there */
#define MN_FF_IDS       0x4000u  /* SITES: written as the flow list of the ids of its marked
				  * rows, those with a MN_FF_HIDDEN field of .arg not 0 set;
				  * restore() clears the marks of every row (init() may have set
				  * some), then makes a row for each id and marks it.  Usually a
				  * VIEW of a table written too */
#define MN_FF_SPANS     0x8000u  /* ROWMAP: the rows are counted once per access, and an access
				  * that spans workers counted by each: the struct mn_spans
				  * (spans.h) at .aux of the same row logs which; merge() takes
				  * back a count per access both sides logged */

/* A field of no member: a SITES table's key (see MN_FT_SITES), or with MN_R_CONST a constant of
 * the module, .arg, written as it is and refused by restore() when it differs. */
#define MN_NO_OFFSET ((size_t)-1)

struct mn_schema;

struct mn_field {
	const char *key;
	enum mn_ftype type;
	size_t offset;                  /* in the row; MN_NO_OFFSET: see MN_FT_SITES */
	enum mn_reduce reduce;
	unsigned flags;                 /* MN_FF_* */
	/* KV, ROWS, SITES: their rows.  A field whose .put writes a table (a sequence of rows, or
	 * a mapping of rows by name) may name the schema of those rows here, for readers alone
	 * (the weight below): its fields then need no member (MN_NO_OFFSET), and nothing but
	 * readers looks at it. */
	const struct mn_schema *sub;
	enum mn_ftype elem;             /* LIST: U64 or I64 */
	uint32_t arg;                   /* SET: the most values; KV: the value's field number */
	size_t aux;                     /* NULL: offset of the has bool */
	const char *choices;            /* ENUM: "load|store" */
	/* LIST, U64: its numbers are addresses in rows whose bool field of this key is true, for
	 * readers: `mnemo report` prints them in hex (value-pattern's "pointer"). */
	const char *address_if;
	/* LIST, U64: its numbers are the bits of the values of the load or store the row's field of
	 * this key names (a site), for readers: `mnemo report` prints them as floating point when the
	 * site table names the site's value "double" or "float" (value-pattern's "site"). */
	const char *bits_of;
	/* Optional: the field is written only when this says so (restore() reads it if there). */
	bool (*when)(const struct mn_field *f, const void *row);
	/* DERIVED: the value, of the field's type, into out (a uint64_t, int64_t, double or
	 * bool), from the row (its member at .offset, for the ones below). */
	void (*derive)(const struct mn_field *f, const void *row, void *out);
	/* FOLD: folds from's field into into's; 0 or -errno. */
	int (*fold)(void *into, const void *from);
	/* Optional, for a value no type above describes: put writes it after the field's key, take
	 * reads node n back into row.  0 or -errno; take's -EINVAL with err filled as restore()'s
	 * (mn_pnode_errorf()).  Such a field is merged by its reduction (NONE or FOLD). */
	int (*put)(const struct mn_field *f, const void *row, struct mn_prof *p);
	int (*take)(const struct mn_field *f, void *row, const struct mn_profile *prof,
		    const struct mn_pnode *n, char *err, size_t errlen);
};

struct mn_schema {
	const char *name;               /* for messages: "value-pattern", "entries" */
	size_t size;                    /* bytes of a row (ROWS, KV) */
	const struct mn_field *fields;
	unsigned nfields;
	bool flow;                      /* each row on one line: `- {site: 3, ...}` */
	/* Optional: the order rows are written in (a total order), or the key of the field by
	 * which they are, descending, then by their key; by key when neither. */
	int (*order)(const void *a, const void *b);
	const char *desc;
	/* Optional: rows not written (mn_schema_top() gives the section's top row). */
	bool (*skip)(const void *row);
	/* Optional: the fields by which rows are ordered, by their keys, NULL-terminated (fields
	 * of type CTX by rank); then by key fields.  Ahead of .desc and key order; .order wins. */
	const char *const *by;
	/* Optional: what restore() checks across a row's fields, or across tables (top is the
	 * section's top row, the state): NULL when fine, else what is wrong, for the message. */
	const char *(*check)(const void *top, const void *row, uint64_t key);
	/* The key of the numeric field that weighs a row (its accesses, cost, count), for readers:
	 * `mnemo report` lists a table of these rows by it, largest first.  Every schema of rows
	 * written as a table names one, whatever order .order, .desc or .by write them in
	 * (tests/tools/test_report_weights.c holds every module to it). */
	const char *weight;
};

/*
 * What fields derive and when they are written, for the containers above: a derived field or a
 * predicate names its container with the field's .offset.
 *   mn_set64_single   bool: the set at .offset has exactly one value and is not capped
 *   mn_set64_count    u64: its values, or .arg once capped
 *   mn_set64_open     when: it is not capped
 *   mn_vec_any        when: the vector at .offset is not empty
 *   mn_topk_key       i64: the key of the first counter of the mn_topk vector at .offset
 *   mn_topk_share     f64: its lower bound (count - err) over the sum of all counts
 *   mn_topk_over      bool: that share is .arg percent or more (in integers)
 */
void mn_set64_single(const struct mn_field *f, const void *row, void *out);
void mn_set64_count(const struct mn_field *f, const void *row, void *out);
bool mn_set64_open(const struct mn_field *f, const void *row);
bool mn_vec_any(const struct mn_field *f, const void *row);
bool mn_flag(const struct mn_field *f, const void *row);   /* when: the bool at .aux is true */
bool mn_top_flag(const struct mn_field *f, const void *row);   /* the top row's, at .aux */
void mn_topk_key(const struct mn_field *f, const void *row, void *out);
void mn_topk_share(const struct mn_field *f, const void *row, void *out);
void mn_topk_over(const struct mn_field *f, const void *row, void *out);

/* The index of s among choices "a|b|c" (an MN_FT_ENUM's), or -1. */
int mn_choice_index(const char *choices, const char *s);

/* A field: MN_FIELD("executions", MN_FT_U64, offsetof(struct site, executions), MN_R_SUM),
 * other members after them: .flags = MN_FF_OPT, ... */
#define MN_FIELD(k, t, off, r, ...) \
	{ .key = (k), .type = (t), .offset = (off), .reduce = (r), __VA_ARGS__ }

/* A schema of rows of type named name, fields in fieldarray; other members after them. */
#define MN_SCHEMA(namestr, type, fieldarray, ...)                               \
	{ .name = (namestr), .size = sizeof(type), .fields = (fieldarray),       \
	  .nfields = sizeof(fieldarray) / sizeof((fieldarray)[0]), __VA_ARGS__ }

/* The top row of the section being written, restored or merged (merge: into), for callbacks
 * (.when, .skip, .put, .take, .check) that need the state; NULL outside those. */
const void *mn_schema_top(void);

/* Writes the section whose top row is st, as one block mapping.  0 or -errno (-ENOMEM). */
int mn_schema_emit(const struct mn_schema *s, const void *st, struct mn_prof *p);

/*
 * Fills st (fresh from init()) from sec, a section emit() wrote.  0; -EINVAL for a section not
 * following the schema, with one line in err naming the file, line, column and field:
 *   prog.mnemo.yaml:9:43: field 'executions': expected an unsigned integer, found 'many'
 * or -ENOMEM.  On failure st holds part of the section: finalize it as usual.
 */
int mn_schema_restore(const struct mn_schema *s, void *st, const struct mn_profile *prof,
		      const struct mn_pnode *sec, char *err, size_t errlen);

/*
 * Folds the top row from into into by the fields' reductions; from is released right after (rows
 * may have moved into into).  restored: from was made by restore() from another run's profile,
 * not by a worker of into's run (MN_FF_CONTEXT).  0; -EINVAL when a MN_R_SAME setting differs
 * (into keeps its own); -ENOMEM (into then holds part of from).
 */
int mn_schema_merge(const struct mn_schema *s, void *into, void *from, bool restored);

/* Frees every list and table the fields of row hold (not the row). */
void mn_schema_release(const struct mn_schema *s, void *row);

/*
 * A module's fini, merge, restore and emit (module.h) when its state, of type T, is the top row
 * of schema S: <P>_fini releases it, <P>_restore sets the state's bool member R and restores,
 * <P>_merge folds (R telling a restored run from a worker) and counts a failed fold in the
 * state's integer member L (the profile then says incomplete), <P>_write writes it (an emit()
 * with work of its own to do first calls mn_schema_emit() itself).
 */
#define MN_SCHEMA_CALLBACKS(P, S, T, R, L)                                                      \
	static __attribute__((unused)) int P##_write(void *st, struct mn_prof *p)               \
	{                                                                                       \
		return mn_schema_emit(&(S), st, p);                                             \
	}                                                                                       \
	static void P##_fini(void *st)                                                          \
	{                                                                                       \
		mn_schema_release(&(S), st);                                                    \
	}                                                                                       \
	static void P##_merge(void *into, void *from)                                           \
	{                                                                                       \
		if (mn_schema_merge(&(S), into, from, ((T *)from)->R))                          \
			((T *)into)->L++;                                                       \
	}                                                                                       \
	static MN_SCHEMA_RESTORE(P##_restore, S, T, R)

/* A module's restore() named F: sets the state's bool member R and restores it by schema S. */
#define MN_SCHEMA_RESTORE(F, S, T, R)                                                           \
	int F(void *st, const struct mn_profile *prof, const struct mn_pnode *sec, char *err,   \
	      size_t errlen)                                                                    \
	{                                                                                       \
		((T *)st)->R = true;                                                            \
		return mn_schema_restore(&(S), st, prof, sec, err, errlen);                     \
	}

#ifdef __cplusplus
}
#endif

#endif /* MNEMO_SCHEMA_H */
