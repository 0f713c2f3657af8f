/*
 * Shared by the stand-in callbacks (stubs.c) and the checker (check.c) of the
 * end-to-end test: one event counter per entry point, and the highest site id
 * any entry point received.  The mn_ prefix keeps these out of the pass's
 * global registration.
 */
#ifndef MNEMO_TEST_E2E_H
#define MNEMO_TEST_E2E_H

#include <stdint.h>

enum mn_e2e_event {
	E2E_LOAD,
	E2E_STORE,
	E2E_POINTER,
	E2E_HEAP_SITE,
	E2E_STACK_ALLOC,
	E2E_STACK_FREE,
	E2E_FUNC_ENTRY,
	E2E_FUNC_EXIT,
	E2E_LOOP_INVOKE,
	E2E_LOOP_ITER,
	E2E_LOOP_EXIT,
	E2E_GLOBAL,
	E2E_NEVENTS
};

extern unsigned long mn_e2e_count[E2E_NEVENTS];
extern uint32_t mn_e2e_max_site;
extern uint32_t mn_e2e_zero_sites;	/* events that came with site 0 */

#endif
