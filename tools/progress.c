/*
 * `mnemo run --progress`: a status line on the terminal while the program runs.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "mnemo_internal.h"
#include "queue_internal.h"
#include "session.h"
#include "progress.h"

/* ---- --progress: a status line on the terminal while the program runs -------------------------- */

/*
 * Once a second mnemo run reads counters the backends and the queue keep anyway, in the queue's
 * shared memory (queue/queue_internal.h, runtime/session.h), which it maps read-only through a
 * backend's `--fd N` (/proc/PID/fd/N of a backend child, found as wait_backends() finds them):
 *
 *   events   the most any backend of a session has decoded (mn_session.backend[].events, stored
 *            by the backend after every buffer), summed over the sessions (one per image of the
 *            program: a fork child profiled has its own);
 *   lag      the bytes of records the program has published to the queue and the slowest backend
 *            (consumer) has not yet released: the buffers whose readers bit is still set for it
 *            (mn_qctl.readers, .used), the worst consumer of every session.  A lane holds at most
 *            nbufs buffers: when the slowest backend is that far behind, the program waits.
 *
 * Nothing is added to the program's path: the producer's counters are read as they are, and the
 * backend's store is one a buffer.  The line goes to stderr only, and only to a terminal.
 */



/* What one look at the counters found. */
struct pcounts {
	uint64_t events;
	uint64_t lag_bytes;           /* the worst consumer's */
	uint32_t lag_buffers;
	bool full;                    /* some lane has every buffer waiting for that consumer */
	bool ring;                    /* a Lamport ring (a build's queues are alike): no buffers */
};

static double monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Whether the header of a queue of file_bytes bytes is one this mnemo reads. */
static bool pqueue_header_ok(const struct mn_qhdr *h, uint64_t file_bytes)
{
	if (h->magic != MN_QUEUE_MAGIC || h->version != MN_QUEUE_VERSION ||
	    h->mode > MN_QMODE_LAMPORT || h->nbufs < 2 || h->nbufs > 1024 || h->nlanes < 1 ||
	    h->nlanes > MN_QUEUE_MAX_LANES || h->nconsumers < 1 ||
	    h->nconsumers > MN_QUEUE_MAX_CONSUMERS || h->map_bytes != file_bytes)
		return false;
	return h->header_bytes == mn_qhdr_bytes(h->nbufs, h->nlanes) &&
	       h->header_bytes <= file_bytes && h->extra_off <= file_bytes &&
	       h->extra_bytes <= file_bytes - h->extra_off;
}

/* Maps the queue of backend pid's descriptor fd, unless it is mapped already. */
static void pqueue_add(struct progress *p, const char *pid, int fd)
{
	char path[64];
	struct stat st;
	struct mn_qhdr h;
	struct pqueue *q = &p->q[p->nq];
	void *map;
	int qfd;

	snprintf(path, sizeof(path), "/proc/%s/fd/%d", pid, fd);
	qfd = open(path, O_RDONLY | O_CLOEXEC);
	if (qfd < 0)
		return;
	if (fstat(qfd, &st))
		goto out;
	for (unsigned i = 0; i < p->nq; i++)
		if (p->q[i].dev == st.st_dev && p->q[i].ino == st.st_ino)
			goto out;
	if (pread(qfd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    !pqueue_header_ok(&h, (uint64_t)st.st_size))
		goto out;
	map = mmap(NULL, h.map_bytes, PROT_READ, MAP_SHARED, qfd, 0);
	if (map == MAP_FAILED)
		goto out;
	*q = (struct pqueue){ .dev = st.st_dev, .ino = st.st_ino, .map = map, .len = h.map_bytes };
	q->s = (const struct mn_session *)(q->map + h.extra_off);
	if (h.extra_bytes < sizeof(*q->s) || q->s->magic != MN_SESSION_MAGIC ||
	    q->s->version != MN_SESSION_VERSION)
		q->s = NULL;
	p->nq++;
out:
	close(qfd);
}

/* Maps the queue of child pid (a name in /proc) if it is a backend not mapped yet. */
static void pqueue_child(struct progress *p, const char *pid)
{
	int fd;

	if (p->nq < PROGRESS_QUEUES && is_backend(pid, &fd) > 0)
		pqueue_add(p, pid, fd);
}

/*
 * Maps the queue of every backend child not mapped yet (a new session: the program forked).  The
 * children come from /proc/PID/task/PID/children where the kernel has it (CONFIG_PROC_CHILDREN;
 * mnemo run is one thread), else from a walk of /proc as wait_backends() does.
 */
static void pqueue_find(struct progress *p)
{
	char path[64], buf[4096], *save = NULL;
	pid_t self = getpid();
	struct dirent *de;
	ssize_t n = -1;
	DIR *proc;
	int fd;

	if (p->nq == PROGRESS_QUEUES)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)self, (int)self);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	/* A full buffer may end in half a pid: walk /proc instead. */
	if (n >= 0 && n < (ssize_t)sizeof(buf) - 1) {
		buf[n] = '\0';
		for (char *c = strtok_r(buf, " \n", &save); c; c = strtok_r(NULL, " \n", &save))
			pqueue_child(p, c);
		return;
	}
	if (!(proc = opendir("/proc")))
		return;
	while ((de = readdir(proc)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9' && parent_of(de->d_name) == self)
			pqueue_child(p, de->d_name);
	closedir(proc);
}

/* The most events any backend of session s decoded so far. */
static uint64_t session_events(const struct mn_session *s)
{
	uint64_t most = 0;

	for (unsigned i = 0; i < MN_MAX_MODULES; i++) {
		uint64_t e = mn_load_relaxed(&s->backend[i].events);

		most = e > most ? e : most;
	}
	return most;
}

/*
 * Adds queue q's worst consumer lag to *c: bytes published and not yet released by a consumer.
 * The counters are read without locks while both sides move: a count for the eye, not exact.
 */
static void pqueue_lag(const struct pqueue *q, struct pcounts *c)
{
	const struct mn_qhdr *h = (const struct mn_qhdr *)q->map;
	const struct mn_qctl *ctl = (const struct mn_qctl *)(q->map + MN_QUEUE_CTL_OFF);
	uint64_t bytes[MN_QUEUE_MAX_CONSUMERS] = { 0 };
	uint32_t bufs[MN_QUEUE_MAX_CONSUMERS] = { 0 };
	bool full[MN_QUEUE_MAX_CONSUMERS] = { false };

	if (h->mode == MN_QMODE_LAMPORT) {
		/* One ring, one consumer: words pushed and not yet released. */
		uint64_t w = mn_load_relaxed(&h->lwrite), r = mn_load_relaxed(&h->lread);

		bytes[0] = w > r ? (w - r) * 8 : 0;
		c->ring = true;
	} else {
		for (uint32_t l = 0; l < h->nlanes; l++) {
			uint32_t inlane[MN_QUEUE_MAX_CONSUMERS] = { 0 };

			for (uint32_t k = 0; k < h->nbufs; k++) {
				const struct mn_qctl *g = &ctl[(uint64_t)l * h->nbufs + k];
				uint32_t readers = mn_load_relaxed(&g->readers);
				uint64_t used = mn_load_relaxed(&g->used);

				for (unsigned i = 0; i < h->nconsumers; i++)
					if (readers & (UINT32_C(1) << i)) {
						bytes[i] += used;
						bufs[i]++;
						full[i] |= ++inlane[i] == h->nbufs;
					}
			}
		}
	}
	for (unsigned i = 0; i < h->nconsumers; i++) {
		bool worse = bytes[i] > c->lag_bytes ||
			     (bytes[i] == c->lag_bytes && bufs[i] > c->lag_buffers);

		if (!worse)
			continue;
		c->lag_bytes = bytes[i];
		c->lag_buffers = bufs[i];
		c->full = full[i];
	}
}

static struct pcounts progress_read(const struct progress *p)
{
	struct pcounts c = { 0 };

	for (unsigned i = 0; i < p->nq; i++) {
		if (p->q[i].s)
			c.events += session_events(p->q[i].s);
		pqueue_lag(&p->q[i], &c);
	}
	return c;
}

/* n in at most 4 characters of digits and a suffix: 987, 12.3k, 4.56M, 789G. */
static void human(char *buf, size_t len, double n)
{
	static const char suffix[] = " kMGTPE";
	unsigned i = 0;

	while (n >= 999.5 && i + 1 < sizeof(suffix) - 1) {
		n /= 1000;
		i++;
	}
	if (!i)
		snprintf(buf, len, "%.0f", n);
	else
		snprintf(buf, len, "%.*f%c", n < 9.995 ? 2 : n < 99.95 ? 1 : 0, n, suffix[i]);
}

/* The status line's text for counts c, seen at time now. */
static void progress_text(const struct progress *p, const struct pcounts *c, double now,
			  char *buf, size_t len)
{
	long secs = (long)(now - p->start);
	char events[16], rate[16];
	double dt = now - p->last_at;

	if (!p->nq) {
		snprintf(buf, len, "mnemo: %ld:%02ld  no backend running yet", secs / 60,
			 secs % 60);
		return;
	}
	human(events, sizeof(events), (double)c->events);
	human(rate, sizeof(rate), dt > 0 && c->events >= p->last_events ?
		(double)(c->events - p->last_events) / dt : 0);
	if (c->ring) {
		snprintf(buf, len, "mnemo: %ld:%02ld  %s events, %s/s  backend lag: %.1f MiB",
			 secs / 60, secs % 60, events, rate, (double)c->lag_bytes / (1024 * 1024));
		return;
	}
	snprintf(buf, len, "mnemo: %ld:%02ld  %s events, %s/s  backend lag: %.1f MiB "
		 "(%u buffer%s%s)", secs / 60, secs % 60, events, rate,
		 (double)c->lag_bytes / (1024 * 1024), c->lag_buffers,
		 c->lag_buffers == 1 ? "" : "s", c->full ? ", full" : "");
}

/* The terminal's width in columns, or 80. */
static size_t tty_columns(void)
{
	struct winsize ws;

	return ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col : 80;
}

/* Writes all of buf to stderr; a terminal that fails loses a status line, nothing more. */
static void tty_write(const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
}

/*
 * Whether mnemo run may write to the terminal: its process group is the terminal's foreground one
 * (a job put in the background keeps quiet, and is never stopped by SIGTTOU under `stty tostop`),
 * or the terminal is not the controlling one.
 */
static bool tty_foreground(void)
{
	pid_t fg = tcgetpgrp(STDERR_FILENO);

	return fg < 0 || fg == getpgrp();
}

/* Rewrites the status line in place: back to column 0, erase to the end of the line, the text. */
static void progress_tick(struct progress *p, double now)
{
	char text[256], line[sizeof(text) + 8];
	struct pcounts c;
	size_t cols = tty_columns(), n;

	pqueue_find(p);
	c = progress_read(p);
	progress_text(p, &c, now, text, sizeof(text));
	p->last_events = c.events;
	p->last_at = now;
	if (!tty_foreground())
		return;
	/* One column short of the width: a line that wraps would not be erased by \r and ESC[K. */
	n = strlen(text);
	if (n > cols - 1)
		n = cols - 1;
	tty_write(line, (size_t)snprintf(line, sizeof(line), "\r\033[K%.*s", (int)n, text));
	p->shown = true;
}

/*
 * Turns the status line on when asked for and stderr is a terminal that takes ESC[K; otherwise
 * it stays off, said with -v only.  pid: the program, running.
 */
void progress_start(struct progress *p, pid_t pid, bool verbose)
{
	const char *term = getenv("TERM");
	const char *why = NULL;

	p->pidfd = -1;
	if (!isatty(STDERR_FILENO))
		why = "stderr is not a terminal";
	else if (!term || !*term || !strcmp(term, "dumb"))
		why = "the terminal cannot erase a line (TERM is unset or dumb)";
	else if ((p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0)
		why = "no pidfd_open() to wait on the program with (Linux 5.3)";
	if (why) {
		if (verbose)
			warning("--progress: %s: no status line", why);
		return;
	}
	p->on = true;
	p->start = p->last_at = monotonic();
	p->next = p->start + 1;
}

/* Waits until the program ends, a signal comes, or the next line is due (then shows it). */
void progress_wait(struct progress *p)
{
	struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
	double now = monotonic();
	int ms = p->next > now ? (int)((p->next - now) * 1000) + 1 : 0;

	if (poll(&pfd, 1, ms) != 0)
		return;   /* the program ended, or a signal: the caller looks */
	now = monotonic();
	if (now < p->next)
		return;
	progress_tick(p, now);
	while (p->next <= now)
		p->next += 1;
}

/* Erases the status line, if one is up, and lets go of the sessions. */
void progress_stop(struct progress *p)
{
	static const char clear[] = "\r\033[K";

	if (!p->on)
		return;
	if (p->shown && tty_foreground())
		tty_write(clear, sizeof(clear) - 1);
	p->shown = false;
	for (unsigned i = 0; i < p->nq; i++)
		munmap((void *)p->q[i].map, p->q[i].len);
	p->nq = 0;
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
	p->on = false;
}

