/*
 * Private interface between the files of the native frontend runtime: options.c (the MNEMO_*
 * options and the settings derived from them), runtime.c (start-up, backend launch, end of run),
 * signals.c (the program's signal dispositions and the runtime's handlers behind them) and heap.c
 * (the allocator interposer).  Never installed: nothing outside runtime/ and its unit
 * test (tests/runtime/) may include it.
 *
 * Everything declared here has hidden visibility (the project builds with -fvisibility=hidden): the
 * two archives are linked into the same executable, so hidden symbols still bind between them, and
 * none of them is exported from the profiled program.
 */
#ifndef MNEMO_RUNTIME_INTERNAL_H
#define MNEMO_RUNTIME_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"

/* ---- Options (options.c) --------------------------------------------------------------------- */

/* The C type of each option type of options.def. */
#define MN_OPTION_TYPE_str  const char *
#define MN_OPTION_TYPE_uint unsigned
#define MN_OPTION_TYPE_bool bool

/* One field per row of options.def; a str option that is unset or empty points at its default. */
struct mn_options {
#define MN_OPTION(type, field, env, def, doc) MN_OPTION_TYPE_##type field;
#include "options.def"
#undef MN_OPTION
};

/* How mn_options_read() looks a variable up: getenv() in the runtime, a table in the unit test. */
typedef const char *mn_getenv_fn(const char *name, void *ctx);

/*
 * Fills *o from the variables of options.def.  Every option is parsed, a bad one keeping its
 * default, so the caller can still honour MNEMO_DISABLE when another value is bad.  Returns 0, or
 * -EINVAL with the first problem in err, e.g. "MNEMO_WORKERS: 'x' is not a number" (no "mnemo: "
 * prefix, no newline).  The str fields point into the strings `get` returned.
 */
int mn_options_read(struct mn_options *o, mn_getenv_fn *get, void *ctx, char *err, size_t errlen);

/*
 * The absolute profile path: `pattern` (MNEMO_OUTPUT) with every %p replaced by pid and %% by %,
 * or, when pattern is empty, "<basename of program>.mnemo.yaml"; a relative result is taken
 * relative to cwd.  Returns 0, -ENAMETOOLONG when the result does not fit outlen bytes, or -EINVAL
 * when it would be relative and cwd is NULL or relative.
 */
int mn_options_output_path(char *out, size_t outlen, const char *pattern, const char *program,
			   long pid, const char *cwd);

/*
 * The profile path of image `image` of a run (session.h) from the first image's path, in place:
 * image 0 keeps it; later images get ".<pid>" (unless the pattern had a %p, which put the pid
 * there already) and, from image 2 on, ".<image>", before the name's ".mnemo.yaml" or ".yaml",
 * else at its end: p.yaml, p.4242.yaml, p.4242.2.yaml; prog.4242.mnemo.yaml.  As LLVM's %p,
 * so that a fork child, a process the program started and an image after exec each keep a
 * profile of their own.  0, or -ENAMETOOLONG (path unchanged).
 */
int mn_options_image_path(char *path, size_t len, long pid, unsigned image, bool pid_in_pattern);

/*
 * The modules to run: every module of `built` (the comma list __mnemo_modules), or, when `wanted`
 * (MNEMO_MODULES) is not empty, those of them it names, in the order of `built`, each once.
 * Returns the number of modules (>= 1) in names[], or -EINVAL with the reason in err.
 */
int mn_options_select_modules(char names[MN_MAX_MODULES][MN_MODULE_NAME_MAX], const char *built,
			      const char *wanted, char *err, size_t errlen);

/*
 * A str option that names one of choices (NULL-terminated): its index, 0 for unset or empty (the
 * first choice is the default), or -1 for anything else.  Case does not matter.
 */
int mn_options_choice(const char *val, const char *const *choices);
extern const char *const mn_options_backends[];   /* MNEMO_BACKENDS: one, per-module */
extern const char *const mn_options_splits[];     /* MNEMO_SPLIT: module, shard (enum mn_split) */

/* MNEMO_NUMA as mn_options_numa() decodes it: one of these, or a node number. */
enum {
	MN_NUMA_OFF = -2,   /* "off": no placement, no binding */
	MN_NUMA_AUTO = -1,  /* "" or "auto": the node the program starts on */
};
#define MN_NUMA_MAX_NODE 1023  /* the largest node number a Linux kernel has (NODES_SHIFT 10) */

/*
 * Decodes a MNEMO_NUMA value: "" and "auto" give MN_NUMA_AUTO, "off" MN_NUMA_OFF (both in any
 * case), decimal digits a node number 0..MN_NUMA_MAX_NODE.  Returns 0 with *mode set, or -EINVAL.
 * mn_options_read() rejects a value this rejects, so after it this cannot fail.
 */
int mn_options_numa(const char *val, int *mode);

/*
 * The largest sampling period N (spec.h `sample:`): the randomized periods, up to N + N/2, must fit
 * the callbacks' int32_t countdown.
 */
#define MN_SAMPLE_MAX 1000000000u

/*
 * Decodes the value val of the `sample:` variable env: unset (NULL) or empty gives 1, decimal
 * digits 1..MN_SAMPLE_MAX give that N.  Returns 0 with *n set, or -EINVAL (*n untouched) with
 * "<env>: '<val>' is not a sampling period (an integer in 1..1000000000)" in err (no prefix, no
 * newline) for 0, a sign, anything not a digit, or a larger number.
 */
int mn_options_sample(const char *env, const char *val, unsigned *n, char *err, size_t errlen);

/* ---- Shared by runtime.c and heap.c ---------------------------------------------------------- */

/*
 * Nonzero while the runtime itself runs on this thread (set-up, end of run, the heap interposer's
 * own fallback to libstdc++): the heap interposer then allocates without emitting an event, so the
 * profile shows only the program's allocations.  Initial-exec TLS: the interposer reads it on every
 * malloc, including those the dynamic loader makes before any constructor has run.
 */
extern __thread unsigned mn_rt_quiet __attribute__((tls_model("initial-exec")));

/* ---- Signals (signals.c and runtime.c) ------------------------------------------------------- */

struct sigaction;

/*
 * glibc's sigaction under its exported name (GLIBC_2.2.5): the kernel's disposition, never the
 * program's view that signals.c's sigaction() gives.  The runtime's own calls use it.
 */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *oldact);

/*
 * Catches the fatal signals whose disposition is SIG_DFL, behind the program's view of them, and
 * gives this thread (the main thread) the runtime's alternate stack.  Called once by set-up, when
 * profiling is sure to start.
 */
void mn_signals_install(void);

/* ---- exec (exec.c, runtime.c) ---- */

#define MN_EXEC_MARKER_MAX 64   /* "MNEMO_EXEC_OF=<pid>:<image>" and its NUL */

/*
 * Before an exec of path: ends this image's session, its profile saying so, and writes into
 * marker the MNEMO_EXEC_OF assignment that tells the new image which it is (runtime.c, "Sessions
 * of a process tree").  False when no session runs (nothing to add to the environment).
 * Async-signal-safe, as exec is: a vfork child's call only builds the marker.
 */
bool mn_rt_exec_begin(const char *path, char marker[MN_EXEC_MARKER_MAX]);
/* After an exec that failed: the image goes on, as the next image of its process. */
void mn_rt_exec_failed(void);
/* From the constructor: what exec.c needs resolved before any vfork child can call it. */
void mn_rt_exec_init(void);
/* threads.c: a fork child's one thread. */
void mn_rt_threads_fork_child(void);

/* In a fork child (pthread_atfork): frees the dispositions' lock a vanished thread may hold. */
void mn_signals_fork_child(void);

/*
 * The end of run for a fatal signal whose disposition, as the program sees it, is SIG_DFL: flushes,
 * then makes the process die of sig as it would have.  Called by signals.c's handler, with the
 * handler's arguments (ctx is the ucontext_t).  Async-signal-safe.
 */
void mn_rt_fatal_signal(int sig, void *info, void *ctx);

/*
 * The end of run for a death by sig that the caller brings about itself (abort() after the
 * program's SIGABRT handler returned).  Async-signal-safe; returns.
 */
void mn_rt_end_of_run_signal(int sig);

/* ---- Linked units (units.c, unit.h) ---- */

/*
 * At the session's start: decides which registered units are profiled and their bases, after
 * the program's program_count sites; *sites_len: bytes of their tables' lines, *text_len: at most
 * the bytes mn_units_copy_text() writes, *total_count: the highest id of all.
 */
void mn_units_layout(uint32_t program_count, uint64_t *sites_len, uint64_t *text_len,
		     uint32_t *total_count);
/* The profiled units' site lines (no header), back to back, into dst; returns the bytes. */
uint64_t mn_units_copy_sites(char *dst);
/* The session's unit lines (session.h, units_off) into dst, at most cap bytes; returns bytes. */
uint64_t mn_units_copy_text(char *dst, uint64_t cap);
/* Once the session runs: the units' callbacks on, their globals registered; verbose: one line
 * per unit on stderr. */
void mn_units_start(bool verbose);
/* "library x not profiled: why; ..." for the end-of-run record, at most len bytes, no NUL;
 * returns the bytes.  Async-signal-safe. */
size_t mn_units_reason(char *buf, size_t len);

#endif /* MNEMO_RUNTIME_INTERNAL_H */
