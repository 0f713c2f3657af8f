/*
 * The program of run_progress.sh, built with mnemo-cc:
 *
 *   progress MS
 *
 * reads and writes words of a 64 KiB table at pseudo-random places (no loop the pass can
 * summarize: every access is an event) for MS milliseconds of wall time, prints two fixed lines on
 * stdout and exits 3, so that a status line has events to count and the caller can tell the
 * program's output and exit status from mnemo run's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char **argv)
{
	static uint64_t table[8192];
	long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 3000, end;
	uint64_t x = 88172645463325252u;

	printf("progress: start\n");
	fflush(stdout);
	end = now_ms() + ms;
	while (now_ms() < end)
		for (int i = 0; i < 100000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			table[x % 8192] += table[(x >> 20) % 8192];
		}
	printf("progress: done\n");
	return 3;
}
