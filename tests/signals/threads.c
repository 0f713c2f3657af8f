/*
 * Dispositions are process-wide: four threads change the handler of SIGUSR2 between two functions
 * while each signals itself, and read it back; every signal reaches one of the program's handlers,
 * and every read gives one of them.  A fork child from a thread sets and reads its own, and what a
 * vfork child sets stays its own.  Prints
 * only counts, the same natively and under Mnemo.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 2000

static unsigned long usr1, usr2, bad;

static void on_usr1(int sig) { (void)sig; __atomic_fetch_add(&usr1, 1, __ATOMIC_RELAXED); }
static void on_a(int sig) { (void)sig; __atomic_fetch_add(&usr2, 1, __ATOMIC_RELAXED); }
static void on_b(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (si->si_signo != sig)
		__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&usr2, 1, __ATOMIC_RELAXED);
}

static void *run(void *arg)
{
	struct sigaction sa, old;

	for (int i = 0; i < ROUNDS; i++) {
		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		if ((i + (int)(long)arg) & 1) {
			sa.sa_handler = on_a;
		} else {
			sa.sa_sigaction = on_b;
			sa.sa_flags = SA_SIGINFO;
		}
		sigaction(SIGUSR2, &sa, &old);
		if (old.sa_handler != on_a && old.sa_sigaction != on_b)
			__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
		pthread_kill(pthread_self(), SIGUSR1);
		pthread_kill(pthread_self(), SIGUSR2);
	}
	return NULL;
}

static void *forker(void *arg)
{
	int st = -1;
	pid_t pid;

	(void)arg;
	pid = fork();
	if (pid == 0) {
		void (*prev)(int) = signal(SIGUSR1, SIG_IGN);

		raise(SIGUSR1);
		_exit(prev == on_usr1 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	printf("fork child: %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "wrong");
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS], f;
	struct sigaction sa, old;
	pid_t pid;
	int st;

	signal(SIGUSR1, on_usr1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_a;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_create(&f, NULL, forker, NULL);
	pthread_join(f, NULL);
	pid = vfork();
	if (pid == 0) {
		signal(SIGUSR2, SIG_IGN);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	sigaction(SIGUSR2, NULL, &old);
	printf("after vfork: SIGUSR2 %s\n", old.sa_handler == SIG_IGN ? "ignored" : "handled");
	raise(SIGUSR2);
	printf("SIGUSR1 %lu, SIGUSR2 %lu, bad %lu\n", usr1, usr2 - 1, bad);
	return 0;
}
