/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "file-util.h"
#include "state-internal.h"
#include "time-util.h"

void state_format_age(char *buf, size_t size, uint64_t usec)
{
        uint64_t s = usec / USEC_PER_SEC;

        if (s < 60)
                snprintf(buf, size, "%.1f s", (double)usec / USEC_PER_SEC);
        else if (s < 3600)
                snprintf(buf, size, "%" PRIu64 " min %" PRIu64 " s", s / 60, s % 60);
        else if (s < 86400)
                snprintf(buf, size, "%" PRIu64 " h %" PRIu64 " min", s / 3600, s / 60 % 60);
        else
                snprintf(buf, size, "%" PRIu64 " d %" PRIu64 " h", s / 86400, s / 3600 % 24);
}

void state_read_boot_id(char id[BOOT_ID_SIZE])
{
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

        id[0] = '\0';
        if (!f || !fgets(id, BOOT_ID_SIZE, f))
                id[0] = '\0';
        id[strcspn(id, "\n")] = '\0';
}
