/*
 * `mnemo run --progress`: a status line on the terminal while the program runs (progress.c).
 */
#ifndef MNEMO_TOOLS_PROGRESS_H
#define MNEMO_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PROGRESS_QUEUES 16    /* sessions followed: a program that forks many shows the first */

/* One session's queue, mapped read-only. */
struct pqueue {
	dev_t dev;
	ino_t ino;
	const unsigned char *map;
	size_t len;
	const struct mn_session *s;   /* NULL when the block is not this mnemo's session */
};

struct progress {
	bool on;
	int pidfd;                    /* the program's, readable once it ends */
	struct pqueue q[PROGRESS_QUEUES];
	unsigned nq;
	double start, next;           /* CLOCK_MONOTONIC seconds: program start, next line */
	double last_at;               /* when last_events was read */
	uint64_t last_events;
	bool shown;                   /* a status line is on the terminal */
};

/* Turns the line on when stderr is a terminal that can erase a line (else says why with -v). */
void progress_start(struct progress *p, pid_t pid, bool verbose);
/* Waits until the program ends, a signal comes, or the next line is due (then shows it). */
void progress_wait(struct progress *p);
/* Erases the line, if one is up, and lets go of the sessions. */
void progress_stop(struct progress *p);

/* The parent of process PID (/proc/PID/stat), or -1 (run.c). */
pid_t parent_of(const char *pid);
/* 1 when /proc/PID runs a backend (its --fd in *fd), 0 when not, -1 when it is exiting (run.c). */
int is_backend(const char *pid, int *fd);

#endif
