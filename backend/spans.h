/*
 * Span lists, keyed by a row map's four-word key (map.h).  Not thread-safe: one per worker;
 * nothing here aborts.
 */
#ifndef MNEMO_SPANS_H
#define MNEMO_SPANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * With several workers an access that spans pages of two workers is handled by each on its own
 * pages, and each counts the rows its part found: once per access (rule 6) means once in all.
 * Every worker numbers such accesses alike (the driver shows each of them to every worker), so
 * each logs, per row key, the serials of the accesses that counted it, and merge() takes back one
 * count for each serial both sides logged.  Per key an increasing list, LEB128 deltas.
 */
struct mn_span_list {
	uint64_t k[4];               /* the row's key (a row map's four words, map.h) */
	uint8_t *bytes;
	uint32_t n, cap;             /* bytes used, allocated; n 0: an empty slot */
	uint64_t last;               /* the last serial added */
};

struct mn_spans {
	struct mn_span_list *v;     /* 2^bits slots, at most half full */
	size_t n;
	unsigned bits;
};

/* Logs that access serial (not below any logged before for k) counted row k.  False without
 * memory (the row's count may then be one too many after the merge: the caller counts it). */
bool mn_spans_add(struct mn_spans *t, const uint64_t *k, uint64_t serial);
/* Folds from's lists into into's, calling dup(arg, k, n) for every key both hold that share
 * n > 0 serials.  -ENOMEM without memory (some lists then stay in from: the caller counts
 * the loss).  from is left empty or holding what could not move; free it after. */
int mn_spans_merge(struct mn_spans *into, struct mn_spans *from,
		    void (*dup)(void *arg, const uint64_t *k, uint64_t n), void *arg);
void mn_spans_free(struct mn_spans *t);

#endif /* MNEMO_SPANS_H */
