/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "macros.h"
#include "profile.h"
#include "table-schema.h"
#include "time-util.h"

/* What a module's names come from, with what may change that: "dynsym, debuginfod pending". */
static const char *format_symbols_source(const TableRow *row, char *buf, size_t size)
{
        const TableSymbols *s = row->symbols;

        if (s && s->debuginfod)
                snprintf(buf, size, "%s, debuginfod %s", s->source ?: "", s->debuginfod);
        else
                snprintf(buf, size, "%s", s && s->source ? s->source : "");
        return buf;
}

/* Of the module's own samples (exclusive counts add up) as of the same reply: the row's counts are of the reply
 * before, and the target went on meanwhile. */
static const char *format_unnamed_percent(const TableRow *row, char *buf, size_t size)
{
        const TableSymbols *s = row->symbols;

        if (s && s->samples > 0)
                snprintf(buf, size, "%.2f", profile_percent(s->unnamed_samples, s->samples));
        else
                snprintf(buf, size, "%s", s ? "-" : "");
        return buf;
}

#define STRING_COLUMN(n, h, key, w, bus, field, fl)                                                         \
        {.name = n, .heading = h, .json_key = key, .width = w, .bus_type = bus, .type = TABLE_TYPE_STRING,  \
         .offset = offsetof(TableRow, field), .flags = fl}
#define NUMBER_COLUMN(n, h, key, bus, t, w, field, fl)                                                      \
        {.name = n, .heading = h, .json_key = key, .width = w, .bus_type = bus, .type = t,                  \
         .offset = offsetof(TableRow, field), .flags = fl}

/* The name part of each kind's row: what comes before the numbers, in a table and on the bus. A function's
 * mangled name and source come from calls of their own (GetSymbolNames, GetFunctionSources): the rows' bus
 * signatures stay as they were. */
#define FUNCTION_NAME_COLUMNS                                                                               \
        STRING_COLUMN("function", "FUNCTION", "function", TABLE_WIDTH_NAME, 's', name,                      \
                      TABLE_COLUMN_MARK_INLINED),                                                           \
        STRING_COLUMN("module", "MODULE", "module", TABLE_WIDTH_SUBNAME, 's', module, 0),                   \
        /* An inlined frame's row: from the reply's last argument, not the row, whose signature stays. */     \
        NUMBER_COLUMN("inlined", "INLINED", "inlined", 0, TABLE_TYPE_BOOL, TABLE_WIDTH_TEXT, inlined,       \
                      TABLE_COLUMN_JSON_ONLY),                                                              \
        /* Only for demangled names: the symbol itself, for tools that match on it. */                      \
        STRING_COLUMN("mangled", "MANGLED", "mangled", TABLE_WIDTH_TEXT, 0, mangled,                        \
                      TABLE_COLUMN_JSON_ONLY | TABLE_COLUMN_OPTIONAL),                                      \
        STRING_COLUMN("source", "SOURCE", "source", TABLE_WIDTH_SUBNAME, 0, source, TABLE_COLUMN_OPTIONAL)
#define MODULE_NAME_COLUMNS                                                                                 \
        STRING_COLUMN("module", "MODULE", "module", TABLE_WIDTH_NAME, 's', name, 0),                        \
        {.name = "symbols-json", .heading = "SYMBOLS", .json_key = "symbols", .width = TABLE_WIDTH_TEXT,    \
         .type = TABLE_TYPE_OBJECT, .offset = offsetof(TableRow, symbols),                                  \
         .flags = TABLE_COLUMN_JSON_ONLY | TABLE_COLUMN_OPTIONAL}
#define ID_NAME_COLUMNS(id_heading, id_key, name_heading, name_key)                                         \
        NUMBER_COLUMN(id_key, id_heading, id_key, 'u', TABLE_TYPE_U32, TABLE_WIDTH_NUMBER, id, 0),          \
        STRING_COLUMN(name_key, name_heading, name_key, TABLE_WIDTH_NAME, 's', name, 0)

/* Inclusive and exclusive counts, and their percents of the table's total. */
#define COUNT_COLUMNS(incl_heading, excl_heading, incl_pct_heading, excl_pct_heading, excl_flags)           \
        NUMBER_COLUMN("inclusive", incl_heading, "inclusive", 't', TABLE_TYPE_U64, TABLE_WIDTH_NUMBER,      \
                      inclusive, TABLE_COLUMN_SORT_INCLUSIVE),                                              \
        NUMBER_COLUMN("exclusive", excl_heading, "exclusive", 't', TABLE_TYPE_U64, TABLE_WIDTH_NUMBER,      \
                      exclusive, TABLE_COLUMN_SORT_EXCLUSIVE | (excl_flags)),                               \
        NUMBER_COLUMN("inclusive-percent", incl_pct_heading, "inclusive_percent", 'd', TABLE_TYPE_DOUBLE,   \
                      TABLE_WIDTH_PERCENT, inclusive_percent, 0),                                           \
        NUMBER_COLUMN("exclusive-percent", excl_pct_heading, "exclusive_percent", 'd', TABLE_TYPE_DOUBLE,   \
                      TABLE_WIDTH_PERCENT, exclusive_percent, excl_flags)

static const TableColumn function_names[] = {FUNCTION_NAME_COLUMNS};
static const TableColumn module_names[] = {MODULE_NAME_COLUMNS};
static const TableColumn thread_names[] = {ID_NAME_COLUMNS("TID", "tid", "NAME", "name")};
static const TableColumn process_names[] = {ID_NAME_COLUMNS("PID", "pid", "COMMAND", "command")};

static const TableColumn function_columns[] = {
        FUNCTION_NAME_COLUMNS,
        COUNT_COLUMNS("INCLUSIVE", "EXCLUSIVE", "INCL%", "EXCL%", 0),
};
/* SYMBOLS (where the names come from) and UNNAMED% (of the module's samples, in frames without a name) show when
 * the table has its modules' symbols (GetModuleSymbols); JSON has them as the symbols object. */
static const TableColumn module_columns[] = {
        MODULE_NAME_COLUMNS,
        COUNT_COLUMNS("INCLUSIVE", "EXCLUSIVE", "INCL%", "EXCL%", 0),
        {.name = "symbols", .heading = "SYMBOLS", .width = TABLE_WIDTH_TEXT, .type = TABLE_TYPE_FORMAT,
         .flags = TABLE_COLUMN_TEXT_ONLY | TABLE_COLUMN_SYMBOLS, .format = format_symbols_source},
        {.name = "unnamed-percent", .heading = "UNNAMED%", .width = TABLE_WIDTH_PERCENT, .type = TABLE_TYPE_FORMAT,
         .flags = TABLE_COLUMN_TEXT_ONLY | TABLE_COLUMN_SYMBOLS, .format = format_unnamed_percent},
};
/* A thread's or process's inclusive and exclusive counts are both its samples: one column says it, JSON has
 * both. */
static const TableColumn thread_columns[] = {
        ID_NAME_COLUMNS("TID", "tid", "NAME", "name"),
        COUNT_COLUMNS("SAMPLES", "EXCLUSIVE", "PERCENT", "EXCL%", TABLE_COLUMN_JSON_ONLY),
};
static const TableColumn process_columns[] = {
        ID_NAME_COLUMNS("PID", "pid", "COMMAND", "command"),
        COUNT_COLUMNS("SAMPLES", "EXCLUSIVE", "PERCENT", "EXCL%", TABLE_COLUMN_JSON_ONLY),
};

#define VALUE_COLUMN(n, h, key, i, fl)                                                                      \
        {.name = n, .heading = h, .heading_ms = h " (ms)", .json_key = key, .json_key_ms = key "_ms",       \
         .width = TABLE_WIDTH_TIME, .bus_type = 'd', .type = TABLE_TYPE_DOUBLE,                             \
         .offset = offsetof(TableRow, values) + (i) * sizeof(double), .flags = fl}
#define PERCENT_COLUMN(n, h, key, i, fl)                                                                    \
        {.name = n, .heading = h, .json_key = key, .width = TABLE_WIDTH_PERCENT, .bus_type = 'd',           \
         .type = TABLE_TYPE_DOUBLE, .offset = offsetof(TableRow, values) + (i) * sizeof(double), .flags = fl}

/* The seed-003 values in their bus order. Headings in the seed's words, upper case like every other heading;
 * "(ms)" keeps the unit's own case. Blocked and preempted are the off-CPU parts of the elapsed inclusive value. */
static const TableColumn value_columns[TABLE_N_VALUES] = {
        VALUE_COLUMN("elapsed-inclusive", "ELAPSED INCLUSIVE", "elapsed_inclusive", 0, 0),
        VALUE_COLUMN("elapsed-exclusive", "ELAPSED EXCLUSIVE", "elapsed_exclusive", 1, TABLE_COLUMN_EXCLUSIVE),
        VALUE_COLUMN("application-inclusive", "APPLICATION INCLUSIVE", "application_inclusive", 2, 0),
        VALUE_COLUMN("application-exclusive", "APPLICATION EXCLUSIVE", "application_exclusive", 3,
                     TABLE_COLUMN_EXCLUSIVE),
        PERCENT_COLUMN("elapsed-inclusive-percent", "ELAPSED INCLUSIVE %", "elapsed_inclusive_percent", 4, 0),
        PERCENT_COLUMN("elapsed-exclusive-percent", "ELAPSED EXCLUSIVE %", "elapsed_exclusive_percent", 5,
                       TABLE_COLUMN_EXCLUSIVE),
        PERCENT_COLUMN("application-inclusive-percent", "APPLICATION INCLUSIVE %", "application_inclusive_percent",
                       6, 0),
        PERCENT_COLUMN("application-exclusive-percent", "APPLICATION EXCLUSIVE %", "application_exclusive_percent",
                       7, TABLE_COLUMN_EXCLUSIVE),
        VALUE_COLUMN("blocked", "BLOCKED", "blocked", 8, 0),
        VALUE_COLUMN("preempted", "PREEMPTED", "preempted", 9, 0),
};

/* What each view shows, in column order. Blocked and preempted are parts of the elapsed time only. */
static const unsigned elapsed_values[] = {0, 1, 4, 5, 8, 9};
static const unsigned application_values[] = {2, 3, 6, 7};
static const unsigned all_values[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

static const struct {
        const TableColumn *columns, *names;
        size_t n_columns, n_names;
        const char *name;
} kinds[_TABLE_KIND_MAX] = {
        [TABLE_FUNCTIONS] = {function_columns, function_names, ELEMENTSOF(function_columns),
                             ELEMENTSOF(function_names), "functions"},
        [TABLE_MODULES] = {module_columns, module_names, ELEMENTSOF(module_columns), ELEMENTSOF(module_names),
                           "modules"},
        [TABLE_THREADS] = {thread_columns, thread_names, ELEMENTSOF(thread_columns), ELEMENTSOF(thread_names),
                           "threads"},
        [TABLE_PROCESSES] = {process_columns, process_names, ELEMENTSOF(process_columns),
                             ELEMENTSOF(process_names), "processes"},
};

const TableColumn *table_schema_columns(TableKind kind, size_t *ret_n)
{
        if ((unsigned)kind >= _TABLE_KIND_MAX) {
                *ret_n = 0;
                return NULL;
        }
        *ret_n = kinds[kind].n_columns;
        return kinds[kind].columns;
}

const TableColumn *table_schema_name_columns(TableKind kind, size_t *ret_n)
{
        if ((unsigned)kind >= _TABLE_KIND_MAX) {
                *ret_n = 0;
                return NULL;
        }
        *ret_n = kinds[kind].n_names;
        return kinds[kind].names;
}

const TableColumn *table_schema_value_columns(size_t *ret_n)
{
        *ret_n = ELEMENTSOF(value_columns);
        return value_columns;
}

const unsigned *table_schema_view_values(TableView view, size_t *ret_n)
{
        switch (view) {
        case TABLE_VIEW_ELAPSED:
                *ret_n = ELEMENTSOF(elapsed_values);
                return elapsed_values;
        case TABLE_VIEW_APPLICATION:
                *ret_n = ELEMENTSOF(application_values);
                return application_values;
        case TABLE_VIEW_ALL:
                *ret_n = ELEMENTSOF(all_values);
                return all_values;
        default:
                *ret_n = 0;
                return NULL;
        }
}

static int append_bus_types(const TableColumn *columns, size_t n, char *buf, size_t size, size_t *len)
{
        for (size_t i = 0; i < n; i++) {
                if (!columns[i].bus_type)
                        continue;
                if (*len + 1 >= size)
                        return -ENOBUFS;
                buf[(*len)++] = columns[i].bus_type;
        }
        return 0;
}

int table_schema_row_signature(TableKind kind, TableShape shape, bool contents_only, char *buf, size_t size)
{
        size_t len = 0, n;
        const TableColumn *c;
        int r;

        if ((unsigned)kind >= _TABLE_KIND_MAX || (unsigned)shape >= _TABLE_SHAPE_MAX || size == 0)
                return -EINVAL;
        if (!contents_only) {
                if (size < 3)
                        return -ENOBUFS;
                buf[len++] = '(';
        }
        if (shape == TABLE_SAMPLING) {
                c = table_schema_columns(kind, &n);
                r = append_bus_types(c, n, buf, size, &len);
        } else {
                c = table_schema_name_columns(kind, &n);
                r = append_bus_types(c, n, buf, size, &len);
                if (r >= 0)
                        r = append_bus_types(value_columns, ELEMENTSOF(value_columns), buf, size, &len);
        }
        if (r < 0)
                return r;
        if (!contents_only) {
                if (len + 2 > size)
                        return -ENOBUFS;
                buf[len++] = ')';
        }
        buf[len] = '\0';
        return 0;
}

const TableColumn *table_schema_find(TableKind kind, const char *name)
{
        size_t n;
        const TableColumn *c = table_schema_columns(kind, &n);

        for (size_t i = 0; i < n; i++)
                if (strcmp(c[i].name, name) == 0)
                        return &c[i];
        return NULL;
}

const char *table_kind_to_string(TableKind kind)
{
        return (unsigned)kind < _TABLE_KIND_MAX ? kinds[kind].name : NULL;
}

double table_value_to_ms(double samples, uint32_t frequency)
{
        return frequency > 0 ? samples * (double)MSEC_PER_SEC / frequency : 0.0;
}

void table_row_from_profile(const ProfileRow *p, uint64_t total, TableRow *ret)
{
        *ret = (TableRow){
                .id = p->tid,
                .name = (char *)p->name,
                .module = (char *)p->module,
                .inlined = p->inlined,
                .inclusive = p->inclusive,
                .exclusive = p->exclusive,
                .inclusive_percent = profile_percent(p->inclusive, total),
                .exclusive_percent = profile_percent(p->exclusive, total),
        };
}

static const void *cell(const TableColumn *c, const TableRow *row)
{
        return (const uint8_t *)row + c->offset;
}

const char *table_cell_string(const TableColumn *c, const TableRow *row)
{
        return c->type == TABLE_TYPE_STRING ? *(char *const *)cell(c, row) : NULL;
}

uint64_t table_cell_u64(const TableColumn *c, const TableRow *row)
{
        if (c->type == TABLE_TYPE_U32)
                return *(const uint32_t *)cell(c, row);
        return c->type == TABLE_TYPE_U64 ? *(const uint64_t *)cell(c, row) : 0;
}

double table_cell_double(const TableColumn *c, const TableRow *row)
{
        return c->type == TABLE_TYPE_DOUBLE ? *(const double *)cell(c, row) : 0.0;
}

const char *table_cell_text(const TableColumn *c, const TableRow *row, bool unit_ms, uint32_t frequency, char *buf,
                            size_t size)
{
        double v;

        switch (c->type) {
        case TABLE_TYPE_STRING:
                /* A function both inlined and called has two rows: perf's mark tells them apart in a text table
                 * (JSON has its own key). */
                if ((c->flags & TABLE_COLUMN_MARK_INLINED) && row->inlined) {
                        snprintf(buf, size, "%s (inlined)", table_cell_string(c, row) ?: "");
                        return buf;
                }
                return table_cell_string(c, row) ?: "";
        case TABLE_TYPE_U32:
        case TABLE_TYPE_U64:
                snprintf(buf, size, "%" PRIu64, table_cell_u64(c, row));
                return buf;
        case TABLE_TYPE_DOUBLE:
                v = table_cell_double(c, row);
                if (c->width == TABLE_WIDTH_TIME)
                        snprintf(buf, size, "%.1f", unit_ms ? table_value_to_ms(v, frequency) : v);
                else
                        snprintf(buf, size, "%.2f", v);
                return buf;
        case TABLE_TYPE_FORMAT:
                return c->format(row, buf, size);
        case TABLE_TYPE_BOOL:
                return *(const bool *)cell(c, row) ? "yes" : "no";
        default:
                return "";
        }
}
