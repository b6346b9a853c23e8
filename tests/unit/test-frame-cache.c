/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include "check-main.h"
#include "frame-cache.h"

START_TEST(test_put_get)
{
        _cleanup_(frame_cache_freep) FrameCache *c = NULL;
        uint32_t id = 0;

        ck_assert_int_eq(frame_cache_new(100000, &c), 0);
        ck_assert(!frame_cache_get(c, 0x401000, &id));
        /* Address 0 is an address like any other; it grows past its first table. */
        for (uint64_t a = 0; a < 50000; a++)
                ck_assert_int_eq(frame_cache_put(c, a * 16, (uint32_t)(a * 7)), 0);
        ck_assert_uint_eq(frame_cache_size(c), 50000);
        for (uint64_t a = 0; a < 50000; a++) {
                ck_assert(frame_cache_get(c, a * 16, &id));
                ck_assert_uint_eq(id, a * 7);
                ck_assert(!frame_cache_get(c, a * 16 + 1, &id));
        }
        /* A put of a cached address replaces its id, without a second entry. */
        ck_assert_int_eq(frame_cache_put(c, 32, 99), 0);
        ck_assert(frame_cache_get(c, 32, &id));
        ck_assert_uint_eq(id, 99);
        ck_assert_uint_eq(frame_cache_size(c), 50000);
        /* Kernel addresses, and the one address that has no key: never cached, never found. */
        ck_assert_int_eq(frame_cache_put(c, UINT64_C(0xffffffff81000010), 5), 0);
        ck_assert(frame_cache_get(c, UINT64_C(0xffffffff81000010), &id));
        ck_assert_uint_eq(id, 5);
        ck_assert_int_eq(frame_cache_put(c, UINT64_MAX, 6), 0);
        ck_assert(!frame_cache_get(c, UINT64_MAX, &id));

        frame_cache_clear(c);
        ck_assert_uint_eq(frame_cache_size(c), 0);
        ck_assert(!frame_cache_get(c, 32, &id));
}
END_TEST

/* A full cache starts over instead of growing: the newest address is kept, and the table stays bounded. */
/* An address in inlined code: its chain of ids, innermost first; through growth, a full cache starting over,
 * and a clear, every chain read back is the one put (chains and slots start over together). */
START_TEST(test_chains)
{
        _cleanup_(frame_cache_freep) FrameCache *c = NULL;
        const uint32_t *chain;
        uint32_t id = 0, ids[40];
        size_t n, bad = 0;

        ck_assert_int_eq(frame_cache_new(1000, &c), 0);
        for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                ids[i] = (uint32_t)(100 + i);
        ck_assert_int_eq(frame_cache_put_chain(c, 0x1000, ids, 1), -EINVAL);
        ck_assert_int_eq(frame_cache_put_chain(c, 0x1000, ids, 256), -EINVAL);
        for (uint64_t a = 0; a < 5000; a++) {
                size_t len = 2 + a % 30;

                ids[0] = (uint32_t)a;
                if (a % 3 == 0)
                        ck_assert_int_eq(frame_cache_put(c, a * 8, (uint32_t)a), 0);
                else
                        ck_assert_int_eq(frame_cache_put_chain(c, a * 8, ids, len), 0);
                /* Everything still cached reads back whole. Counted, then asserted once: check writes every
                 * assertion to its pipe, and a million of them took seconds. */
                for (uint64_t b = a >= 20 ? a - 20 : 0; b <= a; b++) {
                        if (!frame_cache_get(c, b * 8, &id))
                                continue;
                        if (b % 3 == 0) {
                                bad += id != b;
                                continue;
                        }
                        if (!(id & FRAME_CACHE_CHAIN)) {
                                bad++;
                                continue;
                        }
                        chain = frame_cache_chain(c, id, &n);
                        bad += n != 2 + b % 30 || chain[0] != b;
                        for (size_t k = 1; k < n; k++)
                                bad += chain[k] != 100 + k;
                }
                ck_assert_uint_eq(bad, 0);
                ck_assert_uint_le(frame_cache_size(c), 1000);
        }
        ck_assert_uint_gt(frame_cache_memory(c), 0);
        frame_cache_clear(c);
        ck_assert(!frame_cache_get(c, 4999 * 8, &id));
        ck_assert_uint_eq(c->n_chain_words, 0);
}
END_TEST

START_TEST(test_full_starts_over)
{
        _cleanup_(frame_cache_freep) FrameCache *c = NULL;
        size_t failed = 0;
        uint32_t id;

        ck_assert_int_eq(frame_cache_new(1000, &c), 0);
        for (uint64_t a = 1; a <= 1000; a++)
                ck_assert_int_eq(frame_cache_put(c, a, (uint32_t)a), 0);
        ck_assert_uint_eq(frame_cache_size(c), 1000);
        ck_assert_uint_le(c->mask + 1, 2048);
        ck_assert_int_eq(frame_cache_put(c, 5000, 1), 0);
        ck_assert_uint_eq(frame_cache_size(c), 1);
        ck_assert(frame_cache_get(c, 5000, &id));
        ck_assert(!frame_cache_get(c, 1, &id));
        for (uint64_t a = 1; a <= 100000; a++)
                failed += frame_cache_put(c, a, (uint32_t)a) != 0; /* counted: check writes each assertion */
        ck_assert_uint_eq(failed, 0);
        ck_assert_uint_le(frame_cache_size(c), 1000);
        ck_assert_uint_le(c->mask + 1, 2048);
}
END_TEST

START_TEST(test_bad_arguments)
{
        FrameCache *c = NULL;

        ck_assert_int_eq(frame_cache_new(0, &c), -EINVAL);
        ck_assert_ptr_null(c);
        ck_assert_ptr_null(frame_cache_free(NULL));
        ck_assert_uint_eq(frame_cache_size(NULL), 0);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("frame-cache");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_put_get);
        tcase_add_test(tc, test_full_starts_over);
        tcase_add_test(tc, test_chains);
        tcase_add_test(tc, test_bad_arguments);
        /* check's 4 s is tight for test_chains under AddressSanitizer on a loaded machine (2 s here). */
        tcase_set_timeout(tc, 60);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
