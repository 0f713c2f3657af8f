/*
 * The claim of link-time specialization, in miniature: linked with full LTO against callbacks.c
 * specialized for a module that uses loads but not stores, only_stores() must contain no event
 * code at all (no call, no streaming store), while only_loads() pushes its record inline.
 * test_specialize disassembles both.  Exit status: the number of words pushed.
 */
#include <stdint.h>

#include "abi.h"
#include "queue.h"

__thread uint64_t *mn_q_cur, *mn_q_end, *mn_q_base;
__thread unsigned char mn_q_busy;
static uint64_t buf[1024];

void mn_queue_push_slow(const uint64_t *words, unsigned n)
{
}

void mn_queue_push_nested(void)
{
}

static __attribute__((noinline, used)) void only_stores(uint64_t *p, uint64_t v)
{
	__mnemo_store(7, p, v, sizeof(*p));
	*p = v;
}

static __attribute__((noinline, used)) uint64_t only_loads(uint64_t *p)
{
	uint64_t v = *(volatile uint64_t *)p;

	__mnemo_load(8, p, v, sizeof(*p));
	return v;
}

int main(void)
{
	uint64_t x;

	mn_q_cur = mn_q_base = buf;
	mn_q_end = buf + 1024;
	only_stores(&x, 42);
	only_loads(&x);
	return (int)(mn_q_cur - buf);
}
