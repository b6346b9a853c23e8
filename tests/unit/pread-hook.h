/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A file that changes while the code under test reads it, on cue and without a race: the test program
 * defines pread() (include this header in one file of it), and reads of the file chosen with
 * pread_hook_arm() go through the hook. After `reads_before` reads of it went through whole, it behaves as
 * if cut to `cut` bytes (a later read past that comes up short, as after truncate(1)), and with `touch` its
 * times change at that moment too (utimensat(), as when it is rewritten in place). The file itself keeps its
 * contents, so that a process that maps it does not fault. Every other read is the C library's. */

#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

typedef struct PreadHook {
        bool armed;
        dev_t dev;
        ino_t ino;
        char path[4096];
        unsigned reads_before; /* reads of the file that go through whole first */
        off_t cut;             /* then: its apparent size */
        bool touch;            /* then: its times change once */
        unsigned reads;        /* of the file, so far */
        unsigned short_reads;  /* that the hook cut short */
} PreadHook;

static PreadHook pread_hook;

static inline void pread_hook_arm(const char *path, unsigned reads_before, off_t cut, bool touch)
{
        struct stat st;

        ck_assert_int_eq(stat(path, &st), 0);
        pread_hook = (PreadHook) { .armed = true,
                                   .dev = st.st_dev,
                                   .ino = st.st_ino,
                                   .reads_before = reads_before,
                                   .cut = cut,
                                   .touch = touch };
        ck_assert_uint_lt(strlen(path), sizeof(pread_hook.path));
        strcpy(pread_hook.path, path);
}

static inline void pread_hook_disarm(void)
{
        pread_hook.armed = false;
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
        static ssize_t (*real_pread)(int, void *, size_t, off_t);
        struct stat st;

        if (!real_pread)
                real_pread = (ssize_t(*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
        if (!pread_hook.armed || fstat(fd, &st) < 0 || st.st_dev != pread_hook.dev ||
            st.st_ino != pread_hook.ino)
                return real_pread(fd, buf, count, offset);

        if (pread_hook.reads++ < pread_hook.reads_before)
                return real_pread(fd, buf, count, offset);
        if (pread_hook.touch) {
                pread_hook.touch = false;
                /* A second apart from what it was: coarse file system times change too. */
                ck_assert_int_eq(utimensat(AT_FDCWD, pread_hook.path,
                                           (struct timespec[]) { { .tv_sec = 1 }, { .tv_sec = 1 } }, 0),
                                 0);
        }
        if (offset >= pread_hook.cut) {
                pread_hook.short_reads++;
                return 0;
        }
        if ((off_t)count > pread_hook.cut - offset) {
                pread_hook.short_reads++;
                count = (size_t)(pread_hook.cut - offset);
        }
        return real_pread(fd, buf, count, offset);
}
