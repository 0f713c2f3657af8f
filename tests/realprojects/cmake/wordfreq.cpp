// The C++ half: classes, templates, std containers, new/delete, exceptions; prints what it
// computed and exits 0 when every check holds.
#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include <cstdio>
#include "ring.h"

template <typename T> class Stack {
	std::vector<T> items;
public:
	void push(const T &v) { items.push_back(v); }
	T pop()
	{
		if (items.empty())
			throw std::out_of_range("pop of an empty stack");
		T v = items.back();
		items.pop_back();
		return v;
	}
	size_t size() const { return items.size(); }
};

struct Node {
	int key;
	Node *left = nullptr, *right = nullptr;
	explicit Node(int k) : key(k) {}
	~Node() { delete left; delete right; }
};

static Node *insert(Node *n, int k)
{
	if (!n)
		return new Node(k);
	if (k < n->key)
		n->left = insert(n->left, k);
	else
		n->right = insert(n->right, k);
	return n;
}

static int depth(const Node *n) { return n ? 1 + std::max(depth(n->left), depth(n->right)) : 0; }

int main()
{
	const char *text = "the quick brown fox jumps over the lazy dog the fox and the dog";
	std::map<std::string, int> freq;
	std::istringstream in(text);
	for (std::string w; in >> w;)
		freq[w]++;
	std::vector<std::pair<int, std::string>> byfreq;
	for (auto &kv : freq)
		byfreq.emplace_back(-kv.second, kv.first);
	std::sort(byfreq.begin(), byfreq.end());
	for (size_t i = 0; i < 3; i++)
		std::printf("%s %d\n", byfreq[i].second.c_str(), -byfreq[i].first);

	Stack<int> s;
	for (int i = 0; i < 1000; i++)
		s.push(i * i);
	long total = 0;
	while (s.size())
		total += s.pop();
	bool caught = false;
	try {
		s.pop();
	} catch (const std::out_of_range &e) {
		caught = true;
		std::printf("caught: %s\n", e.what());
	}

	Node *root = nullptr;
	for (int i = 0; i < 2000; i++)
		root = insert(root, (i * 7919) % 2003);
	int d = depth(root);
	delete root;

	struct ring *r = ring_new(64);
	for (int i = 1; i <= 1000; i++)
		ring_push(r, i);
	long rs = ring_sum(r);
	ring_free(r);
	std::printf("stack %ld tree depth %d ring %ld\n", total, d, rs);
	return caught && total == 332833500 && rs == 61984 && freq["the"] == 4 ? 0 : 1;
}
