/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers in the style of systemd's macro.h: cleanup attributes and ownership transfer. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _likely_(x) (__builtin_expect(!!(x), 1))
#define _unlikely_(x) (__builtin_expect(!!(x), 0))
/* A function kept as written, a call frame of its own: gcc's noipa (not inlined, cloned, merged with
 * identical code or given another calling convention). clang has no such attribute: noinline is nearest. */
#ifdef __clang__
#define _noipa_ __attribute__((noinline))
#else
#define _noipa_ __attribute__((noinline, noipa))
#endif

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Return the value and reset the variable, for handing ownership to a caller. */
#define TAKE_GENERIC(var, type, nullvalue)                                                                     \
        ({                                                                                                     \
                type *_pvar_ = &(var);                                                                         \
                type _var_ = *_pvar_;                                                                          \
                type _nullvalue_ = nullvalue;                                                                  \
                *_pvar_ = _nullvalue_;                                                                         \
                _var_;                                                                                         \
        })
#define TAKE_PTR(p) TAKE_GENERIC((p), typeof(p), NULL)
#define TAKE_FD(fd) TAKE_GENERIC((fd), int, -1)

static inline void freep(void *p)
{
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd)
{
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -1;
}

static inline void closep(int *fd)
{
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Define a cleanup function for a type whose destructor takes NULL and returns NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                                \
        static inline void func##p(type *p)                                                                    \
        {                                                                                                      \
                if (*p)                                                                                        \
                        *p = func(*p);                                                                         \
        }

/* errno as a negative value, never 0, for paths where a libc call failed. */
static inline int negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}

/* x equals one of the listed values (integers). */
#define IN_SET(x, ...)                                                                                         \
        ({                                                                                                     \
                const typeof(x) _in_set_list_[] = { __VA_ARGS__ };                                             \
                bool _found_ = false;                                                                          \
                for (size_t _k_ = 0; _k_ < ELEMENTSOF(_in_set_list_); _k_++)                                   \
                        if (_in_set_list_[_k_] == (x))                                                         \
                                _found_ = true;                                                                \
                _found_;                                                                                       \
        })

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
/* n rounded up to a multiple of the power of two a. */
#define ALIGN_TO(n, a) (((n) + (a) - 1) & ~((size_t)(a) - 1))
