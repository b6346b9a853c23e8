/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

/* report TARGET --format svg -o FILE: the target's flame graph over the window (0: since the attach) as an
 * interactive SVG file (client/flamegraph/). Logs its one error line. */
int run_report_svg(sd_bus *bus, const char *target, uint64_t window_usec, const char *path);
