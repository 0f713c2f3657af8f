/*
 * Reading a Sequitur grammar (sequitur.h): its rules numbered and listed, its sequence expanded,
 * its text form written, and a grammar parsed back from that text (read-only: no digram index).
 */
#define _POSIX_C_SOURCE 200809L   /* getline */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sequitur_internal.h"

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
	ret = mn_seq_slab_add(s, ps.ntok + ps.nrules);
	if (ret)
		goto out;
	g[0] = s->start;
	for (size_t r = 1; r < ps.nrules; r++)
		g[r] = mn_seq_rule_new(s);
	for (size_t r = 0; r < ps.nrules; r++) {
		for (size_t t = ps.first[r]; t < ps.first[r + 1]; t++) {
			struct node *x = mn_seq_node_alloc(s, ps.tok[t].rule ? NONTERM : TERM);

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
