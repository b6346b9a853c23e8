/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "macros.h"
#include "time-util.h"

int duration_parse(const char *s, uint64_t *ret_usec)
{
        static const struct {
                const char *suffix;
                uint64_t sec;
        } units[] = {
                {"", 1},
                {"s", 1},
                {"m", 60},
                {"h", 3600},
        };
        uint64_t n = 0;
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
                n = MIN(n * 10 + (uint64_t)(*p - '0'), DURATION_MAX_SEC + 1);

        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                if (strcmp(p, units[i].suffix) != 0)
                        continue;
                if (n == 0 || n > DURATION_MAX_SEC / units[i].sec)
                        return -ERANGE;
                *ret_usec = n * units[i].sec * USEC_PER_SEC;
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
