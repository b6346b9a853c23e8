/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "check-main.h"
#include "macros.h"

START_TEST(test_mount_parse)
{
        /* A hybrid host (cgroup2 at .../unified), an escaped mount point, a bind mount of a cgroup below the root
         * first (not taken), and a line of another form. */
        static const char hybrid[] =
                "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
                "garbage\n"
                "39 30 0:37 /system.slice /mnt/bind rw,relatime shared:9 - cgroup2 cgroup2 rw\n"
                "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime shared:9 master:3 - cgroup2 cgroup2 rw\n";
        static const char escaped[] = "40 30 0:37 / /my\\040cgroups rw - cgroup2 none rw\n";
        static const char bad_escape[] = "40 30 0:37 / /my\\9cgroups rw - cgroup2 none rw\n";
        static const char none[] = "30 22 0:27 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n";
        char *p = NULL;

        ck_assert_int_eq(cgroup2_mount_parse(hybrid, &p), 0);
        ck_assert_str_eq(p, "/sys/fs/cgroup/unified");
        free(p);
        ck_assert_int_eq(cgroup2_mount_parse(escaped, &p), 0);
        ck_assert_str_eq(p, "/my cgroups");
        free(p);
        p = NULL;
        ck_assert_int_eq(cgroup2_mount_parse(bad_escape, &p), -EINVAL);
        ck_assert_int_eq(cgroup2_mount_parse(none, &p), -ENOENT);
        ck_assert_int_eq(cgroup2_mount_parse("", &p), -ENOENT);
        ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_path_check)
{
        static const char *const good[] = { "/", "/a", "/system.slice/vprof-test.service", "/a/b/c",
                                            "/with space", "/.hidden", "/a..b" };
        static const char *const bad[] = { "", "a", "//", "/a/", "/a//b", "/.", "/..", "/a/../b", "/a/./b",
                                           "/a\nb", "/a\tb", "./a", "/a/.." };
        char long_path[CGROUP_PATH_MAX + 2], deep[2 * (CGROUP_LEVEL_MAX + 1) + 1], name[257];

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ck_assert_msg(cgroup_path_check(good[i]) == 0, "refused '%s'", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(cgroup_path_check(bad[i]) == -EINVAL, "took '%s'", bad[i]);
        ck_assert_int_eq(cgroup_path_check(NULL), -EINVAL);

        /* Bounds: the length, a component's length, the depth. */
        memset(long_path, 'a', sizeof(long_path));
        for (size_t i = 0; i < sizeof(long_path) - 1; i += 200)
                long_path[i] = '/';
        long_path[CGROUP_PATH_MAX + 1] = '\0';
        ck_assert_int_eq(cgroup_path_check(long_path), -EINVAL);
        long_path[CGROUP_PATH_MAX] = '\0';
        ck_assert_int_eq(cgroup_path_check(long_path), 0);
        name[0] = '/';
        memset(name + 1, 'n', 255);
        name[256] = '\0';
        ck_assert_int_eq(cgroup_path_check(name), 0);
        strcat(strcpy(long_path, name), "n"); /* a component of 256 bytes */
        ck_assert_int_eq(cgroup_path_check(long_path), -EINVAL);
        for (size_t i = 0; i < CGROUP_LEVEL_MAX + 1; i++)
                memcpy(deep + 2 * i, "/d", 2);
        deep[2 * CGROUP_LEVEL_MAX] = '\0';
        ck_assert_int_eq(cgroup_path_check(deep), 0);
        ck_assert_uint_eq(cgroup_path_level(deep), CGROUP_LEVEL_MAX);
        deep[2 * CGROUP_LEVEL_MAX] = '/';
        deep[2 * (CGROUP_LEVEL_MAX + 1)] = '\0';
        ck_assert_int_eq(cgroup_path_check(deep), -EINVAL);

        ck_assert_uint_eq(cgroup_path_level("/"), 0);
        ck_assert_uint_eq(cgroup_path_level("/system.slice/x.service"), 2);
}
END_TEST

START_TEST(test_path_under)
{
        ck_assert(cgroup_path_under("/a/b", "/a"));
        ck_assert(cgroup_path_under("/a", "/a"));
        ck_assert(cgroup_path_under("/a", "/"));
        ck_assert(!cgroup_path_under("/ab", "/a"));
        ck_assert(!cgroup_path_under("/", "/a"));
        ck_assert(!cgroup_path_under("/b/a", "/a"));
}
END_TEST

START_TEST(test_proc_cgroup_parse)
{
        char *p = NULL;

        ck_assert_int_eq(proc_cgroup_parse("9:name=systemd:/\n4:memory:/x\n0::/system.slice/a.service\n", &p), 0);
        ck_assert_str_eq(p, "/system.slice/a.service");
        free(p);
        ck_assert_int_eq(proc_cgroup_parse("0::/\n", &p), 0);
        ck_assert_str_eq(p, "/");
        free(p);
        p = NULL;
        ck_assert_int_eq(proc_cgroup_parse("1:cpu:/\n", &p), -ENOENT);
        ck_assert_int_eq(proc_cgroup_parse("0::/a/../b\n", &p), -EINVAL);
        ck_assert_int_eq(proc_cgroup_parse("0::relative\n", &p), -EINVAL);
        ck_assert_ptr_null(p);
}
END_TEST

/* The real files, when this machine has a cgroup2 hierarchy: this process's cgroup opens, has an id, and no
 * symbolic link is followed on the way. */
START_TEST(test_real_hierarchy)
{
        _cleanup_free_ char *mount = NULL, *self = NULL;
        _cleanup_close_ int fd = -1;
        uint64_t id = 0;
        struct stat st;

        if (cgroup2_mount_find(&mount) < 0 || proc_cgroup_read(0, &self) < 0)
                return; /* no cgroup2 here */
        fd = cgroup_open(mount, self);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(cgroup_fd_id(fd, &id), 0);
        ck_assert_int_eq(fstat(fd, &st), 0);
        ck_assert_uint_eq(id, (uint64_t)st.st_ino);
        ck_assert_int_eq(cgroup_open(mount, "/vprof-no-such-cgroup"), -ENOENT);
        ck_assert_int_eq(cgroup_open(mount, "/.."), -EINVAL);
        /* Not a cgroup2 file system. */
        ck_assert_int_eq(cgroup_open("/proc", "/"), -EMEDIUMTYPE);
        ck_assert_int_eq(proc_cgroup_read(0x7ffffff0, &self), -ESRCH);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("cgroup-util");
        TCase *tc = tcase_create("cgroup");

        tcase_add_test(tc, test_mount_parse);
        tcase_add_test(tc, test_path_check);
        tcase_add_test(tc, test_path_under);
        tcase_add_test(tc, test_proc_cgroup_parse);
        tcase_add_test(tc, test_real_hierarchy);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
