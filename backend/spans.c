/* Span lists (spans.h): open addressing, power-of-two sized, at most half full. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "spans.h"

static size_t key_slot(const uint64_t *k, unsigned bits)
{
	return mn_rows_hash(k) & (((size_t)1 << bits) - 1);
}

static bool key_equal(const uint64_t *a, const uint64_t *b)
{
	return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]));
}

static struct mn_span_list *spans_slot(const struct mn_spans *t, const uint64_t *k)
{
	size_t mask = ((size_t)1 << t->bits) - 1, i = key_slot(k, t->bits);

	while (t->v[i].n && !key_equal(t->v[i].k, k))
		i = (i + 1) & mask;
	return &t->v[i];
}

static bool spans_grow(struct mn_spans *t)
{
	struct mn_spans g = { .bits = t->bits ? t->bits + 1 : 6, .n = t->n };

	if (!(g.v = calloc((size_t)1 << g.bits, sizeof(*g.v))))
		return false;
	for (size_t i = 0; t->v && i < (size_t)1 << t->bits; i++)
		if (t->v[i].n)
			*spans_slot(&g, t->v[i].k) = t->v[i];
	free(t->v);
	*t = g;
	return true;
}

static bool list_put(struct mn_span_list *l, uint64_t v)
{
	if (l->cap - l->n < 10) {
		uint32_t cap = l->cap ? 2 * l->cap : 16;
		uint8_t *b = realloc(l->bytes, cap);

		if (!b)
			return false;
		l->bytes = b;
		l->cap = cap;
	}
	do {
		l->bytes[l->n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	return true;
}

bool mn_spans_add(struct mn_spans *t, const uint64_t *k, uint64_t serial)
{
	struct mn_span_list *l;

	if (2 * (t->n + 1) > (size_t)1 << t->bits && !spans_grow(t))
		return false;
	l = spans_slot(t, k);
	if (!l->n) {   /* a new key: its first delta is from 0 */
		if (!list_put(l, serial)) {
			free(l->bytes);
			*l = (struct mn_span_list){ 0 };
			return false;
		}
		memcpy(l->k, k, sizeof(l->k));
		l->last = serial;
		t->n++;
		return true;
	}
	if (serial == l->last)
		return true;   /* this access counted the row already */
	if (!list_put(l, serial - l->last))
		return false;
	l->last = serial;
	return true;
}

/* The next serial of a list being read at *p (< end), after prev. */
static uint64_t list_next(const uint8_t **p, uint64_t prev)
{
	uint64_t v = 0;

	for (unsigned shift = 0;; shift += 7) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return prev + v;
	}
}

/* The union of lists a and b into a new list u; returns the serials they share. */
static uint64_t list_union(const struct mn_span_list *a, const struct mn_span_list *b,
			   struct mn_span_list *u, bool *ok)
{
	const uint8_t *pa = a->bytes, *pb = b->bytes, *ea = pa + a->n, *eb = pb + b->n;
	uint64_t x = pa < ea ? list_next(&pa, 0) : 0, y = pb < eb ? list_next(&pb, 0) : 0;
	bool hx = true, hy = true;
	uint64_t shared = 0, prev = 0;

	*u = (struct mn_span_list){ 0 };
	memcpy(u->k, a->k, sizeof(u->k));
	*ok = true;
	while (hx || hy) {
		uint64_t v = !hy || (hx && x <= y) ? x : y;

		shared += hx && hy && x == y;
		if (hx && x == v)
			hx = pa < ea ? (x = list_next(&pa, x), true) : false;
		if (hy && y == v)
			hy = pb < eb ? (y = list_next(&pb, y), true) : false;
		*ok = *ok && list_put(u, v - prev);
		prev = v;
	}
	u->last = prev;
	return shared;
}

int mn_spans_merge(struct mn_spans *into, struct mn_spans *from,
		    void (*dup)(void *arg, const uint64_t *k, uint64_t n), void *arg)
{
	int err = 0;

	for (size_t i = 0; from->v && i < (size_t)1 << from->bits; i++) {
		struct mn_span_list *f = &from->v[i], *t, u;
		uint64_t shared;
		bool ok;

		if (!f->n)
			continue;
		if (2 * (into->n + 1) > (size_t)1 << into->bits && !spans_grow(into)) {
			err = -ENOMEM;
			continue;
		}
		t = spans_slot(into, f->k);
		if (!t->n) {   /* into never logged the row: the list moves */
			*t = *f;
			into->n++;
		} else {
			shared = list_union(t, f, &u, &ok);
			if (shared)
				dup(arg, f->k, shared);
			if (!ok) {
				free(u.bytes);
				err = -ENOMEM;   /* into keeps its own list; from's is dropped */
			} else {
				free(t->bytes);
				*t = u;
			}
			free(f->bytes);
		}
		*f = (struct mn_span_list){ 0 };
	}
	from->n = 0;
	return err;
}

void mn_spans_free(struct mn_spans *t)
{
	for (size_t i = 0; t->v && i < (size_t)1 << t->bits; i++)
		free(t->v[i].bytes);
	free(t->v);
	memset(t, 0, sizeof(*t));
}
