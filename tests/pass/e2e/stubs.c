/*
 * Stand-in for the specialized callbacks: every entry point of abi.h, each
 * only counting its calls.  Compiled to LTO bitcode WITHOUT the pass plugin,
 * as mnemo-cc compiles the generated callbacks, so these functions are never
 * instrumented.
 *
 * Every entry point is __attribute__((used)), as the generated callbacks must
 * be: before the LTO pipeline (and so before the pass adds the first call to
 * them) the linker drops bitcode definitions nothing references yet.
 */
#include "abi.h"
#include "e2e.h"

#define ENTRY __attribute__((used))

unsigned long mn_e2e_count[E2E_NEVENTS];
uint32_t mn_e2e_max_site;
uint32_t mn_e2e_zero_sites;

static void seen(enum mn_e2e_event e, uint32_t site)
{
	mn_e2e_count[e]++;
	if (site > mn_e2e_max_site)
		mn_e2e_max_site = site;
	if (site == 0)
		mn_e2e_zero_sites++;
}

ENTRY void __mnemo_load(uint32_t site, const void *addr, uint64_t value, uint32_t size)
{
	seen(E2E_LOAD, site);
}

ENTRY void __mnemo_store(uint32_t site, const void *addr, uint64_t value, uint32_t size)
{
	seen(E2E_STORE, site);
}

/* Loads and stores of a pointer value: the same events, counted with the others. */
ENTRY void __mnemo_load_ptr(uint32_t site, const void *addr, uint64_t value, uint32_t size)
{
	seen(E2E_LOAD, site);
}

ENTRY void __mnemo_store_ptr(uint32_t site, const void *addr, uint64_t value, uint32_t size)
{
	seen(E2E_STORE, site);
}

ENTRY void __mnemo_pointer_create(uint32_t site, const void *addr, uint32_t type)
{
	seen(E2E_POINTER, site);
}

/* Synchronizations (atomics with acquire or release ordering): not events of their own here. */
ENTRY void __mnemo_acquire(const void *object)
{
}

ENTRY void __mnemo_release(const void *object)
{
}

ENTRY void __mnemo_heap_site(uint32_t site)
{
	seen(E2E_HEAP_SITE, site);
}

ENTRY void __mnemo_stack_alloc(uint32_t site, const void *addr, uint64_t size)
{
	seen(E2E_STACK_ALLOC, site);
}

ENTRY void __mnemo_stack_free(uint32_t site, const void *addr)
{
	seen(E2E_STACK_FREE, site);
}

ENTRY void __mnemo_func_entry(uint32_t site)
{
	seen(E2E_FUNC_ENTRY, site);
}

ENTRY void __mnemo_func_exit(uint32_t site)
{
	seen(E2E_FUNC_EXIT, site);
}

ENTRY void __mnemo_loop_invoke(uint32_t site)
{
	seen(E2E_LOOP_INVOKE, site);
}

ENTRY void __mnemo_loop_iter(uint32_t site)
{
	seen(E2E_LOOP_ITER, site);
}

ENTRY void __mnemo_loop_exit(uint32_t site)
{
	seen(E2E_LOOP_EXIT, site);
}

ENTRY void __mnemo_global(uint32_t site, const void *addr, uint64_t size)
{
	seen(E2E_GLOBAL, site);
}

/* Called by the runtime itself, not by instrumented code: empty. */
ENTRY void __mnemo_heap_alloc(uint32_t site, const void *addr, uint64_t size) {}
ENTRY void __mnemo_heap_realloc(uint32_t site, const void *old_addr, const void *addr, uint64_t size) {}
ENTRY void __mnemo_heap_free(uint32_t site, const void *addr) {}
ENTRY void __mnemo_program_start(uint32_t pid) {}
ENTRY void __mnemo_program_end(uint32_t pid, uint32_t status) {}

const char __mnemo_modules[] = "";
const char __mnemo_backend_path[] = "";
