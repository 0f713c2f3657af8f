/*
 * Shadow memory (PROMPT 4.1, 5.3): metadata for every granule of the profiled program's address
 * space, found from the program address by a mask, a shift and an add, and backed by memory only
 * where the module writes.
 *
 * A module picks a granule (1 byte, or an 8-byte word) and how many bytes of metadata each granule
 * gets (1, 2, 4, 8 or 16): the shadow ratio r = meta_bytes / granule_bytes (1/8 .. 16).
 * mn_shadow_create() reserves the whole shadow with one mmap(MAP_NORESERVE): address space, no
 * memory.  The kernel commits a zeroed page the first time one is written, so a module reads
 * zeroes as "no metadata yet"; mn_shadow_clear() gives a program range's metadata back when the
 * program frees it.
 *
 * ---- The mapping --------------------------------------------------------------------------------
 *
 *   fold(a)   = a & fold_mask                    the low fold_bits (default 42) bits
 *   window(a) = a >> fold_bits                   which 2^fold_bits window of the 47-bit space
 *   slice(a)  = fold(a) >> MN_SHADOW_SLICE_SHIFT which 1 GiB of the folded space: the alias tag
 *   shadow(a) = base + ((fold(a) >> granule_shift) << meta_shift)       (MN_SHADOW_OFFSET)
 *
 * Linux x86-64, default fold (42 bits: 4 TiB windows, 32 of them in the 47-bit user space):
 *
 *   program address                        window   fold(a)                     shadow
 *   0x7fff_ffff_ffff +--------------------+
 *                    | main stack 0x7ffc..|  31   -> 0x3fc.. 0x3ff..  --+
 *                    | mmap, libraries,   |                             |
 *                    | thread stacks      |  31   -> 0x2ff.. 0x3ff..  --+     base + 2^42 * r
 *                    | 0x7eff.. 0x7fff..  |                             |    +----------------+
 *   0x7c00_0000_0000 +--------------------+                             |    |                |
 *                    |        ...         |                             +--> | reserved, zero |
 *   0x5800_0000_0000 +--------------------+                             |    | until written  |
 *                    | PIE, globals, brk  |  21   -> 0x155.. 0x255..  --+    |                |
 *                    | 0x5555.. 0x5655..  |                             |    +----------------+
 *   0x5400_0000_0000 +--------------------+                             |    base
 *                    |        ...         |                             |
 *                    | non-PIE 0x400000,  |   0   -> 0x000..          --+
 *   0x0000_0000_0000 | its brk heap       |
 *                    +--------------------+
 *
 * Why 42: the kernel places a PIE (and its globals and brk heap) in the 1 TiB above
 * 0x5555_5555_4000 and the mmap base (libraries, thread stacks, large malloc blocks, mmap regions)
 * in the 1 TiB below the main stack, near 0x7fff_ffff_ffff.  Folded to 42 bits those two ranges
 * land (0x2ff - 0x255) << 32 bytes (680 GiB) apart whatever the randomization, and a non-PIE's
 * 0x400000 lands at the bottom, 3 TiB below the mmap area: an ordinary program's regions never fold
 * onto one another unless its brk heap and mmap area together grow past 680 GiB.  At 41 bits the
 * randomized ranges already overlap.  At 42 bits an instance reserves 4 TiB * r of address space,
 * so the eight instances of eight data-parallel workers fit in the 128 TiB user space next to
 * ASan's own 20 TiB.  When 4 TiB * r would exceed MN_SHADOW_MAX_RESERVE (8 TiB: r > 2, per-byte
 * granules with 4 or more bytes each) the fold shrinks to keep the reservation at 8 TiB, and
 * aliasing, below, becomes possible in ordinary programs.
 *
 * ---- Aliases: two program regions on one shadow region ------------------------------------------
 *
 * Addresses that differ only above fold_bits share a shadow address.  Every 1 GiB slice of the
 * folded space is claimed by the first window that looks it up (a tag per slice, claimed with a
 * compare-and-swap); a lookup from another window is an alias.  mn_shadow_get() never returns
 * aliased shadow: it counts the lookup (mn_shadow_aliases()) and returns NULL, and the module
 * drops that event and reports the count in its profile: an alias costs accuracy, never
 * correctness, and never silently.  A slice stays claimed for the life of the instance, even after
 * mn_shadow_clear(): another thread may be using the rest of it.  An ordinary layout has no
 * aliases at a 42-bit fold (above); under AddressSanitizer, whose heap lives in
 * 0x5000_0000_0000 .. 0x5400_0000_0000, one window below the PIE's, a heap slice can meet a PIE
 * slice.
 *
 * Shadowing one's own addresses: the backend shadows another process, the profiled program, whose
 * layout its reservations do not touch.  A process that shadows its own addresses (a test) should
 * know that the kernel places later mappings below the reservation, lower by its size, a multiple
 * of the window: a thread stack or mmap region made after mn_shadow_create() then folds onto the
 * slices of those made before it, and aliases.
 *
 * ---- Threads ------------------------------------------------------------------------------------
 *
 * mn_shadow_get(), mn_shadow_peek() and mn_shadow_aliases() may run on any number of threads at
 * once.  The metadata they return is plain memory: each granule's metadata may be accessed without
 * synchronization by the one thread that owns that granule (a data-parallel worker sharded by
 * address with shard_shift >= log2(granule_bytes)); distinct granules never share a byte.
 * mn_shadow_clear() may run concurrently with lookups of granules outside its range, never with
 * accesses to metadata inside it (it may discard whole pages).  mn_shadow_create() and
 * mn_shadow_destroy() are for one thread with no other user; mn_shadow_resident() may run at any
 * time and answers with a snapshot.
 *
 * ---- Memory cost --------------------------------------------------------------------------------
 *
 * Written shadow costs r times the program memory whose metadata was written, counted in the
 * program span one shadow page covers (4 KiB / r: one program page at r = 1): at r >= 1 exactly r
 * times the touched program pages, at r < 1 at most one shadow page per 4 KiB / r of program
 * touched.  Plus a constant: this struct and the tag table (8 bytes per slice, 32 KiB at 42 bits,
 * committed a page per 512 slices claimed).  Reads of never-written shadow map the kernel's shared
 * zero page and cost nothing.  The reservation asks for no transparent huge pages (a 2 MiB page
 * per stray write would break the bound) and stays out of core dumps.
 *
 * Data-parallel workers with an instance each commit every shadow page that holds a granule they
 * own: sharded by address at shard_shift >= log2(4 KiB / r) they own whole shadow pages and the
 * total stays r times the touched memory; sharded finer, it multiplies by the number of workers.
 *
 * Functions returning int return 0 or -errno.
 */
#ifndef MNEMO_SHADOW_H
#define MNEMO_SHADOW_H

#include <stddef.h>
#include <stdint.h>

#include "barrier.h" /* installed side by side in include/mnemo/ */

#ifdef __cplusplus
extern "C" {
#endif

#define MN_SHADOW_ADDR_BITS 47			  /* x86-64 user space */
#define MN_SHADOW_FOLD_BITS 42			  /* default fold: 4 TiB windows (see above) */
#define MN_SHADOW_FOLD_MIN 36			  /* mn_shadow_create() shrinks no further */
#define MN_SHADOW_SLICE_SHIFT 30		  /* one alias tag per 1 GiB of folded space */
#define MN_SHADOW_MAX_RESERVE (UINT64_C(1) << 43) /* 8 TiB of address space per instance */

/* The mapping, defined once: byte offset into the reservation of the metadata of address a. */
#define MN_SHADOW_OFFSET(a, fold_mask, granule_shift, meta_shift)                                  \
	((((uint64_t)(a) & (fold_mask)) >> (granule_shift)) << (meta_shift))

/*
 * One shadow memory.  The fields are public only so the lookups below can be inline: read them
 * through the accessors, write none of them.  The lookup fields share the first cache line; the
 * alias counter, written by any thread that aliases, has its own.
 */
struct mn_shadow {
	unsigned char *base;	/* the reservation, reserve_bytes long */
	uint64_t fold_mask;	/* (1 << fold_bits) - 1 */
	uint64_t *tags;		/* per slice: window + 1 of the window that claimed it; 0 free */
	uint8_t fold_bits;	/* MN_SHADOW_SLICE_SHIFT .. MN_SHADOW_ADDR_BITS */
	uint8_t granule_shift;	/* log2(granule_bytes): 0 or 3 */
	uint8_t meta_shift;	/* log2(meta_bytes): 0 .. 4 */
	uint64_t reserve_bytes; /* (1 << fold_bits) >> granule_shift << meta_shift */
	size_t page_bytes;	/* the system page size */
	uint64_t aliases __attribute__((aligned(64))); /* lookups refused as aliases */
};

/*
 * Creates a shadow memory with meta_bytes (1, 2, 4, 8 or 16) bytes of zeroed metadata per
 * granule_bytes (1 or 8) bytes of program address space, at the default fold: 42 bits, or less
 * when the reservation would exceed MN_SHADOW_MAX_RESERVE.  When the address space for it cannot
 * be had (another mapping is in the way, RLIMIT_AS, vm.overcommit_memory = 2) it tries each
 * smaller fold down to MN_SHADOW_FOLD_MIN, which only makes aliases likelier: see
 * mn_shadow_fold_bits() for the fold it got.  Returns 0 and sets *sp, or returns -EINVAL for a
 * size not listed, -ENOMEM when even the smallest reservation or the tag table cannot be had, and
 * leaves *sp alone.
 */
int mn_shadow_create(struct mn_shadow **sp, unsigned granule_bytes, unsigned meta_bytes);
/*
 * The same at exactly fold_bits (MN_SHADOW_SLICE_SHIFT .. MN_SHADOW_ADDR_BITS; 47 folds nothing:
 * no alias is possible below 2^47), with no fallback: -EINVAL for a size or fold out of range,
 * -ENOMEM when that reservation cannot be had.
 */
int mn_shadow_create_folded(struct mn_shadow **sp, unsigned granule_bytes, unsigned meta_bytes,
			    unsigned fold_bits);
/* Unmaps the shadow and frees sh (NULL is fine).  Every pointer it handed out dies with it. */
void mn_shadow_destroy(struct mn_shadow *sh);

/* The cold half of mn_shadow_get(): claims the slice or counts an alias.  Call only through it. */
void *mn_shadow_get_slow(struct mn_shadow *sh, uint64_t addr);

/* ---- Range predicates and the mapping -------------------------------------------------------- */

/* The window of the 47-bit space addr lies in: its bits above the fold. */
static inline uint64_t mn_shadow_window(const struct mn_shadow *sh, uint64_t addr)
{
	return addr >> sh->fold_bits;
}

/* The slice of the folded space addr lands in: the index of its alias tag. */
static inline uint64_t mn_shadow_slice(const struct mn_shadow *sh, uint64_t addr)
{
	return (addr & sh->fold_mask) >> MN_SHADOW_SLICE_SHIFT;
}

/* Does addr's window own addr's slice (claimed by it, not by another window, not free)? */
static inline int mn_shadow_owns(const struct mn_shadow *sh, uint64_t addr)
{
	return mn_load_relaxed(&sh->tags[mn_shadow_slice(sh, addr)]) ==
	       mn_shadow_window(sh, addr) + 1;
}

/* Is p inside the reservation (a pointer to metadata rather than to program memory)? */
static inline int mn_shadow_is_shadow(const struct mn_shadow *sh, const void *p)
{
	return (uintptr_t)p - (uintptr_t)sh->base < sh->reserve_bytes;
}

/*
 * Where addr's metadata is, alias or not: the mapping alone, for tests and for code that has
 * checked mn_shadow_owns().  Never write through it without that check.
 */
static inline void *mn_shadow_map(const struct mn_shadow *sh, uint64_t addr)
{
	return sh->base + MN_SHADOW_OFFSET(addr, sh->fold_mask, sh->granule_shift, sh->meta_shift);
}

/* ---- Lookups --------------------------------------------------------------------------------- */

/*
 * The metadata of the granule holding addr (meta_bytes bytes, zero until written), or NULL when
 * addr's slice belongs to another window (an alias: counted, see above).  The first lookup in a
 * slice claims it.  The fast path is one load of the slice's tag and one compare.  Metadata of
 * consecutive granules is contiguous within a slice.
 */
static inline void *mn_shadow_get(struct mn_shadow *sh, uint64_t addr)
{
	/* Relaxed: a tag is its own datum (it publishes nothing), and once it is ours it never
	 * changes, so any value but ours sends us to the slow path, which decides with a CAS. */
	if (__builtin_expect(!mn_shadow_owns(sh, addr), 0))
		return mn_shadow_get_slow(sh, addr);
	return mn_shadow_map(sh, addr);
}

/*
 * Like mn_shadow_get() but claims nothing and counts nothing: NULL when addr's slice is free
 * (its metadata is all zero) or another window's.  For readers that treat "no metadata" as zero.
 */
static inline const void *mn_shadow_peek(const struct mn_shadow *sh, uint64_t addr)
{
	return mn_shadow_owns(sh, addr) ? mn_shadow_map(sh, addr) : NULL;
}

/*
 * Zeroes the metadata of every granule that [addr, addr + len) touches (a granule partly inside
 * is cleared whole), in slices owned by addr's window only: another window's metadata in a slice
 * it claimed is never touched.  Whole shadow pages go back to the kernel (MADV_DONTNEED: the memory
 * is returned, and they read as zero); partial pages at the ends are zeroed in place, and only
 * when not zero already, so clearing never commits memory.  len 0 does nothing.
 */
void mn_shadow_clear(struct mn_shadow *sh, uint64_t addr, uint64_t len);

/* ---- Accessors ------------------------------------------------------------------------------- */

/* Lookups mn_shadow_get() refused because another window owned the slice; relaxed, any thread. */
static inline uint64_t mn_shadow_aliases(const struct mn_shadow *sh)
{
	return mn_load_relaxed(&sh->aliases);
}

static inline unsigned mn_shadow_fold_bits(const struct mn_shadow *sh)
{
	return sh->fold_bits;
}

static inline unsigned mn_shadow_granule_bytes(const struct mn_shadow *sh)
{
	return 1u << sh->granule_shift;
}

static inline unsigned mn_shadow_meta_bytes(const struct mn_shadow *sh)
{
	return 1u << sh->meta_shift;
}

/* Address space reserved: (1 << fold_bits) * meta_bytes / granule_bytes. */
static inline uint64_t mn_shadow_reserved_bytes(const struct mn_shadow *sh)
{
	return sh->reserve_bytes;
}

/*
 * Bytes of memory the reservation holds now, into *bytes: its pages that are present and mapped
 * only here (/proc/self/pagemap), as RSS counts them.  Pages that were only read map the kernel's
 * shared zero page and do not count.  Cold: it reads 8 bytes per shadow page of every claimed
 * slice.  Returns 0, -ENOMEM, or the -errno of reading pagemap (-EIO for a short read).
 */
int mn_shadow_resident(const struct mn_shadow *sh, uint64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif /* MNEMO_SHADOW_H */
