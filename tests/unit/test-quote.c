/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "macros.h"
#include "quote.h"

/* Bytes of UTF-8, checked as a D-Bus implementation would. */
static bool valid_utf8(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        while (*p) {
                size_t n = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 ? 2 : 0;

                if (n == 0)
                        return false;
                for (size_t i = 1; i < n; i++)
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                p += n;
        }
        return true;
}

static char *repeat(const char *unit, size_t times, const char *prefix)
{
        size_t u = strlen(unit), pre = strlen(prefix);
        char *s = malloc(pre + u * times + 1);

        ck_assert_ptr_nonnull(s);
        memcpy(s, prefix, pre);
        for (size_t i = 0; i < times; i++)
                memcpy(s + pre + i * u, unit, u);
        s[pre + u * times] = '\0';
        return s;
}

START_TEST(test_short_input_is_kept)
{
        char buf[QUOTE_SIZE];

        ck_assert_str_eq(quote_prefix("inclusive", buf), "inclusive");
        ck_assert_str_eq(quote_prefix("", buf), "");
        ck_assert_str_eq(quote_prefix(NULL, buf), "");
        ck_assert_str_eq(quote_prefix("\xc3\xbcnic\xc3\xb6" "de \xf0\x9f\x94\xa5", buf), "ünicöde 🔥");
        /* Exactly QUOTE_MAX bytes: not cut. */
        _cleanup_free_ char *s = repeat("x", QUOTE_MAX, "");
        ck_assert_str_eq(quote_prefix(s, buf), s);
}
END_TEST

START_TEST(test_long_input_is_cut)
{
        char buf[QUOTE_SIZE], expected[QUOTE_SIZE];
        _cleanup_free_ char *huge = repeat("x", 16 << 20, "");
        _cleanup_free_ char *accents = repeat("\xc3\xa9", 1000, "a");
        _cleanup_free_ char *emoji = repeat("\xf0\x9f\x94\xa5", 1000, "ab");

        memset(expected, 'x', QUOTE_MAX);
        strcpy(expected + QUOTE_MAX, "…");
        ck_assert_str_eq(quote_prefix(huge, buf), expected);
        /* "a" and 31 "é" fill 63 bytes; the 32nd would not fit whole, and is left out rather than cut. */
        quote_prefix(accents, buf);
        ck_assert_uint_eq(strlen(buf), 63 + strlen("…"));
        ck_assert(strncmp(buf + 63, "…", strlen("…")) == 0);
        ck_assert(valid_utf8(buf));
        /* "ab" and 15 four-byte characters: 62 bytes. */
        quote_prefix(emoji, buf);
        ck_assert_uint_eq(strlen(buf), 62 + strlen("…"));
        ck_assert(valid_utf8(buf));
}
END_TEST

START_TEST(test_controls_and_bad_bytes)
{
        char buf[QUOTE_SIZE];

        ck_assert_str_eq(quote_prefix("inclusive\nexclusive\t\x1b[2J\x7f", buf), "inclusive?exclusive??[2J?");
        /* C1 control U+0085 (next line), then bytes that are not UTF-8: a lone continuation, a lead byte at the
         * end, overlong forms, a surrogate, a code point past U+10FFFF. */
        ck_assert_str_eq(quote_prefix("a\xc2\x85" "b", buf), "a?b");
        ck_assert_str_eq(quote_prefix("\x80x\xff", buf), "?x?");
        ck_assert_str_eq(quote_prefix("x\xc3", buf), "x?");
        ck_assert_str_eq(quote_prefix("\xe2\x82", buf), "??");
        ck_assert_str_eq(quote_prefix("\xc0\xaf\xe0\x80\xaf", buf), "?????");
        ck_assert_str_eq(quote_prefix("\xed\xa0\x80", buf), "???");
        ck_assert_str_eq(quote_prefix("\xf4\x90\x80\x80", buf), "????");
        ck_assert(valid_utf8(buf));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("quote");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_short_input_is_kept);
        tcase_add_test(tc, test_long_input_is_cut);
        tcase_add_test(tc, test_controls_and_bad_bytes);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
