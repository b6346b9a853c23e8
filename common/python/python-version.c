/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "python-version.h"

bool python_version_valid(uint32_t v)
{
        unsigned level = (v >> 4) & 0xfu;

        return PYTHON_VERSION_MAJOR(v) == 3 &&
               (level == 0xa || level == 0xb || level == 0xc || level == 0xf);
}

/* A decimal number of at most 3 digits at s[*i], below 256. */
static int parse_number(const char *s, size_t len, size_t *i, uint32_t *ret)
{
        uint32_t n = 0;
        size_t start = *i;

        while (*i < len && s[*i] >= '0' && s[*i] <= '9' && *i - start < 3)
                n = n * 10 + (uint32_t)(s[(*i)++] - '0');
        if (*i == start || n > 255 || (*i < len && s[*i] >= '0' && s[*i] <= '9'))
                return -EINVAL;
        *ret = n;
        return 0;
}

int python_version_parse(const char *s, size_t len, uint32_t *ret)
{
        uint32_t major, minor, micro, level = 0xf, serial = 0;
        size_t i = 0;

        if (parse_number(s, len, &i, &major) < 0 || i >= len || s[i++] != '.' ||
            parse_number(s, len, &i, &minor) < 0 || i >= len || s[i++] != '.' ||
            parse_number(s, len, &i, &micro) < 0)
                return -EINVAL;
        if (i < len && s[i] != '+') {
                if (s[i] == 'a')
                        level = 0xa, i++;
                else if (s[i] == 'b')
                        level = 0xb, i++;
                else if (len - i >= 2 && s[i] == 'r' && s[i + 1] == 'c')
                        level = 0xc, i += 2;
                else
                        return -EINVAL;
                if (parse_number(s, len, &i, &serial) < 0 || serial > 15)
                        return -EINVAL;
        }
        /* A "+" marks a build from a development tree after that release. */
        if (i < len && s[i] == '+')
                i++;
        if (i != len || major != 3)
                return -EINVAL;
        *ret = major << 24 | minor << 16 | micro << 8 | level << 4 | serial;
        return 0;
}

/* A version that the string s (len bytes) is, or ends with after a '/', '-' or ' ': "3.11.2", and the tail
 * of
 * "/usr/lib/python-3.11.7" (a linker merging strings keeps "3.11.7" as the tail of a longer one that ends
 * with it, as in pyenv's builds, where PY_VERSION is the tail of the installation's path). */
static int version_in_string(const char *s, size_t len, uint32_t *ret)
{
        size_t tail = len;

        /* The longest version string is "255.255.255rc15+". */
        if (len >= 5 && len <= 16 && python_version_parse(s, len, ret) == 0)
                return 0;
        while (tail > 0 && s[tail - 1] != '/' && s[tail - 1] != '-' && s[tail - 1] != ' ' &&
               len - tail <= 16)
                tail--;
        if (tail == 0 || len - tail < 5 || len - tail > 16)
                return -EINVAL;
        return python_version_parse(s + tail, len - tail, ret);
}

int python_version_scan(const uint8_t *data, size_t size, uint32_t *ret)
{
        uint32_t found = 0;
        bool any = false;

        /* Each string of the block, from a NUL (or the start) to the next NUL. */
        for (size_t start = 0; start < size;) {
                const uint8_t *end = memchr(data + start, '\0', size - start);
                size_t len = (end ? (size_t)(end - data) : size) - start;
                uint32_t v;

                if (version_in_string((const char *)data + start, len, &v) == 0 &&
                    PYTHON_VERSION_MINOR(v) >= 6) {
                        if (any && PYTHON_VERSION_MINOR(v) != PYTHON_VERSION_MINOR(found))
                                return -ENOTUNIQ;
                        if (!any)
                                found = v;
                        any = true;
                }
                start += len + 1;
        }
        if (!any)
                return -ENOENT;
        *ret = found;
        return 0;
}

const char *python_version_format(uint32_t v, char *buf, size_t size)
{
        unsigned level = (v >> 4) & 0xfu;
        const char *suffix = level == 0xa ? "a" : level == 0xb ? "b" : level == 0xc ? "rc" : "";

        if (level == 0xf)
                snprintf(buf, size, "%u.%u.%u", PYTHON_VERSION_MAJOR(v), PYTHON_VERSION_MINOR(v),
                         PYTHON_VERSION_MICRO(v));
        else
                snprintf(buf, size, "%u.%u.%u%s%u", PYTHON_VERSION_MAJOR(v), PYTHON_VERSION_MINOR(v),
                         PYTHON_VERSION_MICRO(v), suffix, v & 0xfu);
        return buf;
}
