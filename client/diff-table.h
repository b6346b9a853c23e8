/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bus-client-window.h"
#include "macros.h"

/* What changed between two profiles (vprofctl diff): a base and a new one, each a window of a target's tables
 * (bus-client-window.h), by function, module, thread or stack. Pure: no bus, no output. Each row's share is its
 * inclusive count in its profile's on-CPU samples; the difference is in points (new share - base share) and in
 * CPU time per second of window, so that windows of different lengths and sampling frequencies compare. */

typedef enum DiffBy {
        DIFF_BY_FUNCTION,
        DIFF_BY_MODULE,
        DIFF_BY_THREAD,
        DIFF_BY_STACK,
        _DIFF_BY_MAX,
        _DIFF_BY_INVALID = -1,
} DiffBy;

DiffBy diff_by_from_string(const char *s);
const char *diff_by_to_string(DiffBy by);

/* One side of a row: its counts in its profile, and what they are worth. */
typedef struct DiffSide {
        uint64_t inclusive, exclusive; /* samples (a stack's or a thread's: its samples, both) */
        double percent;                /* inclusive, of the profile's on-CPU samples */
        double ms_per_second;          /* inclusive CPU time, milliseconds per second of the window */
} DiffSide;

typedef struct DiffRow {
        const char *name;   /* function, module, thread name or folded stack (outermost first); the table's */
        const char *module; /* of a function row, else NULL */
        bool inlined;       /* a function row of an inlined frame */
        uint32_t tid;       /* of a thread row (0 when threads are matched by name) */
        DiffSide base, new;
        double points;        /* new.percent - base.percent */
        double ms_per_second; /* new.ms_per_second - base.ms_per_second */
        double se_points;     /* the standard error of points, from the sampling of both sides */
        bool is_new, gone;    /* in the new profile only, in the base only */
        bool noise;           /* |points| within two standard errors: the sampling can make it */
} DiffRow;

/* What one side's profile was: its on-CPU samples, frequency and span. */
typedef struct DiffProfile {
        uint64_t total;
        uint32_t frequency;
        uint64_t start_usec, end_usec;
} DiffProfile;

typedef struct DiffTable {
        DiffBy by;
        DiffProfile base, new;
        DiffRow *rows; /* largest |points| first, then largest |ms_per_second|, then by name */
        size_t n_rows;
        char **strings; /* the folded stacks the rows name */
        size_t n_strings;
} DiffTable;

DiffTable *diff_table_free(DiffTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(DiffTable *, diff_table_free);

/* The rows of by of both sides, matched: functions by (module, name, inlined), modules by name, threads by
 * (thread ID, name) or by name alone when thread_by_name (two processes' threads), stacks by their folded
 * frames. The tables stay the caller's and must outlive *ret. */
int diff_tables(const WindowTables *base, const WindowTables *new, DiffBy by, bool thread_by_name, DiffTable **ret);
