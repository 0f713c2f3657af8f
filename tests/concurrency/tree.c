/*
 * A process tree whose every image's work is known: `tree MODE`, where each image that works runs
 * work(K) (one loop of K stores) for its own K and prints "<what> <pid> <K>".  Modes:
 *   fork      four fork children, K = 1000 * (c + 1), each waited for; then the parent, K = 777
 *   exec      K = 500, then execs itself as `tree second` (K = 300)
 *   forkexec  a fork child that execs `tree second`; then the parent, K = 777
 *   system    system("<self> second"); then the parent, K = 777
 *   churn     20 fork children that exit at once without working; then the parent, K = 777
 * tree.sh checks each image's profile against these (value-pattern's store executions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long a[64];

static __attribute__((noinline)) void work(const char *what, long k)
{
#pragma clang loop unroll(disable) vectorize(disable)
	for (long i = 0; i < k; i++)
		a[i % 64] = i;                   /* one store per iteration */
	printf("%s %d %ld\n", what, (int)getpid(), a[(k - 1) % 64] + 1);
	fflush(stdout);
}

static int wait_ok(pid_t p)
{
	int st;

	return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char cmd[4096];
	int bad = 0;

	fflush(stdout);
	if (!strcmp(mode, "second")) {
		work("second", 300);
		return 0;
	}
	if (!strcmp(mode, "exec")) {
		work("first", 500);
		execl(argv[0], argv[0], "second", (char *)NULL);
		perror("execl");
		return 1;
	}
	if (!strcmp(mode, "fork") || !strcmp(mode, "churn")) {
		int n = mode[0] == 'f' ? 4 : 20;

		for (int c = 0; c < n; c++) {
			pid_t p = fork();

			if (p == 0) {
				if (n == 4)
					work("child", 1000 * (c + 1));
				_exit(0);
			}
			bad |= wait_ok(p);
		}
	} else if (!strcmp(mode, "forkexec")) {
		pid_t p = fork();

		if (p == 0) {
			execl(argv[0], argv[0], "second", (char *)NULL);
			_exit(127);
		}
		bad |= wait_ok(p);
	} else if (!strcmp(mode, "system")) {
		snprintf(cmd, sizeof(cmd), "'%s' second", argv[0]);
		bad |= system(cmd) != 0;
	} else {
		return 2;
	}
	work("parent", 777);
	return bad;
}
