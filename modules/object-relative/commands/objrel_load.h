/*
 * The LMADs of a profile's object-relative section, as the inputs of the derived profiles
 * (modules/object-relative/derive.h).  Shared by `mnemo derive` (derive.c) and the test that
 * compares the derived profiles with exact ones (tests/object-relative/derived_check.c).
 */
#ifndef MNEMO_OBJREL_LOAD_H
#define MNEMO_OBJREL_LOAD_H

#include <stddef.h>

#include "derive.h"
#include "profile.h"

struct objrel_loaded {
	struct objrel_dinsn *insns;
	size_t n;
	struct objrel_dstream *streams;   /* every instruction's, one allocation */
	struct objrel_lmad *lmads;        /* every stream's, one allocation */
};

/*
 * Reads section `module` (an object-relative section) of p into *out.  Returns 0, or -EINVAL with
 * a message naming the file, line and field at fault in err (or "no section"), or -ENOMEM.
 */
int objrel_load(const struct mn_profile *p, const char *module, struct objrel_loaded *out,
		char *err, size_t errlen);
void objrel_loaded_free(struct objrel_loaded *l);

#endif /* MNEMO_OBJREL_LOAD_H */
