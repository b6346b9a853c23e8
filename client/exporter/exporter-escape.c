/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <string.h>

#include "exporter-escape.h"

bool exporter_text_valid(const char *s, size_t n)
{
        const unsigned char *p = (const unsigned char *)s, *end = p + n;

        while (p < end) {
                uint32_t cp;
                size_t len;

                if (*p < 0x80) {
                        if (*p < 0x20 || *p == 0x7f)
                                return false;
                        p++;
                        continue;
                }
                if ((*p & 0xe0) == 0xc0) {
                        len = 2;
                        cp = *p & 0x1f;
                } else if ((*p & 0xf0) == 0xe0) {
                        len = 3;
                        cp = *p & 0x0f;
                } else if ((*p & 0xf8) == 0xf0) {
                        len = 4;
                        cp = *p & 0x07;
                } else
                        return false;
                if ((size_t)(end - p) < len)
                        return false;
                for (size_t i = 1; i < len; i++) {
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (p[i] & 0x3f);
                }
                /* Overlong forms, surrogates, past U+10FFFF and the C1 controls. */
                if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
                    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || (cp >= 0x80 && cp < 0xa0))
                        return false;
                p += len;
        }
        return true;
}

void exporter_write_html(FILE *f, const char *s)
{
        for (; *s; s++)
                switch (*s) {
                case '&':
                        fputs("&amp;", f);
                        break;
                case '<':
                        fputs("&lt;", f);
                        break;
                case '>':
                        fputs("&gt;", f);
                        break;
                case '"':
                        fputs("&quot;", f);
                        break;
                case '\'':
                        fputs("&#39;", f);
                        break;
                default:
                        fputc(*s, f);
                }
}

void exporter_write_label(FILE *f, const char *s)
{
        for (; *s; s++)
                switch (*s) {
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '"':
                        fputs("\\\"", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                default:
                        fputc(*s, f);
                }
}

void exporter_write_url_component(FILE *f, const char *s)
{
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                    strchr("-._~", *p))
                        fputc(*p, f);
                else
                        fprintf(f, "%%%02X", *p);
}
