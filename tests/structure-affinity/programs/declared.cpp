// Figure 1 again in C++: operator new[] of the structure, so that the pass records its type and
// size (site name "operator new[](unsigned long):type", type_size 16) beside the inferred 16.
#include <cstdio>

struct type {
	int a, b, c, d;
};

int main(int argc, char **)
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
