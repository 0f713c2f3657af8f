/*
 * Section schemas (schema.h): one walk over a schema's fields per job -- emit, merge, release
 * here, restore (and its checks) in schema_restore.c.  Rows are C structs reached by the fields'
 * offsets; lists and nested tables are struct mn_vec, tables by site struct mn_sitevec, row maps
 * struct mn_rows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "ctxrank.h"
#include "schema_internal.h"
#include "sitevec.h"

_Thread_local const void *mn_schema_cur_top;

const void *mn_schema_top(void)
{
	return mn_schema_cur_top;
}

int mn_vec_reserve(struct mn_vec *a, size_t elem, uint32_t cap)
{
	void *v;

	if (cap <= a->cap)
		return 0;
	v = realloc(a->v, (size_t)cap * elem);
	if (!v)
		return -ENOMEM;
	a->v = v;
	a->cap = cap;
	return 0;
}

int mn_topk_order(const void *a, const void *b)
{
	const struct mn_topk *x = a, *y = b;
	uint64_t gx = x->count - x->err, gy = y->count - y->err;

	if (gx != gy)
		return gx > gy ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

const struct mn_topk *mn_topk_best(const struct mn_vec *a, uint64_t *all)
{
	const struct mn_topk *p = a->v, *best = a->n ? p : NULL;

	*all = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		*all += p[i].count;
		if (mn_topk_order(&p[i], best) < 0)
			best = &p[i];
	}
	return best;
}

static const struct mn_field count64_fields[] = {
	MN_FIELD("key", MN_FT_U64, offsetof(struct mn_count64, key), MN_R_KEY),
	MN_FIELD("count", MN_FT_U64, offsetof(struct mn_count64, count), MN_R_SUM),
};
const struct mn_schema mn_count64_rows = MN_SCHEMA("counters", struct mn_count64, count64_fields,
						     .weight = "count");

static const struct mn_field entries_fields[] = {
	MN_FIELD("site", MN_FT_SITE, MN_NO_OFFSET, MN_R_KEY),
	MN_FIELD("entries", MN_FT_U64, 0, MN_R_SUM),
};
const struct mn_schema mn_entries_rows = MN_SCHEMA("functions", uint64_t, entries_fields,
						   .flow = true, .weight = "entries");

static const struct mn_field topk_fields[] = {
	MN_FIELD("key", MN_FT_I64, offsetof(struct mn_topk, key), MN_R_KEY),
	MN_FIELD("count", MN_FT_U64, offsetof(struct mn_topk, count), MN_R_SUM),
	MN_FIELD("err", MN_FT_U64, offsetof(struct mn_topk, err), MN_R_SUM),
};
const struct mn_schema mn_topk_rows = MN_SCHEMA("counters", struct mn_topk, topk_fields,
						.order = mn_topk_order, .weight = "count");

void mn_set64_single(const struct mn_field *f, const void *row, void *out)
{
	const struct mn_set64 *s = at(row, f->offset);

	*(bool *)out = s->v.n == 1 && !s->capped;
}

void mn_set64_count(const struct mn_field *f, const void *row, void *out)
{
	const struct mn_set64 *s = at(row, f->offset);

	*(uint64_t *)out = s->capped ? f->arg : s->v.n;
}

bool mn_set64_open(const struct mn_field *f, const void *row)
{
	return !((const struct mn_set64 *)at(row, f->offset))->capped;
}

bool mn_flag(const struct mn_field *f, const void *row)
{
	return *(const bool *)at(row, f->aux);
}

bool mn_top_flag(const struct mn_field *f, const void *row)
{
	return *(const bool *)at(mn_schema_cur_top, f->aux);
}

bool mn_vec_any(const struct mn_field *f, const void *row)
{
	return ((const struct mn_vec *)at(row, f->offset))->n != 0;
}

void mn_topk_key(const struct mn_field *f, const void *row, void *out)
{
	uint64_t all;

	*(int64_t *)out = mn_topk_best(at(row, f->offset), &all)->key;
}

void mn_topk_share(const struct mn_field *f, const void *row, void *out)
{
	uint64_t all;
	const struct mn_topk *b = mn_topk_best(at(row, f->offset), &all);

	*(double *)out = (double)(b->count - b->err) / (double)all;
}

void mn_topk_over(const struct mn_field *f, const void *row, void *out)
{
	uint64_t all;
	const struct mn_topk *b = mn_topk_best(at(row, f->offset), &all);

	*(bool *)out = (b->count - b->err) * 100 >= all * f->arg;
}

/* The i-th of choices "a|b|c" into buf; "" past the end. */
static const char *choice(const char *choices, unsigned i, char *buf, size_t len)
{
	const char *c = choices, *e;

	for (; i && c; i--)
		c = strchr(c, '|') ? strchr(c, '|') + 1 : NULL;
	if (!c)
		return "";
	e = strchr(c, '|') ? strchr(c, '|') : c + strlen(c);
	snprintf(buf, len, "%.*s", (int)(e - c), c);
	return buf;
}

int mn_choice_index(const char *choices, const char *s)
{
	char buf[64];

	for (int i = 0; *choice(choices, (unsigned)i, buf, sizeof(buf)); i++)
		if (!strcmp(buf, s))
			return i;
	return -1;
}

void mn_schema_mark(const struct mn_schema *s, void *row)
{
	for (unsigned i = 0; i < s->nfields; i++)
		if ((s->fields[i].flags & MN_FF_HIDDEN) && s->fields[i].arg)
			set(s->fields[i].type, at(row, s->fields[i].offset),
			    (union val){ .u = s->fields[i].arg });
}

/* ---- Emitting -------------------------------------------------------------------------------- */

static void put(struct mn_prof *p, const struct mn_field *f, enum mn_ftype t, union val v)
{
	char buf[64];

	switch (t) {
	case MN_FT_I64: mn_prof_i64(p, v.i); break;
	case MN_FT_F64: mn_prof_f64(p, v.f); break;
	case MN_FT_BOOL: mn_prof_bool(p, v.b); break;
	case MN_FT_SITE: mn_prof_site(p, (uint32_t)v.u); break;
	case MN_FT_ENUM:
	case MN_FT_CHOICE: mn_prof_str(p, choice(f->choices, (unsigned)v.u, buf, sizeof(buf))); break;
	default: mn_prof_u64(p, v.u); break;
	}
}

/* Whether field f of row is written. */
static bool written(const struct mn_field *f, const void *row)
{
	const struct mn_vec *a;

	if ((f->flags & MN_FF_HIDDEN) || (f->when && !f->when(f, row)))
		return false;
	if ((f->flags & MN_FF_PRESENT) && !*(const bool *)at(row, f->aux))
		return false;
	if ((f->flags & MN_FF_DERIVED) || f->offset == MN_NO_OFFSET)
		return true;
	if (f->type == MN_FT_ROWMAP)
		return !(f->flags & MN_FF_OPT) || ((const struct mn_rows *)at(row, f->offset))->n;
	a = at(row, f->offset);
	if (f->type == MN_FT_KV && (f->flags & MN_FF_NONZERO)) {
		const struct mn_field *v = &f->sub->fields[f->arg];

		for (uint32_t i = 0; i < a->n; i++)
			if (!is_zero(v->type, get(v->type, at(vec_at(a, f->sub->size, i),
							      v->offset))))
				return true;
		return !(f->flags & MN_FF_OPT);
	}
	if (f->type == MN_FT_LIST || f->type == MN_FT_KV || f->type == MN_FT_ROWS) {
		if (f->flags & MN_FF_ONE)
			return a->n == 1;
		if (f->flags & MN_FF_MANY)
			return a->n >= 2;
		return !(f->flags & MN_FF_OPT) || a->n;
	}
	if (f->type == MN_FT_SITES || !(f->flags & MN_FF_OPT))
		return true;
	return !is_zero(f->type, get(f->type, at(row, f->offset)));
}

/* A row and its site id (0 but in SITES tables), for sorting. */
struct ref {
	const void *row;
	uint64_t id;
};

/* How a table sorts: its schema, the fields of .by, and the ranks of context ids. */
struct sorting {
	const struct mn_schema *s;
	const struct mn_field *by[16];
	unsigned nby;
	const uint32_t *rank;   /* NULL: CTX fields by id */
};

/* Field f of two rows: by its type, CTX ids by rank first. */
static int cmp_field(const struct sorting *o, const struct mn_field *f, const void *x,
		     const void *y)
{
	union val a = get(f->type, at(x, f->offset)), b = get(f->type, at(y, f->offset));

	if (f->type == MN_FT_CTX && o->rank && o->rank[a.u] != o->rank[b.u])
		return o->rank[a.u] < o->rank[b.u] ? -1 : 1;
	return cmp(f->type, a, b);
}

/* The order of a table: the schema's, or by .by's fields, or .desc's, then by key fields (a
 * list's stored order is not stable across merges), or by site id. */
static int by_order(const void *a, const void *b, void *arg)
{
	const struct sorting *o = arg;
	const struct mn_schema *s = o->s;
	const struct ref *x = a, *y = b;
	int c;

	if (s->order)
		return s->order(x->row, y->row);
	for (unsigned i = 0; i < o->nby; i++)
		if ((c = cmp_field(o, o->by[i], x->row, y->row)))
			return c;
	for (unsigned i = 0; s->desc && i < s->nfields; i++) {
		const struct mn_field *f = &s->fields[i];

		if (strcmp(f->key, s->desc))
			continue;
		c = cmp(f->type, get(f->type, at(y->row, f->offset)),
			get(f->type, at(x->row, f->offset)));
		if (c)
			return c;
		break;
	}
	for (unsigned i = 0; i < s->nfields; i++) {
		const struct mn_field *f = &s->fields[i];

		if (f->reduce != MN_R_KEY || f->offset == MN_NO_OFFSET)
			continue;
		if ((c = cmp_field(o, f, x->row, y->row)))
			return c;
	}
	return x->id < y->id ? -1 : x->id > y->id;
}

/* o's .by fields and, when s has CTX fields, the ranks of the ids the k rows r use (of the
 * first CTX field's context manager).  0 or -ENOMEM. */
static int sorting_init(struct sorting *o, const struct mn_schema *s, const struct ref *r,
			size_t k)
{
	const struct mn_field *cf = NULL;
	uint32_t nids;
	uint8_t *used;

	*o = (struct sorting){ .s = s };
	for (unsigned i = 0; s->by && s->by[i] && o->nby < 16; i++)
		for (unsigned j = 0; j < s->nfields; j++)
			if (!strcmp(s->fields[j].key, s->by[i]))
				o->by[o->nby++] = &s->fields[j];
	for (unsigned j = 0; j < s->nfields && !cf; j++)
		cf = s->fields[j].type == MN_FT_CTX ? &s->fields[j] : NULL;
	if (!cf || s->order)
		return 0;
	nids = mn_ctx_id_count(ctx_of(cf, mn_schema_cur_top));
	if (!(used = calloc(nids ? nids : 1, 1)))
		return -ENOMEM;
	for (size_t i = 0; i < k; i++)
		for (unsigned j = 0; j < s->nfields; j++) {
			const struct mn_field *f = &s->fields[j];
			uint32_t id = f->type == MN_FT_CTX ? get(f->type, at(r[i].row, f->offset)).u : 0;

			if (f->type == MN_FT_CTX && id < nids)
				used[id] = 1;
		}
	o->rank = mn_ctx_ranks(ctx_of(cf, mn_schema_cur_top), used);
	free(used);
	return o->rank ? 0 : -ENOMEM;
}

/* The rows of table field f of row, in the order they are written; NULL and *n 0 when empty,
 * NULL and *n 1 without memory.  A ROWMAP's rows are its key words and struct mn_row. */
static struct ref *rows_of(const struct mn_field *f, const void *row, size_t *n)
{
	const struct mn_schema *s = f->sub;
	struct ref *r;
	size_t k = 0, all;
	struct sorting o;

	if (f->type == MN_FT_SITES) {
		const struct mn_sitevec *sv = at(row, f->offset);
		const struct mn_run *run = f->choices ?
			*(const struct mn_run *const *)at(mn_schema_cur_top, f->arg) : NULL;
		size_t nrun = run ? mn_run_site_count(run) + (size_t)1 : 0;
		char *copies;

		all = sv->n > nrun ? sv->n : nrun;
		r = all ? malloc(all * (sizeof(*r) + (run ? s->size : 0))) : NULL;
		copies = (char *)(r + all);   /* the rows of sites of the kind, marked */
		for (size_t id = 0; r && id < all; id++) {
			const void *rec = id < sv->n ? sv->rec[id] : NULL;
			char *c = copies + id * s->size;

			if (run && id && !strcmp(mn_run_site_kind(run, (uint32_t)id), f->choices)) {
				rec ? memcpy(c, rec, s->size) : memset(c, 0, s->size);
				mn_schema_mark(s, c);
				rec = c;
			}
			if (rec && !(s->skip && s->skip(rec)))
				r[k++] = (struct ref){ rec, id };
		}
	} else if (f->type == MN_FT_ROWMAP) {
		const struct mn_rows *m = at(row, f->offset);
		const struct mn_row *e;

		all = m->n;
		r = all ? malloc(all * sizeof(*r)) : NULL;
		for (struct mn_rows_cursor c = { 0 }; r && (e = mn_rows_next(m, &c));)
			if (!(s->skip && s->skip(mn_row_key(e))))
				r[k++] = (struct ref){ mn_row_key(e), 0 };
	} else {
		const struct mn_vec *a = at(row, f->offset);

		all = a->n;
		r = all ? malloc(all * sizeof(*r)) : NULL;
		for (uint32_t i = 0; r && i < a->n; i++)
			if (!(s->skip && s->skip(vec_at(a, s->size, i))))
				r[k++] = (struct ref){ vec_at(a, s->size, i), 0 };
	}
	*n = r ? k : all != 0;
	if (r && (f->type != MN_FT_SITES || s->order || s->desc || s->by)) {
		if (sorting_init(&o, s, r, k)) {
			free(r);
			*n = 1;
			return NULL;
		}
		qsort_r(r, k, sizeof(*r), by_order, &o);
		free((void *)o.rank);
	}
	return r;
}

static int emit_row(const struct mn_schema *s, const void *row, uint64_t id, struct mn_prof *p,
		    bool flow);

/* Whether a row of an IDS table is marked: a HIDDEN field that restore() sets is set. */
static bool marked(const struct mn_schema *s, const void *row)
{
	for (unsigned i = 0; i < s->nfields; i++)
		if ((s->fields[i].flags & MN_FF_HIDDEN) && s->fields[i].arg &&
		    !is_zero(s->fields[i].type, get(s->fields[i].type, at(row, s->fields[i].offset))))
			return true;
	return false;
}

static int by_elem(const void *a, const void *b, void *arg)
{
	enum mn_ftype t = *(const enum mn_ftype *)arg;

	return cmp(t, get(t, a), get(t, b));
}

static int emit_list(const struct mn_field *f, const struct mn_vec *a, struct mn_prof *p)
{
	enum mn_ftype t = f->elem;
	uint64_t *v = a->v;

	if (f->flags & MN_FF_ONE) {
		put(p, f, t, get(t, v));
		return 0;
	}
	if ((f->flags & MN_FF_SORTED) && a->n > 1) {
		v = malloc(a->n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, a->v, a->n * sizeof(*v));
		qsort_r(v, a->n, sizeof(*v), by_elem, &t);
	}
	(f->flags & MN_FF_FLOW) ? mn_prof_seq_begin_flow(p) : mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < a->n; i++)
		put(p, f, t, get(t, &v[i]));
	mn_prof_seq_end(p);
	if (v != a->v)
		free(v);
	return 0;
}

static int emit_table(const struct mn_field *f, const void *row, struct mn_prof *p)
{
	const struct mn_schema *s = f->sub;
	const struct mn_field *k = &s->fields[0], *v = &s->fields[f->type == MN_FT_KV ? f->arg : 0];
	size_t n;
	struct ref *r = rows_of(f, row, &n);
	int err = 0;

	if (!r && n)
		return -ENOMEM;
	if (f->type == MN_FT_KV)
		mn_prof_map_begin_flow(p);
	else if (f->flags & (MN_FF_FLOW | MN_FF_IDS))
		mn_prof_seq_begin_flow(p);
	else
		mn_prof_seq_begin(p);
	for (size_t i = 0; i < n && !err; i++) {
		if (f->flags & MN_FF_IDS) {
			if (marked(s, r[i].row))
				mn_prof_site(p, (uint32_t)r[i].id);
			continue;
		}
		if (f->type != MN_FT_KV) {
			err = emit_row(s, r[i].row, r[i].id, p, s->flow);
			continue;
		}
		if ((f->flags & MN_FF_NONZERO) && is_zero(v->type, get(v->type, at(r[i].row,
										      v->offset))))
			continue;
		put(p, k, k->type, get(k->type, at(r[i].row, k->offset)));
		put(p, v, v->type, get(v->type, at(r[i].row, v->offset)));
	}
	f->type == MN_FT_KV ? mn_prof_map_end(p) : mn_prof_seq_end(p);
	free(r);
	return err;
}

static int emit_field(const struct mn_field *f, const void *row, uint64_t id, struct mn_prof *p)
{
	union val v;

	mn_prof_key(p, f->key);
	if (f->flags & MN_FF_DERIVED) {
		v.u = 0;
		f->derive(f, row, &v);
		put(p, f, f->type, v);
		return 0;
	}
	if (f->offset == MN_NO_OFFSET) {
		put(p, f, f->type, (union val){ .u = f->reduce == MN_R_CONST ? f->arg : id });
		return 0;
	}
	if (f->put)
		return f->put(f, row, p);
	switch (f->type) {
	case MN_FT_CTX:
		return mn_ctx_emit(ctx_of(f, mn_schema_cur_top), p, *(const uint32_t *)at(row, f->offset));
	case MN_FT_LIST:
		return emit_list(f, at(row, f->offset), p);
	case MN_FT_MAP:
		return emit_row(f->sub, at(row, f->offset), 0, p, f->sub->flow);
	case MN_FT_KV:
	case MN_FT_ROWS:
	case MN_FT_SITES:
	case MN_FT_ROWMAP:
		return emit_table(f, row, p);
	default:
		if ((f->flags & MN_FF_NULL) && !*(const bool *)at(row, f->aux))
			mn_prof_null(p);
		else
			put(p, f, f->type, get(f->type, at(row, f->offset)));
		return 0;
	}
}

static int emit_row(const struct mn_schema *s, const void *row, uint64_t id, struct mn_prof *p,
		    bool flow)
{
	int err = 0;

	flow ? mn_prof_map_begin_flow(p) : mn_prof_map_begin(p);
	for (unsigned i = 0; i < s->nfields && !err; i++)
		if (written(&s->fields[i], row))
			err = emit_field(&s->fields[i], row, id, p);
	mn_prof_map_end(p);
	return err;
}

int mn_schema_emit(const struct mn_schema *s, const void *st, struct mn_prof *p)
{
	int err;

	mn_schema_cur_top = st;
	err = emit_row(s, st, 0, p, false);
	mn_schema_cur_top = NULL;
	return err;
}

/* ---- Merging --------------------------------------------------------------------------------- */

/* Whether rows of s have a key (else a table of them is a plain list: merged by appending). */
bool mn_schema_keyed(const struct mn_schema *s)
{
	for (unsigned k = 0; k < s->nfields; k++)
		if (s->fields[k].reduce == MN_R_KEY)
			return true;
	return false;
}

/* The row of vector a whose key fields equal those of row (skip: that row itself), or NULL. */
void *mn_schema_find_row(const struct mn_schema *s, const struct mn_vec *a, const void *row,
			 const void *skip)
{
	for (uint32_t i = 0; i < a->n; i++) {
		void *t = vec_at(a, s->size, i);
		unsigned k = 0;

		for (; t != skip && k < s->nfields; k++) {
			const struct mn_field *f = &s->fields[k];

			if (f->reduce == MN_R_KEY &&
			    cmp(f->type, get(f->type, at(t, f->offset)),
				get(f->type, at(row, f->offset))))
				break;
		}
		if (t != skip && k == s->nfields)
			return t;
	}
	return NULL;
}


/* The bounded set: the union, up to f->arg values; one more caps it. */
static int set_fold(const struct mn_field *f, void *into, const void *from)
{
	struct mn_set64 *t = at(into, f->offset);
	const struct mn_set64 *u = at(from, f->offset);

	t->capped |= u->capped;
	for (uint32_t i = 0; i < u->v.n; i++)
		if (mn_set64_add(t, ((const uint64_t *)u->v.v)[i], f->arg) == -ENOMEM)
			return -ENOMEM;
	return 0;
}

/* Rows of from's vector: folded into the row of their key in into's, else moved there (from's
 * copy zeroed, so that releasing from frees them once). */
static int vec_union(const struct mn_schema *s, struct mn_vec *t, struct mn_vec *u,
		     const struct mg *m)
{
	int err = 0;

	for (uint32_t i = 0; i < u->n; i++) {
		void *row = vec_at(u, s->size, i);
		void *to = mn_schema_keyed(s) ? mn_schema_find_row(s, t, row, NULL) : NULL;

		if (to) {
			int e = mn_schema_merge_row(s, to, row, m);

			err = err ? err : e;
		} else if ((to = mn_vec_push(t, s->size))) {
			memcpy(to, row, s->size);
			memset(row, 0, s->size);
		} else {
			return -ENOMEM;
		}
	}
	return err;
}

/* Site-sharded workers own disjoint sites: their rows move; rows of a site both have fold. */
static int sites_union(const struct mn_schema *s, struct mn_sitevec *t, struct mn_sitevec *u,
		       const struct mg *m)
{
	int err = 0;

	mn_sitevec_take(t, u);
	for (size_t id = 0; id < u->n; id++) {
		void *to;
		int e;

		if (!u->rec[id])
			continue;
		to = mn_sitevec_find(t, (uint32_t)id);
		e = to ? mn_schema_merge_row(s, to, u->rec[id], m) : -ENOMEM;
		err = err ? err : e;
	}
	return err;
}

/* Rows of from's map folded into the rows of their key in into's; a restored state's context
 * ids, its own, become into's first.  On -ENOMEM the other rows still fold. */
/* An access both sides counted row k for, n of them: once in all. */
static void span_dup(void *rows, const uint64_t *k, uint64_t n)
{
	struct mn_row *e = mn_rows_get(rows, k);

	if (e && e->count > n)
		e->count -= n;
}

static int rowmap_union(const struct mn_field *f, void *into, void *from, const struct mg *m)
{
	const struct mn_schema *s = f->sub;
	struct mn_rows *t = at(into, f->offset);
	const struct mn_rows *u = at(from, f->offset);
	char tmp[MN_ROWS_KEY_WORDS * sizeof(uint64_t) + sizeof(struct mn_row)];
	struct mn_row *e, *to;
	int err = 0;

	for (struct mn_rows_cursor c = { 0 }; (e = mn_rows_next(u, &c));) {
		memcpy(tmp, view_of(e), sizeof(tmp));
		for (unsigned i = 0; m->restored && i < s->nfields; i++) {
			const struct mn_field *f = &s->fields[i];
			uint32_t *id = at(tmp, f->offset);

			if (f->type == MN_FT_CTX)
				*id = mn_ctx_translate(ctx_of(f, m->into_top), ctx_of(f, m->from_top),
						       *id);
		}
		if ((to = mn_rows_get(t, (const uint64_t *)tmp)))
			mn_schema_merge_row(s, view_of(to), tmp, m);
		else
			err = -ENOMEM;
	}
	if ((f->flags & MN_FF_SPANS) &&
	    mn_spans_merge(at(into, f->aux), at(from, f->aux), span_dup, t))
		err = -ENOMEM;
	return err;
}

static int merge_field(const struct mn_field *f, void *into, void *from, const struct mg *m)
{
	void *t, *u;
	union val a, b;

	if (f->flags & (MN_FF_VIEW | MN_FF_DERIVED) || f->offset == MN_NO_OFFSET)
		return 0;
	t = at(into, f->offset);
	u = at(from, f->offset);
	if ((f->flags & MN_FF_CONTEXT) && !m->restored)
		return 0;   /* every worker counted these alike: into's are whole */
	if (f->type == MN_FT_MAP)
		return mn_schema_merge_row(f->sub, t, u, m);
	switch (f->reduce) {
	case MN_R_FOLD: return f->fold(t, u);
	case MN_R_SET: return set_fold(f, into, from);
	case MN_R_UNION:
		if (f->type == MN_FT_SITES)
			return sites_union(f->sub, t, u, m);
		if (f->type == MN_FT_ROWMAP)
			return rowmap_union(f, into, from, m);
		return vec_union(f->sub, t, u, m);
	case MN_R_SUM:
	case MN_R_MIN:
	case MN_R_MAX:
	case MN_R_SAME:
		break;
	default:
		return 0;
	}
	if (f->flags & MN_FF_NULL) {   /* null is no value: the other one stands */
		if (!*(bool *)at(from, f->aux))
			return 0;
		if (!*(bool *)at(into, f->aux)) {
			*(bool *)at(into, f->aux) = true;
			memcpy(t, u, f->type == MN_FT_U32 || f->type == MN_FT_SITE ||
				     f->type == MN_FT_CHOICE ? sizeof(unsigned) :
				     f->type == MN_FT_ENUM || f->type == MN_FT_BOOL ? 1 : 8);
			return 0;
		}
	}
	a = get(f->type, t);
	b = get(f->type, u);
	if (f->reduce == MN_R_SAME)
		return cmp(f->type, a, b) ? -EINVAL : 0;
	if (f->reduce == MN_R_SUM) {
		if (f->type == MN_FT_F64)
			a.f += b.f;
		else
			a.u += b.u;   /* two's complement: the same for I64 */
	} else if ((cmp(f->type, b, a) < 0) == (f->reduce == MN_R_MIN) && cmp(f->type, b, a)) {
		a = b;
	}
	set(f->type, t, a);
	return 0;
}

int mn_schema_merge_row(const struct mn_schema *s, void *into, void *from, const struct mg *m)
{
	int err = 0;

	for (unsigned i = 0; i < s->nfields; i++) {   /* without memory, the other fields fold */
		int e = merge_field(&s->fields[i], into, from, m);

		if (e && (!err || e == -ENOMEM))
			err = e;
	}
	return err;
}

int mn_schema_merge(const struct mn_schema *s, void *into, void *from, bool restored)
{
	const struct mg m = { into, from, restored };
	int err;

	mn_schema_cur_top = into;
	err = mn_schema_merge_row(s, into, from, &m);
	mn_schema_cur_top = NULL;
	return err;
}

/* ---- Releasing ------------------------------------------------------------------------------- */

void mn_schema_release(const struct mn_schema *s, void *row)
{
	for (unsigned i = 0; i < s->nfields; i++) {
		const struct mn_field *f = &s->fields[i];
		void *p;

		if (f->flags & (MN_FF_VIEW | MN_FF_DERIVED) || f->offset == MN_NO_OFFSET)
			continue;
		p = at(row, f->offset);
		if (f->type == MN_FT_MAP) {
			mn_schema_release(f->sub, p);
		} else if (f->type == MN_FT_ROWMAP) {
			mn_rows_free(p);
			if (f->flags & MN_FF_SPANS)
				mn_spans_free(at(row, f->aux));
		} else if (f->type == MN_FT_SITES) {
			struct mn_sitevec *sv = p;

			for (size_t id = 0; id < sv->n; id++)
				if (sv->rec[id])
					mn_schema_release(f->sub, sv->rec[id]);
			mn_sitevec_free(sv);
		} else if (f->type == MN_FT_LIST || f->type == MN_FT_KV || f->type == MN_FT_ROWS) {
			struct mn_vec *a = p;

			for (uint32_t j = 0; f->type != MN_FT_LIST && j < a->n; j++)
				mn_schema_release(f->sub, vec_at(a, f->sub->size, j));
			mn_vec_free(a);
		}
	}
}
