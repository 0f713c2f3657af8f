/*
 * Every table of every module's section declares its weight (struct mn_schema.weight), the
 * numeric column `mnemo report` lists its rows by: the schemas of mn_module.schema are walked,
 * mappings into their rows, tables into theirs (a put field's .sub included), and each table's
 * rows must name a weight that is one of their numeric fields.  A module without a schema
 * (null, shadow-cost) writes no table: report_weights.sh checks its report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "registry.h"
#include "schema.h"

static bool numeric(enum mn_ftype t)
{
	return t == MN_FT_U64 || t == MN_FT_U32 || t == MN_FT_I64 || t == MN_FT_F64;
}

/* Whether f's value is a table of f->sub's rows (else one row, or no rows at all). */
static bool table_field(const struct mn_field *f)
{
	return f->sub && f->type != MN_FT_MAP && !(f->flags & MN_FF_IDS);
}

/* The problems of table rows s at path, appended to why; returns how many. */
static int check_rows(const struct mn_schema *s, const char *path, char *why, size_t len);

static int check_fields(const struct mn_schema *s, const char *path, char *why, size_t len)
{
	int bad = 0;

	for (unsigned i = 0; i < s->nfields; i++) {
		const struct mn_field *f = &s->fields[i];
		char sub[256];

		if (!f->sub || (f->flags & MN_FF_IDS))
			continue;
		snprintf(sub, sizeof(sub), "%s.%s", path, f->key);
		bad += table_field(f) ? check_rows(f->sub, sub, why, len)
				      : check_fields(f->sub, sub, why, len);
	}
	return bad;
}

static int check_rows(const struct mn_schema *s, const char *path, char *why, size_t len)
{
	const struct mn_field *w = NULL;
	size_t used = strlen(why);

	for (unsigned i = 0; s->weight && i < s->nfields; i++)
		if (!strcmp(s->fields[i].key, s->weight))
			w = &s->fields[i];
	if (!s->weight)
		snprintf(why + used, len - used, "  %s: no weight declared\n", path);
	else if (!w || !numeric(w->type))
		snprintf(why + used, len - used, "  %s: weight '%s' is no numeric field of its rows\n",
			 path, s->weight);
	return !(s->weight && w && numeric(w->type)) + check_fields(s, path, why, len);
}

static void test_every_table_has_a_weight(void **state)
{
	char why[8192] = "";
	int bad = 0, with = 0;

	(void)state;
	for (size_t i = 0; i < mn_module_count(); i++) {
		const struct mn_module *m = mn_module_at(i);

		if (!m->schema)
			continue;
		with++;
		bad += check_fields(m->schema, m->name, why, sizeof(why));
	}
	if (bad)
		fail_msg("expected every table to declare a numeric weight; %d do not:\n%s", bad,
			 why);
	/* dependence, object-relative, rds-shape, structure-affinity, value-pattern, alloc-sizes */
	if (with < 6)
		fail_msg("expected at least 6 modules with a schema, got %d", with);
}

/* The walk finds what it checks: a table without a weight, and one whose weight is text. */
static void test_the_check_fails(void **state)
{
	static const struct mn_field row_fields[] = {
		MN_FIELD("site", MN_FT_SITE, MN_NO_OFFSET, MN_R_KEY),
		MN_FIELD("kind", MN_FT_ENUM, MN_NO_OFFSET, MN_R_NONE, .choices = "a|b"),
	};
	static const struct mn_schema none = MN_SCHEMA("none", int, row_fields);
	static const struct mn_schema text = MN_SCHEMA("text", int, row_fields, .weight = "kind");
	static const struct mn_field top_fields[] = {
		MN_FIELD("a", MN_FT_ROWS, MN_NO_OFFSET, MN_R_NONE, .sub = &none),
		MN_FIELD("b", MN_FT_U64, MN_NO_OFFSET, MN_R_NONE, .sub = &text),
	};
	static const struct mn_schema top = MN_SCHEMA("top", int, top_fields);
	char why[1024] = "";

	(void)state;
	if (check_fields(&top, "top", why, sizeof(why)) != 2)
		fail_msg("expected 2 tables refused, got: %s", why);
	assert_non_null(strstr(why, "top.a: no weight declared"));
	assert_non_null(strstr(why, "top.b: weight 'kind' is no numeric field"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_table_has_a_weight),
		cmocka_unit_test(test_the_check_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
