/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-list.h"
#include "macros.h"

int cpu_list_parse(const char *text, bool *cpus, size_t n)
{
        const char *p = text;
        int count = 0;

        assert(text);
        assert(cpus || n == 0);

        memset(cpus, 0, n * sizeof(bool));
        while (*p && *p != '\n') {
                unsigned long first, last;
                char *end;

                if (*p < '0' || *p > '9')
                        return -EINVAL;
                first = last = strtoul(p, &end, 10);
                if (*end == '-') {
                        p = end + 1;
                        if (*p < '0' || *p > '9')
                                return -EINVAL;
                        last = strtoul(p, &end, 10);
                }
                if (last < first)
                        return -EINVAL;
                for (unsigned long c = first; c <= last && c < n; c++)
                        if (!cpus[c]) {
                                cpus[c] = true;
                                count++;
                        }
                p = end;
                if (*p == ',')
                        p++;
                else if (*p && *p != '\n')
                        return -EINVAL;
        }
        return count;
}

int cpu_list_read_online(bool *cpus, size_t n)
{
        _cleanup_fclose_ FILE *f = NULL;
        char line[4096];

        assert(cpus || n == 0);

        f = fopen("/sys/devices/system/cpu/online", "re");
        if (!f)
                return negative_errno();
        if (!fgets(line, sizeof(line), f))
                return -EIO;
        return cpu_list_parse(line, cpus, n);
}
