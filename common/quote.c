/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <string.h>

#include "quote.h"

/* The length of the well-formed UTF-8 character at p (RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF), 0 if there is none. Stops at the first byte that is not a continuation, so never reads past the
 * NUL. */
static size_t utf8_length(const unsigned char *p)
{
        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                return (p[1] & 0xc0) == 0x80 ? 2 : 0;
        if (p[0] >= 0xe0 && p[0] <= 0xef) {
                if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
                        return 0;
                if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
                        return 0;
                return 3;
        }
        if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
                        return 0;
                if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
                        return 0;
                return 4;
        }
        return 0;
}

/* C0 and C1 controls and DEL: a newline would make a second line of the message, an escape sequence would talk
 * to the terminal that shows it. */
static bool is_control(const unsigned char *p, size_t length)
{
        return (length == 1 && (p[0] < 0x20 || p[0] == 0x7f)) || (length == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

const char *quote_prefix(const char *s, char buf[static QUOTE_SIZE])
{
        const unsigned char *p = (const unsigned char *)(s ?: "");
        size_t n = 0;

        while (*p) {
                size_t length = utf8_length(p);
                bool replace = length == 0 || is_control(p, length);
                size_t out = replace ? 1 : length;

                if (n + out > QUOTE_MAX) {
                        memcpy(buf + n, "…", sizeof("…"));
                        return buf;
                }
                if (replace)
                        buf[n] = '?';
                else
                        memcpy(buf + n, p, length);
                n += out;
                p += length ?: 1;
        }
        buf[n] = '\0';
        return buf;
}
