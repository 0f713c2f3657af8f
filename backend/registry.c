/*
 * The registry: every module of modules/modules.def.  In mnemo-backend-lib so that mnemo-backend
 * (which runs modules) and mnemo (whose `merge` restores and merges their sections) share one
 * table; whoever calls it links mnemo-modules too.
 */
#include <string.h>

#include "registry.h"

#define MN_MODULE(c) extern const struct mn_module mn_module_##c;
#include "modules.def"
#undef MN_MODULE

static const struct mn_module *const registry[] = {
#define MN_MODULE(c) &mn_module_##c,
#include "modules.def"
#undef MN_MODULE
};

#define NREGISTRY (sizeof(registry) / sizeof(registry[0]))

const struct mn_module *mn_module_find(const char *name)
{
	for (size_t i = 0; i < NREGISTRY; i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

size_t mn_module_count(void)
{
	return NREGISTRY;
}

const struct mn_module *mn_module_at(size_t i)
{
	return i < NREGISTRY ? registry[i] : NULL;
}
