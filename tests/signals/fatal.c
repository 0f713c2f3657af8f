/*
 * A program with handlers of its own for signals the runtime flushes on; argv[1] says which:
 *   segv        a SIGSEGV handler that prints, restores SIG_DFL and returns: the fault recurs
 *   abort       a SIGABRT handler that prints, restores SIG_DFL with signal() and re-raises
 *   abort-return  a SIGABRT handler that prints and returns: abort() still ends the process
 *   overflow    its own alternate stack and an SA_ONSTACK SIGSEGV handler, which survives a stack
 *               overflow, prints, restores SIG_DFL and returns: the fault recurs
 *   resethand   a SIGUSR1 handler with SA_RESETHAND | SA_SIGINFO: the first raise is handled,
 *               the second kills
 *   plain       no handler: dies of SIGSEGV, as the runtime's own tests do
 * Output, exit status and death signal must not change under Mnemo, and the profile is written.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile int seen;
int *volatile nowhere;

static void say(const char *s)
{
	(void)!write(STDOUT_FILENO, s, strlen(s));
}

static void on_segv(int sig)
{
	struct sigaction dfl;

	say(sig == SIGSEGV ? "caught SIGSEGV\n" : "caught other\n");
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGSEGV, &dfl, NULL);
}

static void on_abrt(int sig)
{
	say(sig == SIGABRT ? "caught SIGABRT\n" : "caught other\n");
	signal(SIGABRT, SIG_DFL);
	raise(SIGABRT);
	say("after raise in handler\n");
}

static int recurse(int n)
{
	volatile char pad[1024];

	pad[0] = (char)n;
	return recurse(n + 1) + pad[0];
}

static void on_abrt_return(int sig)
{
	say(sig == SIGABRT ? "caught SIGABRT, returning\n" : "caught other\n");
}

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	struct sigaction now;

	(void)ctx;
	sigaction(SIGUSR1, NULL, &now);
	say(sig == SIGUSR1 && si->si_signo == SIGUSR1 ? "caught SIGUSR1\n" : "caught other\n");
	say(now.sa_handler == SIG_DFL ? "reset to SIG_DFL\n" : "not reset\n");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	struct sigaction sa;

	for (int i = 0; i < 100; i++)
		seen = i;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (!strcmp(mode, "segv")) {
		sa.sa_handler = on_segv;
		sigaction(SIGSEGV, &sa, NULL);
	} else if (!strcmp(mode, "abort")) {
		signal(SIGABRT, on_abrt);
		printf("aborting\n");
		fflush(stdout);
		abort();
	} else if (!strcmp(mode, "overflow")) {
		static char stack[1 << 16];
		stack_t ss = { .ss_sp = stack, .ss_size = sizeof(stack) };

		if (sigaltstack(&ss, NULL))
			say("sigaltstack failed\n");
		sa.sa_handler = on_segv;
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGSEGV, &sa, NULL);
		printf("overflowing\n");
		fflush(stdout);
		return recurse(0);
	} else if (!strcmp(mode, "abort-return")) {
		signal(SIGABRT, on_abrt_return);
		printf("aborting\n");
		fflush(stdout);
		abort();
	} else if (!strcmp(mode, "resethand")) {
		sa.sa_sigaction = on_usr1;
		sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
		printf("survived the first SIGUSR1\n");
		fflush(stdout);
		raise(SIGUSR1);
		printf("survived the second SIGUSR1\n");
		return 0;
	}
	printf("about to crash\n");
	fflush(stdout);
	return *nowhere;
}
