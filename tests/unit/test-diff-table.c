/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* diff_tables() (client/diff-table.h) on hand-made windows: shares, points, CPU time per second of windows of
 * different lengths and frequencies, NEW and GONE, the noise flag against the sampling's standard error, the
 * matching of each table kind, the order. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "diff-table.h"

#define SEC UINT64_C(1000000)

static void add_row(ReportTable *t, const char *name, const char *module, uint32_t id, uint64_t inclusive,
                    uint64_t exclusive)
{
        ReportRow row = { .id = id, .name = (char *)name, .module = (char *)module, .inclusive = inclusive,
                          .exclusive = exclusive };

        ck_assert_int_eq(report_table_append_row(t, &row), 0);
}

static void table(ReportTable **t, ReportKind kind, uint64_t total, uint64_t seconds)
{
        ck_assert_int_eq(report_table_new(kind, t), 0);
        (*t)->total_samples = total;
        (*t)->window_start_usec = 1000 * SEC;
        (*t)->window_end_usec = (1000 + seconds) * SEC;
}

/* A window of total samples at frequency over seconds: functions main (every sample), a and b, threads. */
static void window(WindowTables *w, uint32_t frequency, uint64_t seconds, uint64_t total, uint64_t a, uint64_t b)
{
        *w = (WindowTables){ .frequency = frequency, .window_usec = seconds * SEC };
        table(&w->functions, REPORT_FUNCTIONS, total, seconds);
        table(&w->modules, REPORT_MODULES, total, seconds);
        table(&w->threads, REPORT_THREADS, total, seconds);
        add_row(w->functions, "main", "app", 0, total, 0);
        if (a > 0)
                add_row(w->functions, "a", "app", 0, a, a);
        if (b > 0)
                add_row(w->functions, "b", "libb.so", 0, b, b);
        add_row(w->modules, "app", NULL, 0, total, total - b);
        if (b > 0)
                add_row(w->modules, "libb.so", NULL, 0, b, b);
        /* The same thread name, another TID in each window (two processes). */
        add_row(w->threads, "worker", NULL, frequency, total, total);
        w->stacks = calloc(1, sizeof(StackTable));
        ck_assert_ptr_nonnull(w->stacks);
        w->stacks->total_samples = total;
}

static const DiffRow *find(const DiffTable *t, const char *name)
{
        for (size_t i = 0; i < t->n_rows; i++)
                if (strcmp(t->rows[i].name, name) == 0)
                        return &t->rows[i];
        return NULL;
}

START_TEST(test_functions)
{
        _cleanup_(window_tables_done) WindowTables base, new;
        _cleanup_(diff_table_freep) DiffTable *t = NULL;
        const DiffRow *a, *b, *m;

        /* Base: 60 s at 100 Hz, a 3000 of 6000 samples (50%), no b. New: 10 s at 1000 Hz, a 2000 (20%), b 8000. */
        window(&base, 100, 60, 6000, 3000, 0);
        window(&new, 1000, 10, 10000, 2000, 8000);
        ck_assert_int_eq(diff_tables(&base, &new, DIFF_BY_FUNCTION, false, &t), 0);
        ck_assert_uint_eq(t->n_rows, 3);
        a = find(t, "a");
        b = find(t, "b");
        m = find(t, "main");
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        ck_assert_ptr_nonnull(m);
        ck_assert_double_eq_tol(a->base.percent, 50.0, 1e-9);
        ck_assert_double_eq_tol(a->new.percent, 20.0, 1e-9);
        ck_assert_double_eq_tol(a->points, -30.0, 1e-9);
        /* 3000 samples of 10 ms in 60 s: 500 ms a second; 2000 of 1 ms in 10 s: 200. */
        ck_assert_double_eq_tol(a->base.ms_per_second, 500.0, 1e-9);
        ck_assert_double_eq_tol(a->new.ms_per_second, 200.0, 1e-9);
        ck_assert_double_eq_tol(a->ms_per_second, -300.0, 1e-9);
        ck_assert(!a->is_new && !a->gone && !a->noise);
        ck_assert(b->is_new && !b->gone && !b->noise);
        ck_assert_double_eq_tol(b->points, 80.0, 1e-9);
        ck_assert_str_eq(b->module, "libb.so");
        /* main: all samples in both, 1000 ms a second in both: no change, within the noise. */
        ck_assert_double_eq_tol(m->points, 0.0, 1e-9);
        ck_assert_double_eq_tol(m->ms_per_second, 0.0, 1e-9);
        ck_assert(m->noise && !m->is_new && !m->gone);
        /* Largest change first. */
        ck_assert_str_eq(t->rows[0].name, "b");
        ck_assert_str_eq(t->rows[1].name, "a");
        ck_assert_str_eq(t->rows[2].name, "main");
        /* The standard error of a's points: sqrt(.5*.5/6000 + .2*.8/10000), in points. */
        ck_assert_double_eq_tol(a->se_points, 100.0 * sqrt(0.25 / 6000 + 0.16 / 10000), 1e-9);
}
END_TEST

/* A small change of few samples is noise; the same change of many is not. GONE by one sample is noise too. */
START_TEST(test_noise)
{
        _cleanup_(window_tables_done) WindowTables base, new, big_base, big_new;
        _cleanup_(diff_table_freep) DiffTable *t = NULL, *big = NULL;

        window(&base, 100, 1, 100, 50, 1);
        window(&new, 100, 1, 100, 55, 0);
        ck_assert_int_eq(diff_tables(&base, &new, DIFF_BY_FUNCTION, false, &t), 0);
        ck_assert(find(t, "a")->noise); /* 5 points of 100 samples: SE 7 points */
        ck_assert(find(t, "b")->gone);
        ck_assert(find(t, "b")->noise);
        window(&big_base, 1000, 60, 60000, 30000, 600);
        window(&big_new, 1000, 60, 60000, 33000, 0);
        ck_assert_int_eq(diff_tables(&big_base, &big_new, DIFF_BY_FUNCTION, false, &big), 0);
        ck_assert(!find(big, "a")->noise); /* 5 points of 60000 samples: SE 0.29 points */
        ck_assert(find(big, "b")->gone && !find(big, "b")->noise);
}
END_TEST

START_TEST(test_modules_threads_stacks)
{
        _cleanup_(window_tables_done) WindowTables base, new;
        _cleanup_(diff_table_freep) DiffTable *modules = NULL, *by_tid = NULL, *by_name = NULL, *stacks = NULL;
        static char main_name[] = "main", work[] = "work", app[] = "app", kernel[] = "[kernel]", irq[] = "irq";
        static uint32_t frames_base[] = { 0, 1 }, frames_new[] = { 0, 1, 2 };

        window(&base, 100, 2, 200, 100, 0);
        window(&new, 100, 2, 200, 50, 100);
        ck_assert_int_eq(diff_tables(&base, &new, DIFF_BY_MODULE, false, &modules), 0);
        ck_assert_double_eq_tol(find(modules, "app")->points, 0.0, 1e-9);
        ck_assert(find(modules, "libb.so")->is_new);
        /* Threads: by TID (one process, two windows), the worker of each window is its own row; by name one. */
        ck_assert_int_eq(diff_tables(&base, &new, DIFF_BY_THREAD, false, &by_tid), 0);
        ck_assert_uint_eq(by_tid->n_rows, 1); /* the same TID: 100 in both windows */
        ck_assert_uint_eq(by_tid->rows[0].tid, 100);
        ck_assert_int_eq(diff_tables(&base, &new, DIFF_BY_THREAD, true, &by_name), 0);
        ck_assert_uint_eq(by_name->n_rows, 1);
        ck_assert_uint_eq(by_name->rows[0].tid, 0);

        /* Stacks by their folded frames: main;work in the base, main;work;irq_[k] new. */
        StackFunction functions[] = { { app, main_name }, { app, work }, { kernel, irq } };
        StackEntry base_stacks[] = { { frames_base, 2, 0, 150 } }, new_stacks[] = { { frames_new, 3, 1, 40 },
                                                                                     { frames_base, 2, 0, 160 } };
        StackTable sb = { .functions = functions, .n_functions = 3, .stacks = base_stacks, .n_stacks = 1,
                          .total_samples = 200 },
                   sn = { .functions = functions, .n_functions = 3, .stacks = new_stacks, .n_stacks = 2,
                          .total_samples = 200 };
        WindowTables wb = base, wn = new;

        wb.stacks = &sb;
        wn.stacks = &sn;
        ck_assert_int_eq(diff_tables(&wb, &wn, DIFF_BY_STACK, false, &stacks), 0);
        ck_assert_uint_eq(stacks->n_rows, 2);
        ck_assert_ptr_nonnull(find(stacks, "main;work"));
        ck_assert(find(stacks, "main;work;irq_[k]")->is_new);
        ck_assert_double_eq_tol(find(stacks, "main;work")->points, 5.0, 1e-9);
        ck_assert_double_eq_tol(find(stacks, "main;work;irq_[k]")->new.ms_per_second, 200.0, 1e-9);
}
END_TEST

START_TEST(test_empty_and_by_names)
{
        _cleanup_(window_tables_done) WindowTables base, new;
        _cleanup_(diff_table_freep) DiffTable *t = NULL;

        window(&base, 100, 0, 0, 0, 0);
        window(&new, 100, 1, 0, 0, 0);
        ck_assert_int_eq(diff_tables(&base, &new, DIFF_BY_FUNCTION, false, &t), 0);
        /* main of 0 samples on both sides: a row, no share, no rate, no division by zero. */
        ck_assert_double_eq_tol(find(t, "main")->points, 0.0, 1e-9);
        ck_assert_double_eq_tol(find(t, "main")->base.ms_per_second, 0.0, 1e-9);
        ck_assert_int_eq(diff_tables(&base, &new, _DIFF_BY_MAX, false, &t), -EINVAL);
        ck_assert_int_eq(diff_by_from_string("stack"), DIFF_BY_STACK);
        ck_assert_int_eq(diff_by_from_string("process"), _DIFF_BY_INVALID);
        ck_assert_str_eq(diff_by_to_string(DIFF_BY_THREAD), "thread");
}
END_TEST

static Suite *diff_table_suite(void)
{
        Suite *s = suite_create("diff-table");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_functions);
        tcase_add_test(tc, test_noise);
        tcase_add_test(tc, test_modules_threads_stacks);
        tcase_add_test(tc, test_empty_and_by_names);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(diff_table_suite());
}
