/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report-table.h"

static const char *const report_kind_names[_REPORT_KIND_MAX] = {
        [REPORT_FUNCTIONS] = "function",
        [REPORT_MODULES] = "module",
        [REPORT_THREADS] = "thread",
        [REPORT_PROCESSES] = "process",
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

static void report_row_done(ReportRow *r)
{
        free(r->name);
        free(r->module);
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

int report_table_append(ReportTable *t, uint32_t id, const char *name, const char *module,
                        uint64_t inclusive, uint64_t exclusive, double inclusive_percent,
                        double exclusive_percent)
{
        _cleanup_free_ char *n = NULL, *m = NULL;

        if (t->n_rows == t->n_allocated) {
                size_t a = MAX(t->n_allocated * 2, (size_t)64);
                ReportRow *rows;

                rows = reallocarray(t->rows, a, sizeof(*rows));
                if (!rows)
                        return -ENOMEM;
                t->rows = rows;
                t->n_allocated = a;
        }

        n = strdup(name ?: "");
        if (!n)
                return -ENOMEM;
        if (t->kind == REPORT_FUNCTIONS) {
                m = strdup(module ?: "");
                if (!m)
                        return -ENOMEM;
        }

        t->rows[t->n_rows++] = (ReportRow){
                .id = id,
                .name = TAKE_PTR(n),
                .module = TAKE_PTR(m),
                .inclusive = inclusive,
                .exclusive = exclusive,
                .inclusive_percent = inclusive_percent,
                .exclusive_percent = exclusive_percent,
        };
        return 0;
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

static int cmp_by_name(const void *x, const void *y)
{
        return row_compare_name(x, y);
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

void report_table_sort(ReportTable *t, ProfileSort key)
{
        if (t->n_rows > 1)
                qsort(t->rows, t->n_rows, sizeof(t->rows[0]),
                      key == PROFILE_SORT_INCLUSIVE ? cmp_by_inclusive : cmp_by_exclusive);
}

int report_tables_merge(ReportTable *const *tables, size_t n_tables, ReportTable **ret)
{
        _cleanup_(report_table_freep) ReportTable *m = NULL;
        size_t w = 0;
        int r;

        r = report_table_new(REPORT_FUNCTIONS, &m);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n_tables; i++) {
                const ReportTable *t = tables[i];

                if (t->kind != REPORT_FUNCTIONS)
                        return -EINVAL;
                m->total_samples += t->total_samples;
                for (size_t j = 0; j < t->n_rows; j++) {
                        const ReportRow *row = &t->rows[j];

                        r = report_table_append(m, 0, row->name, row->module, row->inclusive, row->exclusive,
                                                0, 0);
                        if (r < 0)
                                return r;
                }
        }

        /* Sorting by (function, module) puts the rows to sum next to each other. */
        if (m->n_rows > 1)
                qsort(m->rows, m->n_rows, sizeof(m->rows[0]), cmp_by_name);
        for (size_t i = 0; i < m->n_rows; i++) {
                ReportRow *row = &m->rows[i];

                if (w > 0 && row_compare_name(&m->rows[w - 1], row) == 0) {
                        m->rows[w - 1].inclusive += row->inclusive;
                        m->rows[w - 1].exclusive += row->exclusive;
                        report_row_done(row);
                        continue;
                }
                m->rows[w++] = *row;
        }
        m->n_rows = w;

        for (size_t i = 0; i < m->n_rows; i++) {
                m->rows[i].inclusive_percent = profile_percent(m->rows[i].inclusive, m->total_samples);
                m->rows[i].exclusive_percent = profile_percent(m->rows[i].exclusive, m->total_samples);
        }

        *ret = TAKE_PTR(m);
        return 0;
}
