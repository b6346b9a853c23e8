/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"
#include "profile.h"
#include "table-schema.h"

/* The client's copy of one table as the daemon returns it (GetFunctions, GetModules, GetThreads,
 * GetProcesses, or their *Values twins), plus the few operations vprofctl does itself: sorting and cutting
 * (vprofd merges tables). Pure: no bus, no output. Sort keys follow common/profile/profile.h, and percents the
 * rules of docs/COUNTING.md, as the daemon's do. */

typedef enum ReportKind {
        REPORT_FUNCTIONS,
        REPORT_MODULES,
        REPORT_THREADS,
        REPORT_PROCESSES,
        REPORT_STACKS, /* not a table: report-stacks.h */
        _REPORT_KIND_MAX,
} ReportKind;

/* What a report shows: the sampling counts (seed 004) or the elapsed and application values (seed 003), one
 * kind of them or both. */
typedef enum ReportView {
        REPORT_VIEW_SAMPLES,
        REPORT_VIEW_ELAPSED,
        REPORT_VIEW_APPLICATION,
        REPORT_VIEW_ALL,
        _REPORT_VIEW_MAX,
} ReportView;

/* The seed-003 numbers of a row, in the order of the *Values replies. Values are in samples (sample periods
 * of 1/Frequency seconds, fractional), percents in percent; blocked and preempted are the off-CPU parts of
 * the elapsed inclusive value. */
typedef enum ReportValue {
        REPORT_VALUE_ELAPSED_INCLUSIVE,
        REPORT_VALUE_ELAPSED_EXCLUSIVE,
        REPORT_VALUE_APPLICATION_INCLUSIVE,
        REPORT_VALUE_APPLICATION_EXCLUSIVE,
        REPORT_VALUE_ELAPSED_INCLUSIVE_PERCENT,
        REPORT_VALUE_ELAPSED_EXCLUSIVE_PERCENT,
        REPORT_VALUE_APPLICATION_INCLUSIVE_PERCENT,
        REPORT_VALUE_APPLICATION_EXCLUSIVE_PERCENT,
        REPORT_VALUE_BLOCKED,
        REPORT_VALUE_PREEMPTED,
        _REPORT_VALUE_MAX,
} ReportValue;

/* A row and its modules' symbols, as common/profile/table-schema.h decodes them: the schema's getters read
 * them. The strings and the symbols belong to the table. */
typedef TableSymbols ReportSymbols;
typedef TableRow ReportRow;
_Static_assert(_REPORT_VALUE_MAX == TABLE_N_VALUES, "a row's values are the schema's");
_Static_assert((int)REPORT_FUNCTIONS == (int)TABLE_FUNCTIONS && (int)REPORT_PROCESSES == (int)TABLE_PROCESSES,
               "the report kinds are the schema's");
_Static_assert((int)REPORT_VIEW_ALL - 1 == (int)TABLE_VIEW_ALL, "a values view is the schema's, one after");

typedef struct ReportTable {
        ReportKind kind;
        bool has_values; /* rows carry values[], not the sampling counts */
        uint64_t total_samples;
        double elapsed_total; /* the session's elapsed inclusive value: the elapsed percents' denominator */
        double application_total; /* and its application inclusive value, the application percents' */
        uint64_t window_start_usec; /* CLOCK_REALTIME: the span the daemon's tables counted */
        uint64_t window_end_usec;
        uint64_t window_usec;       /* the window asked for: the last so long; 0: since the attach */
        ReportRow *rows;
        size_t n_rows;
        size_t n_allocated;
} ReportTable;

int report_table_new(ReportKind kind, ReportTable **ret);
int report_table_new_values(ReportKind kind, ReportTable **ret);
ReportTable *report_table_free(ReportTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(ReportTable *, report_table_free);

/* A copy of row, its strings copied (module only in a function table); row->symbols must be NULL. */
int report_table_append_row(ReportTable *t, const ReportRow *row);
/* Copies the strings. module is ignored unless the table holds functions. */
int report_table_append(ReportTable *t, uint32_t id, const char *name, const char *module,
                        uint64_t inclusive, uint64_t exclusive, double inclusive_percent,
                        double exclusive_percent);
/* The same for a table of values; values[] in ReportValue order. */
int report_table_append_values(ReportTable *t, uint32_t id, const char *name, const char *module,
                               const double values[static _REPORT_VALUE_MAX]);

/* Gives the function rows of (module, function) their symbol's mangled name. */
int report_table_set_mangled(ReportTable *t, const char *module, const char *function, const char *mangled);
/* Gives the function rows of (module, function) their source, FILE:LINE (GetFunctionSources); "" sets none. */
int report_table_set_source(ReportTable *t, const char *module, const char *function, const char *source);
/* Gives the module row of module a copy of s. */
int report_table_set_symbols(ReportTable *t, const char *module, const ReportSymbols *s);

/* Keep the first n rows; 0 keeps all. */
void report_table_truncate(ReportTable *t, size_t n);

/* Keep only the rows of this TID or PID. */
void report_table_filter_id(ReportTable *t, uint32_t id);

/* Keep only the rows of a table of values whose value is above 0. */
void report_table_filter_positive(ReportTable *t, ReportValue value);

/* The daemon's order: descending by the key, then by the other value of its kind (inclusive with exclusive),
 * then by name and module. A sampling key sorts by the counts, a values key (elapsed-inclusive...) by
 * values[]. */
void report_table_sort(ReportTable *t, ProfileSort key);

int report_kind_from_string(const char *s, ReportKind *ret);
int report_view_from_string(const char *s, ReportView *ret);

/* The key a table of view is sorted by, from the key asked for: inclusive and exclusive name the view's own
 * values (the elapsed ones for "all"); a full key (elapsed-inclusive...) must name values the view shows.
 * -EINVAL otherwise: the sampling view takes inclusive and exclusive only, elapsed takes no application-*
 * key, application no elapsed-* key. */
int report_view_sort_key(ReportView view, ProfileSort key, ProfileSort *ret);

/* Values are in samples, one sample period being 1/frequency seconds. 0 when the frequency is unknown (0).
 */
double report_value_to_ms(double samples, uint32_t frequency);
