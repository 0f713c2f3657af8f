/*
 * Happens-before by vector clocks over reusable thread slots (hb.h): the slots and their owners,
 * the sync objects' clocks in a bounded table, and the joins that acquire and release make.
 */
#include "hb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"   /* mn_hash64() */

#define SLOTS_INITIAL 16u

struct mn_hb_slot {
	uint64_t *vc;              /* its owner's clock: [cap] */
	uint64_t epoch;            /* its owner's epoch; once free, the last owner's last */
	uint64_t base;             /* epochs up to base are earlier owners' */
	uint64_t need;             /* last owner's epoch a new one must know: exact reuse */
	uint64_t freed;            /* tick of the last owner's end: oldest free goes first */
	uint32_t owner;            /* thread id, while live */
	bool live;
	bool settled;              /* the owner released once: reuse judged (blurred or not) */
	bool fresh;                /* no sync yet by the owner: mn_hb_start() may move it */
	bool released;             /* the owner's last synchronization was a release */
};

struct mn_hb_obj {
	uint64_t key;
	uint64_t *vc;              /* [n]; NULL: an empty bucket */
	uint64_t last;             /* tick of the last acquire or release */
	uint32_t n;
};

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static void set_current(struct mn_hb *hb, uint32_t s, uint32_t thread)
{
	struct mn_hb_slot *sl = &hb->slots[s];

	hb->slot = s;
	hb->thread = thread;
	hb->vc = sl->vc;
	hb->base = sl->base;
	hb->now = (uint64_t)s << MN_HB_EPOCH_BITS | sl->epoch;
}

/* The slot thread holds while live, or -1. */
static int64_t find_live(const struct mn_hb *hb, uint32_t thread)
{
	for (uint32_t s = 0; s < hb->nslots; s++)
		if (hb->slots[s].live && hb->slots[s].owner == thread)
			return s;
	return -1;
}

/* ---- Slots ----------------------------------------------------------------------------------- */

/* Doubles the clocks' width.  Clocks grown before a failure keep their room, unused. */
static int grow_slots(struct mn_hb *hb)
{
	uint32_t cap = hb->cap * 2;
	struct mn_hb_slot *slots;

	if (hb->cap > MN_HB_SLOTS_MAX)
		return -ENOMEM;
	slots = realloc(hb->slots, cap * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	memset(slots + hb->cap, 0, (cap - hb->cap) * sizeof(*slots));
	hb->slots = slots;
	for (uint32_t s = 0; s < hb->nslots; s++) {
		uint64_t *vc = realloc(slots[s].vc, cap * sizeof(*vc));

		if (!vc)
			return -ENOMEM;
		memset(vc + hb->cap, 0, (cap - hb->cap) * sizeof(*vc));
		slots[s].vc = vc;
	}
	hb->cap = cap;
	hb->vc = slots[hb->slot].vc;
	return 0;
}

/* A slot never owned, or -1 without memory (or slot numbers), counted. */
static int64_t new_slot(struct mn_hb *hb)
{
	uint64_t *vc = NULL;

	if (hb->nslots < MN_HB_SLOTS_MAX && (hb->nslots < hb->cap || grow_slots(hb) == 0))
		vc = calloc(hb->cap, sizeof(*vc));
	if (!vc) {
		hb->nomem++;
		return -1;
	}
	memset(&hb->slots[hb->nslots], 0, sizeof(hb->slots[0]));
	hb->slots[hb->nslots].vc = vc;
	return hb->nslots++;
}

static uint32_t count_live(const struct mn_hb *hb)
{
	uint32_t n = 0;

	for (uint32_t s = 0; s < hb->nslots; s++)
		n += hb->slots[s].live;
	return n;
}

/* A new slot may be made for a thread rather than reuse one: fewer than twice the threads live
 * (with it) plus the spare.  A reuse is exact only if the new owner learns the last owner's end
 * in time; the older a free slot, the likelier. */
static bool under_budget(const struct mn_hb *hb, uint32_t live)
{
	return hb->nslots < 2 * live + MN_HB_SLOTS_SPARE;
}

/* The free slot whose last owner ended first, or -1. */
static int64_t oldest_free(const struct mn_hb *hb)
{
	int64_t best = -1;

	for (uint32_t s = 0; s < hb->nslots; s++)
		if (!hb->slots[s].live && (best < 0 || hb->slots[s].freed < hb->slots[best].freed))
			best = s;
	return best;
}

/* thread becomes s's owner: epochs go on from the last owner's, the clock starts empty. */
static void occupy(struct mn_hb *hb, uint32_t s, uint32_t thread)
{
	struct mn_hb_slot *sl = &hb->slots[s];

	sl->base = sl->epoch;
	sl->epoch = sl->base + 1;
	memset(sl->vc, 0, hb->cap * sizeof(*sl->vc));
	sl->owner = thread;
	sl->live = true;
	sl->settled = false;
	sl->fresh = true;
	sl->released = false;
}

/* Undoes occupy() of a thread that has taken no stamp and not synchronized. */
static void vacate(struct mn_hb *hb, uint32_t s)
{
	struct mn_hb_slot *sl = &hb->slots[s];

	sl->epoch = sl->base;
	sl->live = false;
}

static void take(struct mn_hb *hb, uint32_t thread)
{
	int64_t s = oldest_free(hb), n = -1;

	if (s < 0 || under_budget(hb, count_live(hb) + 1))
		n = new_slot(hb);
	if (n >= 0)
		s = n;
	if (s < 0) {
		/* folded into slot 0: taken for one thread with its owner */
		set_current(hb, 0, thread);
		return;
	}
	occupy(hb, (uint32_t)s, thread);
	hb->threads++;
	set_current(hb, (uint32_t)s, thread);
}

void mn_hb_switch(struct mn_hb *hb, uint32_t thread)
{
	int64_t s;

	if (thread == 0) {
		hb->thread = 0;
		return;
	}
	s = find_live(hb, thread);
	if (s < 0)
		take(hb, thread);
	else
		set_current(hb, (uint32_t)s, thread);
}

/* A free slot whose last owner's end the clock vc has seen (the oldest such), or -1. */
static int64_t free_seen(const struct mn_hb *hb, const uint64_t *vc)
{
	int64_t best = -1;

	for (uint32_t s = 0; s < hb->nslots; s++) {
		const struct mn_hb_slot *sl = &hb->slots[s];

		if (!sl->live && vc[s] >= sl->need &&
		    (best < 0 || sl->freed < hb->slots[best].freed))
			best = s;
	}
	return best;
}

void mn_hb_start(struct mn_hb *hb, uint32_t thread, uint32_t creator)
{
	int64_t s = find_live(hb, thread), c = find_live(hb, creator), f;
	const uint64_t *cvc;

	if (s < 0 || c < 0 || s == c || !hb->slots[s].fresh)
		return;
	cvc = hb->slots[c].vc;
	if (cvc[s] >= hb->slots[s].need)
		return;   /* the slot it has is fine */
	f = free_seen(hb, cvc);
	if (f < 0 && under_budget(hb, count_live(hb)))
		f = new_slot(hb);   /* cvc may have moved */
	if (f < 0)
		return;
	vacate(hb, (uint32_t)s);
	occupy(hb, (uint32_t)f, thread);
	if (hb->thread == thread)
		set_current(hb, (uint32_t)f, thread);
}

void mn_hb_end(struct mn_hb *hb, uint32_t thread)
{
	int64_t s = find_live(hb, thread);
	struct mn_hb_slot *sl;

	if (s < 0)
		return;
	sl = &hb->slots[s];
	sl->live = false;
	sl->freed = ++hb->ticks;
	/* after a last release (it published epoch - 1) the thread is taken to have done nothing */
	sl->need = sl->released ? sl->epoch - 1 : sl->epoch;
	if (hb->thread == thread)
		hb->thread = 0;
}

/* ---- Objects --------------------------------------------------------------------------------- */

static struct mn_hb_obj *find(const struct mn_hb *hb, uint64_t key)
{
	for (uint64_t i = mn_hash64(key) & hb->mask;; i = (i + 1) & hb->mask) {
		struct mn_hb_obj *o = &hb->objs[i];

		if (!o->vc)
			return NULL;
		if (o->key == key)
			return o;
	}
}

static struct mn_hb_obj *place(struct mn_hb_obj *objs, uint64_t mask, uint64_t key)
{
	uint64_t i = mn_hash64(key) & mask;

	while (objs[i].vc)
		i = (i + 1) & mask;
	return &objs[i];
}

static void drop(struct mn_hb *hb, struct mn_hb_obj *o)
{
	hb->obj_words -= o->n;
	hb->nobjs--;
	hb->evicted++;
	free(o->vc);
}

/* The table again with buckets, keeping the objects used at or after tick keep. */
static int rehash(struct mn_hb *hb, uint64_t buckets, uint64_t keep)
{
	struct mn_hb_obj *objs = calloc(buckets, sizeof(*objs));

	if (!objs)
		return -ENOMEM;
	for (uint64_t i = 0; i <= hb->mask; i++) {
		struct mn_hb_obj *o = &hb->objs[i];

		if (!o->vc)
			continue;
		if (o->last < keep)
			drop(hb, o);
		else
			*place(objs, buckets - 1, o->key) = *o;
	}
	free(hb->objs);
	hb->objs = objs;
	hb->mask = buckets - 1;
	return 0;
}

/* The least tick t with at least want objects used before t: a histogram of the objects' last
 * ticks over [lo, hi], narrowed to the bucket where the count reaches want, 256 times a pass. */
static uint64_t oldest_ticks(const struct mn_hb *hb, uint64_t want)
{
	uint64_t lo = UINT64_MAX, hi = 0, below = 0;   /* below: objects used before lo */

	for (uint64_t i = 0; i <= hb->mask; i++) {
		if (hb->objs[i].vc) {
			lo = hb->objs[i].last < lo ? hb->objs[i].last : lo;
			hi = hb->objs[i].last > hi ? hb->objs[i].last : hi;
		}
	}
	while (lo < hi) {
		uint64_t width = (hi - lo) / 256 + 1, count[256] = { 0 };
		unsigned b = 0;

		for (uint64_t i = 0; i <= hb->mask; i++) {
			const struct mn_hb_obj *o = &hb->objs[i];

			if (o->vc && o->last >= lo && o->last <= hi)
				count[(o->last - lo) / width]++;
		}
		while (b < 255 && below + count[b] < want)
			below += count[b++];
		lo += b * width;
		hi = lo + width - 1 < hi ? lo + width - 1 : hi;
	}
	return lo + 1;
}

/* Full: drops the quarter of the objects used longest ago (at least one).  Without memory to
 * rebuild the table, drops them all. */
static void evict(struct mn_hb *hb)
{
	if (rehash(hb, hb->mask + 1, oldest_ticks(hb, hb->nobjs / 4 ? hb->nobjs / 4 : 1)) == 0)
		return;
	hb->nomem++;
	for (uint64_t i = 0; i <= hb->mask; i++)
		if (hb->objs[i].vc)
			drop(hb, &hb->objs[i]);
	memset(hb->objs, 0, (hb->mask + 1) * sizeof(*hb->objs));
}

/* key's object, added when new (NULL without memory). */
static struct mn_hb_obj *find_add(struct mn_hb *hb, uint64_t key)
{
	struct mn_hb_obj *o = find(hb, key);
	uint32_t n = hb->nslots;

	if (o)
		return o;
	if (hb->nobjs >= hb->max_objects)
		evict(hb);
	if ((hb->nobjs + 1) * 2 > hb->mask + 1 && rehash(hb, (hb->mask + 1) * 2, 0) < 0) {
		hb->nomem++;
		if ((hb->nobjs + 1) * 4 > (hb->mask + 1) * 3)
			return NULL;   /* too full to probe well */
	}
	o = place(hb->objs, hb->mask, key);
	o->vc = calloc(n, sizeof(*o->vc));
	if (!o->vc) {
		hb->nomem++;
		return NULL;
	}
	o->key = key;
	o->n = n;
	hb->nobjs++;
	hb->obj_words += n;
	return o;
}

/* Widens o's clock to every slot made; false if it stays narrower. */
static bool widen(struct mn_hb *hb, struct mn_hb_obj *o)
{
	uint32_t n = hb->nslots;
	uint64_t *vc;

	if (o->n >= n)
		return true;
	vc = realloc(o->vc, n * sizeof(*vc));
	if (!vc) {
		hb->nomem++;
		return false;
	}
	memset(vc + o->n, 0, (n - o->n) * sizeof(*vc));
	hb->obj_words += n - o->n;
	o->vc = vc;
	o->n = n;
	return true;
}

/* ---- Synchronization ------------------------------------------------------------------------- */

void mn_hb_acquire(struct mn_hb *hb, uint64_t object)
{
	struct mn_hb_slot *sl = &hb->slots[hb->slot];
	struct mn_hb_obj *o;

	if (hb->thread == 0)
		return;
	hb->ticks++;
	sl->fresh = false;
	sl->released = false;
	o = find(hb, object);
	if (!o)
		return;   /* never released (or evicted): nothing to learn */
	o->last = hb->ticks;
	/* o->n <= nslots <= cap.  The own slot's entry too: what o knows of earlier owners, and the
	 * thread's own epochs, which it knows anyway. */
	for (uint32_t i = 0; i < o->n; i++)
		sl->vc[i] = max64(sl->vc[i], o->vc[i]);
}

void mn_hb_release(struct mn_hb *hb, uint64_t object)
{
	uint32_t s = hb->slot;
	struct mn_hb_slot *sl = &hb->slots[s];
	struct mn_hb_obj *o;

	if (hb->thread == 0)
		return;
	hb->ticks++;
	if (!sl->settled) {
		/* from now on whoever learns the slot's epoch learns its last owner's too */
		sl->settled = true;
		hb->blurred += sl->vc[s] < sl->need;
	}
	o = find_add(hb, object);
	if (o) {
		o->last = hb->ticks;
		widen(hb, o);
		for (uint32_t i = 0; i < o->n; i++)
			o->vc[i] = max64(o->vc[i], i == s ? sl->epoch : sl->vc[i]);
	}
	sl->fresh = false;
	sl->released = true;
	if (sl->epoch < MN_HB_EPOCH_MASK)
		sl->epoch++;
	hb->now = (uint64_t)s << MN_HB_EPOCH_BITS | sl->epoch;
}

/* ---- Setup ----------------------------------------------------------------------------------- */

int mn_hb_create(struct mn_hb **hbp)
{
	struct mn_hb *hb = calloc(1, sizeof(*hb));

	if (!hb)
		return -ENOMEM;
	hb->cap = SLOTS_INITIAL;
	hb->slots = calloc(hb->cap, sizeof(*hb->slots));
	hb->mask = 63;
	hb->objs = calloc(hb->mask + 1, sizeof(*hb->objs));
	hb->max_objects = MN_HB_OBJECTS_DEFAULT;
	if (!hb->slots || !hb->objs || new_slot(hb) != 0) {
		mn_hb_destroy(hb);
		return -ENOMEM;
	}
	occupy(hb, 0, 1);
	hb->threads = 1;
	set_current(hb, 0, 1);
	*hbp = hb;
	return 0;
}

void mn_hb_destroy(struct mn_hb *hb)
{
	if (!hb)
		return;
	for (uint32_t s = 0; s < hb->nslots; s++)
		free(hb->slots[s].vc);
	free(hb->slots);
	if (hb->objs)
		for (uint64_t i = 0; i <= hb->mask; i++)
			free(hb->objs[i].vc);
	free(hb->objs);
	free(hb);
}

void mn_hb_limit(struct mn_hb *hb, uint64_t max)
{
	hb->max_objects = max < 16 ? 16 : max;
}

struct mn_hb_stats mn_hb_stats(const struct mn_hb *hb)
{
	struct mn_hb_stats st = {
		.threads = hb->threads,
		.slots = hb->nslots,
		.objects = hb->nobjs,
		.evicted = hb->evicted,
		.blurred = hb->blurred,
		.nomem = hb->nomem,
	};

	for (uint32_t s = 0; s < hb->nslots; s++)
		st.live += hb->slots[s].live;
	st.bytes = sizeof(*hb) + hb->cap * sizeof(*hb->slots) +
		   (size_t)hb->nslots * hb->cap * sizeof(uint64_t) +
		   (hb->mask + 1) * sizeof(*hb->objs) + hb->obj_words * sizeof(uint64_t);
	return st;
}
