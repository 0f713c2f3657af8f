/*
 * The program's signals under Mnemo (part of libmnemo-rt.a): the runtime catches the fatal signals
 * to flush the queue before the process dies, and gives the main thread an alternate signal stack
 * so that a stack overflow still flushes, without the program ever seeing either.
 *
 * sigaction, signal, bsd_signal, ssignal, sysv_signal, siginterrupt and sigaltstack are defined
 * here with default visibility, so that the program's calls and its shared libraries' calls bind
 * to them (glibc's internal calls, from abort(), system() or posix_spawn(), do not).  For each
 * signal the runtime caught at start (one of fatal_signals[] whose disposition was SIG_DFL), a
 * shadow entry holds the disposition the program set, as the kernel and glibc would read it back
 * (flags masked as this kernel masks them, SA_RESTORER and glibc's restorer, the mask without
 * SIGKILL and SIGSTOP), or the default: SIG_DFL, empty mask, flags 0.  The program reads the
 * shadow; the kernel holds:
 *
 *   program's disposition   kernel's disposition
 *   SIG_DFL                 dispatch(), SA_SIGINFO|SA_ONSTACK|SA_RESETHAND|SA_NODEFER|SA_RESTART
 *   SIG_IGN                 SIG_IGN, as the program set it (so exec keeps it ignored)
 *   a handler               dispatch(), with the program's flags and mask, SA_SIGINFO added and
 *                           SA_RESETHAND taken out (dispatch() resets the shadow itself)
 *
 * dispatch() reads the shadow: SIG_DFL flushes and dies of the signal (mn_rt_fatal_signal()); a
 * handler runs with the program's mask, SA_NODEFER, SA_RESTART and SA_ONSTACK as the kernel
 * applied them, called with one argument or three as SA_SIGINFO says; SA_RESETHAND resets the
 * shadow to SIG_DFL before the call, so that the next signal flushes and kills, as it kills
 * natively.  Signals the runtime did not catch pass straight through to glibc.
 *
 * The shadow is process-wide like dispositions: writers (sigaction, dispatch()'s reset) take one
 * spinlock with every signal blocked on their thread, readers (dispatch(), sigaction reads) use
 * each entry's sequence count and never wait on a writer of their own thread.  Everything here is
 * async-signal-safe, as sigaction() and sigaltstack() are.
 *
 * The alternate stack: the runtime's is installed on the main thread only.  There the program sees
 * none (SS_DISABLE, no stack) until it sets its own, which then replaces the runtime's in the
 * kernel; when it disables its own, the runtime's comes back and the program again sees none.
 * Other threads, and a main thread whose stack was set before the runtime started, pass through.
 *
 * abort() is defined here too, so that a SIGABRT handler that returns still leads to the flush.
 *
 * Known differences, documented in docs/internals.md: a program handler with SA_ONSTACK on the
 * main thread, with no stack of the program's, runs on the runtime's 64 KiB stack rather than the
 * thread's own; glibc's internal calls (its own abort() from assert() and heap checks, when a
 * SIGABRT handler returned; SysV sigset()) bypass the shadow, so such a death is not flushed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier.h"
#include "runtime_internal.h"

#define MN_VISIBLE __attribute__((visibility("default")))

#if !defined(SA_RESTORER) && (defined(__x86_64__) || defined(__i386__))
#define SA_RESTORER 0x04000000  /* the kernel's; glibc sets it in every sigaction() here */
#endif
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1u << 31)  /* linux/signal.h; glibc's headers do not define it */
#endif

/* The signals whose default action ends the process, and which the runtime flushes on. */
static const int fatal_signals[] = {
	SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGTERM, SIGINT, SIGHUP,
	SIGQUIT, SIGPIPE, SIGXCPU, SIGXFSZ, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
};

/* The kernel's flags for the runtime's own handler, where the program's disposition is SIG_DFL. */
#define FLUSH_FLAGS (SA_SIGINFO | SA_ONSTACK | SA_RESETHAND | SA_NODEFER | SA_RESTART)

/* The program's disposition of one signal the runtime caught, as sigaction() reads it back. */
struct shadow {
	uint32_t seq;        /* odd while a writer changes the fields below */
	uint32_t owned;      /* 1 once the runtime caught this signal; never reset */
	uintptr_t handler;   /* sa_handler or sa_sigaction; SIG_DFL (0) by default */
	uint32_t flags;      /* sa_flags as the kernel keeps them */
	uint64_t mask;       /* signals 1..64 of sa_mask, bit sig - 1 */
	uintptr_t restorer;  /* sa_restorer as glibc reads it back */
};

static struct shadow shadow[NSIG];
static uint32_t shadow_lock;           /* the writers' spinlock */
static uint32_t kept_flags = ~0u;      /* the sa_flags bits this kernel keeps (probed at start) */
static uintptr_t glibc_restorer;       /* what glibc installs as sa_restorer (probed at start) */
static uint64_t interrupting;          /* siginterrupt(sig, 1): signal() omits SA_RESTART */
static pid_t shadow_pid;               /* the process the shadow belongs to (see sigaction()) */

/* The runtime's alternate stack, and whether this thread's kernel stack is it. */
static stack_t own_stack;
static __thread bool altstack_ours __attribute__((tls_model("initial-exec")));
static __thread bool altstack_program __attribute__((tls_model("initial-exec")));

/* ---------------------------------------------------------------------------------------------- */

/* Takes the writers' lock with every signal blocked on this thread; *saved gets the old mask. */
static void shadow_lock_take(sigset_t *saved)
{
	sigset_t all;
	uint32_t expected;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, saved);
	for (;;) {
		expected = 0;
		if (mn_cas_acq_rel(&shadow_lock, &expected, 1))
			return;
		mn_cpu_relax();
	}
}

static void shadow_lock_drop(const sigset_t *saved)
{
	/* Publishes the entries written under the lock to the next writer; pairs with its CAS. */
	mn_store_release(&shadow_lock, 0);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* A consistent copy of *e.  Never waits on a writer of this thread, which has signals blocked. */
static void shadow_read(const struct shadow *e, struct shadow *v)
{
	uint32_t s1, s2;

	for (;;) {
		/* Pairs with the release store that ends a write in shadow_write(). */
		s1 = mn_load_acquire(&e->seq);
		if (s1 & 1) {
			mn_cpu_relax();
			continue;
		}
		v->handler = mn_load_relaxed(&e->handler);
		v->flags = mn_load_relaxed(&e->flags);
		v->mask = mn_load_relaxed(&e->mask);
		v->restorer = mn_load_relaxed(&e->restorer);
		/* Orders the field loads before the second look at seq. */
		mn_fence_seq_cst();
		s2 = mn_load_relaxed(&e->seq);
		if (s1 == s2)
			return;
	}
}

/* Writes the fields of *e from *v.  With the writers' lock held. */
static void shadow_write(struct shadow *e, const struct shadow *v)
{
	mn_store_relaxed(&e->seq, e->seq + 1);
	/* Orders the odd seq before the field stores, for shadow_read()'s second look. */
	mn_fence_seq_cst();
	mn_store_relaxed(&e->handler, v->handler);
	mn_store_relaxed(&e->flags, v->flags);
	mn_store_relaxed(&e->mask, v->mask);
	mn_store_relaxed(&e->restorer, v->restorer);
	/* Publishes the fields; pairs with the acquire load in shadow_read(). */
	mn_store_release(&e->seq, e->seq + 1);
}

/* What the kernel and glibc would read back after sigaction(sig, a, NULL). */
static void shadow_from(struct shadow *v, const struct sigaction *a)
{
	uint32_t flags = (uint32_t)a->sa_flags;

#ifdef SA_RESTORER
	flags |= SA_RESTORER;  /* glibc adds it, with its own restorer */
#endif
	v->handler = (uintptr_t)a->sa_handler;
	v->flags = flags & kept_flags;
	v->mask = 0;
	for (int s = 1; s <= 64 && s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP && sigismember(&a->sa_mask, s) == 1)
			v->mask |= 1ull << (s - 1);
#ifdef SA_RESTORER
	v->restorer = v->flags & SA_RESTORER ? glibc_restorer : 0;
#else
	v->restorer = 0;
#endif
}

/* Fills *o as glibc's sigaction() does: the kernel's 64-bit mask, the rest of sa_mask untouched. */
static void shadow_to(const struct shadow *v, struct sigaction *o)
{
	o->sa_handler = (void (*)(int))v->handler;
	o->sa_flags = (int)v->flags;
	memcpy(&o->sa_mask, &v->mask, sizeof(v->mask));
#ifdef SA_RESTORER
	o->sa_restorer = (void (*)(void))v->restorer;
#endif
}

/* ---------------------------------------------------------------------------------------------- */

static void dispatch(int sig, siginfo_t *info, void *ctx);

/* The runtime's handler, for a program's SIG_DFL. */
static int kernel_flush(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = dispatch;
	sa.sa_flags = FLUSH_FLAGS;
	sigemptyset(&sa.sa_mask);
	return __sigaction(sig, &sa, NULL);
}

/* The program's disposition a, as the kernel must hold it (table in the opening comment). */
static int kernel_program(int sig, const struct sigaction *a)
{
	struct sigaction sa;

	if (a->sa_handler == SIG_DFL)
		return kernel_flush(sig);
	if (a->sa_handler == SIG_IGN)
		return __sigaction(sig, a, NULL);
	sa = *a;
	sa.sa_sigaction = dispatch;
	sa.sa_flags = (a->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
	return __sigaction(sig, &sa, NULL);
}

/*
 * SA_RESETHAND: the shadow goes back to SIG_DFL (flags and mask kept, as the kernel keeps them)
 * and the kernel to the runtime's handler, unless the program changed the disposition meanwhile.
 */
static void reset_to_default(int sig, uintptr_t handler)
{
	struct shadow *e = &shadow[sig];
	struct shadow v;
	sigset_t saved;

	shadow_lock_take(&saved);
	shadow_read(e, &v);
	if (v.handler == handler) {
		v.handler = (uintptr_t)SIG_DFL;
		shadow_write(e, &v);
		kernel_flush(sig);
	}
	shadow_lock_drop(&saved);
}

/* The kernel's handler for every signal the runtime caught.  See the opening comment. */
static void dispatch(int sig, siginfo_t *info, void *ctx)
{
	struct shadow v;
	int saved_errno = errno;

	shadow_read(&shadow[sig], &v);
	if (v.handler == (uintptr_t)SIG_DFL) {
		mn_rt_fatal_signal(sig, info, ctx);
		return;
	}
	if (v.handler == (uintptr_t)SIG_IGN)
		return;	/* raced with the program's sigaction(SIG_IGN) */
	if (v.flags & SA_RESETHAND)
		reset_to_default(sig, v.handler);
	errno = saved_errno;
	if (v.flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))v.handler)(sig, info, ctx);
	else
		((void (*)(int))v.handler)(sig);
}

/* ---------------------------------------------------------------------------------------------- */

/*
 * An alternate signal stack for the main thread, so that a stack overflow still flushes.  A page
 * below it stays inaccessible, so that overflowing the handler's stack faults (and kills, the
 * handler being reset) instead of corrupting memory.  None if the thread already has one (a
 * library constructor set it): that one is the program's.
 */
static void install_altstack(void)
{
	long page = sysconf(_SC_PAGESIZE), min = sysconf(_SC_SIGSTKSZ);
	size_t size = 64 * 1024;
	stack_t old, ss;
	char *p;

	if (page <= 0)
		page = 4096;
	if (min > 0 && size < 4 * (size_t)min)
		size = (4 * (size_t)min + (size_t)page - 1) & ~((size_t)page - 1);
	if (syscall(SYS_sigaltstack, NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE))
		return;
	p = mmap(NULL, size + (size_t)page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return;	/* costs only the flush on stack overflow */
	mprotect(p, (size_t)page, PROT_NONE);
	ss.ss_sp = p + page;
	ss.ss_size = size;
	ss.ss_flags = 0;
	if (syscall(SYS_sigaltstack, &ss, NULL)) {
		munmap(p, size + (size_t)page);
		return;
	}
	own_stack = ss;
	altstack_ours = true;
}

/*
 * Which sa_flags bits this kernel keeps (5.11 and later clear unknown ones) and the restorer glibc
 * installs, from one sigaction() with every flag set, read back.  The caller then installs the
 * signal's real disposition.
 */
static void probe_flags(int sig)
{
	struct sigaction sa, back;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = dispatch;
	sa.sa_flags = -1;
	sigemptyset(&sa.sa_mask);
	if (__sigaction(sig, &sa, NULL) || __sigaction(sig, NULL, &back))
		return;
	kept_flags = (uint32_t)back.sa_flags;
#ifdef SA_RESTORER
	glibc_restorer = (uintptr_t)back.sa_restorer;
#endif
}

void mn_signals_install(void)
{
	struct sigaction old;
	sigset_t saved;
	bool probed = false;

	install_altstack();
	shadow_pid = (pid_t)syscall(SYS_getpid);
	shadow_lock_take(&saved);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		int sig = fatal_signals[i];

		if (__sigaction(sig, NULL, &old) || old.sa_handler != SIG_DFL)
			continue;	/* SIG_IGN and handlers set before us stay, unshadowed */
		if (!probed) {
			probe_flags(sig);
			probed = true;
		}
		if (kernel_flush(sig)) {
			/* Back to what it was; the signal stays the program's alone. */
			__sigaction(sig, &old, NULL);
			continue;
		}
		/* The entry is all zeros: SIG_DFL, flags 0, empty mask.  Pairs with sigaction(). */
		mn_store_release(&shadow[sig].owned, 1);
	}
	shadow_lock_drop(&saved);
}

/*
 * In a fork child, single-threaded: a thread of the parent that held the writers' lock is gone.
 * An entry it was writing keeps whatever it had written.
 */
void mn_signals_fork_child(void)
{
	for (int sig = 1; sig < NSIG; sig++)
		if (shadow[sig].seq & 1)
			shadow[sig].seq++;
	mn_store_relaxed(&shadow_lock, 0);
	shadow_pid = (pid_t)syscall(SYS_getpid);
}

/* ---------------------------------------------------------------------------------------------- */

MN_VISIBLE int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	struct shadow *e;
	struct shadow v;
	struct sigaction a;
	sigset_t saved;
	int rc;

	/* Pairs with the release store of owned in mn_signals_install(). */
	if (sig <= 0 || sig >= NSIG || !mn_load_acquire(&shadow[sig].owned))
		return __sigaction(sig, act, oldact);
	e = &shadow[sig];
	if (!act) {
		if (oldact) {
			shadow_read(e, &v);
			shadow_to(&v, oldact);
		}
		return 0;
	}
	a = *act;	/* act and oldact may be the same */
	if ((pid_t)syscall(SYS_getpid) != shadow_pid) {
		/*
		 * A vfork() child, sharing our memory but not our dispositions, or a child of
		 * _Fork() or clone(): it runs unprofiled, so its kernel gets the disposition as
		 * set, and the parent's shadow is left alone.
		 */
		shadow_read(e, &v);
		if (__sigaction(sig, &a, NULL))
			return -1;
		if (oldact)
			shadow_to(&v, oldact);
		return 0;
	}
	shadow_lock_take(&saved);
	shadow_read(e, &v);
	rc = kernel_program(sig, &a);
	if (!rc) {
		struct shadow n;

		shadow_from(&n, &a);
		shadow_write(e, &n);
	}
	rc = rc ? errno : 0;
	shadow_lock_drop(&saved);
	if (rc) {
		errno = rc;
		return -1;
	}
	if (oldact)
		shadow_to(&v, oldact);
	return 0;
}

/* signal() and sysv_signal(): handler for sig through this file's sigaction(), with flags, sig
 * blocked in its handler when block_self; returns the handler before. */
static void (*set_handler(int sig, void (*handler)(int), bool block_self, int flags))(int)
{
	struct sigaction act, old;

	if (handler == SIG_ERR || sig < 1 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	if (block_self)
		sigaddset(&act.sa_mask, sig);
	act.sa_flags = flags;
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* glibc's signal(): BSD semantics, the signal blocked in its handler, SA_RESTART unless
 * siginterrupt() said otherwise. */
MN_VISIBLE void (*signal(int sig, void (*handler)(int)))(int)
{
	bool interrupt = sig >= 1 && sig <= 64 && (mn_load_relaxed(&interrupting) >> (sig - 1) & 1);

	return set_handler(sig, handler, true, interrupt ? 0 : SA_RESTART);
}

MN_VISIBLE __attribute__((alias("signal"))) void (*bsd_signal(int sig, void (*handler)(int)))(int);
MN_VISIBLE __attribute__((alias("signal"))) void (*ssignal(int sig, void (*handler)(int)))(int);

/* glibc's sysv_signal(): reset on delivery, not blocked in its handler, no SA_RESTART. */
MN_VISIBLE void (*sysv_signal(int sig, void (*handler)(int)))(int)
{
	return set_handler(sig, handler, false, SA_RESETHAND | SA_NODEFER);
}

/* glibc's siginterrupt(), on this file's sigaction() so that the shadow follows. */
MN_VISIBLE int siginterrupt(int sig, int flag)
{
	struct sigaction act;

	if (sigaction(sig, NULL, &act) < 0)
		return -1;
	if (sig <= 64) {
		if (flag)
			__atomic_fetch_or(&interrupting, 1ull << (sig - 1), __ATOMIC_RELAXED);
		else
			__atomic_fetch_and(&interrupting, ~(1ull << (sig - 1)), __ATOMIC_RELAXED);
	}
	if (flag)
		act.sa_flags &= ~SA_RESTART;
	else
		act.sa_flags |= SA_RESTART;
	return sigaction(sig, &act, NULL) < 0 ? -1 : 0;
}

/*
 * abort(), for the program's and its libraries' calls (glibc's own, from assert() or a detected
 * heap corruption, stay glibc's): glibc's steps, with the flush just before the default action
 * ends the process, when the program's SIGABRT handler returned or the program ignores SIGABRT.
 * A handler that does not return (longjmp, exit) never comes back here, as natively.
 */
MN_VISIBLE __attribute__((noreturn)) void abort(void)
{
	struct sigaction dfl;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGABRT);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGABRT);
	mn_rt_end_of_run_signal(SIGABRT);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigfillset(&dfl.sa_mask);
	__sigaction(SIGABRT, &dfl, NULL);
	raise(SIGABRT);
	for (;;)
		syscall(SYS_exit_group, 127);	/* as glibc, if SIGABRT did not end it */
}

MN_VISIBLE int sigaltstack(const stack_t *ss, stack_t *oldss)
{
	stack_t want;
	long rc;

	if (!altstack_ours)
		return (int)syscall(SYS_sigaltstack, ss, oldss);
	if (altstack_program) {
		/* The kernel holds the program's stack: its answers are the program's. */
		if (ss)
			want = *ss;
		rc = syscall(SYS_sigaltstack, ss, oldss);
		if (!rc && ss && (want.ss_flags & SS_DISABLE)) {
			altstack_program = false;
			syscall(SYS_sigaltstack, &own_stack, NULL);
		}
		return (int)rc;
	}
	/* The kernel holds the runtime's stack; the program has none. */
	if (ss) {
		int mode;

		want = *ss;
		mode = (int)((unsigned)want.ss_flags & ~SS_AUTODISARM);
		if (mode != 0 && mode != SS_ONSTACK && mode != SS_DISABLE) {
			errno = EINVAL;
			return -1;
		}
		if (mode != SS_DISABLE) {
			if (syscall(SYS_sigaltstack, &want, NULL))
				return -1;
			altstack_program = true;
		}
	}
	if (oldss) {
		oldss->ss_sp = NULL;
		oldss->ss_size = 0;
		oldss->ss_flags = SS_DISABLE;
	}
	return 0;
}
