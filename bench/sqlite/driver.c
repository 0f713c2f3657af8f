/*
 * The SQLite bench program: a fixed workload through the SQLite C API, on an in-memory database
 * (no disk: its time is the library's, not the file system's).  Built as one translation unit
 * with the amalgamation (bench/sqlite/fetch.sh fetches it; bench/run.sh builds and runs this):
 *
 *	clang-19 -O2 -I DIR -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION bench/sqlite/driver.c
 *
 *	driver [ORDERS]      (default 200000; 20000 is the small input)
 *
 * Creates a customers table (ORDERS / 10 rows) and an orders table (ORDERS rows), inserted with
 * prepared statements in transactions of 10,000 rows, builds two indexes, runs joins with
 * aggregates over eight slices of the data, a group-by with ordering, a correlated update, a
 * delete and counts, and prints every result: deterministic output (pseudo-random data from a fixed seed) that the harness compares
 * with the native run's.  No threads (SQLITE_THREADSAFE=0): Mnemo follows the main thread.
 */
/* First: the amalgamation sets its own feature macros (_GNU_SOURCE for mremap) before any header. */
#include "sqlite3.c"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static sqlite3 *db;

static void fail(const char *what)
{
	fprintf(stderr, "sqlite bench: %s: %s\n", what, sqlite3_errmsg(db));
	exit(1);
}

static void exec(const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sqlite bench: %s: %s\n", sql, err ? err : "?");
		exit(1);
	}
}

/* Prints every row of a query, columns separated by spaces, reals with 4 decimals. */
static void print_query(const char *title, const char *sql)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail(sql);
	printf("%s:\n", title);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			if (sqlite3_column_type(st, i) == SQLITE_FLOAT)
				printf(" %.4f", sqlite3_column_double(st, i));
			else
				printf(" %s", (const char *)sqlite3_column_text(st, i));
		}
		printf("\n");
	}
	if (rc != SQLITE_DONE)
		fail(sql);
	sqlite3_finalize(st);
}

static uint64_t rng = 88172645463325252u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Runs a prepared insert n times in transactions of 10,000, binding what bind() gives. */
static void insert_rows(const char *sql, long n, void (*bind)(sqlite3_stmt *, long))
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail(sql);
	for (long i = 0; i < n; i++) {
		if (i % 10000 == 0)
			exec("BEGIN");
		bind(st, i);
		if (sqlite3_step(st) != SQLITE_DONE)
			fail(sql);
		sqlite3_reset(st);
		if (i % 10000 == 9999 || i == n - 1)
			exec("COMMIT");
	}
	sqlite3_finalize(st);
}

static long ncustomers;

static void bind_customer(sqlite3_stmt *st, long i)
{
	char name[32];

	snprintf(name, sizeof(name), "customer-%06ld-%02u", i, (unsigned)(next() % 100));
	sqlite3_bind_int64(st, 1, i + 1);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 3, (int)(next() % 16));
	sqlite3_bind_double(st, 4, (double)(next() % 100000) / 100.0);
}

static void bind_order(sqlite3_stmt *st, long i)
{
	sqlite3_bind_int64(st, 1, i + 1);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)(next() % (uint64_t)ncustomers) + 1);
	sqlite3_bind_int(st, 3, (int)(next() % 500));
	sqlite3_bind_int(st, 4, (int)(next() % 10) + 1);
	sqlite3_bind_double(st, 5, (double)(next() % 10000) / 100.0);
}

int main(int argc, char **argv)
{
	long orders = argc > 1 ? atol(argv[1]) : 200000;

	if (orders < 10) {
		fprintf(stderr, "usage: %s [ORDERS >= 10]\n", argv[0]);
		return 2;
	}
	ncustomers = orders / 10;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		fail("open");
	exec("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, region INTEGER, balance REAL)");
	exec("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, item INTEGER, "
	     "qty INTEGER, price REAL)");
	insert_rows("INSERT INTO customers VALUES(?, ?, ?, ?)", ncustomers, bind_customer);
	insert_rows("INSERT INTO orders VALUES(?, ?, ?, ?, ?)", orders, bind_order);
	exec("CREATE INDEX orders_customer ON orders(customer)");
	exec("CREATE INDEX customers_region ON customers(region)");
	for (int r = 0; r < 8; r++) {   /* the reports, for eight slices of the data */
		char sql[512], title[64];

		snprintf(title, sizeof(title), "revenue by region, items %d..%d", 64 * r, 64 * r + 63);
		snprintf(sql, sizeof(sql), "SELECT c.region, count(*), sum(o.qty * o.price) FROM "
			 "orders o JOIN customers c ON o.customer = c.id WHERE o.item BETWEEN %d AND "
			 "%d GROUP BY c.region ORDER BY c.region", 64 * r, 64 * r + 63);
		print_query(title, sql);
		snprintf(title, sizeof(title), "best customers of region %d", r);
		snprintf(sql, sizeof(sql), "SELECT c.name, sum(o.qty) AS q FROM customers c JOIN "
			 "orders o ON o.customer = c.id WHERE c.region = %d GROUP BY c.id "
			 "ORDER BY q DESC, c.id LIMIT 3", r);
		print_query(title, sql);
	}
	print_query("top items",
		    "SELECT item, count(*), avg(qty), max(price) FROM orders GROUP BY item "
		    "ORDER BY 3 DESC, 1 LIMIT 10");
	exec("UPDATE customers SET balance = balance + "
	     "(SELECT coalesce(sum(qty * price), 0) FROM orders WHERE customer = customers.id) "
	     "WHERE region < 8");
	print_query("balances", "SELECT count(*), sum(balance), min(balance), max(balance) "
				"FROM customers");
	exec("DELETE FROM orders WHERE qty > 8");
	print_query("orders left", "SELECT count(*), sum(qty) FROM orders");
	print_query("customers without orders",
		    "SELECT count(*) FROM customers c WHERE NOT EXISTS "
		    "(SELECT 1 FROM orders o WHERE o.customer = c.id)");
	sqlite3_close(db);
	return 0;
}
