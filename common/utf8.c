/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

size_t utf8_char_length(const char *s, size_t n)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t length;

        if (n == 0)
                return 0;
        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                length = 2;
        else if (p[0] >= 0xe0 && p[0] <= 0xef)
                length = 3;
        else if (p[0] >= 0xf0 && p[0] <= 0xf4)
                length = 4;
        else
                return 0; /* a continuation byte, 0xc0/0xc1 (always overlong) or past U+10FFFF */
        if (n < length)
                return 0;
        for (size_t i = 1; i < length; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        /* The second byte's range rules out the overlong forms, the surrogates and what is past U+10FFFF. */
        if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) || (p[0] == 0xf0 && p[1] < 0x90) ||
            (p[0] == 0xf4 && p[1] >= 0x90))
                return 0;
        return length;
}

bool utf8_char_is_control(const char *s, size_t length)
{
        const unsigned char *p = (const unsigned char *)s;

        return (length == 1 && (p[0] < 0x20 || p[0] == 0x7f)) || (length == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

bool utf8_is_valid(const char *s, size_t n)
{
        for (size_t i = 0; i < n;) {
                size_t length = utf8_char_length(s + i, n - i);

                if (length == 0)
                        return false;
                i += length;
        }
        return true;
}

/* Printable ASCII: most names are nothing else, and go byte by byte without decoding. */
static inline bool is_plain(char c)
{
        return (unsigned char)c >= 0x20 && (unsigned char)c < 0x7f;
}

bool utf8_is_printable(const char *s, size_t n)
{
        for (size_t i = 0; i < n;) {
                size_t length;

                if (is_plain(s[i])) {
                        i++;
                        continue;
                }
                length = utf8_char_length(s + i, n - i);
                if (length == 0 || utf8_char_is_control(s + i, length))
                        return false;
                i += length;
        }
        return true;
}

/* The escape of one byte that is not kept: 2 or 4 bytes at out. */
static size_t escape_byte(unsigned char c, char out[static 4])
{
        static const char hex[] = "0123456789abcdef";

        out[0] = '\\';
        switch (c) {
        case '\n':
                out[1] = 'n';
                return 2;
        case '\r':
                out[1] = 'r';
                return 2;
        case '\t':
                out[1] = 't';
                return 2;
        default:
                out[1] = 'x';
                out[2] = hex[c >> 4];
                out[3] = hex[c & 0xf];
                return 4;
        }
}

size_t utf8_escaped_length(const char *s, size_t n)
{
        size_t out = 0;

        for (size_t i = 0; i < n;) {
                size_t length;
                char escaped[4];

                if (is_plain(s[i])) {
                        out++;
                        i++;
                        continue;
                }
                length = utf8_char_length(s + i, n - i);
                if (length > 0 && !utf8_char_is_control(s + i, length)) {
                        out += length;
                        i += length;
                        continue;
                }
                for (size_t j = 0; j < (length ?: 1); j++)
                        out += escape_byte((unsigned char)s[i + j], escaped);
                i += length ?: 1;
        }
        return out;
}

char *utf8_escape_buf(const char *s, size_t n, char *buf, size_t size)
{
        size_t used = 0;

        if (size == 0)
                return buf;
        for (size_t i = 0; i < n;) {
                size_t length = utf8_char_length(s + i, n - i);
                char escaped[8];
                size_t out = 0;

                if (length > 0 && !utf8_char_is_control(s + i, length)) {
                        if (used + length >= size)
                                break;
                        memcpy(buf + used, s + i, length);
                        used += length;
                        i += length;
                        continue;
                }
                /* An invalid byte alone, a control character byte by byte (a C1 control has two). */
                for (size_t j = 0; j < (length ?: 1); j++)
                        out += escape_byte((unsigned char)s[i + j], escaped + out);
                if (used + out >= size)
                        break;
                memcpy(buf + used, escaped, out);
                used += out;
                i += length ?: 1;
        }
        buf[used] = '\0';
        return buf;
}

int utf8_escape(const char *s, char **ret)
{
        size_t n = strlen(s);
        char *buf = malloc(UTF8_ESCAPED_MAX(n) + 1);

        if (!buf)
                return -ENOMEM;
        utf8_escape_buf(s, n, buf, UTF8_ESCAPED_MAX(n) + 1);
        *ret = buf;
        return 0;
}

char *utf8_escape_dup(const char *s)
{
        char *copy;

        if (utf8_is_printable(s, strlen(s)))
                return strdup(s);
        return utf8_escape(s, &copy) < 0 ? NULL : copy;
}

int utf8_escape_or_keep(const char *s, char **ret_buf, const char **ret)
{
        int r;

        *ret_buf = NULL;
        if (!s || utf8_is_printable(s, strlen(s))) {
                *ret = s;
                return 0;
        }
        r = utf8_escape(s, ret_buf);
        if (r < 0)
                return r;
        *ret = *ret_buf;
        return 0;
}

int utf8_escape_in_place(char **s)
{
        char *escaped;
        int r;

        if (!*s || utf8_is_printable(*s, strlen(*s)))
                return 0;
        r = utf8_escape(*s, &escaped);
        if (r < 0)
                return r;
        free(*s);
        *s = escaped;
        return 1;
}
