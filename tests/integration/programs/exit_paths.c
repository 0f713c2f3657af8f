/*
 * Ends the way EXIT_PATH says: return (from main), exit, abort or kill (SIGKILL, which no handler
 * sees), after enough events to fill a few queue buffers.  Before that it leaves two children that
 * outlive it, one exec'd (sleep) and one only forked, and prints their pids: neither may keep the
 * queue's memory (test_e2e.c, test_queue_released_on_every_exit).  They run unprofiled
 * (MNEMO_DISABLE at the fork), so that no queue of their own is in the way either.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 1024, ROUNDS = 200 };

static long v[N];

int main(void)
{
	const char *how = getenv("EXIT_PATH");
	pid_t exec_child, fork_child;
	long sum = 0;

	if (!how)
		how = "return";
	fflush(stdout);
	setenv("MNEMO_DISABLE", "1", 1);
	exec_child = fork();
	if (exec_child == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	fork_child = fork();
	if (fork_child == 0) {
		sleep(30);  /* the test kills it sooner */
		_exit(0);
	}
	unsetenv("MNEMO_DISABLE");
	printf("exec child %d\nfork child %d\n", (int)exec_child, (int)fork_child);
	fflush(stdout);

	for (int r = 0; r < ROUNDS; r++)
#pragma clang loop unroll(disable) vectorize(disable)
		for (int i = 0; i < N; i++) {
			v[i] += i ^ r;                   /* MARK:store */
			sum += v[(i * 5) % N];
		}
	printf("%ld\n", sum);
	fflush(stdout);

	if (!strcmp(how, "exit"))
		exit(4);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "kill"))
		raise(SIGKILL);
	return 0;
}
