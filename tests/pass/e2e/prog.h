struct node {
	long value;
	struct node *next;
};

struct node *list_build(int n);
long list_sum(const struct node *h);
void list_free(struct node *h);
long vla_sum(int n);
long bump(long by);
