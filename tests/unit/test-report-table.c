/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "check-main.h"
#include "report-table.h"

/* vprofctl's own table logic: the daemon's sort order, cutting and filtering, and the choice of sort key and
 * unit of the seed-003 values. */

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

START_TEST(test_sort_and_truncate)
{
        _cleanup_(report_table_freep) ReportTable *t = functions(400);

        ck_assert_int_eq(report_table_append(t, 0, "main", "app", 400, 0, 100.0, 0.0), 0);
        ck_assert_int_eq(report_table_append(t, 0, "memcpy", "libc.so.6", 40, 40, 10.0, 10.0), 0);
        ck_assert_int_eq(report_table_append(t, 0, "hot", "app", 90, 90, 22.5, 22.5), 0);
        /* Same name, another module: a different function. */
        ck_assert_int_eq(report_table_append(t, 0, "hot", "other", 270, 270, 67.5, 67.5), 0);
        ck_assert_ptr_nonnull(find(t, "hot", "other"));

        /* Sorted the daemon's way: exclusive, then inclusive, then name. */
        report_table_sort(t, PROFILE_SORT_EXCLUSIVE);
        ck_assert_str_eq(t->rows[0].module, "other");
        ck_assert_str_eq(t->rows[1].name, "hot");
        ck_assert_str_eq(t->rows[2].name, "memcpy");
        ck_assert_str_eq(t->rows[3].name, "main");
        report_table_truncate(t, 2);
        ck_assert_uint_eq(t->n_rows, 2);
}
END_TEST

START_TEST(test_filter)
{
        _cleanup_(report_table_freep) ReportTable *p = NULL;
        ReportKind kind;

        ck_assert_int_eq(report_table_new(REPORT_PROCESSES, &p), 0);
        ck_assert_int_eq(report_table_append(p, 10, "a", NULL, 5, 5, 50.0, 50.0), 0);
        ck_assert_int_eq(report_table_append(p, 20, "b", NULL, 5, 5, 50.0, 50.0), 0);
        report_table_filter_id(p, 20);
        ck_assert_uint_eq(p->n_rows, 1);
        ck_assert_uint_eq(p->rows[0].id, 20);

        ck_assert_int_eq(report_kind_from_string("thread", &kind), 0);
        ck_assert_int_eq(kind, REPORT_THREADS);
        ck_assert_int_lt(report_kind_from_string("colour", &kind), 0);
}
END_TEST

static ReportTable *values_table(double elapsed_total, double application_total)
{
        ReportTable *t = NULL;

        ck_assert_int_eq(report_table_new_values(REPORT_FUNCTIONS, &t), 0);
        ck_assert(t->has_values);
        t->elapsed_total = elapsed_total;
        t->application_total = application_total;
        return t;
}

/* EI, EE, AI, AE, then the off-CPU parts; the percents, which the tests here do not read, 99. */
static void append_values(ReportTable *t, const char *name, const char *module, double ei, double ee,
                          double ai, double ae, double blocked, double preempted)
{
        const double v[_REPORT_VALUE_MAX] = {
                [REPORT_VALUE_ELAPSED_INCLUSIVE] = ei,
                [REPORT_VALUE_ELAPSED_EXCLUSIVE] = ee,
                [REPORT_VALUE_APPLICATION_INCLUSIVE] = ai,
                [REPORT_VALUE_APPLICATION_EXCLUSIVE] = ae,
                [REPORT_VALUE_ELAPSED_INCLUSIVE_PERCENT] = 99,
                [REPORT_VALUE_ELAPSED_EXCLUSIVE_PERCENT] = 99,
                [REPORT_VALUE_APPLICATION_INCLUSIVE_PERCENT] = 99,
                [REPORT_VALUE_APPLICATION_EXCLUSIVE_PERCENT] = 99,
                [REPORT_VALUE_BLOCKED] = blocked,
                [REPORT_VALUE_PREEMPTED] = preempted,
        };

        ck_assert_int_eq(report_table_append_values(t, 0, name, module, v), 0);
}

static void assert_order(const ReportTable *t, const char *first, const char *second, const char *third)
{
        ck_assert_uint_eq(t->n_rows, 3);
        ck_assert_str_eq(t->rows[0].name, first);
        ck_assert_str_eq(t->rows[1].name, second);
        ck_assert_str_eq(t->rows[2].name, third);
}

/* The functions of two targets as vprofd merges them (the empty spec). A: main calls hot (60 samples on the CPU
 * in user mode) and read (40 samples waiting: 30 blocked, 10 preempted); elapsed 100, application 60. B: main
 * runs 10 samples itself and calls hot for 40; elapsed and application 50. */
static ReportTable *merged_values(void)
{
        ReportTable *merged = values_table(150, 110);

        append_values(merged, "main", "app", 150, 10, 110, 10, 30, 10);
        append_values(merged, "hot", "app", 100, 100, 100, 100, 0, 0);
        append_values(merged, "read", "libc.so.6", 40, 40, 0, 0, 30, 10);
        return merged;
}

START_TEST(test_filter_positive)
{
        _cleanup_(report_table_freep) ReportTable *merged = merged_values();

        /* The application view leaves read out: it only waited. */
        report_table_filter_positive(merged, REPORT_VALUE_APPLICATION_INCLUSIVE);
        ck_assert_uint_eq(merged->n_rows, 2);
        for (size_t i = 0; i < merged->n_rows; i++)
                ck_assert_str_ne(merged->rows[i].name, "read");
}
END_TEST

START_TEST(test_sort_values)
{
        _cleanup_(report_table_freep) ReportTable *merged = merged_values(), *ties = values_table(20, 20);

        report_table_sort(merged, PROFILE_SORT_ELAPSED_INCLUSIVE);
        assert_order(merged, "main", "hot", "read");
        report_table_sort(merged, PROFILE_SORT_ELAPSED_EXCLUSIVE);
        assert_order(merged, "hot", "read", "main");
        report_table_sort(merged, PROFILE_SORT_APPLICATION_INCLUSIVE);
        assert_order(merged, "main", "hot", "read");
        report_table_sort(merged, PROFILE_SORT_APPLICATION_EXCLUSIVE);
        assert_order(merged, "hot", "main", "read");

        /* Ties: the other value of the key's kind, then the name. */
        append_values(ties, "c", "m", 5, 5, 5, 5, 0, 0);
        append_values(ties, "b", "m", 5, 5, 8, 5, 0, 0);
        append_values(ties, "a", "m", 8, 5, 5, 5, 0, 0);
        report_table_sort(ties, PROFILE_SORT_ELAPSED_EXCLUSIVE);
        assert_order(ties, "a", "b", "c");
        report_table_sort(ties, PROFILE_SORT_APPLICATION_EXCLUSIVE);
        assert_order(ties, "b", "a", "c");
        report_table_sort(ties, PROFILE_SORT_ELAPSED_INCLUSIVE);
        assert_order(ties, "a", "b", "c");
        report_table_sort(ties, PROFILE_SORT_APPLICATION_INCLUSIVE);
        assert_order(ties, "b", "a", "c");
}
END_TEST

START_TEST(test_view_sort_key)
{
        static const struct {
                ReportView view;
                ProfileSort asked;
                ProfileSort expected; /* _PROFILE_SORT_INVALID: refused */
        } cases[] = {
                {REPORT_VIEW_SAMPLES, PROFILE_SORT_INCLUSIVE, PROFILE_SORT_INCLUSIVE},
                {REPORT_VIEW_SAMPLES, PROFILE_SORT_EXCLUSIVE, PROFILE_SORT_EXCLUSIVE},
                {REPORT_VIEW_SAMPLES, PROFILE_SORT_ELAPSED_INCLUSIVE, _PROFILE_SORT_INVALID},
                {REPORT_VIEW_SAMPLES, PROFILE_SORT_APPLICATION_EXCLUSIVE, _PROFILE_SORT_INVALID},
                {REPORT_VIEW_ELAPSED, PROFILE_SORT_INCLUSIVE, PROFILE_SORT_ELAPSED_INCLUSIVE},
                {REPORT_VIEW_ELAPSED, PROFILE_SORT_EXCLUSIVE, PROFILE_SORT_ELAPSED_EXCLUSIVE},
                {REPORT_VIEW_ELAPSED, PROFILE_SORT_ELAPSED_INCLUSIVE, PROFILE_SORT_ELAPSED_INCLUSIVE},
                {REPORT_VIEW_ELAPSED, PROFILE_SORT_APPLICATION_INCLUSIVE, _PROFILE_SORT_INVALID},
                {REPORT_VIEW_APPLICATION, PROFILE_SORT_INCLUSIVE, PROFILE_SORT_APPLICATION_INCLUSIVE},
                {REPORT_VIEW_APPLICATION, PROFILE_SORT_EXCLUSIVE, PROFILE_SORT_APPLICATION_EXCLUSIVE},
                {REPORT_VIEW_APPLICATION, PROFILE_SORT_ELAPSED_EXCLUSIVE, _PROFILE_SORT_INVALID},
                {REPORT_VIEW_APPLICATION, PROFILE_SORT_APPLICATION_EXCLUSIVE,
                 PROFILE_SORT_APPLICATION_EXCLUSIVE},
                {REPORT_VIEW_ALL, PROFILE_SORT_INCLUSIVE, PROFILE_SORT_ELAPSED_INCLUSIVE},
                {REPORT_VIEW_ALL, PROFILE_SORT_EXCLUSIVE, PROFILE_SORT_ELAPSED_EXCLUSIVE},
                {REPORT_VIEW_ALL, PROFILE_SORT_APPLICATION_INCLUSIVE, PROFILE_SORT_APPLICATION_INCLUSIVE},
                {REPORT_VIEW_ALL, PROFILE_SORT_ELAPSED_EXCLUSIVE, PROFILE_SORT_ELAPSED_EXCLUSIVE},
        };
        ReportView view;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ProfileSort key = _PROFILE_SORT_INVALID;
                int r = report_view_sort_key(cases[i].view, cases[i].asked, &key);

                ck_assert_msg(r == (cases[i].expected == _PROFILE_SORT_INVALID ? -EINVAL : 0), "case %zu",
                              i);
                ck_assert_msg(key == cases[i].expected, "case %zu: key %d", i, key);
        }

        ck_assert_int_eq(report_view_from_string("application", &view), 0);
        ck_assert_int_eq(view, REPORT_VIEW_APPLICATION);
        ck_assert_int_lt(report_view_from_string("time", &view), 0);
}
END_TEST

START_TEST(test_value_to_ms)
{
        /* One sample is 1/frequency seconds. */
        ck_assert_double_eq_tol(report_value_to_ms(150, 100), 1500, 1e-9);
        ck_assert_double_eq_tol(report_value_to_ms(2.5, 1000), 2.5, 1e-9);
        ck_assert_double_eq_tol(report_value_to_ms(1, 99), 1000.0 / 99, 1e-9);
        ck_assert_double_eq(report_value_to_ms(7, 0), 0);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("report-table");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_sort_and_truncate);
        tcase_add_test(tc, test_filter);
        tcase_add_test(tc, test_filter_positive);
        tcase_add_test(tc, test_sort_values);
        tcase_add_test(tc, test_view_sort_key);
        tcase_add_test(tc, test_value_to_ms);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
