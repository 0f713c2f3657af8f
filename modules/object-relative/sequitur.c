/*
 * Sequitur as in Nevill-Manning and Witten's reference implementation: every rule is a circular
 * doubly linked list of symbols through a guard node, which also stands for the rule (nonterminals
 * point at it and it counts their uses).  A hash table indexes each digram (a symbol and its
 * successor, neither a guard) by the node of one occurrence; when a new digram is already indexed
 * elsewhere, match() replaces both occurrences with a nonterminal (reusing the rule when the other
 * occurrence is a whole rule), and a rule whose use count falls to one is expanded in place.
 *
 * Overlapping digrams ("aaa") are indexed once: join() re-indexes the surviving one when a triple
 * is broken up, as the reference does.
 *
 * Memory: nodes come from slabs that never move, and the digram table is kept at least twice the
 * node capacity (so at most half full, as digrams <= nodes).  mn_seq_append() reserves both before
 * it changes anything: an append can grow the grammar by far less than the slack it keeps (a
 * grammar of size n has at most n rules and n + 1 symbols more after an append), so the algorithm
 * itself never allocates and never fails half way.
 *
 * This file builds a grammar; sequitur_text.c reads it out and parses its text form.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"        /* mn_hash64() */
#include "sequitur_internal.h"

/* ---- Node pool ------------------------------------------------------------------------------- */

struct node *mn_seq_node_alloc(struct mn_seq *s, uint32_t kind)
{
	struct node *x = s->free;

	/* mn_seq_append() and mn_seq_parse() reserved enough (see the file comment). */
	if (!x)
		abort();
	s->free = x->next;
	s->nlive++;
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	return x;
}

static void node_free(struct mn_seq *s, struct node *x)
{
	x->next = s->free;
	s->free = x;
	s->nlive--;
}

/* Adds a slab of n nodes to the free list.  0 or -ENOMEM (nothing changed). */
int mn_seq_slab_add(struct mn_seq *s, size_t n)
{
	struct slab *b = malloc(sizeof(*b) + n * sizeof(struct node));

	if (!b)
		return -ENOMEM;
	b->n = n;
	b->next = s->slabs;
	s->slabs = b;
	for (size_t i = n; i-- > 0;) {
		b->v[i].next = s->free;
		s->free = &b->v[i];
	}
	s->ncap += n;
	return 0;
}

/* ---- Digram index ---------------------------------------------------------------------------- */

static uint64_t sym_val(const struct node *x)
{
	return x->kind == NONTERM ? (uint64_t)(uintptr_t)x->rule : x->term;
}

/* Same symbol; a guard equals nothing. */
static bool sym_eq(const struct node *a, const struct node *b)
{
	return a->kind != GUARD && a->kind == b->kind && sym_val(a) == sym_val(b);
}

/* Hash of the digram starting at x. */
static size_t digram_hash(const struct node *x)
{
	uint64_t a = sym_val(x) * 2 + x->kind, b = sym_val(x->next) * 2 + x->next->kind;

	return (size_t)mn_hash64(mn_hash64(a) + b);
}

/* The slot holding the digram at x (another occurrence, or x itself), else the empty slot. */
static struct node **digram_find(struct mn_seq *s, const struct node *x)
{
	size_t mask = s->tcap - 1, i = digram_hash(x) & mask;

	while (s->tab[i]) {
		if (sym_eq(s->tab[i], x) && sym_eq(s->tab[i]->next, x->next))
			return &s->tab[i];
		i = (i + 1) & mask;
	}
	return &s->tab[i];
}

static void slot_remove(struct mn_seq *s, struct node **slot)
{
	size_t mask = s->tcap - 1, i = (size_t)(slot - s->tab), j = i, k;

	for (;;) {
		j = (j + 1) & mask;
		if (!s->tab[j])
			break;
		k = digram_hash(s->tab[j]) & mask;
		/* tab[j] stays when its home k lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		s->tab[i] = s->tab[j];
		i = j;
	}
	s->tab[i] = NULL;
}

/* Unindexes the digram at x if x is the occurrence indexed. */
static void digram_delete(struct mn_seq *s, struct node *x)
{
	struct node **slot;

	if (x->kind == GUARD || x->next->kind == GUARD)
		return;
	slot = digram_find(s, x);
	if (*slot == x)
		slot_remove(s, slot);
}

/* Indexes the digram at x, replacing any other occurrence indexed. */
static void digram_set(struct mn_seq *s, struct node *x)
{
	if (x->kind == GUARD || x->next->kind == GUARD)
		return;
	*digram_find(s, x) = x;
}

/* A table of cap slots (a power of two) holding the current digrams.  0 or -ENOMEM (unchanged). */
static int tab_resize(struct mn_seq *s, size_t cap)
{
	struct node **old = s->tab, **tab = calloc(cap, sizeof(*tab));
	size_t ocap = s->tcap;

	if (!tab)
		return -ENOMEM;
	s->tab = tab;
	s->tcap = cap;
	for (size_t i = 0; i < ocap; i++) {
		if (old[i])
			*digram_find(s, old[i]) = old[i];
	}
	free(old);
	return 0;
}

/* ---- Sequitur -------------------------------------------------------------------------------- */

static void check_utility(struct mn_seq *s, struct node *g);

/* Links left -> right, unindexing left's old digram and keeping one digram of a broken triple. */
static void join(struct mn_seq *s, struct node *left, struct node *right)
{
	if (left->next) {
		digram_delete(s, left);
		if (right->prev && right->next && sym_eq(right, right->prev) &&
		    sym_eq(right, right->next))
			digram_set(s, right);
		if (left->prev && sym_eq(left, left->next) && sym_eq(left, left->prev))
			digram_set(s, left->prev);
	}
	left->next = right;
	right->prev = left;
}

static void insert_after(struct mn_seq *s, struct node *q, struct node *y)
{
	join(s, y, q->next);
	join(s, q, y);
}

/* A new symbol (not linked yet) equal to x. */
static struct node *sym_copy(struct mn_seq *s, const struct node *x)
{
	struct node *y = mn_seq_node_alloc(s, x->kind);

	if (x->kind == NONTERM) {
		y->rule = x->rule;
		x->rule->uses++;
	} else {
		y->term = x->term;
	}
	s->size++;
	return y;
}

static void sym_delete(struct mn_seq *s, struct node *x)
{
	join(s, x->prev, x->next);
	digram_delete(s, x);
	if (x->kind == NONTERM)
		x->rule->uses--;
	s->size--;
	node_free(s, x);
}

struct node *mn_seq_rule_new(struct mn_seq *s)
{
	struct node *g = mn_seq_node_alloc(s, GUARD);

	g->prev = g->next = g;
	s->nrules++;
	return g;
}

/* Replaces nonterminal x, whose rule is used only here, with the rule's right-hand side. */
static void expand(struct mn_seq *s, struct node *x)
{
	struct node *left = x->prev, *right = x->next, *g = x->rule;
	struct node *f = g->next, *l = g->prev;

	digram_delete(s, left);
	digram_delete(s, x);
	left->next = f;
	f->prev = left;
	l->next = right;
	right->prev = l;
	node_free(s, x);
	node_free(s, g);
	s->size--;
	s->nrules--;
	digram_set(s, left);
	digram_set(s, l);
}

static int check(struct mn_seq *s, struct node *x);

/* Replaces the digram at x with a nonterminal for rule g, and checks the digrams it forms. */
static void substitute(struct mn_seq *s, struct node *x, struct node *g)
{
	struct node *q = x->prev, *y;

	sym_delete(s, q->next);
	sym_delete(s, q->next);
	y = mn_seq_node_alloc(s, NONTERM);
	y->rule = g;
	g->uses++;
	s->size++;
	insert_after(s, q, y);
	if (!check(s, q))
		check(s, q->next);
}

/* The digram at ss occurs again, without overlap, at m: make (or reuse) a rule for it. */
static void match(struct mn_seq *s, struct node *ss, struct node *m)
{
	struct node *g;

	if (m->prev->kind == GUARD && m->next->next->kind == GUARD) {
		g = m->prev;
		substitute(s, ss, g);
	} else {
		g = mn_seq_rule_new(s);
		insert_after(s, g->prev, sym_copy(s, ss));
		insert_after(s, g->prev, sym_copy(s, ss->next));
		substitute(s, m, g);
		substitute(s, ss, g);
		digram_set(s, g->next);
	}
	check_utility(s, g);
}

/* Expands the first and last symbols of rule g if they are nonterminals now used only once. */
static void check_utility(struct mn_seq *s, struct node *g)
{
	if (g->next->kind == NONTERM && g->next->rule->uses == 1)
		expand(s, g->next);
	if (g->prev->kind == NONTERM && g->prev->rule->uses == 1)
		expand(s, g->prev);
}

/* Indexes the digram at x, or matches it if it occurs elsewhere.  1 when it was found, else 0. */
static int check(struct mn_seq *s, struct node *x)
{
	struct node **slot, *y;

	if (x->kind == GUARD || x->next->kind == GUARD)
		return 0;
	slot = digram_find(s, x);
	y = *slot;
	if (!y) {
		*slot = x;
		return 0;
	}
	if (y == x)
		return 0;
	if (y->next != x && x->next != y)
		match(s, x, y);
	return 1;
}

/* ---- Public ---------------------------------------------------------------------------------- */

int mn_seq_create(struct mn_seq **sp)
{
	struct mn_seq *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	if (tab_resize(s, 128) || mn_seq_slab_add(s, 64)) {
		mn_seq_destroy(s);
		return -ENOMEM;
	}
	s->start = mn_seq_rule_new(s);
	*sp = s;
	return 0;
}

void mn_seq_destroy(struct mn_seq *s)
{
	struct slab *b, *next;

	if (!s)
		return;
	for (b = s->slabs; b; b = next) {
		next = b->next;
		free(b);
	}
	free(s->tab);
	free(s->order);
	free(s->rhs);
	free(s);
}

/* Room for the grammar to grow by more than one append can: see the file comment. */
static int reserve(struct mn_seq *s)
{
	size_t need = 2 * s->nlive + 64, tcap = s->tcap, grow;
	int ret;

	if (s->ncap >= need)
		return 0;
	grow = need - s->ncap > s->ncap ? need - s->ncap : s->ncap;
	while (tcap < 2 * (s->ncap + grow))
		tcap *= 2;
	if (tcap != s->tcap) {
		ret = tab_resize(s, tcap);
		if (ret)
			return ret;
	}
	return mn_seq_slab_add(s, grow);
}

int mn_seq_append(struct mn_seq *s, uint64_t symbol)
{
	struct node *y;
	int ret;

	if (s->frozen)
		return -EPERM;
	ret = reserve(s);
	if (ret)
		return ret;
	y = mn_seq_node_alloc(s, TERM);
	y->term = symbol;
	s->size++;
	s->length++;
	insert_after(s, s->start->prev, y);
	check(s, y->prev);
	return 0;
}

uint64_t mn_seq_length(const struct mn_seq *s)
{
	return s->length;
}

uint64_t mn_seq_rules_count(const struct mn_seq *s)
{
	return s->nrules;
}

uint64_t mn_seq_size(const struct mn_seq *s)
{
	return s->size;
}
