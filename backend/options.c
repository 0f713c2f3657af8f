/*
 * Module settings from the environment (module.h, struct mn_option): one parser, so that every
 * module refuses a bad value with the same kind of message, and a value is never half read.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "module.h"

/* The index of word among choices ("a|b|c"), or -1. */
static int choice_index(const char *choices, const char *word)
{
	size_t n = strlen(word);

	for (int i = 0; choices; i++) {
		if (!strncmp(choices, word, n) && (choices[n] == '|' || !choices[n]))
			return i;
		choices = strchr(choices, '|');
		choices = choices ? choices + 1 : NULL;
	}
	return -1;
}

static bool parse_uint(const struct mn_option *o, const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	return !errno && !*end && isdigit((unsigned char)*v) &&
	       (double)*out >= o->min && (double)*out <= o->max;
}

static bool parse_real(const struct mn_option *o, const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return !errno && !*end && isfinite(*out) && *out >= o->min && *out <= o->max;
}

/* Stores text v (never NULL) as o's value in st; false when it is not one. */
static bool store(const struct mn_option *o, const char *v, void *st)
{
	char *field = (char *)st + o->offset;
	int i;

	switch (o->type) {
	case MN_OPT_UINT:
		return parse_uint(o, v, (uint64_t *)(void *)field);
	case MN_OPT_REAL:
		return parse_real(o, v, (double *)(void *)field);
	case MN_OPT_BOOL:
		if (strcmp(v, "0") && strcmp(v, "1"))
			return false;
		*(bool *)field = *v == '1';
		return true;
	case MN_OPT_CHOICE:
		i = choice_index(o->choices, v);
		if (i < 0)
			return false;
		*(unsigned *)(void *)field = (unsigned)i;
		return true;
	case MN_OPT_TEXT:
		/* The environment outlives the backend's modules, and def is a constant. */
		*(const char **)(void *)field = v;
		return true;
	}
	return false;
}

static void expected(const struct mn_option *o, char *buf, size_t len)
{
	switch (o->type) {
	case MN_OPT_UINT:
		snprintf(buf, len, "an integer from %.0f to %.0f", o->min, o->max);
		break;
	case MN_OPT_REAL:
		snprintf(buf, len, "a number from %g to %g", o->min, o->max);
		break;
	case MN_OPT_BOOL:
		snprintf(buf, len, "0 or 1");
		break;
	case MN_OPT_CHOICE:
		snprintf(buf, len, "one of %s", o->choices);
		break;
	case MN_OPT_TEXT:
		snprintf(buf, len, "text");   /* never: any text is stored */
		break;
	}
}

int mn_module_options(const struct mn_module *m, void *st)
{
	for (const struct mn_option *o = m->options; o && o->env; o++) {
		const char *v = getenv(o->env);
		char want[96];

		if (!v || !*v)
			v = o->def;
		if (store(o, v, st))
			continue;
		expected(o, want, sizeof(want));
		fprintf(stderr, "mnemo: %s: %s='%s': expected %s\n", m->name, o->env, v, want);
		return -EINVAL;
	}
	return 0;
}

void mn_thread_sums(void *st, uint32_t thread)
{
	(void)st;
	(void)thread;
}

void mn_option_usage(const struct mn_option *o, char *buf, size_t len)
{
	switch (o->type) {
	case MN_OPT_UINT:
		snprintf(buf, len, "%s=N", o->env);
		break;
	case MN_OPT_REAL:
		snprintf(buf, len, "%s=X", o->env);
		break;
	case MN_OPT_BOOL:
		snprintf(buf, len, "%s=1", o->env);
		break;
	case MN_OPT_CHOICE:
		snprintf(buf, len, "%s=%s", o->env, o->choices);
		break;
	case MN_OPT_TEXT:
		snprintf(buf, len, "%s=TEXT", o->env);
		break;
	}
}
