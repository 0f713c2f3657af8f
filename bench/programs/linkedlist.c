/* A sorted linked list with inserts and deletes (pointer chasing, allocation churn). */
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

struct item {
	struct item *next;
	unsigned key;
	unsigned payload;
};

int main(int argc, char **argv)
{
	int ops = argc > 1 ? atoi(argv[1]) : 300000;
	unsigned range = 4096;
	struct item *head = NULL;
	unsigned long checksum = 0;

	for (int i = 0; i < ops; i++) {
		unsigned key = bench_next() % range;
		struct item **pp = &head;
		while (*pp && (*pp)->key < key)
			pp = &(*pp)->next;
		if (*pp && (*pp)->key == key) {
			struct item *dead = *pp;
			checksum += dead->payload;
			*pp = dead->next;
			free(dead);
		} else {
			struct item *n = malloc(sizeof(*n));
			n->key = key;
			n->payload = i;
			n->next = *pp;
			*pp = n;
		}
	}
	for (struct item *n = head; n;) {
		struct item *next = n->next;
		checksum = checksum * 31 + n->key;
		free(n);
		n = next;
	}
	printf("linkedlist ops %d checksum %lu\n", ops, checksum);
	return 0;
}
