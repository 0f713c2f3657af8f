/*
 * What schema.c (emit, merge, release) and schema_restore.c (restore) share: scalars of any field
 * type, rows reached by offsets, and the steps one calls of the other.  Backend-internal.
 */
#ifndef MNEMO_SCHEMA_INTERNAL_H
#define MNEMO_SCHEMA_INTERNAL_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "context.h"
#include "schema.h"

/* The section's top row while a job runs on this thread (mn_schema_top()). */
extern _Thread_local const void *mn_schema_cur_top;

static inline void *at(const void *row, size_t off)
{
	return (char *)row + off;
}

/* The id restore_row() gets for a row that is not a SITES table's. */
#define NO_ID UINT64_MAX

static inline void *vec_at(const struct mn_vec *a, size_t elem, uint32_t i)
{
	return (char *)a->v + (size_t)i * elem;
}

/* A scalar of any type, as the largest of its kind. */
union val {
	uint64_t u;
	int64_t i;
	double f;
	bool b;
};

static inline union val get(enum mn_ftype t, const void *p)
{
	union val v = { 0 };

	switch (t) {
	case MN_FT_U32:
	case MN_FT_CTX:
	case MN_FT_SITE: v.u = *(const uint32_t *)p; break;
	case MN_FT_ENUM: v.u = *(const uint8_t *)p; break;
	case MN_FT_CHOICE: v.u = *(const unsigned *)p; break;
	case MN_FT_I64: v.i = *(const int64_t *)p; break;
	case MN_FT_F64: v.f = *(const double *)p; break;
	case MN_FT_BOOL: v.b = *(const bool *)p; break;
	default: v.u = *(const uint64_t *)p; break;
	}
	return v;
}

static inline void set(enum mn_ftype t, void *p, union val v)
{
	switch (t) {
	case MN_FT_U32:
	case MN_FT_CTX:
	case MN_FT_SITE: *(uint32_t *)p = (uint32_t)v.u; break;
	case MN_FT_ENUM: *(uint8_t *)p = (uint8_t)v.u; break;
	case MN_FT_CHOICE: *(unsigned *)p = (unsigned)v.u; break;
	case MN_FT_I64: *(int64_t *)p = v.i; break;
	case MN_FT_F64: *(double *)p = v.f; break;
	case MN_FT_BOOL: *(bool *)p = v.b; break;
	default: *(uint64_t *)p = v.u; break;
	}
}

/* -1, 0, 1; NaNs are equal to each other (a derived 0/0 reads back as a NaN of other bits). */
static inline int cmp(enum mn_ftype t, union val a, union val b)
{
	switch (t) {
	case MN_FT_I64: return a.i < b.i ? -1 : a.i > b.i;
	case MN_FT_F64:
		if (isnan(a.f) || isnan(b.f))
			return isnan(a.f) && isnan(b.f) ? 0 : isnan(a.f) ? 1 : -1;
		return a.f < b.f ? -1 : a.f > b.f;
	case MN_FT_BOOL: return (int)a.b - (int)b.b;
	default: return a.u < b.u ? -1 : a.u > b.u;
	}
}

static inline bool is_zero(enum mn_ftype t, union val v)
{
	return t == MN_FT_F64 ? v.f == 0 : t == MN_FT_BOOL ? !v.b : v.u == 0;
}

static inline const char *fmt(enum mn_ftype t, union val v, char *buf, size_t len)
{
	switch (t) {
	case MN_FT_I64: snprintf(buf, len, "%" PRId64, v.i); break;
	case MN_FT_F64: snprintf(buf, len, "%.17g", v.f); break;
	case MN_FT_BOOL: snprintf(buf, len, "%s", v.b ? "true" : "false"); break;
	default: snprintf(buf, len, "%" PRIu64, v.u); break;
	}
	return buf;
}

/* The context manager of CTX field f: a pointer in the top row. */
static inline struct mn_ctx *ctx_of(const struct mn_field *f, const void *top)
{
	return *(struct mn_ctx *const *)at(top, f->arg);
}

/* A ROWMAP row's view: its key words, then the row. */
static inline void *view_of(struct mn_row *e)
{
	return (char *)e - MN_ROWS_KEY_WORDS * sizeof(uint64_t);
}

/* What merge() folds: both top rows, and whether from is a restored state (another run's). */
struct mg {
	const void *into_top, *from_top;
	bool restored;
};

/* Whether rows of s have a key (else a table of them is a plain list: merged by appending). */
bool mn_schema_keyed(const struct mn_schema *s);
/* The row of vector a whose key fields equal those of row (skip: that row itself), or NULL. */
void *mn_schema_find_row(const struct mn_schema *s, const struct mn_vec *a, const void *row,
			 const void *skip);
/* Sets the HIDDEN fields of row that have an .arg to it: restore() marks every row it reads. */
void mn_schema_mark(const struct mn_schema *s, void *row);
/* Folds row from into into by s's reductions; 0, -EINVAL (a SAME field differs), -ENOMEM. */
int mn_schema_merge_row(const struct mn_schema *s, void *into, void *from, const struct mg *m);

#endif /* MNEMO_SCHEMA_INTERNAL_H */
