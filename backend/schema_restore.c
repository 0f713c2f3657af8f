/*
 * Section schemas (schema.h): restore -- a section a module's emit wrote, read back into a state
 * fresh from init() and checked as it is read (schema.c: emit, merge, release).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"
#include "sitevec.h"

/* Where restore() reads one profile, and where it says what is wrong. */
struct rd {
	const struct mn_profile *prof;
	char *err;
	size_t errlen;
	const void *top;
};

#define FAIL(r, node, ...) mn_pnode_errorf((r)->prof, (node), (r)->err, (r)->errlen, __VA_ARGS__)

/* A scalar node of type t (ENUM by f's choices) into *v. */
static int scalar(struct rd *r, const struct mn_field *f, enum mn_ftype t,
		  const struct mn_pnode *n, union val *v)
{
	const char *s = mn_pnode_str(n, NULL), *what = "an unsigned integer";
	int e = -EINVAL;

	switch (t) {
	case MN_FT_I64: e = mn_pnode_i64(n, &v->i); what = "an integer"; break;
	case MN_FT_F64: e = mn_pnode_f64(n, &v->f); what = "a number"; break;
	case MN_FT_BOOL: e = mn_pnode_bool(n, &v->b); what = "true or false"; break;
	case MN_FT_ENUM:
	case MN_FT_CHOICE:
		v->i = s ? mn_choice_index(f->choices, s) : -1;
		e = v->i < 0 ? -EINVAL : 0;
		break;
	default:
		e = mn_pnode_u64(n, &v->u);
		if (!e && t != MN_FT_U64 && v->u > UINT32_MAX)
			e = -ERANGE;
		break;
	}
	if (!e)
		return 0;
	if (t == MN_FT_ENUM || t == MN_FT_CHOICE)
		return FAIL(r, n, "field '%s': expected one of %s, found '%.40s'", f->key,
			    f->choices, s ? s : "");
	return FAIL(r, n, "field '%s': expected %s, found '%.40s'", f->key, what, s ? s : "");
}

/* The node of field f in map, NULL when absent: an error then unless the field may be. */
static const struct mn_pnode *node_of(struct rd *r, const struct mn_field *f,
				      const struct mn_pnode *map, bool need, int *e)
{
	const struct mn_pnode *n = mn_pnode_get(map, f->key);
	bool optional = !need && (f->when || (f->flags & (MN_FF_OPT | MN_FF_ONE | MN_FF_MANY |
								 MN_FF_DERIVED | MN_FF_PRESENT)));

	*e = 0;
	if (!n && !optional)
		*e = FAIL(r, map, "missing field '%s'", f->key);
	return n;
}

static int restore_row(struct rd *r, const struct mn_schema *s, void *row,
		       const struct mn_pnode *map, uint64_t id);

static int restore_list(struct rd *r, const struct mn_field *f, struct mn_vec *a,
			const struct mn_pnode *n)
{
	bool one = f->flags & MN_FF_ONE;
	size_t len = one ? 1 : mn_pnode_len(n), first = a->n;
	union val v;
	int e;

	if (!one && mn_pnode_kind(n) != MN_PNODE_SEQ)
		return FAIL(r, n, "field '%s': expected a sequence", f->key);
	for (size_t i = 0; i < len; i++) {
		const struct mn_pnode *x = one ? n : mn_pnode_at(n, i);
		void *slot;

		if ((e = scalar(r, f, f->elem, x, &v)))
			return e;
		if (f->reduce == MN_R_SET && a->n >= f->arg)
			return FAIL(r, x, "field '%s': more than %u values", f->key, f->arg);
		if ((f->flags & MN_FF_SORTED) && a->n > first &&
		    cmp(f->elem, get(f->elem, vec_at(a, 8, a->n - 1)), v) >= 0)
			return FAIL(r, x, "field '%s': not in ascending order, or repeated",
				    f->key);
		if (!(slot = mn_vec_push(a, 8)))
			return -ENOMEM;
		set(f->elem, slot, v);
	}
	return 0;
}

/* The field that a view views: the one before it at the same offset that is no view. */
static const struct mn_field *viewed(const struct mn_schema *s, const struct mn_field *f)
{
	for (const struct mn_field *g = s->fields; g < f; g++)
		if (g->offset == f->offset && !(g->flags & MN_FF_VIEW))
			return g;
	return f;
}

static int restore_kv(struct rd *r, const struct mn_schema *outer, const struct mn_field *f,
		      struct mn_vec *a, const struct mn_pnode *n)
{
	const struct mn_schema *s = f->sub;
	const struct mn_field *k = &s->fields[0], *v = &s->fields[f->arg];
	char buf[64];
	int e;

	if (mn_pnode_kind(n) != MN_PNODE_MAP)
		return FAIL(r, n, "field '%s': expected a mapping", f->key);
	for (size_t i = 0; i < mn_pnode_len(n); i++) {
		const struct mn_pnode *kn = mn_pnode_key_node(n, i);
		union val kv, vv;
		void *row;

		if ((e = scalar(r, f, k->type, kn, &kv)) ||
		    (e = scalar(r, f, v->type, mn_pnode_at(n, i), &vv)))
			return e;
		if (!(row = malloc(s->size)))
			return -ENOMEM;
		memset(row, 0, s->size);
		set(k->type, at(row, k->offset), kv);
		void *t = mn_schema_find_row(s, a, row, NULL);

		free(row);
		if (f->flags & MN_FF_ATTACH) {
			if (!t)
				return FAIL(r, kn, "field '%s': key %s is not in '%s'", f->key,
					    fmt(k->type, kv, buf, sizeof(buf)),
					    viewed(outer, f)->key);
		} else if (t) {
			return FAIL(r, kn, "field '%s': key %s is listed twice", f->key,
				    fmt(k->type, kv, buf, sizeof(buf)));
		} else if (!(t = mn_vec_push(a, s->size))) {
			return -ENOMEM;
		}
		set(k->type, at(t, k->offset), kv);
		set(v->type, at(t, v->offset), vv);
	}
	return 0;
}

/* Whether site id was listed before in this table (seen: bytes by id, zeroed up to n); marks it.
 * 1, 0, or -ENOMEM.  Rows of a table may exist before its restore (init() made them). */
static int seen_before(struct mn_vec *seen, uint32_t id)
{
	uint8_t *b;

	if (id >= seen->n) {
		uint32_t n = id >= UINT32_MAX / 2 ? UINT32_MAX : 2 * id + 64;

		if (mn_vec_reserve(seen, 1, n))
			return -ENOMEM;
		memset((char *)seen->v + seen->n, 0, n - seen->n);
		seen->n = n;
	}
	b = (uint8_t *)seen->v + id;
	if (*b)
		return 1;
	*b = 1;
	return 0;
}

/* A row of a ROWS or SITES table: added, at the end or for its site. */
static int restore_item(struct rd *r, const struct mn_field *f, void *field,
			const struct mn_pnode *x, struct mn_vec *seen)
{
	const struct mn_schema *s = f->sub;
	uint32_t id = 0;
	void *row;
	int e;

	if (mn_pnode_kind(x) != MN_PNODE_MAP)
		return FAIL(r, x, "%s: expected a mapping for each row", f->key);
	if (f->type == MN_FT_ROWS) {
		if (!(row = mn_vec_push(field, s->size)))
			return -ENOMEM;
	} else {
		if ((e = mn_pfield_u32(r->prof, x, s->fields[0].key, &id, r->err, r->errlen)))
			return e == -ENOENT ? -EINVAL : e;
		if (!id && (s->fields[0].flags & MN_FF_NONZERO))
			return FAIL(r, mn_pnode_get(x, s->fields[0].key),
				    "field '%s': expected a site id, not 0", s->fields[0].key);
		if ((e = seen_before(seen, id)) < 0)
			return e;
		if (e)
			return FAIL(r, mn_pnode_get(x, s->fields[0].key),
				    "field '%s': site %u is listed twice", s->fields[0].key, id);
		if (!(row = mn_sitevec_get(field, id)))
			return -ENOMEM;
	}
	if ((e = restore_row(r, s, row, x, f->type == MN_FT_ROWS ? NO_ID : id)))
		return e;
	if (f->type == MN_FT_ROWS && mn_schema_keyed(s) && mn_schema_find_row(s, field, row, row))
		return FAIL(r, x, "%s: two rows with the same key", f->key);
	return 0;
}

static int restore_rows(struct rd *r, const struct mn_field *f, void *field,
			const struct mn_pnode *n)
{
	struct mn_vec seen = { 0 };
	int e = 0;

	if (mn_pnode_kind(n) != MN_PNODE_SEQ)
		return FAIL(r, n, "field '%s': expected a sequence", f->key);
	for (size_t i = 0; i < mn_pnode_len(n) && !e; i++)
		e = restore_item(r, f, field, mn_pnode_at(n, i), &seen);
	mn_vec_free(&seen);
	return e;
}

/* Every row of an IDS table unmarked: the file's list is the whole of it. */
static void unmark(const struct mn_schema *s, struct mn_sitevec *sv)
{
	for (size_t id = 0; id < sv->n; id++)
		for (unsigned i = 0; sv->rec[id] && i < s->nfields; i++)
			if ((s->fields[i].flags & MN_FF_HIDDEN) && s->fields[i].arg)
				set(s->fields[i].type, at(sv->rec[id], s->fields[i].offset),
				    (union val){ .u = 0 });
}

/* An IDS table: `[3, 7]`, a row made and marked for each site id. */
static int restore_ids(struct rd *r, const struct mn_field *f, struct mn_sitevec *sv,
		       const struct mn_pnode *n)
{
	const char *why;
	void *row;

	if (mn_pnode_kind(n) != MN_PNODE_SEQ)
		return FAIL(r, n, "field '%s': expected a sequence", f->key);
	for (size_t i = 0; i < mn_pnode_len(n); i++) {
		uint64_t id;

		if (mn_pnode_u64(mn_pnode_at(n, i), &id) || !id || id > UINT32_MAX)
			return FAIL(r, mn_pnode_at(n, i), "field '%s': expected a site id", f->key);
		if (!(row = mn_sitevec_get(sv, (uint32_t)id)))
			return -ENOMEM;
		mn_schema_mark(f->sub, row);
		if (f->sub->check && (why = f->sub->check(r->top, row, id)))
			return FAIL(r, mn_pnode_at(n, i), "%s", why);
	}
	return 0;
}

/* The count of a ROWMAP row's view (1 when no field is the count). */
static uint64_t view_of_count(const struct mn_schema *s, const void *row)
{
	for (unsigned i = 0; i < s->nfields; i++)
		if (s->fields[i].offset == MN_ROWMAP_ROW(count))
			return *(const uint64_t *)at(row, s->fields[i].offset);
	return 1;
}

/* The identity of MIN for fields a row does not give (a row map's new row has no values). */
static void min_identity(const struct mn_schema *s, void *row)
{
	for (unsigned i = 0; i < s->nfields; i++) {
		const struct mn_field *f = &s->fields[i];

		if (f->reduce == MN_R_MIN)
			set(f->type, at(row, f->offset), f->type == MN_FT_F64 ?
			    (union val){ .f = INFINITY } : f->type == MN_FT_I64 ?
			    (union val){ .i = INT64_MAX } : (union val){ .u = UINT64_MAX });
	}
}

/* A ROWMAP's rows: each read into a scratch row, then folded into the row of its key (a key
 * given twice adds, as merge would). */
static int restore_rowmap(struct rd *r, const struct mn_field *f, struct mn_rows *rows,
			  const struct mn_pnode *n)
{
	const struct mn_schema *s = f->sub;
	const struct mg m = { 0 };
	void *tmp;
	int e = 0;

	if (mn_pnode_kind(n) != MN_PNODE_SEQ)
		return FAIL(r, n, "field '%s': expected a sequence", f->key);
	if (!(tmp = malloc(s->size)))
		return -ENOMEM;
	for (size_t i = 0; i < mn_pnode_len(n) && !e; i++) {
		const struct mn_pnode *x = mn_pnode_at(n, i);
		struct mn_row *row;

		memset(tmp, 0, s->size);
		min_identity(s, tmp);
		if (mn_pnode_kind(x) != MN_PNODE_MAP)
			e = FAIL(r, x, "%s: expected a mapping for each row", f->key);
		else if (!(e = restore_row(r, s, tmp, x, NO_ID)) && !view_of_count(s, tmp))
			e = FAIL(r, x, "%s: a row counts at least 1", f->key);
		else if (!e)
			e = (row = mn_rows_get(rows, tmp)) ? mn_schema_merge_row(s, view_of(row), tmp, &m) :
							     -ENOMEM;
	}
	free(tmp);
	return e;
}

/* A CTX field: its sites, outermost first, interned into an id of the top row's manager. */
static int restore_ctx(struct rd *r, const struct mn_field *f, uint32_t *id,
		       const struct mn_pnode *n)
{
	uint32_t t = 0;

	if (mn_pnode_kind(n) != MN_PNODE_SEQ)
		return FAIL(r, n, "field '%s': expected a sequence", f->key);
	if (mn_pnode_len(n) > ctx_of(f, r->top)->max_depth)
		return FAIL(r, n, "field '%s': more than %u frames", f->key,
			    ctx_of(f, r->top)->max_depth);
	for (size_t i = 0; i < mn_pnode_len(n); i++) {
		uint64_t site;

		if (mn_pnode_u64(mn_pnode_at(n, i), &site) || !site || site > UINT32_MAX)
			return FAIL(r, mn_pnode_at(n, i), "field '%s': expected a site id", f->key);
		t = mn_ctx_intern(ctx_of(f, r->top), t, (uint32_t)site);
	}
	*id = t;
	return 0;
}

/* A constant of no member (MN_NO_OFFSET): the file's must be .arg. */
static int restore_const(struct rd *r, const struct mn_schema *s, const struct mn_field *f,
			 const struct mn_pnode *map)
{
	const struct mn_pnode *n;
	char b1[64], b2[64];
	union val v;
	int e;

	if (!(n = node_of(r, f, map, false, &e)))
		return e;
	if ((e = scalar(r, f, f->type, n, &v)))
		return e;
	if (cmp(f->type, v, (union val){ .u = f->arg }))
		return FAIL(r, n, "field '%s': %s, but this %s's is %s", f->key,
			    fmt(f->type, v, b1, sizeof(b1)), s->name,
			    fmt(f->type, (union val){ .u = f->arg }, b2, sizeof(b2)));
	return 0;
}

static int restore_field(struct rd *r, const struct mn_schema *s, const struct mn_field *f,
			 void *row, const struct mn_pnode *map, uint64_t id)
{
	const struct mn_pnode *n;
	char b1[64], b2[64];
	union val v = { 0 };
	bool need = false;
	int e;

	if (f->flags & MN_FF_HIDDEN)
		return 0;   /* mn_schema_mark() */
	if (f->offset == MN_NO_OFFSET && f->reduce == MN_R_CONST)
		return restore_const(r, s, f, map);
	if (f->offset == MN_NO_OFFSET || (f->flags & MN_FF_DERIVED))
		return 0;
	if (f->type == MN_FT_SITE && f->reduce == MN_R_KEY && s->fields == f && id != NO_ID) {
		set(f->type, at(row, f->offset), (union val){ .u = id });   /* the table's key */
		return 0;
	}
	if (f->flags & MN_FF_REQUIRED) {
		if (!(need = f->when(f, row)))
			return 0;
	}
	if (f->flags & MN_FF_PRESENT)
		*(bool *)at(row, f->aux) = mn_pnode_get(map, f->key) != NULL;
	if (f->flags & MN_FF_IDS)
		unmark(f->sub, at(row, f->offset));
	if (!(n = node_of(r, f, map, need, &e)))
		return e;
	if (f->take)
		return f->take(f, row, r->prof, n, r->err, r->errlen);
	switch (f->type) {
	case MN_FT_CTX: return restore_ctx(r, f, at(row, f->offset), n);
	case MN_FT_ROWMAP: return restore_rowmap(r, f, at(row, f->offset), n);
	case MN_FT_SITES:
		if (f->flags & MN_FF_IDS)
			return restore_ids(r, f, at(row, f->offset), n);
		return restore_rows(r, f, at(row, f->offset), n);
	case MN_FT_LIST: return restore_list(r, f, at(row, f->offset), n);
	case MN_FT_KV: return restore_kv(r, s, f, at(row, f->offset), n);
	case MN_FT_ROWS: return restore_rows(r, f, at(row, f->offset), n);
	case MN_FT_MAP:
		if (mn_pnode_kind(n) != MN_PNODE_MAP)
			return FAIL(r, n, "field '%s': expected a mapping", f->key);
		return restore_row(r, f->sub, at(row, f->offset), n, NO_ID);
	default: break;
	}
	if ((f->flags & MN_FF_NULL) && mn_pnode_is_null(n))
		return 0;   /* the has bool stays false */
	if ((e = scalar(r, f, f->type, n, &v)))
		return e;
	if (f->flags & MN_FF_NULL)
		*(bool *)at(row, f->aux) = true;
	if (f->reduce == MN_R_CONST && cmp(f->type, v, get(f->type, at(row, f->offset))))
		return FAIL(r, n, "field '%s': %s, but this %s's is %s", f->key,
			    fmt(f->type, v, b1, sizeof(b1)), r->top == row ? s->name : "module",
			    fmt(f->type, get(f->type, at(row, f->offset)), b2, sizeof(b2)));
	set(f->type, at(row, f->offset), v);
	return 0;
}

/* A derived value the file gives must be the one the row's other fields make. */
static int check_derived(struct rd *r, const struct mn_field *f, const void *row,
			 const struct mn_pnode *map)
{
	const struct mn_pnode *n = mn_pnode_get(map, f->key);
	union val want = { 0 }, got = { 0 };
	char b1[64], b2[64];
	int e;

	if (!n || (f->when && !f->when(f, row)))
		return 0;
	f->derive(f, row, &want);
	if ((e = scalar(r, f, f->type, n, &got)))
		return e;
	if (cmp(f->type, want, got))
		return FAIL(r, n, "field '%s': %s, but the row's other fields make it %s", f->key,
			    fmt(f->type, got, b1, sizeof(b1)), fmt(f->type, want, b2, sizeof(b2)));
	return 0;
}

static int restore_row(struct rd *r, const struct mn_schema *s, void *row,
		       const struct mn_pnode *map, uint64_t id)
{
	const char *why;
	int e;

	mn_schema_mark(s, row);
	for (unsigned i = 0; i < s->nfields; i++)
		if ((e = restore_field(r, s, &s->fields[i], row, map, id)))
			return e;
	for (unsigned i = 0; i < s->nfields; i++)
		if ((s->fields[i].flags & MN_FF_DERIVED) &&
		    (e = check_derived(r, &s->fields[i], row, map)))
			return e;
	if (s->check && (why = s->check(r->top, row, id)))
		return FAIL(r, map, "%s", why);
	return 0;
}

int mn_schema_restore(const struct mn_schema *s, void *st, const struct mn_profile *prof,
		      const struct mn_pnode *sec, char *err, size_t errlen)
{
	struct rd r = { prof, err, errlen, st };
	int e;

	if (mn_pnode_kind(sec) != MN_PNODE_MAP)
		return FAIL(&r, sec, "%s: expected a mapping", s->name);
	mn_schema_cur_top = st;
	e = restore_row(&r, s, st, sec, NO_ID);
	mn_schema_cur_top = NULL;
	return e;
}

