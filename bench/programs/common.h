/* Shared by the bench programs: a fixed pseudo-random sequence, so every run does the same work. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H
#include <stdint.h>

static uint64_t bench_rng = 0x9e3779b97f4a7c15u;

static inline uint64_t bench_next(void)
{
	/* xorshift64*: cheap, and deterministic across runs and machines. */
	bench_rng ^= bench_rng >> 12;
	bench_rng ^= bench_rng << 25;
	bench_rng ^= bench_rng >> 27;
	return bench_rng * 0x2545f4914f6cdd1dULL;
}
#endif
