/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers shared by the unit tests. */

#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macros.h"

/* Write text to a new temporary file; the caller unlinks and frees the path. */
static inline char *test_write_temp(const char *text)
{
        char *path = strdup("/tmp/vprof-unit-XXXXXX");
        int fd;

        ck_assert_ptr_nonnull(path);
        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        return path;
}

/* The address of a core kernel text symbol, read from /proc/kallsyms by hand; 0 when not visible. */
static inline uint64_t test_kernel_symbol(const char *name)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/kallsyms", "re");
        char line[512], sym[256], type;
        unsigned long long addr;

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && (type == 'T' || type == 't') &&
                    strcmp(sym, name) == 0 && !strchr(line, '['))
                        return addr;
        return 0;
}

/* A copy of the file from in a new temporary file (mode 0755), named .../vprof-unit-XXXXXX-suffix; the
 * caller unlinks and frees the path. */
static inline char *test_copy_temp(const char *from, const char *suffix)
{
        char *path = NULL;
        char buf[65536];
        int in, out;
        ssize_t n;

        ck_assert_int_ge(asprintf(&path, "/tmp/vprof-unit-XXXXXX-%s", suffix), 0);
        out = mkstemps(path, (int)strlen(suffix) + 1);
        ck_assert_int_ge(out, 0);
        in = open(from, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(in, 0);
        while ((n = read(in, buf, sizeof(buf))) > 0)
                ck_assert_int_eq(write(out, buf, (size_t)n), n);
        ck_assert_int_eq(n, 0);
        ck_assert_int_eq(fchmod(out, 0755), 0);
        close(in);
        close(out);
        return path;
}
