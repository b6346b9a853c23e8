/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <check.h>

/* Run one suite and turn its result into an exit status. */
static inline int run_suite(Suite *s)
{
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? 0 : 1;
}
