/*
 * strides.c: loads and stores whose address strides are known from the source, for value-pattern's
 * `stride` column.  Each marked access runs N (or N / 2) times in one pass of its own loop, so its
 * dominant stride is the source's and covers every one of its strides:
 *   MARK:fwd   load of longs, forward:              +8   (sizeof(long))
 *   MARK:rev   load of longs, backward:             -8
 *   MARK:two   store of longs, every other one:     +16
 *   MARK:aos   store to one field of 24-byte structures: +24 (sizeof(struct rec))
 *   MARK:col   load down a column of int[COLS] rows: +4 * COLS = +200
 * Built with -fno-unroll-loops -fno-vectorize -fno-slp-vectorize (each source access one site,
 * one element per execution).  Sizes are checked at compile time below.
 */
#include <stdio.h>

#define N 1000
#define ROWS 400
#define COLS 50

struct rec {
	long x;
	int y;
	double z;
};

_Static_assert(sizeof(long) == 8, "strides.c assumes 8-byte longs");
_Static_assert(sizeof(struct rec) == 24, "strides.c assumes a 24-byte struct rec");

long fwd[N], rev[N], two[N];
struct rec aos[N];
int grid[ROWS][COLS];

int main(int argc, char **argv)
{
	long s = 0;

	for (int i = 0; i < N; i++)
		s += fwd[i] + i;               /* MARK:fwd */
	for (int i = N - 1; i >= 0; i--)
		s += rev[i] ^ i;               /* MARK:rev */
	for (int i = 0; i < N; i += 2)
		two[i] = s + i;                /* MARK:two */
	for (int i = 0; i < N; i++)
		aos[i].y = i * argc;           /* MARK:aos */
	for (int r = 0; r < ROWS; r++)
		s += grid[r][argc];            /* MARK:col */
	printf("%ld %ld %d\n", s, two[N - 2], aos[N - 1].y);
	return 0;
}
