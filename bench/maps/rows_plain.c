/*
 * The row maps of backend/map.h (struct mn_rows) as a plain chained hash map: an array of bucket
 * heads, one malloc'd node per row, rehashed at load 1, FNV-1a over the key's bytes.  That is
 * what std::unordered_map is, and what PROMPT's dependence module kept its rows in: the baseline
 * of the breakdown's "+ reduction maps" row (bench/run.sh; Table 8), and the row map's slow,
 * obviously correct twin in tests (tests/maps/test_rows.c, tests/dependence).  Its memo never
 * remembers a row, so that every instance pays a lookup, as PROMPT's did.
 *
 * Not in the backend: mnemo-backend-plain (CMakeLists.txt here) is mnemo-backend with this file
 * linked in, whose mn_rows_* functions take the place of backend/map.c's weak ones.
 */
#define _GNU_SOURCE   /* qsort_r */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"

struct node {
	struct node *next;           /* in its bucket's chain */
	uint64_t hash;               /* of key, kept for rehashing */
	uint64_t key[MN_ROWS_KEY_WORDS];
	struct mn_row row;           /* right after key: mn_row_key() */
};

struct plain {
	struct node **bucket;
	size_t nbucket;
};

static uint64_t plain_hash(const uint64_t *key)
{
	const unsigned char *b = (const unsigned char *)key;
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < MN_ROWS_KEY_WORDS * 8; i++)
		h = (h ^ b[i]) * UINT64_C(0x100000001b3);
	return h;
}

/* Twice the buckets, every node relinked; nodes stay where they are.  -1 without memory. */
static int rehash(struct plain *t)
{
	size_t nb = t->nbucket ? 2 * t->nbucket : 16;
	struct node **b = calloc(nb, sizeof(*b));

	if (!b)
		return -1;
	for (size_t i = 0; i < t->nbucket; i++) {
		struct node *n, *next;

		for (n = t->bucket[i]; n; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	}
	free(t->bucket);
	t->bucket = b;
	t->nbucket = nb;
	return 0;
}

struct mn_row *mn_rows_get(struct mn_rows *r, const uint64_t *key)
{
	struct plain *t = r->e;
	uint64_t h = plain_hash(key);
	struct node *n;

	if (!t && !(t = r->e = calloc(1, sizeof(*t))))
		return NULL;
	if (t->nbucket)
		for (n = t->bucket[h & (t->nbucket - 1)]; n; n = n->next)
			if (n->hash == h && !memcmp(n->key, key, sizeof(n->key)))
				return &n->row;
	/* load 1: grow; a map that cannot grow goes on with longer chains */
	if (r->n + 1 > t->nbucket && rehash(t) && !t->nbucket)
		return NULL;
	if (!(n = malloc(sizeof(*n))))
		return NULL;
	n->hash = h;
	memcpy(n->key, key, sizeof(n->key));
	n->row = (struct mn_row){ .min = UINT64_MAX };
	n->next = t->bucket[h & (t->nbucket - 1)];
	t->bucket[h & (t->nbucket - 1)] = n;
	r->n++;
	return &n->row;
}

bool mn_rows_grows(const struct mn_rows *r)
{
	(void)r;
	return false;   /* nodes never move: gen never changes */
}

struct mn_row *mn_rows_next(const struct mn_rows *r, struct mn_rows_cursor *c)
{
	const struct plain *t = r->e;
	struct node *n = c->node;

	if (n && (n = n->next)) {
		c->node = n;
		return &n->row;
	}
	while (t && c->i < t->nbucket)
		if ((c->node = n = t->bucket[c->i++]))
			return &n->row;
	return NULL;
}

void mn_rows_free(struct mn_rows *r)
{
	struct plain *t = r->e;

	for (size_t i = 0; t && i < t->nbucket; i++) {
		struct node *n, *next;

		for (n = t->bucket[i]; n; n = next) {
			next = n->next;
			free(n);
		}
	}
	if (t)
		free(t->bucket);
	free(t);
	if (!r->memo_lent)
		free(r->memo);
	memset(r, 0, sizeof(*r));
}

/* The memo: slots that stay empty (a hit needs k0 != 0), so every row is looked up. */
int mn_rows_memo_init(struct mn_rows *r, unsigned bits)
{
	if (bits < 1 || bits > 24 || r->memo)
		return -EINVAL;
	if (!(r->memo = calloc((size_t)1 << bits, sizeof(*r->memo))))
		return -ENOMEM;
	r->mshift = 32 - bits;
	return 0;
}

int mn_rows_memo_use(struct mn_rows *r, struct mn_rows_memo *slots, unsigned bits)
{
	if (bits < 1 || bits > 24 || r->memo)
		return -EINVAL;
	r->memo = slots;
	r->mshift = 32 - bits;
	r->memo_lent = true;
	return 0;
}

void mn_rows_memo_set(struct mn_rows *r, struct mn_rows_memo *m, uint64_t k0, uint64_t k1,
		      uint32_t k2, struct mn_row *row)
{
	(void)r, (void)m, (void)k0, (void)k1, (void)k2, (void)row;
}

void mn_rows_memo_flush(struct mn_rows *r)
{
	(void)r;
}
