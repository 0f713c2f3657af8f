/*
 * Shadow memory: the reservation, the claim of a slice, clearing, and residency (shadow.h has the
 * mapping, its diagram and the contracts; the lookups are inline there).
 *
 * Everything here is cold except mn_shadow_clear(), which a module may call on every free: it
 * walks the range a slice at a time (or the tag table, when the range is wider than the folded
 * space), so its cost is bounded by the smaller of the two, plus the madvise() calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shadow.h"

/* Gives a symbol default visibility in a build that defaults to hidden (STYLE rule 3). */
#ifndef MN_EXPORT
#define MN_EXPORT __attribute__((visibility("default")))
#endif

#define SLICE_BYTES (UINT64_C(1) << MN_SHADOW_SLICE_SHIFT)

static int log2_exact(unsigned v)
{
	return v && !(v & (v - 1)) ? __builtin_ctz(v) : -1;
}

static uint64_t reserve_bytes(unsigned fold_bits, unsigned granule_shift, unsigned meta_shift)
{
	return ((UINT64_C(1) << fold_bits) >> granule_shift) << meta_shift;
}

/* The tag table: one word per slice. */
static size_t tags_bytes(unsigned fold_bits)
{
	return sizeof(uint64_t) << (fold_bits - MN_SHADOW_SLICE_SHIFT);
}

/*
 * Creates sh at fold_bits, or with fallback true at the largest fold from fold_bits down to
 * MN_SHADOW_FOLD_MIN whose reservation the kernel grants.  fold_bits 0: the default.
 */
static int create(struct mn_shadow **sp, unsigned granule_bytes, unsigned meta_bytes,
		  unsigned fold_bits, bool fallback)
{
	int gshift = log2_exact(granule_bytes), mshift = log2_exact(meta_bytes);
	unsigned min_fold = fallback ? MN_SHADOW_FOLD_MIN : fold_bits;
	struct mn_shadow *sh;
	void *base = MAP_FAILED, *tags;
	uint64_t size = 0;
	int ret;

	if ((gshift != 0 && gshift != 3) || mshift < 0 || mshift > 4)
		return -EINVAL;
	if (!fold_bits) {
		fold_bits = MN_SHADOW_FOLD_BITS;
		while (reserve_bytes(fold_bits, gshift, mshift) > MN_SHADOW_MAX_RESERVE)
			fold_bits--;
	}
	if (fold_bits < MN_SHADOW_SLICE_SHIFT || fold_bits > MN_SHADOW_ADDR_BITS)
		return -EINVAL;
	if (min_fold > fold_bits)
		min_fold = fold_bits;

	sh = aligned_alloc(64, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	memset(sh, 0, sizeof(*sh));

	/*
	 * Address space only: MAP_NORESERVE takes no commit charge (vm.overcommit_memory 0 or 1),
	 * and the kernel commits a zeroed page on the first write.  A smaller fold asks for half as
	 * much.
	 */
	for (;; fold_bits--) {
		size = reserve_bytes(fold_bits, gshift, mshift);
		base = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base != MAP_FAILED || fold_bits <= min_fold)
			break;
	}
	if (base == MAP_FAILED) {
		ret = -ENOMEM;
		goto fail;
	}
	/*
	 * Both only cost if they fail, so failures are ignored: without NOHUGEPAGE a write could
	 * commit 2 MiB where the cost bound promises 4 KiB (THP "always"); without DONTDUMP a core
	 * dump would try to write terabytes of zeroes.
	 */
	madvise(base, size, MADV_NOHUGEPAGE);
	madvise(base, size, MADV_DONTDUMP);

	/* Its own mapping, not calloc(): zero without a memset, committed a page at a time as
	 * slices are claimed, and handed back whole by mn_shadow_destroy(). */
	tags = mmap(NULL, tags_bytes(fold_bits), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tags == MAP_FAILED) {
		ret = -ENOMEM;
		goto fail;
	}
	sh->tags = tags;
	sh->base = base;
	sh->fold_bits = fold_bits;
	sh->fold_mask = (UINT64_C(1) << fold_bits) - 1;
	sh->granule_shift = gshift;
	sh->meta_shift = mshift;
	sh->reserve_bytes = size;
	sh->page_bytes = sysconf(_SC_PAGESIZE);
	*sp = sh;
	return 0;
fail:
	if (base != MAP_FAILED)
		munmap(base, size);
	free(sh);
	return ret;
}

MN_EXPORT __attribute__((cold)) int mn_shadow_create(struct mn_shadow **sp, unsigned granule_bytes,
						     unsigned meta_bytes)
{
	return create(sp, granule_bytes, meta_bytes, 0, true);
}

MN_EXPORT __attribute__((cold)) int mn_shadow_create_folded(struct mn_shadow **sp,
							    unsigned granule_bytes,
							    unsigned meta_bytes, unsigned fold_bits)
{
	if (!fold_bits)
		return -EINVAL;
	return create(sp, granule_bytes, meta_bytes, fold_bits, false);
}

MN_EXPORT __attribute__((cold)) void mn_shadow_destroy(struct mn_shadow *sh)
{
	if (!sh)
		return;
	munmap(sh->base, sh->reserve_bytes);
	munmap(sh->tags, tags_bytes(sh->fold_bits));
	free(sh);
}

MN_EXPORT __attribute__((cold, noinline)) void *mn_shadow_get_slow(struct mn_shadow *sh,
								   uint64_t addr)
{
	uint64_t *tag = &sh->tags[mn_shadow_slice(sh, addr)];
	uint64_t want = mn_shadow_window(sh, addr) + 1, seen = 0;

	/*
	 * Claim a free slice, or find that someone (perhaps another thread, just now) claimed it
	 * for our window.  The tag publishes no other data, so the CAS's ordering is not relied on;
	 * the relaxed tag loads in mn_shadow_owns() only need to see the value eventually.
	 */
	if (mn_cas_acq_rel(tag, &seen, want) || seen == want)
		return mn_shadow_map(sh, addr);
	mn_fetch_add_relaxed(&sh->aliases, 1);
	return NULL;
}

/* Zeroes [p, end) of the shadow without committing memory: nothing is written if it is zero. */
static void zero_if_set(unsigned char *p, unsigned char *end)
{
	for (unsigned char *q = p; q < end; q++) {
		if (*q) {
			memset(q, 0, end - q);
			return;
		}
	}
}

/* Zeroes the shadow bytes [lo, hi): whole pages go back to the kernel, partial ones are zeroed. */
static void zero_shadow(const struct mn_shadow *sh, unsigned char *lo, unsigned char *hi)
{
	uintptr_t pmask = sh->page_bytes - 1;
	unsigned char *plo = (unsigned char *)(((uintptr_t)lo + pmask) & ~pmask);
	unsigned char *phi = (unsigned char *)((uintptr_t)hi & ~pmask);

	if (plo >= phi) {
		zero_if_set(lo, hi);
		return;
	}
	zero_if_set(lo, plo);
	zero_if_set(phi, hi);
	/* Private anonymous memory: the pages are freed and read back as zero.  It cannot fail on
	 * our own page-aligned mapping; if it ever did, zeroing in place is still correct. */
	if (madvise(plo, phi - plo, MADV_DONTNEED))
		memset(plo, 0, phi - plo);
}

/* Clears the program addresses [first, last], which lie in one slice of one window. */
static void clear_in_slice(struct mn_shadow *sh, uint64_t first, uint64_t last)
{
	unsigned char *lo, *hi;

	if (!mn_shadow_owns(sh, first))
		return; /* free: all zero; or another window's: not ours to clear */
	lo = mn_shadow_map(sh, first);
	hi = (unsigned char *)mn_shadow_map(sh, last) + ((size_t)1 << sh->meta_shift);
	zero_shadow(sh, lo, hi);
}

MN_EXPORT void mn_shadow_clear(struct mn_shadow *sh, uint64_t addr, uint64_t len)
{
	uint64_t last = addr + len - 1;

	if (!len)
		return;
	if (last < addr)
		last = UINT64_MAX;
	/* Round out to whole granules (a no-op at granule 1 and when the range is aligned). */
	addr &= ~((UINT64_C(1) << sh->granule_shift) - 1);
	last |= (UINT64_C(1) << sh->granule_shift) - 1;

	if (last - addr <= sh->fold_mask) {
		/* Narrower than the folded space: walk it a slice at a time. */
		for (uint64_t p = addr;;) {
			uint64_t slice_last = p | (SLICE_BYTES - 1);

			clear_in_slice(sh, p, slice_last < last ? slice_last : last);
			if (slice_last >= last)
				break;
			p = slice_last + 1;
		}
		return;
	}
	/* Wider: visit each claimed slice once, in its owner's window. */
	for (uint64_t s = 0; s <= sh->fold_mask >> MN_SHADOW_SLICE_SHIFT; s++) {
		uint64_t tag = mn_load_relaxed(&sh->tags[s]), first, slice_last;

		if (!tag)
			continue;
		first = ((tag - 1) << sh->fold_bits) | (s << MN_SHADOW_SLICE_SHIFT);
		slice_last = first | (SLICE_BYTES - 1);
		if (slice_last < addr || first > last)
			continue;
		clear_in_slice(sh, first > addr ? first : addr,
			       slice_last < last ? slice_last : last);
	}
}

MN_EXPORT __attribute__((cold)) int mn_shadow_resident(const struct mn_shadow *sh, uint64_t *bytes)
{
	enum { CHUNK = 4096 }; /* pagemap entries read at a time */
	uint64_t slice_pages =
		reserve_bytes(MN_SHADOW_SLICE_SHIFT, sh->granule_shift, sh->meta_shift) /
		sh->page_bytes;
	uint64_t total = 0, *ent;
	int fd, ret = 0;

	ent = malloc(CHUNK * sizeof(*ent));
	if (!ent)
		return -ENOMEM;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	for (uint64_t s = 0; s <= sh->fold_mask >> MN_SHADOW_SLICE_SHIFT; s++) {
		uint64_t first = (uintptr_t)sh->base / sh->page_bytes + s * slice_pages;

		if (!mn_load_relaxed(&sh->tags[s]))
			continue; /* never claimed, never written */
		for (uint64_t i = 0; i < slice_pages; i += CHUNK) {
			size_t n = slice_pages - i < CHUNK ? slice_pages - i : CHUNK;
			ssize_t got = pread(fd, ent, n * sizeof(*ent), (first + i) * sizeof(*ent));

			if (got != (ssize_t)(n * sizeof(*ent))) {
				ret = got < 0 ? -errno : -EIO;
				goto out;
			}
			/* Bit 63: present; bit 56: mapped exactly once (never the zero page). */
			for (size_t k = 0; k < n; k++)
				total += (ent[k] >> 63 & 1) && (ent[k] >> 56 & 1);
		}
	}
	*bytes = total * sh->page_bytes;
out:
	if (fd >= 0)
		close(fd);
	free(ent);
	return ret;
}
