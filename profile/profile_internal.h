/*
 * The profile writer's extras, for the backend's leader (which copies module sections into the
 * profile event by event) and the writer's tests: not part of the writer API of profile.h, never
 * installed.
 */
#ifndef MNEMO_PROFILE_INTERNAL_H
#define MNEMO_PROFILE_INTERNAL_H

#include <stdbool.h>

#include <yaml.h>

#include "profile.h"

/* Re-emits one parser event (not stream or document events), consuming it. */
void mn_prof_emit_event(struct mn_prof *p, yaml_event_t *ev);
/* True when a string must be quoted to read back as a string. */
bool mn_prof_str_needs_quotes(const char *s);
/* The shortest round-tripping text of v, YAML float syntax; buf holds 32 bytes. */
void mn_prof_format_f64(char *buf, double v);

#endif
