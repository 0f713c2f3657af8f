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

/*
 * The capture half of objrel_lmads_add(): p (time t) extends the last LMAD, starts a new one, or,
 * the stream being or becoming full, is refused (false).
 */
static bool capture(struct objrel_lmads *s, const uint64_t p[OBJREL_LMAD_DIMS], uint64_t t)
{
	struct objrel_lmad *l;

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

bool objrel_lmads_add(struct objrel_lmads *s, const uint64_t p[OBJREL_LMAD_DIMS], uint64_t t)
{
	summarize(s, p);
	s->points++;
	return capture(s, p, t);
}

static uint64_t magnitude(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

/*
 * summarize() of the points p0 + i * dp, i in [0, count), count >= 1, none wrapping: the extremes
 * are the ends, and the gcd of the distances |p0 + i * dp - first| over i is gcd(|p0 - first|,
 * |dp|) once there are two points (the two generate the same ideal).
 */
static void summarize_run(struct objrel_lmads *s, const uint64_t p0[OBJREL_LMAD_DIMS],
			  const int64_t dp[OBJREL_LMAD_DIMS], uint64_t count)
{
	for (int d = 0; d < OBJREL_LMAD_DIMS; d++) {
		uint64_t end = p0[d] + (uint64_t)dp[d] * (count - 1);
		uint64_t lo = dp[d] < 0 ? end : p0[d], hi = dp[d] < 0 ? p0[d] : end;

		if (!s->points) {
			s->first[d] = p0[d];
			s->min[d] = lo;
			s->max[d] = hi;
		} else {
			if (lo < s->min[d])
				s->min[d] = lo;
			if (hi > s->max[d])
				s->max[d] = hi;
			s->gran[d] = gcd(s->gran[d], p0[d] > s->first[d] ? p0[d] - s->first[d]
									   : s->first[d] - p0[d]);
		}
		if (count > 1)
			s->gran[d] = gcd(s->gran[d], magnitude(dp[d]));
	}
}

uint64_t objrel_lmads_add_run(struct objrel_lmads *s, const uint64_t p0[OBJREL_LMAD_DIMS],
			      const int64_t dp[OBJREL_LMAD_DIMS], uint64_t count, uint64_t t0,
			      uint64_t dt)
{
	uint64_t p1[OBJREL_LMAD_DIMS];
	struct objrel_lmad *l;

	if (!count)
		return 0;
	summarize_run(s, p0, dp, count);
	s->points += count;
	if (!capture(s, p0, t0))
		return 0;
	if (count == 1)
		return 1;
	for (int d = 0; d < OBJREL_LMAD_DIMS; d++)
		p1[d] = p0[d] + (uint64_t)dp[d];
	if (!capture(s, p1, t0 + dt))
		return 1;
	if (count == 2)
		return 2;
	/*
	 * p0 and p1 are the last points of the stream: when the last LMAD holds both, its stride
	 * is p1 - p0 = dp; when p1 started it, p2 gives it stride dp.  Either way every later point
	 * is start + count * stride of it: each extends it, and the stream cannot fill.
	 */
	l = &s->v[s->n - 1];
	if (l->count == 1)
		memcpy(l->stride, dp, sizeof(l->stride));
	l->count += count - 2;
	l->last = t0 + (count - 1) * dt;
	s->captured += count - 2;
	return count;
}
