// Strings a page must show as text, never as markup (escaping.sh): this comment,
// <script>alert(1)</script> <img src=x onerror=alert(1)>
// the file's name, which escaping.sh gives it (<script> and an <img> in it), and the name of the
// function walk instantiated with the type named script (written nowhere here, so that the page
// can show it only from the site table).
#include <cstdio>
#include <cstdlib>

struct script {
	long v;
};

template <typename T> __attribute__((noinline)) long walk(const T *a, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += a[i].v;   // <script>alert(2)</script>
	return s;
}

int main()
{
	enum { N = 100 };
	script *a = static_cast<script *>(std::malloc(N * sizeof(*a)));

	for (int i = 0; i < N; i++)
		a[i].v = i;
	std::printf("escape: %ld\n", walk(a, N));
	std::free(a);
	return 0;
}
