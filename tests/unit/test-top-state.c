/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>

#include "check-main.h"
#include "time-util.h"
#include "top-lost.h"
#include "top-state.h"

/* The keys of vprofctl top, without a terminal, and what it knows of the samples lost in a window. */

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

START_TEST(test_lost_history)
{
        static TopLostHistory h;
        uint64_t lost = 42, span = 42;

        ck_assert(!top_lost_history_since(&h, 10, &lost, &span));
        top_lost_history_add(&h, 10 * USEC_PER_SEC, 0);
        top_lost_history_add(&h, 11 * USEC_PER_SEC, 2);
        top_lost_history_add(&h, 12 * USEC_PER_SEC, 5);
        /* From the last reading at or before the window's start: a span that covers the window. */
        ck_assert(top_lost_history_since(&h, 10 * USEC_PER_SEC + 500000, &lost, &span));
        ck_assert_uint_eq(lost, 5);
        ck_assert_uint_eq(span, 2 * USEC_PER_SEC);
        ck_assert(top_lost_history_since(&h, 11 * USEC_PER_SEC, &lost, &span));
        ck_assert_uint_eq(lost, 3);
        ck_assert_uint_eq(span, USEC_PER_SEC);
        /* Nothing read that early: unknown, the outputs untouched. */
        lost = span = 42;
        ck_assert(!top_lost_history_since(&h, 9 * USEC_PER_SEC, &lost, &span));
        ck_assert_uint_eq(lost, 42);
        ck_assert_uint_eq(span, 42);

        /* A restarted daemon counts from 0 again: unknown rather than a wrapped difference. */
        top_lost_history_add(&h, 13 * USEC_PER_SEC, 1);
        ck_assert(!top_lost_history_since(&h, 11 * USEC_PER_SEC, &lost, &span));
        /* Even once it has counted past the reading before. */
        top_lost_history_add(&h, 14 * USEC_PER_SEC, 9);
        ck_assert(!top_lost_history_since(&h, 11 * USEC_PER_SEC, &lost, &span));
        /* From after the restart on, known again. */
        ck_assert(top_lost_history_since(&h, 13 * USEC_PER_SEC, &lost, &span));
        ck_assert_uint_eq(lost, 8);

        /* Full: the oldest readings go. */
        h = (TopLostHistory){};
        for (uint64_t i = 0; i < TOP_LOST_HISTORY_MAX + 1000; i++)
                top_lost_history_add(&h, i * USEC_PER_SEC, i);
        ck_assert_uint_eq(h.n, TOP_LOST_HISTORY_MAX);
        ck_assert(!top_lost_history_since(&h, 999 * USEC_PER_SEC, &lost, &span));
        ck_assert(top_lost_history_since(&h, 1000 * USEC_PER_SEC, &lost, &span));
        ck_assert_uint_eq(lost, TOP_LOST_HISTORY_MAX - 1);
        ck_assert_uint_eq(span, (TOP_LOST_HISTORY_MAX - 1) * USEC_PER_SEC);
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
        tcase_add_test(tc, test_lost_history);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
