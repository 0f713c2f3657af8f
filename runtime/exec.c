/*
 * The exec family, defined here with default visibility as _exit() is (runtime.c): the program's
 * calls and its shared libraries' calls bind here, glibc's own (system(), posix_spawn()) do not.
 * Each one ends the image's session before the image is gone, so that its backend writes the
 * image's profile and exits with it (runtime.c, "Sessions of a process tree"), then execs with
 * MNEMO_EXEC_OF added to the environment, which tells a new image built with mnemo which image
 * of the process it is (it takes the variable out again before main).  A program not built with
 * mnemo sees the variable.  When the exec fails, the image goes on in a new session.
 *
 * Async-signal-safe where exec is: no allocation (the new environment is on the stack), so a
 * vfork child may call them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime_internal.h"

#define MN_VISIBLE __attribute__((visibility("default")))

extern char **environ;

typedef int exec_fn(const char *, char *const[], char *const[]);

/* glibc's execvpe (its PATH search and its /bin/sh for scripts), found before any vfork child
 * could need it: dlsym() takes locks. */
static exec_fn *libc_execvpe;

void mn_rt_exec_init(void)
{
	libc_execvpe = (exec_fn *)dlsym(RTLD_NEXT, "execvpe");
}

static size_t env_count(char *const envp[])
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

/* envp without any MNEMO_EXEC_OF, then marker, into out[] of env_count(envp) + 2 entries. */
static char **with_marker(char *const envp[], char *marker, char **out)
{
	size_t k = 0;

	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], "MNEMO_EXEC_OF=", 14))
			out[k++] = envp[i];
	out[k++] = marker;
	out[k] = NULL;
	return out;
}

/* The one path every wrapper takes: end the session, exec, and on failure start a new one. */
static int exec_with(exec_fn *fn, const char *path, char *const argv[], char *const envp[])
{
	char marker[MN_EXEC_MARKER_MAX], *env[env_count(envp) + 2];
	bool ours = mn_rt_exec_begin(path, marker);
	int err;

	fn(path, argv, ours ? with_marker(envp, marker, env) : envp);
	err = errno;
	if (ours)
		mn_rt_exec_failed();
	errno = err;
	return -1;
}

static int sys_execve(const char *path, char *const argv[], char *const envp[])
{
	return (int)syscall(SYS_execve, path, argv, envp);
}

/* execvpe without glibc's (dlsym failed): a path with a slash only, as a last resort. */
static int vpe(const char *file, char *const argv[], char *const envp[])
{
	if (libc_execvpe)
		return libc_execvpe(file, argv, envp);
	if (strchr(file, '/'))
		return sys_execve(file, argv, envp);
	errno = ENOSYS;
	return -1;
}

MN_VISIBLE int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_with(sys_execve, path, argv, envp);
}

MN_VISIBLE int execv(const char *path, char *const argv[])
{
	return exec_with(sys_execve, path, argv, environ);
}

MN_VISIBLE int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_with(vpe, file, argv, envp);
}

MN_VISIBLE int execvp(const char *file, char *const argv[])
{
	return exec_with(vpe, file, argv, environ);
}

/* fexecve through the descriptor's /proc path, as glibc did before execveat(): a path for the
 * profile, and one exec call for exec_with(). */
MN_VISIBLE int fexecve(int fd, char *const argv[], char *const envp[])
{
	char path[32] = "/proc/self/fd/";
	size_t n = strlen(path);
	char d[12];
	int k = 0;

	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	do
		d[k++] = (char)('0' + fd % 10);
	while ((fd /= 10));
	while (k)
		path[n++] = d[--k];
	path[n] = '\0';
	return exec_with(sys_execve, path, argv, envp);
}

/* The execl family: its arguments (arg0 first, up to the NULL) into argv[], on the stack. */
#define COUNT_ARGS(arg0, n)                                                                     \
	do {                                                                                    \
		va_list ap_;                                                                    \
		va_start(ap_, arg0);                                                            \
		for (n = 1; va_arg(ap_, const char *); n++)                                     \
			;                                                                       \
		va_end(ap_);                                                                    \
	} while (0)

static char **fill_args(char **argv, const char *arg0, va_list ap)
{
	size_t i = 0;

	argv[i++] = (char *)arg0;
	while ((argv[i++] = va_arg(ap, char *)))
		;
	return argv;
}

MN_VISIBLE int execl(const char *path, const char *arg0, ...)
{
	size_t n;
	va_list ap;

	COUNT_ARGS(arg0, n);
	char *argv[n + 1];

	va_start(ap, arg0);
	fill_args(argv, arg0, ap);
	va_end(ap);
	return execv(path, argv);
}

MN_VISIBLE int execlp(const char *file, const char *arg0, ...)
{
	size_t n;
	va_list ap;

	COUNT_ARGS(arg0, n);
	char *argv[n + 1];

	va_start(ap, arg0);
	fill_args(argv, arg0, ap);
	va_end(ap);
	return execvp(file, argv);
}

/* execle: the environment follows the NULL that ends the arguments. */
MN_VISIBLE int execle(const char *path, const char *arg0, ...)
{
	size_t n;
	va_list ap;
	char *const *envp;

	COUNT_ARGS(arg0, n);
	char *argv[n + 1];

	va_start(ap, arg0);
	fill_args(argv, arg0, ap);
	envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}
