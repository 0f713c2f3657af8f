/*
 * The linear compressor of LEAP (Wu et al., "Object-Relative Addressing", 4): one (instruction,
 * group) stream of (object, offset) points, in time order, described by linear memory access
 * descriptors (LMADs), at most `limit` of them.
 *
 * An LMAD [start, stride, count] stands for the count points start + k * stride, k = 0..count-1,
 * each a 2-vector (object serial, offset): count is the number of points, not of strides (the
 * paper writes the offset stream 0, 8, ..., 80 as [0, 8, 10], counting strides, and 4, 8, ..., 36
 * as [4, 4, 9], counting points; we count points throughout: [0, 8, 11] and [4, 4, 9]).
 *
 * A point extends the last LMAD when it is the next one of its pattern (the second point of an
 * LMAD fixes its stride), or else starts a new LMAD.  When a new LMAD would be the (limit + 1)-th,
 * the stream is full: that point and every later one are not captured (not even one that would
 * extend the last LMAD, whose points must stay in time order) and only update the summary every
 * point updates: min, max and granularity per dimension.  Granularity is the greatest common
 * divisor of the distances between the stream's first point and each later one (0 while they are
 * all equal).
 *
 * Not thread-safe: one per stream.
 */
#ifndef OBJREL_LMAD_H
#define OBJREL_LMAD_H

#include <stdbool.h>
#include <stdint.h>

#define OBJREL_LMAD_DIMS 2       /* object serial, offset */
#define OBJREL_LMAD_LIMIT 30     /* the paper's maximum per (instruction, group) */

struct objrel_lmad {
	uint64_t start[OBJREL_LMAD_DIMS];   /* the first point */
	int64_t stride[OBJREL_LMAD_DIMS];   /* 0 while count == 1 */
	uint64_t count;                     /* points, >= 1 */
	uint64_t first, last;               /* times of the first and last point */
};

struct objrel_lmads {
	struct objrel_lmad *v;              /* v[0..n) in time order */
	uint32_t n, alloc;                  /* LMADs made, room in v */
	uint32_t limit;                     /* at most this many LMADs */
	bool full;                          /* a point was not captured: capture stopped */
	bool nomem;                         /* full because v could not grow */
	uint64_t points, captured;          /* points added, points in v */
	uint64_t min[OBJREL_LMAD_DIMS], max[OBJREL_LMAD_DIMS];
	uint64_t first[OBJREL_LMAD_DIMS];   /* the first point, for granularity */
	uint64_t gran[OBJREL_LMAD_DIMS];
};

/* An empty stream of at most limit (>= 1) LMADs; allocates nothing yet. */
void objrel_lmads_init(struct objrel_lmads *s, uint32_t limit);
void objrel_lmads_free(struct objrel_lmads *s);

/*
 * Adds point p at time t.  Returns true when it was captured in an LMAD, false when the stream is
 * full (the summary is updated either way).  Running out of memory makes the stream full.
 */
bool objrel_lmads_add(struct objrel_lmads *s, const uint64_t p[OBJREL_LMAD_DIMS], uint64_t t);

/*
 * Adds the count points p0 + i * dp at times t0 + i * dt, i in [0, count), leaving exactly the
 * state count calls of objrel_lmads_add() would, in O(1): a loop summary's access within one
 * object.  No point may wrap: p0 + i * dp, as an integer, lies in [0, 2^64) in each dimension.
 * Returns how many of them were captured (a prefix of them).
 */
uint64_t objrel_lmads_add_run(struct objrel_lmads *s, const uint64_t p0[OBJREL_LMAD_DIMS],
			      const int64_t dp[OBJREL_LMAD_DIMS], uint64_t count, uint64_t t0,
			      uint64_t dt);

#endif /* OBJREL_LMAD_H */
