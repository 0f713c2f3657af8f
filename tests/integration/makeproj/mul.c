#include "calc.h"
long mul_all(const long *v, int n)
{
	long p = 1;
	for (int i = 0; i < n; i++)
		p = p * v[i] % 1000003;
	return p;
}
