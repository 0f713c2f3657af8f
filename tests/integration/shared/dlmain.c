/* Loads the library with dlopen (after the program's session started) and calls it. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	long (*sum)(const long *, int);
	long *(*alloc)(int);
	long *a;

	if (!h) {
		printf("dlopen failed\n");
		return 1;
	}
	*(void **)&sum = dlsym(h, "lib_sum");
	*(void **)&alloc = dlsym(h, "lib_alloc");
	a = alloc(64);
	printf("sum %ld\n", sum(a, 64));
	free(a);
	return 0;
}
