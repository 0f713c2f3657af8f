/*
 * Sequitur's grammar as its two files see it (internal: sequitur.h is the interface).
 * sequitur.c builds a grammar, one append at a time; sequitur_text.c reads one out (numbering,
 * rules, expansion, text) and parses one from text.
 */
#ifndef MN_SEQUITUR_INTERNAL_H
#define MN_SEQUITUR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sequitur.h"

enum { TERM, NONTERM, GUARD };

struct node {
	struct node *prev, *next;
	union {
		uint64_t term;        /* TERM: the terminal */
		struct node *rule;    /* NONTERM: the guard of its rule */
		uint64_t id;          /* GUARD: the rule's id, set by number() */
	};
	uint64_t uses;                /* GUARD: nonterminals pointing at it */
	uint32_t kind;
	uint32_t mark;                /* GUARD: the number() epoch that last numbered it */
};

struct slab {
	struct slab *next;
	size_t n;
	struct node v[];
};

struct mn_seq {
	struct node *start;           /* guard of rule 0 */
	uint64_t length;              /* symbols appended (or generated, when parsed) */
	uint64_t size;                /* symbols on all right-hand sides */
	uint64_t nrules;              /* rules, the start rule included */
	bool frozen;                  /* from mn_seq_parse(): no digram index, no appends */
	/* node pool */
	struct slab *slabs;
	struct node *free;            /* free nodes, through next */
	size_t ncap, nlive;           /* nodes in slabs; in use */
	/* digram index: open addressing, linear probing, backward-shift deletion */
	struct node **tab;
	size_t tcap;                  /* power of two, 0 or >= 2 * ncap */
	/* numbering */
	struct node **order;          /* guards by id, valid after number() */
	size_t order_cap;
	uint32_t epoch;
	struct mn_seq_sym *rhs;       /* mn_seq_rules() scratch */
	size_t rhs_cap;
};

/* A node of the given kind from the free list, zeroed but for its kind: the caller reserved it
 * (mn_seq_slab_add()); none left is a bug, and aborts. */
struct node *mn_seq_node_alloc(struct mn_seq *s, uint32_t kind);
/* Adds a slab of n nodes to the free list.  0 or -ENOMEM (nothing changed). */
int mn_seq_slab_add(struct mn_seq *s, size_t n);
/* A new empty rule: its guard, linked to itself. */
struct node *mn_seq_rule_new(struct mn_seq *s);

#endif /* MN_SEQUITUR_INTERNAL_H */
