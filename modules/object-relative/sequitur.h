/*
 * Sequitur (Nevill-Manning and Witten, 1997): a context-free grammar built online from a sequence
 * of symbols, one append at a time, that generates exactly that sequence.  WHOMP (the object-
 * relative paper, section 3) feeds each decomposed stream of the object-relative profile into one.
 * Two invariants hold after every append:
 *
 *   digram uniqueness: no pair of adjacent symbols appears twice in the grammar (overlapping
 *                      occurrences, as in "aaa", count once);
 *   rule utility:      every rule but the start rule is used at least twice.
 *
 * Terminals are arbitrary 64-bit values.  Rules are numbered only when the grammar is read: rule 0
 * is the start rule, the others in the order their first use is met scanning rule 0, then rule 1,
 * and so on; the same input always gives the same grammar and the same numbers.
 *
 * Text form, one rule a line, rules in id order (what mn_seq_write() writes, mn_seq_parse() reads):
 *
 *   R0 -> 5 R1 7 R1
 *   R1 -> 18446744073709551615 3
 *
 * terminals in decimal, rules as R<id>; the start rule may be empty ("R0 ->").
 *
 * Not thread-safe.  Functions returning int return 0 (or what they say) or -errno.
 */
#ifndef MN_SEQUITUR_H
#define MN_SEQUITUR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct mn_seq;

/* One symbol on a right-hand side. */
struct mn_seq_sym {
	uint64_t value;   /* the terminal, or the rule's id */
	bool rule;        /* value is a rule id */
};

/* An empty grammar (R0 ->) in *sp.  0 or -ENOMEM (then *sp is untouched). */
int mn_seq_create(struct mn_seq **sp);
void mn_seq_destroy(struct mn_seq *s);

/*
 * Appends symbol to the sequence and restores both invariants; amortized O(1).  0, -ENOMEM with
 * the grammar unchanged (all memory the append can need is reserved before it changes anything),
 * or -EPERM on a grammar from mn_seq_parse(), which is read-only.
 */
int mn_seq_append(struct mn_seq *s, uint64_t symbol);

/* The length of the sequence the grammar generates (saturates at UINT64_MAX for parsed ones). */
uint64_t mn_seq_length(const struct mn_seq *s);
/* Its rules, the start rule included. */
uint64_t mn_seq_rules_count(const struct mn_seq *s);
/* Its size: the symbols on all right-hand sides (Sequitur's measure of a grammar). */
uint64_t mn_seq_size(const struct mn_seq *s);

/*
 * Calls fn once per rule, in id order (0 first), with its right-hand side rhs[0..n-1]; rhs is
 * valid during the call only, and fn must not change the grammar.  Returns 0, -ENOMEM (numbering
 * needs memory; fn not called), or the first non-zero value fn returned (then iteration stopped).
 */
int mn_seq_rules(struct mn_seq *s,
		 int (*fn)(void *arg, uint64_t id, const struct mn_seq_sym *rhs, size_t n),
		 void *arg);

/*
 * Calls fn with every symbol of the sequence, in order: regenerates the input.  O(length) time,
 * memory in the depth of the grammar.  Returns 0, -ENOMEM (fn maybe called for a prefix), or the
 * first non-zero value fn returned (then expansion stopped).
 */
int mn_seq_expand(const struct mn_seq *s, int (*fn)(void *arg, uint64_t symbol), void *arg);

/* Writes the grammar as text (above) to f.  0, -ENOMEM, or -EIO when a write failed. */
int mn_seq_write(struct mn_seq *s, FILE *f);

/*
 * Reads a grammar in text form from f, to its end, into a new read-only grammar in *sp, which can
 * be read and expanded like any other.  Lines that are empty or start with '#' are skipped.  The
 * rules must be defined in id order from R0, every rule used must be defined, and no rule may
 * derive itself; a rule other than R0 needs at least one symbol.  The invariants are not required.
 * Returns 0, -EINVAL on malformed or inconsistent text, -ENOMEM, or -EIO on a read error; on
 * failure *sp is untouched.
 */
int mn_seq_parse(struct mn_seq **sp, FILE *f);

#endif /* MN_SEQUITUR_H */
