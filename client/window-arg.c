/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "macros.h"
#include "window-arg.h"

static const struct {
        const char *suffix;
        uint64_t usec;
} units[] = {
        { "us", 1 },
        { "ms", 1000 },
        { "s", UINT64_C(1000000) },
        { "", UINT64_C(1000000) },
        { "m", UINT64_C(60000000) },
        { "min", UINT64_C(60000000) },
        { "h", UINT64_C(3600000000) },
};

int window_arg_parse(const char *s, uint64_t *ret_usec)
{
        /* The number as a fraction: whole and millionths, so that "0.5" and "1.000001" are exact. */
        uint64_t whole = 0, millionths = 0, scale = 1000000, unit = 0, usec;
        const char *p = s;

        if (strcmp(s, "all") == 0) {
                *ret_usec = 0;
                return 0;
        }
        if (*p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                whole = whole * 10 + (uint64_t)(*p - '0');
                if (whole > WINDOW_ARG_MAX_USEC)
                        return -ERANGE;
        }
        if (*p == '.') {
                p++;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                for (; *p >= '0' && *p <= '9'; p++) {
                        if (scale == 1)
                                return -EINVAL; /* more decimals than a microsecond of an hour needs */
                        scale /= 10;
                        millionths += (uint64_t)(*p - '0') * scale;
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (strcmp(p, units[i].suffix) == 0)
                        unit = units[i].usec;
        if (unit == 0)
                return -EINVAL;
        /* whole <= WINDOW_ARG_MAX_USEC and unit <= an hour: no overflow below 2^64. */
        if (whole > WINDOW_ARG_MAX_USEC / unit)
                return -ERANGE;
        /* The fraction of the unit, rounded up to a microsecond. */
        usec = whole * unit + (millionths * unit + 999999) / 1000000;
        if (usec == 0 || usec > WINDOW_ARG_MAX_USEC)
                return -ERANGE;
        *ret_usec = usec;
        return 0;
}
