/*
 * Event specifications: the catalogue (events.yaml at the root of the tree) and the module specs
 * (modules/<name>/events.yaml), parsed and validated, and the wire format they imply.
 *
 * The specializer (specializer/specialize.c) uses this to generate the frontend callbacks; tools
 * and the backend may use it to read the same files the same way.  A module spec looks like:
 *
 *   module: value-pattern              # must equal the name of its folder
 *   doc: constant and few-valued loads and stores, dominant address strides
 *   default: true                      # true | false (default): built when mnemo-cc has no -m
 *   shard: site                        # none (default) | site | address
 *   shard_shift: 6                     # only with `shard: address`, 0..47
 *   accesses: all                      # all (default) | pointer
 *   sample: MNEMO_VP_SAMPLE            # optional: loads and stores may be sampled, one in N
 *   events:
 *     load: [site, address, value]     # event name from the catalogue: arguments used
 *     func_entry: []                   # the event is used, with no argument beyond its site
 *
 * `accesses: pointer` says that the module needs only the loads and stores whose value is a
 * pointer (abi.h: the pass reports those through __mnemo_load_ptr / __mnemo_store_ptr).  The
 * events and their record layouts are the same; the specializer gives __mnemo_load
 * (__mnemo_store) a body only when some chosen module that lists `load` (`store`) has `accesses:
 * all`, so that in a build whose modules all say `pointer`, LTO deletes every other access's call.
 * When a module of each kind lists the same event, load or store, the wire has the pointer flag
 * (MN_WIRE_POINTER, queue.h): the _ptr entry points then send their code with MN_CODE_POINTER
 * or'ed in (0x81, 0x82), and the backend gives the pointer-only modules only those records.  Such
 * a build keeps every pointer access per access (plan state 2: summary and mixed records carry no
 * flag), and its plain entry points send `value` only when an `accesses: all` module lists it (0
 * otherwise, which leaves them summarizable).  Without the flag, every access record is a pointer
 * access, or no chosen module tells them apart.
 *
 * `default: true` puts the module in the default set, the modules mnemo-cc builds for when given
 * no -m (mnemo-specialize --defaults): the profiling modules, not those that measure Mnemo itself
 * (null, shadow-cost) or serve as an example (alloc-sizes).  Absent means false, so that a module
 * someone adds does not join every build unasked.
 *
 * `sample: VAR` says that the module is content with one load or store in N, N being read from the
 * environment variable VAR (MNEMO_[A-Z0-9_]+) at program start; 1 or unset means every access.  It
 * needs the module to list load or store.  The specializer gives the four access entry points a
 * countdown (one thread-local decrement and branch per access; the period is randomized around N)
 * only when every chosen module that lists load or store declares the same VAR: one module that
 * needs every access turns sampling off for the build, and the runtime says so at start when VAR
 * asks for N > 1.  No other event is ever sampled.  The runtime passes the N in effect to the
 * backends as VAR in their environment (1 when sampling is off, VAR unset or invalid), so a module
 * that scales its counts reads VAR there.
 *
 * A module that lists `value` (events.yaml) gets each site's values as a set: the program sends a
 * value only while the site's published set lacks it (abi.h, struct mn_value_set), and the module
 * publishes what it has seen (backend.h, mn_run_value_seen()).  It must shard by site or not at
 * all, and at most one chosen module may list it.  Loads and stores whose records then carry no
 * `value` keep plan state 1 for summaries, as 3 (abi.h): the pass calls __mnemo_value at the
 * accesses it summarizes, and the entry points check every other access's value themselves.
 *
 * Packing rules (mn_spec_pack()): an event is sent iff some chosen module lists it (or it is one of
 * the framework's thread events, mn_spec_thread_event(), sent always).  A sent event
 * carries the union over the chosen modules of the arguments they list, plus its `site` argument
 * when the catalogue gives it one: the backend shards by site and must see it on every event.  The
 * record is the 8-bit event code in bits 0..7 of word 0, then each sent argument in catalogue
 * order, placed first fit: into the first word with at least `bits` free bits above the ones
 * already used, or a new word; words fill from bit 0 up, at most MN_WIRE_MAX_WORDS words.  When
 * the longest record is 2 words, every record is 2 words (fixed 16-byte records: a 1-word record
 * gets a zero word 1), which the backend decodes faster.  The wire's flags are MN_WIRE_POINTER
 * when some chosen module with `accesses: pointer` and some with `accesses: all` list the same
 * event, load or store; else 0.
 *
 * The loop summary events (loop_summary_load, loop_summary_store, loop_summary, and the mixed
 * loops' loop_summary_open, mixed_load, mixed_store, loop_summary_at, loop_summary_close) belong to
 * the framework, not to modules: no module may list them.  When loop summaries are on, the
 * specializer adds the first three to the wire with every argument (mn_spec_pack_summaries()),
 * after the modules' events and without changing them, and the other five too when mixed loops
 * are on.  With the tree's catalogue, mixed_load and mixed_store records are 2 words: w0 code |
 * site | size, w1 address | position.
 *
 * Functions returning int return 0 or -errno: -EINVAL when a file is invalid, -ENOMEM, or the
 * errno of a failed open or read.  On failure they fill err->msg with one line,
 * "<file>:<line>:<col>: <what>" (1-based) when a place in a file is to blame, "<file>: <what>"
 * otherwise, and leave the output pointers untouched.
 */
#ifndef MNEMO_SPEC_H
#define MNEMO_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "module.h"  /* enum mn_shard */
#include "queue.h"   /* struct mn_wire, MN_WIRE_MAX_* */

#define MN_SPEC_FORMAT   "mnemo-events/1"  /* the catalogue's `format:` */
#define MN_SPEC_NAME_MAX 32                /* module names, NUL included (MN_MODULE_NAME_MAX) */
#define MN_SPEC_SAMPLE_MAX 64              /* `sample:` variable names, NUL included */

struct mn_spec_error {
	char msg[1024];
};

struct mn_spec_arg {
	char *name;                 /* "address" */
	char *doc;
	unsigned bits;              /* 1..64 */
	unsigned line, column;      /* where it is defined, 1-based */
};

struct mn_spec_event {
	char *name;                 /* "load" */
	char *doc;
	unsigned code;              /* 1..MN_WIRE_MAX_EVENTS-1 */
	unsigned nargs;             /* 0..MN_WIRE_MAX_ARGS */
	struct mn_spec_arg arg[MN_WIRE_MAX_ARGS];  /* arg index = position here = wire arg index */
	unsigned line, column;
};

struct mn_catalogue {
	char *path;
	unsigned nevents;
	struct mn_spec_event *event;              /* in file order */
	int by_code[MN_WIRE_MAX_EVENTS];          /* index into event[], or -1 */
};

/* Which loads and stores a module needs (`accesses:`). */
enum mn_spec_accesses {
	MN_ACCESSES_ALL = 0,        /* every load and store (the default) */
	MN_ACCESSES_POINTER,        /* only those whose value is a pointer */
};

struct mn_module_spec {
	char *path;
	char *name;                 /* "value-pattern" */
	char *doc;                  /* one line */
	bool is_default;            /* `default: true`: in the set mnemo-cc builds without -m */
	enum mn_shard shard;
	unsigned shard_shift;       /* with MN_SHARD_ADDRESS */
	enum mn_spec_accesses accesses;
	char *sample;               /* `sample:` variable, "MNEMO_..."; NULL when every access */
	unsigned sample_line;       /* where `sample:` is, 1-based */
	uint32_t events;            /* bit `code` set: the module lists that event */
	uint8_t args[MN_WIRE_MAX_EVENTS];  /* per event code: bit i set: it lists argument i */
	unsigned event_line[MN_WIRE_MAX_EVENTS];  /* where it lists the event, 1-based */
};

/*
 * Reads and validates the catalogue at path: format, unique event names and codes in
 * 1..MN_WIRE_MAX_EVENTS-1, at most MN_WIRE_MAX_ARGS uniquely named arguments per event, widths
 * 1..64.  Free the result with mn_spec_catalogue_free().
 */
int mn_spec_catalogue_load(struct mn_catalogue **cp, const char *path, struct mn_spec_error *err);
void mn_spec_catalogue_free(struct mn_catalogue *c);
/* The event called name, or NULL. */
const struct mn_spec_event *mn_spec_event_find(const struct mn_catalogue *c, const char *name);
/* Index of the argument called name in ev->arg[], or -1. */
int mn_spec_arg_find(const struct mn_spec_event *ev, const char *name);

/*
 * Reads and validates the module spec at path against catalogue c.  When folder is not NULL, the
 * spec's `module:` must equal it (the name of the folder the spec lives in).  Free the result with
 * mn_spec_module_free().
 */
int mn_spec_module_load(struct mn_module_spec **mp, const struct mn_catalogue *c, const char *path,
			const char *folder, struct mn_spec_error *err);
void mn_spec_module_free(struct mn_module_spec *m);

/* True when name can name a module: [a-z0-9][a-z0-9_-]*, shorter than MN_SPEC_NAME_MAX. */
bool mn_spec_module_name_valid(const char *name);

/* True when name can be a `sample:` variable: MNEMO_[A-Z0-9_]+, shorter than MN_SPEC_SAMPLE_MAX */
bool mn_spec_sample_var_valid(const char *name);

/*
 * Lists the modules in dir: the sub-folders that hold an events.yaml and have a valid module
 * name, sorted.  *namesp is a NULL-terminated array; free it with mn_spec_names_free().
 */
int mn_spec_module_names(char ***namesp, const char *dir, struct mn_spec_error *err);
void mn_spec_names_free(char **names);

/*
 * Computes the wire format for the n modules m[] (see the packing rules above), its flags
 * included.  Fails with -EINVAL, naming the event in the catalogue, when the arguments of an event
 * do not fit.
 */
int mn_spec_pack(struct mn_wire *w, const struct mn_catalogue *c,
		 const struct mn_module_spec *const *m, unsigned n, struct mn_spec_error *err);

/*
 * True when ev is one of the framework's thread events, thread_start and thread_end: mn_spec_pack()
 * sends them, with every argument, whatever the modules (the profile lists each thread's creator).
 */
bool mn_spec_thread_event(const struct mn_spec_event *ev);

/* True when w sends any of the events heap_alloc, heap_realloc, heap_free. */
bool mn_spec_uses_heap(const struct mn_wire *w, const struct mn_catalogue *c);

/*
 * True when ev is a loop summary event: loop_summary_load, loop_summary_store, loop_summary, or
 * one of mixed loops' (loop_summary_open, mixed_load, mixed_store, loop_summary_at,
 * loop_summary_close).
 */
bool mn_spec_summary_event(const struct mn_spec_event *ev);

/* True when c has all five events of mixed loops (loop_summary_open .. loop_summary_close). */
bool mn_spec_mixed_events(const struct mn_catalogue *c);

/*
 * Adds the loop summary events of c to w with every argument, packed first fit as mn_spec_pack()
 * packs: loop_summary_load, loop_summary_store and loop_summary, and when mixed is true the five
 * of mixed loops too.  The events already in w are left as they are.  When every record of w has
 * an even number of words (fixed 16-byte records among them), a summary record gets a zero word
 * more if it needs one to keep that so: records stay whole multiples of 16 bytes.  Events c does
 * not have are skipped.  Fails with -EINVAL, naming the event, when its arguments do not fit.
 */
int mn_spec_pack_summaries(struct mn_wire *w, const struct mn_catalogue *c, bool mixed,
			   struct mn_spec_error *err);

#endif /* MNEMO_SPEC_H */
