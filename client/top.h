/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "output.h"
#include "report-table.h"

typedef struct TopOptions {
        const char *target; /* as the daemon names it; NULL: every target, merged here */
        uint32_t pid;       /* the target's PID when it names a process, else 0 */
        uint64_t window_usec; /* the last so long; 0: since the attach */
        ProfileSort sort;
        uint32_t limit; /* 0: all rows */
        uint64_t delay_usec;
        uint32_t iterations; /* 0: until SIGINT or SIGTERM */
        bool clear;          /* redraw in place instead of appending */
        OutputFlags flags;
} TopOptions;

/* The live function view. Logs its own errors; returns a negative errno after logging. */
int run_top(sd_bus *bus, const TopOptions *o);
