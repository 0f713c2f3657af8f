/*
 * The linear compressor of lmad.h.
 */
#include <stdlib.h>
#include <string.h>

#include "lmad.h"

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

void objrel_lmads_init(struct objrel_lmads *s, uint32_t limit)
{
	memset(s, 0, sizeof(*s));
	s->limit = limit ? limit : 1;
}

void objrel_lmads_free(struct objrel_lmads *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->alloc = 0;
}

static void summarize(struct objrel_lmads *s, const uint64_t p[OBJREL_LMAD_DIMS])
{
	for (int d = 0; d < OBJREL_LMAD_DIMS; d++) {
		if (!s->points) {
			s->min[d] = s->max[d] = s->first[d] = p[d];
			continue;
		}
		if (p[d] < s->min[d])
			s->min[d] = p[d];
		if (p[d] > s->max[d])
			s->max[d] = p[d];
		s->gran[d] = gcd(s->gran[d], p[d] > s->first[d] ? p[d] - s->first[d]
								 : s->first[d] - p[d]);
	}
}

/* Does p continue l: the second point of l, or start + count * stride? */
static bool extends(struct objrel_lmad *l, const uint64_t p[OBJREL_LMAD_DIMS])
{
	if (l->count == 1) {
		for (int d = 0; d < OBJREL_LMAD_DIMS; d++)
			l->stride[d] = (int64_t)(p[d] - l->start[d]);
		return true;
	}
	for (int d = 0; d < OBJREL_LMAD_DIMS; d++)
		if (l->start[d] + (uint64_t)l->stride[d] * l->count != p[d])
			return false;
	return true;
}

bool objrel_lmads_add(struct objrel_lmads *s, const uint64_t p[OBJREL_LMAD_DIMS], uint64_t t)
{
	struct objrel_lmad *l;

	summarize(s, p);
	s->points++;
	if (s->full)
		return false;
	if (s->n && extends(&s->v[s->n - 1], p)) {
		l = &s->v[s->n - 1];
		l->count++;
		l->last = t;
		s->captured++;
		return true;
	}
	if (s->n == s->limit) {
		s->full = true;
		return false;
	}
	if (s->n == s->alloc) {
		uint32_t a = s->alloc ? 2 * s->alloc : 2;
		struct objrel_lmad *v;

		if (a > s->limit)
			a = s->limit;
		v = realloc(s->v, (size_t)a * sizeof(*v));
		if (!v) {
			s->full = s->nomem = true;
			return false;
		}
		s->v = v;
		s->alloc = a;
	}
	l = &s->v[s->n++];
	memset(l, 0, sizeof(*l));
	memcpy(l->start, p, sizeof(l->start));
	l->count = 1;
	l->first = l->last = t;
	s->captured++;
	return true;
}
