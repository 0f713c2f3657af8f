/*
 * `mnemo run`: runs a program built with mnemo-cc with the profiling options of its command line,
 * set as the MNEMO_* variables the runtime reads (runtime/options.def), and ends exactly as
 * the program did: same exit status, or the same terminating signal.  Before the program starts it
 * checks what it can (the profile's folder takes a new file, the modules are installed); after, it
 * waits for the backends, which are its descendants (wait_backends()), and says when no profile
 * was written, the mark of a program not built with mnemo-cc.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "mnemo_internal.h"
#include "queue_internal.h"
#include "session.h"
#include "progress.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* The ranges of the runtime's uint options (options.def): `mnemo run` refuses what it would. */
static const struct {
	const char *env;
	unsigned min, max;
	const char *why;  /* why max is the limit, or "" */
} ranges[] = {
#define MN_OPTION_RANGE(env, min, max, why) { #env, min, max, why },
#include "options.def"
#undef MN_OPTION_RANGE
};

/* The largest value of env's range. */
static unsigned range_max(const char *env)
{
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (!strcmp(ranges[i].env, env))
			return ranges[i].max;
	return UINT_MAX;
}

void print_run_help(FILE *out)
{
	fputs("Usage: mnemo run [OPTIONS] [--] PROGRAM [ARGS...]\n"
	      "\n"
	      "Runs PROGRAM (built with mnemo-cc), searched for in PATH like a shell does, with\n"
	      "the profiling options below, and exits as it did: same exit status, same\n"
	      "terminating signal.  The profile goes to FILE, else $MNEMO_OUTPUT, else\n"
	      "<program>.mnemo.yaml in the working directory.  Options stop at the first\n"
	      "argument that is not one.  The backends that profile PROGRAM become children\n"
	      "of mnemo run, which waits for them before it exits: `time mnemo run` counts\n"
	      "their resources.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output FILE    write the profile to FILE (%p in it becomes the pid)\n",
	      out);
	fprintf(out,
		"  -j, --workers N      worker threads per backend process, 1 to %u (default 1;\n"
		"                       one per CPU, at most one per module, for several modules)\n"
		"  -m, --modules LIST   comma-separated subset of the modules the program was\n"
		"                       built for (default: all of them)\n"
		"      --queue-mb N     MiB per queue buffer, 1 to %u (default 4)\n"
		"      --alloc-depth N  allocation contexts, 1 to %u (default 3): an allocation is\n"
		"                       its site and its N - 1 innermost callers, for the modules\n"
		"                       that group allocations (1: by site alone)\n",
		range_max("MNEMO_WORKERS"), range_max("MNEMO_QUEUE_MB"),
		range_max("MNEMO_ALLOC_DEPTH"));
	fputs("      --numa MODE      NUMA placement: auto (default) puts the queue's buffers on\n"
	      "                       the program's node and binds the backends to it; a node\n"
	      "                       number does the same with that node; off does neither.\n"
	      "                       A no-op on a one-node machine (-v says so)\n"
	      "      --reproducible   leave the pid, times and backend resources out of the\n"
	      "                       profile and run PROGRAM without address randomization\n"
	      "                       (as setarch -R), so two runs' profiles compare byte for\n"
	      "                       byte\n"
	      "      --progress       while PROGRAM runs, a status line on stderr when it is a\n"
	      "                       terminal, rewritten every second and erased at the end:\n"
	      "                       time, events the backend decoded, events per second over\n"
	      "                       the last second, and the backend lag: MiB (and buffers)\n"
	      "                       of events PROGRAM queued that the slowest backend has not\n"
	      "                       read yet; \"full\" when a thread's 4 buffers all wait, so\n"
	      "                       PROGRAM waits for the backend.  Nothing without a\n"
	      "                       terminal (-v says why)\n"
	      "  -v, --verbose        say what mnemo and the runtime do, on stderr\n"
	      "  -h, --help           print this help\n"
	      "\n"
	      "Sets MNEMO_OUTPUT, MNEMO_WORKERS, MNEMO_MODULES, MNEMO_QUEUE_MB, MNEMO_NUMA,\n"
	      "MNEMO_ALLOC_DEPTH, MNEMO_REPRODUCIBLE and MNEMO_VERBOSE for the program; `mnemo --help` lists every variable.\n"
	      "\n"
	      "Example: mnemo run -o out.yaml -m value-pattern -- ./prog input.txt\n", out);
}

/*
 * Checks the value s of option opt, which sets variable env: a positive number within env's range,
 * or a usage error that names the range and, above it, why (before the program runs: the user
 * asked for a profile this value cannot give).
 */
static void check_count(const char *opt, const char *env, const char *s)
{
	unsigned long long v;

	if (!*s || s[strspn(s, "0123456789")])
		usage_error("run ", "%s: expected a positive number, got '%s'", opt, s);
	if (!parse_uint(s, ULLONG_MAX, &v))
		v = ULLONG_MAX;	/* more digits than fit: above any range */
	if (v == 0)
		usage_error("run ", "%s: expected a positive number, got '%s'", opt, s);
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		if (strcmp(ranges[i].env, env) || (v >= ranges[i].min && v <= ranges[i].max))
			continue;
		if (*ranges[i].why)
			usage_error("run ", "%s: at most %u (%s), got '%s'", opt, ranges[i].max,
				    ranges[i].why, s);
		usage_error("run ", "%s: expected a number from %u to %u, got '%s'", opt,
			    ranges[i].min, ranges[i].max, s);
	}
}

/* Checks a --numa MODE the way the runtime reads MNEMO_NUMA, or exits with a usage error. */
static void check_numa(const char *s)
{
	unsigned long long node;

	if (strcasecmp(s, "auto") && strcasecmp(s, "off") && !parse_uint(s, 1023, &node))
		usage_error("run ", "--numa: expected auto, off or a node number (0..1023), "
			    "got '%s'", s);
}

/* path with %p replaced by pid and %% by %. */
static char *expand_output(const char *path, pid_t pid)
{
	size_t cap = strlen(path) + 32, n = 0;
	char *s = xmalloc(cap);

	for (const char *c = path; *c; c++) {
		if (n + 24 >= cap)
			s = xrealloc(s, cap *= 2);
		if (c[0] == '%' && c[1] == 'p') {
			n += sprintf(s + n, "%ld", (long)pid);
			c++;
		} else if (c[0] == '%' && c[1] == '%') {
			s[n++] = '%';
			c++;
		} else {
			s[n++] = *c;
		}
	}
	s[n] = '\0';
	return s;
}

/* Checks that a profile can be created at path: its folder exists and takes a new file. */
static void check_output(const char *path)
{
	char *probe_path = expand_output(path, getpid());
	char *copy = xstrdup(probe_path), *dir = dirname(copy), *probe;
	struct stat st;
	int fd, err = 0;

	if (stat(probe_path, &st) == 0 && S_ISDIR(st.st_mode)) {
		err = EISDIR;
	} else {
		/* access() would say yes to root on a read-only mount: try for real. */
		probe = xasprintf("%s/.mnemo-probe-XXXXXX", dir);
		fd = mkstemp(probe);
		if (fd < 0) {
			err = errno;
		} else {
			close(fd);
			unlink(probe);
		}
		free(probe);
	}
	free(copy);
	free(probe_path);
	if (err)
		die(2, "cannot write profile '%s': %s", path, strerror(err));
}

/* Refuses module names that no installed module spec has. */
static void check_modules(const char *list)
{
	struct modspec *m;
	ssize_t n = list_modules(&m);
	char *copy = xstrdup(list), *save = NULL;

	if (!*list)
		usage_error("run ", "-m: empty module list");
	for (const char *c = list; *c; c++)
		if (*c == ',' && (c == list || c[1] == ',' || c[1] == '\0'))
			usage_error("run ", "-m: empty module name in '%s'", list);
	for (char *name = strtok_r(copy, ",", &save); name && n > 0;
	     name = strtok_r(NULL, ",", &save)) {
		bool found = false;

		for (ssize_t i = 0; i < n && !found; i++)
			found = !strcmp(m[i].name, name);
		if (!found) {
			size_t len = 1;
			char *known;

			for (ssize_t i = 0; i < n; i++)
				len += strlen(m[i].name) + 2;
			known = xmalloc(len);
			known[0] = '\0';
			for (ssize_t i = 0; i < n; i++) {
				if (i)
					strcat(known, ", ");
				strcat(known, m[i].name);
			}
			die(2, "unknown module '%s' (known: %s)", name, known);
		}
	}
	free(copy);
	free_modules(m, n);
}

static void xsetenv(const char *name, const char *value, bool verbose)
{
	if (setenv(name, value, 1))
		die(2, "cannot set %s: %s", name, strerror(errno));
	if (verbose)
		fprintf(stderr, "mnemo: %s=%s\n", name, value);
}

/* Signals mnemo run passes on to the program instead of dying of them. */
static const int forwarded[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM };
static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* ---- The backends, descendants of mnemo run ---------------------------------------------------- */

/*
 * The runtime starts each backend with a double fork (runtime/runtime.c, spawn_backend()), so
 * that the program never reaps it: the backend is orphaned at once.  mnemo run is a child
 * subreaper, so orphans of the program's tree become its children rather than PID 1's, and it
 * waits for the backends before it ends, as for any other descendant: `time mnemo run` and cgroup
 * accounting see their resources, and no backend lingers as a zombie of a PID 1 that does not
 * reap.  Other orphans (a daemon the program started) are reaped if they end while mnemo run is
 * waiting, never waited for.
 */

/* The parent pid in /proc/<pid>/stat ("pid (comm) S ppid ..."), or -1. */
pid_t parent_of(const char *pid)
{
	char path[64], buf[512], *c;
	ssize_t n;
	int fd, ppid;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: the fields resume after the last ')'. */
	c = strrchr(buf, ')');
	if (!c || sscanf(c + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/*
 * Whether process pid runs a backend: 1 when its command line holds `--fd N --index I`, the
 * arguments the runtime starts every backend with (mnemo-backend, or a MNEMO_BACKEND script that
 * execs it), 0 when it does not, -1 when it has none to read: a zombie, or a process exiting (its
 * memory is released before it becomes a zombie).  *fd, if fd is not NULL: N, the queue's.
 */
int is_backend(const char *pid, int *fd)
{
	char path[64], buf[4096];
	const char *arg[8] = { NULL };
	size_t nargs = 0;
	ssize_t n;
	int cfd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	cfd = open(path, O_RDONLY | O_CLOEXEC);
	if (cfd < 0)
		return 0;
	n = read(cfd, buf, sizeof(buf) - 1);
	close(cfd);
	if (n <= 0)
		return -1;	/* a zombie, or exiting */
	buf[n] = '\0';
	for (char *a = buf; a < buf + n && nargs < 8; a += strlen(a) + 1)
		arg[nargs++] = a;
	for (size_t i = 0; i + 3 < nargs; i++)
		if (!strcmp(arg[i], "--fd") && !strcmp(arg[i + 2], "--index")) {
			if (fd)
				*fd = atoi(arg[i + 1]);
			return 1;
		}
	return 0;
}

/*
 * A child of this process that runs a backend, or 0 when none does (or /proc cannot tell).
 * *exiting: the child has no command line left, so it is exiting (the zombies were reaped just
 * before): most likely a backend that has just written the profile, which cmdline no longer shows.
 */
static pid_t backend_child(bool *exiting)
{
	pid_t self = getpid(), found = 0;
	struct dirent *de;
	DIR *proc = opendir("/proc");

	*exiting = false;
	if (!proc)
		return 0;
	while (!found && (de = readdir(proc))) {
		int backend;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || parent_of(de->d_name) != self)
			continue;
		backend = is_backend(de->d_name, NULL);
		if (backend) {
			found = (pid_t)atoi(de->d_name);
			*exiting = backend < 0;
		}
	}
	closedir(proc);
	return found;
}

/* Reaps child pid, which is exiting, once it is a zombie; false if it is not within a second (a
 * child that blanked its own command line, not ours to wait for). */
static bool reap_exiting(pid_t pid)
{
	const struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 1000; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

/*
 * After the program has ended: reaps every child that has ended (backends that finished early,
 * other orphans), then waits for each backend still running.  Each has the profile to finish, and
 * the check for a written profile comes after.
 */
static void wait_backends(bool verbose)
{
	bool exiting;
	pid_t b;

	for (;;) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		b = backend_child(&exiting);
		if (!b)
			break;
		/* A backend that was finishing as we looked (flaky before: left as a zombie). */
		if (exiting) {
			if (!reap_exiting(b))
				break;
			continue;
		}
		if (verbose)
			warning("waiting for backend %ld to finish", (long)b);
		while (waitpid(b, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

struct file_id {
	bool exists;            /* a regular file */
	bool special;           /* not a regular file (/dev/null): whether it was written is unknown */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
};

static struct file_id file_id(const char *path)
{
	struct file_id id = { 0 };
	struct stat st;

	if (stat(path, &st))
		return id;
	id.special = !S_ISREG(st.st_mode);
	if (!id.special) {
		id.exists = true;
		id.dev = st.st_dev;
		id.ino = st.st_ino;
		id.mtime = st.st_mtim;
		id.size = st.st_size;
	}
	return id;
}

static bool file_changed(const struct file_id *a, const struct file_id *b)
{
	return a->exists != b->exists || a->dev != b->dev || a->ino != b->ino ||
	       a->mtime.tv_sec != b->mtime.tv_sec || a->mtime.tv_nsec != b->mtime.tv_nsec ||
	       a->size != b->size;
}

/* Ends mnemo the way the program ended: same status, or the same signal, re-raised. */
static void __attribute__((noreturn)) exit_like(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit nocore = { 0, 0 };
		sigset_t set;

		fflush(stdout);
		fflush(stderr);
		/* The program dumped core already if it was to; mnemo must not add its own. */
		setrlimit(RLIMIT_CORE, &nocore);
		signal(sig, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
		/* A signal whose default is to be ignored: say it the shell's way. */
		exit(128 + sig);
	}
	exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/*
 * Whether the executable prog (a path, or a name looked up in PATH as execvp() did) carries a
 * Mnemo site table, the mark of a program linked by mnemo-cc: the blob of runtime/abi.h.
 * -1 when it cannot be read.
 */
static int has_site_table(const char *prog)
{
	static const char mark[] = "mnemo-sites/";   /* any version */
	char path[4096];
	const char *p = prog;
	struct stat st;
	void *map;
	int fd, found;

	if (!strchr(prog, '/')) {
		const char *dirs = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";

		p = NULL;
		while (*dirs) {
			size_t n = strcspn(dirs, ":");

			snprintf(path, sizeof(path), "%.*s/%s", (int)n, n ? dirs : ".", prog);
			if (!access(path, X_OK)) {
				p = path;
				break;
			}
			dirs += n + (dirs[n] == ':');
		}
		if (!p)
			return -1;
	}
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
		close(fd);
		return -1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	found = memmem(map, (size_t)st.st_size, mark, sizeof(mark) - 1) != NULL;
	munmap(map, (size_t)st.st_size);
	return found;
}

/* ---- mnemo run, step by step ------------------------------------------------------------------ */

#define NFORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))

/* What mnemo run was asked for, and what it learns of the program as it runs it. */
struct run {
	const char *output, *modules, *workers, *queue_mb, *numa;   /* NULL: not given */
	const char *alloc_depth;                                   /* NULL: not given */
	bool verbose, reproducible;
	bool progress;           /* --progress */
	bool disabled;           /* MNEMO_DISABLE is set: no profile is expected */
	const char *prog;        /* PROGRAM as given */
	char **args;             /* PROGRAM and its arguments, as execvp() takes them */
	int nargs;
	char *expected;          /* where the runtime will write, %p unexpanded */
	char *expected_now;      /* the same for the program's pid */
	struct file_id before;   /* the profile's file before the program ran */
	int pipefd[2];           /* the child's exec error, if any */
	int gofd[2];             /* holds the child until "before" is taken */
	pid_t pid;
	int status;              /* the program's, from waitpid() */
	int exec_err;            /* why execvp() failed, when exec_failed */
	bool exec_failed;
	/* The signal mask and handlers mnemo run had before the program started. */
	sigset_t oldmask;
	struct sigaction old_int, old_quit, old_fwd[NFORWARDED];
	struct progress line;    /* the --progress line */
};

/* Reads the options into *run; false after --help (printed), and exits on a usage error. */
static bool parse_run_options(struct run *run, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "workers", required_argument, NULL, 'j' },
		{ "modules", required_argument, NULL, 'm' },
		{ "queue-mb", required_argument, NULL, 'Q' },
		{ "numa", required_argument, NULL, 'N' },
		{ "alloc-depth", required_argument, NULL, 'D' },
		{ "reproducible", no_argument, NULL, 'R' },
		{ "progress", no_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:o:j:m:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			run->output = optarg;
			break;
		case 'j':
			check_count("-j", "MNEMO_WORKERS", optarg);
			run->workers = optarg;
			break;
		case 'm':
			run->modules = optarg;
			break;
		case 'Q':
			check_count("--queue-mb", "MNEMO_QUEUE_MB", optarg);
			run->queue_mb = optarg;
			break;
		case 'D':
			check_count("--alloc-depth", "MNEMO_ALLOC_DEPTH", optarg);
			run->alloc_depth = optarg;
			break;
		case 'N':
			check_numa(optarg);
			run->numa = optarg;
			break;
		case 'R':
			run->reproducible = true;
			break;
		case 'P':
			run->progress = true;
			break;
		case 'v':
			run->verbose = true;
			break;
		case 'h':
			print_run_help(stdout);
			return false;
		default:
			option_error("run ", c, argv);
		}
	}
	if (optind >= argc)
		usage_error("run ", "no program to run");
	run->prog = argv[optind];
	run->args = argv + optind;
	run->nargs = argc - optind;
	return true;
}

/* Checks before the program runs what would cost it its profile: the output and the modules. */
static void check_run_options(const struct run *run)
{
	if (run->output && !*run->output)
		usage_error("run ", "-o: empty file name");
	if (run->output)
		check_output(run->output);
	if (run->modules)
		check_modules(run->modules);
}

/* Passes the options to the runtime as its MNEMO_* variables. */
static void set_run_environment(struct run *run)
{
	const char *disable;

	if (run->output)
		xsetenv("MNEMO_OUTPUT", run->output, run->verbose);
	if (run->workers)
		xsetenv("MNEMO_WORKERS", run->workers, run->verbose);
	if (run->modules)
		xsetenv("MNEMO_MODULES", run->modules, run->verbose);
	if (run->queue_mb)
		xsetenv("MNEMO_QUEUE_MB", run->queue_mb, run->verbose);
	if (run->numa)
		xsetenv("MNEMO_NUMA", run->numa, run->verbose);
	if (run->alloc_depth)
		xsetenv("MNEMO_ALLOC_DEPTH", run->alloc_depth, run->verbose);
	if (run->reproducible)
		xsetenv("MNEMO_REPRODUCIBLE", "1", run->verbose);
	if (run->verbose)
		xsetenv("MNEMO_VERBOSE", "1", run->verbose);
	disable = getenv("MNEMO_DISABLE");
	run->disabled = disable && strcmp(disable, "") && strcmp(disable, "0");
}

/* Where the runtime will write: the same rule as runtime/options.def. */
static void find_expected_profile(struct run *run)
{
	const char *output = getenv("MNEMO_OUTPUT");

	if (output && *output) {
		run->expected = xstrdup(output);
	} else {
		char *copy = xstrdup(run->prog);

		run->expected = xasprintf("%s.mnemo.yaml", basename(copy));
		free(copy);
	}
}

static void open_run_pipes(struct run *run)
{
	if (pipe2(run->pipefd, O_CLOEXEC) || pipe2(run->gofd, O_CLOEXEC))
		die(2, "pipe: %s", strerror(errno));
}

/* Says what runs (-v), and flushes what mnemo printed so the child does not print it again. */
static void announce_program(const struct run *run)
{
	if (run->verbose) {
		fprintf(stderr, "mnemo: running");
		for (int i = 0; i < run->nargs; i++)
			fprintf(stderr, " %s", run->args[i]);
		fputc('\n', stderr);
	}
	fflush(stdout);
	fflush(stderr);
}

/*
 * Like system(): while the program runs, a terminal's ^C and ^\ reach it (same process group) and
 * mnemo outlives them to end the same way; kill's signals are passed on to it.  Blocked across
 * fork so the child never runs a handler meant for the parent.
 */
static void hold_signals(struct run *run)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, fwd = { .sa_handler = forward };
	sigset_t block;

	sigemptyset(&block);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaddset(&block, forwarded[i]);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &run->oldmask);
	sigaction(SIGINT, &ign, &run->old_int);
	sigaction(SIGQUIT, &ign, &run->old_quit);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &fwd, &run->old_fwd[i]);
}

/* Puts back the handlers hold_signals() replaced (not the mask). */
static void restore_handlers(const struct run *run)
{
	sigaction(SIGINT, &run->old_int, NULL);
	sigaction(SIGQUIT, &run->old_quit, NULL);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &run->old_fwd[i], NULL);
}

/*
 * The child: mnemo run's signals as they were, then, once the parent has looked at the profile's
 * file, exec the program.  An exec error goes to the parent through pipefd.
 */
static void __attribute__((noreturn)) exec_program(const struct run *run)
{
	char go;
	int exec_err;

	restore_handlers(run);
	sigprocmask(SIG_SETMASK, &run->oldmask, NULL);
	close(run->pipefd[0]);
	close(run->gofd[1]);
	while (read(run->gofd[0], &go, 1) < 0 && errno == EINTR)
		;
	close(run->gofd[0]);
	/* Addresses repeat only without address-space randomization (setarch -R does this). */
	if (run->reproducible) {
		int pers = personality(0xffffffff);

		if (pers == -1 || personality((unsigned long)pers | ADDR_NO_RANDOMIZE) == -1)
			dprintf(STDERR_FILENO, "mnemo: --reproducible: cannot turn off address "
				"randomization (%s); addresses in the profile may differ "
				"between runs\n", strerror(errno));
	}
	execvp(run->prog, run->args);
	exec_err = errno;
	if (write(run->pipefd[1], &exec_err, sizeof(exec_err)) < 0)
		_exit(127);
	_exit(127);
}

/* Forks the program, held until release_program(); the backends it starts become our children. */
static void fork_program(struct run *run)
{
	/* The backends, orphaned at once, become our children (see wait_backends()). */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) && run->verbose)
		warning("cannot wait for the backends (PR_SET_CHILD_SUBREAPER: %s)",
			strerror(errno));
	run->pid = fork();
	if (run->pid < 0)
		die(2, "fork: %s", strerror(errno));
	if (run->pid == 0)
		exec_program(run);
	child_pid = run->pid;
}

/* Notes the profile's file as it is before the program runs, then lets the program go. */
static void release_program(struct run *run)
{
	run->expected_now = expand_output(run->expected, run->pid);
	/* Taken while the child waits: a fast program must not write its profile before this. */
	run->before = file_id(run->expected_now);
	close(run->gofd[0]);
	close(run->gofd[1]);
	sigprocmask(SIG_SETMASK, &run->oldmask, NULL);
}

/* Whether execvp() failed in the child: the pipe closes on exec, or carries its errno. */
static void read_exec_error(struct run *run)
{
	ssize_t r;

	close(run->pipefd[1]);
	do
		r = read(run->pipefd[0], &run->exec_err, sizeof(run->exec_err));
	while (r < 0 && errno == EINTR);
	close(run->pipefd[0]);
	run->exec_failed = r == (ssize_t)sizeof(run->exec_err);
}

/*
 * Waits for the program, showing the --progress line meanwhile; then erases it, and mnemo run's
 * own signals act on it again while the backends finish.
 */
static void wait_program(struct run *run)
{
	if (run->progress && !run->exec_failed && !run->disabled)
		progress_start(&run->line, run->pid, run->verbose);
	/* Any child: a backend that ends first is reaped now, the program's status kept. */
	for (;;) {
		pid_t w;

		if (run->line.on)
			progress_wait(&run->line);
		w = waitpid(-1, &run->status, run->line.on ? WNOHANG : 0);
		if (w == run->pid)
			break;
		if (w < 0 && errno != EINTR) {
			progress_stop(&run->line);
			die(2, "waitpid: %s", strerror(errno));
		}
	}
	progress_stop(&run->line);
	child_pid = 0;
	restore_handlers(run);
}

/* Exits as a shell would when the program could not be run. */
static void check_exec(const struct run *run)
{
	if (run->exec_failed)
		die(run->exec_err == ENOENT ? 127 : 126, "cannot run '%s': %s", run->prog,
		    strerror(run->exec_err));
}

/* Says when no profile was written (and, with -v, where it was). */
static void check_profile(const struct run *run)
{
	struct file_id after = file_id(run->expected_now);

	if (run->disabled) {
		if (run->verbose)
			warning("MNEMO_DISABLE is set: the program ran unprofiled");
	} else if (!after.special && (!after.exists || !file_changed(&run->before, &after))) {
		if (has_site_table(run->prog) == 0)
			warning("no profile was written: %s was not built with mnemo-cc (it carries "
				"no Mnemo site table)", run->prog);
		else
			warning("no profile was written%s", run->verbose ? "" : " (the lines above "
				"say why; -v says more)");
		if (run->verbose)
			warning("expected it at '%s'", run->expected_now);
	} else if (run->verbose) {
		warning("profile written to '%s'", run->expected_now);
	}
}

int cmd_run(int argc, char **argv)
{
	struct run run = { 0 };

	if (!parse_run_options(&run, argc, argv))
		return 0;
	check_run_options(&run);
	set_run_environment(&run);
	find_expected_profile(&run);
	open_run_pipes(&run);
	announce_program(&run);
	hold_signals(&run);
	fork_program(&run);
	release_program(&run);
	read_exec_error(&run);
	wait_program(&run);
	wait_backends(run.verbose);
	check_exec(&run);
	check_profile(&run);
	free(run.expected);
	free(run.expected_now);
	exit_like(run.status);
}
