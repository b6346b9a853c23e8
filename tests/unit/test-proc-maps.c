/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-main.h"
#include "macros.h"
#include "proc-maps.h"

/* As the kernel prints it: paths padded to a column, an anonymous line ending in "0 ", a path with spaces, a
 * deleted file, special mappings and the vsyscall page at the top of the address space. */
static const char maps_text[] =
        "00400000-00452000 r-xp 00000000 08:02 173521                             /usr/bin/my prog\n"
        "00651000-00652000 r--p 00051000 08:02 173521                             /usr/bin/my prog\n"
        "00652000-00655000 rw-p 00052000 08:02 173521                             /usr/bin/my prog\n"
        "01a3e000-01a5f000 rw-p 00000000 00:00 0                                  [heap]\n"
        "7f0000000000-7f0000021000 rwxp 00000000 00:00 0 \n"
        "7f1a2b3c4000-7f1a2b3c5000 r-xp 00002000 fd:01 99                    /tmp/gone lib.so (deleted)\n"
        "7ffc0e7d5000-7ffc0e7f6000 rw-p 00000000 00:00 0                          [stack]\n"
        "7ffc0e7fb000-7ffc0e7fd000 r-xp 00000000 00:00 0                          [vdso]\n"
        "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

START_TEST(test_parse)
{
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL;
        const ProcMap *p;

        ck_assert_int_eq(proc_maps_parse(maps_text, &m), 0);
        ck_assert_uint_eq(m->n, 9);

        p = &m->maps[0];
        ck_assert_uint_eq(p->start, 0x400000);
        ck_assert_uint_eq(p->end, 0x452000);
        ck_assert_uint_eq(p->offset, 0);
        ck_assert_uint_eq(p->dev_major, 8);
        ck_assert_uint_eq(p->dev_minor, 2);
        ck_assert_uint_eq(p->inode, 173521);
        ck_assert(p->readable && !p->writable && p->executable && !p->deleted);
        ck_assert_str_eq(p->path, "/usr/bin/my prog");

        p = &m->maps[1];
        ck_assert_uint_eq(p->offset, 0x51000);
        ck_assert(p->readable && !p->writable && !p->executable);
        ck_assert_str_eq(p->path, "/usr/bin/my prog");
        ck_assert(m->maps[2].writable);

        ck_assert_str_eq(m->maps[3].path, "[heap]");

        p = &m->maps[4];
        ck_assert_ptr_null(p->path);
        ck_assert_uint_eq(p->inode, 0);
        ck_assert(p->writable && p->executable && !p->deleted);
        ck_assert_uint_eq(p->start, UINT64_C(0x7f0000000000));

        p = &m->maps[5];
        ck_assert(p->deleted);
        ck_assert_str_eq(p->path, "/tmp/gone lib.so");
        ck_assert_uint_eq(p->dev_major, 0xfd);
        ck_assert_uint_eq(p->dev_minor, 1);
        ck_assert_uint_eq(p->inode, 99);
        ck_assert_uint_eq(p->offset, 0x2000);

        ck_assert_str_eq(m->maps[6].path, "[stack]");
        ck_assert_str_eq(m->maps[7].path, "[vdso]");
        ck_assert(m->maps[7].executable);

        p = &m->maps[8];
        ck_assert_uint_eq(p->start, UINT64_C(0xffffffffff600000));
        ck_assert_uint_eq(p->end, UINT64_C(0xffffffffff601000));
        ck_assert(!p->readable && p->executable);
        ck_assert_str_eq(p->path, "[vsyscall]");
}
END_TEST

/* A copy has the same mappings, paths of its own, and outlives the original. */
START_TEST(test_copy)
{
        _cleanup_(proc_maps_freep) ProcMaps *copy = NULL, *empty = NULL, *empty_copy = NULL;
        ProcMaps *m = NULL;

        ck_assert_int_eq(proc_maps_parse(maps_text, &m), 0);
        ck_assert_int_eq(proc_maps_copy(m, &copy), 0);
        ck_assert_uint_eq(copy->n, m->n);
        for (size_t i = 0; i < m->n; i++) {
                ck_assert_uint_eq(copy->maps[i].start, m->maps[i].start);
                ck_assert_uint_eq(copy->maps[i].inode, m->maps[i].inode);
                ck_assert(copy->maps[i].deleted == m->maps[i].deleted);
                if (!m->maps[i].path) {
                        ck_assert_ptr_null(copy->maps[i].path);
                        continue;
                }
                ck_assert_str_eq(copy->maps[i].path, m->maps[i].path);
                ck_assert_ptr_ne(copy->maps[i].path, m->maps[i].path);
        }
        /* One file's mappings still share their path. */
        ck_assert_ptr_eq(copy->maps[1].path, copy->maps[0].path);
        proc_maps_free(m);
        ck_assert_str_eq(copy->maps[5].path, "/tmp/gone lib.so");
        ck_assert_ptr_nonnull(proc_maps_find(copy, 0x400010));

        ck_assert_int_eq(proc_maps_parse("", &empty), 0);
        ck_assert_int_eq(proc_maps_copy(empty, &empty_copy), 0);
        ck_assert_uint_eq(empty_copy->n, 0);
}
END_TEST

/* A path of any bytes: opened as it is, shown escaped; a copy keeps both. */
START_TEST(test_path_escaped)
{
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL, *c = NULL;
        const char *text = "1000-2000 r-xp 00000000 08:01 42 /tmp/x\xff\xfe\ry\n"
                           "2000-3000 r--p 00001000 08:01 42 /tmp/x\xff\xfe\ry\n"
                           "3000-4000 r-xp 00000000 08:01 43 /usr/lib/libc.so.6\n";

        ck_assert_int_eq(proc_maps_parse(text, &m), 0);
        ck_assert_uint_eq(m->n, 3);
        ck_assert_str_eq(m->maps[0].path, "/tmp/x\xff\xfe\ry");
        ck_assert_str_eq(m->maps[0].name, "/tmp/x\\xff\\xfe\\ry");
        ck_assert_ptr_eq(m->maps[1].path, m->maps[0].path);
        ck_assert_ptr_eq(m->maps[1].name, m->maps[0].name);
        ck_assert_ptr_eq(m->maps[2].name, m->maps[2].path); /* its own escape: no copy */

        ck_assert_int_eq(proc_maps_copy(m, &c), 0);
        ck_assert_str_eq(c->maps[0].path, "/tmp/x\xff\xfe\ry");
        ck_assert_str_eq(c->maps[1].name, "/tmp/x\\xff\\xfe\\ry");
        ck_assert_ptr_eq(c->maps[2].name, c->maps[2].path);
        ck_assert_str_eq(c->maps[2].name, "/usr/lib/libc.so.6");
}
END_TEST

START_TEST(test_find)
{
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL;

        ck_assert_int_eq(proc_maps_parse(maps_text, &m), 0);

        /* Start inclusive, end exclusive. */
        ck_assert_ptr_eq(proc_maps_find(m, 0x400000), &m->maps[0]);
        ck_assert_ptr_eq(proc_maps_find(m, 0x451fff), &m->maps[0]);
        ck_assert_ptr_null(proc_maps_find(m, 0x452000));
        /* Below everything, in gaps, above everything. */
        ck_assert_ptr_null(proc_maps_find(m, 0));
        ck_assert_ptr_null(proc_maps_find(m, 0x3fffff));
        ck_assert_ptr_null(proc_maps_find(m, 0x600000));
        ck_assert_ptr_eq(proc_maps_find(m, 0x651000), &m->maps[1]);
        ck_assert_ptr_eq(proc_maps_find(m, 0x652000), &m->maps[2]); /* adjacent mappings */
        ck_assert_ptr_eq(proc_maps_find(m, 0x654fff), &m->maps[2]);
        ck_assert_ptr_null(proc_maps_find(m, 0x655000));
        ck_assert_ptr_eq(proc_maps_find(m, UINT64_C(0x7f1a2b3c4abc)), &m->maps[5]);
        ck_assert_ptr_eq(proc_maps_find(m, UINT64_C(0x7ffc0e7fc000)), &m->maps[7]);
        ck_assert_ptr_null(proc_maps_find(m, UINT64_C(0x7ffc0e7f6000)));
        ck_assert_ptr_eq(proc_maps_find(m, UINT64_C(0xffffffffff600fff)), &m->maps[8]);
        ck_assert_ptr_null(proc_maps_find(m, UINT64_MAX));
        ck_assert_ptr_null(proc_maps_find(NULL, 0x400000));
}
END_TEST

START_TEST(test_unsorted_and_empty)
{
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL, *empty = NULL;

        /* No trailing newline either. */
        ck_assert_int_eq(proc_maps_parse("3000-4000 r-xp 00000000 00:00 0 \n"
                                         "1000-2000 r--p 00000000 08:01 12 /lib/a.so\n"
                                         "2000-3000 r--p 00001000 08:01 12 /lib/a.so",
                                         &m),
                         0);
        ck_assert_uint_eq(m->n, 3);
        ck_assert_uint_eq(m->maps[0].start, 0x1000);
        ck_assert_uint_eq(m->maps[1].start, 0x2000);
        ck_assert_uint_eq(m->maps[2].start, 0x3000);
        ck_assert_str_eq(m->maps[1].path, "/lib/a.so");
        ck_assert_ptr_null(m->maps[2].path);
        ck_assert_ptr_eq(proc_maps_find(m, 0x2800), &m->maps[1]);

        /* A kernel thread or a zombie has an empty maps file. */
        ck_assert_int_eq(proc_maps_parse("", &empty), 0);
        ck_assert_uint_eq(empty->n, 0);
        ck_assert_ptr_null(proc_maps_find(empty, 0x1000));
}
END_TEST

START_TEST(test_malformed)
{
        static const char *const bad[] = {
                "hello\n",
                "1000 r-xp 00000000 00:00 0\n",
                "1000-2000\n",
                "1000-2000 r-xp\n",
                "1000-2000 r-xp 00000000 00:00\n",
                "1000-2000 r-xp 00000000 0000 0\n",
                "1000-2000 r-xp 00000000 00:00 x /bin/true\n",
                "2000-1000 r-xp 00000000 00:00 0\n",
                "1000-2000 r-xp 00000000 00:00 0\n-1000-2000 r-xp 00000000 00:00 0\n",
                "1000-2000 r-xp 00000000 00:00 0\n 1000-2000 r-xp 00000000 00:00 0\n",
        };
        ProcMaps *sentinel = (ProcMaps *)0x1, *m;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                m = sentinel;
                ck_assert_msg(proc_maps_parse(bad[i], &m) == -EINVAL, "accepted '%s'", bad[i]);
                ck_assert_ptr_eq(m, sentinel); /* untouched on failure */
        }
}
END_TEST

static __attribute__((noinline)) int marker_function(void)
{
        return 42;
}

START_TEST(test_read_self)
{
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL;
        char exe[PATH_MAX];
        ssize_t n;
        const ProcMap *p;
        int local = 0;

        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        ck_assert_int_gt(n, 0);
        exe[n] = '\0';

        ck_assert_int_eq(proc_maps_read(getpid(), &m), 0);
        ck_assert_uint_gt(m->n, 3);
        for (size_t i = 1; i < m->n; i++)
                ck_assert_uint_le(m->maps[i - 1].end, m->maps[i].start);

        /* Our own code is in an executable mapping of our own file. */
        p = proc_maps_find(m, (uint64_t)(uintptr_t)marker_function);
        ck_assert_ptr_nonnull(p);
        ck_assert(p->executable && p->readable && !p->deleted);
        ck_assert_str_eq(p->path, exe);
        ck_assert_uint_ne(p->inode, 0);
        ck_assert_int_eq(marker_function(), 42);

        /* A stack variable is in a writable mapping (the [stack], or a fake stack of the sanitizer). */
        p = proc_maps_find(m, (uint64_t)(uintptr_t)&local);
        ck_assert_ptr_nonnull(p);
        ck_assert(p->writable);
}
END_TEST

START_TEST(test_read_gone)
{
        ProcMaps *sentinel = (ProcMaps *)0x1, *m = sentinel;
        pid_t pid;
        int status;

        /* A reaped child's PID names no process (until reused, which a fresh PID is not, this soon). */
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(0);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_int_eq(proc_maps_read(pid, &m), -ESRCH);
        ck_assert_ptr_eq(m, sentinel);
        ck_assert_int_eq(proc_maps_read(0, &m), -EINVAL);
}
END_TEST

/* A library unloaded (its whole range, cutting the mappings across its ends), then another mapped where its code
 * was: the maps as the kernel would have written them after each change. */
START_TEST(test_apply)
{
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL, *unmapped = NULL, *mapped = NULL;
        ProcMapChange unmap = { .start = 0x451000, .end = 0x652000 };
        ProcMapChange map = { .start = 0x500000, .end = 0x510000, .path = "/lib/b lib.so", .offset = 0x1000,
                              .inode = 42, .dev_major = 0xfd, .dev_minor = 3 };
        const ProcMap *p;

        ck_assert_int_eq(proc_maps_parse(maps_text, &m), 0);
        ck_assert_int_eq(proc_maps_apply(m, &unmap, &unmapped), 0);
        /* [0x400000, 0x452000) cut at 0x451000, [0x651000, 0x652000) gone, [0x652000, ...) kept. */
        ck_assert_uint_eq(unmapped->n, 8);
        p = &unmapped->maps[0];
        ck_assert(p->start == 0x400000 && p->end == 0x451000 && p->offset == 0 && p->executable);
        ck_assert_str_eq(p->path, "/usr/bin/my prog");
        ck_assert_uint_eq(unmapped->maps[1].start, 0x652000);
        ck_assert_uint_eq(unmapped->maps[1].offset, 0x52000);
        ck_assert_ptr_null(proc_maps_find(unmapped, 0x500000));
        /* Everything else as it was, the deleted file and the anonymous mapping included. */
        ck_assert(unmapped->maps[4].deleted);
        ck_assert_str_eq(unmapped->maps[4].path, "/tmp/gone lib.so");
        ck_assert_ptr_null(unmapped->maps[3].path);
        ck_assert_str_eq(unmapped->maps[7].path, "[vsyscall]");

        ck_assert_int_eq(proc_maps_apply(unmapped, &map, &mapped), 0);
        ck_assert_uint_eq(mapped->n, 9);
        p = proc_maps_find(mapped, 0x50abcd);
        ck_assert_ptr_nonnull(p);
        ck_assert(p == &mapped->maps[1] && p->start == 0x500000 && p->end == 0x510000 && p->offset == 0x1000);
        ck_assert(p->executable && p->readable && !p->writable && !p->deleted);
        ck_assert(p->inode == 42 && p->dev_major == 0xfd && p->dev_minor == 3);
        ck_assert_str_eq(p->path, "/lib/b lib.so");
        for (size_t i = 1; i < mapped->n; i++)
                ck_assert_uint_lt(mapped->maps[i - 1].start, mapped->maps[i].start);

        /* A range across the middle of one mapping splits it, the second part at its offset. */
        proc_maps_free(TAKE_PTR(mapped));
        unmap = (ProcMapChange){ .start = 0x410000, .end = 0x420000 };
        ck_assert_int_eq(proc_maps_apply(m, &unmap, &mapped), 0);
        ck_assert_uint_eq(mapped->n, 10);
        ck_assert(mapped->maps[0].end == 0x410000 && mapped->maps[1].start == 0x420000);
        ck_assert_uint_eq(mapped->maps[1].offset, 0x20000);

        unmap = (ProcMapChange){ .start = 0x500000, .end = 0x500000 };
        ck_assert_int_eq(proc_maps_apply(m, &unmap, &unmapped), -EINVAL);
        map.path = "/lib/new\nline.so";
        ck_assert_int_eq(proc_maps_apply(m, &map, &unmapped), -EINVAL);
}
END_TEST

/* A newer reading adds what the snapshot has no mapping for, and changes nothing that it has. */
START_TEST(test_merge)
{
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL, *fresh = NULL, *merged = NULL;

        ck_assert_int_eq(proc_maps_parse("00400000-00452000 r-xp 00000000 08:02 1 /bin/a\n"
                                         "00500000-00510000 r-xp 00001000 08:02 2 /lib/old.so\n", &m), 0);
        ck_assert_int_eq(proc_maps_parse("00400000-00452000 r-xp 00000000 08:02 1 /bin/a\n"
                                         "00480000-00490000 r-xp 00000000 08:02 4 /lib/new.so\n"
                                         "00500000-00510000 r-xp 00001000 08:02 3 /lib/later.so\n"
                                         "00600000-00610000 rw-p 00000000 00:00 0\n", &fresh), 0);
        ck_assert_int_eq(proc_maps_merge(m, fresh, &merged), 0);
        ck_assert_uint_eq(merged->n, 4);
        ck_assert_str_eq(merged->maps[1].path, "/lib/new.so");
        ck_assert_str_eq(merged->maps[2].path, "/lib/old.so");
        ck_assert_uint_eq(merged->maps[2].inode, 2);
        ck_assert_ptr_null(merged->maps[3].path);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("proc-maps");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse);
        tcase_add_test(tc, test_copy);
        tcase_add_test(tc, test_find);
        tcase_add_test(tc, test_path_escaped);
        tcase_add_test(tc, test_unsorted_and_empty);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_read_self);
        tcase_add_test(tc, test_read_gone);
        tcase_add_test(tc, test_apply);
        tcase_add_test(tc, test_merge);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
