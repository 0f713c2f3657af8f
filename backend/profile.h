/*
 * Profiles: the writer modules and the backend use (libyaml emitter), and the reader every client
 * uses (libmnemo-profile).  Format: README "Reading a profile"; format string MN_PROFILE_FORMAT.
 *
 * Writer errors are sticky: after the first failure every call is a no-op and mn_prof_close()
 * returns the error, so emit functions need not check each call.
 */
#ifndef MNEMO_PROFILE_H
#define MNEMO_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MN_PROFILE_FORMAT "mnemo-profile/1"

/* ---- Writer ------------------------------------------------------------------------------------ */

struct mn_prof;

/* Starts a YAML stream on f (not closed by the writer).  Returns 0 or -errno. */
int mn_prof_open(struct mn_prof **pp, FILE *f);
/* Ends the stream; returns 0 or the first error (-errno, or -EIO for an emitter failure). */
int mn_prof_close(struct mn_prof *p);

void mn_prof_map_begin(struct mn_prof *p);
void mn_prof_map_begin_flow(struct mn_prof *p);   /* {a: 1, b: 2} on one line: table rows */
void mn_prof_map_end(struct mn_prof *p);
void mn_prof_seq_begin(struct mn_prof *p);
void mn_prof_seq_begin_flow(struct mn_prof *p);
void mn_prof_seq_end(struct mn_prof *p);
void mn_prof_key(struct mn_prof *p, const char *key);
void mn_prof_str(struct mn_prof *p, const char *s);
void mn_prof_u64(struct mn_prof *p, uint64_t v);
void mn_prof_i64(struct mn_prof *p, int64_t v);
void mn_prof_f64(struct mn_prof *p, double v);     /* shortest round-tripping decimal */
void mn_prof_bool(struct mn_prof *p, bool v);
void mn_prof_null(struct mn_prof *p);
/* A site id: written as an integer, and remembered so the profile's `sites:` table lists it. */
void mn_prof_site(struct mn_prof *p, uint32_t site);
/* The referenced site ids so far, for the backend: a bitmap of nbits, or NULL when none. */
const uint64_t *mn_prof_sites_used(const struct mn_prof *p, size_t *nbits);

#endif /* MNEMO_PROFILE_H */
