/*
 * The runtime options of a profiled program: the MNEMO_* environment variables of options.def,
 * parsed into struct mn_options, and the two settings derived from them that need care, the
 * absolute profile path and the subset of modules to run.
 *
 * Everything here is a pure function of its arguments (the environment comes in through a
 * callback), so tests/runtime/ drives it directly.  runtime.c calls it once, from its constructor,
 * before any queue or backend exists; malloc-free as it happens, but it need not be: it is never on
 * an async-signal path.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "runtime_internal.h"

/* Range of each uint option that has one (options.def); the others take any unsigned value. */
static const struct {
	const char *env;
	unsigned min, max;
	const char *why;  /* why max is the limit, or "" */
} uint_ranges[] = {
#define MN_OPTION_RANGE(env, min, max, why) { #env, min, max, why },
#include "options.def"
#undef MN_OPTION_RANGE
};

static void set_err(char *err, size_t errlen, const char *env, const char *val, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: '%s' %s", env, val, what);
}

/* A str option: any non-empty value replaces the default. */
static int parse_str(const char *env, const char *val, const char **out, char *err, size_t errlen)
{
	if (val && *val)
		*out = val;
	return 0;
}

/* A uint option: decimal digits only (no sign, no blanks, no 0x), within its range. */
static int parse_uint(const char *env, const char *val, unsigned *out, char *err, size_t errlen)
{
	unsigned long long v = 0;
	unsigned min = 0, max = UINT_MAX;
	const char *c, *why = "";

	if (!val || !*val)
		return 0;
	for (c = val; *c; c++) {
		if (*c < '0' || *c > '9') {
			set_err(err, errlen, env, val, "is not a number");
			return -EINVAL;
		}
		/* Saturate rather than wrap, so a huge value is reported as out of range. */
		if (v <= UINT_MAX)
			v = v * 10 + (unsigned)(*c - '0');
	}
	for (size_t i = 0; i < sizeof(uint_ranges) / sizeof(uint_ranges[0]); i++) {
		if (!strcmp(uint_ranges[i].env, env)) {
			min = uint_ranges[i].min;
			max = uint_ranges[i].max;
			why = uint_ranges[i].why;
		}
	}
	if (v < min || v > max) {
		char what[160];

		snprintf(what, sizeof(what), "is out of range (%u..%u%s%s)", min, max,
			 v > max && *why ? ": " : "", v > max ? why : "");
		set_err(err, errlen, env, val, what);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

/* A bool option: 1/0, true/false, yes/no, on/off, in any case. */
static int parse_bool(const char *env, const char *val, bool *out, char *err, size_t errlen)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };

	if (!val || !*val)
		return 0;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(val, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(val, no[i])) {
			*out = false;
			return 0;
		}
	}
	set_err(err, errlen, env, val, "is not a boolean (use 1 or 0)");
	return -EINVAL;
}

int mn_options_read(struct mn_options *o, mn_getenv_fn *get, void *ctx, char *err, size_t errlen)
{
	int ret = 0, numa;

#define MN_OPTION(type, field, env, def, doc) o->field = def;
#include "options.def"
#undef MN_OPTION

	/* Keep the first error, but parse every option so MNEMO_DISABLE is known either way. */
#define MN_OPTION(type, field, env, def, doc)                                                      \
	if (parse_##type(#env, get(#env, ctx), &o->field, ret ? NULL : err, errlen))               \
		ret = -EINVAL;
#include "options.def"
#undef MN_OPTION

	/* A str option with a syntax of its own: checked here, and like a bad uint it keeps its
	 * default. */
	if (mn_options_choice(o->backends, mn_options_backends) < 0) {
		set_err(ret ? NULL : err, errlen, "MNEMO_BACKENDS", o->backends,
			"is not one or per-module");
		o->backends = "";
		ret = -EINVAL;
	}
	if (mn_options_choice(o->split, mn_options_splits) < 0) {
		set_err(ret ? NULL : err, errlen, "MNEMO_SPLIT", o->split, "is not module or shard");
		o->split = "";
		ret = -EINVAL;
	}
	if (mn_options_numa(o->numa, &numa)) {
		set_err(ret ? NULL : err, errlen, "MNEMO_NUMA", o->numa,
			"is not auto, off or a node number (0..1023)");
		o->numa = "";
		ret = -EINVAL;
	}
	return ret;
}

int mn_options_sample(const char *env, const char *val, unsigned *n, char *err, size_t errlen)
{
	unsigned long long v = 0;
	char what[80];

	if (!val || !*val) {
		*n = 1;
		return 0;
	}
	for (const char *c = val; *c; c++) {
		if (*c < '0' || *c > '9') {
			v = 0;
			break;
		}
		/* Saturates: any longer number is out of range, none wraps into it. */
		if (v <= MN_SAMPLE_MAX)
			v = v * 10 + (unsigned)(*c - '0');
	}
	if (v < 1 || v > MN_SAMPLE_MAX) {
		snprintf(what, sizeof(what), "is not a sampling period (an integer in 1..%u)",
			 MN_SAMPLE_MAX);
		set_err(err, errlen, env, val, what);
		return -EINVAL;
	}
	*n = (unsigned)v;
	return 0;
}

const char *const mn_options_backends[] = { "one", "per-module", NULL };
const char *const mn_options_splits[] = { "module", "shard", NULL };   /* enum mn_split */

int mn_options_choice(const char *val, const char *const *choices)
{
	if (!val || !*val)
		return 0;
	for (int i = 0; choices[i]; i++)
		if (!strcasecmp(val, choices[i]))
			return i;
	return -1;
}

int mn_options_numa(const char *val, int *mode)
{
	unsigned node = 0;

	if (!val || !*val || !strcasecmp(val, "auto")) {
		*mode = MN_NUMA_AUTO;
		return 0;
	}
	if (!strcasecmp(val, "off")) {
		*mode = MN_NUMA_OFF;
		return 0;
	}
	for (const char *c = val; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		/* Saturates: any longer number is out of range, none wraps into it. */
		if (node <= MN_NUMA_MAX_NODE)
			node = node * 10 + (unsigned)(*c - '0');
	}
	if (node > MN_NUMA_MAX_NODE)
		return -EINVAL;
	*mode = (int)node;
	return 0;
}

/* Appends n bytes of s to out at *len; false (and nothing written) when they do not fit. */
static bool append(char *out, size_t outlen, size_t *len, const char *s, size_t n)
{
	if (*len + n >= outlen)
		return false;
	memcpy(out + *len, s, n);
	*len += n;
	out[*len] = '\0';
	return true;
}

int mn_options_output_path(char *out, size_t outlen, const char *pattern, const char *program,
			   long pid, const char *cwd)
{
	char name[MN_PATH_MAX];
	size_t len = 0, nlen = 0;
	const char *base;

	if (!outlen)
		return -ENAMETOOLONG;
	out[0] = '\0';
	name[0] = '\0';
	if (!pattern || !*pattern) {
		base = program ? strrchr(program, '/') : NULL;
		base = base ? base + 1 : program;
		if (!base || !*base)
			base = "a.out";
		if (!append(name, sizeof(name), &nlen, base, strlen(base)) ||
		    !append(name, sizeof(name), &nlen, ".mnemo.yaml", strlen(".mnemo.yaml")))
			return -ENAMETOOLONG;
	} else {
		for (const char *p = pattern; *p; p++) {
			char num[24];
			bool ok;

			if (p[0] == '%' && p[1] == 'p') {
				ok = append(name, sizeof(name), &nlen, num,
					    (size_t)snprintf(num, sizeof(num), "%ld", pid));
				p++;
			} else if (p[0] == '%' && p[1] == '%') {
				ok = append(name, sizeof(name), &nlen, "%", 1);
				p++;
			} else {
				/* Any other % stays as written: no surprise expansion later. */
				ok = append(name, sizeof(name), &nlen, p, 1);
			}
			if (!ok)
				return -ENAMETOOLONG;
		}
	}
	if (name[0] != '/') {
		if (!cwd || cwd[0] != '/')
			return -EINVAL;
		if (!append(out, outlen, &len, cwd, strlen(cwd)))
			return -ENAMETOOLONG;
		/* "/" and any cwd already ending in a slash need none. */
		if (out[len - 1] != '/' && !append(out, outlen, &len, "/", 1))
			return -ENAMETOOLONG;
	}
	if (!append(out, outlen, &len, name, nlen))
		return -ENAMETOOLONG;
	return 0;
}

int mn_options_image_path(char *path, size_t len, long pid, unsigned image, bool pid_in_pattern)
{
	static const char *const suffixes[] = { ".mnemo.yaml", ".yaml" };
	const char *base = strrchr(path, '/');
	size_t n = strlen(path), at = n;
	char tag[48];
	int t = 0;

	base = base ? base + 1 : path;
	if (!image)
		return 0;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]) && at == n; i++) {
		size_t sl = strlen(suffixes[i]);

		/* a suffix after at least one character of the name's own */
		if (n - (size_t)(base - path) > sl && !strcmp(path + n - sl, suffixes[i]))
			at = n - sl;
	}
	if (!pid_in_pattern)
		t = snprintf(tag, sizeof(tag), ".%ld", pid);
	if (image >= 2)
		t += snprintf(tag + t, sizeof(tag) - (size_t)t, ".%u", image);
	if (n + (size_t)t + 1 > len)
		return -ENAMETOOLONG;
	memmove(path + at + t, path + at, n - at + 1);
	memcpy(path + at, tag, (size_t)t);
	return 0;
}

/* The next comma-separated item of *s (possibly empty), or false at the end. */
static bool next_item(const char **s, const char **item, size_t *n)
{
	const char *c;

	if (!*s)
		return false;
	c = strchr(*s, ',');
	*item = *s;
	*n = c ? (size_t)(c - *s) : strlen(*s);
	*s = c ? c + 1 : NULL;
	return true;
}

/* True when the comma list `list` holds the item name[0..n). */
static bool list_has(const char *list, const char *name, size_t n)
{
	const char *item;
	size_t len;

	while (next_item(&list, &item, &len))
		if (len == n && !memcmp(item, name, n))
			return true;
	return false;
}

int mn_options_select_modules(char names[MN_MAX_MODULES][MN_MODULE_NAME_MAX], const char *built,
			      const char *wanted, char *err, size_t errlen)
{
	const char *s, *item;
	size_t n;
	int count = 0;

	if (!built || !*built) {
		snprintf(err, errlen, "this program was built for no module");
		return -EINVAL;
	}
	/* Every name asked for must be one the program was built for. */
	if (wanted && *wanted) {
		bool any = false;

		for (s = wanted; next_item(&s, &item, &n);) {
			if (!n)
				continue;
			any = true;
			if (!list_has(built, item, n)) {
				snprintf(err, errlen, "MNEMO_MODULES: '%.*s' is not a module this "
					 "program was built for (built for: %s)", (int)n, item,
					 built);
				return -EINVAL;
			}
		}
		if (!any) {
			snprintf(err, errlen, "MNEMO_MODULES: '%s' names no module", wanted);
			return -EINVAL;
		}
	}
	/* In the order of `built`, so backend 0 (the leader) is the same module on every run. */
	for (s = built; next_item(&s, &item, &n);) {
		bool dup = false;

		if (!n || (wanted && *wanted && !list_has(wanted, item, n)))
			continue;
		for (int i = 0; i < count; i++)
			if (strlen(names[i]) == n && !memcmp(names[i], item, n))
				dup = true;
		if (dup)
			continue;
		if (n >= MN_MODULE_NAME_MAX) {
			snprintf(err, errlen, "module name '%.*s' is longer than %d bytes", (int)n,
				 item, MN_MODULE_NAME_MAX - 1);
			return -EINVAL;
		}
		if (count == MN_MAX_MODULES) {
			snprintf(err, errlen, "more than %d modules selected (set MNEMO_MODULES)",
				 MN_MAX_MODULES);
			return -EINVAL;
		}
		memcpy(names[count], item, n);
		names[count][n] = '\0';
		count++;
	}
	if (!count) {
		snprintf(err, errlen, "this program was built for no module");
		return -EINVAL;
	}
	return count;
}
