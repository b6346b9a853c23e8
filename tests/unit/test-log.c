/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "log.h"
#include "macros.h"

/* What one log call writes to stderr. */
static char *logged(const char *name)
{
        FILE *f = tmpfile();
        int saved = dup(STDERR_FILENO);
        char *text = calloc(1, 8192);

        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(text);
        ck_assert_int_ge(saved, 0);
        fflush(stderr);
        ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
        log_info("Attached to 42 (%s) for UID 1000.", name);
        fflush(stderr);
        ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
        close(saved);
        rewind(f);
        (void)!fread(text, 1, 8191, f);
        fclose(f);
        return text;
}

/* A name from outside in a message: one call, one line, valid UTF-8, nothing for a terminal to obey. */
START_TEST(test_one_call_one_line)
{
        _cleanup_free_ char *plain = NULL, *crlf = NULL, *bad = NULL, *accents = NULL;

        unsetenv("JOURNAL_STREAM");
        log_setup("test-log");
        plain = logged("sleep");
        ck_assert_str_eq(plain, "test-log: Attached to 42 (sleep) for UID 1000.\n");
        crlf = logged("a\r\nb");
        ck_assert_str_eq(crlf, "test-log: Attached to 42 (a\\r\\nb) for UID 1000.\n");
        bad = logged("x\xff\xfe\x1b[2Jy");
        ck_assert_str_eq(bad, "test-log: Attached to 42 (x\\xff\\xfe\\x1b[2Jy) for UID 1000.\n");
        accents = logged("caf\xc3\xa9");
        ck_assert_str_eq(accents, "test-log: Attached to 42 (caf\xc3\xa9) for UID 1000.\n");
}
END_TEST

int main(void)
{
        Suite *s = suite_create("log");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_one_call_one_line);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
