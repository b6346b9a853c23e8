/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <string.h>

#include "check-main.h"
#include "report-table.h"

/* vprofctl's own table logic: the merge behind "top" without a PID, and the daemon's sort order. */

static ReportTable *functions(uint64_t total)
{
        ReportTable *t = NULL;

        ck_assert_int_eq(report_table_new(REPORT_FUNCTIONS, &t), 0);
        t->total_samples = total;
        return t;
}

static const ReportRow *find(const ReportTable *t, const char *name, const char *module)
{
        for (size_t i = 0; i < t->n_rows; i++)
                if (strcmp(t->rows[i].name, name) == 0 && strcmp(t->rows[i].module, module) == 0)
                        return t->rows + i;
        ck_abort_msg("row %s in %s not found", name, module);
        return NULL;
}

START_TEST(test_merge_sums_by_function_and_module)
{
        _cleanup_(report_table_freep) ReportTable *a = functions(100), *b = functions(300), *merged = NULL;
        const ReportRow *r;

        ck_assert_int_eq(report_table_append(a, 0, "main", "app", 100, 0, 100.0, 0.0), 0);
        ck_assert_int_eq(report_table_append(a, 0, "hot", "app", 60, 60, 60.0, 60.0), 0);
        ck_assert_int_eq(report_table_append(a, 0, "memcpy", "libc.so.6", 40, 40, 40.0, 40.0), 0);
        ck_assert_int_eq(report_table_append(b, 0, "main", "app", 300, 0, 100.0, 0.0), 0);
        ck_assert_int_eq(report_table_append(b, 0, "hot", "app", 30, 30, 10.0, 10.0), 0);
        /* Same name, another module: a different function. */
        ck_assert_int_eq(report_table_append(b, 0, "hot", "other", 270, 270, 90.0, 90.0), 0);

        ReportTable *const tables[] = { a, b };
        ck_assert_int_eq(report_tables_merge(tables, 2, &merged), 0);
        ck_assert_uint_eq(merged->total_samples, 400);
        ck_assert_uint_eq(merged->n_rows, 4);

        r = find(merged, "main", "app");
        ck_assert_uint_eq(r->inclusive, 400);
        ck_assert_double_eq_tol(r->inclusive_percent, 100.0, 1e-9);
        r = find(merged, "hot", "app");
        ck_assert_uint_eq(r->exclusive, 90);
        ck_assert_double_eq_tol(r->exclusive_percent, 22.5, 1e-9);
        r = find(merged, "hot", "other");
        ck_assert_uint_eq(r->exclusive, 270);
        ck_assert_double_eq_tol(r->exclusive_percent, 67.5, 1e-9);

        /* Sorted the daemon's way: exclusive, then inclusive, then name. */
        report_table_sort(merged, PROFILE_SORT_EXCLUSIVE);
        ck_assert_str_eq(merged->rows[0].module, "other");
        ck_assert_str_eq(merged->rows[1].name, "hot");
        ck_assert_str_eq(merged->rows[2].name, "memcpy");
        ck_assert_str_eq(merged->rows[3].name, "main");
        report_table_truncate(merged, 2);
        ck_assert_uint_eq(merged->n_rows, 2);
}
END_TEST

START_TEST(test_filter_and_empty_merge)
{
        _cleanup_(report_table_freep) ReportTable *p = NULL, *merged = NULL;
        ReportKind kind;

        ck_assert_int_eq(report_table_new(REPORT_PROCESSES, &p), 0);
        ck_assert_int_eq(report_table_append(p, 10, "a", NULL, 5, 5, 50.0, 50.0), 0);
        ck_assert_int_eq(report_table_append(p, 20, "b", NULL, 5, 5, 50.0, 50.0), 0);
        report_table_filter_id(p, 20);
        ck_assert_uint_eq(p->n_rows, 1);
        ck_assert_uint_eq(p->rows[0].id, 20);

        /* No targets: an empty table, no division by zero. */
        ck_assert_int_eq(report_tables_merge(NULL, 0, &merged), 0);
        ck_assert_uint_eq(merged->total_samples, 0);
        ck_assert_uint_eq(merged->n_rows, 0);

        ck_assert_int_eq(report_kind_from_string("thread", &kind), 0);
        ck_assert_int_eq(kind, REPORT_THREADS);
        ck_assert_int_lt(report_kind_from_string("colour", &kind), 0);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("report-table");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_merge_sums_by_function_and_module);
        tcase_add_test(tc, test_filter_and_empty_merge);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
