/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "output.h"
#include "report-table.h"

typedef struct ReportOptions {
        const char *target; /* as the daemon names it (bus-client-tables.h); NULL: every target (functions
                             * merged, or the process table) */
        uint32_t pid;       /* the target's PID when it names a process, else 0 */
        uint64_t window_usec; /* the last so long; 0: since the attach */
        ReportKind by;
        ReportView view;
        ProfileSort sort; /* a key of the view, as report_view_sort_key() gives it */
        bool sort_given;  /* for the sampling view: re-sort the tables the daemon returns in its own order */
        uint32_t limit;   /* 0: all rows */
        bool unit_ms;     /* values in milliseconds rather than samples */
        OutputFlags flags;
} ReportOptions;

/* The report verb, once its arguments are checked. Logs its own errors; returns a negative errno after
 * logging. */
int run_report(sd_bus *bus, const ReportOptions *o);
