/*
 * Linked units: an instrumented shared library (`mnemo-cc -shared`) registers itself with the
 * runtime of the program that loads it.  The interface between libmnemo-unit.a (unit.c, linked
 * into every instrumented library instead of the runtime) and the program's runtime (units.c).
 *
 * Each unit is instrumented at its own LTO link, so its site ids are 1..site_count local to it.
 * The program's runtime gives every unit it accepts a base (program first at 0, then units in
 * order of registration), and the unit's callbacks add it to every site they send (the
 * specializer's --unit mode); until then the base is MN_UNIT_UNSET and they send nothing.  The
 * few runtime symbols the callbacks use (mn_q_*, mn_queue_push_slow/_nested,
 * mn_heap_pending_site, __mnemo_value_sets/_sites, mn_sample_lo/_span) are defined in the unit as
 * dormant stand-ins with default visibility, and exported by an instrumented program, whose
 * definitions then interpose (ELF symbol lookup finds the executable first): a library in an
 * instrumented program pushes into the program's per-thread lanes, one in a plain program into
 * its stand-ins, which drop everything.
 *
 * Never installed: both sides are built from this tree.
 */
#ifndef MNEMO_UNIT_H
#define MNEMO_UNIT_H

#include <stdint.h>

struct mn_wire;

/* The layout of struct mn_unit; a runtime refuses a unit of another one. */
#define MN_UNIT_VERSION 1u
/* The base of a unit that is not (yet) profiled: its callbacks send nothing. */
#define MN_UNIT_UNSET UINT32_MAX

struct mn_unit {
	uint32_t version;                 /* MN_UNIT_VERSION */
	uint32_t pass_abi;                /* __mnemo_pass_abi; 0: not instrumented */
	const char *site_table;           /* the unit's own table (abi.h), ids 1..site_count */
	uint64_t site_table_size;
	uint32_t site_count;
	const char *modules;              /* __mnemo_modules of the unit's callbacks */
	const struct mn_wire *wire;       /* __mnemo_wire of the unit's callbacks */
	void (*register_globals)(void);   /* the unit's __mnemo_register_globals, or NULL */
	uint32_t *base;                   /* the unit's base; written by the runtime */
	/* Written by the runtime before *base: the program's calls that the unit's hidden
	 * __mnemo_thread_site, __mnemo_acquire and __mnemo_release forward to. */
	void (*thread_site)(uint32_t site);
	void (*acquire)(const void *object);
	void (*release)(const void *object);
	/* The unit's mn_q_cur as its code resolves it, on the registering thread: the runtime's own
	 * unless the library binds its symbols to itself (-Bsymbolic: DF_SYMBOLIC), which makes the
	 * program's definitions unable to interpose; such a unit is refused. */
	uint64_t **q_cur;
};

/*
 * Defined by the program's runtime (exported); called by each unit's constructor.  Before the
 * program's session starts it records the unit, whose ids the session start lays out; later
 * (dlopen) the unit is refused, stays silent and the profile says so.  Never fails the program.
 */
void __mnemo_unit_register(struct mn_unit *u);

#endif /* MNEMO_UNIT_H */
