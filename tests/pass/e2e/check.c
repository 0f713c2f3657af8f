/*
 * The checker of the end-to-end test, compiled natively (not LTO bitcode), as
 * the runtime is: it must see the symbols the pass created during the LTO link.
 * Before main it registers the globals, as the runtime does; after main it
 * checks the site table against abi.h and the event counts against each
 * other, prints what it expected and got for each failure, and turns the
 * exit status to 1 if anything failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"
#include "e2e.h"

/* Weak, as in the runtime: a program built without the pass still links. */
#pragma weak __mnemo_pass_abi
#pragma weak __mnemo_site_table
#pragma weak __mnemo_site_table_size
#pragma weak __mnemo_site_count
#pragma weak __mnemo_register_globals

static int failures;

static void expect(int ok, const char *what, unsigned long expected, unsigned long got)
{
	if (!ok) {
		fprintf(stderr, "e2e: %s: expected %lu, got %lu\n", what, expected, got);
		failures++;
	}
}

__attribute__((constructor)) static void e2e_start(void)
{
	if (__mnemo_register_globals)
		__mnemo_register_globals();
}

static const char *const kinds[] = {
	"load", "store", "pointer", "alloc", "realloc", "free",
	"stack", "global", "function", "loop",
};

static int known_kind(const char *line, size_t len)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i]) == len && memcmp(line, kinds[i], len) == 0)
			return 1;
	return 0;
}

/* Line id of the table (body, the lines after the header), or NULL. */
static const char *table_line(const char *body, unsigned long id)
{
	for (unsigned long k = 1; body && *body && k < id; k++) {
		body = strchr(body, '\n');
		body = body ? body + 1 : NULL;
	}
	return body && *body ? body : NULL;
}

/*
 * The loop column: every load and store in a loop names a loop site, and where the program has
 * loops some access is in one.
 */
static void check_loops(const char *body, unsigned long lines)
{
	unsigned long in_loop = 0, loops = 0;
	const char *p = body;

	for (unsigned long id = 1; id <= lines && p; id++) {
		const char *col = p;
		unsigned long loop;

		for (int f = 0; f < 7 && col; f++) {
			col = strchr(col, '\t');
			col = col ? col + 1 : NULL;
		}
		loop = col ? strtoul(col, NULL, 10) : 0;
		loops += strncmp(p, "loop\t", 5) == 0;
		if (loop) {
			const char *l = table_line(body, loop);

			expect(strncmp(p, "load\t", 5) == 0 || strncmp(p, "store\t", 6) == 0,
			       "a loop column only on loads and stores (site)", 0, id);
			expect(l && strncmp(l, "loop\t", 5) == 0, "the loop column names a loop "
			       "(site)", 0, id);
			in_loop++;
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	expect(!loops || in_loop, "accesses in loops", 1, in_loop);
}

/* Checks every line of the table; counts the global and stack sites. */
static void check_table(unsigned long *globals, unsigned long *stacks)
{
	const char *t = __mnemo_site_table;
	const char *header = "mnemo-sites/3\n";
	unsigned long lines = 0;

	expect(strlen(t) == __mnemo_site_table_size, "table size (strlen)",
	       __mnemo_site_table_size, strlen(t));
	expect(strncmp(t, header, strlen(header)) == 0, "table header", 1, 0);
	for (const char *p = t + strlen(header); *p;) {
		const char *end = strchr(p, '\n');
		if (!end) {
			expect(0, "newline at end of every line", 1, 0);
			break;
		}
		unsigned long tabs = 0;
		for (const char *q = p; q < end; q++)
			tabs += *q == '\t';
		expect(tabs == 11, "tabs per line", 11, tabs);
		expect(known_kind(p, strcspn(p, "\t")), "known kind", 1, 0);
		if (strncmp(p, "global\t", 7) == 0)
			++*globals;
		if (strncmp(p, "stack\t", 6) == 0)
			++*stacks;
		if (strncmp(p, "function\t__mnemo_", 17) == 0 ||
		    strncmp(p, "function\tmn_", 12) == 0)
			expect(0, "no site in the callbacks", 0, lines + 1);
		lines++;
		p = end + 1;
	}
	expect(lines == __mnemo_site_count, "lines in the table", __mnemo_site_count, lines);
	expect(strstr(t, "function\tmain\t") != NULL, "a site for main", 1, 0);
	expect(strstr(t, "\ttable\t256\t") != NULL, "the global 'table' (256 bytes)", 1, 0);
	check_loops(t + strlen(header), lines);
}

__attribute__((destructor)) static void e2e_finish(void)
{
	unsigned long *n = mn_e2e_count;
	unsigned long globals = 0, stacks = 0;

	if (!&__mnemo_pass_abi || !&__mnemo_site_table || !&__mnemo_site_table_size ||
	    !&__mnemo_site_count || !__mnemo_register_globals) {
		fprintf(stderr, "e2e: the pass's symbols did not resolve\n");
		fflush(NULL);
		_exit(1);
	}

	expect(__mnemo_pass_abi == MNEMO_ABI_VERSION, "__mnemo_pass_abi", MNEMO_ABI_VERSION,
	       __mnemo_pass_abi);
	check_table(&globals, &stacks);
	expect(n[E2E_GLOBAL] == globals, "global registrations", globals, n[E2E_GLOBAL]);
	expect(mn_e2e_max_site <= __mnemo_site_count, "site ids within the table",
	       __mnemo_site_count, mn_e2e_max_site);
	expect(mn_e2e_zero_sites == 0, "events with site 0", 0, mn_e2e_zero_sites);
	expect(n[E2E_FUNC_ENTRY] > 0, "function entries > 0", 1, n[E2E_FUNC_ENTRY]);
	expect(n[E2E_FUNC_EXIT] == n[E2E_FUNC_ENTRY], "function exits", n[E2E_FUNC_ENTRY],
	       n[E2E_FUNC_EXIT]);
	expect(n[E2E_LOAD] > 0, "loads > 0", 1, n[E2E_LOAD]);
	expect(n[E2E_STORE] > 0, "stores > 0", 1, n[E2E_STORE]);
	expect(n[E2E_HEAP_SITE] > 0, "heap sites > 0", 1, n[E2E_HEAP_SITE]);
	expect(n[E2E_POINTER] > 0, "pointer creations > 0", 1, n[E2E_POINTER]);
	if (stacks)
		expect(n[E2E_STACK_ALLOC] > 0, "stack allocations > 0", 1, n[E2E_STACK_ALLOC]);
	expect(n[E2E_STACK_FREE] == n[E2E_STACK_ALLOC], "stack frees", n[E2E_STACK_ALLOC],
	       n[E2E_STACK_FREE]);
	expect(n[E2E_LOOP_ITER] >= n[E2E_LOOP_INVOKE], "loop iterations >= invocations",
	       n[E2E_LOOP_INVOKE], n[E2E_LOOP_ITER]);
	expect(n[E2E_LOOP_INVOKE] > 0, "loop invocations > 0", 1, n[E2E_LOOP_INVOKE]);
	expect(n[E2E_LOOP_EXIT] == n[E2E_LOOP_INVOKE], "loop exits", n[E2E_LOOP_INVOKE],
	       n[E2E_LOOP_EXIT]);
	fprintf(stderr, "e2e: %u sites; %lu loads, %lu stores, %lu calls, %lu loop iterations\n",
		__mnemo_site_count, n[E2E_LOAD], n[E2E_STORE], n[E2E_FUNC_ENTRY],
		n[E2E_LOOP_ITER]);
	if (failures) {
		fprintf(stderr, "e2e: %d checks failed\n", failures);
		fflush(NULL);
		_exit(1);
	}
}
