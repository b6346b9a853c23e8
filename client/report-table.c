/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report-table.h"
#include "time-util.h"

static const char *const report_kind_names[_REPORT_KIND_MAX] = {
        [REPORT_FUNCTIONS] = "function",
        [REPORT_MODULES] = "module",
        [REPORT_THREADS] = "thread",
        [REPORT_PROCESSES] = "process",
        [REPORT_STACKS] = "stack",
};

static const char *const report_view_names[_REPORT_VIEW_MAX] = {
        [REPORT_VIEW_SAMPLES] = "samples",
        [REPORT_VIEW_ELAPSED] = "elapsed",
        [REPORT_VIEW_APPLICATION] = "application",
        [REPORT_VIEW_ALL] = "all",
};

int report_kind_from_string(const char *s, ReportKind *ret)
{
        for (ReportKind k = 0; k < _REPORT_KIND_MAX; k++)
                if (strcmp(s, report_kind_names[k]) == 0) {
                        *ret = k;
                        return 0;
                }
        return -EINVAL;
}

int report_view_from_string(const char *s, ReportView *ret)
{
        for (ReportView v = 0; v < _REPORT_VIEW_MAX; v++)
                if (strcmp(s, report_view_names[v]) == 0) {
                        *ret = v;
                        return 0;
                }
        return -EINVAL;
}

int report_view_sort_key(ReportView view, ProfileSort key, ProfileSort *ret)
{
        bool inclusive = IN_SET(key, PROFILE_SORT_INCLUSIVE, PROFILE_SORT_ELAPSED_INCLUSIVE,
                                PROFILE_SORT_APPLICATION_INCLUSIVE);
        ProfileSort k;

        switch (key) {
        case PROFILE_SORT_INCLUSIVE:
        case PROFILE_SORT_EXCLUSIVE:
                if (view == REPORT_VIEW_SAMPLES)
                        k = key;
                else if (view == REPORT_VIEW_APPLICATION)
                        k = inclusive ? PROFILE_SORT_APPLICATION_INCLUSIVE
                                      : PROFILE_SORT_APPLICATION_EXCLUSIVE;
                else
                        k = inclusive ? PROFILE_SORT_ELAPSED_INCLUSIVE : PROFILE_SORT_ELAPSED_EXCLUSIVE;
                break;
        case PROFILE_SORT_ELAPSED_INCLUSIVE:
        case PROFILE_SORT_ELAPSED_EXCLUSIVE:
                if (!IN_SET(view, REPORT_VIEW_ELAPSED, REPORT_VIEW_ALL))
                        return -EINVAL;
                k = key;
                break;
        case PROFILE_SORT_APPLICATION_INCLUSIVE:
        case PROFILE_SORT_APPLICATION_EXCLUSIVE:
                if (!IN_SET(view, REPORT_VIEW_APPLICATION, REPORT_VIEW_ALL))
                        return -EINVAL;
                k = key;
                break;
        default:
                return -EINVAL;
        }

        *ret = k;
        return 0;
}

double report_value_to_ms(double samples, uint32_t frequency)
{
        return table_value_to_ms(samples, frequency);
}

int report_table_new(ReportKind kind, ReportTable **ret)
{
        ReportTable *t;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->kind = kind;
        *ret = t;
        return 0;
}

int report_table_new_values(ReportKind kind, ReportTable **ret)
{
        int r;

        r = report_table_new(kind, ret);
        if (r < 0)
                return r;
        (*ret)->has_values = true;
        return 0;
}

static void report_symbols_free(ReportSymbols *s)
{
        if (!s)
                return;
        free(s->source);
        free(s->debug_file);
        free(s->build_id);
        free(s->debuginfod);
        free(s);
}

static void report_row_done(ReportRow *r)
{
        free(r->name);
        free(r->module);
        free(r->mangled);
        free(r->source);
        report_symbols_free(r->symbols);
}

static char *strdup_or_null(const char *s, bool *failed)
{
        char *c = s ? strdup(s) : NULL;

        if (s && !c)
                *failed = true;
        return c;
}

int report_table_set_symbols(ReportTable *t, const char *module, const ReportSymbols *s)
{
        ReportSymbols *copy;
        bool failed = false;

        if (!t || !module || !s || t->kind != REPORT_MODULES)
                return -EINVAL;
        for (size_t i = 0; i < t->n_rows; i++) {
                ReportRow *row = &t->rows[i];

                if (strcmp(row->name, module) != 0)
                        continue;
                copy = calloc(1, sizeof(*copy));
                if (!copy)
                        return -ENOMEM;
                *copy = (ReportSymbols){
                        .source = strdup_or_null(s->source, &failed),
                        .debug_file = strdup_or_null(s->debug_file, &failed),
                        .build_id = strdup_or_null(s->build_id, &failed),
                        .debuginfod = strdup_or_null(s->debuginfod, &failed),
                        .symbols = s->symbols,
                        .unnamed_functions = s->unnamed_functions,
                        .unnamed_samples = s->unnamed_samples,
                        .samples = s->samples,
                        .load_usec = s->load_usec,
                };
                if (failed) {
                        report_symbols_free(copy);
                        return -ENOMEM;
                }
                report_symbols_free(row->symbols);
                row->symbols = copy;
                return 0;
        }
        return 0;
}

ReportTable *report_table_free(ReportTable *t)
{
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_rows; i++)
                report_row_done(&t->rows[i]);
        free(t->rows);
        free(t);
        return NULL;
}

/* Appends a copy of row, strings included. */
static int append_row(ReportTable *t, const ReportRow *row)
{
        _cleanup_free_ char *n = NULL, *m = NULL, *mangled = NULL, *source = NULL;

        if (t->n_rows == t->n_allocated) {
                size_t a = MAX(t->n_allocated * 2, (size_t)64);
                ReportRow *rows;

                rows = reallocarray(t->rows, a, sizeof(*rows));
                if (!rows)
                        return -ENOMEM;
                t->rows = rows;
                t->n_allocated = a;
        }

        n = strdup(row->name ?: "");
        if (!n)
                return -ENOMEM;
        if (t->kind == REPORT_FUNCTIONS) {
                m = strdup(row->module ?: "");
                if (!m)
                        return -ENOMEM;
        }
        if (row->mangled) {
                mangled = strdup(row->mangled);
                if (!mangled)
                        return -ENOMEM;
        }

        if (row->source) {
                source = strdup(row->source);
                if (!source)
                        return -ENOMEM;
        }

        t->rows[t->n_rows] = *row;
        t->rows[t->n_rows].name = TAKE_PTR(n);
        t->rows[t->n_rows].module = TAKE_PTR(m);
        t->rows[t->n_rows].mangled = TAKE_PTR(mangled);
        t->rows[t->n_rows].source = TAKE_PTR(source);
        t->n_rows++;
        return 0;
}

int report_table_set_mangled(ReportTable *t, const char *module, const char *function, const char *mangled)
{
        if (!t || !module || !function || !mangled || t->kind != REPORT_FUNCTIONS)
                return -EINVAL;
        for (size_t i = 0; i < t->n_rows; i++) {
                ReportRow *row = &t->rows[i];
                char *copy;

                if (row->mangled || strcmp(row->name, function) != 0 || strcmp(row->module, module) != 0)
                        continue;
                copy = strdup(mangled);
                if (!copy)
                        return -ENOMEM;
                row->mangled = copy;
        }
        return 0;
}

int report_table_set_source(ReportTable *t, const char *module, const char *function, const char *source)
{
        if (!t || !module || !function || !source || t->kind != REPORT_FUNCTIONS)
                return -EINVAL;
        if (source[0] == '\0')
                return 0;
        for (size_t i = 0; i < t->n_rows; i++) {
                ReportRow *row = &t->rows[i];
                char *copy;

                if (row->source || strcmp(row->name, function) != 0 || strcmp(row->module, module) != 0)
                        continue;
                copy = strdup(source);
                if (!copy)
                        return -ENOMEM;
                row->source = copy;
        }
        return 0;
}

int report_table_append_row(ReportTable *t, const ReportRow *row)
{
        return append_row(t, row);
}

int report_table_append(ReportTable *t, uint32_t id, const char *name, const char *module,
                        uint64_t inclusive, uint64_t exclusive, double inclusive_percent,
                        double exclusive_percent)
{
        return append_row(t, &(const ReportRow){
                                     .id = id,
                                     .name = (char *)name,
                                     .module = (char *)module,
                                     .inclusive = inclusive,
                                     .exclusive = exclusive,
                                     .inclusive_percent = inclusive_percent,
                                     .exclusive_percent = exclusive_percent,
                             });
}

int report_table_append_values(ReportTable *t, uint32_t id, const char *name, const char *module,
                               const double values[static _REPORT_VALUE_MAX])
{
        ReportRow row = {
                .id = id,
                .name = (char *)name,
                .module = (char *)module,
        };

        memcpy(row.values, values, sizeof(row.values));
        return append_row(t, &row);
}

void report_table_truncate(ReportTable *t, size_t n)
{
        if (n == 0 || n >= t->n_rows)
                return;
        for (size_t i = n; i < t->n_rows; i++)
                report_row_done(&t->rows[i]);
        t->n_rows = n;
}

void report_table_filter_id(ReportTable *t, uint32_t id)
{
        size_t w = 0;

        for (size_t i = 0; i < t->n_rows; i++) {
                if (t->rows[i].id != id) {
                        report_row_done(&t->rows[i]);
                        continue;
                }
                t->rows[w++] = t->rows[i];
        }
        t->n_rows = w;
}

void report_table_filter_positive(ReportTable *t, ReportValue value)
{
        size_t w = 0;

        for (size_t i = 0; i < t->n_rows; i++) {
                if (!(t->rows[i].values[value] > 0)) {
                        report_row_done(&t->rows[i]);
                        continue;
                }
                t->rows[w++] = t->rows[i];
        }
        t->n_rows = w;
}

static int strcmp_null(const char *a, const char *b)
{
        return strcmp(a ?: "", b ?: "");
}

static int row_compare_name(const ReportRow *a, const ReportRow *b)
{
        int r;

        r = strcmp_null(a->name, b->name);
        if (r != 0)
                return r;
        r = strcmp_null(a->module, b->module);
        if (r != 0)
                return r;
        return (a->id > b->id) - (a->id < b->id);
}

#define CMP_DESC(a, b) (((a) < (b)) - ((a) > (b)))

static int cmp_by_inclusive(const void *x, const void *y)
{
        const ReportRow *a = x, *b = y;

        return CMP_DESC(a->inclusive, b->inclusive) ?: CMP_DESC(a->exclusive, b->exclusive)
                                                              ?: row_compare_name(a, b);
}

static int cmp_by_exclusive(const void *x, const void *y)
{
        const ReportRow *a = x, *b = y;

        return CMP_DESC(a->exclusive, b->exclusive) ?: CMP_DESC(a->inclusive, b->inclusive)
                                                              ?: row_compare_name(a, b);
}

/* A values key's value and its partner of the same kind, which breaks ties. */
static const ReportValue sort_values[_PROFILE_SORT_MAX][2] = {
        [PROFILE_SORT_ELAPSED_INCLUSIVE] = {REPORT_VALUE_ELAPSED_INCLUSIVE, REPORT_VALUE_ELAPSED_EXCLUSIVE},
        [PROFILE_SORT_ELAPSED_EXCLUSIVE] = {REPORT_VALUE_ELAPSED_EXCLUSIVE, REPORT_VALUE_ELAPSED_INCLUSIVE},
        [PROFILE_SORT_APPLICATION_INCLUSIVE] = {REPORT_VALUE_APPLICATION_INCLUSIVE,
                                                REPORT_VALUE_APPLICATION_EXCLUSIVE},
        [PROFILE_SORT_APPLICATION_EXCLUSIVE] = {REPORT_VALUE_APPLICATION_EXCLUSIVE,
                                                REPORT_VALUE_APPLICATION_INCLUSIVE},
};

static int cmp_by_values(const void *x, const void *y, void *userdata)
{
        const ReportRow *a = x, *b = y;
        const ReportValue *v = userdata;

        return CMP_DESC(a->values[v[0]], b->values[v[0]]) ?: CMP_DESC(a->values[v[1]], b->values[v[1]])
                                                                      ?: row_compare_name(a, b);
}

void report_table_sort(ReportTable *t, ProfileSort key)
{
        if (t->n_rows <= 1)
                return;
        if (key == PROFILE_SORT_INCLUSIVE || key == PROFILE_SORT_EXCLUSIVE)
                qsort(t->rows, t->n_rows, sizeof(t->rows[0]),
                      key == PROFILE_SORT_INCLUSIVE ? cmp_by_inclusive : cmp_by_exclusive);
        else if (key >= 0 && key < _PROFILE_SORT_MAX)
                qsort_r(t->rows, t->n_rows, sizeof(t->rows[0]), cmp_by_values, (void *)sort_values[key]);
}
