// Figure 1 again in C++: operator new[] of the structure, so that the pass records its type and
// size (site name "operator new[](unsigned long):type", type_size 16) beside the inferred 16.
#include <cstdlib>
#include <cstdio>

struct type {
	int a, b, c, d;
};

static __attribute__((noinline)) int run(int argc)
{
	type *arr = new type[1000];   /* MARK:arr */
	long s = 0;

	for (int i = 0; i < 1000; i++) {
		arr[i].a = i;
		arr[i].c = argc;
	}
	for (int i = 0; i < 1000; i++) {
		arr[i].b = i;
		arr[i].d = argc;
	}
	for (int i = 0; i < 1000; i++)
		s += arr[i].a + arr[i].c;
	for (int i = 0; i < 1000; i++)
		s += arr[i].b * arr[i].d;
	std::printf("%ld\n", s);
	delete[] arr;
	return 0;
}

/* REPEAT (argument 1, default 1): the whole workload that many times, so that the sampling test
 * (sampling.sh) has enough accesses to sample; the profile's shape does not change with it. */
int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 1, rc = 0;

	for (int k = 0; k < reps && !rc; k++)
		rc = run(1);
	return rc;
}
