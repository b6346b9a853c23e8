/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
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

        ck_assert_int_eq(profile_new(&p), 0);
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
        ck_assert_int_eq(profile_modules(p, &rows, &n), 0);
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
        ck_assert_int_eq(profile_threads(p, &rows, &n), 0);
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
        ck_assert_int_eq(profile_threads(p, &rows, &n), 0);
        ck_assert_str_eq(find(rows, n, "io-renamed")->name, "io-renamed");
        ck_assert_uint_eq(find(rows, n, "io-renamed")->inclusive, 2);
}
END_TEST

START_TEST(test_same_name_in_two_modules)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        uint32_t x, y, again;
        size_t n;

        ck_assert_int_eq(profile_new(&p), 0);
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

        ck_assert_int_eq(profile_new(&p), 0);
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
        ck_assert_int_eq(profile_threads(p, &rows, &n), 0);
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

        ck_assert_int_eq(profile_new(&p), 0);
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

int main(void)
{
        Suite *s = suite_create("profile");
        TCase *tc = tcase_create("counting");

        tcase_add_test(tc, test_function_counts);
        tcase_add_test(tc, test_sort_and_limit);
        tcase_add_test(tc, test_modules);
        tcase_add_test(tc, test_threads);
        tcase_add_test(tc, test_same_name_in_two_modules);
        tcase_add_test(tc, test_empty_stack_and_bad_ids);
        tcase_add_test(tc, test_many_samples_recursion_depth);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
