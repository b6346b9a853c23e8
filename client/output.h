/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "bus-client-groups.h"
#include "bus-client.h"
#include "report-table.h"

/* Rendering of the decoded replies on stdout: libsmartcols tables for people, json-c objects for programs.
 * Returns a negative errno when memory or stdout fails; the caller logs. */

typedef enum OutputFlags {
        OUTPUT_JSON = 1 << 0,          /* JSON instead of a table */
        OUTPUT_JSON_ONE_LINE = 1 << 1, /* JSON on one line, for streams of objects (top) */
        OUTPUT_NO_HEADINGS = 1 << 2,   /* no column headings and no "Total samples" line */
        OUTPUT_SOURCE = 1 << 3,        /* the function tables' SOURCE column (table-schema.h's optional one) */
} OutputFlags;

/* pid 0: the table is not about one target (the "pid" key is left out). note, if not NULL, is appended to
 * the total line in parentheses. */
int output_report_table(const ReportTable *t, uint32_t pid, const char *note, OutputFlags flags);
/* A table of values (t->has_values), the columns of view (not REPORT_VIEW_SAMPLES): values in samples, or
 * in milliseconds with unit_ms. frequency converts samples to milliseconds, also for the JSON's _ms keys,
 * which are always there. pid and note as above. */
int output_values_table(const ReportTable *t, ReportView view, bool unit_ms, uint32_t frequency,
                        uint32_t pid, const char *note, OutputFlags flags);
/* The targets, then the groups (NULL: none), in one table each or one JSON object. */
int output_targets(const TargetList *l, const GroupList *groups, OutputFlags flags);
/* The groups' table (output-groups.c). */
int output_groups(const GroupList *l, OutputFlags flags);
int output_status(const DaemonStatus *s, OutputFlags flags);
