/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "macros.h"
#include "time-util.h"

int duration_parse(const char *s, uint64_t *ret_usec)
{
        static const struct {
                const char *suffix;
                uint64_t usec;
        } units[] = {
                {"", USEC_PER_SEC},
                {"s", USEC_PER_SEC},
                {"m", 60 * USEC_PER_SEC},
                {"h", 3600 * USEC_PER_SEC},
                {"ms", USEC_PER_MSEC},
                {"us", 1},
        };
        /* The number as whole units and millionths of one, so that "0.5" and "1.000001" are exact. */
        uint64_t n = 0, millionths = 0, scale = 1000000, usec;
        const char *p = s;

        if (strcmp(s, "all") == 0) {
                *ret_usec = 0;
                return 0;
        }
        if (*p < '0' || *p > '9')
                return -EINVAL;
        /* Digits past the maximum are still read, so that "99999999999s" is out of range, not invalid; the
         * clamp keeps n from wrapping around. */
        for (; *p >= '0' && *p <= '9'; p++)
                n = MIN(n * 10 + (uint64_t)(*p - '0'), DURATION_MAX_SEC * USEC_PER_SEC + 1);
        if (*p == '.') {
                p++;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                for (; *p >= '0' && *p <= '9'; p++) {
                        if (scale == 1)
                                return -EINVAL; /* finer than a millionth */
                        scale /= 10;
                        millionths += (uint64_t)(*p - '0') * scale;
                }
        }

        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                if (strcmp(p, units[i].suffix) != 0)
                        continue;
                if (n > DURATION_MAX_SEC * USEC_PER_SEC / units[i].usec)
                        return -ERANGE;
                /* In microseconds (a fraction of one rounded up), then whole seconds, rounded up. */
                usec = n * units[i].usec + (millionths * units[i].usec + 999999) / 1000000;
                usec = (usec + USEC_PER_SEC - 1) / USEC_PER_SEC * USEC_PER_SEC;
                if (usec == 0 || usec > DURATION_MAX_SEC * USEC_PER_SEC)
                        return -ERANGE;
                *ret_usec = usec;
                return 0;
        }
        return -EINVAL;
}

void duration_format(char *buf, size_t size, uint64_t usec)
{
        if (usec == 0)
                snprintf(buf, size, "all");
        else
                snprintf(buf, size, "%" PRIu64 "s", usec / USEC_PER_SEC);
}

int duration_parse_at(const char *s, uint64_t *ret_window_usec, uint64_t *ret_ago_usec, bool *ret_has_ago)
{
        _cleanup_free_ char *length = NULL;
        const char *at = strchr(s, '@');
        uint64_t window, ago = 0;
        int r;

        length = at ? strndup(s, (size_t)(at - s)) : strdup(s);
        if (!length)
                return -ENOMEM;
        r = duration_parse(length, &window);
        if (r < 0)
                return r;
        if (window == 0)
                return -EINVAL;
        if (at) {
                /* "0" is no duration_parse() takes: a window that ends with the newest second. */
                if (strcmp(at + 1, "0") != 0 && strcmp(at + 1, "0s") != 0) {
                        r = duration_parse(at + 1, &ago);
                        if (r < 0)
                                return r;
                }
        }
        *ret_window_usec = window;
        *ret_ago_usec = ago;
        *ret_has_ago = at != NULL;
        return 0;
}
