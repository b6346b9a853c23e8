/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "bus-client-tables.h"
#include "bus-client.h"
#include "bus-object.h"

/* Decodes a table reply of method. */
typedef int (*table_reader_fn)(sd_bus_message *reply, ReportKind kind, const char *method, sd_bus_error *error,
                               ReportTable **ret);

/* Calls method with the target and the window as its arguments, and reads the reply. */
static int get_table(sd_bus *bus, const char *method, ReportKind kind, const TableQuery *q, table_reader_fn read,
                     sd_bus_error *error, ReportTable **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, method, error, &reply,
                               "st", q->target ?: "", q->window_usec);
        if (r < 0)
                return r;
        r = read(reply, kind, method, error, ret);
        if (r >= 0)
                (*ret)->window_usec = q->window_usec;
        return r;
}

/* The window a table covers, which every table reply has after its totals. */
static int read_window(sd_bus_message *reply, ReportTable *t)
{
        return sd_bus_message_read(reply, "(tt)", &t->window_start_usec, &t->window_end_usec);
}

/* One row of a reply, the struct entered: the schema's columns that are on the bus row, each read into its place
 * in row (the strings stay the reply's until report_table_append_row() copies them). */
static int read_row_columns(sd_bus_message *reply, const TableColumn *c, size_t n, ReportRow *row)
{
        int r;

        for (size_t i = 0; i < n; i++) {
                if (!c[i].bus_type)
                        continue;
                r = sd_bus_message_read_basic(reply, c[i].bus_type, (uint8_t *)row + c[i].offset);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A function table's last argument: the indices of its rows of inlined frames (absent from a vprofd without them). */
static void mark_inlined_row(uint32_t index, void *userdata)
{
        ReportTable *t = userdata;

        t->rows[index].inlined = true;
}

int bus_read_table_rows(sd_bus_message *reply, ReportTable *t, TableShape shape, const char *method,
                        sd_bus_error *error)
{
        char sig[64], contents[64];
        const TableColumn *names, *values;
        size_t n_names, n_values = 0;
        int r;

        r = table_schema_row_signature((TableKind)t->kind, shape, false, sig, sizeof(sig));
        if (r >= 0)
                r = table_schema_row_signature((TableKind)t->kind, shape, true, contents, sizeof(contents));
        if (r < 0)
                return r;
        if (shape == TABLE_SAMPLING) {
                names = table_schema_columns((TableKind)t->kind, &n_names);
                values = NULL;
        } else {
                names = table_schema_name_columns((TableKind)t->kind, &n_names);
                values = table_schema_value_columns(&n_values);
        }

        r = sd_bus_message_enter_container(reply, 'a', sig);
        if (r < 0)
                return bus_bad_reply(error, method, r);
        while ((r = sd_bus_message_enter_container(reply, 'r', contents)) > 0) {
                ReportRow row = {};

                r = read_row_columns(reply, names, n_names, &row);
                if (r >= 0)
                        r = read_row_columns(reply, values, n_values, &row);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return bus_bad_reply(error, method, r);
                r = report_table_append_row(t, &row);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return bus_bad_reply(error, method, r);
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return bus_bad_reply(error, method, r);
        if (t->kind == REPORT_FUNCTIONS) {
                r = bus_read_trailing_indices(reply, t->n_rows, mark_inlined_row, t);
                if (r < 0)
                        return bus_bad_reply(error, method, r);
        }
        return 0;
}

/* The four sampling methods share one reply shape: the total, the window, then the rows. */
static int read_table(sd_bus_message *reply, ReportKind kind, const char *method, sd_bus_error *error,
                      ReportTable **ret)
{
        _cleanup_(report_table_freep) ReportTable *t = NULL;
        int r;

        r = report_table_new(kind, &t);
        if (r < 0)
                return r;

        r = sd_bus_message_read(reply, "t", &t->total_samples);
        if (r >= 0)
                r = read_window(reply, t);
        if (r < 0)
                return bus_bad_reply(error, method, r);
        r = bus_read_table_rows(reply, t, TABLE_SAMPLING, method, error);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(t);
        return 0;
}

int bus_get_functions(sd_bus *bus, const TableQuery *q, ProfileSort sort, uint32_t limit, sd_bus_error *error,
                      ReportTable **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, "GetFunctions",
                               error, &reply, "ssut", q->target, profile_sort_to_string(sort), limit,
                               q->window_usec);
        if (r < 0)
                return r;
        r = read_table(reply, REPORT_FUNCTIONS, "GetFunctions", error, ret);
        if (r >= 0)
                (*ret)->window_usec = q->window_usec;
        return r;
}

int bus_get_modules(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret)
{
        return get_table(bus, "GetModules", REPORT_MODULES, q, read_table, error, ret);
}

int bus_get_threads(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret)
{
        return get_table(bus, "GetThreads", REPORT_THREADS, q, read_table, error, ret);
}

int bus_get_processes(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret)
{
        return get_table(bus, "GetProcesses", REPORT_PROCESSES, q, read_table, error, ret);
}

/* GetSymbolNames and GetFunctionSources: (module, function, text) rows, each given to the table's rows by set. */
static int add_function_texts(sd_bus *bus, const char *method, const char *target, ReportTable *t,
                              int (*set)(ReportTable *t, const char *module, const char *function, const char *text),
                              sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, method, error, &reply,
                               "s", target);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "(sss)");
        if (r < 0)
                return bus_bad_reply(error, method, r);
        for (;;) {
                const char *module, *function, *text;

                r = sd_bus_message_read(reply, "(sss)", &module, &function, &text);
                if (r < 0)
                        return bus_bad_reply(error, method, r);
                if (r == 0)
                        break;
                r = set(t, module, function, text);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return bus_bad_reply(error, method, r);
        return 0;
}

int bus_add_symbol_names(sd_bus *bus, const char *target, ReportTable *t, sd_bus_error *error)
{
        return add_function_texts(bus, "GetSymbolNames", target, t, report_table_set_mangled, error);
}

int bus_add_function_sources(sd_bus *bus, const char *target, ReportTable *t, sd_bus_error *error)
{
        return add_function_texts(bus, "GetFunctionSources", target, t, report_table_set_source, error);
}

/* The four value methods share one reply shape: the elapsed and application totals, the window, then the
 * rows. */
static int read_values_table(sd_bus_message *reply, ReportKind kind, const char *method, sd_bus_error *error,
                             ReportTable **ret)
{
        _cleanup_(report_table_freep) ReportTable *t = NULL;
        int r;

        r = report_table_new_values(kind, &t);
        if (r < 0)
                return r;

        r = sd_bus_message_read(reply, "dd", &t->elapsed_total, &t->application_total);
        if (r >= 0)
                r = read_window(reply, t);
        if (r < 0)
                return bus_bad_reply(error, method, r);
        r = bus_read_table_rows(reply, t, TABLE_VALUES, method, error);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(t);
        return 0;
}

int bus_get_function_values(sd_bus *bus, const TableQuery *q, ProfileSort sort, uint32_t limit,
                            sd_bus_error *error, ReportTable **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, "GetFunctionValues",
                               error, &reply, "ssut", q->target, profile_sort_to_string(sort), limit,
                               q->window_usec);
        if (r < 0)
                return r;
        r = read_values_table(reply, REPORT_FUNCTIONS, "GetFunctionValues", error, ret);
        if (r >= 0)
                (*ret)->window_usec = q->window_usec;
        return r;
}

int bus_get_module_values(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret)
{
        return get_table(bus, "GetModuleValues", REPORT_MODULES, q, read_values_table, error, ret);
}

int bus_get_thread_values(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret)
{
        return get_table(bus, "GetThreadValues", REPORT_THREADS, q, read_values_table, error, ret);
}

int bus_get_process_values(sd_bus *bus, const TableQuery *q, sd_bus_error *error, ReportTable **ret)
{
        return get_table(bus, "GetProcessValues", REPORT_PROCESSES, q, read_values_table, error, ret);
}

/* One dictionary entry; the strings stay the reply's. Unknown keys are skipped. */
static int read_symbols_entry(sd_bus_message *m, const char *key, void *userdata)
{
        ReportSymbols *s = userdata;

        if (strcmp(key, "source") == 0)
                return sd_bus_message_read(m, "v", "s", &s->source);
        if (strcmp(key, "debug_file") == 0)
                return sd_bus_message_read(m, "v", "s", &s->debug_file);
        if (strcmp(key, "build_id") == 0)
                return sd_bus_message_read(m, "v", "s", &s->build_id);
        if (strcmp(key, "debuginfod") == 0)
                return sd_bus_message_read(m, "v", "s", &s->debuginfod);
        if (strcmp(key, "symbols") == 0)
                return sd_bus_message_read(m, "v", "t", &s->symbols);
        if (strcmp(key, "unnamed_functions") == 0)
                return sd_bus_message_read(m, "v", "u", &s->unnamed_functions);
        if (strcmp(key, "unnamed_samples") == 0)
                return sd_bus_message_read(m, "v", "t", &s->unnamed_samples);
        if (strcmp(key, "samples") == 0)
                return sd_bus_message_read(m, "v", "t", &s->samples);
        if (strcmp(key, "load_usec") == 0)
                return sd_bus_message_read(m, "v", "t", &s->load_usec);
        return sd_bus_message_skip(m, "v");
}

static int read_module(sd_bus_message *m, ReportTable *t)
{
        ReportSymbols s = {};
        const char *module;
        int r;

        r = sd_bus_message_read(m, "s", &module);
        if (r < 0)
                return r;
        r = bus_read_dict(m, read_symbols_entry, &s);
        if (r < 0)
                return r;
        /* report_table_set_symbols() copies: the strings here are the reply's. */
        return report_table_set_symbols(t, module, &s);
}

int bus_add_module_symbols(sd_bus *bus, const char *target, ReportTable *t, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, "GetModuleSymbols", error,
                               &reply, "s", target);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "(sa{sv})");
        if (r < 0)
                return bus_bad_reply(error, "GetModuleSymbols", r);
        while ((r = sd_bus_message_enter_container(reply, 'r', "sa{sv}")) > 0) {
                r = read_module(reply, t);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return bus_bad_reply(error, "GetModuleSymbols", r);
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return bus_bad_reply(error, "GetModuleSymbols", r);
        }
        return r < 0 ? bus_bad_reply(error, "GetModuleSymbols", r) : 0;
}
