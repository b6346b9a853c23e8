/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph-buffer.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

void flame_buffer_done(FlameBuffer *b)
{
        free(b->data);
        *b = (FlameBuffer){};
}

static int reserve(FlameBuffer *b, size_t n)
{
        size_t want;
        char *d;

        if (b->error < 0)
                return b->error;
        if (n > SIZE_MAX - b->size - 1 || (b->max > 0 && b->size + n > b->max))
                return (b->error = -EFBIG);
        if (b->size + n + 1 <= b->allocated)
                return 0;
        want = MAX(b->allocated * 2, b->size + n + 1);
        want = MAX(want, (size_t)4096);
        if (b->max > 0)
                want = MIN(want, b->max + 1);
        d = realloc(b->data, want);
        if (!d)
                return (b->error = -ENOMEM);
        b->data = d;
        b->allocated = want;
        return 0;
}

void flame_buffer_append(FlameBuffer *b, const char *s, size_t n)
{
        if (reserve(b, n) < 0)
                return;
        memcpy(b->data + b->size, s, n);
        b->size += n;
        b->data[b->size] = '\0';
}

void flame_buffer_puts(FlameBuffer *b, const char *s)
{
        flame_buffer_append(b, s, strlen(s));
}

void flame_buffer_printf(FlameBuffer *b, const char *format, ...)
{
        va_list ap;
        int n;

        if (b->error < 0)
                return;
        va_start(ap, format);
        n = vsnprintf(NULL, 0, format, ap);
        va_end(ap);
        if (n < 0) {
                b->error = -EINVAL;
                return;
        }
        if (reserve(b, (size_t)n) < 0)
                return;
        va_start(ap, format);
        vsnprintf(b->data + b->size, (size_t)n + 1, format, ap);
        va_end(ap);
        b->size += (size_t)n;
}

/* The length of the valid UTF-8 sequence at s (1 to 4) with its code point, or 0 when it is not one: overlong
 * forms, surrogates and values past U+10FFFF are not. */
static size_t utf8_decode(const unsigned char *s, uint32_t *ret)
{
        uint32_t c;
        size_t n;

        if (s[0] < 0x80) {
                *ret = s[0];
                return 1;
        }
        if (s[0] >= 0xc2 && s[0] <= 0xdf) {
                n = 2;
                c = s[0] & 0x1f;
        } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                n = 3;
                c = s[0] & 0x0f;
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                n = 4;
                c = s[0] & 0x07;
        } else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80) /* the terminating NUL stops here too */
                        return 0;
                c = c << 6 | (s[i] & 0x3f);
        }
        if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
                return 0;
        *ret = c;
        return n;
}

/* Characters no document should carry: C0 and C1 controls, DEL, noncharacters. */
static bool unwanted(uint32_t c)
{
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe;
}

size_t flame_utf8_chars(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t n = 0;
        uint32_t c;

        while (*p) {
                size_t len = utf8_decode(p, &c);
                p += len > 0 ? len : 1;
                n++;
        }
        return n;
}

static void escape_chars(FlameBuffer *b, const unsigned char *p, size_t max_chars)
{
        uint32_t c;

        for (size_t i = 0; *p && i < max_chars; i++) {
                size_t len = utf8_decode(p, &c);

                if (len == 0) {
                        flame_buffer_puts(b, REPLACEMENT);
                        p++;
                        continue;
                }
                switch (c) {
                case '&':
                        flame_buffer_puts(b, "&amp;");
                        break;
                case '<':
                        flame_buffer_puts(b, "&lt;");
                        break;
                case '>':
                        flame_buffer_puts(b, "&gt;");
                        break;
                case '"':
                        flame_buffer_puts(b, "&quot;");
                        break;
                case '\'':
                        flame_buffer_puts(b, "&#39;");
                        break;
                default:
                        if (unwanted(c))
                                flame_buffer_puts(b, REPLACEMENT);
                        else
                                flame_buffer_append(b, (const char *)p, len);
                }
                p += len;
        }
}

void flame_buffer_escape(FlameBuffer *b, const char *s, size_t max_chars)
{
        size_t n;

        if (max_chars == SIZE_MAX) {
                escape_chars(b, (const unsigned char *)s, SIZE_MAX);
                return;
        }
        n = flame_utf8_chars(s);
        if (n <= max_chars) {
                escape_chars(b, (const unsigned char *)s, n);
                return;
        }
        if (max_chars < 3)
                return;
        escape_chars(b, (const unsigned char *)s, max_chars - 2);
        flame_buffer_puts(b, "..");
}
