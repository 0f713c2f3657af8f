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
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"        /* mn_hash64() */
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

/* ---- Node pool ------------------------------------------------------------------------------- */

static struct node *node_alloc(struct mn_seq *s, uint32_t kind)
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
static int slab_add(struct mn_seq *s, size_t n)
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
	struct node *y = node_alloc(s, x->kind);

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

static struct node *rule_new(struct mn_seq *s)
{
	struct node *g = node_alloc(s, GUARD);

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
	y = node_alloc(s, NONTERM);
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
		g = rule_new(s);
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
	if (tab_resize(s, 128) || slab_add(s, 64)) {
		mn_seq_destroy(s);
		return -ENOMEM;
	}
	s->start = rule_new(s);
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
	return slab_add(s, grow);
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
	y = node_alloc(s, TERM);
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

/*
 * Numbers the rules (the header's order) into s->order and each guard's id.  0 or -ENOMEM.
 * Every rule is reachable from the start rule (it is used, and rules form a DAG).
 */
static int number(struct mn_seq *s)
{
	size_t n = 0;

	if (s->order_cap < s->nrules) {
		struct node **o = realloc(s->order, s->nrules * sizeof(*o));

		if (!o)
			return -ENOMEM;
		s->order = o;
		s->order_cap = s->nrules;
	}
	if (++s->epoch == 0)
		s->epoch = 1;
	s->start->mark = s->epoch;
	s->start->id = 0;
	s->order[n++] = s->start;
	for (size_t i = 0; i < n; i++) {
		for (struct node *x = s->order[i]->next; x->kind != GUARD; x = x->next) {
			if (x->kind != NONTERM || x->rule->mark == s->epoch)
				continue;
			x->rule->mark = s->epoch;
			x->rule->id = n;
			s->order[n++] = x->rule;
		}
	}
	return 0;
}

int mn_seq_rules(struct mn_seq *s,
		 int (*fn)(void *arg, uint64_t id, const struct mn_seq_sym *rhs, size_t n),
		 void *arg)
{
	int ret = number(s);

	if (ret)
		return ret;
	if (!s->rhs) {
		/* rhs is never NULL, even for an empty start rule. */
		s->rhs = malloc(16 * sizeof(*s->rhs));
		if (!s->rhs)
			return -ENOMEM;
		s->rhs_cap = 16;
	}
	for (uint64_t i = 0; i < s->nrules; i++) {
		size_t n = 0;

		for (struct node *x = s->order[i]->next; x->kind != GUARD; x = x->next) {
			if (n == s->rhs_cap) {
				size_t cap = s->rhs_cap ? 2 * s->rhs_cap : 16;
				struct mn_seq_sym *r = realloc(s->rhs, cap * sizeof(*r));

				if (!r)
					return -ENOMEM;
				s->rhs = r;
				s->rhs_cap = cap;
			}
			s->rhs[n].rule = x->kind == NONTERM;
			s->rhs[n].value = x->kind == NONTERM ? x->rule->id : x->term;
			n++;
		}
		ret = fn(arg, i, s->rhs, n);
		if (ret)
			return ret;
	}
	return 0;
}

int mn_seq_expand(const struct mn_seq *s, int (*fn)(void *arg, uint64_t symbol), void *arg)
{
	size_t sp = 0, cap = 64;
	struct node **stack = malloc(cap * sizeof(*stack)), *x;
	int ret = 0;

	if (!stack)
		return -ENOMEM;
	stack[sp++] = s->start->next;
	while (sp) {
		x = stack[sp - 1];
		if (x->kind == GUARD) {
			sp--;
			continue;
		}
		stack[sp - 1] = x->next;
		if (x->kind == TERM) {
			ret = fn(arg, x->term);
			if (ret)
				break;
			continue;
		}
		if (sp == cap) {
			struct node **st = realloc(stack, 2 * cap * sizeof(*st));

			if (!st) {
				ret = -ENOMEM;
				break;
			}
			stack = st;
			cap *= 2;
		}
		stack[sp++] = x->rule->next;
	}
	free(stack);
	return ret;
}

int mn_seq_write(struct mn_seq *s, FILE *f)
{
	int ret = number(s);

	if (ret)
		return ret;
	for (uint64_t i = 0; i < s->nrules; i++) {
		fprintf(f, "R%" PRIu64 " ->", i);
		for (struct node *x = s->order[i]->next; x->kind != GUARD; x = x->next) {
			if (x->kind == NONTERM)
				fprintf(f, " R%" PRIu64, x->rule->id);
			else
				fprintf(f, " %" PRIu64, x->term);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- Parsing --------------------------------------------------------------------------------- */

/* Growable arrays of mn_seq_parse(). */
struct parse {
	struct mn_seq_sym *tok;       /* every right-hand side, one after another */
	size_t ntok, tok_cap;
	size_t *first;                /* rule i's symbols: tok[first[i] .. first[i + 1]) */
	size_t nrules, first_cap;     /* first holds nrules + 1 entries */
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (n < *cap)
		return 0;
	while (c <= n)
		c *= 2;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

/* A decimal number without sign at *p, advancing *p past it.  0 or -EINVAL. */
static int parse_u64(const char **p, uint64_t *v)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(*p, &end, 10);
	if (errno)
		return -EINVAL;
	*p = end;
	return 0;
}

/* One line "R<k> -> sym...", k the next rule id, into ps.  0, -EINVAL or -ENOMEM. */
static int parse_line(struct parse *ps, const char *p)
{
	struct mn_seq_sym sym;
	uint64_t id;
	int ret;

	if (*p++ != 'R' || parse_u64(&p, &id) || id != ps->nrules)
		return -EINVAL;
	while (*p == ' ' || *p == '\t')
		p++;
	if (p[0] != '-' || p[1] != '>')
		return -EINVAL;
	p += 2;
	for (;;) {
		if (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			return -EINVAL;
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			break;
		sym.rule = *p == 'R';
		p += sym.rule;
		if (parse_u64(&p, &sym.value))
			return -EINVAL;
		ret = grow((void **)&ps->tok, &ps->tok_cap, ps->ntok, sizeof(*ps->tok));
		if (ret)
			return ret;
		ps->tok[ps->ntok++] = sym;
	}
	if (id > 0 && ps->ntok == ps->first[ps->nrules])
		return -EINVAL;
	ret = grow((void **)&ps->first, &ps->first_cap, ps->nrules + 2, sizeof(*ps->first));
	if (ret)
		return ret;
	ps->first[++ps->nrules] = ps->ntok;
	return 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * Checks that the rules of ps form a DAG whose every rule but 0 is used, and computes the length
 * each derives into len[] (saturating).  0, -EINVAL or -ENOMEM.
 */
static int parse_check(const struct parse *ps, uint64_t *len)
{
	size_t n = ps->nrules, sp = 0;
	uint8_t *color = calloc(n, 1);          /* 0 unseen, 1 on the stack, 2 done */
	size_t *stack = malloc(n * sizeof(*stack)), *pos = malloc(n * sizeof(*pos));
	bool *used = calloc(n, sizeof(*used));
	int ret = 0;

	if (!color || !stack || !pos || !used) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t t = 0; t < ps->ntok; t++) {
		if (ps->tok[t].rule) {
			if (ps->tok[t].value >= n) {
				ret = -EINVAL;
				goto out;
			}
			used[ps->tok[t].value] = true;
		}
	}
	for (size_t r = 1; r < n; r++) {
		if (!used[r]) {
			ret = -EINVAL;
			goto out;
		}
	}
	for (size_t root = 0; root < n; root++) {
		if (color[root])
			continue;
		color[root] = 1;
		len[root] = 0;
		pos[root] = ps->first[root];
		stack[sp++] = root;
		while (sp) {
			size_t r = stack[sp - 1], t = pos[r], c;

			if (t == ps->first[r + 1]) {
				color[r] = 2;
				if (--sp)
					len[stack[sp - 1]] = add_sat(len[stack[sp - 1]], len[r]);
				continue;
			}
			pos[r]++;
			if (!ps->tok[t].rule) {
				len[r] = add_sat(len[r], 1);
				continue;
			}
			c = ps->tok[t].value;
			if (color[c] == 1) {
				ret = -EINVAL;   /* c derives itself */
				goto out;
			}
			if (color[c] == 2) {
				len[r] = add_sat(len[r], len[c]);
				continue;
			}
			color[c] = 1;
			len[c] = 0;
			pos[c] = ps->first[c];
			stack[sp++] = c;
		}
	}
out:
	free(color);
	free(stack);
	free(pos);
	free(used);
	return ret;
}

int mn_seq_parse(struct mn_seq **sp, FILE *f)
{
	struct parse ps = { 0 };
	struct mn_seq *s = NULL;
	struct node **g = NULL;
	uint64_t *len = NULL;
	char *line = NULL;
	size_t line_cap = 0;
	int ret;

	ret = grow((void **)&ps.first, &ps.first_cap, 1, sizeof(*ps.first));
	if (ret)
		goto out;
	ps.first[0] = 0;
	while (getline(&line, &line_cap, f) >= 0) {
		if (line[0] == '\n' || line[0] == '\0' || line[0] == '#')
			continue;
		ret = parse_line(&ps, line);
		if (ret)
			goto out;
	}
	if (ferror(f)) {
		ret = -EIO;
		goto out;
	}
	if (!ps.nrules) {
		ret = -EINVAL;
		goto out;
	}
	len = malloc(ps.nrules * sizeof(*len));
	g = malloc(ps.nrules * sizeof(*g));
	if (!len || !g) {
		ret = -ENOMEM;
		goto out;
	}
	ret = parse_check(&ps, len);
	if (ret)
		goto out;

	ret = mn_seq_create(&s);
	if (ret)
		goto out;
	s->frozen = true;
	ret = slab_add(s, ps.ntok + ps.nrules);
	if (ret)
		goto out;
	g[0] = s->start;
	for (size_t r = 1; r < ps.nrules; r++)
		g[r] = rule_new(s);
	for (size_t r = 0; r < ps.nrules; r++) {
		for (size_t t = ps.first[r]; t < ps.first[r + 1]; t++) {
			struct node *x = node_alloc(s, ps.tok[t].rule ? NONTERM : TERM);

			if (ps.tok[t].rule) {
				x->rule = g[ps.tok[t].value];
				x->rule->uses++;
			} else {
				x->term = ps.tok[t].value;
			}
			/* Linked by hand: a frozen grammar has no digram index. */
			x->prev = g[r]->prev;
			x->next = g[r];
			g[r]->prev->next = x;
			g[r]->prev = x;
			s->size++;
		}
	}
	s->length = len[0];
	*sp = s;
	s = NULL;
out:
	mn_seq_destroy(s);
	free(ps.tok);
	free(ps.first);
	free(line);
	free(len);
	free(g);
	return ret;
}
