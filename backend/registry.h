/*
 * The modules built in (modules/modules.def): the table mnemo-backend runs modules from and
 * `mnemo merge` restores and merges their sections with.  Never installed.
 */
#ifndef MNEMO_REGISTRY_H
#define MNEMO_REGISTRY_H

#include <stddef.h>

#include "module.h"

/* The module called name, or NULL. */
const struct mn_module *mn_module_find(const char *name);
/* How many modules are built in, and the i-th, in modules.def order (NULL when i is too big). */
size_t mn_module_count(void);
const struct mn_module *mn_module_at(size_t i);

#endif /* MNEMO_REGISTRY_H */
