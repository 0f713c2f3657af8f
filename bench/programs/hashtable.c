/* A hash table with chaining: inserts, lookups, deletes. */
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

struct entry {
	struct entry *next;
	unsigned long key, value;
};

#define NBUCKETS (1u << 16)

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 24000000;
	struct entry **table = calloc(NBUCKETS, sizeof(*table));
	unsigned long found = 0, sum = 0;

	for (long i = 0; i < ops; i++) {
		unsigned long key = bench_next() % (NBUCKETS * 4);
		unsigned b = (key * 0x9e3779b97f4a7c15ul) >> 48;
		struct entry **pp = &table[b];
		while (*pp && (*pp)->key != key)
			pp = &(*pp)->next;
		if (*pp) {
			found++;
			sum += (*pp)->value;
			if ((i & 3) == 0) {
				struct entry *dead = *pp;
				*pp = dead->next;
				free(dead);
			}
		} else {
			struct entry *e = malloc(sizeof(*e));
			e->key = key;
			e->value = i;
			e->next = table[b];
			table[b] = e;
		}
	}
	for (unsigned b = 0; b < NBUCKETS; b++)
		for (struct entry *e = table[b], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	free(table);
	printf("hashtable ops %ld found %lu checksum %lu\n", ops, found, sum);
	return 0;
}
