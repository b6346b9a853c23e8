/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

#include "bus-client-stacks.h"
#include "report-table.h"

/* GetWindowTables decoded: a target's tables over one window that may end before now (a diff's base or new
 * side); the contract of bus-client.h. */

typedef struct WindowTables {
        uint32_t frequency; /* of the counts: a sample is 1/frequency s of CPU time */
        uint64_t window_usec, until_usec; /* as asked */
        ReportTable *functions, *modules, *threads; /* each with the window's total and span */
        StackTable *stacks;
} WindowTables;

void window_tables_done(WindowTables *t);

/* The seconds of window_usec of target that end no later than until_usec (CLOCK_REALTIME; 0: up to the newest);
 * limit: of the stacks, 0 for all. */
int bus_get_window_tables(sd_bus *bus, const char *target, uint64_t window_usec, uint64_t until_usec,
                          uint32_t limit, sd_bus_error *error, WindowTables *ret);
