/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>

#include "check-main.h"
#include "time-util.h"
#include "top-state.h"

/* The keys of vprofctl top, without a terminal. */

START_TEST(test_window_cycle)
{
        TopState s;

        top_state_init(&s, TOP_TARGET_PROCESS, PROFILE_SORT_EXCLUSIVE, 0);
        /* all -> 1s -> 10s -> 60s -> all */
        ck_assert_int_eq(top_state_key(&s, 'w'), TOP_ACTION_FETCH);
        ck_assert_uint_eq(s.window_usec, USEC_PER_SEC);
        top_state_key(&s, 'w');
        ck_assert_uint_eq(s.window_usec, 10 * USEC_PER_SEC);
        top_state_key(&s, 'w');
        ck_assert_uint_eq(s.window_usec, 60 * USEC_PER_SEC);
        top_state_key(&s, 'w');
        ck_assert_uint_eq(s.window_usec, 0);

        /* A window of --window outside the cycle goes to the next longer one, or to all. */
        top_state_init(&s, TOP_TARGET_PROCESS, PROFILE_SORT_EXCLUSIVE, 30 * USEC_PER_SEC);
        top_state_next_window(&s);
        ck_assert_uint_eq(s.window_usec, 60 * USEC_PER_SEC);
        top_state_init(&s, TOP_TARGET_PROCESS, PROFILE_SORT_EXCLUSIVE, 600 * USEC_PER_SEC);
        top_state_next_window(&s);
        ck_assert_uint_eq(s.window_usec, 0);
        top_state_init(&s, TOP_TARGET_PROCESS, PROFILE_SORT_EXCLUSIVE, 2 * USEC_PER_SEC);
        top_state_next_window(&s);
        ck_assert_uint_eq(s.window_usec, 10 * USEC_PER_SEC);
}
END_TEST

START_TEST(test_sort_and_tables)
{
        TopState s;

        top_state_init(&s, TOP_TARGET_PROCESS, PROFILE_SORT_EXCLUSIVE, 0);
        ck_assert_int_eq(s.table, REPORT_FUNCTIONS);
        ck_assert_int_eq(top_state_key(&s, 's'), TOP_ACTION_FETCH);
        ck_assert_int_eq(s.sort, PROFILE_SORT_INCLUSIVE);
        top_state_key(&s, 's');
        ck_assert_int_eq(s.sort, PROFILE_SORT_EXCLUSIVE);

        ck_assert_int_eq(top_state_key(&s, 'm'), TOP_ACTION_FETCH);
        ck_assert_int_eq(s.table, REPORT_MODULES);
        /* The table shown already: nothing to do. */
        ck_assert_int_eq(top_state_key(&s, 'm'), TOP_ACTION_NONE);
        ck_assert_int_eq(top_state_key(&s, 't'), TOP_ACTION_FETCH);
        ck_assert_int_eq(s.table, REPORT_THREADS);
        ck_assert_int_eq(top_state_key(&s, 'f'), TOP_ACTION_FETCH);
        ck_assert_int_eq(s.table, REPORT_FUNCTIONS);
        ck_assert_ptr_null(s.notice);
}
END_TEST

START_TEST(test_without_target)
{
        TopState s;

        top_state_init(&s, TOP_TARGET_ALL, PROFILE_SORT_EXCLUSIVE, 0);
        /* Every target's rows are its processes; modules need one target. */
        ck_assert_int_eq(top_state_key(&s, 't'), TOP_ACTION_FETCH);
        ck_assert_int_eq(s.table, REPORT_PROCESSES);
        ck_assert_int_eq(top_state_key(&s, 'm'), TOP_ACTION_DRAW);
        ck_assert_int_eq(s.table, REPORT_PROCESSES);
        ck_assert_ptr_nonnull(s.notice);
        /* The next key takes the notice away, even one that does nothing else. */
        ck_assert_int_eq(top_state_key(&s, 'x'), TOP_ACTION_DRAW);
        ck_assert_ptr_null(s.notice);
        ck_assert_int_eq(top_state_key(&s, 'x'), TOP_ACTION_NONE);

        /* A unit or a cgroup: modules, and processes for threads. */
        top_state_init(&s, TOP_TARGET_GROUP, PROFILE_SORT_EXCLUSIVE, 0);
        ck_assert_int_eq(top_state_key(&s, 'm'), TOP_ACTION_FETCH);
        ck_assert_int_eq(s.table, REPORT_MODULES);
        ck_assert_int_eq(top_state_key(&s, 't'), TOP_ACTION_FETCH);
        ck_assert_int_eq(s.table, REPORT_PROCESSES);
        ck_assert_ptr_null(s.notice);
}
END_TEST

START_TEST(test_pause_help_quit)
{
        TopState s;

        top_state_init(&s, TOP_TARGET_PROCESS, PROFILE_SORT_EXCLUSIVE, 0);
        ck_assert_int_eq(top_state_key(&s, 'p'), TOP_ACTION_DRAW);
        ck_assert(s.paused);
        /* Paused, a key still acts at once. */
        ck_assert_int_eq(top_state_key(&s, 's'), TOP_ACTION_FETCH);
        ck_assert(s.paused);
        ck_assert_int_eq(top_state_key(&s, 'p'), TOP_ACTION_FETCH);
        ck_assert(!s.paused);

        ck_assert_int_eq(top_state_key(&s, 'h'), TOP_ACTION_DRAW);
        ck_assert(s.help);
        /* Any key closes the help, q included, and does nothing else. */
        ck_assert_int_eq(top_state_key(&s, 'q'), TOP_ACTION_DRAW);
        ck_assert(!s.help);
        ck_assert_int_eq(top_state_key(&s, '?'), TOP_ACTION_DRAW);
        ck_assert(s.help);
        ck_assert_int_eq(top_state_key(&s, 'w'), TOP_ACTION_DRAW);
        ck_assert_uint_eq(s.window_usec, 0);
        ck_assert(!s.help);

        ck_assert_int_eq(top_state_key(&s, 'q'), TOP_ACTION_QUIT);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("top-state");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_window_cycle);
        tcase_add_test(tc, test_sort_and_tables);
        tcase_add_test(tc, test_without_target);
        tcase_add_test(tc, test_pause_help_quit);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
