/*
 * A libmnemo-profile client: lists the loads a value-pattern profile found constant, heaviest
 * first, as "file:line:column function: value (executions)".  It is what a compiler or a script
 * does with a profile, in one page: open, check, walk one module's rows with typed fields.
 *
 *   cc constant_loads.c $(pkg-config --cflags --libs mnemo-profile) -o constant_loads
 *   ./constant_loads prog.mnemo.yaml
 *
 * (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig for an install prefix, or build/lib/pkgconfig.)
 * Exits 0, or 1 with the reader's message (file:line:col: what) when the profile is bad.
 */
#include <inttypes.h>
#include <stdio.h>

#include <mnemo/profile.h>

int main(int argc, char **argv)
{
	struct mn_profile *p;
	const struct mn_pnode *entries;
	char err[512];
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PROFILE\n", argv[0]);
		return 2;
	}
	if (mn_profile_open(&p, argv[1], err, sizeof(err))) {
		fprintf(stderr, "constant_loads: %s\n", err);
		return 1;
	}
	/* Rows are sorted by executions, largest first (modules/value-pattern/README.md). */
	entries = mn_pfield_node(p, mn_profile_module(p, "value-pattern"), "entries", MN_PNODE_SEQ,
				 err, sizeof(err));
	ret = entries ? 0 : 1;
	for (size_t i = 0; i < mn_pnode_len(entries) && !ret; i++) {
		const struct mn_pnode *row = mn_pnode_at(entries, i);
		const struct mn_site *s;
		const char *access;
		uint64_t execs, value = 0;
		uint32_t site;
		bool constant;

		if ((ret = mn_pfield_u32(p, row, "site", &site, err, sizeof(err))) ||
		    (ret = mn_pfield_str(p, row, "access", &access, err, sizeof(err))) ||
		    (ret = mn_pfield_u64(p, row, "executions", &execs, err, sizeof(err))) ||
		    (ret = mn_pfield_bool(p, row, "constant", &constant, err, sizeof(err))))
			break;
		if (!constant || access[0] != 'l')
			continue;
		if ((ret = mn_pfield_u64(p, row, "value", &value, err, sizeof(err))))
			break;
		s = mn_profile_site(p, site);
		printf("%s:%" PRIu32 ":%" PRIu32 " %s: %" PRIu64 " (%" PRIu64 " executions)\n",
		       s ? s->file : "?", s ? s->line : 0, s ? s->column : 0, s ? s->function : "?",
		       value, execs);
	}
	if (ret)
		fprintf(stderr, "constant_loads: %s\n", err);
	mn_profile_close(p);
	return ret ? 1 : 0;
}
