/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include "check-main.h"
#include "duration.h"
#include "time-util.h"

/* The --window values of vprofctl report and top. */

static uint64_t parsed(const char *s)
{
        uint64_t usec = UINT64_MAX;

        ck_assert_msg(duration_parse(s, &usec) == 0, "'%s' refused", s);
        return usec;
}

static void refused(const char *s, int error)
{
        uint64_t usec = 42;

        ck_assert_int_eq(duration_parse(s, &usec), error);
        /* Left untouched on failure. */
        ck_assert_uint_eq(usec, 42);
}

START_TEST(test_parse)
{
        ck_assert_uint_eq(parsed("all"), 0);
        ck_assert_uint_eq(parsed("1s"), USEC_PER_SEC);
        ck_assert_uint_eq(parsed("10s"), 10 * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("60s"), 60 * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("600"), 600 * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("5m"), 300 * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("2h"), 7200 * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("007s"), 7 * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("2678400s"), DURATION_MAX_SEC * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("744h"), DURATION_MAX_SEC * USEC_PER_SEC);
        /* Parts of a second, rounded up to whole seconds. */
        ck_assert_uint_eq(parsed("500ms"), USEC_PER_SEC);
        ck_assert_uint_eq(parsed("1ms"), USEC_PER_SEC);
        ck_assert_uint_eq(parsed("1000ms"), USEC_PER_SEC);
        ck_assert_uint_eq(parsed("1001ms"), 2 * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("1us"), USEC_PER_SEC);
        ck_assert_uint_eq(parsed("1.5s"), 2 * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("0.5"), USEC_PER_SEC);
        ck_assert_uint_eq(parsed("1.000001s"), 2 * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("1.5m"), 90 * USEC_PER_SEC);
        ck_assert_uint_eq(parsed("0.1us"), USEC_PER_SEC);
        ck_assert_uint_eq(parsed("2678399.5s"), DURATION_MAX_SEC * USEC_PER_SEC);
}
END_TEST

START_TEST(test_refuse)
{
        refused("", -EINVAL);
        refused("s", -EINVAL);
        refused("-1s", -EINVAL);
        refused("+1s", -EINVAL);
        refused(" 1s", -EINVAL);
        refused("1s ", -EINVAL);
        refused("1.s", -EINVAL);
        refused(".5s", -EINVAL);
        refused("1,5s", -EINVAL);
        refused("0.0000001s", -EINVAL);
        refused("1e3", -EINVAL);
        refused("1 s", -EINVAL);
        refused("1d", -EINVAL);
        refused("1S", -EINVAL);
        refused("1sec", -EINVAL);
        refused("All", -EINVAL);
        refused("all1", -EINVAL);
        refused("0x10", -EINVAL);
        /* 0 would say "all" in another way; the longest window is a month. */
        refused("0", -ERANGE);
        refused("0s", -ERANGE);
        refused("0.0ms", -ERANGE);
        refused("2678400.000001s", -ERANGE);
        refused("2678401s", -ERANGE);
        refused("745h", -ERANGE);
        refused("44641m", -ERANGE);
        refused("99999999999999999999999999s", -ERANGE);
        refused("18446744073709551616", -ERANGE);
}
END_TEST

START_TEST(test_format)
{
        char buf[32];

        duration_format(buf, sizeof(buf), 0);
        ck_assert_str_eq(buf, "all");
        duration_format(buf, sizeof(buf), USEC_PER_SEC);
        ck_assert_str_eq(buf, "1s");
        duration_format(buf, sizeof(buf), 60 * USEC_PER_SEC);
        ck_assert_str_eq(buf, "60s");
        duration_format(buf, sizeof(buf), 1500 * USEC_PER_SEC / 1000);
        ck_assert_str_eq(buf, "1s");
        /* What duration_parse() reads back. */
        ck_assert_uint_eq(parsed("300s"), 5 * 60 * USEC_PER_SEC);
        duration_format(buf, sizeof(buf), parsed("5m"));
        ck_assert_str_eq(buf, "300s");
}
END_TEST

/* A diff's base: DURATION or DURATION@AGO. */
START_TEST(test_parse_at)
{
        uint64_t window, ago;
        bool has_ago;

        ck_assert_int_eq(duration_parse_at("60s", &window, &ago, &has_ago), 0);
        ck_assert_uint_eq(window, 60 * USEC_PER_SEC);
        ck_assert_uint_eq(ago, 0);
        ck_assert(!has_ago);
        ck_assert_int_eq(duration_parse_at("10s@20s", &window, &ago, &has_ago), 0);
        ck_assert_uint_eq(window, 10 * USEC_PER_SEC);
        ck_assert_uint_eq(ago, 20 * USEC_PER_SEC);
        ck_assert(has_ago);
        ck_assert_int_eq(duration_parse_at("5m@0", &window, &ago, &has_ago), 0);
        ck_assert_uint_eq(window, 300 * USEC_PER_SEC);
        ck_assert_uint_eq(ago, 0);
        ck_assert(has_ago);
        ck_assert_int_eq(duration_parse_at("1@1500ms", &window, &ago, &has_ago), 0);
        ck_assert_uint_eq(ago, 2 * USEC_PER_SEC);
        ck_assert_int_lt(duration_parse_at("all", &window, &ago, &has_ago), 0);
        ck_assert_int_lt(duration_parse_at("all@10s", &window, &ago, &has_ago), 0);
        ck_assert_int_lt(duration_parse_at("10s@", &window, &ago, &has_ago), 0);
        ck_assert_int_lt(duration_parse_at("@10s", &window, &ago, &has_ago), 0);
        ck_assert_int_lt(duration_parse_at("10s@x", &window, &ago, &has_ago), 0);
        ck_assert_int_lt(duration_parse_at("10s@20s@30s", &window, &ago, &has_ago), 0);
        ck_assert_int_lt(duration_parse_at("", &window, &ago, &has_ago), 0);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("duration");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse);
        tcase_add_test(tc, test_refuse);
        tcase_add_test(tc, test_format);
        tcase_add_test(tc, test_parse_at);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
