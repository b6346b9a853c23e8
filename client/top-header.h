/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "top-fetch.h"

/* The phrases of top's header, the same on the screen and in batch mode. Each fills buf, cut to size. */

/* "PID 1234", "NAME.service", "cgroup /a/b", or "all targets" (those the caller may read, merged by vprofd). */
void top_header_target(char *buf, size_t size, const char *target);
/* "cpu-clock, 99 Hz" */
void top_header_event(char *buf, size_t size, const TopView *v);
/* The window the view was read for and the one its table covers: "10s (10.0 s, 12:00:00 to 12:00:10)", "all
 * since attach (...)". */
void top_header_window(char *buf, size_t size, const TopView *v);
/* The length of the window the table covers; 0 for a merge of no target, which covers nothing. */
double top_view_window_seconds(const TopView *v);
/* "0 since vprofd started, 0 in the last 10.2 s". */
void top_header_lost(char *buf, size_t size, const TopView *v);

