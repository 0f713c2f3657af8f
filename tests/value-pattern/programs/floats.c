/*
 * Known answers for value-pattern's floating-point values (tests/value-pattern/floats.sh): the
 * load marked DOUBLE reads a double that never changes, 0.1; FLOAT a float, 0.75; FEW a double
 * that takes two values, -2.5 and 1e300; INTEGER an integer, 42.  All volatile so that -O1 keeps
 * them in the loop.  The profile holds each value's bits, as the program sent them; the site
 * table names the double loads `double` and the float load `float`, and `mnemo report` prints
 * their values as 0.1, 0.75, -2.5 and 1e+300.
 */
#include <stdio.h>

volatile double gd = 0.1;
volatile float gf = 0.75f;
volatile double few[2] = { -2.5, 1e300 };
volatile long gi = 42;

int main(void)
{
	double s = 0;
	long n = 0;

	for (int i = 0; i < 100; i++) {
		s += gd;                  /* DOUBLE */
		s += gf;                  /* FLOAT */
		s += few[i & 1] * 1e-300; /* FEW */
		n += gi;                  /* INTEGER */
	}
	printf("%g %ld\n", s, n);
	return 0;
}
