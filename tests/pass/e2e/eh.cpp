// C++ for the end-to-end test: exceptions unwinding through instrumented
// frames (function exit on every path), operator new/delete, std::vector.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

int table[64];

struct Item {
  long value;
  Item *next;
};

__attribute__((noinline)) static long deep(int n) {
  std::vector<long> v(n);
  for (int i = 0; i < n; i++)
    v[i] = i;
  if (n > 3)
    throw std::runtime_error("deep");
  return n ? v.back() : 0;
}

__attribute__((noinline)) static long middle(int n) {
  Item *it = new Item{n, nullptr};
  long r = deep(n) + it->value; // may throw: it leaks, on purpose
  delete it;
  return r;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 10;
  long total = 0;
  for (int i = 0; i < n; i++) {
    try {
      total += middle(i);
    } catch (const std::exception &e) {
      total -= 1;
    }
    table[i % 64] += i;
  }
  std::printf("total=%ld\n", total);
  return 0;
}
