/*
 * What test_events.c and test_known.c check of one row of rds-shape's static_shape_graph
 * (modules/rds-shape/README.md).  Include after <cmocka.h> and "profile.h".
 */
#ifndef MN_TEST_RDS_EDGE_ROW_H
#define MN_TEST_RDS_EDGE_ROW_H

static inline uint64_t edge_u64(const struct mn_pnode *n, const char *key)
{
	uint64_t v = 0;

	if (mn_pnode_u64(mn_pnode_get(n, key), &v))
		fail_msg("line %u: expected an integer '%s'", mn_pnode_line(n), key);
	return v;
}

/*
 * Row e: `stores`, its source's pointer fields exactly fields[0..n) (increasing offsets),
 * `forward` and `backward` stores (from an older object to a younger one, and the other way).
 */
static inline void expect_edge_row(const struct mn_pnode *e, uint64_t stores,
				   const uint64_t *fields, size_t n, uint64_t fwd, uint64_t bwd)
{
	const struct mn_pnode *f = mn_pnode_get(e, "fields");

	assert_non_null(f);
	assert_int_equal(edge_u64(e, "stores"), stores);
	assert_int_equal(mn_pnode_len(f), n);
	for (size_t k = 0; k < n; k++) {
		uint64_t v;

		assert_int_equal(mn_pnode_u64(mn_pnode_at(f, k), &v), 0);
		assert_int_equal(v, fields[k]);
	}
	assert_int_equal(edge_u64(e, "forward"), fwd);
	assert_int_equal(edge_u64(e, "backward"), bwd);
}

#endif
