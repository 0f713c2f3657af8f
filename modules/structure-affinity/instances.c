/*
 * structure-affinity's data objects (sa.h): every instance made at one allocation, alloca or
 * global site, found by address in the object table (objects.h), whose changes first tell the
 * verified extents of loop summaries (verified.h) what they lose.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "module.h"
#include "sa.h"

/*
 * Every change to the object table goes through these three, which first tell the verified
 * extents of loop summaries (verified.h) which granules it may take from another object.
 */
static uint32_t objects_alloc(struct affinity *a, const struct mn_obj *x)
{
	sa_verified_forget(&a->verified, &a->objs, x->addr, x->size);
	return mn_objects_alloc(&a->objs, x);
}

static void objects_move(struct affinity *a, uint32_t s, uint64_t addr, uint64_t size)
{
	const struct mn_obj *x = mn_obj(&a->objs, s);

	sa_verified_forget(&a->verified, &a->objs, x->addr, x->size);
	sa_verified_forget(&a->verified, &a->objs, addr, size);
	mn_objects_move(&a->objs, s, addr, size);
}

static void objects_release(struct affinity *a, uint32_t s)
{
	const struct mn_obj *x = mn_obj(&a->objs, s);

	sa_verified_forget(&a->verified, &a->objs, x->addr, x->size);
	mn_objects_release(&a->objs, s);
}

static void new_instance(struct affinity *a, uint32_t site, uint64_t addr, uint64_t size,
			 enum mn_obj_kind kind)
{
	struct dobj *d = mn_sitevec_get(&a->dobjs, site);

	if (!d || !objects_alloc(a, &(struct mn_obj){ .addr = addr, .size = size, .kind = kind,
						     .group = site, .serial = ++a->serial })) {
		a->nomem++;
		return;
	}
	d->site = site;
	d->kind = kind;
	d->instances++;
	if (size > d->max_bytes)
		d->max_bytes = size;
}

static void end_instance(struct affinity *a, uint64_t addr)
{
	uint32_t s = addr ? mn_objects_at(&a->objs, addr) : 0;

	if (s)
		objects_release(a, s);
	else if (addr)
		a->unknown_frees++;
}

void sa_heap_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	new_instance(st, site, addr, size, MN_OBJ_HEAP);
}

/* A heap data object is its allocation context (allocctx.h, MNEMO_ALLOC_DEPTH). */
void sa_heap_alloc_context(void *st, uint32_t site, uint64_t context, uint64_t addr,
			   uint64_t size)
{
	struct affinity *a = st;

	new_instance(a, mn_allocctx_key(&a->actx, site, context), addr, size, MN_OBJ_HEAP);
}

void sa_heap_realloc(void *st, uint32_t site, uint64_t old_addr, uint64_t addr,
			    uint64_t size)
{
	struct affinity *a = st;
	uint32_t s = old_addr ? mn_objects_at(&a->objs, old_addr) : 0;

	if (!s) {
		if (old_addr)
			a->unknown_frees++;
		new_instance(a, site, addr, size, MN_OBJ_HEAP);
		return;
	}
	objects_move(a, s, addr, size);
	{
		struct dobj *d = mn_sitevec_find(&a->dobjs, mn_obj(&a->objs, s)->group);

		if (d && size > d->max_bytes)
			d->max_bytes = size;
	}
}

void sa_heap_free(void *st, uint32_t site, uint64_t addr)
{
	end_instance(st, addr);
}

void sa_stack_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	new_instance(st, site, addr, size, MN_OBJ_STACK);
}

void sa_stack_free(void *st, uint32_t site, uint64_t addr)
{
	end_instance(st, addr);
}

void sa_global(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	new_instance(st, site, addr, size, MN_OBJ_GLOBAL);
}

