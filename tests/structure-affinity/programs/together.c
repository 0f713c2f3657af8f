/* An array of structures on the stack whose three fields are always used together: every loop
 * touches x, y and z of each element.  Size 24, fields 0, 8 and 16, every affinity 1: do not
 * split. */
#include <stdio.h>

#define N 500

struct point {
	double x, y, z;
};

int main(int argc, char **argv)
{
	struct point pts[N];   /* MARK:pts */
	double s = 0;

	for (int i = 0; i < N; i++) {
		pts[i].x = i;
		pts[i].y = i * 0.5 + argc;
		pts[i].z = -i;
	}
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < N; i++)
			s += pts[i].x * pts[i].y + pts[i].z;
	printf("%g\n", s);
	return 0;
}
