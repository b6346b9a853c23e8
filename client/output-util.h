/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>
#include <libsmartcols.h>

#include "macros.h"
#include "output.h"
#include "report-table.h"

/* The libsmartcols and json-c plumbing shared by the output files. Negative errno on failure. */

static inline void scols_unref_tablep(struct libscols_table **tb)
{
        scols_unref_table(*tb);
}

static inline void json_object_putp(json_object **o)
{
        json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_object_putp)

typedef struct ColumnSpec {
        const char *name;
        double whint;
        int flags;
} ColumnSpec;

int table_new(const ColumnSpec *columns, size_t n_columns, OutputFlags flags, struct libscols_table **ret);
/* A schema column's heading and width (table-schema.h): names are cut on a terminal, numbers never. */
ColumnSpec column_spec_from_schema(const TableColumn *c, bool unit_ms);
/* The schema's columns of a text table: those not for JSON only, an optional one when flags ask for it, the
 * module symbols' ones when with_symbols. Fills ret (room for n) and returns how many. */
size_t table_text_columns(const TableColumn *columns, size_t n, OutputFlags flags, bool with_symbols,
                          const TableColumn **ret);
/* Sets the cells of a new line from the strings given, one per column. */
int table_add_line(struct libscols_table *tb, size_t n_cells, const char *const *cells);

/* Prints o on stdout, pretty or on one line as flags say. */
int print_json(json_object *o, OutputFlags flags);
/* Takes v, also on failure, so that callers can pass a constructor's result directly. */
int json_add(json_object *o, const char *key, json_object *v);
/* NULL adds a JSON null. */
int json_add_string(json_object *o, const char *key, const char *s);
int json_add_u64(json_object *o, const char *key, uint64_t v);
int json_add_double(json_object *o, const char *key, double v);
int json_add_bool(json_object *o, const char *key, bool v);
/* Appends v to the array a, taking it also on failure. */
int json_append(json_object *a, json_object *v);

/* "2026-11-26 05:51:28", local time, or "n/a" for 0. */
void format_timestamp(char *buf, size_t size, uint64_t usec);

/* The groups as a JSON array (output-groups.c); NULL when out of memory. l may be NULL: an empty array. */
json_object *groups_to_json(const GroupList *l);

/* {source, debug_file, build_id, debuginfod, symbols, unnamed_functions, unnamed_samples}; NULL when out of
 * memory. */
json_object *report_symbols_to_json(const ReportSymbols *s);

/* What the total line says of a table of a time window (t->window_usec > 0): " in the last 10.01 s (12:03:04
 * to 12:03:14)", the span the daemon's seconds covered, which may be shorter than the window asked (a target
 * younger than it, seconds past WindowSeconds=); "" for a table since the attach. */
void format_window(char *buf, size_t size, const ReportTable *t);
/* "window": {"asked", "asked_usec", "start_usec", "end_usec", "seconds"}, the window asked for and the span the
 * table counts (CLOCK_REALTIME microseconds), when the daemon gave one; as top -J's. */
int json_add_window(json_object *o, const ReportTable *t);
/* The object that report -J prints for a table of sampling counts: {pid, total_samples, functions: [...]}, the
 * rows' key named after the table's kind; pid left out when 0. */
int report_table_to_json(const ReportTable *t, uint32_t pid, json_object **ret);

/* The naming keys of a row of kind: function and module, module, tid and name, or pid and command, and the
 * optional ones the row has (mangled, source, symbols): the schema's name columns. */
int json_add_row_name(json_object *o, ReportKind kind, const ReportRow *row);
/* The key of column c with row's cell: a count as an integer, a percent or value as a number, a string; an
 * optional column only when the row has it. Not for TABLE_COLUMN_TEXT_ONLY columns. */
int json_add_cell(json_object *o, const TableColumn *c, const ReportRow *row);
