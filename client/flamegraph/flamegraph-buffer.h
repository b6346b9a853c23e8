/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <stddef.h>

#include "macros.h"

/* A growable text buffer with a bound, whose first error sticks: the writer appends without checking each call
 * and asks once at the end. Text from other people's binaries goes through the escaping appenders, which make
 * any byte string safe in XML and HTML text and attribute values. */

typedef struct FlameBuffer {
        char *data; /* NUL-terminated while size > 0 */
        size_t size;
        size_t allocated;
        size_t max; /* 0: no bound */
        int error;  /* -EFBIG past max, -ENOMEM */
} FlameBuffer;

void flame_buffer_done(FlameBuffer *b);

void flame_buffer_append(FlameBuffer *b, const char *s, size_t n);
void flame_buffer_puts(FlameBuffer *b, const char *s);
_printf_(2, 3) void flame_buffer_printf(FlameBuffer *b, const char *format, ...);

/* s escaped for XML and HTML (& < > " ' as character references), each byte of invalid UTF-8, each control
 * character and each noncharacter as U+FFFD; at most max_chars code points of it (SIZE_MAX: all), cut ones
 * ending in "..", nothing when fewer than 3 fit. */
void flame_buffer_escape(FlameBuffer *b, const char *s, size_t max_chars);

/* The code points of s as flame_buffer_escape() counts them. */
size_t flame_utf8_chars(const char *s);
