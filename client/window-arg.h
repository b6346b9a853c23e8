/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* The longest window vprofctl asks for: a day, far past any WindowSeconds= the daemon keeps (it refuses what is
 * longer than its own setting, naming it). */
#define WINDOW_ARG_MAX_USEC (UINT64_C(86400) * UINT64_C(1000000))

/* --window's argument: "all" (0, everything since the attach), or a positive duration, a number with up to six
 * decimals and a unit: "us", "ms", "s" (also no unit), "m" or "min", "h"; "10s", "1m", "500ms", "1.5m". In
 * microseconds, rounded up; the daemon rounds windows up to whole seconds. -EINVAL for anything else, -ERANGE
 * for 0 or past WINDOW_ARG_MAX_USEC. */
int window_arg_parse(const char *s, uint64_t *ret_usec);
