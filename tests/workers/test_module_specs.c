/*
 * A module is said twice: in its events.yaml (what the frontend sends it, how it shards) and in its
 * C struct mn_module (what the backend calls, how the driver shards).  This test holds the two
 * together for every module of modules/modules.def: a module folder without a registered module,
 * a registered module without a folder, a different shard or shard_shift, or a handler for an event
 * the YAML does not list (it would never be called) or a listed event without a handler (sent for
 * nothing) each fail with the module's name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "module.h"
#include "registry.h"   /* the modules of modules.def, as mnemo-backend and mnemo merge see them */
#include "spec.h"

/* Whether m has a handler for catalogue event code c (codes of events.yaml, never renumbered). */
static bool has_handler(const struct mn_module *m, unsigned c)
{
	switch (c) {
	case 1: return m->load;
	case 2: return m->store;
	case 3: return m->pointer_create;
	case 4: return m->heap_alloc;
	case 5: return m->heap_realloc;
	case 6: return m->heap_free;
	case 7: return m->stack_alloc;
	case 8: return m->stack_free;
	case 9: return m->global;
	case 10: return m->func_entry;
	case 11: return m->func_exit;
	case 12: return m->loop_invoke;
	case 13: return m->loop_iter;
	case 14: return m->loop_exit;
	case 15: return m->program_start;
	case 16: return m->program_end;
	case 25: return m->value;
	case 26: return m->sync_acquire;
	case 27: return m->sync_release;
	/* 28, 29: thread_start, thread_end, the framework's, which no module lists. */
	default: return false;
	}
}

static void test_specs_match_modules(void **state)
{
	struct mn_catalogue *cat;
	struct mn_spec_error err;
	char **names;
	unsigned nfolders = 0;

	if (mn_spec_catalogue_load(&cat, MNEMO_CATALOGUE, &err))
		fail_msg("cannot load %s", MNEMO_CATALOGUE);
	if (mn_spec_module_names(&names, MNEMO_MODULES_DIR, &err))
		fail_msg("cannot list %s", MNEMO_MODULES_DIR);
	for (char **n = names; *n; n++, nfolders++) {
		const struct mn_module *m = mn_module_find(*n);
		struct mn_module_spec *spec;
		char path[4096];

		if (!m)
			fail_msg("modules/%s has an events.yaml but no MN_MODULE line in modules.def "
				 "names a module called '%s'", *n, *n);
		snprintf(path, sizeof(path), "%s/%s/events.yaml", MNEMO_MODULES_DIR, *n);
		if (mn_spec_module_load(&spec, cat, path, *n, &err))
			fail_msg("%s does not load", path);
		if (spec->shard != m->shard)
			fail_msg("%s: shard is %d in events.yaml, %d in the C module", *n,
				 (int)spec->shard, (int)m->shard);
		if (m->shard == MN_SHARD_ADDRESS && spec->shard_shift != m->shard_shift)
			fail_msg("%s: shard_shift is %u in events.yaml, %u in the C module", *n,
				 spec->shard_shift, m->shard_shift);
		if ((spec->accesses == MN_ACCESSES_POINTER) != m->pointer_only)
			fail_msg("%s: accesses is %s in events.yaml, but pointer_only is %s in the C "
				 "module", *n, spec->accesses == MN_ACCESSES_POINTER ? "pointer" : "all",
				 m->pointer_only ? "true" : "false");
		if (m->shard != MN_SHARD_NONE && !m->merge)
			fail_msg("%s shards its events but has no merge()", *n);
		for (unsigned c = 1; c < MN_WIRE_MAX_EVENTS; c++) {
			bool listed = spec->events >> c & 1;

			if (listed != has_handler(m, c))
				fail_msg("%s: event code %u is %slisted in events.yaml but the C module "
					 "has %s handler for it", *n, c, listed ? "" : "not ",
					 listed ? "no" : "a");
		}
		mn_spec_module_free(spec);
	}
	if (nfolders != mn_module_count())
		fail_msg("modules.def registers %zu modules, modules/ has %u folders with an "
			 "events.yaml", mn_module_count(), nfolders);
	mn_spec_names_free(names);
	mn_spec_catalogue_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_specs_match_modules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
