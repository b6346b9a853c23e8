/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>

#include "check-main.h"
#include "macros.h"
#include "window-arg.h"

/* vprofctl's --window argument. */

START_TEST(test_durations)
{
        static const struct {
                const char *s;
                uint64_t usec;
        } good[] = {
                { "all", 0 },
                { "1s", 1000000 },
                { "10s", 10000000 },
                { "10", 10000000 },
                { "1m", 60000000 },
                { "1min", 60000000 },
                { "1.5m", 90000000 },
                { "2h", UINT64_C(7200000000) },
                { "500ms", 500000 },
                { "0.5", 500000 },
                { "1us", 1 },
                { "0.1us", 1 }, /* rounded up to a microsecond */
                { "1.000001s", 1000001 },
                { "0.000001h", 3600 },
                { "24h", UINT64_C(86400000000) },
                { "86400", UINT64_C(86400000000) },
        };
        uint64_t usec;

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                ck_assert_msg(window_arg_parse(good[i].s, &usec) == 0, "%s refused", good[i].s);
                ck_assert_msg(usec == good[i].usec, "%s: %llu", good[i].s, (unsigned long long)usec);
        }
}
END_TEST

START_TEST(test_refused)
{
        static const char *const invalid[] = { "", "s", "-1s", "+1s", " 1s", "1s ", "1 s", "1.s", ".5s", "1e3",
                                               "1sec", "1S", "1d", "10x", "ALL", "all1", "1,5s",
                                               "0.0000001s" };
        static const char *const out_of_range[] = { "0", "0s", "0.0ms", "24.000001h", "86401s", "25h",
                                                    "99999999999999999999999s", "1441m" };
        uint64_t usec = 42;

        for (size_t i = 0; i < ELEMENTSOF(invalid); i++)
                ck_assert_msg(window_arg_parse(invalid[i], &usec) == -EINVAL, "'%s' not refused as invalid",
                              invalid[i]);
        for (size_t i = 0; i < ELEMENTSOF(out_of_range); i++)
                ck_assert_msg(window_arg_parse(out_of_range[i], &usec) == -ERANGE, "'%s' not out of range",
                              out_of_range[i]);
        ck_assert_uint_eq(usec, 42);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("window-arg");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_durations);
        tcase_add_test(tc, test_refused);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
