/*
 * StructSlim's size, field and affinity arithmetic (affinity.h), on plain arrays.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"

/*
 * Stein's binary gcd: shifts and subtractions, where Euclid's takes a 64-bit division per step,
 * the dearest instruction of the per-access path (sa_stride_add()).
 */
uint64_t sa_gcd(uint64_t a, uint64_t b)
{
	unsigned twos;

	if (!a || !b)
		return a | b;
	twos = (unsigned)__builtin_ctzll(a | b);
	a >>= __builtin_ctzll(a);
	do {
		b >>= __builtin_ctzll(b);
		if (a > b) {
			uint64_t t = a;

			a = b;
			b = t;
		}
		b -= a;
	} while (b);
	return a << twos;
}

int sa_layout_field(const struct sa_layout *l, uint64_t off)
{
	uint32_t lo = 0, hi = l->nfields;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (l->field[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->nfields && l->field[lo].offset == off ? (int)lo : -1;
}

/*
 * Eq. 5 over the streams whose stride is more than 1.  StructSlim (4.2.2) reports an irregular
 * pattern with stride 1, as it does a unit-stride walk, and leaves such streams out: they offer
 * no structure splitting opportunity.  Taken into the gcd, one byte loop over a member array (a
 * name compared or copied char by char) would make the size 1 and the whole structure one field.
 * An object whose strides are all 1 has size 1; one with no stride, 0 (unknown).
 */
static uint64_t inferred_size(const struct sa_stream *s, size_t n)
{
	uint64_t size = 0, unit = 0;

	for (size_t i = 0; i < n; i++)
		if (s[i].stride > 1)
			size = sa_gcd(size, s[i].stride);
		else if (s[i].stride == 1)
			unit = 1;
	return size ? size : unit;
}

static void choose_size(struct sa_layout *l, const struct sa_stream *s, size_t n)
{
	l->inferred = inferred_size(s, n);
	if (l->inferred > l->declared && sa_layout_agree(l)) {
		/* k elements of the declared structure per stride (enum sa_size_source). */
		l->used = l->declared;
		l->source = SA_SIZE_FOLDED;
	} else if (l->inferred) {
		l->used = l->inferred;
		l->source = SA_SIZE_STRIDES;
	} else if (l->declared) {
		l->used = l->declared;
		l->source = SA_SIZE_DECLARED;
	} else {
		l->source = SA_SIZE_OBJECT;
	}
}

/* Inserts offset off into the sorted fields, unless there or out of room. */
static void add_field(struct sa_layout *l, uint64_t off)
{
	uint32_t i = 0;

	while (i < l->nfields && l->field[i].offset < off)
		i++;
	if (i < l->nfields && l->field[i].offset == off)
		return;
	if (l->nfields == SA_FIELDS_MAX) {
		/* Keep the smallest offsets: a larger one pushes out the largest kept. */
		if (i == SA_FIELDS_MAX)
			return;
		l->nfields--;
	}
	memmove(&l->field[i + 1], &l->field[i], (l->nfields - i) * sizeof(l->field[0]));
	l->field[i] = (struct sa_field){ .offset = off };
	l->nfields++;
}

static int by_loop(const void *a, const void *b)
{
	const struct sa_stream *x = *(const struct sa_stream *const *)a;
	const struct sa_stream *y = *(const struct sa_stream *const *)b;

	return x->loop < y->loop ? -1 : x->loop > y->loop;
}

/*
 * Eq. 7.  common[i][j] sums, over the loops touching both i and j, the cost of i and of j in that
 * loop; the denominator is the cost of i and of j over the whole program.
 */
static void affinities(struct sa_layout *l, const struct sa_stream *s, size_t n)
{
	static const double zero[SA_FIELDS_MAX];
	double (*common)[SA_FIELDS_MAX] = calloc(SA_FIELDS_MAX, sizeof(*common));
	const struct sa_stream **v = malloc((n ? n : 1) * sizeof(*v));
	double c[SA_FIELDS_MAX];
	uint32_t f = l->nfields;

	if (!common || !v) {
		/* Without memory nothing is known to go together: every field on its own. */
		for (uint32_t i = 0; i < f; i++)
			l->affinity[i][i] = 1.0;
		free(common);
		free(v);
		return;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = &s[i];
	qsort(v, n, sizeof(*v), by_loop);
	for (size_t a = 0, b; a < n; a = b) {
		memcpy(c, zero, sizeof(c));
		for (b = a; b < n && v[b]->loop == v[a]->loop; b++) {
			int k = sa_layout_field(l, sa_layout_offset(l, v[b]));

			if (k >= 0)
				c[k] += (double)v[b]->cost;
		}
		for (uint32_t i = 0; i < f; i++)
			for (uint32_t j = i + 1; j < f && c[i] > 0; j++)
				if (c[j] > 0)
					common[i][j] += c[i] + c[j];
	}
	for (uint32_t i = 0; i < f; i++) {
		l->affinity[i][i] = 1.0;
		for (uint32_t j = i + 1; j < f; j++) {
			double all = (double)l->field[i].cost + (double)l->field[j].cost;
			double a = all > 0 ? common[i][j] / all : 0.0;

			l->affinity[i][j] = l->affinity[j][i] = a;
		}
	}
	free(common);
	free(v);
}

/*
 * Complete linkage: clusters join, the closest pair first, while the lowest affinity between
 * their members is at least threshold, so every two fields of a cluster reach it (single linkage
 * would chain a-b and b-c into a cluster where a and c are never used together).
 */
static void clusters(struct sa_layout *l, double threshold)
{
	double link[SA_FIELDS_MAX][SA_FIELDS_MAX];
	uint32_t owner[SA_FIELDS_MAX], f = l->nfields, num[SA_FIELDS_MAX];
	bool alive[SA_FIELDS_MAX];

	double total = 0;

	for (uint32_t i = 0; i < f; i++)
		total += (double)l->field[i].cost;
	l->nrare = 0;
	for (uint32_t i = 0; i < f; i++) {
		owner[i] = i;
		alive[i] = (double)l->field[i].cost >= SA_RARE_SHARE * total;
		l->nrare += !alive[i];
		for (uint32_t j = 0; j < f; j++)
			link[i][j] = l->affinity[i][j];
	}
	for (;;) {
		uint32_t ba = 0, bb = 0;
		double best = -1.0;

		for (uint32_t a = 0; a < f; a++)
			for (uint32_t b = a + 1; b < f && alive[a]; b++)
				if (alive[b] && link[a][b] > best) {
					best = link[a][b];
					ba = a;
					bb = b;
				}
		if (best < threshold)
			break;
		alive[bb] = false;
		for (uint32_t c = 0; c < f; c++) {
			double m = link[ba][c] < link[bb][c] ? link[ba][c] : link[bb][c];

			link[ba][c] = link[c][ba] = m;
			if (owner[c] == bb)
				owner[c] = ba;
		}
	}
	/* Number the clusters by their smallest offset: fields are sorted, so by first member. */
	for (uint32_t i = 0; i < f; i++)
		num[i] = UINT32_MAX;
	l->nclusters = 0;
	for (uint32_t i = 0; i < f; i++) {
		if ((double)l->field[i].cost < SA_RARE_SHARE * total) {
			l->cluster[i] = SA_NO_CLUSTER;
			continue;
		}
		if (num[owner[i]] == UINT32_MAX)
			num[owner[i]] = l->nclusters++;
		l->cluster[i] = num[owner[i]];
	}
}

/* Copies s[0..n) into dst (SA_NAME_MAX bytes), cut to fit, NUL-terminated. */
static void copy_name(char *dst, const char *s, size_t n)
{
	if (n >= SA_NAME_MAX)
		n = SA_NAME_MAX - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* A decimal number filling [s, end) exactly into *v; false otherwise. */
static bool parse_u64(const char *s, const char *end, uint64_t *v)
{
	*v = 0;
	if (s == end)
		return false;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || *v > (UINT64_MAX - 9) / 10)
			return false;
		*v = *v * 10 + (uint64_t)(*s - '0');
	}
	return true;
}

/* The last c in [s, end), or NULL. */
static const char *last_of(const char *s, const char *end, char c)
{
	while (end > s)
		if (*--end == c)
			return end;
	return NULL;
}

/* One member of a layout: its name [name, name + len), its offset. */
struct member {
	const char *name;
	size_t len;
	uint64_t off;
};

/*
 * The member at *m of a layout's member list "member@offset,...", which ends at end, into x, and
 * *m past it; false at end and for a member that does not parse.
 */
static bool next_member(const char **m, const char *end, struct member *x)
{
	const char *comma, *stop, *at;

	if (*m >= end)
		return false;
	comma = memchr(*m, ',', (size_t)(end - *m));
	stop = comma ? comma : end;
	at = last_of(*m, stop, '@');
	if (!at || !parse_u64(at + 1, stop, &x->off))
		return false;
	x->name = *m;
	x->len = (size_t)(at - *m);
	*m = comma ? comma + 1 : end;
	return true;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The member offsets of fields ("Name/size:member@offset,..."), ascending and distinct, into
 * l->member when its size is l->used, the size the fields are computed with; none otherwise.
 */
static void set_members(struct sa_layout *l, const char *fields)
{
	const char *colon = fields ? strrchr(fields, ':') : NULL, *end;
	uint32_t n = 0, k = 0;

	if (!colon || !l->used || sa_fields_size(fields) != l->used)
		return;
	end = colon + strlen(colon);
	for (const char *m = colon + 1; m < end && n < SA_FIELDS_MAX;) {
		struct member x;

		if (!next_member(&m, end, &x))
			return;
		l->member[n++] = x.off;
	}
	qsort(l->member, n, sizeof(l->member[0]), by_u64);
	for (uint32_t i = 0; i < n; i++)
		if (!k || l->member[i] != l->member[k - 1])
			l->member[k++] = l->member[i];
	l->nmembers = k;
}

uint64_t sa_layout_offset(const struct sa_layout *l, const struct sa_stream *s)
{
	uint64_t off = l->used ? s->offset % l->used : s->offset;
	uint32_t lo = 0, hi = l->nmembers;

	if (s->stride != 1)
		return off;
	/* The last member at or before off; off itself before the first. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (l->member[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? l->member[lo - 1] : off;
}

void sa_layout_build(struct sa_layout *l, const struct sa_stream *s, size_t n, uint64_t declared,
		     const char *fields, double threshold)
{
	memset(l, 0, sizeof(*l));
	l->declared = declared;
	choose_size(l, s, n);
	set_members(l, fields);
	for (size_t i = 0; i < n; i++)
		add_field(l, sa_layout_offset(l, &s[i]));
	for (size_t i = 0; i < n; i++) {
		int k = sa_layout_field(l, sa_layout_offset(l, &s[i]));
		struct sa_field *x = k >= 0 ? &l->field[k] : NULL;

		if (!x) {
			l->dropped_streams++;
			continue;
		}
		x->accesses += s[i].accesses;
		x->cost += s[i].cost;
		if (s[i].bytes > x->bytes)
			x->bytes = s[i].bytes;
	}
	affinities(l, s, n);
	clusters(l, threshold);
}

uint64_t sa_fields_size(const char *fields)
{
	const char *colon = fields ? strrchr(fields, ':') : NULL, *slash;
	uint64_t size;

	if (!colon || !(slash = last_of(fields, colon, '/')) || !parse_u64(slash + 1, colon, &size))
		return 0;
	return size;
}

bool sa_layout_name(struct sa_layout *l, const char *fields)
{
	const char *colon = strrchr(fields, ':'), *slash, *end;
	uint64_t size;

	if (!colon || !(slash = last_of(fields, colon, '/')) ||
	    !parse_u64(slash + 1, colon, &size))
		return false;
	end = colon + strlen(colon);
	/* The members do not parse: name nothing rather than some. */
	for (const char *m = colon + 1; m < end;) {
		struct member x;

		if (!next_member(&m, end, &x))
			return false;
	}
	copy_name(l->type, fields, (size_t)(slash - fields));
	for (uint32_t i = 0; i < l->nfields; i++) {
		uint64_t want = size ? l->field[i].offset % size : l->field[i].offset, best = 0;
		const char *name = NULL;
		size_t len = 0;
		struct member x;

		/* The first member with the greatest offset not above want. */
		for (const char *m = colon + 1; next_member(&m, end, &x);) {
			if (x.off <= want && (!name || x.off > best)) {
				name = x.name;
				len = x.len;
				best = x.off;
			}
		}
		if (!name || !len)
			continue;   /* before every member, or an anonymous one */
		copy_name(l->field[i].name, name, len);
		if (best != want) {
			size_t n = strlen(l->field[i].name);

			snprintf(l->field[i].name + n, SA_NAME_MAX - n, "+%llu",
				 (unsigned long long)(want - best));
		}
	}
	return true;
}

/* Appends to buf[*at..len) what fmt says, cutting at the end of buf. */
static void put(char *buf, size_t len, size_t *at, const char *fmt, unsigned long long v)
{
	int k;

	if (*at >= len)
		return;
	k = snprintf(buf + *at, len - *at, fmt, v);
	if (k > 0)
		*at += (size_t)k;
}

static void put_str(char *buf, size_t len, size_t *at, const char *s)
{
	int k;

	if (*at >= len)
		return;
	k = snprintf(buf + *at, len - *at, "%s", s);
	if (k > 0)
		*at += (size_t)k;
}

void sa_layout_advice(const struct sa_layout *l, char *buf, size_t len)
{
	size_t at = 0;

	if (!len)
		return;
	buf[0] = '\0';
	if (!l->nfields) {
		snprintf(buf, len, "no fields: no access was attributed");
		return;
	}
	if (l->nfields - l->nrare == 1) {   /* the others rare (rare_fields) */
		snprintf(buf, len, "do not split: one field is accessed");
		return;
	}
	if (l->nclusters == 1) {
		snprintf(buf, len, "do not split: all fields are used together");
		return;
	}
	put(buf, len, &at, "split into", 0);
	for (uint32_t c = 0; c < l->nclusters; c++) {
		bool first = true;

		put(buf, len, &at, c == 0 ? " {" : c + 1 == l->nclusters ? " and {" : ", {", 0);
		for (uint32_t i = 0; i < l->nfields; i++) {
			if (l->cluster[i] != c)
				continue;
			if (!first)
				put(buf, len, &at, ", ", 0);
			if (l->field[i].name[0])
				put_str(buf, len, &at, l->field[i].name);
			else
				put(buf, len, &at, "%llu", (unsigned long long)l->field[i].offset);
			first = false;
		}
		put(buf, len, &at, "}", 0);
	}
}
