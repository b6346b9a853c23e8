/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "macros.h"
#include "utf8.h"

#define VALID(s) utf8_is_valid(s, sizeof(s) - 1)
#define PRINTABLE(s) utf8_is_printable(s, sizeof(s) - 1)

static void check_escape(const char *in, size_t n, const char *expected)
{
        char buf[256];

        ck_assert_str_eq(utf8_escape_buf(in, n, buf, sizeof(buf)), expected);
        ck_assert_uint_eq(utf8_escaped_length(in, n), strlen(expected));
        /* The escape is its own escape: escaping once is enough, twice changes nothing. */
        ck_assert(utf8_is_printable(buf, strlen(buf)));
}
#define ESCAPE(s, expected) check_escape(s, sizeof(s) - 1, expected)

START_TEST(test_valid)
{
        ck_assert(VALID(""));
        ck_assert(VALID("sleep"));
        ck_assert(VALID("\xc3\xbcnic\xc3\xb6" "de \xf0\x9f\x94\xa5"));
        ck_assert(VALID("\xe2\x82\xac"));                    /* U+20AC */
        ck_assert(VALID("\xed\x9f\xbf\xee\x80\x80"));        /* U+D7FF, U+E000: around the surrogates */
        ck_assert(VALID("\xf4\x8f\xbf\xbf"));                /* U+10FFFF */
        ck_assert(VALID("a\nb\x7f"));                        /* controls are valid, not printable */
        ck_assert(!PRINTABLE("a\nb"));
        ck_assert(!PRINTABLE("a\x7f"));
        ck_assert(!PRINTABLE("a\xc2\x85"));                  /* C1 U+0085 */
        ck_assert(PRINTABLE("a\xc2\xa0" "b\\x2d"));          /* U+00A0, a backslash */
        ck_assert_uint_eq(utf8_char_length("\xf0\x9f\x94\xa5", 4), 4);
        ck_assert_uint_eq(utf8_char_length("\xf0\x9f\x94\xa5", 3), 0); /* bounded by n, not by a NUL */
        ck_assert_uint_eq(utf8_char_length("a", 0), 0);
}
END_TEST

START_TEST(test_invalid)
{
        ck_assert(!VALID("x\xff\xfey"));
        ck_assert(!VALID("\x80"));                           /* lone continuation */
        ck_assert(!VALID("x\xc3"));                          /* truncated */
        ck_assert(!VALID("\xe2\x82"));
        ck_assert(!VALID("\xf0\x9f\x94"));
        ck_assert(!VALID("\xc0\xaf"));                       /* overlong '/' */
        ck_assert(!VALID("\xe0\x80\xaf"));
        ck_assert(!VALID("\xf0\x80\x80\xaf"));
        ck_assert(!VALID("\xed\xa0\x80"));                   /* surrogate U+D800 */
        ck_assert(!VALID("\xed\xbf\xbf"));                   /* surrogate U+DFFF */
        ck_assert(!VALID("\xf4\x90\x80\x80"));               /* past U+10FFFF */
        ck_assert(!VALID("\xf5\x80\x80\x80"));
}
END_TEST

START_TEST(test_escape)
{
        ESCAPE("", "");
        ESCAPE("sleep", "sleep");
        ESCAPE("\xc3\xbcnic\xc3\xb6" "de", "\xc3\xbcnic\xc3\xb6" "de");
        ESCAPE("x\xff\xfey", "x\\xff\\xfey");
        ESCAPE("x\xc3", "x\\xc3");
        ESCAPE("\xe2\x82", "\\xe2\\x82");
        ESCAPE("\xc0\xaf", "\\xc0\\xaf");
        ESCAPE("\xed\xa0\x80", "\\xed\\xa0\\x80");
        ESCAPE("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
        /* A truncated sequence before a valid character: only its own bytes go. */
        ESCAPE("\xe2\x82" "a\xe2\x82\xac", "\\xe2\\x82a\xe2\x82\xac");
        /* Controls: one line, nothing for a terminal to obey. */
        ESCAPE("a\r\nb\tc", "a\\r\\nb\\tc");
        ESCAPE("\x1b[2J\x7f", "\\x1b[2J\\x7f");
        ESCAPE("a\xc2\x85" "b", "a\\xc2\\x85b");
        /* A backslash is kept: systemd's own escapes in unit names read as systemd writes them. */
        ESCAPE("system-systemd\\x2dfsck.slice", "system-systemd\\x2dfsck.slice");
        /* An embedded NUL within n is a control character like the others. */
        ESCAPE("a\0b", "a\\x00b");
}
END_TEST

START_TEST(test_escape_bounds)
{
        char buf[8], big[UTF8_ESCAPED_MAX(15) + 1];
        char *s;

        /* Cut between escapes, never inside one. */
        ck_assert_str_eq(utf8_escape_buf("ab\xff\xff", 4, buf, sizeof(buf)), "ab\\xff");
        ck_assert_str_eq(utf8_escape_buf("abcdefghij", 10, buf, sizeof(buf)), "abcdefg");
        ck_assert_str_eq(utf8_escape_buf("\xf0\x9f\x94\xa5\xf0\x9f\x94\xa5", 8, buf, sizeof(buf)),
                         "\xf0\x9f\x94\xa5");
        /* The worst case of a command name fits UTF8_ESCAPED_MAX. */
        utf8_escape_buf("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 15, big, sizeof(big));
        ck_assert_uint_eq(strlen(big), 60);

        ck_assert_int_eq(utf8_escape("a\xfe", &s), 0);
        ck_assert_str_eq(s, "a\\xfe");
        free(s);

        s = strdup("kept");
        ck_assert_int_eq(utf8_escape_in_place(&s), 0);
        ck_assert_str_eq(s, "kept");
        free(s);
        s = strdup("x\xff\n");
        ck_assert_int_eq(utf8_escape_in_place(&s), 1);
        ck_assert_str_eq(s, "x\\xff\\n");
        free(s);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("utf8");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_valid);
        tcase_add_test(tc, test_invalid);
        tcase_add_test(tc, test_escape);
        tcase_add_test(tc, test_escape_bounds);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
