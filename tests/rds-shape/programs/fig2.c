/* The paper's Figure 2 (Raman and August): an array of two trees of depth 2, built by make_tree.
 * One RDS type (make_tree's malloc), two instances of three nodes each, the array in neither. */
#include <stdio.h>
#include <stdlib.h>

typedef struct _TREE {
	int n;
	struct _TREE *left, *right;
} tree;

__attribute__((noinline)) tree *make_tree(int depth)
{
	if (depth > 0) {
		tree *t = (tree *)malloc(sizeof(tree));   /* MARK:node */

		t->n = depth;
		t->left = make_tree(depth - 1);
		t->right = make_tree(depth - 1);
		return t;
	}
	return NULL;
}

tree **volatile sink;   /* keeps the array alive through the optimizer */

int main(int argc, char **argv)
{
	tree **arr = (tree **)malloc(10 * sizeof(tree *));   /* MARK:array */

	sink = arr;

	arr[0] = make_tree(2);
	arr[1] = make_tree(2);
	printf("%d %d\n", arr[0]->n, arr[1]->n);
	return 0;
}
