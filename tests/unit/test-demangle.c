/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "demangle.h"
#include "macros.h"

static void check_demangled(const char *mangled, const char *expected)
{
        _cleanup_free_ char *d = NULL;

        ck_assert_int_eq(demangle_symbol(mangled, &d), 1);
        ck_assert_msg(d && strcmp(d, expected) == 0, "%s: expected %s, got %s", mangled, expected,
                      d ?: "(null)");
}

static void check_kept(const char *name)
{
        char *sentinel = (char *)0x1, *d = sentinel;

        ck_assert_int_eq(demangle_symbol(name, &d), 0);
        ck_assert_ptr_eq(d, sentinel);
}

START_TEST(test_cxx)
{
        check_demangled("_ZN2ns5ClassIiE6methodEi", "ns::Class<int>::method(int)");
        check_demangled("_Z3fooi", "foo(int)");
        check_demangled("_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)");
        /* GCC's clones keep their suffix, readable. */
        check_demangled("_Z3fooi.cold", "foo(int) [clone .cold]");
        /* A nested name without a Rust hash is C++. */
        check_demangled("_ZN3foo3barE", "foo::bar");
}
END_TEST

START_TEST(test_rust_legacy)
{
        /* The hash goes, the path stays. */
        check_demangled("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
        check_demangled("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h7eb26ad1fe3b45d7E",
                        "std::rt::lang_start::{{closure}}");
        check_demangled("_ZN66_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop..Drop$GT$4drop17h0a1b2c3d4e5f6789E",
                        "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop");
        check_demangled("_ZN5hello4main17h5d3e2c1b0a998877E", "hello::main");
}
END_TEST

START_TEST(test_rust_v0)
{
        /* Symbols of rustc 1.95 with -C symbol-mangling-version=v0: crate hashes go, generics and impls stay. */
        check_demangled("_RNvCs1234_5hello4main", "hello::main");
        check_demangled("_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_14rustc_demangle",
                        "<str>::trim_start_matches::<&str>");
        check_demangled("_RNvMNtCs5Q6OJbP7uSx_7vprof_r4workNtB2_6Worker4spin", "<vprof_r::work::Worker>::spin");
        /* A v0 name cut short is not demangled. */
        check_kept("_RNvCs1234_5hel");
        check_kept("_R");
}
END_TEST

START_TEST(test_kept)
{
        check_kept("main");
        check_kept("work_alpha");
        check_kept("_start");
        /* Starts like a mangled name but is not one. */
        check_kept("_Z");
        check_kept("_Zfoo");
        check_kept("");
}
END_TEST

int main(void)
{
        Suite *s = suite_create("demangle");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_cxx);
        tcase_add_test(tc, test_rust_legacy);
        tcase_add_test(tc, test_rust_v0);
        tcase_add_test(tc, test_kept);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
