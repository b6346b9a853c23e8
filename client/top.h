/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "output.h"
#include "report-table.h"

typedef struct TopOptions {
        const char *
                target; /* as the daemon names it (a PID, NAME.service, a cgroup path); NULL: every target */
        uint32_t pid;   /* the target's PID when it names a process, else 0 */
        ProfileSort sort;
        uint64_t window_usec; /* the first window; 0: all since the attach */
        uint32_t limit;       /* rows; 0: all (batch), as many as fit (screen) */
        uint64_t delay_usec;
        uint32_t iterations; /* 0: until q, SIGINT or SIGTERM */
        bool batch;          /* refreshes on standard output instead of the full screen */
        OutputFlags flags;   /* batch only */
} TopOptions;

/* The live view: the full screen with its keys, or batch refreshes. Logs its own errors (after the screen is
 * gone); returns a negative errno after logging. */
int run_top(sd_bus *bus, const TopOptions *o);
