/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "output-util.h"
#include "output.h"

/* The seed-003 tables: elapsed and application values, their percents and the off-CPU parts. */

/* The columns come from table-schema.h: the name part of each kind's row, then the values its view shows. */

static const unsigned *view_values(ReportView view, size_t *ret_n)
{
        return table_schema_view_values((TableView)(view - REPORT_VIEW_ELAPSED), ret_n);
}

static void format_total(char *buf, size_t size, double total, bool unit_ms, uint32_t frequency)
{
        if (unit_ms)
                snprintf(buf, size, "%.1f ms", report_value_to_ms(total, frequency));
        else
                snprintf(buf, size, "%.1f samples", total);
}

static void print_totals(const ReportTable *t, ReportView view, bool unit_ms, uint32_t frequency,
                         const char *note)
{
        char elapsed[64], application[64], window[128];

        format_total(elapsed, sizeof(elapsed), t->elapsed_total, unit_ms, frequency);
        format_total(application, sizeof(application), t->application_total, unit_ms, frequency);
        format_window(window, sizeof(window), t);
        if (view == REPORT_VIEW_ELAPSED)
                printf("Elapsed total: %s", elapsed);
        else if (view == REPORT_VIEW_APPLICATION)
                printf("Application total: %s", application);
        else
                printf("Elapsed total: %s, application total: %s", elapsed, application);
        fputs(window, stdout);
        if (note)
                printf(" (%s)", note);
        putchar('\n');
}

static int values_row_to_json(ReportKind kind, ReportView view, const ReportRow *row, uint32_t frequency,
                              json_object **ret)
{
        _cleanup_json_ json_object *o = NULL;
        const TableColumn *values;
        const unsigned *shown;
        size_t n_values, n;
        int r;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;

        values = table_schema_value_columns(&n_values);
        shown = view_values(view, &n);
        r = json_add_row_name(o, kind, row);
        /* Every key of the view, whatever the table leaves out, and both units. */
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = json_add_cell(o, &values[shown[i]], row);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const TableColumn *c = &values[shown[i]];

                if (c->json_key_ms)
                        r = json_add_double(o, c->json_key_ms,
                                            report_value_to_ms(table_cell_double(c, row), frequency));
        }
        if (r < 0)
                return r;

        *ret = TAKE_PTR(o);
        return 0;
}

static int values_table_json(const ReportTable *t, ReportView view, uint32_t frequency, uint32_t pid,
                             OutputFlags flags)
{
        _cleanup_json_ json_object *o = NULL;
        json_object *rows;
        int r = 0;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        if (pid > 0)
                r = json_add_u64(o, "pid", pid);
        if (r >= 0)
                r = json_add_u64(o, "frequency", frequency);
        if (r >= 0)
                r = json_add_window(o, t);
        if (r >= 0 && view != REPORT_VIEW_APPLICATION) {
                r = json_add_double(o, "elapsed_total", t->elapsed_total);
                if (r >= 0)
                        r = json_add_double(o, "elapsed_total_ms",
                                            report_value_to_ms(t->elapsed_total, frequency));
        }
        if (r >= 0 && view != REPORT_VIEW_ELAPSED) {
                r = json_add_double(o, "application_total", t->application_total);
                if (r >= 0)
                        r = json_add_double(o, "application_total_ms",
                                            report_value_to_ms(t->application_total, frequency));
        }
        if (r < 0)
                return r;
        rows = json_object_new_array_ext((int)MIN(t->n_rows, (size_t)INT32_MAX));
        r = json_add(o, table_kind_to_string((TableKind)t->kind), rows);
        if (r < 0)
                return r;

        for (size_t i = 0; i < t->n_rows; i++) {
                json_object *row = NULL;

                r = values_row_to_json(t->kind, view, &t->rows[i], frequency, &row);
                if (r < 0)
                        return r;
                r = json_append(rows, row);
                if (r < 0)
                        return r;
        }

        return print_json(o, flags);
}

int output_values_table(const ReportTable *t, ReportView view, bool unit_ms, uint32_t frequency,
                        uint32_t pid, const char *note, OutputFlags flags)
{
        _cleanup_(scols_unref_tablep) struct libscols_table *tb = NULL;
        const TableColumn *names, *values, *shown[16 + TABLE_N_VALUES];
        ColumnSpec columns[ELEMENTSOF(shown)];
        const unsigned *view_shown;
        size_t n_names, n_values, n_view, n = 0;
        bool one_value;
        int r;

        if (!t->has_values || t->kind >= _REPORT_KIND_MAX || view == REPORT_VIEW_SAMPLES ||
            view >= _REPORT_VIEW_MAX)
                return -EINVAL;
        if (flags & OUTPUT_JSON)
                return values_table_json(t, view, frequency, pid, flags);

        names = table_schema_name_columns((TableKind)t->kind, &n_names);
        values = table_schema_value_columns(&n_values);
        view_shown = view_values(view, &n_view);
        if (!names || n_names > 16)
                return -EINVAL;
        n = table_text_columns(names, n_names, flags, false, shown);
        /* A thread's or process's exclusive values are its inclusive ones: its columns say it once. */
        one_value = IN_SET(t->kind, REPORT_THREADS, REPORT_PROCESSES);
        for (size_t i = 0; i < n_view; i++)
                if (!(one_value && (values[view_shown[i]].flags & TABLE_COLUMN_EXCLUSIVE)))
                        shown[n++] = &values[view_shown[i]];
        for (size_t i = 0; i < n; i++)
                columns[i] = column_spec_from_schema(shown[i], unit_ms);

        r = table_new(columns, n, flags, &tb);
        if (r < 0)
                return r;

        for (size_t i = 0; i < t->n_rows; i++) {
                char text[ELEMENTSOF(shown)][1024];
                const char *cells[ELEMENTSOF(shown)];

                for (size_t j = 0; j < n; j++)
                        cells[j] = table_cell_text(shown[j], &t->rows[i], unit_ms, frequency, text[j],
                                                   sizeof(text[j]));
                r = table_add_line(tb, n, cells);
                if (r < 0)
                        return r;
        }

        if (!(flags & OUTPUT_NO_HEADINGS))
                print_totals(t, view, unit_ms, frequency, note);
        return scols_print_table(tb);
}
