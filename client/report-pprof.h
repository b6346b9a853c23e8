/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

/* vprofctl report TARGET --format pprof -o PATH: the pprof file of target over the window (0: since the attach),
 * written to path atomically (a temporary file renamed over it), or to standard output for "-" when it is not a
 * terminal. Logs its own one-line errors; returns a negative errno after logging. */
int run_report_pprof(sd_bus *bus, const char *target, uint64_t window_usec, const char *path);
