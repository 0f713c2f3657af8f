// C++: classes, new/delete, std::vector, exceptions thrown and caught.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};

struct Rect : Shape {
	double w, h;
	Rect(double w, double h) : w(w), h(h) {}
	double area() const override { return w * h; }
};

static double checked(double v)
{
	if (v > 1000)
		throw std::runtime_error("too big: " + std::to_string((long)v));
	return v;
}

int main()
{
	std::vector<Shape *> shapes;
	for (int i = 1; i <= 50; i++)
		shapes.push_back(new Rect(i, i + 1));
	double total = 0;
	int caught = 0;
	for (Shape *s : shapes) {
		try {
			total += checked(s->area());
		} catch (const std::exception &e) {
			caught++;
		}
	}
	for (Shape *s : shapes)
		delete s;
	auto v = std::make_unique<std::vector<int>>(1000, 7);
	long sum = 0;
	for (int x : *v)
		sum += x;
	std::printf("total %.1f caught %d sum %ld\n", total, caught, sum);
	return 0;
}
