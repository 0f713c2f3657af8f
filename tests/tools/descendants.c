/*
 * The program of run_descendants.sh, built with mnemo-cc for the dependence module:
 *
 *   descendants MIB [exit3 | segv | term | sleep]
 *
 * reads one word of every page of MIB MiB of fresh anonymous memory, so that the program's own
 * RSS stays small (a read of a page never written maps the zero page) while the backend's shadow
 * gets a page of metadata per page read: the backend's peak RSS is far above the program's.  Then
 * it exits 0, exits 3, dies of SIGSEGV or SIGTERM it sends itself, or sleeps until a signal
 * ends it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t len = (argc > 1 ? strtoul(argv[1], NULL, 10) : 64) << 20;
	const char *then = argc > 2 ? argv[2] : "";
	volatile long *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	long sum = 0;

	if (p == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < len / sizeof(long); i += 4096 / sizeof(long))
		sum += p[i];
	printf("read %zu MiB: %ld\n", len >> 20, sum);
	fflush(stdout);
	if (!strcmp(then, "exit3"))
		return 3;
	if (!strcmp(then, "segv"))
		raise(SIGSEGV);
	if (!strcmp(then, "term"))
		kill(getpid(), SIGTERM);
	if (!strcmp(then, "sleep"))
		for (;;)
			pause();
	return 0;
}
