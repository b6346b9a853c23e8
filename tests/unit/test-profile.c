/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "profile.h"

/* A hand-computed profile (seed 004):
 *   #1 tid 10  main -> a -> b            (app: main, a, r; libx.so: b, c)
 *   #2 tid 10  main -> a
 *   #3 tid 10  main -> r -> r -> r -> c  (recursion: r counts once)
 *   #4 tid 11  main -> r -> r
 * inclusive: main 4, a 2, r 2, b 1, c 1; exclusive: a 1, b 1, c 1, r 1, main 0
 * modules: app inclusive 4 exclusive 2; libx.so inclusive 2 exclusive 2
 * threads: 10 -> 3 samples, 11 -> 1 sample */

enum { MAIN, A, B, R, C, N };

static Profile *build(uint32_t id[N])
{
        Profile *p = NULL;

        ck_assert_int_eq(profile_new(1000, &p), 0);
        ck_assert_int_eq(profile_intern_function(p, "app", "main", &id[MAIN]), 0);
        ck_assert_int_eq(profile_intern_function(p, "app", "a", &id[A]), 0);
        ck_assert_int_eq(profile_intern_function(p, "libx.so", "b", &id[B]), 0);
        ck_assert_int_eq(profile_intern_function(p, "app", "r", &id[R]), 0);
        ck_assert_int_eq(profile_intern_function(p, "libx.so", "c", &id[C]), 0);

        const uint32_t s1[] = { id[B], id[A], id[MAIN] };
        const uint32_t s2[] = { id[A], id[MAIN] };
        const uint32_t s3[] = { id[C], id[R], id[R], id[R], id[MAIN] };
        const uint32_t s4[] = { id[R], id[R], id[MAIN] };
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 10, "worker", s1, 3 }), 0);
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 10, "worker", s2, 2 }), 0);
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 10, NULL, s3, 5 }), 0);
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 11, "io", s4, 3 }), 0);
        return p;
}

static const ProfileRow *find(const ProfileRow *rows, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(rows[i].name, name) == 0)
                        return rows + i;
        ck_abort_msg("row %s not found", name);
        return NULL;
}

/* A function's address: the first one given stands, none for the reserved rows, 0 for unknown ids. */
START_TEST(test_function_address)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        uint32_t id, other;

        ck_assert_int_eq(profile_new(99, &p), 0);
        profile_set_limits(p, 1, 0);
        ck_assert_int_eq(profile_intern_function(p, "app", "main", &id), 0);
        ck_assert_uint_eq(profile_function_address(p, id), 0);
        ck_assert_int_eq(profile_set_function_address(p, id, 0x401000), 0);
        ck_assert_int_eq(profile_set_function_address(p, id, 0x402000), 0);
        ck_assert_uint_eq(profile_function_address(p, id), 0x401000);
        ck_assert_int_eq(profile_intern_function(p, "app", "helper", &other), 0);
        ck_assert_uint_ne(other, id); /* [other], past the limit */
        ck_assert_int_eq(profile_set_function_address(p, other, 0x403000), 0);
        ck_assert_uint_eq(profile_function_address(p, other), 0);
        ck_assert_int_eq(profile_set_function_address(p, 1000, 1), -EINVAL);
        ck_assert_uint_eq(profile_function_address(p, 1000), 0);
}
END_TEST

/* A function's source (FILE:LINE): the first one given stays, "" gives none, [other] has none, a name that is not
 * valid UTF-8 comes back escaped. */
START_TEST(test_function_source)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        uint32_t id, bad, other;

        ck_assert_int_eq(profile_new(99, &p), 0);
        profile_set_limits(p, 2, 0);
        ck_assert_int_eq(profile_intern_function(p, "app", "main", &id), 0);
        ck_assert_ptr_null(profile_function_source(p, id));
        ck_assert_int_eq(profile_set_source(p, id, ""), 0);
        ck_assert_ptr_null(profile_function_source(p, id));
        ck_assert_int_eq(profile_set_source(p, id, "app.c:12"), 0);
        ck_assert_int_eq(profile_set_source(p, id, "other.c:1"), 0);
        ck_assert_str_eq(profile_function_source(p, id), "app.c:12");
        ck_assert_int_eq(profile_intern_function(p, "app", "bad", &bad), 0);
        ck_assert_int_eq(profile_set_source(p, bad, "b\xff" "d.c:3"), 0);
        ck_assert_str_eq(profile_function_source(p, bad), "b\\xffd.c:3");
        ck_assert_int_eq(profile_intern_function(p, "app", "helper", &other), 0);
        ck_assert_int_eq(profile_set_source(p, other, "helper.c:7"), 0);
        ck_assert_ptr_null(profile_function_source(p, other)); /* [other], past the limit */
        ck_assert_int_eq(profile_set_source(p, 1000, "x.c:1"), -EINVAL);
        ck_assert_ptr_null(profile_function_source(p, 1000));
}
END_TEST

START_TEST(test_function_counts)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        uint32_t id[N];
        size_t n;

        p = build(id);
        ck_assert_uint_eq(profile_total(p), 4);
        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_INCLUSIVE, 0, &rows, &n), 0);
        ck_assert_uint_eq(n, 5);

        static const struct {
                const char *name, *module;
                uint64_t inclusive, exclusive;
        } expected[] = {
                { "main", "app", 4, 0 }, { "a", "app", 2, 1 }, { "r", "app", 2, 1 },
                { "b", "libx.so", 1, 1 }, { "c", "libx.so", 1, 1 },
        };
        for (size_t i = 0; i < ELEMENTSOF(expected); i++) {
                const ProfileRow *row = find(rows, n, expected[i].name);
                ck_assert_str_eq(row->module, expected[i].module);
                ck_assert_uint_eq(row->inclusive, expected[i].inclusive);
                ck_assert_uint_eq(row->exclusive, expected[i].exclusive);
        }
        /* Sorted by inclusive, ties by exclusive then name: main, a, r, b, c. */
        ck_assert_str_eq(rows[0].name, "main");
        ck_assert_str_eq(rows[1].name, "a");
        ck_assert_str_eq(rows[2].name, "r");
        ck_assert_str_eq(rows[3].name, "b");
        ck_assert_str_eq(rows[4].name, "c");
        ck_assert_double_eq_tol(profile_percent(rows[0].inclusive, profile_total(p)), 100.0, 1e-9);
        ck_assert_double_eq_tol(profile_percent(rows[1].inclusive, profile_total(p)), 50.0, 1e-9);
        ck_assert_double_eq_tol(profile_percent(rows[1].exclusive, profile_total(p)), 25.0, 1e-9);
}
END_TEST

START_TEST(test_sort_and_limit)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        uint32_t id[N];
        size_t n;

        p = build(id);
        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_EXCLUSIVE, 2, &rows, &n), 0);
        ck_assert_uint_eq(n, 2);
        /* Exclusive ties (1 each) are ordered by inclusive, then by name: a (2), r (2). */
        ck_assert_str_eq(rows[0].name, "a");
        ck_assert_str_eq(rows[1].name, "r");
        ck_assert_int_eq(profile_sort_from_string("exclusive"), PROFILE_SORT_EXCLUSIVE);
        ck_assert_int_eq(profile_sort_from_string("inclusive"), PROFILE_SORT_INCLUSIVE);
        ck_assert_int_eq(profile_sort_from_string("sideways"), _PROFILE_SORT_INVALID);
        ck_assert_int_eq(profile_sort_from_string(NULL), _PROFILE_SORT_INVALID);
}
END_TEST

START_TEST(test_modules)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        uint32_t id[N];
        size_t n;

        p = build(id);
        ck_assert_int_eq(profile_modules(p, PROFILE_SORT_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(rows[0].name, "app");
        ck_assert_uint_eq(rows[0].inclusive, 4);
        ck_assert_uint_eq(rows[0].exclusive, 2);
        ck_assert_str_eq(rows[1].name, "libx.so");
        ck_assert_uint_eq(rows[1].inclusive, 2);
        ck_assert_uint_eq(rows[1].exclusive, 2);
}
END_TEST

START_TEST(test_threads)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        uint32_t id[N];
        size_t n;

        p = build(id);
        ck_assert_int_eq(profile_threads(p, PROFILE_SORT_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(rows[0].tid, 10);
        ck_assert_str_eq(rows[0].name, "worker"); /* a NULL name keeps the previous one */
        ck_assert_uint_eq(rows[0].inclusive, 3);
        ck_assert_uint_eq(rows[0].exclusive, 3);
        ck_assert_uint_eq(rows[1].tid, 11);
        ck_assert_str_eq(rows[1].name, "io");
        ck_assert_uint_eq(rows[1].inclusive, 1);

        /* A thread that renames itself shows its latest name. */
        const uint32_t s[] = { id[MAIN] };
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 11, "io-renamed", s, 1 }), 0);
        free(rows);
        rows = NULL;
        ck_assert_int_eq(profile_threads(p, PROFILE_SORT_INCLUSIVE, &rows, &n), 0);
        ck_assert_str_eq(find(rows, n, "io-renamed")->name, "io-renamed");
        ck_assert_uint_eq(find(rows, n, "io-renamed")->inclusive, 2);
}
END_TEST

/* Names that are not valid UTF-8 of one line (a user's symbol table, an older vprofd's saved file) go into the
 * tables escaped, and the escaped name finds the same function again. */
START_TEST(test_names_escaped)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        const char *module, *function;
        uint32_t id, again, other;
        size_t n;

        ck_assert_int_eq(profile_new(99, &p), 0);
        ck_assert_int_eq(profile_intern_function(p, "x\xff\xfey", "f\xfe\n", &id), 0);
        ck_assert_int_eq(profile_function_name(p, id, &module, &function), 0);
        ck_assert_str_eq(module, "x\\xff\\xfey");
        ck_assert_str_eq(function, "f\\xfe\\n");
        ck_assert_int_eq(profile_intern_function(p, "x\xff\xfey", "f\xfe\n", &again), 0);
        ck_assert_uint_eq(again, id);
        ck_assert_int_eq(profile_intern_function(p, "x\\xff\\xfey", "f\\xfe\\n", &again), 0);
        ck_assert_uint_eq(again, id);
        ck_assert_int_eq(profile_intern_function(p, "x\xff\xfey", "g", &other), 0);
        ck_assert_uint_ne(other, id);

        const uint32_t s[] = { id };
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 7, "t\r\n\xc3", s, 1 }), 0);
        ck_assert_int_eq(profile_threads(p, PROFILE_SORT_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(rows[0].name, "t\\r\\n\\xc3");
}
END_TEST

START_TEST(test_same_name_in_two_modules)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        uint32_t x, y, again;
        size_t n;

        ck_assert_int_eq(profile_new(1000, &p), 0);
        ck_assert_int_eq(profile_intern_function(p, "liba.so", "init", &x), 0);
        ck_assert_int_eq(profile_intern_function(p, "libb.so", "init", &y), 0);
        ck_assert_int_eq(profile_intern_function(p, "liba.so", "init", &again), 0);
        ck_assert_uint_ne(x, y);
        ck_assert_uint_eq(x, again);
        ck_assert_uint_eq(profile_n_functions(p), 2);

        /* Each counts on its own; the stack holds both, so both get the inclusive sample. */
        const uint32_t s[] = { x, y };
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 1, "t", s, 2 }), 0);
        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_EXCLUSIVE, 0, &rows, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(rows[0].module, "liba.so");
        ck_assert_uint_eq(rows[0].exclusive, 1);
        ck_assert_str_eq(rows[1].module, "libb.so");
        ck_assert_uint_eq(rows[1].exclusive, 0);
        ck_assert_uint_eq(rows[1].inclusive, 1);
}
END_TEST

START_TEST(test_empty_stack_and_bad_ids)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        uint32_t f;
        size_t n;

        ck_assert_int_eq(profile_new(1000, &p), 0);
        ck_assert_int_eq(profile_intern_function(p, "m", "f", &f), 0);

        /* A sample without frames counts in the total and its thread, in no function. */
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 5, "t", NULL, 0 }), 0);
        ck_assert_uint_eq(profile_total(p), 1);

        /* An unknown id is refused whole: nothing counts. */
        const uint32_t bad[] = { f, 42 };
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 5, "t", bad, 2 }), -EINVAL);
        ck_assert_uint_eq(profile_total(p), 1);

        /* Interned but never sampled: not a row. */
        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_INCLUSIVE, 0, &rows, &n), 0);
        ck_assert_uint_eq(n, 0);
        free(rows);
        rows = NULL;
        ck_assert_int_eq(profile_threads(p, PROFILE_SORT_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(rows[0].inclusive, 1);
        ck_assert_int_eq(profile_functions(p, _PROFILE_SORT_MAX, 0, &rows, &n), -EINVAL);
}
END_TEST

START_TEST(test_many_samples_recursion_depth)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        uint32_t ids[3], stack[100];
        size_t n;

        ck_assert_int_eq(profile_new(1000, &p), 0);
        ck_assert_int_eq(profile_intern_function(p, "m", "leaf", &ids[0]), 0);
        ck_assert_int_eq(profile_intern_function(p, "m", "even", &ids[1]), 0);
        ck_assert_int_eq(profile_intern_function(p, "m", "odd", &ids[2]), 0);
        /* Mutual recursion 99 deep: leaf, then even/odd alternating. */
        stack[0] = ids[0];
        for (size_t i = 1; i < ELEMENTSOF(stack); i++)
                stack[i] = ids[1 + (i % 2)];
        for (int i = 0; i < 1000; i++)
                ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 1, "t", stack, ELEMENTSOF(stack) }), 0);
        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_INCLUSIVE, 0, &rows, &n), 0);
        ck_assert_uint_eq(n, 3);
        for (size_t i = 0; i < n; i++)
                ck_assert_uint_eq(rows[i].inclusive, 1000);
        ck_assert_uint_eq(find(rows, n, "leaf")->exclusive, 1000);
        ck_assert_uint_eq(find(rows, n, "odd")->exclusive, 0);
}
END_TEST

/* A hand-computed profile of the seed-003 values at 1000 Hz, so one sample period is 1 ms:
 *   #1 user    tid 10  main -> compute
 *   #2 user    tid 10  main -> compute
 *   #3 user    tid 10  main -> r -> r                       (recursion: r counts once)
 *   #4 kernel  tid 10  main -> wait_io -> read -> [sys_read] (kernel mode: read is the user leaf)
 *   #5 blocked tid 10  main -> wait_io -> read, 5 ms
 *   #6 preempted tid 11 main -> r -> r -> compute, 2 ms
 *   #7 user    tid 11  main -> r
 * Session: elapsed 4 user + 1 kernel + 5 + 2 = 12 periods, application 4.
 *               EI  EE  AI  AE  blocked preempted
 *   main        12   0   4   0    5       2
 *   read         6   6   0   0    5       0
 *   wait_io      6   0   0   0    5       0
 *   compute      4   4   2   2    0       2
 *   r            4   2   2   2    0       2
 *   sys_read: sampling values only (inclusive 1, exclusive 1).
 * Modules: app EI 12 EE 6 AI 4 AE 4; libc.so EI 6 EE 6 AI 0 AE 0; [kernel] none.
 * Threads: 10 EI 9 AI 3 (4 samples); 11 EI 3 AI 1 (1 sample). */

enum { V_MAIN, V_COMPUTE, V_R, V_WAIT, V_READ, V_SYS_READ, V_N };

static Profile *build_values(void)
{
        Profile *p = NULL;
        uint32_t id[V_N];

        ck_assert_int_eq(profile_new(1000, &p), 0);
        ck_assert_int_eq(profile_intern_function(p, "app", "main", &id[V_MAIN]), 0);
        ck_assert_int_eq(profile_intern_function(p, "app", "compute", &id[V_COMPUTE]), 0);
        ck_assert_int_eq(profile_intern_function(p, "app", "r", &id[V_R]), 0);
        ck_assert_int_eq(profile_intern_function(p, "app", "wait_io", &id[V_WAIT]), 0);
        ck_assert_int_eq(profile_intern_function(p, "libc.so", "read", &id[V_READ]), 0);
        ck_assert_int_eq(profile_intern_function(p, "[kernel]", "sys_read", &id[V_SYS_READ]), 0);

        const uint32_t s1[] = { id[V_COMPUTE], id[V_MAIN] };
        const uint32_t s3[] = { id[V_R], id[V_R], id[V_MAIN] };
        const uint32_t s4[] = { id[V_SYS_READ], id[V_READ], id[V_WAIT], id[V_MAIN] };
        const uint32_t s5[] = { id[V_READ], id[V_WAIT], id[V_MAIN] };
        const uint32_t s6[] = { id[V_COMPUTE], id[V_R], id[V_R], id[V_MAIN] };
        const uint32_t s7[] = { id[V_R], id[V_MAIN] };
        const ProfileSample samples[] = {
                { .tid = 10, .thread_name = "worker", .frames = s1, .n_frames = 2 },
                { .tid = 10, .frames = s1, .n_frames = 2, .kind = PROFILE_SAMPLE_USER },
                { .tid = 10, .frames = s3, .n_frames = 3 },
                { .tid = 10, .frames = s4, .n_frames = 4, .kind = PROFILE_SAMPLE_KERNEL, .n_kernel_frames = 1 },
                { .tid = 10, .frames = s5, .n_frames = 3, .kind = PROFILE_SAMPLE_BLOCKED, .duration_ns = 5000000 },
                { .tid = 11, .thread_name = "helper", .frames = s6, .n_frames = 4,
                  .kind = PROFILE_SAMPLE_PREEMPTED, .duration_ns = 2000000 },
                { .tid = 11, .frames = s7, .n_frames = 2 },
        };
        for (size_t i = 0; i < ELEMENTSOF(samples); i++)
                ck_assert_int_eq(profile_add_sample(p, &samples[i]), 0);
        return p;
}

typedef struct ExpectedValues {
        const char *name;
        double ei, ee, ai, ae, blocked, preempted;
} ExpectedValues;

static void check_values(const ProfileRow *row, const ExpectedValues *e, const Profile *p)
{
        const ProfileValues *total = profile_total_values(p);
        double session_elapsed = profile_elapsed(total, 1000), session_application = profile_application(total);

        ck_assert_msg(fabs(profile_row_value(row, PROFILE_SORT_ELAPSED_INCLUSIVE, 1000) - e->ei) < 1e-9,
                      "%s: elapsed inclusive %f, expected %f", e->name,
                      profile_row_value(row, PROFILE_SORT_ELAPSED_INCLUSIVE, 1000), e->ei);
        ck_assert_double_eq_tol(profile_row_value(row, PROFILE_SORT_ELAPSED_EXCLUSIVE, 1000), e->ee, 1e-9);
        ck_assert_double_eq_tol(profile_row_value(row, PROFILE_SORT_APPLICATION_INCLUSIVE, 1000), e->ai, 1e-9);
        ck_assert_double_eq_tol(profile_row_value(row, PROFILE_SORT_APPLICATION_EXCLUSIVE, 1000), e->ae, 1e-9);
        ck_assert_double_eq_tol(profile_ns_to_samples(row->inclusive_values.blocked_ns, 1000), e->blocked, 1e-9);
        ck_assert_double_eq_tol(profile_ns_to_samples(row->inclusive_values.preempted_ns, 1000), e->preempted,
                                1e-9);
        /* Seed 003: both elapsed percents against the session's elapsed inclusive, both application ones
         * against its application inclusive. */
        ck_assert_double_eq_tol(100.0 * e->ee / session_elapsed,
                                100.0 * profile_elapsed(&row->exclusive_values, 1000) / session_elapsed, 1e-9);
        ck_assert_double_eq_tol(100.0 * e->ai / session_application,
                                100.0 * profile_application(&row->inclusive_values) / session_application, 1e-9);
}

START_TEST(test_values_functions)
{
        _cleanup_(profile_freep) Profile *p = build_values();
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;

        ck_assert_uint_eq(profile_total(p), 5); /* on-CPU samples: the sampling values' total is unchanged */
        ck_assert_double_eq_tol(profile_elapsed(profile_total_values(p), 1000), 12.0, 1e-9);
        ck_assert_double_eq_tol(profile_application(profile_total_values(p)), 4.0, 1e-9);
        ck_assert_uint_eq(profile_total_values(p)->kernel_samples, 1);
        ck_assert_uint_eq(profile_total_values(p)->blocked_ns, 5000000);
        ck_assert_uint_eq(profile_total_values(p)->preempted_ns, 2000000);

        static const ExpectedValues expected[] = {
                { "main", 12, 0, 4, 0, 5, 2 },   { "read", 6, 6, 0, 0, 5, 0 }, { "wait_io", 6, 0, 0, 0, 5, 0 },
                { "compute", 4, 4, 2, 2, 0, 2 }, { "r", 4, 2, 2, 2, 0, 2 },
        };
        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_ELAPSED_INCLUSIVE, 0, &rows, &n), 0);
        /* The kernel function has no elapsed values: it is not a row of this table. */
        ck_assert_uint_eq(n, ELEMENTSOF(expected));
        for (size_t i = 0; i < n; i++) {
                /* Sorted by elapsed inclusive, ties by elapsed exclusive then name. */
                ck_assert_str_eq(rows[i].name, expected[i].name);
                check_values(&rows[i], &expected[i], p);
        }
        ck_assert_double_eq_tol(100.0 * profile_row_value(&rows[3], PROFILE_SORT_ELAPSED_INCLUSIVE, 1000) / 12.0,
                                100.0 / 3, 1e-9);

        /* The exclusive values add up to the session: every interval has exactly one leaf. */
        double ee = 0, ae = 0;
        for (size_t i = 0; i < n; i++) {
                ee += profile_row_value(&rows[i], PROFILE_SORT_ELAPSED_EXCLUSIVE, 1000);
                ae += profile_row_value(&rows[i], PROFILE_SORT_APPLICATION_EXCLUSIVE, 1000);
        }
        ck_assert_double_eq_tol(ee, 12.0, 1e-9);
        ck_assert_double_eq_tol(ae, 4.0, 1e-9);
}
END_TEST

START_TEST(test_values_sorting)
{
        _cleanup_(profile_freep) Profile *p = build_values();
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;

        /* Application exclusive: compute 2 and r 2 tie, and tie on application inclusive too (2): by name.
         * Then main (0, 4), then read and wait_io (0, 0) by name. */
        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_APPLICATION_EXCLUSIVE, 0, &rows, &n), 0);
        ck_assert_uint_eq(n, 5);
        ck_assert_str_eq(rows[0].name, "compute");
        ck_assert_str_eq(rows[1].name, "r");
        ck_assert_str_eq(rows[2].name, "main");
        ck_assert_str_eq(rows[3].name, "read");
        ck_assert_str_eq(rows[4].name, "wait_io");
        free(rows);
        rows = NULL;

        /* The sampling table is the seed-004 one, kernel frames included, off-CPU intervals excluded. */
        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_EXCLUSIVE, 0, &rows, &n), 0);
        ck_assert_uint_eq(n, 6);
        ck_assert_str_eq(rows[0].name, "compute");
        ck_assert_uint_eq(rows[0].exclusive, 2);
        ck_assert_str_eq(rows[1].name, "r");
        ck_assert_uint_eq(rows[1].exclusive, 2);
        ck_assert_str_eq(rows[2].name, "sys_read");
        ck_assert_uint_eq(rows[2].exclusive, 1);
        ck_assert_str_eq(find(rows, n, "main")->name, "main");
        ck_assert_uint_eq(find(rows, n, "main")->inclusive, 5);
        ck_assert_uint_eq(find(rows, n, "read")->inclusive, 1);
        ck_assert_uint_eq(find(rows, n, "read")->exclusive, 0);

        ck_assert_int_eq(profile_sort_from_string("elapsed-exclusive"), PROFILE_SORT_ELAPSED_EXCLUSIVE);
        ck_assert_str_eq(profile_sort_to_string(PROFILE_SORT_APPLICATION_INCLUSIVE), "application-inclusive");
        ck_assert(profile_sort_is_values(PROFILE_SORT_ELAPSED_INCLUSIVE));
        ck_assert(!profile_sort_is_values(PROFILE_SORT_EXCLUSIVE));
}
END_TEST

START_TEST(test_values_modules_threads)
{
        _cleanup_(profile_freep) Profile *p = build_values();
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;

        ck_assert_int_eq(profile_modules(p, PROFILE_SORT_ELAPSED_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 2);
        check_values(&rows[0], &(ExpectedValues){ "app", 12, 6, 4, 4, 5, 2 }, p);
        ck_assert_str_eq(rows[0].name, "app");
        check_values(&rows[1], &(ExpectedValues){ "libc.so", 6, 6, 0, 0, 5, 0 }, p);
        ck_assert_str_eq(rows[1].name, "libc.so");
        free(rows);
        rows = NULL;

        /* Among the sampling values the kernel module is there. */
        ck_assert_int_eq(profile_modules(p, PROFILE_SORT_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(find(rows, n, "[kernel]")->exclusive, 1);
        free(rows);
        rows = NULL;

        ck_assert_int_eq(profile_threads(p, PROFILE_SORT_ELAPSED_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(rows[0].tid, 10);
        check_values(&rows[0], &(ExpectedValues){ "worker", 9, 9, 3, 3, 5, 0 }, p);
        ck_assert_uint_eq(rows[0].inclusive, 4);
        ck_assert_uint_eq(rows[1].tid, 11);
        ck_assert_str_eq(rows[1].name, "helper");
        check_values(&rows[1], &(ExpectedValues){ "helper", 3, 3, 1, 1, 0, 2 }, p);
}
END_TEST

START_TEST(test_values_without_user_stack)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        uint32_t k;
        size_t n;

        /* At 250 Hz a period is 4 ms: 6 ms blocked is 1.5 periods. */
        ck_assert_int_eq(profile_new(250, &p), 0);
        ck_assert_int_eq(profile_intern_function(p, "[kernel]", "do_exit", &k), 0);
        /* A thread seen only off the CPU, whose user stack could not be read, and a kernel-mode sample
         * without a user stack: both count, under [unknown]. */
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ .tid = 7, .thread_name = "sleeper",
                                                                 .kind = PROFILE_SAMPLE_BLOCKED,
                                                                 .duration_ns = 6000000 }), 0);
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ .tid = 8, .thread_name = "exiting", .frames = &k,
                                                                 .n_frames = 1, .kind = PROFILE_SAMPLE_KERNEL,
                                                                 .n_kernel_frames = 1 }), 0);
        ck_assert_double_eq_tol(profile_elapsed(profile_total_values(p), 250), 2.5, 1e-9);
        ck_assert_double_eq_tol(profile_application(profile_total_values(p)), 0.0, 1e-9);

        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_ELAPSED_INCLUSIVE, 0, &rows, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(rows[0].name, "[unknown]");
        ck_assert_double_eq_tol(profile_row_value(&rows[0], PROFILE_SORT_ELAPSED_EXCLUSIVE, 250), 2.5, 1e-9);
        free(rows);
        rows = NULL;

        /* The sleeper has no sampling row; both have values rows. */
        ck_assert_int_eq(profile_threads(p, PROFILE_SORT_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(rows[0].tid, 8);
        free(rows);
        rows = NULL;
        ck_assert_int_eq(profile_threads(p, PROFILE_SORT_ELAPSED_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(rows[0].tid, 7);
        ck_assert_double_eq_tol(profile_row_value(&rows[0], PROFILE_SORT_ELAPSED_INCLUSIVE, 250), 1.5, 1e-9);

        /* Bad input is refused whole. */
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ .tid = 8, .frames = &k, .n_frames = 1,
                                                                 .n_kernel_frames = 2 }), -EINVAL);
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ .tid = 8, .kind = _PROFILE_SAMPLE_KIND_MAX }),
                         -EINVAL);
        ck_assert_uint_eq(profile_total(p), 1);
        ck_assert_int_eq(profile_new(0, &(Profile *){ NULL }), -EINVAL);
}
END_TEST


/* The distinct stacks of build(): four, one sample each, in a stable order. */
START_TEST(test_stacks)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileStackRow *rows = NULL;
        const char *module, *function;
        uint32_t id[N];
        size_t n;

        p = build(id);
        const uint32_t again[] = { id[A], id[MAIN] };
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 10, NULL, again, 2 }), 0);
        ck_assert_uint_eq(profile_n_stacks(p), 4);
        ck_assert_int_eq(profile_stacks(p, 0, &rows, &n), 0);
        ck_assert_uint_eq(n, 4);
        /* main -> a twice, first; then by depth. */
        ck_assert_uint_eq(rows[0].samples, 2);
        ck_assert_uint_eq(rows[0].n_frames, 2);
        ck_assert_uint_eq(rows[0].frames[0], id[A]);
        ck_assert_uint_eq(rows[1].n_frames, 3);
        ck_assert_uint_eq(rows[3].n_frames, 5);
        ck_assert_uint_eq(rows[0].values.user_samples, 2);
        ck_assert_int_eq(profile_function_name(p, rows[3].frames[0], &module, &function), 0);
        ck_assert_str_eq(module, "libx.so");
        ck_assert_str_eq(function, "c");
        ck_assert_int_eq(profile_function_name(p, 999, &module, &function), -ENOENT);
        ck_assert_uint_eq(profile_other_stack_samples(p), 0);
}
END_TEST

/* Lines of functions (Python frames at their instructions' lines): frames of their own in the stacks, counted in
 * their functions, recursion through two lines of one function once; the stacks that differ only in lines are
 * one row, off-CPU time of a line's stack without samples included. */
START_TEST(test_lines_of_functions)
{
        _cleanup_(profile_freep) Profile *p = NULL, *small = NULL;
        _cleanup_free_ ProfileStackRow *stacks = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        uint32_t main_id, loop, loop10, loop12, again, r, r5, r7, f, f5, g1, stack_id;
        const uint32_t *frames;
        size_t n, n_frames, n_kernel;

        ck_assert_int_eq(profile_new(1000, &p), 0);
        ck_assert_int_eq(profile_intern_function(p, "app.py", "main", &main_id), 0);
        ck_assert_int_eq(profile_intern_line(p, "app.py", "loop", 10, &loop10), 0);
        ck_assert_int_eq(profile_intern_line(p, "app.py", "loop", 12, &loop12), 0);
        ck_assert_int_eq(profile_intern_line(p, "app.py", "loop", 10, &again), 0);
        ck_assert_int_eq(profile_intern_line(p, "app.py", "loop", 0, &loop), 0);
        ck_assert_int_eq(profile_intern_line(p, "app.py", "r", 5, &r5), 0);
        ck_assert_int_eq(profile_intern_line(p, "app.py", "r", 7, &r7), 0);
        ck_assert_int_eq(profile_intern_function(p, "app.py", "r", &r), 0);
        ck_assert_uint_eq(again, loop10);
        ck_assert_uint_ne(loop10, loop12);
        ck_assert_uint_eq(profile_function_whole(p, loop10), loop);
        ck_assert_uint_eq(profile_function_whole(p, loop12), loop);
        ck_assert_uint_eq(profile_function_whole(p, loop), loop);
        ck_assert_uint_eq(profile_function_whole(p, r7), r);
        ck_assert_uint_eq(profile_function_line(p, loop12), 12);
        ck_assert_uint_eq(profile_function_line(p, loop), 0);
        ck_assert_uint_eq(profile_n_functions(p), 7);

        const uint32_t s1[] = { loop10, main_id }, s2[] = { loop12, main_id }, s3[] = { r7, r5, main_id };
        ck_assert_int_eq(profile_add_sample_stack(p, &(ProfileSample){ 1, NULL, s1, 2 }, &stack_id), 0);
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 1, NULL, s2, 2 }), 0);
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 1, NULL, s2, 2 }), 0);
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 1, NULL, s3, 3 }), 0);
        /* Off the CPU at a third line: a stack without samples. */
        const uint32_t s4[] = { r5, main_id };
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ .tid = 1, .frames = s4, .n_frames = 2,
                                                                 .kind = PROFILE_SAMPLE_BLOCKED,
                                                                 .duration_ns = 5000 }),
                         0);
        const uint32_t s5[] = { loop12, main_id };
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ .tid = 1, .frames = s5, .n_frames = 2,
                                                                 .kind = PROFILE_SAMPLE_BLOCKED,
                                                                 .duration_ns = 7000 }),
                         0);

        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_INCLUSIVE, 0, &rows, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_str_eq(rows[0].name, "main");
        ck_assert_uint_eq(rows[0].inclusive, 4);
        ck_assert_str_eq(rows[1].name, "loop");
        ck_assert_uint_eq(rows[1].inclusive, 3);
        ck_assert_uint_eq(rows[1].exclusive, 3);
        ck_assert_uint_eq(rows[1].inclusive_values.blocked_ns, 7000);
        ck_assert_str_eq(rows[2].name, "r");
        ck_assert_uint_eq(rows[2].inclusive, 1); /* r at line 7 called from r at line 5: once */
        ck_assert_uint_eq(rows[2].exclusive, 1);
        ck_assert_uint_eq(rows[2].inclusive_values.blocked_ns, 5000);

        /* The stacks: loop's two lines one row with the off-CPU time of one of them; r's blocked stack has no
         * sample and is not listed (as without lines). */
        ck_assert_uint_eq(profile_n_stacks(p), 4); /* s5 is s2 */
        ck_assert_int_eq(profile_stacks(p, 0, &stacks, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(stacks[0].samples, 3);
        ck_assert_uint_eq(stacks[0].n_frames, 2);
        ck_assert_uint_eq(stacks[0].frames[0], loop);
        ck_assert_uint_eq(stacks[0].frames[1], main_id);
        ck_assert_uint_eq(stacks[0].values.blocked_ns, 7000);
        ck_assert_uint_eq(stacks[1].samples, 1);
        ck_assert_uint_eq(stacks[1].frames[0], r);
        ck_assert_uint_eq(stacks[1].frames[1], r);
        /* A stack's own frames keep their lines. */
        ck_assert_int_eq(profile_stack_frames(p, stack_id, &frames, &n_frames, &n_kernel), 0);
        ck_assert_uint_eq(n_frames, 2);
        ck_assert_uint_eq(frames[0], loop10);

        /* Past max_functions a line is its function, and a new function [other]: no count lost. */
        ck_assert_int_eq(profile_new(1000, &small), 0);
        profile_set_limits(small, 1, 0);
        ck_assert_int_eq(profile_intern_line(small, "m.py", "f", 5, &f5), 0);
        ck_assert_int_eq(profile_intern_function(small, "m.py", "f", &f), 0);
        ck_assert_uint_eq(f5, f);
        ck_assert_int_eq(profile_intern_line(small, "m.py", "g", 1, &g1), 0);
        ck_assert_uint_eq(profile_function_whole(small, g1), g1);
        ck_assert_uint_eq(profile_function_line(small, g1), 0);
        ck_assert_uint_ne(g1, f);
        /* An unknown id is its own function, at no line. */
        ck_assert_uint_eq(profile_function_whole(small, 999), 999);
        ck_assert_uint_eq(profile_function_line(small, 999), 0);
}
END_TEST

/* Past the limits every total stays exact: new functions count as [other], new stacks in the other stack. */
START_TEST(test_limits_fold_into_other)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        _cleanup_free_ ProfileStackRow *stacks = NULL;
        uint32_t main_id, f[6], unknown_stack_ids[1];
        uint64_t stack_samples = 0;
        char name[16];
        size_t n;

        ck_assert_int_eq(profile_new(100, &p), 0);
        profile_set_limits(p, 3, 4);
        ck_assert_int_eq(profile_intern_function(p, "app", "main", &main_id), 0);
        for (size_t i = 0; i < ELEMENTSOF(f); i++) {
                snprintf(name, sizeof(name), "f%zu", i);
                ck_assert_int_eq(profile_intern_function(p, "app", name, &f[i]), 0);
        }
        /* main, f0, f1 fit; f2..f5 are [other], one id. */
        ck_assert_uint_ne(f[1], f[2]);
        ck_assert_uint_eq(f[2], f[5]);
        /* An existing function keeps its id past the limit. */
        ck_assert_int_eq(profile_intern_function(p, "app", "f0", &unknown_stack_ids[0]), 0);
        ck_assert_uint_eq(unknown_stack_ids[0], f[0]);

        /* 6 stacks main -> fi, each i+1 times; then one sample without a user stack ([unknown] is not
         * folded although the function limit is reached). */
        for (size_t i = 0; i < ELEMENTSOF(f); i++)
                for (size_t k = 0; k <= i; k++) {
                        const uint32_t frames[] = { f[i], main_id, f[k % 2] };
                        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 1, NULL, frames, 3 }), 0);
                }
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 1, NULL, NULL, 0 }), 0);
        ck_assert_uint_eq(profile_total(p), 22);

        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_EXCLUSIVE, 0, &rows, &n), 0);
        /* [other] holds f2..f5's exclusive samples: 3 + 4 + 5 + 6. */
        ck_assert_str_eq(rows[0].name, PROFILE_OTHER);
        ck_assert_str_eq(rows[0].module, PROFILE_OTHER);
        ck_assert_uint_eq(rows[0].exclusive, 18);
        ck_assert_uint_eq(profile_other_function_samples(p), 18);
        uint64_t exclusive = 0;
        for (size_t i = 0; i < n; i++)
                exclusive += rows[i].exclusive;
        ck_assert_uint_eq(exclusive, 21); /* the frameless sample counts for the total only */

        /* Distinct stacks: (f0,main,f0) (f1,main,f0) (f1,main,f1) (other,main,f0) ... the cap is 4. */
        ck_assert_uint_eq(profile_n_stacks(p), 4);
        ck_assert_int_eq(profile_stacks(p, 0, &stacks, &n), 0);
        for (size_t i = 0; i < n; i++)
                stack_samples += stacks[i].samples;
        ck_assert_uint_eq(stack_samples + profile_other_stack_samples(p), 22);
        ck_assert_uint_gt(profile_other_stack_samples(p), 0);
}
END_TEST

/* profile_memory(): what the tables asked of malloc() grows with each new entry by at least its names and
 * frames, and not at all when samples only count on entries that exist. */
START_TEST(test_memory)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        uint32_t id[N], far_id, frames[200];
        char name[1001];
        size_t empty, before, after;

        ck_assert_int_eq(profile_new(1000, &p), 0);
        empty = profile_memory(p);
        ck_assert_uint_gt(empty, 0);
        profile_free(TAKE_PTR(p));

        p = build(id);
        before = profile_memory(p);
        /* 13 frames, 5 function names, 2 modules and 2 thread names at least. */
        ck_assert_uint_ge(before, empty + 13 * sizeof(uint32_t) + strlen("mainabrc") + 5 + strlen("applibx.so") + 2 +
                                          strlen("workerio") + 2);

        /* Samples on known stacks and threads: nothing new to keep. */
        const uint32_t s2[] = { id[A], id[MAIN] };
        for (int i = 0; i < 1000; i++)
                ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 10, "worker", s2, 2 }), 0);
        ck_assert_uint_eq(profile_memory(p), before);

        /* A long name, then a deep stack. */
        memset(name, 'x', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        ck_assert_int_eq(profile_intern_function(p, "app", name, &far_id), 0);
        after = profile_memory(p);
        ck_assert_uint_ge(after, before + sizeof(name));
        for (size_t i = 0; i < ELEMENTSOF(frames); i++)
                frames[i] = i % 2 ? far_id : id[MAIN];
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ 10, "worker", frames, ELEMENTSOF(frames) }), 0);
        ck_assert_uint_ge(profile_memory(p), after + sizeof(frames));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("profile");
        TCase *tc = tcase_create("counting");

        tcase_add_test(tc, test_function_counts);
        tcase_add_test(tc, test_sort_and_limit);
        tcase_add_test(tc, test_modules);
        tcase_add_test(tc, test_threads);
        tcase_add_test(tc, test_same_name_in_two_modules);
        tcase_add_test(tc, test_names_escaped);
        tcase_add_test(tc, test_empty_stack_and_bad_ids);
        tcase_add_test(tc, test_many_samples_recursion_depth);
        tcase_add_test(tc, test_stacks);
        tcase_add_test(tc, test_lines_of_functions);
        tcase_add_test(tc, test_limits_fold_into_other);
        tcase_add_test(tc, test_memory);
        suite_add_tcase(s, tc);

        tc = tcase_create("elapsed and application values");
        tcase_add_test(tc, test_values_functions);
        tcase_add_test(tc, test_values_sorting);
        tcase_add_test(tc, test_values_modules_threads);
        tcase_add_test(tc, test_values_without_user_stack);
        tcase_add_test(tc, test_function_address);
        tcase_add_test(tc, test_function_source);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
