/*
 * rusage-run: runs a command as `time` does and says how it ended and what it used, for
 * run_descendants.sh.
 *
 *   rusage-run [-k SIG:MS:pid|group] -- COMMAND [ARGS...]
 *
 * Prints one line on stdout, "maxrss_kib <n> exited <status>" or "maxrss_kib <n> signaled <sig>",
 * from wait4() of the command: ru_maxrss is the largest of the command and of the descendants it
 * waited for.  With -k, SIG is sent MS milliseconds after the start to the command (pid) or to its
 * process group (group: the command runs in a group of its own, as a shell job does, so this is a
 * terminal's ^C).  Exits 0, or 2 on a usage or system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int sig = 0, ms = 0, group = 0, status, a = 1;
	struct rusage ru;
	pid_t pid;

	if (a + 1 < argc && !strcmp(argv[a], "-k")) {
		char how[16] = "";

		if (sscanf(argv[a + 1], "%d:%d:%15s", &sig, &ms, how) != 3 ||
		    (strcmp(how, "pid") && strcmp(how, "group"))) {
			fprintf(stderr, "rusage-run: bad -k '%s'\n", argv[a + 1]);
			return 2;
		}
		group = !strcmp(how, "group");
		a += 2;
	}
	if (a < argc && !strcmp(argv[a], "--"))
		a++;
	if (a >= argc) {
		fprintf(stderr, "usage: rusage-run [-k SIG:MS:pid|group] -- COMMAND [ARGS...]\n");
		return 2;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("rusage-run: fork");
		return 2;
	}
	if (pid == 0) {
		if (group)
			setpgid(0, 0);
		execvp(argv[a], argv + a);
		fprintf(stderr, "rusage-run: cannot run %s: %s\n", argv[a], strerror(errno));
		_exit(127);
	}
	if (group)
		setpgid(pid, pid);	/* as the child does: whichever runs first */
	if (sig) {
		struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
		kill(group ? -pid : pid, sig);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("rusage-run: wait4");
			return 2;
		}
	}
	if (WIFSIGNALED(status))
		printf("maxrss_kib %ld signaled %d\n", ru.ru_maxrss, WTERMSIG(status));
	else
		printf("maxrss_kib %ld exited %d\n", ru.ru_maxrss, WEXITSTATUS(status));
	return 0;
}
