/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

#include "report-table.h"

/* The table calls of org.vprof.Profiler1, decoded into report tables; the contract of bus-client.h (a negative
 * errno, *error set when there is a D-Bus error to show). */

/* What a table call asks for: the target as the daemon names it (a PID in decimal, NAME.service, a cgroup path;
 * for the process tables "" or NULL: every target) and the window, the last window_usec (0: since the attach).
 * The tables say the window they cover (ReportTable.window_start_usec, window_end_usec). */
typedef struct TableQuery {
        const char *target;
        uint64_t window_usec;
} TableQuery;

/* GetFunctions, GetModules, GetThreads, GetProcesses: the sampling tables. */
int bus_get_functions(sd_bus *bus, const TableQuery *q, ProfileSort sort, uint32_t limit, sd_bus_error *error,
                      ReportTable **ret);
int bus_get_modules(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret);
int bus_get_threads(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret);
int bus_get_processes(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret);

/* GetFunctionValues, GetModuleValues, GetThreadValues, GetProcessValues: tables of elapsed and application
 * values (ReportTable.has_values). sort is one of the values keys (PROFILE_SORT_ELAPSED_INCLUSIVE...). */
int bus_get_function_values(sd_bus *bus, const TableQuery *q, ProfileSort sort, uint32_t limit,
                            sd_bus_error *error, ReportTable **ret);
int bus_get_module_values(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret);
int bus_get_thread_values(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret);
int bus_get_process_values(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret);

/* The rows' array of a table reply into t (of its kind, empty), its element type the schema's
 * (table_schema_row_signature()): a sampling row is the kind's columns, a value row its name part and the ten
 * values; a function table's rows are followed by the indices of its rows of inlined frames, read too. */
int bus_read_table_rows(sd_bus_message *reply, ReportTable *t, TableShape shape, const char *method,
                        sd_bus_error *error);

/* GetSymbolNames: gives the rows of t (a function table of pid) the mangled names of their symbols. */
int bus_add_symbol_names(sd_bus *bus, const char *target, ReportTable *t, sd_bus_error *error);
/* GetFunctionSources: gives the rows of t (a function table of target) the FILE:LINE of their functions. */
int bus_add_function_sources(sd_bus *bus, const char *target, ReportTable *t, sd_bus_error *error);
/* GetModuleSymbols: gives the rows of t (the module table of pid) where their names come from. */
int bus_add_module_symbols(sd_bus *bus, const char *target, ReportTable *t, sd_bus_error *error);
