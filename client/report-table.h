/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"
#include "profile.h"

/* The client's copy of one table as the daemon returns it (GetFunctions, GetModules, GetThreads,
 * GetProcesses), plus the few operations vprofctl does itself: sorting, cutting and merging tables. Pure: no
 * bus, no output. Sort keys and percents follow common/profile.h, the daemon's own rules. */

typedef enum ReportKind {
        REPORT_FUNCTIONS,
        REPORT_MODULES,
        REPORT_THREADS,
        REPORT_PROCESSES,
        _REPORT_KIND_MAX,
} ReportKind;

typedef struct ReportRow {
        uint32_t id;  /* TID or PID; 0 for functions and modules */
        char *name;   /* function, module, thread name or command */
        char *module; /* functions only, NULL otherwise */
        uint64_t inclusive;
        uint64_t exclusive;
        double inclusive_percent;
        double exclusive_percent;
} ReportRow;

typedef struct ReportTable {
        ReportKind kind;
        uint64_t total_samples;
        ReportRow *rows;
        size_t n_rows;
        size_t n_allocated;
} ReportTable;

int report_table_new(ReportKind kind, ReportTable **ret);
ReportTable *report_table_free(ReportTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(ReportTable *, report_table_free);

/* Copies the strings. module is ignored unless the table holds functions. */
int report_table_append(ReportTable *t, uint32_t id, const char *name, const char *module,
                        uint64_t inclusive, uint64_t exclusive, double inclusive_percent,
                        double exclusive_percent);

/* Keep the first n rows; 0 keeps all. */
void report_table_truncate(ReportTable *t, size_t n);

/* Keep only the rows of this TID or PID. */
void report_table_filter_id(ReportTable *t, uint32_t id);

/* The daemon's order: descending by the key, then by the other count, then by name and module. */
void report_table_sort(ReportTable *t, ProfileSort key);

/* One function table out of several (one per target): rows with the same function and module are summed and
 * the percents recomputed against the sum of the totals. The result is sorted by name; sort it after. */
int report_tables_merge(ReportTable *const *tables, size_t n_tables, ReportTable **ret);

int report_kind_from_string(const char *s, ReportKind *ret);
