/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <string.h>

#include "quote.h"
#include "utf8.h"

const char *quote_prefix(const char *s, char buf[static QUOTE_SIZE])
{
        const char *p = s ?: "";
        size_t left = strlen(p), n = 0;

        while (*p) {
                size_t length = utf8_char_length(p, left);
                bool replace = length == 0 || utf8_char_is_control(p, length);
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
                left -= length ?: 1;
        }
        buf[n] = '\0';
        return buf;
}
