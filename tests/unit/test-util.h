/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers shared by the unit tests. */

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
