/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "check-main.h"
#include "unwind-arena.h"

#define Q 1000 /* quarantine, in the test's microseconds */

START_TEST(test_first_fit_and_merge)
{
        _cleanup_(unwind_arena_freep) UnwindArena *a = NULL;
        uint32_t x, y, z, w;

        ck_assert_int_eq(unwind_arena_new(100, 8, Q, &a), 0);
        ck_assert_int_eq(unwind_arena_alloc(a, 30, 0, &x), 0);
        ck_assert_int_eq(unwind_arena_alloc(a, 30, 0, &y), 0);
        ck_assert_int_eq(unwind_arena_alloc(a, 30, 0, &z), 0);
        ck_assert_uint_eq(x, 0);
        ck_assert_uint_eq(y, 30);
        ck_assert_uint_eq(z, 60);
        ck_assert_uint_eq(unwind_arena_used(a), 90);
        ck_assert_int_eq(unwind_arena_alloc(a, 11, 0, &w), -ENOSPC);
        ck_assert_int_eq(unwind_arena_alloc(a, 0, 0, &w), -EINVAL);

        /* Released, but in quarantine until Q. */
        ck_assert_int_eq(unwind_arena_release(a, y, 30, 10), 0);
        ck_assert_uint_eq(unwind_arena_used(a), 60);
        ck_assert_uint_eq(unwind_arena_quarantined(a), 30);
        ck_assert_uint_eq(unwind_arena_next_release(a), 10 + Q);
        ck_assert_int_eq(unwind_arena_alloc(a, 20, 10 + Q - 1, &w), -ENOSPC);
        ck_assert_uint_eq(unwind_arena_largest_free(a, 10 + Q - 1), 10);

        /* x released too: once both quarantines are over, [0, 60) is one free range. */
        ck_assert_int_eq(unwind_arena_release(a, x, 30, 20), 0);
        ck_assert_uint_eq(unwind_arena_largest_free(a, 20 + Q), 60); /* [0, 60) merged */
        ck_assert_uint_eq(unwind_arena_quarantined(a), 0);
        ck_assert_uint_eq(unwind_arena_next_release(a), 0);
        ck_assert_int_eq(unwind_arena_alloc(a, 45, 20 + Q, &w), 0);
        ck_assert_uint_eq(w, 0);
        ck_assert_int_eq(unwind_arena_release(a, z, 30, 30), 0);
        ck_assert_int_eq(unwind_arena_release(a, w, 45, 30), 0);
        ck_assert_uint_eq(unwind_arena_largest_free(a, 30 + Q), 100); /* all of it again, in one range */
        ck_assert_uint_eq(unwind_arena_used(a), 0);

        /* Bad releases. */
        ck_assert_int_eq(unwind_arena_release(a, 0, 10, 40), -EINVAL); /* nothing is allocated */
        ck_assert_int_eq(unwind_arena_alloc(a, 10, 40 + Q, &w), 0);
        ck_assert_int_eq(unwind_arena_release(a, 95, 10, 40), -EINVAL); /* past the end */
}
END_TEST

START_TEST(test_ids)
{
        _cleanup_(unwind_arena_freep) UnwindArena *a = NULL;
        uint32_t id;

        ck_assert_int_eq(unwind_arena_new(10, 3, Q, &a), 0);
        ck_assert_int_eq(unwind_arena_alloc_id(a, 0, &id), 0);
        ck_assert_uint_eq(id, 1); /* never 0: no table */
        ck_assert_int_eq(unwind_arena_alloc_id(a, 0, &id), 0);
        ck_assert_uint_eq(id, 2);
        ck_assert_int_eq(unwind_arena_alloc_id(a, 0, &id), -ENOSPC);
        unwind_arena_release_id(a, 1, 100);
        ck_assert_int_eq(unwind_arena_alloc_id(a, 100 + Q - 1, &id), -ENOSPC);
        ck_assert_int_eq(unwind_arena_alloc_id(a, 100 + Q, &id), 0);
        ck_assert_uint_eq(id, 1);
        unwind_arena_release_id(a, 0, 200); /* ignored */
        unwind_arena_release_id(a, 7, 200);
        ck_assert_int_eq(unwind_arena_alloc_id(a, 10 * Q, &id), -ENOSPC);
}
END_TEST

/* Random allocations and releases against a map of the entries: no entry is ever handed out twice, and
 * everything comes back in the end. */
START_TEST(test_random)
{
        enum { SIZE = 4096, N = 64 };
        _cleanup_(unwind_arena_freep) UnwindArena *a = NULL;
        uint32_t first[N] = {}, len[N] = {};
        uint8_t owner[SIZE] = {};
        uint64_t now = 0;

        srand(15);
        ck_assert_int_eq(unwind_arena_new(SIZE, 4, Q, &a), 0);
        for (int step = 0; step < 10000; step++) {
                int k = rand() % N;

                now += rand() % (Q / 4);
                if (len[k] == 0) {
                        uint32_t n = 1 + (uint32_t)(rand() % 300), f;
                        int r = unwind_arena_alloc(a, n, now, &f);

                        ck_assert(r == 0 || r == -ENOSPC);
                        if (r < 0)
                                continue;
                        ck_assert_uint_le(f + n, SIZE);
                        for (uint32_t i = f; i < f + n; i++) {
                                ck_assert_uint_eq(owner[i], 0);
                                owner[i] = (uint8_t)(k + 1);
                        }
                        first[k] = f;
                        len[k] = n;
                } else {
                        for (uint32_t i = first[k]; i < first[k] + len[k]; i++)
                                owner[i] = 0;
                        ck_assert_int_eq(unwind_arena_release(a, first[k], len[k], now), 0);
                        len[k] = 0;
                }
        }
        for (int k = 0; k < N; k++)
                if (len[k])
                        ck_assert_int_eq(unwind_arena_release(a, first[k], len[k], now), 0);
        ck_assert_uint_eq(unwind_arena_used(a), 0);
        ck_assert_uint_eq(unwind_arena_largest_free(a, now + Q), SIZE);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("unwind-arena");
        TCase *tc = tcase_create("core");

        /* Check's 4 s is short for the random test under the sanitizers on a busy machine. */
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_first_fit_and_merge);
        tcase_add_test(tc, test_ids);
        tcase_add_test(tc, test_random);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
