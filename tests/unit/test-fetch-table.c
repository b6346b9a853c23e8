/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <stdio.h>

#include "check-main.h"
#include "fetch-table.h"

START_TEST(test_asked_once)
{
        _cleanup_(fetch_table_freep) FetchTable *t = NULL;
        const char *path = "x";

        ck_assert_int_eq(fetch_table_new(4, &t), 0);
        ck_assert_int_eq(fetch_table_state(t, "abcd", &path), FETCH_UNKNOWN);
        ck_assert_ptr_null(path);

        /* The first request starts a fetch, every later one only finds it. */
        ck_assert_int_eq(fetch_table_request(t, "abcd", "/usr/bin/a"), 1);
        ck_assert_int_eq(fetch_table_request(t, "abcd", "/usr/bin/other"), 0);
        ck_assert_int_eq(fetch_table_state(t, "abcd", NULL), FETCH_PENDING);
        ck_assert_str_eq(fetch_table_label(t, "abcd"), "/usr/bin/a");
        ck_assert_uint_eq(fetch_table_pending(t), 1);

        ck_assert_int_eq(fetch_table_complete(t, "abcd", "/cache/abcd/debuginfo"), 0);
        ck_assert_int_eq(fetch_table_state(t, "abcd", &path), FETCH_DONE);
        ck_assert_str_eq(path, "/cache/abcd/debuginfo");
        ck_assert_uint_eq(fetch_table_pending(t), 0);
        ck_assert_int_eq(fetch_table_request(t, "abcd", NULL), 0);
        /* Answered once: a second answer is refused. */
        ck_assert_int_eq(fetch_table_complete(t, "abcd", NULL), -ENOENT);
        ck_assert_int_eq(fetch_table_complete(t, "never-asked", NULL), -ENOENT);
}
END_TEST

START_TEST(test_failure_is_remembered)
{
        _cleanup_(fetch_table_freep) FetchTable *t = NULL;
        const char *path = "x";

        ck_assert_int_eq(fetch_table_new(4, &t), 0);
        ck_assert_int_eq(fetch_table_request(t, "beef", NULL), 1);
        ck_assert_ptr_null(fetch_table_label(t, "beef"));
        ck_assert_int_eq(fetch_table_complete(t, "beef", NULL), 0);
        ck_assert_int_eq(fetch_table_state(t, "beef", &path), FETCH_FAILED);
        ck_assert_ptr_null(path);
        /* Not retried at every sample. */
        ck_assert_int_eq(fetch_table_request(t, "beef", NULL), 0);
        ck_assert_str_eq(fetch_state_to_string(FETCH_FAILED), "failed");
        ck_assert_str_eq(fetch_state_to_string(FETCH_PENDING), "pending");
        ck_assert_ptr_null(fetch_state_to_string(-1));
}
END_TEST

START_TEST(test_bounded)
{
        _cleanup_(fetch_table_freep) FetchTable *t = NULL;
        char key[16];

        ck_assert_int_eq(fetch_table_new(3, &t), 0);
        for (int i = 0; i < 3; i++) {
                snprintf(key, sizeof(key), "k%d", i);
                ck_assert_int_eq(fetch_table_request(t, key, NULL), 1);
        }
        /* Full: refused without a trace, so that it may be asked again once there is room. */
        ck_assert_int_eq(fetch_table_request(t, "k3", NULL), -ENOSPC);
        ck_assert_int_eq(fetch_table_state(t, "k3", NULL), FETCH_UNKNOWN);
        /* Known keys are still answered. */
        ck_assert_int_eq(fetch_table_request(t, "k0", NULL), 0);

        ck_assert_int_eq(fetch_table_complete(t, "k1", NULL), 0);
        ck_assert_int_eq(fetch_table_request(t, "k3", NULL), 1);
        ck_assert_uint_eq(fetch_table_pending(t), 3);
        ck_assert_int_eq(fetch_table_new(0, &(FetchTable *){ NULL }), -EINVAL);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("fetch-table");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_asked_once);
        tcase_add_test(tc, test_failure_is_remembered);
        tcase_add_test(tc, test_bounded);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
