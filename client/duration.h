/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The window of a table on the command line (--window): "all", everything since the attach, or a duration, a
 * number with up to six decimals and a unit: "10" or "10s", "5m", "1h", also "500ms" or "1.5s", rounded up to
 * whole seconds because the daemon keeps its windows in per-second buckets. */

#define DURATION_MAX_SEC (UINT64_C(31) * 86400)

/* 0 for "all", else the microseconds, from 1 s to DURATION_MAX_SEC. -EINVAL for anything else, -ERANGE for 0
 * or past the maximum. */
int duration_parse(const char *s, uint64_t *ret_usec);

/* A diff's base window (vprofctl diff --base-window, the exporter's base=): "DURATION" or "DURATION@AGO", a
 * window of DURATION (more than 0, not "all") that ends AGO (a duration, or 0) before another one ends:
 * *ret_has_ago says whether AGO was given. */
int duration_parse_at(const char *s, uint64_t *ret_window_usec, uint64_t *ret_ago_usec, bool *ret_has_ago);

/* The label of a window: "all" for 0, else whole seconds, "10s"; a part of a second is rounded down. */
void duration_format(char *buf, size_t size, uint64_t usec);
