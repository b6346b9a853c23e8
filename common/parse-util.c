/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "parse-util.h"

#define PID_MAX_LIMIT (UINT32_C(4) * 1024 * 1024)

int parse_u64(const char *s, uint64_t *ret)
{
        unsigned long long v;
        char *end;

        assert(s);
        assert(ret);

        /* strtoull accepts leading spaces and signs ("-1" wraps around); a PID or a count never has them. */
        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end != '\0')
                return -EINVAL;
        *ret = v;
        return 0;
}

int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *ret)
{
        uint64_t v;
        int r;

        assert(ret);

        r = parse_u64(s, &v);
        if (r < 0)
                return r;
        if (v < min || v > max)
                return -ERANGE;
        *ret = (uint32_t)v;
        return 0;
}

int parse_pid(const char *s, uint32_t *ret)
{
        return parse_u32(s, 1, PID_MAX_LIMIT, ret);
}
