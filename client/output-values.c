/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "output-util.h"
#include "output.h"

/* The seed-003 tables: elapsed and application values, their percents and the off-CPU parts. */

/* Headings in the seed's words, upper case like every other heading; "(ms)" keeps the unit's own case. The
 * JSON keys are the same words, and each value (not percent) has a milliseconds twin. */
typedef struct ValueInfo {
        const char *heading;
        const char *heading_ms; /* NULL for percents, which have no unit */
        const char *key;
        const char *key_ms;
} ValueInfo;

static const ValueInfo value_info[_REPORT_VALUE_MAX] = {
        [REPORT_VALUE_ELAPSED_INCLUSIVE] = {"ELAPSED INCLUSIVE", "ELAPSED INCLUSIVE (ms)",
                                            "elapsed_inclusive", "elapsed_inclusive_ms"},
        [REPORT_VALUE_ELAPSED_EXCLUSIVE] = {"ELAPSED EXCLUSIVE", "ELAPSED EXCLUSIVE (ms)",
                                            "elapsed_exclusive", "elapsed_exclusive_ms"},
        [REPORT_VALUE_APPLICATION_INCLUSIVE] = {"APPLICATION INCLUSIVE", "APPLICATION INCLUSIVE (ms)",
                                                "application_inclusive", "application_inclusive_ms"},
        [REPORT_VALUE_APPLICATION_EXCLUSIVE] = {"APPLICATION EXCLUSIVE", "APPLICATION EXCLUSIVE (ms)",
                                                "application_exclusive", "application_exclusive_ms"},
        [REPORT_VALUE_ELAPSED_INCLUSIVE_PERCENT] = {"ELAPSED INCLUSIVE %", NULL, "elapsed_inclusive_percent",
                                                    NULL},
        [REPORT_VALUE_ELAPSED_EXCLUSIVE_PERCENT] = {"ELAPSED EXCLUSIVE %", NULL, "elapsed_exclusive_percent",
                                                    NULL},
        [REPORT_VALUE_APPLICATION_INCLUSIVE_PERCENT] = {"APPLICATION INCLUSIVE %", NULL,
                                                        "application_inclusive_percent", NULL},
        [REPORT_VALUE_APPLICATION_EXCLUSIVE_PERCENT] = {"APPLICATION EXCLUSIVE %", NULL,
                                                        "application_exclusive_percent", NULL},
        [REPORT_VALUE_BLOCKED] = {"BLOCKED", "BLOCKED (ms)", "blocked", "blocked_ms"},
        [REPORT_VALUE_PREEMPTED] = {"PREEMPTED", "PREEMPTED (ms)", "preempted", "preempted_ms"},
};

/* What each view shows, in column order. Blocked and preempted are parts of the elapsed time only. */
static const ReportValue elapsed_values[] = {
        REPORT_VALUE_ELAPSED_INCLUSIVE,
        REPORT_VALUE_ELAPSED_EXCLUSIVE,
        REPORT_VALUE_ELAPSED_INCLUSIVE_PERCENT,
        REPORT_VALUE_ELAPSED_EXCLUSIVE_PERCENT,
        REPORT_VALUE_BLOCKED,
        REPORT_VALUE_PREEMPTED,
};
static const ReportValue application_values[] = {
        REPORT_VALUE_APPLICATION_INCLUSIVE,
        REPORT_VALUE_APPLICATION_EXCLUSIVE,
        REPORT_VALUE_APPLICATION_INCLUSIVE_PERCENT,
        REPORT_VALUE_APPLICATION_EXCLUSIVE_PERCENT,
};
static const ReportValue all_values[] = {
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
};

static const struct {
        const ReportValue *values;
        size_t n;
} view_values[_REPORT_VIEW_MAX] = {
        [REPORT_VIEW_ELAPSED] = {elapsed_values, ELEMENTSOF(elapsed_values)},
        [REPORT_VIEW_APPLICATION] = {application_values, ELEMENTSOF(application_values)},
        [REPORT_VIEW_ALL] = {all_values, ELEMENTSOF(all_values)},
};

/* Names, not numbers, give way on a narrow terminal, as in the other tables. */
static const struct {
        ColumnSpec columns[2];
        size_t n;
} name_columns[_REPORT_KIND_MAX] = {
        [REPORT_FUNCTIONS] = {{{"FUNCTION", 0.5, SCOLS_FL_TRUNC}, {"MODULE", 0.2, SCOLS_FL_TRUNC}}, 2},
        [REPORT_MODULES] = {{{"MODULE", 0.5, SCOLS_FL_TRUNC}}, 1},
        [REPORT_THREADS] = {{{"TID", 1, SCOLS_FL_RIGHT}, {"NAME", 0.5, SCOLS_FL_TRUNC}}, 2},
        [REPORT_PROCESSES] = {{{"PID", 1, SCOLS_FL_RIGHT}, {"COMMAND", 0.5, SCOLS_FL_TRUNC}}, 2},
};

static const char *const table_json_key[_REPORT_KIND_MAX] = {
        [REPORT_FUNCTIONS] = "functions",
        [REPORT_MODULES] = "modules",
        [REPORT_THREADS] = "threads",
        [REPORT_PROCESSES] = "processes",
};

static bool value_is_exclusive(ReportValue v)
{
        return IN_SET(v, REPORT_VALUE_ELAPSED_EXCLUSIVE, REPORT_VALUE_APPLICATION_EXCLUSIVE,
                      REPORT_VALUE_ELAPSED_EXCLUSIVE_PERCENT, REPORT_VALUE_APPLICATION_EXCLUSIVE_PERCENT);
}

/* Percents with two decimals as in the other tables; values with one, in either unit. */
static void format_value(char *buf, size_t size, ReportValue v, double value, bool unit_ms,
                         uint32_t frequency)
{
        if (!value_info[v].key_ms)
                snprintf(buf, size, "%.2f", value);
        else
                snprintf(buf, size, "%.1f", unit_ms ? report_value_to_ms(value, frequency) : value);
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
        int r;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;

        r = json_add_row_name(o, kind, row);
        /* Every key of the view, whatever the table leaves out, and both units. */
        for (size_t i = 0; r >= 0 && i < view_values[view].n; i++) {
                ReportValue v = view_values[view].values[i];

                r = json_add_double(o, value_info[v].key, row->values[v]);
        }
        for (size_t i = 0; r >= 0 && i < view_values[view].n; i++) {
                ReportValue v = view_values[view].values[i];

                if (value_info[v].key_ms)
                        r = json_add_double(o, value_info[v].key_ms,
                                            report_value_to_ms(row->values[v], frequency));
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
        r = json_add(o, table_json_key[t->kind], rows);
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
        ColumnSpec columns[2 + _REPORT_VALUE_MAX];
        ReportValue shown[_REPORT_VALUE_MAX];
        size_t n_names, n_shown = 0;
        bool one_value;
        int r;

        if (!t->has_values || t->kind >= _REPORT_KIND_MAX || view == REPORT_VIEW_SAMPLES ||
            view >= _REPORT_VIEW_MAX)
                return -EINVAL;
        if (flags & OUTPUT_JSON)
                return values_table_json(t, view, frequency, pid, flags);

        /* A thread's or process's exclusive values are its inclusive ones: its columns say it once. */
        one_value = IN_SET(t->kind, REPORT_THREADS, REPORT_PROCESSES);
        n_names = name_columns[t->kind].n;
        for (size_t i = 0; i < n_names; i++)
                columns[i] = name_columns[t->kind].columns[i];
        for (size_t i = 0; i < view_values[view].n; i++) {
                ReportValue v = view_values[view].values[i];
                const ValueInfo *info = &value_info[v];

                if (one_value && value_is_exclusive(v))
                        continue;
                shown[n_shown] = v;
                columns[n_names + n_shown] = (ColumnSpec){
                        .name = unit_ms && info->heading_ms ? info->heading_ms : info->heading,
                        .whint = 1,
                        .flags = SCOLS_FL_RIGHT,
                };
                n_shown++;
        }

        r = table_new(columns, n_names + n_shown, flags, &tb);
        if (r < 0)
                return r;

        for (size_t i = 0; i < t->n_rows; i++) {
                const ReportRow *row = &t->rows[i];
                char id[16], numbers[_REPORT_VALUE_MAX][32];
                const char *cells[2 + _REPORT_VALUE_MAX];
                size_t n = 0;

                if (t->kind == REPORT_THREADS || t->kind == REPORT_PROCESSES) {
                        snprintf(id, sizeof(id), "%" PRIu32, row->id);
                        cells[n++] = id;
                }
                cells[n++] = row->name;
                if (t->kind == REPORT_FUNCTIONS)
                        cells[n++] = row->module;
                for (size_t j = 0; j < n_shown; j++) {
                        format_value(numbers[j], sizeof(numbers[j]), shown[j], row->values[shown[j]],
                                     unit_ms, frequency);
                        cells[n++] = numbers[j];
                }

                r = table_add_line(tb, n, cells);
                if (r < 0)
                        return r;
        }

        if (!(flags & OUTPUT_NO_HEADINGS))
                print_totals(t, view, unit_ms, frequency, note);
        return scols_print_table(tb);
}
