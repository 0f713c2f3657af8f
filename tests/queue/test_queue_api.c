/*
 * The queue's API contract outside the data path: config and attach errors, the shared-memory
 * format's identity, the caller's extra region, finish and pop edge cases, NUMA placement, and (7)
 * nothing left behind: no fd, no mapping, no /dev/shm object, in the producer, the consumers or
 * this process.
 */
#include "qtest.h"  /* first: it sets _GNU_SOURCE */

#include <fcntl.h>
#include <linux/mempolicy.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static struct qt_shared *sh;

static int setup(void **state)
{
	sh = qt_shared_new();
	return sh ? 0 : -1;
}

static int teardown(void **state)
{
	qt_shared_free(sh);
	return 0;
}

static void expect_create(int expected, size_t buf_bytes, unsigned nbufs, unsigned nconsumers)
{
	struct mn_queue_config cfg = { buf_bytes, nbufs, nconsumers, 0, false, 0, 0 };
	struct mn_queue *q = (struct mn_queue *)&cfg;  /* must come back NULL on failure */
	int ret = mn_queue_create(&q, &cfg);

	if (ret != expected)
		fail_msg("mn_queue_create(buf_bytes %zu, nbufs %u, nconsumers %u): expected %d, got %d",
			 buf_bytes, nbufs, nconsumers, expected, ret);
	if (ret)
		assert_null(q);
	else
		mn_queue_destroy(q);
}

static void test_create_rejects_bad_config(void **state)
{
	expect_create(-EINVAL, 0, 2, 1);
	expect_create(-EINVAL, 1000, 2, 1);
	expect_create(-EINVAL, 4097, 2, 1);
	expect_create(-EINVAL, 4096, 1, 1);
	expect_create(-EINVAL, 4096, 2, 0);
	expect_create(-EINVAL, 4096, 2, MN_QUEUE_MAX_CONSUMERS + 1);
	expect_create(0, 4096, 2, MN_QUEUE_MAX_CONSUMERS);
	expect_create(0, 8192, 40, 1);  /* a header of more than one page */
	QT_EXPECT_EQ("mn_queue_create(cfg NULL)", (unsigned)-EINVAL,
		     (unsigned)mn_queue_create(&(struct mn_queue *){ NULL }, NULL));
}

static void test_format_identity(void **state)
{
	struct mn_queue_config cfg = { 8192, 3, 2, 100, false, 0, 0 };
	struct mn_queue *q;
	uint8_t hdr[64];
	uint64_t magic, buf_bytes, bufs_off;
	uint32_t version, header_bytes;
	struct stat st;

	assert_int_equal(mn_queue_create(&q, &cfg), 0);
	if (pread(mn_queue_fd(q), hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		fail_msg("pread header: expected 64 bytes, got %s", strerror(errno));
	memcpy(&magic, hdr, 8);
	memcpy(&version, hdr + 8, 4);
	memcpy(&header_bytes, hdr + 12, 4);
	memcpy(&buf_bytes, hdr + 16, 8);
	memcpy(&bufs_off, hdr + 32, 8);
	if (memcmp(hdr, "MNQUEUE1", 8))
		fail_msg("magic: expected \"MNQUEUE1\", got %#" PRIx64, magic);
	QT_EXPECT_EQ("version", 4, version);
	QT_EXPECT_EQ("header bytes for 3 buffers", 4096, header_bytes);
	QT_EXPECT_EQ("buf_bytes", 8192, buf_bytes);
	QT_EXPECT_EQ("bufs_off", 4096, bufs_off);
	assert_int_equal(fstat(mn_queue_fd(q), &st), 0);
	QT_EXPECT_EQ("memfd size (header + buffers + extra page)", 4096 + 3 * 8192 + 4096, st.st_size);
	QT_EXPECT_EQ("FD_CLOEXEC on the memfd (spawned backends inherit it)", 0,
		     fcntl(mn_queue_fd(q), F_GETFD) & FD_CLOEXEC);
	mn_queue_destroy(q);
}

static void test_attach_rejects(void **state)
{
	struct mn_queue_config cfg = { 4096, 2, 2, 0, false, 0, 0 };
	struct mn_queue *q, *c1, *c2 = NULL;
	uint32_t bad_version = 2;
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int junk = memfd_create("qtest-junk", MFD_CLOEXEC);
	char garbage[8192];

	memset(garbage, 0x5a, sizeof(garbage));
	assert_true(devnull >= 0 && junk >= 0);
	assert_int_equal(write(junk, garbage, sizeof(garbage)), sizeof(garbage));
	QT_EXPECT_EQ("attach to /dev/null", (unsigned)-EPROTO, (unsigned)mn_queue_attach(&c1, devnull, 0));
	QT_EXPECT_EQ("attach to a file of junk", (unsigned)-EPROTO, (unsigned)mn_queue_attach(&c1, junk, 0));
	QT_EXPECT_EQ("attach to fd -1", (unsigned)-EBADF, (unsigned)mn_queue_attach(&c1, -1, 0));
	close(devnull);
	close(junk);

	assert_int_equal(mn_queue_create(&q, &cfg), 0);
	QT_EXPECT_EQ("attach as consumer 2 of 2", (unsigned)-EINVAL,
		     (unsigned)mn_queue_attach(&c1, mn_queue_fd(q), 2));
	QT_EXPECT_EQ("attach as consumer 1", 0, mn_queue_attach(&c1, mn_queue_fd(q), 1));
	QT_EXPECT_EQ("attach as consumer 1 again", (unsigned)-EBUSY,
		     (unsigned)mn_queue_attach(&c2, mn_queue_fd(q), 1));
	assert_null(c2);
	mn_queue_detach(c1);
	QT_EXPECT_EQ("attach as consumer 1 after it detached", (unsigned)-EBUSY,
		     (unsigned)mn_queue_attach(&c2, mn_queue_fd(q), 1));
	/* Another format version is refused. */
	assert_int_equal(pwrite(mn_queue_fd(q), &bad_version, 4, 8), 4);
	QT_EXPECT_EQ("attach to format version 2", (unsigned)-EPROTO,
		     (unsigned)mn_queue_attach(&c2, mn_queue_fd(q), 0));
	mn_queue_destroy(q);
}

static void test_extra_region(void **state)
{
	struct mn_queue_config cfg = { 4096, 2, 1, 10000, false, 0, 0 };
	struct mn_queue *q, *c;
	unsigned char *pe, *ce;

	assert_int_equal(mn_queue_create(&q, &cfg), 0);
	pe = mn_queue_extra(q);
	QT_EXPECT_EQ("extra bytes (producer)", 10000, mn_queue_extra_bytes(q));
	QT_EXPECT_EQ("extra region page aligned", 0, (uintptr_t)pe % 4096);
	for (size_t i = 0; i < 10000; i++)
		if (pe[i])
			fail_msg("extra byte %zu: expected 0, got %u", i, pe[i]);
	memset(pe, 0xab, 10000);
	assert_int_equal(mn_queue_attach(&c, mn_queue_fd(q), 0), 0);
	ce = mn_queue_extra(c);
	QT_EXPECT_EQ("extra bytes (consumer)", 10000, mn_queue_extra_bytes(c));
	QT_EXPECT_EQ("extra byte 9999 seen by the consumer", 0xab, ce[9999]);
	QT_EXPECT_EQ("consumer's mn_queue_fd()", (unsigned)-1, (unsigned)mn_queue_fd(c));
	QT_EXPECT_EQ("zero behind on the producer's handle", (unsigned)-EINVAL,
		     (unsigned)mn_queue_zero_behind(q));
	QT_EXPECT_EQ("zero behind", 0, mn_queue_zero_behind(c));
	QT_EXPECT_EQ("zero behind, again", (unsigned)-EINVAL, (unsigned)mn_queue_zero_behind(c));
	mn_queue_detach(c);
	mn_queue_destroy(q);
}

/* Producer and consumer in one process: the partial buffer, finish twice, pop after the end. */
static void test_finish_idempotent(void **state)
{
	struct mn_queue_config cfg = { 4096, 2, 1, 0, false, 0, 0 };
	struct mn_queue *q, *c;
	const uint64_t *w;
	struct qt_consumer r = { 0 };
	uint64_t next = 0;
	size_t n;

	assert_int_equal(mn_queue_create(&q, &cfg), 0);
	assert_int_equal(mn_queue_attach(&c, mn_queue_fd(q), 0), 0);
	mn_queue_producer_start(q);
	qt_produce(10);
	mn_queue_producer_finish(q);
	mn_queue_producer_finish(q);
	QT_EXPECT_EQ("first pop", 1, mn_queue_pop(c, &w, &n));
	QT_EXPECT_EQ("pop before release", (unsigned)-EBUSY, (unsigned)mn_queue_pop(c, &w, &n));
	qt_check_buffer(&r, w, n, &next, 0, false);
	QT_EXPECT_NO_ERR(r.err);
	QT_EXPECT_EQ("records in the partial buffer", 10, r.records);
	mn_queue_release(c);
	QT_EXPECT_EQ("pop after the end", 0, mn_queue_pop(c, &w, &n));
	QT_EXPECT_EQ("pop after the end, again", 0, mn_queue_pop(c, &w, &n));
	QT_EXPECT_EQ("producer died", 0, mn_queue_producer_died(c));
	/* After finish, the producer's pushes are dropped and counted. */
	qt_produce(3);
	QT_EXPECT_EQ("dropped after finish", 3, mn_queue_dropped(q));
	QT_EXPECT_EQ("mn_q_end after finish", 0, (uintptr_t)mn_q_end);
	mn_queue_detach(c);
	mn_queue_destroy(q);
}

/* ---- NUMA placement ------------------------------------------------------------------------ */

#define NODE_BITS 1024

/* The policy of the page at addr and, with `where`, the node it is on (it gets faulted in). */
static void policy_at(const void *addr, int *mode, unsigned long *mask, int *where)
{
	if (syscall(SYS_get_mempolicy, mode, mask, NODE_BITS + 1UL, addr, MPOL_F_ADDR))
		fail_msg("get_mempolicy(MPOL_F_ADDR): expected 0, got %s", strerror(errno));
	if (where && syscall(SYS_get_mempolicy, where, NULL, 0UL, addr, MPOL_F_ADDR | MPOL_F_NODE))
		fail_msg("get_mempolicy(MPOL_F_NODE): expected 0, got %s", strerror(errno));
}

/* The lowest node number this process may not allocate on (one past the last on most machines). */
static int absent_node(void)
{
	unsigned long mask[NODE_BITS / 64] = { 0 };

	if (syscall(SYS_get_mempolicy, NULL, mask, NODE_BITS + 1UL, NULL, MPOL_F_MEMS_ALLOWED))
		return 1;
	for (int n = 0; n < NODE_BITS; n++)
		if (!(mask[n / 64] >> (n % 64) & 1))
			return n;
	return NODE_BITS;
}

/*
 * mn_queue_place(): node 0 (every Linux machine has it) becomes the buffers' preferred node, for
 * the producer's mapping and, the policy being the memfd's, for a consumer's; a node that is not
 * there, a consumer's handle and a started producer are refused; the queue still carries records.
 */
static void test_place(void **state)
{
	struct mn_queue_config cfg = { 4096, 4, 1, 4096, false, 0, 0 };
	unsigned long mask[NODE_BITS / 64];
	struct qt_consumer r = { 0 };
	struct mn_queue *q, *c;
	const uint64_t *w;
	int mode, node, ret, absent = absent_node();
	uint64_t next = 0;
	size_t n;

	assert_int_equal(mn_queue_create(&q, &cfg), 0);
	ret = mn_queue_place(q, 0);
	if (ret == -ENOSYS) {
		mn_queue_destroy(q);
		skip();  /* a kernel without NUMA: the runtime never calls it there */
	}
	QT_EXPECT_EQ("mn_queue_place(node 0)", 0, ret);
	QT_EXPECT_EQ("mn_queue_place(node 0) again", 0, mn_queue_place(q, 0));
	QT_EXPECT_EQ("mn_queue_place(node -1)", (unsigned)-EINVAL, (unsigned)mn_queue_place(q, -1));
	if (mn_queue_place(q, absent) != -EINVAL)
		fail_msg("mn_queue_place(node %d, not on this machine): expected %d, got %d",
			 absent, -EINVAL, mn_queue_place(q, absent));
	QT_EXPECT_EQ("mn_queue_place(node 1 << 20)", (unsigned)-EINVAL,
		     (unsigned)mn_queue_place(q, 1 << 20));
	QT_EXPECT_EQ("mn_queue_place(NULL, 0)", (unsigned)-EINVAL,
		     (unsigned)mn_queue_place(NULL, 0));

	assert_int_equal(mn_queue_attach(&c, mn_queue_fd(q), 0), 0);
	QT_EXPECT_EQ("mn_queue_place() on a consumer's handle", (unsigned)-EINVAL,
		     (unsigned)mn_queue_place(c, 0));
	mn_queue_producer_start(q);
	QT_EXPECT_EQ("mn_queue_place() once producing", (unsigned)-EBUSY,
		     (unsigned)mn_queue_place(q, 0));

	/* The producer's first buffer: preferred node 0, and its pages there. */
	policy_at(mn_q_base, &mode, mask, &node);
	QT_EXPECT_EQ("policy of buffer 0 (MPOL_PREFERRED)", MPOL_PREFERRED, mode);
	QT_EXPECT_EQ("node mask of buffer 0", 1, mask[0]);
	QT_EXPECT_EQ("node of buffer 0's page", 0, node);

	/* ~10 KB, at most 16000 bytes: three buffers and part of the fourth, and no wait for the
	 * consumer, which is this thread. */
	qt_produce(500);
	mn_queue_producer_finish(q);
	while ((ret = mn_queue_pop(c, &w, &n)) > 0) {
		policy_at(w, &mode, mask, NULL);
		QT_EXPECT_EQ("policy of a buffer in the consumer's mapping", MPOL_PREFERRED, mode);
		QT_EXPECT_EQ("its node mask", 1, mask[0]);
		qt_check_buffer(&r, w, n, &next, 0, false);
		mn_queue_release(c);
	}
	QT_EXPECT_EQ("last pop", 0, ret);
	QT_EXPECT_NO_ERR(r.err);
	QT_EXPECT_EQ("records through the placed queue", 500, r.records);
	/* The session region after the buffers keeps the default policy. */
	policy_at(mn_queue_extra(q), &mode, mask, NULL);
	QT_EXPECT_EQ("policy of the extra region (MPOL_DEFAULT)", MPOL_DEFAULT, mode);
	mn_queue_detach(c);
	mn_queue_destroy(q);
}

static bool maps_mention(const char *what)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

/* (7) Nothing left behind, in any process, on the normal path and the error paths. */
static void test_no_leaks(void **state)
{
	int fds = qt_count_fds(), shm = qt_count_shm();
	struct qt_run run = { .buf_bytes = 4096, .nbufs = 2, .nconsumers = 2, .records = 20000 };

	for (int k = 0; k < 50; k++) {
		struct mn_queue_config cfg = { 4096, 2, 2, 5000, false, 0, 0 };
		struct mn_queue *q, *c0, *c1, *bad;

		assert_int_equal(mn_queue_create(&q, &cfg), 0);
		if (qt_count_shm() != shm)
			fail_msg("/dev/shm entries with a queue: expected %d, got %d", shm, qt_count_shm());
		assert_int_equal(mn_queue_attach(&c0, mn_queue_fd(q), 0), 0);
		assert_int_equal(mn_queue_attach(&c1, mn_queue_fd(q), 1), 0);
		assert_int_equal(mn_queue_attach(&bad, mn_queue_fd(q), 1), -EBUSY);
		mn_queue_detach(c1);
		mn_queue_detach(c0);
		mn_queue_destroy(q);
	}
	QT_EXPECT_EQ("open fds after 50 create/attach/detach/destroy", fds, qt_count_fds());
	if (maps_mention("mnemo-queue"))
		fail_msg("mappings: expected no mnemo-queue mapping left, got one in /proc/self/maps");

	memset(sh, 0, sizeof(*sh));
	qt_run_stream(sh, &run, 9000);
	qt_expect_consumer(sh, 0, run.records);
	qt_expect_consumer(sh, 1, run.records);
	QT_EXPECT_EQ("producer's open fds after destroy", sh->producer_fds_before,
		     sh->producer_fds_after);
	for (int i = 0; i < 2; i++) {
		char what[64];

		snprintf(what, sizeof(what), "consumer %d's open fds after detach", i);
		QT_EXPECT_EQ(what, sh->c[i].fds_before, sh->c[i].fds_after);
	}
	qt_expect_released(sh, 2);
	QT_EXPECT_EQ("open fds in the test process", fds, qt_count_fds());
	QT_EXPECT_EQ("/dev/shm entries", shm, qt_count_shm());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_rejects_bad_config),
		cmocka_unit_test(test_format_identity),
		cmocka_unit_test(test_attach_rejects),
		cmocka_unit_test(test_extra_region),
		cmocka_unit_test(test_finish_idempotent),
		cmocka_unit_test(test_place),
		cmocka_unit_test(test_no_leaks),
	};

	return cmocka_run_group_tests_name("queue api", tests, setup, teardown);
}
