/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

#include "output.h"

/* report PID --by stack: the target's distinct stacks (GetStacks) in the folded format of flame graph tools,
 * one "outer;...;inner COUNT" line per stack, kernel frames suffixed "_[k]", inlined ones "_[i]"; or as JSON. limit 0: all. */
int run_report_stacks(sd_bus *bus, const char *target, uint32_t pid, uint64_t window_usec, uint32_t limit,
                      OutputFlags flags);
