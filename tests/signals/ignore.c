/*
 * SIG_IGN set by the program is honoured: it ignores SIGPIPE and SIGUSR1, raises both, writes to a
 * pipe with no reader (EPIPE, no signal) and exits 0, as natively; a child it forks and execs
 * inherits the ignored dispositions, as natively.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd[2], st;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		struct sigaction a, b;

		sigaction(SIGPIPE, NULL, &a);
		sigaction(SIGUSR1, NULL, &b);
		printf("child: SIGPIPE %s, SIGUSR1 %s\n",
		       a.sa_handler == SIG_IGN ? "ignored" : "not ignored",
		       b.sa_handler == SIG_IGN ? "ignored" : "not ignored");
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	raise(SIGPIPE);
	raise(SIGUSR1);
	kill(getpid(), SIGUSR1);
	if (pipe(fd))
		return 2;
	close(fd[0]);
	if (write(fd[1], "x", 1) < 0)
		printf("write: %s\n", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	printf("survived\n");
	return 0;
}
