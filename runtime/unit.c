/*
 * libmnemo-unit.a: what `mnemo-cc -shared` links into an instrumented shared library in place
 * of the runtime (unit.h).  Native code the pass never sees.
 *
 * 1. Dormant stand-ins, with default visibility, for every runtime symbol the generated callbacks
 *    use.  An instrumented program exports its own (mnemo-cc --export-dynamic-symbol), which the
 *    dynamic linker finds first, so the library's callbacks push into the program's lanes; in a
 *    plain program the stand-ins are used: NULL cursors send every push to the slow path, which
 *    drops it.  (Nothing is pushed there anyway: the unit's base stays unset.)
 * 2. A constructor that registers the unit with the program's runtime, when the program has one.
 * 3. The library's own __mnemo_thread_site, __mnemo_acquire and __mnemo_release (hidden): they
 *    forward to the program's once the unit is registered, the thread site with the unit's base.
 *
 * The pass's data of the unit (site table, counts, register_globals) is declared hidden here: the
 * most constraining visibility wins at the link, so the library never exports them and never
 * binds to another unit's or the program's.
 */
#include <stddef.h>
#include <stdint.h>

#include "abi.h"
#include "queue.h"
#include "unit.h"

#define MN_VISIBLE __attribute__((visibility("default")))
#define MN_HIDDEN  __attribute__((visibility("hidden")))
#define MN_TLS_IE  __attribute__((tls_model("initial-exec")))

/* ---- 1. Stand-ins (queue.h, abi.h): dormant until an instrumented program interposes ---- */

MN_VISIBLE __thread uint64_t *mn_q_cur MN_TLS_IE;
MN_VISIBLE __thread uint64_t *mn_q_end MN_TLS_IE;
MN_VISIBLE __thread uint64_t *mn_q_base MN_TLS_IE;
MN_VISIBLE __thread unsigned char mn_q_busy MN_TLS_IE;
MN_VISIBLE __thread uint32_t mn_heap_pending_site MN_TLS_IE;
MN_VISIBLE struct mn_value_set *__mnemo_value_sets;
MN_VISIBLE uint32_t __mnemo_value_sites;
MN_VISIBLE uint32_t mn_sample_lo = 1, mn_sample_span = 1;

/* Called with mn_q_busy set (queue.h): the record is dropped. */
MN_VISIBLE void mn_queue_push_slow(const uint64_t *words, unsigned n)
{
	(void)words;
	(void)n;
	mn_store_signal(&mn_q_busy, 0);
}

MN_VISIBLE void mn_queue_push_nested(void)
{
}

/* ---- 2. Registration ---- */

/* The program's runtime, when it has one (weak: NULL in a plain program). */
#pragma weak __mnemo_unit_register

extern const char __mnemo_site_table[] MN_HIDDEN __attribute__((weak));
extern const uint64_t __mnemo_site_table_size MN_HIDDEN __attribute__((weak));
extern const uint32_t __mnemo_site_count MN_HIDDEN __attribute__((weak));
extern const uint32_t __mnemo_pass_abi MN_HIDDEN __attribute__((weak));
extern const char __mnemo_modules[] MN_HIDDEN __attribute__((weak));
extern const struct mn_wire __mnemo_wire MN_HIDDEN __attribute__((weak));
extern void __mnemo_register_globals(void) MN_HIDDEN __attribute__((weak));

/*
 * References that make the pass's symbols hidden in the library whatever the code below keeps:
 * the most constraining visibility of a symbol's references and definition is the output's.
 */
static const void *const hide[] __attribute__((used)) = {
	__mnemo_site_table, &__mnemo_site_table_size, &__mnemo_site_count, &__mnemo_pass_abi,
	__mnemo_modules, &__mnemo_wire, (const void *)__mnemo_register_globals,
};

/* Read by the unit's callbacks (specializer, --unit) at every event. */
MN_HIDDEN uint32_t __mnemo_unit_base = MN_UNIT_UNSET;

static struct mn_unit unit;

__attribute__((constructor)) static void unit_register(void)
{
	if (!__mnemo_unit_register || !&__mnemo_pass_abi || !&__mnemo_site_table ||
	    !&__mnemo_wire || !__mnemo_modules)
		return;   /* a plain program, or a library the pass did not instrument */
	unit.version = MN_UNIT_VERSION;
	unit.pass_abi = __mnemo_pass_abi;
	unit.site_table = __mnemo_site_table;
	unit.site_table_size = &__mnemo_site_table_size ? __mnemo_site_table_size : 0;
	unit.site_count = &__mnemo_site_count ? __mnemo_site_count : 0;
	unit.modules = __mnemo_modules;
	unit.wire = &__mnemo_wire;
	unit.register_globals = __mnemo_register_globals;
	unit.base = &__mnemo_unit_base;
	unit.q_cur = &mn_q_cur;
	__mnemo_unit_register(&unit);
}

/* ---- 3. The pass's calls that the runtime, not the callbacks, defines (abi.h) ---- */

MN_HIDDEN void __mnemo_thread_site(uint32_t site)
{
	uint32_t base = __mnemo_unit_base;

	if (base != MN_UNIT_UNSET && unit.thread_site)
		unit.thread_site(site + base);
}

MN_HIDDEN void __mnemo_acquire(const void *object)
{
	if (__mnemo_unit_base != MN_UNIT_UNSET && unit.acquire)
		unit.acquire(object);
}

MN_HIDDEN void __mnemo_release(const void *object)
{
	if (__mnemo_unit_base != MN_UNIT_UNSET && unit.release)
		unit.release(object);
}
