/*
 * What the integration tests written in C share: running a shell command and reading a file
 * back whole.  Header-only, for tests only.
 */
#ifndef MNEMO_TEST_SHELL_H
#define MNEMO_TEST_SHELL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

/* Runs the printf-formatted command with sh; returns its exit status, or 128 + its signal. */
static inline __attribute__((format(printf, 1, 2))) int shell(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Reads path into buf (at most len - 1 bytes, NUL-terminated); "" when it cannot be read. */
static inline void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

#endif /* MNEMO_TEST_SHELL_H */
