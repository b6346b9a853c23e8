/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "profile.h"
#include "query.h"
#include "table-schema.h"

/* The rows of the table replies (GetFunctions, GetModules, GetThreads, GetProcesses and their *Values twins),
 * marshaled from a Query by the table schema (common/profile/table-schema.h, bus-table-row.h): each row's
 * columns and their order are the schema's. The macros below spell the same signatures at compile time for the
 * vtable (bus.c); tests/unit/test-table-schema.c checks the schema against the interface XML, and the lint test
 * man-interface-matches-xml the XML against the vtable, so the three cannot drift apart. */

/* The name part of each kind of row, then the numbers of a sampling row (inclusive, exclusive, their percents)
 * or of a values row (ten values, see append_values_row()). */
#define ROW_FUNCTION_NAME "ss" /* function, module */
#define ROW_MODULE_NAME "s"    /* module */
#define ROW_ID_NAME "us"       /* thread or process ID, name */
#define ROW_SAMPLING_NUMBERS "ttdd"
#define ROW_VALUES_NUMBERS "dddddddddd"

/* The array signatures of the replies, for the vtable. */
#define ROWS_SAMPLING(name) "a(" name ROW_SAMPLING_NUMBERS ")"
#define ROWS_VALUES(name) "a(" name ROW_VALUES_NUMBERS ")"


/* Appends a sampling table's rows, "a(...ttdd)" with their percents of total, and for a function table the
 * indices of its rows of inlined frames, "au". */
int bus_append_sampling_rows(sd_bus_message *reply, TableKind kind, uint64_t total, const ProfileRow *rows,
                             size_t n);

/* Sends a sampling table: "t(tt)a(...ttdd)", the view's total and span, then rows with their percents of the
 * total. */
int reply_sampling_rows(sd_bus_message *msg, TableKind kind, const Query *q, const ProfileRow *rows, size_t n);

/* Sends a values table: "dd(tt)a(...dddddddddd)", the view's elapsed and application totals and span, then the
 * rows' values, in periods of unit_frequency (the daemon's Frequency). */
int reply_values_rows(sd_bus_message *msg, TableKind kind, const Query *q, uint32_t unit_frequency,
                      const ProfileRow *rows, size_t n);

/* The process tables, one row a target from the query's totals (QUERY_TOTALS), busiest first: sampling counts,
 * or values in periods of unit_frequency. */
int reply_process_rows(sd_bus_message *msg, const Query *q);
int reply_process_values(sd_bus_message *msg, const Query *q, uint32_t unit_frequency);
