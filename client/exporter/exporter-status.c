/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bus-names.h"
#include "exporter-status.h"
#include "macros.h"

/* The message of a D-Bus error comes from the daemon: printed as one line, control characters replaced. */
static void one_line(char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        *s = ' ';
}

static bool name_is(const sd_bus_error *error, const char *name)
{
        return error && sd_bus_error_is_set(error) && sd_bus_error_has_name(error, name);
}

unsigned exporter_status_from_bus(int r, const sd_bus_error *error, char *buf, size_t size)
{
        const char *message = error && sd_bus_error_is_set(error) && error->message ? error->message : NULL;
        unsigned status;

        if (name_is(error, VPROF_ERROR_NO_SUCH_PROCESS) || name_is(error, VPROF_ERROR_NOT_ATTACHED) ||
            name_is(error, VPROF_ERROR_NO_SUCH_UNIT) || name_is(error, VPROF_ERROR_NO_SUCH_CGROUP)) {
                snprintf(buf, size, "unknown target: %s", message ?: "not attached");
                status = 404;
        } else if (name_is(error, SD_BUS_ERROR_INVALID_ARGS)) {
                snprintf(buf, size, "invalid argument: %s", message ?: "refused by vprofd");
                status = 400;
        } else if (name_is(error, SD_BUS_ERROR_ACCESS_DENIED)) {
                /* Nothing of vprofd's message, which names the target: the asker may not know even that. */
                snprintf(buf, size, "access denied");
                status = 403;
        } else if (name_is(error, SD_BUS_ERROR_SERVICE_UNKNOWN) || name_is(error, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ||
                   name_is(error, SD_BUS_ERROR_NO_REPLY) || name_is(error, SD_BUS_ERROR_TIMEOUT) ||
                   name_is(error, SD_BUS_ERROR_DISCONNECTED) || name_is(error, SD_BUS_ERROR_NO_SERVER) ||
                   IN_SET(r, -ETIMEDOUT, -ECONNRESET, -ECONNREFUSED, -ENOTCONN, -ENOENT, -EPIPE, -ESHUTDOWN)) {
                snprintf(buf, size, "vprofd is not answering: %s", message ?: strerror(-r));
                status = 503;
        } else if (r == -EFBIG) {
                snprintf(buf, size, "the profile is larger than MaxResponseBytes=");
                status = 500;
        } else {
                snprintf(buf, size, "vprofd's call failed: %s", message ?: strerror(-r));
                status = 500;
        }
        one_line(buf);
        return status;
}
