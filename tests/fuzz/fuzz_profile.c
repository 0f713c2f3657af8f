/*
 * libFuzzer target for the profile reader (profile/profile_read.c, libmnemo-profile): any bytes
 * either open as a profile that every reader call then walks without fault, or are refused with
 * -errno and a message naming the file.  Built with -fsanitize=fuzzer,address,undefined, so a leak
 * on either path, an out-of-bounds read in a walk, or UB in number parsing is a finding too.
 *
 * The reader only takes a path, so each input goes through one memfd, reopened by its
 * /proc/self/fd path: no temporary files are left behind when the fuzzer is killed.
 *
 * A broken contract (a documented answer the reader does not give) aborts, which libFuzzer reports
 * as a crash with the input that caused it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profile.h"

/* Reports the broken contract and aborts, so libFuzzer keeps the input. */
#define check(cond)                                                                     \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "fuzz_profile: %s:%d: contract broken: %s\n",  \
				__FILE__, __LINE__, #cond);                             \
			abort();                                                        \
		}                                                                       \
	} while (0)

static int fd = -1;
static char path[64];

/* Touches every byte of a string the reader handed out, so ASan sees a bad pointer here. */
static size_t touch(const char *s)
{
	check(s != NULL);
	return strlen(s);
}

/* Every call a consumer makes on one node, checked against the answers profile.h promises. */
static void visit(const struct mn_profile *p, const struct mn_pnode *n)
{
	enum mn_pnode_kind kind = mn_pnode_kind(n);
	size_t len = mn_pnode_len(n), slen = 0;
	const char *s = mn_pnode_str(n, &slen);
	char err[256];
	uint64_t u;
	int64_t i;
	double f;
	bool b;

	check(kind == MN_PNODE_SCALAR || kind == MN_PNODE_SEQ || kind == MN_PNODE_MAP);
	check(mn_pnode_line(n) >= 1 && mn_pnode_column(n) >= 1);
	check((s != NULL) == (kind == MN_PNODE_SCALAR));
	if (s) {
		check(len == 0);
		/* A scalar may hold an escaped NUL ("a\0b"): the length is the bound, not strlen. */
		check(touch(s) <= slen && s[slen] == '\0');
	}
	check(mn_pnode_at(n, len) == NULL && mn_pnode_key_node(n, len) == NULL);
	check(mn_pnode_at(n, SIZE_MAX) == NULL);

	/* Typed reads agree on the same text: an unsigned that fits is a signed too. */
	if (mn_pnode_u64(n, &u) == 0 && u <= INT64_MAX)
		check(mn_pnode_i64(n, &i) == 0 && (uint64_t)i == u);
	(void)mn_pnode_f64(n, &f);
	if (mn_pnode_bool(n, &b) == 0)
		check(mn_pnode_u64(n, &u) != 0);
	if (mn_pnode_is_null(n))
		check(kind == MN_PNODE_SCALAR);

	check(mn_pnode_errorf(p, n, err, sizeof(err), "at %s", "node") == -EINVAL);
	check(strncmp(err, path, strlen(path)) == 0);

	for (size_t k = 0; kind == MN_PNODE_MAP && k < len; k++) {
		const struct mn_pnode *key = mn_pnode_key_node(n, k);
		const char *name = mn_pnode_key(n, k);

		/* A typed field read agrees with the node's own typed read, and a refusal names
		 * the file, as restore() functions rely on. */
		if (name && k < 64) {
			const struct mn_pnode *v = mn_pnode_get(n, name);
			const char *str;
			uint64_t fu;
			uint32_t f32;
			int ret;

			ret = mn_pfield_u64(p, n, name, &fu, err, sizeof(err));
			check(ret == mn_pnode_u64(v, &u) || (ret == -EINVAL && mn_pnode_u64(v, &u)));
			if (ret)
				check(strncmp(err, path, strlen(path)) == 0);
			else
				check(fu == u);
			ret = mn_pfield_u32(p, n, name, &f32, err, sizeof(err));
			check(ret == 0 ? fu == f32 : ret == -EINVAL);
			ret = mn_pfield_str(p, n, name, &str, err, sizeof(err));
			check(ret == 0 ? touch(str) >= 0 : mn_pnode_kind(v) != MN_PNODE_SCALAR);
			check(mn_pfield_node(p, n, name, MN_PNODE_NONE, NULL, 0) == v);
		}

		check(key != NULL && mn_pnode_at(n, k) != NULL);
		check(name == mn_pnode_str(key, NULL));
		/* get() answers with the first entry of that key, which is at k or before; a
		 * bound on k keeps a map of thousands of keys from costing millions of calls. */
		if (name && k < 64) {
			const struct mn_pnode *v = mn_pnode_get(n, name);
			size_t j;

			for (j = 0; j <= k; j++)
				if (mn_pnode_at(n, j) == v)
					break;
			check(j <= k);
		}
	}
	if (kind == MN_PNODE_SEQ)
		check(mn_pnode_key_node(n, 0) == NULL && mn_pnode_key(n, 0) == NULL);
}

/*
 * The nodes one walk has visited: an open-addressing set of handles, at most half full.  Aliases
 * make a section a graph, not a tree (`&a [*a]` is a cycle, and a dozen lines of aliases of
 * aliases have exponentially many paths), so the walk visits each node once, as a client must.
 */
struct seen {
	const struct mn_pnode **slot;
	size_t cap, n;
};

static bool seen_put(const struct mn_pnode **slot, size_t cap, const struct mn_pnode *n)
{
	size_t h = (size_t)(((uintptr_t)n >> 3) * 0x9e3779b97f4a7c15ull) & (cap - 1);

	for (; slot[h]; h = (h + 1) & (cap - 1))
		if (slot[h] == n)
			return false;
	slot[h] = n;
	return true;
}

/* Adds n; false when it was there already. */
static bool seen_add(struct seen *s, const struct mn_pnode *n)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		const struct mn_pnode **slot = calloc(cap, sizeof(*slot));

		check(slot != NULL);
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i])
				seen_put(slot, cap, s->slot[i]);
		free(s->slot);
		s->slot = slot;
		s->cap = cap;
	}
	if (!seen_put(s->slot, s->cap, n))
		return false;
	s->n++;
	return true;
}

/*
 * Visits every node under root once, depth first, with a stack on the heap: a client's recursion
 * is its own business, but this walk must not be what overflows.
 */
static void walk(const struct mn_profile *p, const struct mn_pnode *root)
{
	const struct mn_pnode **stack;
	struct seen seen = { 0 };
	size_t top = 0, cap = 64;

	if (!root)
		return;
	stack = malloc(cap * sizeof(*stack));
	check(stack != NULL);
	stack[top++] = root;
	while (top) {
		const struct mn_pnode *n = stack[--top];
		size_t len = mn_pnode_len(n);

		if (!seen_add(&seen, n))
			continue;
		visit(p, n);
		for (size_t k = 0; k < len; k++) {
			if (top + 2 > cap) {
				cap *= 2;
				stack = realloc(stack, cap * sizeof(*stack));
				check(stack != NULL);
			}
			if (mn_pnode_kind(n) == MN_PNODE_MAP)
				stack[top++] = mn_pnode_key_node(n, k);
			stack[top++] = mn_pnode_at(n, k);
		}
	}
	free(seen.slot);
	free(stack);
}

/* The frame: program, completeness, the site table and the module index. */
static void read_frame(const struct mn_profile *p)
{
	const struct mn_program *pr = mn_profile_program(p);
	const char *reason = NULL;
	size_t nsites = mn_profile_site_count(p), nmods = mn_profile_module_count(p);

	check(strcmp(mn_profile_path(p), path) == 0);
	check(mn_pnode_kind(mn_profile_root(p)) == MN_PNODE_MAP);

	check(pr != NULL && pr->argv != NULL && pr->argv[pr->argc] == NULL);
	for (size_t k = 0; k < pr->argc; k++)
		touch(pr->argv[k]);
	check(pr->pid >= -1 && pr->events >= -1);
	check(pr->exit_status >= -1 && pr->exit_status <= 255);
	check(pr->signal >= 0 && pr->signal <= 255);
	check(!(pr->signal && pr->exit_status != -1));

	if (mn_profile_complete(p, &reason))
		check(reason == NULL);
	else
		touch(reason);
	(void)mn_profile_complete(p, NULL);

	for (size_t k = 0; k < nsites; k++) {
		const struct mn_site *s = mn_profile_site_at(p, k);

		check(s != NULL && mn_profile_site(p, s->id) == s);
		check(k == 0 || mn_profile_site_at(p, k - 1)->id < s->id);
		touch(s->kind);
		touch(s->function);
		touch(s->file);
		touch(s->name);
		touch(s->fields);
		/* The id after a site is either the next site or missing. */
		if (s->id < UINT32_MAX && (k + 1 == nsites || mn_profile_site_at(p, k + 1)->id > s->id + 1))
			check(mn_profile_site(p, s->id + 1) == NULL);
	}
	check(mn_profile_site_at(p, nsites) == NULL);
	if (!nsites)
		check(mn_profile_site(p, 0) == NULL && mn_profile_site(p, UINT32_MAX) == NULL);

	for (size_t k = 0; k < nmods; k++) {
		const char *name = mn_profile_module_name(p, k);
		const struct mn_pnode *sec = mn_profile_module_section(p, k);

		touch(name);
		check(sec != NULL);
		check(mn_profile_module(p, name) == sec);
		walk(p, sec);
	}
	check(mn_profile_module_name(p, nmods) == NULL);
	check(mn_profile_module_section(p, nmods) == NULL);
	check(mn_profile_module(p, "no such module \x01") == NULL);

	/* The binary identity: unknown, or a count and 16 lowercase hex digits. */
	{
		const struct mn_binary *b = mn_profile_binary(p);
		size_t hl = touch(b->site_table_hash);

		check(hl == 0 || (hl == 16 && strspn(b->site_table_hash, "0123456789abcdef") == 16));
	}
}

/* The NULL answers profile.h promises, so that lookups chain. */
static void null_node(void)
{
	uint64_t u;
	int64_t i;
	double f;
	bool b;

	check(mn_pnode_kind(NULL) == MN_PNODE_NONE && mn_pnode_len(NULL) == 0);
	check(!mn_pnode_at(NULL, 0) && !mn_pnode_key_node(NULL, 0) && !mn_pnode_key(NULL, 0));
	check(!mn_pnode_get(NULL, "x") && !mn_pnode_str(NULL, NULL) && !mn_pnode_is_null(NULL));
	check(mn_pnode_u64(NULL, &u) == -EINVAL && mn_pnode_i64(NULL, &i) == -EINVAL);
	check(mn_pnode_f64(NULL, &f) == -EINVAL && mn_pnode_bool(NULL, &b) == -EINVAL);
	check(mn_pnode_line(NULL) == 0 && mn_pnode_column(NULL) == 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd = memfd_create("fuzz_profile", 0);
	if (fd < 0) {
		perror("fuzz_profile: memfd_create");
		exit(1);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	null_node();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mn_profile *p = NULL;
	char err[512];
	int ret;

	check(ftruncate(fd, 0) == 0);
	for (size_t off = 0; off < size;) {
		ssize_t n = pwrite(fd, data + off, size - off, (off_t)off);

		check(n > 0);
		off += (size_t)n;
	}

	memset(err, 'x', sizeof(err));
	ret = mn_profile_open(&p, path, err, sizeof(err));
	if (ret) {
		/* Refused: with a message that names the file, and nothing handed out. */
		check(ret < 0 && p == NULL);
		check(memchr(err, '\0', sizeof(err)) != NULL);
		check(strncmp(err, path, strlen(path)) == 0 && err[strlen(path)] == ':');
		check(strlen(err) > strlen(path) + 2);
		/* Only a read failure or a lack of memory is not the input's fault. */
		check(ret == -EINVAL || ret == -ENOMEM || ret == -EIO);
		return 0;
	}
	check(p != NULL);
	read_frame(p);
	walk(p, mn_profile_root(p));
	mn_profile_close(p);
	return 0;
}
