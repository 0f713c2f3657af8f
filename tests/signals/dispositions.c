/*
 * Prints the program's view of its signals: for 1..31 what sigaction(sig, NULL, &old) reads back
 * (handler, flags, the mask's first 64 signals, whether a restorer is set) and its alternate stack;
 * with "set", first installs a few dispositions of each kind (signal(), sysv_signal(), sigaction()
 * with flags and a mask, SIG_IGN, SIG_DFL with flags, its own alternate stack) and checks what
 * signal() and siginterrupt() return.  Native and profiled builds must print the same.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void h1(int sig) { (void)sig; }
static void h2(int sig) { (void)sig; }
static void hinfo(int sig, siginfo_t *si, void *ctx) { (void)sig; (void)si; (void)ctx; }

static const char *name(void (*h)(int))
{
	if (h == SIG_DFL)
		return "SIG_DFL";
	if (h == SIG_IGN)
		return "SIG_IGN";
	if (h == SIG_ERR)
		return "SIG_ERR";
	if (h == h1)
		return "h1";
	if (h == h2)
		return "h2";
	if (h == (void (*)(int))hinfo)
		return "hinfo";
	return "other";
}

static void print_all(const char *when)
{
	stack_t ss;

	printf("-- %s\n", when);
	for (int sig = 1; sig <= 31; sig++) {
		struct sigaction old;
		uint64_t mask = 0;

		memset(&old, 0xa5, sizeof(old));
		if (sigaction(sig, NULL, &old)) {
			printf("%2d: error\n", sig);
			continue;
		}
		for (int s = 1; s <= 64; s++)
			if (sigismember(&old.sa_mask, s) == 1)
				mask |= 1ull << (s - 1);
		printf("%2d: %s flags %#x mask %#llx restorer %s\n", sig, name(old.sa_handler),
		       (unsigned)old.sa_flags, (unsigned long long)mask,
		       old.sa_restorer ? "set" : "null");
	}
	if (sigaltstack(NULL, &ss) == 0)
		printf("altstack: %s size %zu flags %#x\n", ss.ss_sp ? "set" : "null", ss.ss_size,
		       (unsigned)ss.ss_flags);
	else
		printf("altstack: error\n");
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	static char stack[1 << 16];
	stack_t ss = { .ss_sp = stack, .ss_size = sizeof(stack) };

	print_all("initial");
	if (argc < 2 || strcmp(argv[1], "set"))
		return 0;

	printf("signal(SIGINT, h1) -> %s\n", name(signal(SIGINT, h1)));
	printf("signal(SIGINT, h2) -> %s\n", name(signal(SIGINT, h2)));
	printf("siginterrupt(SIGINT, 1) -> %d\n", siginterrupt(SIGINT, 1));
	printf("signal(SIGINT, SIG_IGN) -> %s\n", name(signal(SIGINT, SIG_IGN)));
	printf("signal(SIGHUP, h1) -> %s\n", name(signal(SIGHUP, h1)));
	printf("signal(SIGCHLD, h2) -> %s\n", name(signal(SIGCHLD, h2)));
	printf("sysv_signal(SIGQUIT, h2) -> %s\n", name(sysv_signal(SIGQUIT, h2)));
	printf("signal(SIGKILL, h1) -> %s\n", name(signal(SIGKILL, h1)));
	printf("signal(SIGPIPE, SIG_IGN) -> %s\n", name(signal(SIGPIPE, SIG_IGN)));

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = hinfo;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaddset(&sa.sa_mask, SIGKILL);
	sigaddset(&sa.sa_mask, 40);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = SA_RESTART | SA_NODEFER;
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = h1;
	sa.sa_flags = 0;
	sigfillset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	if (sigaltstack(&ss, NULL))
		printf("sigaltstack: error\n");
	print_all("after set");

	ss.ss_flags = SS_DISABLE;
	if (sigaltstack(&ss, NULL))
		printf("sigaltstack disable: error\n");
	printf("signal(SIGSEGV, SIG_DFL) -> %s\n", name(signal(SIGSEGV, SIG_DFL)));
	print_all("after reset");
	return 0;
}
