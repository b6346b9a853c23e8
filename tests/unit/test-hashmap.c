/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "hashmap.h"

START_TEST(test_u64_put_get_remove)
{
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new(&uint64_hash_ops);
        size_t i = 0, seen = 0;
        void *k, *v;

        ck_assert_ptr_nonnull(h);
        ck_assert_ptr_null(hashmap_get(h, UINT64_TO_PTR(1)));
        /* Key 0 is a key like any other. */
        for (uint64_t key = 0; key < 10000; key++)
                ck_assert_int_eq(hashmap_put(h, UINT64_TO_PTR(key), UINT64_TO_PTR(key * 3 + 1)), 0);
        ck_assert_uint_eq(hashmap_size(h), 10000);
        ck_assert_int_eq(hashmap_put(h, UINT64_TO_PTR(77), UINT64_TO_PTR(1)), -EEXIST);
        for (uint64_t key = 0; key < 10000; key++)
                ck_assert_uint_eq(PTR_TO_UINT64(hashmap_get(h, UINT64_TO_PTR(key))), key * 3 + 1);

        /* Remove the even keys; the odd ones stay reachable past the tombstones. */
        for (uint64_t key = 0; key < 10000; key += 2)
                ck_assert_uint_eq(PTR_TO_UINT64(hashmap_remove(h, UINT64_TO_PTR(key))), key * 3 + 1);
        ck_assert_uint_eq(hashmap_size(h), 5000);
        ck_assert_ptr_null(hashmap_remove(h, UINT64_TO_PTR(0)));
        for (uint64_t key = 1; key < 10000; key += 2)
                ck_assert(hashmap_contains(h, UINT64_TO_PTR(key)));
        ck_assert(!hashmap_contains(h, UINT64_TO_PTR(2)));

        while (hashmap_iterate(h, &i, &k, &v)) {
                ck_assert_uint_eq(PTR_TO_UINT64(k) % 2, 1);
                ck_assert_uint_eq(PTR_TO_UINT64(v), PTR_TO_UINT64(k) * 3 + 1);
                seen++;
        }
        ck_assert_uint_eq(seen, 5000);

        hashmap_clear(h);
        ck_assert_uint_eq(hashmap_size(h), 0);
        ck_assert_ptr_null(hashmap_get(h, UINT64_TO_PTR(1)));
        ck_assert_int_eq(hashmap_put(h, UINT64_TO_PTR(1), UINT64_TO_PTR(5)), 0);
        ck_assert_uint_eq(PTR_TO_UINT64(hashmap_get(h, UINT64_TO_PTR(1))), 5);
}
END_TEST

START_TEST(test_churn_keeps_working)
{
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new(&uint64_hash_ops);

        uint64_t failed_puts = 0, failed_removes = 0;

        /* Insert and remove in a sliding window: tombstones must not fill the table. Failures counted and checked
         * once: 400,000 check assertions took over check's 4 s under the sanitizers on a loaded machine. */
        for (uint64_t key = 0; key < 200000; key++) {
                failed_puts += hashmap_put(h, UINT64_TO_PTR(key), UINT64_TO_PTR(key + 1)) != 0;
                if (key >= 16)
                        failed_removes += hashmap_remove(h, UINT64_TO_PTR(key - 16)) == NULL;
        }
        ck_assert_uint_eq(failed_puts, 0);
        ck_assert_uint_eq(failed_removes, 0);
        ck_assert_uint_eq(hashmap_size(h), 16);
        ck_assert_uint_eq(PTR_TO_UINT64(hashmap_get(h, UINT64_TO_PTR(199999))), 200000);
}
END_TEST

START_TEST(test_string_keys)
{
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new(&string_hash_ops);
        char key[32];
        char names[500][16];

        for (int i = 0; i < 500; i++) {
                snprintf(names[i], sizeof(names[i]), "function_%d", i);
                ck_assert_int_eq(hashmap_put(h, names[i], UINT64_TO_PTR(i + 1)), 0);
        }
        /* Lookups by equal content, not by pointer. */
        snprintf(key, sizeof(key), "function_%d", 321);
        ck_assert_uint_eq(PTR_TO_UINT64(hashmap_get(h, key)), 322);
        ck_assert_int_eq(hashmap_put(h, key, NULL), -EEXIST);
        ck_assert_ptr_null(hashmap_get(h, "function_500"));
        ck_assert_uint_ne(hash_bytes("ab", 2, 0), hash_bytes("ba", 2, 0));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("hashmap");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 30);

        tcase_add_test(tc, test_u64_put_get_remove);
        tcase_add_test(tc, test_churn_keeps_working);
        tcase_add_test(tc, test_string_keys);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
