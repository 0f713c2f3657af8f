/*
 * The pending edges of tables.h: open addressing, linear probing, hashed by map.h's mn_hash64().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "tables.h"

static inline uint64_t field_hash(uint32_t src, uint32_t offset)
{
	return mn_hash64(mn_map_key(src, offset));
}

static bool alive(const struct mn_objects *o, uint32_t s, uint32_t tag)
{
	return mn_obj(o, s)->live && (uint32_t)mn_obj(o, s)->serial == tag;
}

/* Rebuilds the table at size without its dead entries; 0 or -ENOMEM (then unchanged). */
static int rebuild(struct rds_pending *p, uint64_t size, const struct mn_objects *o)
{
	struct rds_pend *e = calloc(size, sizeof(*e));

	if (!e)
		return -ENOMEM;
	p->n = 0;
	for (uint64_t i = 0; p->e && i <= p->mask; i++) {
		const struct rds_pend *x = &p->e[i];
		uint64_t j;

		if (!x->src)
			continue;
		if (!alive(o, x->src, x->src_tag) || !alive(o, x->dst, x->dst_tag)) {
			p->dropped++;
			continue;
		}
		j = field_hash(x->src, x->offset) & (size - 1);
		while (e[j].src)
			j = (j + 1) & (size - 1);
		e[j] = *x;
		p->n++;
	}
	free(p->e);
	p->e = e;
	p->mask = size - 1;
	return 0;
}

int rds_pending_put(struct rds_pending *p, const struct mn_objects *o, uint32_t src,
		    uint64_t offset, uint32_t dst)
{
	uint32_t st = (uint32_t)mn_obj(o, src)->serial, dt = (uint32_t)mn_obj(o, dst)->serial;
	uint64_t size = p->e ? p->mask + 1 : 0, i;
	struct rds_pend *e;

	if (offset > UINT32_MAX)
		return -EOVERFLOW;
	if (4 * (p->n + 1) > 3 * size) {
		/* Full: drop the dead first; grow unless that left the table at most 3/8 full. */
		if (p->e && rebuild(p, size, o))
			return -ENOMEM;
		if ((!p->e || 8 * (p->n + 1) > 3 * size) && rebuild(p, size ? 2 * size : 256, o))
			return -ENOMEM;
	}
	for (i = field_hash(src, (uint32_t)offset) & p->mask;; i = (i + 1) & p->mask) {
		e = &p->e[i];
		if (!e->src || (e->src == src && e->offset == offset))
			break;
	}
	if (e->src && e->src_tag == st && e->dst == dst && e->dst_tag == dt) {
		e->stores++;
		return 0;
	}
	if (!e->src)
		p->n++;
	*e = (struct rds_pend){ src, dst, st, dt, (uint32_t)offset, 1 };
	return 0;
}

void rds_pending_take(struct rds_pending *p, const struct mn_objects *o,
		      bool (*take)(void *arg, const struct rds_pend *e), void *arg)
{
	uint64_t taken = 0;

	for (uint64_t i = 0; p->e && i <= p->mask; i++) {
		struct rds_pend *e = &p->e[i];

		if (e->src && alive(o, e->src, e->src_tag) && alive(o, e->dst, e->dst_tag) &&
		    take(arg, e)) {
			e->src = 0;   /* an empty entry: rebuild() below skips it */
			taken++;
		}
	}
	/* Without memory for the rebuild the holes stay: a later put into a field whose probe
	 * sequence crossed one may then add a second entry for it, which costs only space. */
	if (p->e && rebuild(p, p->mask + 1, o))
		p->n -= taken;
}

void rds_pending_free(struct rds_pending *p)
{
	free(p->e);
	memset(p, 0, sizeof(*p));
}
