/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* The columns of the four tables (functions, modules, threads, processes), said once: for each its name (for
 * --columns and the man page), heading, JSON key, width class, its type in the bus reply's row and where its
 * cell is in the decoded row. vprofctl's tables, its JSON and top's screen are made from it, the bus rows'
 * signatures too, and tests check the interface XML and vprofctl(1) against it. A new column is a field of
 * TableRow, an entry here, the daemon's marshaling of it, and a line of the man page. Pure data and
 * formatting: no bus, no output. */

typedef enum TableKind {
        TABLE_FUNCTIONS,
        TABLE_MODULES,
        TABLE_THREADS,
        TABLE_PROCESSES,
        _TABLE_KIND_MAX,
} TableKind;

/* What a table counts: the sampling counts (GetFunctions...) or the elapsed and application values
 * (GetFunctionValues...). */
typedef enum TableShape {
        TABLE_SAMPLING,
        TABLE_VALUES,
        _TABLE_SHAPE_MAX,
} TableShape;

/* The values views: which of the ten values a value table shows. */
typedef enum TableView {
        TABLE_VIEW_ELAPSED,
        TABLE_VIEW_APPLICATION,
        TABLE_VIEW_ALL,
        _TABLE_VIEW_MAX,
} TableView;

/* The ten values of a value table's row, in their order on the bus (client/report-table.h's ReportValue). */
#define TABLE_N_VALUES 10

/* How a column takes the width of a terminal. */
typedef enum TableWidth {
        TABLE_WIDTH_NAME,    /* the row's name: cut to fit, gets what the others leave */
        TABLE_WIDTH_SUBNAME, /* a second name (a function's module): cut to fit, a smaller share */
        TABLE_WIDTH_TEXT,    /* a short word, never cut, left-aligned */
        TABLE_WIDTH_NUMBER,  /* an ID or a count, right-aligned, never cut */
        TABLE_WIDTH_PERCENT, /* two decimals, right-aligned */
        TABLE_WIDTH_TIME,    /* a value in samples or milliseconds, one decimal, right-aligned */
} TableWidth;

typedef enum TableType {
        TABLE_TYPE_STRING, /* const char *: NULL shows as "" */
        TABLE_TYPE_U32,
        TABLE_TYPE_U64,
        TABLE_TYPE_DOUBLE,
        TABLE_TYPE_FORMAT, /* the cell is made by the column's format() */
        TABLE_TYPE_OBJECT, /* JSON only: an object the output makes (a module's symbols) */
        TABLE_TYPE_BOOL,   /* bool: JSON true or false; "yes" or "no" in a text table */
} TableType;

typedef enum TableColumnFlags {
        TABLE_COLUMN_JSON_ONLY = 1 << 0, /* not a column of the text table (a thread's exclusive count) */
        TABLE_COLUMN_TEXT_ONLY = 1 << 1, /* not a key of the JSON rows */
        TABLE_COLUMN_OPTIONAL = 1 << 2,  /* in the text table when asked for; in JSON when set and not empty */
        TABLE_COLUMN_SYMBOLS = 1 << 3,   /* shown when the table has its modules' symbols (GetModuleSymbols) */
        TABLE_COLUMN_EXCLUSIVE = 1 << 4, /* an exclusive value: a thread's or process's equals its inclusive one */
        TABLE_COLUMN_SORT_INCLUSIVE = 1 << 5, /* the column top underlines when sorted by inclusive */
        TABLE_COLUMN_SORT_EXCLUSIVE = 1 << 6,
        TABLE_COLUMN_MARK_INLINED = 1 << 7, /* the text says "(inlined)" after an inlined frame's name */
} TableColumnFlags;

/* Where a module's names come from (GetModuleSymbols). */
typedef struct TableSymbols {
        char *source;     /* symtab, dynsym, minidebuginfo, debuglink, build-id, debuginfod, none, kallsyms, vdso,
                           * perf-map */
        char *debug_file; /* NULL when none was used */
        char *build_id;   /* NULL when unknown */
        char *debuginfod; /* pending, failed: the download of its debug file; NULL when none */
        uint64_t symbols;
        uint32_t unnamed_functions;
        uint64_t unnamed_samples;
        uint64_t samples; /* the module's exclusive count in the same reply: what unnamed_samples is a part of */
        uint64_t load_usec; /* the daemon's time to read the file's symbols and CFI, once for all targets */
} TableSymbols;

/* A table's row as a reply decodes it; the strings belong to whoever holds the table (client/report-table.h). */
typedef struct TableRow {
        uint32_t id;        /* TID or PID; 0 for functions and modules */
        char *name;         /* function, module, thread name or command */
        char *module;       /* functions only, NULL otherwise */
        char *mangled;      /* functions: the symbol behind a demangled name (GetSymbolNames), else NULL */
        char *source;       /* functions: FILE:LINE of the function's entry (GetFunctionSources), else NULL */
        bool inlined;       /* functions: an inlined frame, a row apart from the same function called (the
                             * replies' argument "inlined") */
        TableSymbols *symbols; /* modules: their names' quality (GetModuleSymbols), else NULL */
        uint64_t inclusive; /* tables of sampling counts */
        uint64_t exclusive;
        double inclusive_percent;
        double exclusive_percent;
        double values[TABLE_N_VALUES]; /* tables of values */
} TableRow;

typedef struct TableColumn TableColumn;
struct TableColumn {
        const char *name;       /* lower case, unique in its table: what --columns takes */
        const char *heading;    /* of the text table and top */
        const char *heading_ms; /* a value's heading in milliseconds; NULL for a column without a unit */
        const char *json_key;
        const char *json_key_ms; /* a value's twin in milliseconds */
        TableWidth width;
        char bus_type; /* its D-Bus type in the reply's row; 0 for a column not on the row */
        TableType type;
        size_t offset; /* the getter: where the cell is in TableRow */
        unsigned flags; /* TableColumnFlags */
        /* TABLE_TYPE_FORMAT: writes the cell into buf, or returns a string of row; "" for none. */
        const char *(*format)(const TableRow *row, char *buf, size_t size);
};

/* The columns of a sampling table of kind, in the order of the text table, the JSON keys and the bus row. */
const TableColumn *table_schema_columns(TableKind kind, size_t *ret_n);
/* The name part of a value table's row of kind (its first columns), and the ten values in bus order. */
const TableColumn *table_schema_name_columns(TableKind kind, size_t *ret_n);
const TableColumn *table_schema_value_columns(size_t *ret_n);
/* The values a view shows, as indexes into table_schema_value_columns(), in the order of its columns. */
const unsigned *table_schema_view_values(TableView view, size_t *ret_n);

/* The D-Bus signature of a row of kind and shape, "(ssttdd)"; with contents_only the same without the
 * parentheses, for sd_bus_message_open_container(). -ENOBUFS when size is too small, -EINVAL. */
int table_schema_row_signature(TableKind kind, TableShape shape, bool contents_only, char *buf, size_t size);

/* The column of a sampling table of kind named name; NULL if none. */
const TableColumn *table_schema_find(TableKind kind, const char *name);

/* "functions", "modules", "threads", "processes": the key of the rows' array in JSON, and the kind's name. */
const char *table_kind_to_string(TableKind kind);

/* A value in samples as milliseconds, one sample being 1/frequency s; 0 when the frequency is unknown (0). */
double table_value_to_ms(double samples, uint32_t frequency);

/* The text of row's cell of column c: the string itself, or buf with the number formatted (counts as
 * integers, percents with two decimals, values with one, in milliseconds when unit_ms). Never NULL. */
const char *table_cell_text(const TableColumn *c, const TableRow *row, bool unit_ms, uint32_t frequency, char *buf,
                            size_t size);

/* The sampling part of a daemon's row: name, module and ID (a thread row's TID, a process row's PID) borrowed
 * from p, the counts, and their percents of total. The values and the optional columns are left 0 and NULL. */
void table_row_from_profile(const ProfileRow *p, uint64_t total, TableRow *ret);

/* Typed getters: the cell at c->offset. */
const char *table_cell_string(const TableColumn *c, const TableRow *row);
uint64_t table_cell_u64(const TableColumn *c, const TableRow *row); /* U32 and U64 */
double table_cell_double(const TableColumn *c, const TableRow *row);

static inline bool table_column_is_name(const TableColumn *c)
{
        return c->width == TABLE_WIDTH_NAME || c->width == TABLE_WIDTH_SUBNAME;
}
