/*
 * The event queue: single producer, many consumers, ping-pong buffers in a memfd (queue.h says what
 * it is for, queue_internal.h lays out the shared memory and the protocol).
 *
 * The producer's fast path (mn_queue_push() in queue.h) only moves a thread-local cursor and issues
 * streaming stores.  Everything here is the cold side: set-up, the buffer boundary (publish the full
 * buffer, wait for the next one to be handed back), the consumers' pop and release, end of stream,
 * and the death of either side.  The Lamport mode (the overhead breakdown's baseline queue, one
 * record published at a time) shares all of it but the buffers' protocol, which is not here: it is
 * bench/queue/lamport.c, linked only into the bench's builds.  This file forwards to it at four
 * places (push_slow(), mn_queue_producer_start(), mn_queue_pop(), mn_queue_release()) and refuses
 * a Lamport queue in a build without it (mn_queue_create(), header_valid()).
 *
 * Waiting spins MN_QUEUE_SPIN pause instructions, then sleeps on a futex in the shared memory (not
 * FUTEX_PRIVATE: the waker is another process) with a MN_QUEUE_WAIT_NS timeout; every timeout the
 * waiter checks that the other side is still alive.  A producer lane whose last wait for a free
 * buffer slept spins only MN_QUEUE_SPIN_SLEPT: the consumers are behind, a buffer takes them far
 * longer than a spin to read, and a spinning thread takes a core from them (two spinning program
 * threads and a backend are three on two cores).  The producer checks consumers with kill(pid, 0)
 * and /proc/<pid>/stat (a consumer that is the program's child stays a zombie: it has exited but
 * kill() still finds it); it opens no long-lived fd, since the program may close or reuse any fd.
 * A consumer watches the producer through a pidfd, which turns readable once it exits, zombie or
 * not.
 *
 * Lanes.  Each thread of the producing process writes its own stream, in a lane of its own (queue.h,
 * mn_queue_producer_start(); the layout in queue_internal.h).  A lane's private state is a struct
 * mn_qplane; a thread finds its own through the thread-local my_plane, which the fast path never
 * reads.  A thread without one (mn_q_end NULL) comes to the slow path, which takes a free lane from
 * free_lanes (a bitmap, one compare-and-swap: lock-free, so a signal handler on a new thread may
 * take one) and registers the thread with a pthread key whose destructor, at the thread's exit,
 * publishes its partial buffer and frees the lane.  The next thread to take the lane starts in a
 * fresh buffer, so that each buffer holds one thread's records.  The producer thread holds lane 0
 * for good; mn_queue_producer_finish(), from any thread, publishes lane 0 and ends the stream, and
 * the consumers read the other lanes' unpublished buffers as tails (mn_queue_pop()).
 *
 * Everything the producer calls in the slow path is async-signal-safe (no malloc, no locks, no
 * stdio) and preserves errno, because any instrumented instruction, in a signal handler too, can
 * end up here.  The producer's private state is guarded by a try-lock (`busy`): whoever cannot take
 * it (a signal handler that interrupted the slow path, or a finish racing with it) never waits for
 * it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/mempolicy.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "queue.h"
#include "queue_internal.h"
#include "queue_local.h"

/*
 * The Lamport mode (bench/queue/lamport.c), weak: undefined, hence NULL, in a build without it
 * (mnemo-backend, the runtime of a program built for the ping-pong queue), where mn_queue_create()
 * and mn_queue_attach() refuse a Lamport queue, so that none of them is ever called there.
 */
#pragma weak mn_q_lamport_pop
#pragma weak mn_q_lamport_release
#pragma weak mn_queue_push_lamport

static inline bool lamport_linked(void)
{
	return mn_q_lamport_pop != NULL;
}

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U  /* Linux 6.3; older kernels reject it with EINVAL */
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define MN_QUEUE_ATTACH_NS      (20 * 1000000000LL)    /* a consumer must attach within this */
#define MN_QUEUE_NODE_BITS      1024u                  /* >= the kernel's MAX_NUMNODES */

/* The one producer of this process; set by mn_queue_producer_start(). */
static struct mn_queue *producer;

/* Default visibility even in the runtime's copy: an instrumented program exports them (and the
 * two push paths below) to the shared libraries it loads (runtime/unit.h). */
#define MN_UNIT_VISIBLE __attribute__((visibility("default")))
MN_UNIT_VISIBLE __thread uint64_t *mn_q_cur __attribute__((tls_model("initial-exec")));
MN_UNIT_VISIBLE __thread uint64_t *mn_q_end __attribute__((tls_model("initial-exec")));
MN_UNIT_VISIBLE __thread unsigned char mn_q_busy __attribute__((tls_model("initial-exec")));
MN_UNIT_VISIBLE __thread uint64_t *mn_q_base __attribute__((tls_model("initial-exec")));

/* The lane this thread holds in queue my_q, or NULL: the slow path's, never the fast path's. */
static __thread struct mn_qplane *my_plane __attribute__((tls_model("initial-exec")));
/* The number mn_queue_number_thread() gave this thread ahead of its lane, or 0. */
static __thread uint32_t my_number __attribute__((tls_model("initial-exec")));
static __thread struct mn_queue *my_q __attribute__((tls_model("initial-exec")));

/* Its destructor hands a thread's lane back at the thread's exit (lane_exit()). */
static pthread_key_t lane_key;
static pthread_once_t lane_key_once = PTHREAD_ONCE_INIT;
static bool lane_key_made;

/*
 * A consumer's zeroing thread (mn_queue_zero_behind()): the slots this consumer frees wait here,
 * at most nlanes * nbufs of them (a slot is freed once per lap), to be zeroed and handed back.
 */
struct zeroer {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t head, tail;           /* jobs[tail % slots .. head % slots) wait */
	bool stop;                     /* detach: finish the jobs, then return */
	struct { uint32_t k, lap; } jobs[];
};

/* ---- Small helpers ------------------------------------------------------------------------------ */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Sleeps while *w == val, at most timeout_ns.  Returns 0 when woken, -ETIMEDOUT, -EAGAIN, -EINTR. */
static int futex_wait(uint32_t *w, uint32_t val, long timeout_ns)
{
	struct timespec ts = { .tv_sec = timeout_ns / 1000000000L, .tv_nsec = timeout_ns % 1000000000L };

	if (syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, NULL, 0) == 0)
		return 0;
	return -errno;
}

static void futex_wake(uint32_t *w, int n)
{
	syscall(SYS_futex, w, FUTEX_WAKE, n, NULL, NULL, 0);
}

/* Appends the decimal form of v; async-signal-safe. */
static char *put_uint(char *p, char *end, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(tmp));
	while (n && p < end)
		*p++ = tmp[--n];
	return p;
}

static char *put_str(char *p, char *end, const char *s)
{
	while (*s && p < end)
		*p++ = *s++;
	return p;
}

/*
 * Whether process pid has exited, for a process that may not be our child.  A zombie has exited
 * too (kill() still finds it), which /proc shows.  Async-signal-safe; opens a transient fd only.
 */
static bool pid_exited(pid_t pid)
{
	char path[40], stat[256], *p = path, *end = path + sizeof(path) - 1;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return false;
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	p = put_str(p, end, "/proc/");
	p = put_uint(p, end, (uint64_t)pid);
	p = put_str(p, end, "/stat");
	*p = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return false;
	stat[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')', which comm may itself contain. */
	p = strrchr(stat, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* ---- Freeing a slot (either side) ---------------------------------------------------------------- */

/* Slots of every lane. */
static inline uint32_t nslots(const struct mn_queue *q)
{
	return q->nlanes * q->nbufs;
}

/*
 * Called by whoever cleared the last bit of ctl[g].readers for lap `lap`: zeroes the records, so
 * the buffer is all zeros past the next lap's records, then hands the slot back.
 */
static void hand_back(struct mn_queue *q, uint32_t g, uint32_t lap)
{
	struct mn_qctl *c = ctl_of(q, g);
	uint64_t used = mn_load_relaxed(&c->used);  /* ordered by the acquire that showed us the buffer */
	uint64_t size = buf_bytes_of(q, g);

	memset(buf_of(q, g), 0, used <= size ? used : size);
	/* Every reader's accesses and the zeroing happen before the producer's next streaming stores;
	 * pairs with the acquire loads of freed in acquire_slot() and take_tail(). */
	mn_store_release(&c->freed, lap + 1);
	/* Store buffering with acquire_slot(): either it sees freed, or we see prod_waiting set. */
	mn_fence_seq_cst();
	if (mn_load_relaxed(&lane_of(q, g / q->nbufs)->prod_waiting))
		futex_wake(&c->freed, 1);
}

/* Bytes a consumer zeroes itself rather than hand to its zeroing thread: the hand-off (a mutex, a
 * wake-up) costs more than zeroing a buffer this small, such as the few records a thread writes
 * between two ordering points. */
#define ZERO_INLINE_BYTES 16384

static void free_slot(struct mn_queue *q, uint32_t k, uint32_t lap)
{
	struct zeroer *z = q->zeroer;

	/* Ordered by the acquire that showed us the buffer, as in hand_back(). */
	if (!z || mn_load_relaxed(&ctl_of(q, k)->used) <= ZERO_INLINE_BYTES) {
		hand_back(q, k, lap);
		return;
	}
	/* The mutex orders our reads of the buffer (and, through the readers' release sequence,
	 * every other reader's) before the zeroing thread's writes. */
	pthread_mutex_lock(&z->mu);
	z->jobs[z->head % nslots(q)].k = k;
	z->jobs[z->head % nslots(q)].lap = lap;
	z->head++;
	pthread_cond_signal(&z->cv);
	pthread_mutex_unlock(&z->mu);
}

static void *zeroer_main(void *arg)
{
	struct mn_queue *q = arg;
	struct zeroer *z = q->zeroer;

	pthread_mutex_lock(&z->mu);
	for (;;) {
		uint32_t k, lap;

		while (z->tail == z->head && !z->stop)
			pthread_cond_wait(&z->cv, &z->mu);
		if (z->tail == z->head)
			break;
		k = z->jobs[z->tail % nslots(q)].k;
		lap = z->jobs[z->tail % nslots(q)].lap;
		z->tail++;
		pthread_mutex_unlock(&z->mu);
		hand_back(q, k, lap);
		pthread_mutex_lock(&z->mu);
	}
	pthread_mutex_unlock(&z->mu);
	return NULL;
}

/* Frees q's zeroing thread's state, once the thread is gone or never started. */
static void zeroer_free(struct mn_queue *q)
{
	struct zeroer *z = q->zeroer;

	q->zeroer = NULL;
	pthread_cond_destroy(&z->cv);
	pthread_mutex_destroy(&z->mu);
	free(z);
}

/* Detach: the zeroing thread hands back what waits, and is gone. */
static void zeroer_stop(struct mn_queue *q)
{
	struct zeroer *z = q->zeroer;

	if (!z)
		return;
	pthread_mutex_lock(&z->mu);
	z->stop = true;
	pthread_cond_signal(&z->cv);
	pthread_mutex_unlock(&z->mu);
	pthread_join(z->thread, NULL);
	zeroer_free(q);
}

MN_EXPORT __attribute__((cold)) int mn_queue_zero_behind(struct mn_queue *q)
{
	struct zeroer *z;
	sigset_t all, old;
	int err;

	if (!q || q->is_producer || q->lamport || q->zeroer)
		return -EINVAL;
	z = calloc(1, sizeof(*z) + nslots(q) * sizeof(z->jobs[0]));
	if (!z)
		return -ENOMEM;
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->cv, NULL);
	q->zeroer = z;
	/* No signal of the backend's is for this thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&z->thread, NULL, zeroer_main, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		zeroer_free(q);
	return -err;
}

/*
 * Clears `bits` from the readers of the buffer at seq (slot k, lap); frees the slot if that
 * cleared the last one.
 */
static void clear_readers(struct mn_queue *q, uint32_t k, uint32_t lap, uint32_t bits)
{
	/* Release: our reads of the buffer happen before whoever frees it; acquire: if we free it,
	 * every earlier reader's release is ours (release sequence on readers). */
	uint32_t old = mn_fetch_and_acq_rel(&ctl_of(q, k)->readers, ~bits);

	if ((old & bits) && !(old & ~bits))
		free_slot(q, k, lap);
}

/* ---- Producer ---------------------------------------------------------------------------------- */

static void count_drop_thread(struct mn_queue *q)
{
	/* Threads differ in their TLS block, a few pages apart at least; hash its address. */
	uint64_t a = (uint64_t)(uintptr_t)&mn_q_cur >> 12;
	unsigned i = (unsigned)((a * UINT64_C(0x9e3779b97f4a7c15)) >> 60) % MN_QUEUE_DROP_STRIPES;

	mn_fetch_add_relaxed(&q->dropped_threads[i].n, 1);
}

static void count_drop_other(struct mn_queue *q)
{
	mn_fetch_add_relaxed(&q->dropped_other, 1);
}

/* The queue cannot go on: tell the hook once, then drop everything.  Under busy. */
static void fail(struct mn_queue *q, const char *why)
{
	q->disabled = true;
	if (q->failed)
		return;
	q->failed = true;
	if (why != q->why) {
		char *p = put_str(q->why, q->why + sizeof(q->why) - 1, why);

		*p = '\0';
	}
	if (q->hook)
		q->hook(q->why);
}

/*
 * Publishes lane pl's buffer pl->seq holding `used` bytes of records.  Returns 0, or -EPIPE when
 * every consumer has detached (nobody would ever hand the buffer back).  Under pl->busy.
 */
static int publish_ticket(struct mn_queue *q, struct mn_qplane *pl, uint64_t used, uint64_t ticket)
{
	struct mn_qhdr *h = q->hdr;
	uint32_t g = slot_index(q, pl->lane, pl->seq), lap = lap_of(q, pl->seq);
	struct mn_qctl *c = ctl_of(q, g);
	/* Pairs with the release in mn_queue_detach(); a detach we miss here is caught by
	 * reap_detached() when the producer next waits for this slot. */
	uint32_t readers = q->all_mask & ~mn_load_acquire(&h->detached);

	if (!readers)
		return -EPIPE;
	/* Drain the streaming stores of this buffer before any consumer can see it; pairs with the
	 * acquire load of the lane's published count in mn_queue_pop(). */
	mn_stream_fence();
	mn_store_relaxed(&c->used, used);
	mn_store_relaxed(&c->ticket, ticket);
	mn_store_relaxed(&c->thread, pl->thread);
	mn_store_relaxed(&c->readers, readers);
	mn_store_relaxed(&c->filled, lap + 1);
	pl->seq++;
	/* Publish: the records (drained above), used, thread, readers and filled happen before the
	 * lane's new count; pairs with the acquire load in pop_published(). */
	/* No tail to look for in this lane until it holds a buffer again. */
	mn_store_relaxed(&lane_of(q, pl->lane)->holding, 0);
	mn_store_release(&lane_of(q, pl->lane)->published, (uint32_t)pl->seq);
	/* The count happens before the wake-up word moves; pairs with the acquire loads of
	 * hdr->stream in mn_queue_pop() (which then looks at the lanes) and mn_queue_detach(). */
	mn_fetch_add_release(&h->stream, 2);
	/* Store buffering with mn_queue_pop(): either a consumer about to sleep sees the new count, or
	 * we see it in sleepers and wake it. */
	mn_fence_seq_cst();
	if (mn_load_relaxed(&h->sleepers))
		futex_wake(&h->stream, INT_MAX);
	return 0;
}

static int publish(struct mn_queue *q, struct mn_qplane *pl, uint64_t used)
{
	return publish_ticket(q, pl, used, 0);
}

/*
 * While waiting for slot g to come back from lap-1: consumers that detached after that buffer was
 * published (or that the producer forgot) will never release it, so clear their bits; if that was
 * the last one, the producer frees the slot itself.
 */
static void reap_detached(struct mn_queue *q, uint32_t g, uint32_t lap)
{
	/* Pairs with the release in mn_queue_detach() / mn_queue_forget_consumer(). */
	uint32_t gone = mn_load_acquire(&q->hdr->detached);

	if (lap && (mn_load_relaxed(&ctl_of(q, g)->readers) & gone))
		clear_readers(q, g, lap - 1, gone);
}

/*
 * Every liveness check period, while waiting for a slot: fails the queue when a consumer the slot
 * waits for exited without detaching, or never attached in time.  Returns true if it failed.
 */
static bool check_consumers_of(struct mn_queue *q, uint32_t pending)
{
	char why[sizeof(q->why)], *p = why, *end = why + sizeof(why) - 1;

	for (unsigned i = 0; i < q->nconsumers; i++) {
		struct mn_qslot *s = slot_of(q, i);
		uint32_t state;

		if (!(pending & (UINT32_C(1) << i)))
			continue;
		/* Pairs with the release in mn_queue_attach(): pid is valid once state says attached. */
		state = mn_load_acquire(&s->state);
		if (state == MN_QSLOT_ATTACHED) {
			pid_t pid = mn_load_relaxed(&s->pid);

			if (!pid_exited(pid))
				continue;
			p = put_str(p, end, "backend process ");
			p = put_uint(p, end, (uint64_t)pid);
			p = put_str(p, end, " exited");
		} else if (state == MN_QSLOT_NONE && now_ns() - q->start_ns > MN_QUEUE_ATTACH_NS) {
			p = put_str(p, end, "backend ");
			p = put_uint(p, end, i);
			p = put_str(p, end, " did not attach within ");
			p = put_uint(p, end, MN_QUEUE_ATTACH_NS / 1000000000LL);
			p = put_str(p, end, " s");
		} else {
			continue;
		}
		*p = '\0';
		fail(q, why);
		return true;
	}
	return false;
}

static bool check_consumers(struct mn_queue *q, uint32_t g)
{
	return check_consumers_of(q, mn_load_relaxed(&ctl_of(q, g)->readers) &
				     ~mn_load_acquire(&q->hdr->detached));
}

/*
 * Waits until lane pl's slot for pl->seq has been handed back for this lap.  Returns 0, -EPIPE
 * after failing the queue, or -ECANCELED when the stream was ended meanwhile (a finish on another
 * thread).  Under pl->busy.  (fail() writes the handle's failure state without lane 0's busy: two
 * lanes failing at once may both run the hook, which only prints.)
 */
static int acquire_slot(struct mn_queue *q, struct mn_qplane *pl)
{
	struct mn_qhdr *h = q->hdr;
	struct mn_qlane *ln = lane_of(q, pl->lane);
	uint32_t g = slot_index(q, pl->lane, pl->seq), lap = lap_of(q, pl->seq);
	struct mn_qctl *c = ctl_of(q, g);
	int64_t next_check;
	int ret = 0;

	for (int i = 0, n = pl->slept ? MN_QUEUE_SPIN_SLEPT : MN_QUEUE_SPIN; i < n; i++) {
		/* The last reader's accesses and its zeroing happen before our streaming stores into the
		 * slot; pairs with the release store in hand_back(). */
		if (mn_load_acquire(&c->freed) == lap) {
			pl->slept = false;
			return 0;
		}
		mn_cpu_relax();
	}
	pl->slept = true;
	next_check = now_ns() + MN_QUEUE_WAIT_NS;
	for (;;) {
		uint32_t v;

		if (mn_load_relaxed(&h->stream) & MN_QSTREAM_END) {
			ret = -ECANCELED;
			break;
		}
		reap_detached(q, g, lap);
		mn_store_relaxed(&ln->prod_waiting, 1);
		/* Store buffering with hand_back(): either we see its freed, or it sees prod_waiting. */
		mn_fence_seq_cst();
		/* As above, pairs with the release store in hand_back(). */
		v = mn_load_acquire(&c->freed);
		if (v == lap)
			break;
		futex_wait(&c->freed, v, MN_QUEUE_WAIT_NS);
		if (now_ns() >= next_check) {
			if (check_consumers(q, g)) {
				ret = -EPIPE;
				break;
			}
			next_check = now_ns() + MN_QUEUE_WAIT_NS;
		}
	}
	mn_store_relaxed(&ln->prod_waiting, 0);
	return ret;
}

/* Bytes of slot g's buffer up to its last record, found by scanning (the cursor is not ours to
 * read). */
static uint64_t scan_used(const struct mn_queue *q, uint32_t g)
{
	const volatile uint64_t *b = buf_of(q, g);
	uint64_t words = buf_bytes_of(q, g) / 8, n = words;

	while (n && !b[n - 1])
		n--;
	/* The last non-zero word belongs to a record starting at most MN_WIRE_MAX_WORDS - 1 words
	 * earlier, so it ends at most MN_WIRE_MAX_WORDS - 1 words later. */
	if (n)
		n += MN_WIRE_MAX_WORDS - 1;
	if (n > words)
		n = words;
	return n * 8;
}

/* ---- Lanes -------------------------------------------------------------------------------------- */

/* The lane's producer holds buffer pl->seq: a consumer may look for a tail in it.  Pairs with the
 * acquire load of holding in take_tail(). */
static void hold(struct mn_queue *q, struct mn_qplane *pl)
{
	struct mn_qlane *ln = lane_of(q, pl->lane);

	mn_store_relaxed(&ln->held_seq, (uint32_t)pl->seq);
	mn_store_release(&ln->holding, 1);
}

/* Takes a free lane other than 0 for this thread, or returns NULL.  Lock-free and
 * async-signal-safe (one compare-and-swap per attempt). */
static struct mn_qplane *lane_claim(struct mn_queue *q)
{
	for (unsigned w = 0; w < (q->nlanes + 63) / 64; w++) {
		uint64_t bits = mn_load_relaxed(&q->prod->free_lanes[w]);

		while (bits) {
			uint64_t bit = bits & -bits;

			/* Acquire: the last holder's writes to the lane's state (lane_exit()) happen
			 * before ours; pairs with the release in lane_exit(). */
			if (mn_cas_acq_rel(&q->prod->free_lanes[w], &bits, bits & ~bit))
				return &q->prod->planes[w * 64 + (unsigned)__builtin_ctzll(bit)];
		}
	}
	return NULL;
}

/*
 * Gives the calling thread (which holds no lane, with mn_q_busy set) a lane of q: its number, its
 * thread key, its TLS.  The lane's buffer is taken by the push that follows.  Returns the lane, or
 * NULL when none is free.
 */
static struct mn_qplane *lane_take(struct mn_queue *q)
{
	struct mn_qplane *pl;

	if (mn_load_relaxed(&q->disabled) || !lane_key_made)
		return NULL;
	pl = lane_claim(q);
	if (!pl)
		return NULL;
	pl->cur_ptr = &mn_q_cur;
	pl->thread = my_number ? my_number : mn_fetch_add_relaxed(&q->prod->threads, 1) + 1;
	/* The lane's name happens before any buffer of it is published; the tail's reader pairs with
	 * the release in publish() or in mn_queue_producer_finish(). */
	mn_store_relaxed(&lane_of(q, pl->lane)->thread, pl->thread);
	my_q = q;
	my_plane = pl;
	/* Async-signal-safe in glibc for a key below PTHREAD_KEY_2NDLEVEL_SIZE (32): a store to the
	 * thread's own key array.  A key taken first in the process is one of those. */
	pthread_setspecific(lane_key, pl);
	return pl;
}

/*
 * The pthread key's destructor, at the exit of a thread that holds a lane: publishes what it wrote
 * since its last buffer and frees the lane for another thread.  Events the thread makes after this
 * (in another destructor) take a lane again, and the key brings us back.
 */
static void lane_exit(void *arg)
{
	struct mn_qplane *pl = arg;
	struct mn_queue *q = mn_load_acquire(&producer);
	uint32_t w, bit;

	if (!q || q != my_q || pl != my_plane || pl->lane == 0)
		return;   /* a queue that was destroyed or replaced (a fork child's new session) */
	/* A signal handler's push from here on is nested, hence dropped. */
	mn_store_signal(&mn_q_busy, 1);
	mn_signal_fence();
	if (!mn_exchange_acquire(&pl->busy, 1)) {
		uint64_t *base = buf_of(q, slot_index(q, pl->lane, pl->seq));

		if (pl->filling && !mn_load_relaxed(&q->disabled) && mn_q_cur > base &&
		    mn_q_cur <= base + q->lane_bytes / 8) {
			pl->filling = false;
			/* -EPIPE (nobody left to read it) is fine. */
			publish(q, pl, (uint64_t)(mn_q_cur - base) * 8);
		}
		pl->cur_ptr = NULL;
		/* Pairs with the exchange above and in the next holder's slow path. */
		mn_store_release(&pl->busy, 0);
	}
	mn_q_end = NULL;
	mn_signal_fence();
	mn_q_cur = mn_q_base = NULL;
	my_plane = NULL;
	my_q = NULL;
	w = pl->lane / 64;
	bit = pl->lane % 64;
	/* Our writes to the lane's state happen before its next holder's; pairs with the
	 * compare-and-swap in lane_claim(). */
	mn_fetch_or_release(&q->prod->free_lanes[w], UINT64_C(1) << bit);
	mn_store_signal(&mn_q_busy, 0);
}

static void lane_key_make(void)
{
	lane_key_made = pthread_key_create(&lane_key, lane_exit) == 0;
}

/* ---- The slow path ------------------------------------------------------------------------------ */

/*
 * The lane's next buffer, which acquire_slot() has just handed it: held, the n words written at
 * its start, and the cursors moved there, base and cur first and end last (the cursor rules of
 * push_lane() below).
 */
static void enter_buffer(struct mn_queue *q, struct mn_qplane *pl, const uint64_t *words, unsigned n)
{
	uint32_t g = slot_index(q, pl->lane, pl->seq);
	uint64_t *base = buf_of(q, g);

	pl->filling = true;
	hold(q, pl);
	for (unsigned i = 0; i < n; i++)
		mn_stream_store64(base + i, words[i]);
	mn_q_base = base;
	mn_q_cur = base + n;
	/* Base and cursor are in place before the end makes them usable, as a handler on this thread
	 * sees them; compiler-only. */
	mn_signal_fence();
	mn_q_end = base + buf_bytes_of(q, g) / 8;
}

/*
 * The slow path, for the lane pl the calling thread holds.  The cursor rules that keep it safe
 * against signal handlers on the thread (which may push, or finish, at any instruction):
 *   - mn_q_end is NULL whenever the cursors must not be used (a boundary in progress, disabled), so
 *     a handler's push then lands here and is dropped;
 *   - new cursors are stored base and cur first, end last, so no push ever sees a valid end with a
 *     cursor that does not belong to it.
 * The cursor found here is, relative to the current buffer [base, end]:
 *   in it, fitting      the buffer changed between the fast path's check and this call: write it;
 *   in it, crossing end this push owns the boundary: publish, wait for the next buffer;
 *   anywhere else       stale: a push stored it after a signal handler's pushes moved to a new
 *                       buffer (and then came here, from its re-check, or the next push did): find
 *                       the new buffer's records by scanning, and go on after them;
 *   no buffer yet       a lane just taken (or one whose buffer was published at its last
 *                       holder's exit): wait for the next buffer.
 */
static void push_lane(struct mn_queue *q, struct mn_qplane *pl, const uint64_t *words, unsigned n)
{
	uint64_t *base, *end, *c;
	uint32_t g;

	if (mn_exchange_acquire(&pl->busy, 1)) {
		/* A signal handler interrupted the slow path, or a finish, on this lane. */
		count_drop_other(q);
		return;
	}
	if (mn_load_relaxed(&q->disabled) || n == 0 || n > MN_WIRE_MAX_WORDS)
		goto drop;
	if (!pl->filling) {
		if (pl->lane == 0)
			goto drop;   /* finished (or failed) on lane 0 */
		/* A lane taken: its next buffer is this thread's alone. */
		if (acquire_slot(q, pl) < 0)
			goto drop;
		enter_buffer(q, pl, words, n);
		goto unlock;
	}
	g = slot_index(q, pl->lane, pl->seq);
	base = buf_of(q, g);
	end = base + buf_bytes_of(q, g) / 8;
	c = mn_q_cur;
	if (c < base || c > end) {
		/* NEVER in a program without signal handlers that push: a stale cursor. */
		c = base + scan_used(q, g) / 8;
		mn_q_cur = c;
	}
	if (c + n <= end) {
		mn_q_cur = c + n;
		mn_signal_fence();
		for (unsigned i = 0; i < n; i++)
			mn_stream_store64(c + i, words[i]);
		goto unlock;
	}

	/* This push owns the boundary.  From here a handler's event is dropped (mn_q_end NULL). */
	mn_q_end = NULL;
	mn_signal_fence();
	pl->filling = false;
	if (publish(q, pl, (uint64_t)(c - base) * 8) < 0) {
		fail(q, "every backend detached");
		goto drop;
	}
	if (acquire_slot(q, pl) < 0)
		goto drop;
	enter_buffer(q, pl, words, n);
	goto unlock;
drop:
	mn_q_end = NULL;
	count_drop_other(q);
unlock:
	/* Our lane-state writes happen before the next holder's; pairs with the exchange. */
	mn_store_release(&pl->busy, 0);
}

static void push_slow(const uint64_t *words, unsigned n)
{
	/* Pairs with the release store in mn_queue_producer_start(). */
	struct mn_queue *q = mn_load_acquire(&producer);
	struct mn_qplane *pl;
	int saved_errno;

	if (!q)
		return;
	if (q->lamport) {
		/* Every inline push comes here in that mode (mn_q_end stays NULL): the
		 * runtime's own events, and any caller not generated for it. */
		mn_queue_push_lamport(words, n);
		return;
	}
	saved_errno = errno;
	pl = my_q == q ? my_plane : NULL;
	if (!pl && getpid() == q->pid)
		pl = lane_take(q);
	if (!pl)
		count_drop_thread(q);   /* no free lane (or disabled, or a fork child) */
	else
		push_lane(q, pl, words, n);
	errno = saved_errno;
}

/* Entered from mn_queue_push() with mn_q_busy set: it stays set throughout, so that a signal
 * handler's push is dropped and counted (mn_queue_push_nested()) rather than racing with this one,
 * and is cleared at the end. */
MN_UNIT_VISIBLE __attribute__((cold, noinline)) void mn_queue_push_slow(const uint64_t *words, unsigned n)
{
	push_slow(words, n);
	mn_store_signal(&mn_q_busy, 0);
}

MN_UNIT_VISIBLE __attribute__((cold, noinline)) void mn_queue_push_nested(void)
{
	/* Pairs with the release store in mn_queue_producer_start(). */
	struct mn_queue *q = mn_load_acquire(&producer);

	if (!q)
		return;
	if (my_q != q || !my_plane)
		count_drop_thread(q);
	else
		count_drop_other(q);
}

/*
 * mn_queue_order() for lane pl, which the calling thread holds and is filling: the buffer up to
 * the cursor (empty or not) gets the next ticket and is published, and the thread goes on in a
 * new one.  The
 * ticket is taken only once nothing can stop the publish, so that no consumer waits for a ticket
 * that never comes.  Under pl->busy; returns the ticket, or 0.
 */
static uint64_t order_lane(struct mn_queue *q, struct mn_qplane *pl)
{
	uint32_t g = slot_index(q, pl->lane, pl->seq);
	uint64_t *base = buf_of(q, g), *end = base + buf_bytes_of(q, g) / 8, *c = mn_q_cur;
	uint64_t ticket;

	/* An empty buffer is published too: the thread's earlier buffers, published without a
	 * ticket, must still come before whatever another thread does after this point. */
	if (c < base || c > end)
		return 0;   /* a stale cursor (a signal handler's push moved it): NEVER here */
	mn_q_end = NULL;
	mn_signal_fence();
	pl->filling = false;
	/* Orders this thread's synchronization (just done, or about to be undone) among every
	 * thread's: relaxed is enough, the read-modify-write order of one word is total. */
	ticket = mn_fetch_add_relaxed(&q->hdr->tickets, 1) + 1;
	if (publish_ticket(q, pl, (uint64_t)(c - base) * 8, ticket) < 0) {
		fail(q, "every backend detached");
		return 0;
	}
	if (acquire_slot(q, pl) >= 0)   /* else later events are dropped (mn_q_end stays NULL) */
		enter_buffer(q, pl, NULL, 0);
	return ticket;
}

MN_EXPORT uint64_t mn_queue_order(void)
{
	/* Pairs with the release store in mn_queue_producer_start(). */
	struct mn_queue *q = mn_load_acquire(&producer);
	struct mn_qplane *pl;
	uint64_t ticket = 0;
	int saved_errno;

	if (!q || q->lamport || mn_load_signal(&mn_q_busy))
		return 0;   /* a handler that interrupted a push: its thread's order is the push's */
	mn_store_signal(&mn_q_busy, 1);
	pl = my_q == q ? my_plane : NULL;
	if (!pl || mn_exchange_acquire(&pl->busy, 1)) {
		mn_store_signal(&mn_q_busy, 0);
		return 0;
	}
	saved_errno = errno;
	if (pl->filling && !mn_load_relaxed(&q->disabled))
		ticket = order_lane(q, pl);
	errno = saved_errno;
	/* Pairs with the exchange above and in the next holder's slow path. */
	mn_store_release(&pl->busy, 0);
	mn_store_signal(&mn_q_busy, 0);
	return ticket;
}

MN_EXPORT uint32_t mn_queue_reserve_thread(void)
{
	struct mn_queue *q = mn_load_acquire(&producer);

	if (!q || q->lamport || getpid() != q->pid)
		return 0;
	return mn_fetch_add_relaxed(&q->prod->threads, 1) + 1;
}

MN_EXPORT void mn_queue_number_thread(uint32_t number)
{
	my_number = number;
}

MN_EXPORT uint32_t mn_queue_self(void)
{
	struct mn_queue *q = mn_load_acquire(&producer);

	return q && my_q == q && my_plane ? my_plane->thread : 0;
}

/* The producer's lanes (struct mn_qprod), zeroed, in a mapping of their own; 0 or -errno. */
static int prod_map(struct mn_queue *q, uint32_t nlanes)
{
	size_t bytes = sizeof(struct mn_qprod) + nlanes * sizeof(struct mn_qplane);
	void *p;

	bytes = (bytes + MN_QUEUE_PAGE - 1) & ~(size_t)(MN_QUEUE_PAGE - 1);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	q->prod = p;
	q->prod->bytes = bytes;
	return 0;
}

static void prod_unmap(struct mn_queue *q)
{
	if (q->prod)
		munmap(q->prod, q->prod->bytes);
	q->prod = NULL;
}

static int memfd_open(void)
{
	int fd = (int)syscall(SYS_memfd_create, "mnemo-queue", MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);

	if (fd < 0 && errno == EINVAL)  /* before Linux 6.3 */
		fd = (int)syscall(SYS_memfd_create, "mnemo-queue", MFD_ALLOW_SEALING);
	return fd < 0 ? -errno : fd;
}

MN_EXPORT int mn_queue_create(struct mn_queue **qp, const struct mn_queue_config *cfg)
{
	struct mn_queue *q = NULL;
	struct mn_qhdr *h;
	uint64_t hdr_bytes, bufs_bytes, lane_bytes, extra_map, total;
	uint32_t nlanes;
	void *map = MAP_FAILED;
	int fd = -1, ret;

	if (!qp || !cfg)
		return -EINVAL;
	*qp = NULL;
	if (cfg->buf_bytes < MN_QUEUE_PAGE || cfg->buf_bytes % MN_QUEUE_PAGE || cfg->nbufs < 2 ||
	    cfg->nbufs > 1024 || cfg->nconsumers < 1 || cfg->nconsumers > MN_QUEUE_MAX_CONSUMERS ||
	    cfg->threads >= MN_QUEUE_MAX_LANES || cfg->lane_bytes % MN_QUEUE_PAGE)
		return -EINVAL;
	/* Lamport mode: linked in, and one consumer, which frees what it read; several would each
	 * need an index for the producer to wait on.  One lane: its ring is the producer thread's. */
	if (cfg->lamport && (!lamport_linked() || cfg->nconsumers != 1 || cfg->threads))
		return -EINVAL;
	nlanes = 1 + cfg->threads;
	lane_bytes = cfg->lane_bytes ? cfg->lane_bytes : cfg->buf_bytes / 16;
	lane_bytes &= ~(uint64_t)(MN_QUEUE_PAGE - 1);
	if (lane_bytes < MN_QUEUE_PAGE)
		lane_bytes = MN_QUEUE_PAGE;
	hdr_bytes = mn_qhdr_bytes(cfg->nbufs, nlanes);
	if (hdr_bytes > UINT32_MAX || cfg->buf_bytes > (UINT64_MAX / 4 - hdr_bytes) / cfg->nbufs / 2 ||
	    lane_bytes > (UINT64_MAX / 4 - hdr_bytes) / cfg->nbufs / 2 / nlanes ||
	    cfg->extra_bytes > UINT64_MAX / 4)
		return -EINVAL;
	bufs_bytes = (uint64_t)cfg->buf_bytes * cfg->nbufs +
		     lane_bytes * cfg->nbufs * (nlanes - 1);
	extra_map = ((uint64_t)cfg->extra_bytes + MN_QUEUE_PAGE - 1) & ~(uint64_t)(MN_QUEUE_PAGE - 1);
	total = hdr_bytes + bufs_bytes + extra_map;
	if (total > (uint64_t)SSIZE_MAX)
		return -EINVAL;

	if (posix_memalign((void **)&q, MN_QUEUE_LINE, sizeof(*q)))
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	ret = prod_map(q, nlanes);
	if (ret)
		goto fail;
	for (uint32_t l = 0; l < nlanes; l++) {
		q->prod->planes[l].lane = l;
		if (l)   /* lane 0 is the producer thread's */
			q->prod->free_lanes[l / 64] |= UINT64_C(1) << (l % 64);
	}
	fd = memfd_open();
	if (fd < 0) {
		ret = fd;
		goto fail;
	}
	if (ftruncate(fd, (off_t)total) < 0) {
		ret = -errno;
		goto fail;
	}
	/* The size can no longer change under the mappings (which would SIGBUS); best effort. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}

	h = map;  /* a new memfd reads as zeros: only the non-zero fields are written */
	h->magic = MN_QUEUE_MAGIC;
	h->version = MN_QUEUE_VERSION;
	h->header_bytes = (uint32_t)hdr_bytes;
	h->buf_bytes = cfg->buf_bytes;
	h->nbufs = cfg->nbufs;
	h->nconsumers = cfg->nconsumers;
	h->bufs_off = hdr_bytes;
	h->extra_off = hdr_bytes + bufs_bytes;
	h->extra_bytes = cfg->extra_bytes;
	h->map_bytes = total;
	h->producer_pid = getpid();
	h->mode = cfg->lamport ? MN_QMODE_LAMPORT : MN_QMODE_PINGPONG;
	h->nlanes = nlanes;
	h->lane_bytes = lane_bytes;
	h->lanes_off = mn_qlanes_off(cfg->nbufs, nlanes);

	q->base = map;
	q->lamport = cfg->lamport;
	q->ring_words = (uint64_t)cfg->buf_bytes * cfg->nbufs / 8;
	q->hdr = h;
	q->map_bytes = total;
	q->buf_bytes = cfg->buf_bytes;
	q->lane_bytes = lane_bytes;
	q->bufs_off = hdr_bytes;
	q->lanes_off = h->lanes_off;
	q->nbufs = cfg->nbufs;
	q->nlanes = nlanes;
	q->nconsumers = cfg->nconsumers;
	q->is_producer = true;
	q->fd = fd;
	q->pid = getpid();
	q->all_mask = cfg->nconsumers == 32 ? UINT32_MAX : (UINT32_C(1) << cfg->nconsumers) - 1;
	q->pidfd = -1;
	*qp = q;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	prod_unmap(q);
	free(q);
	return ret;
}

/*
 * NUMA placement (DESIGN "Queue": buffers near the threads that use them).  The producer's node is
 * the one that matters: it writes every byte with streaming stores, and the runtime binds the
 * backends to the same node.  A raw mbind() rather than libnuma's wrapper of it, so that the
 * runtime linked into programs needs no libnuma (runtime/runtime.c says why).  On a shmem
 * mapping the policy is the file's (a shared policy over those pages), not this mapping's: a
 * consumer's first touch obeys it too.  The kernel refuses, with EINVAL, a node that has no memory
 * or that the process's cpuset does not allow.
 */
MN_EXPORT int mn_queue_place(struct mn_queue *q, int node)
{
	unsigned long mask[MN_QUEUE_NODE_BITS / (8 * sizeof(unsigned long))] = { 0 };
	const unsigned long bits = 8 * sizeof(unsigned long);

	if (!q || !q->is_producer || node < 0 || node >= (int)MN_QUEUE_NODE_BITS)
		return -EINVAL;
	if (q->started)
		return -EBUSY;
	mask[(unsigned)node / bits] = 1UL << ((unsigned)node % bits);
	/* maxnode counts one more than the bits the kernel reads (mbind(2), "maxnode"). */
	if (syscall(SYS_mbind, q->base + q->bufs_off, (unsigned long)(q->hdr->extra_off - q->bufs_off),
		    MPOL_PREFERRED, mask, (unsigned long)MN_QUEUE_NODE_BITS + 1, 0UL))
		return -errno;
	return 0;
}

MN_EXPORT int mn_queue_fd(const struct mn_queue *q)
{
	return q && q->is_producer ? q->fd : -1;
}

MN_EXPORT void *mn_queue_extra(struct mn_queue *q)
{
	return q ? q->base + q->hdr->extra_off : NULL;
}

MN_EXPORT size_t mn_queue_extra_bytes(const struct mn_queue *q)
{
	return q ? (size_t)q->hdr->extra_bytes : 0;
}

MN_EXPORT void mn_queue_producer_start(struct mn_queue *q)
{
	struct mn_qplane *pl;

	if (!q || !q->is_producer || q->started)
		return;
	if (!q->lamport && q->nlanes > 1)
		pthread_once(&lane_key_once, lane_key_make);
	pl = &q->prod->planes[0];
	q->started = true;
	q->pid = getpid();
	q->start_ns = now_ns();
	q->prod->threads = 1;
	pl->cur_ptr = &mn_q_cur;
	pl->thread = 1;
	lane_of(q, 0)->thread = 1;
	if (!q->lamport)
		hold(q, pl);
	pl->seq = 0;
	pl->filling = !q->lamport;  /* ping-pong: slot 0, lap 0, free from the start */
	my_q = q;
	my_plane = pl;
	/* A consumer that attaches from now on watches this process; one attached earlier watches the
	 * creator, which is the same process unless the caller split them.  Pairs with the acquire in
	 * mn_queue_attach(). */
	mn_store_release(&q->hdr->producer_pid, (int32_t)q->pid);
	if (q->lamport) {
		/* mn_q_end stays NULL, so that inline pushes reach the slow path, which forwards
		 * them to mn_queue_push_lamport(); a base marks this thread's cursors as live. */
		mn_q_base = buf_of(q, 0);
		mn_store_release(&producer, q);
		return;
	}
	mn_q_base = buf_of(q, 0);
	mn_q_cur = buf_of(q, 0);
	/* Base and cursor are in place before the end makes them usable (cursor rules at
	 * mn_queue_push_slow()); compiler-only. */
	mn_signal_fence();
	mn_q_end = buf_of(q, 0) + q->buf_bytes / 8;
	/* The handle's fields above happen before any slow path that finds it; pairs with the acquire
	 * load in mn_queue_push_slow(). */
	mn_store_release(&producer, q);
}

MN_EXPORT void mn_queue_set_failure_hook(struct mn_queue *q, void (*hook)(const char *why))
{
	if (q)
		q->hook = hook;
}

MN_EXPORT int mn_queue_forget_consumer(struct mn_queue *q, unsigned index)
{
	if (!q || !q->is_producer || index >= q->nconsumers)
		return -EINVAL;
	mn_store_release(&slot_of(q, index)->state, MN_QSLOT_DETACHED);
	/* Pairs with the acquire loads of detached in publish() and reap_detached(). */
	mn_fetch_or_release(&q->hdr->detached, UINT32_C(1) << index);
	return 0;
}

MN_EXPORT void mn_queue_producer_finish(struct mn_queue *q)
{
	int saved_errno = errno;
	struct mn_qplane *pl;

	if (!q || !q->is_producer || !q->started || getpid() != q->pid)
		goto out;  /* not the producing process: a fork child must not end the parent's stream */
	pl = &q->prod->planes[0];
	if (!mn_exchange_acquire(&pl->busy, 1)) {
		if (pl->filling && !q->disabled) {
			uint32_t k = slot_index(q, 0, pl->seq);
			uint64_t *base = buf_of(q, k), used;

			if (&mn_q_cur == pl->cur_ptr && mn_q_cur >= base &&
			    mn_q_cur <= base + q->buf_bytes / 8) {
				/* A push this handler interrupted has not moved the cursor yet: its
				 * record, not yet whole, is left out. */
				used = (uint64_t)(mn_q_cur - base) * 8;
				/* Later events take the slow path and are dropped; the cursor stays
				 * valid for a push this interrupted (cursor rules above). */
				mn_q_end = NULL;
				mn_signal_fence();
			} else {
				/* Another thread: the producer thread's cursor is not ours to read. */
				used = scan_used(q, k);
			}
			if (used)
				publish(q, pl, used);  /* -EPIPE (nobody left to read it) is fine */
		}
		pl->filling = false;
		/* Nothing more of lane 0's to look for after the end. */
		mn_store_relaxed(&lane_of(q, 0)->holding, 0);
		/* Every lane's slow path drops from now on. */
		mn_store_relaxed(&q->disabled, true);
		/* Pairs with the exchange above. */
		mn_store_release(&pl->busy, 0);
	}
	/*
	 * The end of stream: everything the caller wrote before (the end-of-run record in the extra
	 * region) and the last publish happen before it; pairs with the acquire load of hdr->stream in
	 * mn_queue_pop().  A read-modify-write, so that it cannot undo a publish racing with it.
	 */
	mn_fetch_or_release(&q->hdr->stream, MN_QSTREAM_END);
	futex_wake(&q->hdr->stream, INT_MAX);
out:
	errno = saved_errno;
}

MN_EXPORT void mn_queue_producer_abandon(struct mn_queue *q)
{
	mn_q_end = NULL;
	mn_q_cur = mn_q_base = NULL;
	my_plane = NULL;
	my_q = NULL;
	if (!q || !q->is_producer)
		return;
	q->disabled = true;  /* process-local: the parent's copy of the handle is untouched */
	/*
	 * A fork child: swap its shared mapping for private anonymous memory at the same address
	 * (one call, so the range is never unmapped in between).  Nothing here reads the queue
	 * again, but a push that a fork() in a signal handler interrupted may still store its
	 * record after the handler returns: it lands in the child's private pages.  If the swap
	 * fails the child keeps the mapping until it exits or execs, as without it.
	 */
	if (getpid() != q->pid)
		mmap(q->base, q->map_bytes, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

MN_EXPORT uint64_t mn_queue_dropped(const struct mn_queue *q)
{
	return q ? mn_queue_dropped_threads(q) + mn_load_relaxed(&q->dropped_other) : 0;
}

MN_EXPORT uint64_t mn_queue_dropped_threads(const struct mn_queue *q)
{
	uint64_t n = 0;

	if (!q)
		return 0;
	for (int i = 0; i < MN_QUEUE_DROP_STRIPES; i++)
		n += mn_load_relaxed(&q->dropped_threads[i].n);
	return n;
}

MN_EXPORT void mn_queue_destroy(struct mn_queue *q)
{
	if (!q)
		return;
	if (!q->is_producer) {
		mn_queue_detach(q);
		return;
	}
	if (q->started && my_q == q) {
		mn_q_end = NULL;
		mn_q_cur = mn_q_base = NULL;
		my_plane = NULL;
		my_q = NULL;
	}
	if (mn_load_relaxed(&producer) == q)
		mn_store_release(&producer, NULL);
	munmap(q->base, q->map_bytes);
	close(q->fd);
	prod_unmap(q);
	free(q);
}

/* ---- Consumer ---------------------------------------------------------------------------------- */

/* Checks a header read from an untrusted fd against itself and the file size. */
static bool header_valid(const struct mn_qhdr *h, uint64_t file_bytes)
{
	uint64_t bufs;

	if (h->magic != MN_QUEUE_MAGIC || h->version != MN_QUEUE_VERSION)
		return false;
	if (h->mode > MN_QMODE_LAMPORT ||
	    (h->mode == MN_QMODE_LAMPORT && (!lamport_linked() || h->nconsumers != 1 ||
					     h->nlanes != 1)))
		return false;
	if (h->nbufs < 2 || h->nbufs > 1024 || h->nconsumers < 1 ||
	    h->nconsumers > MN_QUEUE_MAX_CONSUMERS || h->buf_bytes < MN_QUEUE_PAGE ||
	    h->buf_bytes % MN_QUEUE_PAGE || h->nlanes < 1 || h->nlanes > MN_QUEUE_MAX_LANES ||
	    h->lane_bytes < MN_QUEUE_PAGE || h->lane_bytes % MN_QUEUE_PAGE)
		return false;
	if (h->header_bytes != mn_qhdr_bytes(h->nbufs, h->nlanes) ||
	    h->bufs_off != h->header_bytes || h->lanes_off != mn_qlanes_off(h->nbufs, h->nlanes))
		return false;
	if (h->buf_bytes > (UINT64_MAX / 4) / h->nbufs / 2 ||
	    h->lane_bytes > (UINT64_MAX / 4) / h->nbufs / 2 / h->nlanes)
		return false;
	bufs = h->buf_bytes * h->nbufs + h->lane_bytes * h->nbufs * (h->nlanes - 1);
	return h->extra_off == h->bufs_off + bufs && h->extra_bytes <= UINT64_MAX / 4 &&
	       h->map_bytes == file_bytes && h->map_bytes >= h->extra_off + h->extra_bytes;
}

MN_EXPORT int mn_queue_attach(struct mn_queue **qp, int fd, unsigned index)
{
	struct mn_queue *q = NULL;
	struct mn_qhdr h;
	struct stat st;
	void *map = MAP_FAILED;
	uint32_t none = MN_QSLOT_NONE;
	struct mn_qslot *s;
	int ret;

	if (!qp)
		return -EINVAL;
	*qp = NULL;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size < (off_t)MN_QUEUE_PAGE)
		return -EPROTO;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return errno ? -errno : -EPROTO;
	if (!header_valid(&h, (uint64_t)st.st_size))
		return -EPROTO;
	if (index >= h.nconsumers)
		return -EINVAL;

	if (posix_memalign((void **)&q, MN_QUEUE_LINE, sizeof(*q)))
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	q->pidfd = -1;
	q->cons = calloc(1, sizeof(*q->cons) + h.nlanes * sizeof(q->cons->cseq[0]));
	if (!q->cons) {
		ret = -ENOMEM;
		goto fail;
	}
	q->cons->next_ticket = 1;   /* tickets count from 1; 0 is none */
	map = mmap(NULL, h.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	q->base = map;
	q->hdr = map;
	q->map_bytes = h.map_bytes;
	q->buf_bytes = h.buf_bytes;
	q->lane_bytes = h.lane_bytes;
	q->bufs_off = h.bufs_off;
	q->lanes_off = h.lanes_off;
	q->nbufs = h.nbufs;
	q->nlanes = h.nlanes;
	q->nconsumers = h.nconsumers;
	q->lamport = h.mode == MN_QMODE_LAMPORT;
	q->ring_words = h.buf_bytes * h.nbufs / 8;
	q->fd = -1;
	q->index = index;
	q->bit = UINT32_C(1) << index;

	s = slot_of(q, index);
	mn_store_relaxed(&s->pid, (int32_t)getpid());
	/* pid happens before the state that makes it valid; pairs with the acquire in
	 * check_consumers().  A compare-and-swap, so that an index attaches once. */
	if (!mn_cas_acq_rel(&s->state, &none, MN_QSLOT_ATTACHED)) {
		ret = -EBUSY;
		goto fail;
	}

	/* Pairs with the release store in mn_queue_producer_start(). */
	q->producer_pid = mn_load_acquire(&q->hdr->producer_pid);
	q->pidfd = (int)syscall(SYS_pidfd_open, q->producer_pid, 0);
	if (q->pidfd < 0 && errno == ESRCH)
		q->dead = true;  /* gone already: read what it left */
	*qp = q;
	return 0;
fail:
	if (map != MAP_FAILED)
		munmap(map, h.map_bytes);
	free(q->cons);
	free(q);
	return ret;
}

/* Whether the producer process has exited (zombie or reaped). */
static bool producer_exited(struct mn_queue *q)
{
	if (q->pidfd >= 0) {
		struct pollfd p = { .fd = q->pidfd, .events = POLLIN };

		if (poll(&p, 1, 0) <= 0)
			return false;  /* not yet (or EINTR: look again next time) */
		if (p.revents & POLLIN)
			return true;  /* readable once the process exited */
		q->pidfd = -1;    /* NEVER: the fd went away under us; fall back */
	}
	return pid_exited(q->producer_pid);
}

/* Lane l's buffer q->cons->cseq[l], published. */
static int take_buffer(struct mn_queue *q, uint32_t l, const uint64_t **words, size_t *nwords)
{
	uint32_t g = slot_index(q, l, q->cons->cseq[l]), lap = lap_of(q, q->cons->cseq[l]);
	struct mn_qctl *c = ctl_of(q, g);
	/* These are ordered by the acquire load of the lane's count that showed us the buffer. */
	uint64_t used = mn_load_relaxed(&c->used);

	if (mn_load_relaxed(&c->filled) != lap + 1 || !(mn_load_relaxed(&c->readers) & q->bit) ||
	    used > buf_bytes_of(q, g) || used % 8)
		return -EIO;
	*words = buf_of(q, g);
	*nwords = used / 8;
	q->held = HELD_BUF;
	q->cons->held_lane = l;
	q->cons->held_thread = mn_load_relaxed(&c->thread);
	return 1;
}

/*
 * A lane with a buffer published and not yet read, round robin from next_lane: returns it, or -1.
 * Each lane's count is read with acquire: pairs with the release store in publish().
 */
static int pop_published(struct mn_queue *q, bool skip_missing)
{
	struct mn_qcons *c = q->cons;
	uint64_t lowest = UINT64_MAX;
	int lowest_lane = -1;

	for (uint32_t i = 0; i < q->nlanes; i++) {
		uint32_t l = (c->next_lane + i) % q->nlanes;
		uint64_t t;

		if (mn_load_acquire(&lane_of(q, l)->published) == (uint32_t)c->cseq[l])
			continue;
		/* Ordered by the acquire above, as the rest of the buffer's control. */
		t = mn_load_relaxed(&ctl_of(q, slot_index(q, l, c->cseq[l]))->ticket);
		if (t > c->next_ticket) {
			if (t < lowest) {
				lowest = t;
				lowest_lane = (int)l;
			}
			continue;   /* an ordering point that must wait for a lower ticket */
		}
		if (t)
			c->next_ticket = t + 1;
		c->next_lane = l + 1 < q->nlanes ? l + 1 : 0;
		return (int)l;
	}
	if (skip_missing && lowest_lane >= 0) {
		c->next_ticket = lowest + 1;
		return lowest_lane;
	}
	return -1;
}

/*
 * The stream ended (finished, or the producer died) and every published buffer was read: return,
 * lane after lane, what each lane's thread wrote into its next buffer, if it had got hold of it
 * (otherwise the slot still holds an earlier lap, already read).  The end of stream when none is
 * left.
 */
static int take_tail(struct mn_queue *q, const uint64_t **words, size_t *nwords)
{
	while (q->cons->tail_lane < q->nlanes) {
		uint32_t l = q->cons->tail_lane++;
		uint32_t g = slot_index(q, l, q->cons->cseq[l]), lap = lap_of(q, q->cons->cseq[l]);
		uint64_t used;

		/* Only a buffer its producer held: scanning one nobody wrote would commit its pages.
		 * Pairs with the release store in hold(). */
		if (!mn_load_acquire(&lane_of(q, l)->holding) ||
		    mn_load_relaxed(&lane_of(q, l)->held_seq) != (uint32_t)q->cons->cseq[l])
			continue;
		/* The zeroing of the earlier lap happens before we scan; pairs with the release store
		 * in hand_back().  A dead producer's stores reached memory when it was killed; a
		 * running thread's (after the end) may be cut short, as a killed producer's. */
		if (mn_load_acquire(&ctl_of(q, g)->freed) != lap)
			continue;
		used = scan_used(q, g);
		if (!used)
			continue;
		*words = buf_of(q, g);
		*nwords = used / 8;
		q->held = HELD_TAIL;
		q->cons->held_lane = l;
		q->cons->held_thread = mn_load_relaxed(&lane_of(q, l)->thread);
		return 1;
	}
	q->ended = true;
	return 0;
}

MN_EXPORT int mn_queue_pop(struct mn_queue *q, const uint64_t **words, size_t *nwords)
{
	struct mn_qhdr *h;
	int spins = 0;

	if (!q || q->is_producer || !words || !nwords)
		return -EINVAL;
	if (q->held != HELD_NONE)
		return -EBUSY;
	if (q->ended)
		return 0;
	if (q->lamport)
		return mn_q_lamport_pop(q, words, nwords);
	if (q->cons->tail_lane)
		return take_tail(q, words, nwords);
	h = q->hdr;
	for (;;) {
		/* Read before the lanes, and slept on: a publish after we looked moves it.  Pairs with
		 * the release in publish() and in mn_queue_producer_finish() (the end, and what the
		 * producer wrote before it). */
		uint32_t w = mn_load_acquire(&h->stream);
		int l = pop_published(q, (w & MN_QSTREAM_END) || q->dead);

		if (l >= 0)
			return take_buffer(q, (uint32_t)l, words, nwords);
		if (w & MN_QSTREAM_END)
			return take_tail(q, words, nwords);
		if (q->dead) {
			q->died = true;
			return take_tail(q, words, nwords);
		}
		if (spins < MN_QUEUE_SPIN) {
			spins++;
			mn_cpu_relax();
			continue;
		}
		if (producer_exited(q)) {
			q->dead = true;  /* look at the counts once more, then the tails */
			continue;
		}
		mn_fetch_add_relaxed(&h->sleepers, 1);
		/* Store buffering with publish(): either we see its new count, or it sees sleepers. */
		mn_fence_seq_cst();
		if (mn_load_relaxed(&h->stream) == w)
			futex_wait(&h->stream, w, MN_QUEUE_WAIT_NS);
		mn_fetch_sub_relaxed(&h->sleepers, 1);
	}
}

MN_EXPORT uint32_t mn_queue_thread(const struct mn_queue *q)
{
	return q && q->held != HELD_NONE && !q->lamport ? q->cons->held_thread : 0;
}

MN_EXPORT unsigned mn_queue_lanes(const struct mn_queue *q)
{
	return q ? q->nlanes : 0;
}

static void release_seq(struct mn_queue *q, uint32_t l, uint64_t seq)
{
	clear_readers(q, slot_index(q, l, seq), lap_of(q, seq), q->bit);
}

MN_EXPORT void mn_queue_release(struct mn_queue *q)
{
	if (!q || q->is_producer || q->held == HELD_NONE)
		return;
	if (q->held == HELD_TAIL) {
		/* Nothing to hand back: the producer is gone, or the stream over (the slot is
		 * released at detach, if its thread publishes it after all). */
	} else if (q->lamport) {
		mn_q_lamport_release(q);
	} else {
		release_seq(q, q->cons->held_lane, q->cons->cseq[q->cons->held_lane]);
		mn_fetch_add_relaxed(&slot_of(q, q->index)->released, 1);
		q->cons->cseq[q->cons->held_lane]++;
	}
	q->held = HELD_NONE;
}

MN_EXPORT bool mn_queue_producer_died(const struct mn_queue *q)
{
	return q && q->died;
}

MN_EXPORT void mn_queue_detach(struct mn_queue *q)
{
	struct mn_qhdr *h;

	if (!q)
		return;
	if (q->is_producer) {
		mn_queue_destroy(q);
		return;
	}
	h = q->hdr;
	if (q->held != HELD_NONE)
		mn_queue_release(q);
	mn_store_release(&slot_of(q, q->index)->state, MN_QSLOT_DETACHED);
	/* From here on the producer leaves us out; pairs with the acquire loads of detached in
	 * publish() and reap_detached(). */
	mn_fetch_or_release(&h->detached, q->bit);
	if (q->lamport) {
		/* Nothing to hand back but the ring, which the producer then stops waiting for. */
		futex_wake((uint32_t *)&h->lread, 1);
		goto unmap;
	}
	/* Our detached bit is globally ordered before the counts we read below, so any buffer
	 * published after a count was published without us, or is reaped by the producer. */
	mn_fence_seq_cst();
	for (uint32_t l = 0; l < q->nlanes; l++) {
		/* Pairs with the release in publish(): the used bytes of the buffers we may free. */
		uint32_t published = mn_load_acquire(&lane_of(q, l)->published);

		for (uint32_t i = 0; i < q->nbufs && (uint32_t)q->cons->cseq[l] != published;
		     i++, q->cons->cseq[l]++)
			release_seq(q, l, q->cons->cseq[l]);
	}
unmap:
	zeroer_stop(q);
	if (q->pidfd >= 0)
		close(q->pidfd);
	munmap(q->base, q->map_bytes);
	free(q->cons);
	free(q);
}

/* ---- For the Lamport mode (queue_local.h) ------------------------------------------------------ */

struct mn_queue *mn_q_producer(void)
{
	/* Pairs with the release stores in mn_queue_producer_start(). */
	return mn_load_acquire(&producer);
}

int64_t mn_q_now_ns(void)
{
	return now_ns();
}

int mn_q_futex_wait(uint32_t *w, uint32_t val, long timeout_ns)
{
	return futex_wait(w, val, timeout_ns);
}

void mn_q_futex_wake(uint32_t *w, int n)
{
	futex_wake(w, n);
}

void mn_q_drop_thread(struct mn_queue *q)
{
	count_drop_thread(q);
}

void mn_q_drop_other(struct mn_queue *q)
{
	count_drop_other(q);
}

void mn_q_fail(struct mn_queue *q, const char *why)
{
	fail(q, why);
}

bool mn_q_check_consumers(struct mn_queue *q, uint32_t pending)
{
	return check_consumers_of(q, pending);
}

bool mn_q_producer_exited(struct mn_queue *q)
{
	return producer_exited(q);
}
