/*
 * What the integration tests written in C share: running a shell command and reading a file
 * back whole.  Header-only, for tests only.
 */
#ifndef MNEMO_TEST_SHELL_H
#define MNEMO_TEST_SHELL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * The 1-based number of the first line of programs_dir/program.c holding the marker "MARK:<mark>"
 * at the end of a comment (test programs mark the lines whose sites a test expects), or 0 when
 * the file cannot be read or has no such line.
 */
static inline int marked_line(const char *programs_dir, const char *program, const char *mark)
{
	char path[512], line[512], tag[64];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.c", programs_dir, program);
	snprintf(tag, sizeof(tag), "MARK:%s */", mark);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, tag)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

#endif /* MNEMO_TEST_SHELL_H */
