/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "macros.h"
#include "open-util.h"
#include "test-util.h"

/* Only a regular file is opened for reading; a FIFO (which would block a reader until a writer comes), a
 * device, a directory or a symbolic link with O_NOFOLLOW is refused without being opened. */
START_TEST(test_open_regular)
{
        char dir[] = "/tmp/vprof-open-util-XXXXXX", fifo[PATH_MAX], link_path[PATH_MAX];
        _cleanup_free_ char *file = test_write_temp("contents\n");
        _cleanup_close_ int fd = -1, path_fd = -1;
        char buf[16] = {};

        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
        snprintf(link_path, sizeof(link_path), "%s/link", dir);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert_int_eq(symlink(file, link_path), 0);

        fd = open_regular(file, 0);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(read(fd, buf, sizeof(buf) - 1), 9);
        ck_assert_str_eq(buf, "contents\n");
        fd = safe_close(fd);

        ck_assert_int_eq(open_regular(fifo, 0), -EBADFD);
        ck_assert_int_eq(open_regular("/dev/null", 0), -EBADFD);
        ck_assert_int_eq(open_regular(dir, 0), -EBADFD);
        ck_assert_int_eq(open_regular("/nonexistent/file", 0), -ENOENT);
        ck_assert_int_eq(open_regular(link_path, O_NOFOLLOW), -EBADFD);
        fd = open_regular(link_path, 0);
        ck_assert_int_ge(fd, 0);
        fd = safe_close(fd);

        path_fd = open(file, O_PATH | O_CLOEXEC);
        ck_assert_int_ge(path_fd, 0);
        fd = fd_reopen_regular(path_fd);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fd_reopen_regular(-1), -EBADF);

        unlink(fifo);
        unlink(link_path);
        unlink(file);
        rmdir(dir);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("open-util");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 20);
        tcase_add_test(tc, test_open_regular);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
