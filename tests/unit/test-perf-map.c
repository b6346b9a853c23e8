/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "macros.h"
#include "perf-map.h"
#include "test-util.h"

static PerfMap *parse(const char *text)
{
        FILE *f = fmemopen((void *)text, strlen(text), "r");
        PerfMap *m = NULL;

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(perf_map_parse(f, &m), 0);
        fclose(f);
        return m;
}

START_TEST(test_lookup)
{
        /* Out of order, with and without 0x, a name with spaces, code replaced at one start (the later line
         * wins), junk lines, and a last line still being written. */
        _cleanup_(perf_map_freep) PerfMap *m = parse("7f0000002000 100 jit_b\n"
                                                     "0x7f0000001000 0x40 LFoo;::bar (int)\n"
                                                     "not a line\n"
                                                     "7f0000003000 0 zero_size\n"
                                                     "7f0000004000 20 old_code\n"
                                                     "7f0000004000 80 new_code\n"
                                                     "7f0000005000 10 cut_sh");
        uint64_t off = 0;

        ck_assert_uint_eq(perf_map_count(m), 3);
        ck_assert_str_eq(perf_map_lookup(m, 0x7f0000001000, &off), "LFoo;::bar (int)");
        ck_assert_uint_eq(off, 0);
        ck_assert_str_eq(perf_map_lookup(m, 0x7f000000103f, &off), "LFoo;::bar (int)");
        ck_assert_uint_eq(off, 0x3f);
        ck_assert_ptr_null(perf_map_lookup(m, 0x7f0000001040, NULL));
        ck_assert_str_eq(perf_map_lookup(m, 0x7f00000020ff, &off), "jit_b");
        ck_assert_ptr_null(perf_map_lookup(m, 0x7f0000002100, NULL));
        ck_assert_ptr_null(perf_map_lookup(m, 0x7f0000000fff, NULL));
        ck_assert_str_eq(perf_map_lookup(m, 0x7f0000004050, &off), "new_code");
        ck_assert_uint_eq(off, 0x50);
        ck_assert_ptr_null(perf_map_lookup(m, 0x7f0000005000, NULL));
        ck_assert_ptr_null(perf_map_lookup(NULL, 0x7f0000001000, NULL));
}
END_TEST

START_TEST(test_name_not_utf8)
{
        /* The process writes the file: a name of any bytes comes back escaped, a CR and a tab too. */
        _cleanup_(perf_map_freep) PerfMap *m = parse("1000 10 jit_\xff\xfe\r\tx\n"
                                                     "2000 10 caf\xc3\xa9\n");

        ck_assert_str_eq(perf_map_lookup(m, 0x1000, NULL), "jit_\\xff\\xfe\\r\\tx");
        ck_assert_str_eq(perf_map_lookup(m, 0x2000, NULL), "caf\xc3\xa9");
}
END_TEST

START_TEST(test_nested)
{
        /* A small function inside a larger one's range (a stub the JIT placed later): the innermost start. */
        _cleanup_(perf_map_freep) PerfMap *m = parse("1000 1000 outer\n"
                                                     "1100 10 inner\n");

        ck_assert_str_eq(perf_map_lookup(m, 0x1105, NULL), "inner");
        ck_assert_str_eq(perf_map_lookup(m, 0x1200, NULL), "outer");
}
END_TEST

START_TEST(test_load)
{
        _cleanup_(perf_map_freep) PerfMap *m = NULL;
        _cleanup_free_ char *path = test_write_temp("400000 10 jit_hot_loop\n");
        PerfMap *sentinel = (PerfMap *)0x1, *n = sentinel;

        ck_assert_int_eq(perf_map_load(path, &m), 0);
        unlink(path);
        ck_assert_str_eq(perf_map_lookup(m, 0x40000f, NULL), "jit_hot_loop");
        ck_assert_int_eq(perf_map_load("/nonexistent/perf-1.map", &n), -ENOENT);
        ck_assert_ptr_eq(n, sentinel);
}
END_TEST

/* The file is the target's: a FIFO or a device put there is not opened, a symbolic link is not followed, an
 * empty file is an empty map, and one beyond the bound is refused unread. */
START_TEST(test_load_hostile)
{
        char dir[] = "/tmp/vprof-perf-map-XXXXXX", path[PATH_MAX];
        PerfMap *sentinel = (PerfMap *)0x1, *n = sentinel, *m = NULL;
        _cleanup_free_ char *target = test_write_temp("400000 10 secret\n");
        _cleanup_free_ char *empty = test_write_temp("");

        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/perf-1.map", dir);

        ck_assert_int_eq(mkfifo(path, 0600), 0);
        ck_assert_int_eq(perf_map_load(path, &n), -EBADFD);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(perf_map_load("/dev/null", &n), -EBADFD);

        ck_assert_int_eq(symlink(target, path), 0);
        ck_assert_int_eq(perf_map_load(path, &n), -EBADFD);
        ck_assert_int_eq(unlink(path), 0);

        /* 300 MiB of nothing: a sparse file. */
        {
                _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(ftruncate(fd, (off_t)300 << 20), 0);
        }
        ck_assert_int_eq(perf_map_load(path, &n), -EFBIG);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_ptr_eq(n, sentinel);

        ck_assert_int_eq(perf_map_load(empty, &m), 0);
        ck_assert_uint_eq(perf_map_count(m), 0);
        m = perf_map_free(m);
        /* No line that parses: no entries to sort (qsort() of a NULL array, found by fuzz-perf-map). */
        m = parse("junk only\n7f00 0 size zero\n");
        ck_assert_uint_eq(perf_map_count(m), 0);
        ck_assert_ptr_null(perf_map_lookup(m, 0x7f00, NULL));
        m = perf_map_free(m);

        unlink(target);
        unlink(empty);
        rmdir(dir);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("perf-map");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_lookup);
        tcase_add_test(tc, test_nested);
        tcase_add_test(tc, test_name_not_utf8);
        tcase_add_test(tc, test_load);
        tcase_add_test(tc, test_load_hostile);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
