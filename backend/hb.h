/*
 * Happens-before between the accesses of a program's threads, as ThreadSanitizer keeps it: vector
 * clocks advanced by the synchronization events the backend delivers (module.h, sync_acquire and
 * sync_release), so that a module can say whether an access of one thread is ordered before an
 * access of another by synchronization (a mutex, a join, a barrier, an atomic) or races with it.
 *
 *	struct mn_hb *hb;
 *	mn_hb_create(&hb);                           // in init(); thread 1 is current
 *	mn_hb_thread(hb, thread);                    // .thread
 *	mn_hb_start(hb, thread, creator);            // thread_start (a hint, see below)
 *	mn_hb_acquire(hb, object);                   // sync_acquire
 *	mn_hb_release(hb, object);                   // sync_release
 *	mn_hb_end(hb, thread);                       // thread_end
 *	uint64_t s = mn_hb_now(hb);                  // at an access: keep s with it
 *	if (mn_hb_before(hb, s)) ...                 // at a later access of any thread: ordered?
 *	mn_hb_destroy(hb);
 *
 * Clocks.  Each live thread holds a SLOT, a small index taken at its first mn_hb_thread() and
 * given back by mn_hb_end(), and a vector clock with one epoch per slot.  release(o) joins the
 * thread's clock into the object's and then advances the thread's own epoch; acquire(o) joins the
 * object's clock into the thread's.  A stamp is slot << 48 | epoch (2^48 releases of one slot do
 * not happen); mn_hb_before(s) is "the current thread's clock has reached s's epoch
 * in s's slot", and always true for the current thread's own stamps.  The calls must come in an
 * order consistent with happens-before, as the backend delivers them: a release before every
 * acquire that follows it in the program.  An acquire of an object nobody released is a no-op.
 *
 * Slot reuse.  A program may create any number of threads over its run; clocks are as wide as the
 * slots made, which the threads live at once bound (below).  A reused slot's epochs continue from
 * its last owner's, so old stamps stay comparable.  Exactness:
 *   - With no slot reused, mn_hb_before() is exact.
 *   - A true happens-before is never judged unordered (but see evicted and nomem below).
 *   - Knowing an epoch of a slot means knowing every earlier epoch of it.  When thread B takes the
 *     slot of A, which ended, that holds if A's last release happens before B's first release
 *     and A made no access after its last release (so when A's last event is the release of a
 *     join key).  If not, an access of A may be judged ordered before the accesses of a thread
 *     that synchronized only with B, or with a later owner of the slot; never in B's own view.
 *     stats.blurred counts the reuses where the first condition failed (the second, unseen,
 *     is assumed).
 *   - A new thread takes a new slot while there are fewer than twice the threads live plus
 *     MN_HB_SLOTS_SPARE, else the free slot freed longest ago.  mn_hb_start(), called before the
 *     thread's first stamp, moves it to a free slot whose last owner's end the creator has seen,
 *     or else to a new slot within that budget.  So with create/join churn (a thread joined
 *     before the next is created, or a pool's batch joined before the next batch) reuse is
 *     exact, and slots stay bounded by the threads live at once.
 *
 * Sync objects.  One clock per object ever released, in a table of at most max_objects (default
 * MN_HB_OBJECTS_DEFAULT, mn_hb_limit()); when full, the quarter used longest ago is dropped
 * (stats.evicted): a later acquire of one finds nothing, and what it would have ordered is judged
 * unordered.  Memory: O(slots^2 + max_objects * slots) words, whatever the number of threads.
 * Acquire and release cost O(slots) and a hash lookup; mn_hb_thread() on a change O(slots).
 *
 * Stamp 0 is no stamp: before everything (mn_hb_now() never returns it).
 *
 * Memory never fails the program: a thread that finds no memory for a slot shares slot 0 (taken
 * for the same thread as its owner), an object clock that cannot grow keeps what fits, an object
 * that cannot be stored is left out; each counted in stats.nomem.
 *
 * Not thread-safe: one per worker.  The struct is public only so that mn_hb_now() and
 * mn_hb_before() inline: use the functions.
 */
#ifndef MNEMO_HB_H
#define MNEMO_HB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MN_HB_EPOCH_BITS 48
#define MN_HB_EPOCH_MASK ((UINT64_C(1) << MN_HB_EPOCH_BITS) - 1)
#define MN_HB_SLOTS_MAX 65535u              /* slot numbers fit the stamp's 16 bits */
#define MN_HB_OBJECTS_DEFAULT 65536u
#define MN_HB_SLOTS_SPARE 8u                /* slots beyond twice the threads live (Slot reuse) */

struct mn_hb_slot;
struct mn_hb_obj;

struct mn_hb {
	/* The current thread: what the inline calls read. */
	uint64_t now;              /* its stamp: slot << 48 | epoch */
	const uint64_t *vc;        /* its clock, an epoch per slot: [cap] */
	uint64_t base;             /* its slot's epochs up to base are earlier owners' */
	uint32_t slot;             /* its slot */
	uint32_t thread;           /* its id; 0 after it ended (no current thread) */

	/* The rest is hb.c's. */
	struct mn_hb_slot *slots;  /* [nslots], room for cap */
	uint32_t nslots, cap;
	uint64_t ticks;            /* sync operations and thread ends so far: ages */
	struct mn_hb_obj *objs;    /* open addressing: [mask + 1], at most half full */
	uint64_t mask, nobjs, max_objects;
	uint64_t obj_words;        /* the objects' clocks' epochs allocated */
	uint64_t threads, evicted, blurred, nomem;
};

/* A new component, thread 1 current with slot 0.  Returns 0 or -ENOMEM. */
int mn_hb_create(struct mn_hb **hb);
void mn_hb_destroy(struct mn_hb *hb);

/* At most max objects' clocks kept (at least 16); call before the first release. */
void mn_hb_limit(struct mn_hb *hb, uint64_t max);

/* The calls that follow are thread's (0: none's); a thread not live takes a slot.  A compare when
 * thread is the current one; O(slots) out of line on a change. */
void mn_hb_switch(struct mn_hb *hb, uint32_t thread);
static inline void mn_hb_thread(struct mn_hb *hb, uint32_t thread)
{
	if (__builtin_expect(hb->thread != thread, 0))
		mn_hb_switch(hb, thread);
}

/* thread was created by creator (0: unknown).  Adds no order (the runtime's release and acquire
 * of the creation key do).  Call before thread's first stamp (module.h's thread_start is its
 * first event): if its slot's last owner's end is unknown to creator, it moves to a free slot
 * whose last owner's end creator has seen, or to a new slot (Slot reuse above). */
void mn_hb_start(struct mn_hb *hb, uint32_t thread, uint32_t creator);

/* The current thread's synchronization on object (any 64-bit key). */
void mn_hb_acquire(struct mn_hb *hb, uint64_t object);
void mn_hb_release(struct mn_hb *hb, uint64_t object);

/* thread finished: its slot is free for another.  Unknown threads are ignored.  When thread is the
 * current one, no thread is current until the next mn_hb_thread(): acquires and releases are
 * ignored, mn_hb_now() and mn_hb_before() answer as the ended thread. */
void mn_hb_end(struct mn_hb *hb, uint32_t thread);

/* The stamp of an access the current thread makes now (never 0).  It changes at its releases. */
static inline uint64_t mn_hb_now(const struct mn_hb *hb)
{
	return hb->now;
}

static inline uint32_t mn_hb_stamp_slot(uint64_t stamp)
{
	return (uint32_t)(stamp >> MN_HB_EPOCH_BITS);
}

static inline uint64_t mn_hb_stamp_epoch(uint64_t stamp)
{
	return stamp & MN_HB_EPOCH_MASK;
}

/* The stamp is the current thread's own (taken since it holds its slot). */
static inline bool mn_hb_mine(const struct mn_hb *hb, uint64_t stamp)
{
	return mn_hb_stamp_slot(stamp) == hb->slot && mn_hb_stamp_epoch(stamp) > hb->base;
}

/* The access stamped `stamp` (by mn_hb_now() of this component) happens before an access the
 * current thread makes now, or is the current thread's own. */
static inline bool mn_hb_before(const struct mn_hb *hb, uint64_t stamp)
{
	uint32_t s = mn_hb_stamp_slot(stamp);

	/* vc[own slot] holds what the thread learned of the slot's earlier owners */
	return hb->vc[s] >= mn_hb_stamp_epoch(stamp) || mn_hb_mine(hb, stamp);
}

struct mn_hb_stats {
	uint64_t threads;          /* threads that took a slot */
	uint32_t slots;            /* slots made: at most twice the most threads live at once,
				    * plus MN_HB_SLOTS_SPARE */
	uint32_t live;             /* threads live now */
	uint64_t objects;          /* sync objects' clocks held */
	uint64_t evicted;          /* objects' clocks dropped to stay within max_objects */
	uint64_t blurred;          /* reused slots whose new owner released before knowing the
				    * last owner's end (see Slot reuse above) */
	uint64_t nomem;            /* allocations that failed (or slot numbers, past 65535) */
	size_t bytes;              /* memory held */
};

struct mn_hb_stats mn_hb_stats(const struct mn_hb *hb);

#endif /* MNEMO_HB_H */
