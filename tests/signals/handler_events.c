/*
 * A program whose signal handler makes events while its main loop pushes back to back: the test
 * of "no loss goes uncounted" (issue 18, item 2; queue/queue.h, the claim).  Every event's count is
 * known: the main loop makes n loads and n stores whatever happens; each handler run makes the
 * same events, and the program prints how many runs there were.
 *
 *   handler_events N K   K > 0: raise(SIGALRM) K times first (calibration: events per run);
 *                        K < 0: a 50 us interval timer while the main loop runs; K = 0: neither.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile long handled;
static volatile int hbuf[64];

static void on_alarm(int sig)
{
	(void)sig;
	for (int i = 0; i < 64; i++)
		hbuf[i] = hbuf[i] + 1;
	handled = handled + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	int k = argc > 2 ? atoi(argv[2]) : 0;
	volatile int *a = calloc(1024, sizeof(int));
	struct itimerval on = { { 0, 50 }, { 0, 50 } }, off;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	memset(&off, 0, sizeof(off));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	if (k < 0)
		setitimer(ITIMER_REAL, &on, NULL);
	for (int j = 0; j < k; j++)
		raise(SIGALRM);
	for (long i = 0; i < n; i++)
		a[i & 1023] = a[(i * 7) & 1023] + 1;
	setitimer(ITIMER_REAL, &off, NULL);
	printf("handled %ld\n", handled);
	return 0;
}
