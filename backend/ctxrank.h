/*
 * Context ids ranked by their sites, for an order of rows that does not depend on the run: ids
 * are handed out in order of first appearance, which differs between runs and between the
 * workers of one, so a profile that orders rows by context sorts them by rank instead.
 */
#ifndef MNEMO_CTXRANK_H
#define MNEMO_CTXRANK_H

#include <stdint.h>

struct mn_ctx;   /* context.h */

/*
 * rank[id] for every id with used[id] set (used: mn_ctx_id_count(c) flags): the ids ordered by
 * their sites, outermost first, a prefix before its extensions; other ids rank 0.  A new array
 * of mn_ctx_id_count(c) entries (free() it), or NULL without memory.
 */
uint32_t *mn_ctx_ranks(const struct mn_ctx *c, const uint8_t *used);

#endif /* MNEMO_CTXRANK_H */
