/*
 * The fuzz seeds through the reader as a client calls it: every good-* seed of corpus/ opens, every
 * bad-* seed is refused with -EINVAL and exactly the message listed here, so a malformed profile
 * keeps telling the user which file and, where libyaml or the reader know one, which line.  Any
 * other seed (a reproducer the fuzzer found) opens, or is refused with a message naming the file.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile.h"

/* A malformed seed and what the reader says about it, after "<path>". */
struct bad {
	const char *file;
	const char *message;
};

static const struct bad bads[] = {
	{ "bad-argv.yaml", ":3:26: expected a string in 'argv', found a mapping" },
	{ "bad-complete.yaml", ":2:11: expected true or false for 'complete'" },
	{ "bad-deep-unclosed.yaml",
	  ":4:78: more than 64 levels of [ ] or { } nesting" },
	{ "bad-empty.yaml", ": not a mnemo profile (empty file)" },
	{ "bad-events.yaml", ":3:19: expected a count for 'events'" },
	{ "bad-exit-status.yaml",
	  ":3:24: expected an exit status (0-255, or -1) for 'exit_status'" },
	{ "bad-format-seq.yaml", ":1:9: not a mnemo profile (format is a sequence)" },
	{ "bad-later-doc.yaml",
	  ":4:1: expected a mapping with 'sites' or 'modules' in this document, found a sequence" },
	{ "bad-module-key.yaml",
	  ":3:11: expected a module name as a key of 'modules', found a sequence" },
	{ "bad-module-twice.yaml", ":3:17: module 'a' has two sections" },
	{ "bad-modules-scalar.yaml", ":3:10: expected a mapping for 'modules', found a scalar" },
	{ "bad-no-complete.yaml", ":1:1: missing key 'complete'" },
	{ "bad-no-format.yaml", ": not a mnemo profile (no 'format' key)" },
	/* libyaml's decoder knows a byte offset, not a line. */
	{ "bad-nul-byte.yaml", ": control characters are not allowed: #0 at byte 59" },
	{ "bad-pid-huge.yaml", ":3:16: expected a process id for 'pid'" },
	{ "bad-program.yaml", ":3:10: expected a mapping for 'program', found a sequence" },
	{ "bad-signal.yaml", ":3:19: expected a signal number or null for 'signal'" },
	{ "bad-site-dup.yaml", ": site 4 is listed twice in 'sites'" },
	{ "bad-site-id-range.yaml",
	  ":4:3: expected a site id (an integer from 0 to 4294967295) as a key of 'sites', found "
	  "a scalar '4294967296'" },
	{ "bad-site-key.yaml",
	  ":4:3: expected a site id (an integer from 0 to 4294967295) as a key of 'sites', found "
	  "a scalar 'main'" },
	{ "bad-site-kind.yaml", ":4:13: expected a string for 'kind', found a sequence" },
	{ "bad-site-line.yaml", ":4:25: expected an integer from 0 to 4294967295 for 'line'" },
	{ "bad-site-value.yaml", ":4:6: expected a mapping for site 4, found a scalar" },
	{ "bad-sites-seq.yaml", ":3:8: expected a mapping for 'sites', found a sequence" },
	{ "bad-tab.yaml",
	  ":2:1: found a tab character that violates indentation while scanning a plain scalar "
	  "(line 1)" },
	{ "bad-top-scalar.yaml", ": not a mnemo profile (the top level is a scalar, not a mapping)" },
	{ "bad-truncated.yaml",
	  ":22:1: did not find expected ',' or '}' while parsing a flow mapping (line 21)" },
	{ "bad-utf8.yaml", ": invalid leading UTF-8 octet: #FF at byte 57" },
	{ "bad-version.yaml",
	  ": unsupported profile format 'mnemo-profile/2' (this reader knows 'mnemo-profile/1')" },
	{ "bad-wall-huge.yaml", ":3:25: expected a number of seconds for 'wall_seconds'" },
};

static const struct bad *find_bad(const char *file)
{
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
		if (!strcmp(bads[i].file, file))
			return &bads[i];
	return NULL;
}

static int open_seed(const char *file, struct mn_profile **p, char *err, size_t errlen)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", CORPUS_DIR, file);
	*p = NULL;
	return mn_profile_open(p, path, err, errlen);
}

static void test_good_seeds_open(void **state)
{
	struct dirent *de;
	DIR *dir = opendir(CORPUS_DIR);
	int n = 0;

	assert_non_null(dir);
	while ((de = readdir(dir))) {
		struct mn_profile *p;
		char err[1024];
		int ret;

		if (strncmp(de->d_name, "good-", 5))
			continue;
		ret = open_seed(de->d_name, &p, err, sizeof(err));
		if (ret)
			fail_msg("%s: expected it to open, got %d: %s", de->d_name, ret, err);
		mn_profile_close(p);
		n++;
	}
	closedir(dir);
	if (n < 5)
		fail_msg("expected at least 5 good-* seeds in %s, got %d", CORPUS_DIR, n);
}

static void test_bad_seeds_messages(void **state)
{
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct mn_profile *p;
		char err[1024], want[4096 + 256];
		int ret = open_seed(bads[i].file, &p, err, sizeof(err));

		snprintf(want, sizeof(want), "%s/%s%s", CORPUS_DIR, bads[i].file, bads[i].message);
		if (ret != -EINVAL)
			fail_msg("%s: expected %d, got %d (%s)", bads[i].file, -EINVAL, ret, err);
		assert_null(p);
		if (strcmp(err, want))
			fail_msg("%s: expected message\n  '%s'\ngot\n  '%s'", bads[i].file, want, err);
	}
}

/* A new bad-* seed needs its message here; any other seed must still be answered properly. */
static void test_every_seed_listed(void **state)
{
	struct dirent *de;
	DIR *dir = opendir(CORPUS_DIR);

	assert_non_null(dir);
	while ((de = readdir(dir))) {
		struct mn_profile *p;
		char err[1024], path[4096];
		int ret;

		if (de->d_name[0] == '.' || !strncmp(de->d_name, "good-", 5))
			continue;
		if (!strncmp(de->d_name, "bad-", 4)) {
			if (!find_bad(de->d_name))
				fail_msg("%s: expected an entry in bads[] of %s, got none", de->d_name,
					 __FILE__);
			continue;
		}
		ret = open_seed(de->d_name, &p, err, sizeof(err));
		mn_profile_close(p);
		snprintf(path, sizeof(path), "%s/%s:", CORPUS_DIR, de->d_name);
		if (ret && (ret != -EINVAL || strncmp(err, path, strlen(path) - 1)))
			fail_msg("%s: expected success or -EINVAL with a message naming the file, "
				 "got %d: '%s'", de->d_name, ret, err);
	}
	closedir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_seeds_open),
		cmocka_unit_test(test_bad_seeds_messages),
		cmocka_unit_test(test_every_seed_listed),
	};

	return cmocka_run_group_tests_name("profile_messages", tests, NULL, NULL);
}
