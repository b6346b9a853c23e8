/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "diff-table.h"
#include "output.h"

/* vprofctl diff: what changed between two windows of a target (or of two targets), by function, module, thread
 * or stack. */
typedef struct DiffRequest {
        const char *target;      /* the new profile's */
        const char *base_target; /* the base's: target when NULL */
        const char *base_file;   /* non-NULL: the base is this pprof file, written earlier */
        uint64_t window_usec;    /* the new window: the last so long */
        uint64_t base_window_usec;
        uint64_t base_ago_usec;  /* the base window ends so long before the newest second */
        DiffBy by;
        uint32_t limit;          /* rows, 0: all */
        OutputFlags flags;
        const char *pprof_path;  /* non-NULL: write the two windows as pprof files, not the table */
        const char *base_pprof_path;
        const char *svg_path;    /* non-NULL: write a differential flame graph, not the table */
} DiffRequest;

int run_diff(sd_bus *bus, const DiffRequest *req);

