/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "check-main.h"
#include "target-spec.h"

static TargetSpecKind kind_of(const char *s)
{
        TargetSpec spec;

        ck_assert_int_eq(target_spec_parse(s, &spec), 0);
        return spec.kind;
}

static void assert_invalid(const char *s)
{
        TargetSpec spec;

        ck_assert_msg(target_spec_parse(s, &spec) == -EINVAL, "'%s' was accepted", s);
}

START_TEST(test_pid)
{
        TargetSpec spec;

        ck_assert_int_eq(target_spec_parse("1234", &spec), 0);
        ck_assert_int_eq(spec.kind, TARGET_SPEC_PID);
        ck_assert_uint_eq(spec.pid, 1234);
        /* Not PIDs, and not names either. */
        assert_invalid("");
        assert_invalid("0");
        assert_invalid("-1");
        assert_invalid(" 12");
        assert_invalid("12 ");
        assert_invalid("99999999999");
}
END_TEST

START_TEST(test_unit)
{
        TargetSpec spec;

        ck_assert_int_eq(target_spec_parse("nginx.service", &spec), 0);
        ck_assert_int_eq(spec.kind, TARGET_SPEC_UNIT);
        ck_assert_str_eq(spec.name, "nginx.service");
        ck_assert_int_eq(kind_of("getty@tty1.service"), TARGET_SPEC_UNIT);
        ck_assert_int_eq(kind_of("system-foo\\x2dbar.slice"), TARGET_SPEC_UNIT);
        ck_assert_int_eq(kind_of("session-3.scope"), TARGET_SPEC_UNIT);
        ck_assert_int_eq(kind_of("dbus.socket"), TARGET_SPEC_UNIT);
        /* Units without a cgroup, suffixes alone, names with what systemd never allows. */
        assert_invalid("multi-user.target");
        assert_invalid("foo.timer");
        assert_invalid(".service");
        assert_invalid("a b.service");
        assert_invalid("a/b.service");
        assert_invalid("a\n.service");
        assert_invalid("service");
        ck_assert(!target_spec_is_unit_name("1234"));
}
END_TEST

START_TEST(test_long_unit_name)
{
        char name[TARGET_SPEC_UNIT_MAX + 16];

        memset(name, 'a', sizeof(name));
        strcpy(name + TARGET_SPEC_UNIT_MAX - 1 - strlen(".service"), ".service");
        ck_assert_int_eq(kind_of(name), TARGET_SPEC_UNIT); /* 255 characters */
        memset(name, 'a', sizeof(name));
        strcpy(name + TARGET_SPEC_UNIT_MAX - strlen(".service"), ".service");
        assert_invalid(name);
}
END_TEST

START_TEST(test_cgroup)
{
        TargetSpec spec;

        ck_assert_int_eq(target_spec_parse("/system.slice/nginx.service", &spec), 0);
        ck_assert_int_eq(spec.kind, TARGET_SPEC_CGROUP);
        ck_assert_str_eq(spec.name, "/system.slice/nginx.service");
        ck_assert_int_eq(kind_of("/"), TARGET_SPEC_CGROUP);
        ck_assert_int_eq(kind_of("/a/..b/.c"), TARGET_SPEC_CGROUP);
        /* No way out of the hierarchy, no empty components, no controls. */
        assert_invalid("/a/../b");
        assert_invalid("/..");
        assert_invalid("/a/./b");
        assert_invalid("//a");
        assert_invalid("/a/");
        assert_invalid("/a\tb");
        assert_invalid("/a\x7f");
        assert_invalid("relative/path");
}
END_TEST

START_TEST(test_long_cgroup_path)
{
        static char path[TARGET_SPEC_CGROUP_MAX + 2];

        memset(path, 'a', sizeof(path) - 1);
        path[0] = '/';
        path[TARGET_SPEC_CGROUP_MAX - 1] = '\0';
        ck_assert_int_eq(kind_of(path), TARGET_SPEC_CGROUP);
        path[TARGET_SPEC_CGROUP_MAX - 1] = 'a';
        assert_invalid(path);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("target-spec");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_pid);
        tcase_add_test(tc, test_unit);
        tcase_add_test(tc, test_long_unit_name);
        tcase_add_test(tc, test_cgroup);
        tcase_add_test(tc, test_long_cgroup_path);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
