/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "authz.h"
#include "bus-names.h"
#include "macros.h"

int bus_caller_uid(sd_bus_message *m, uid_t *ret, sd_bus_error *error)
{
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t uid;
        int r;

        r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds);
        if (r < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Access denied: cannot determine the caller's user: %s", strerror(-r));
        if (sd_bus_creds_get_augmented_mask(creds) & SD_BUS_CREDS_EUID)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Access denied: the caller's user is not vouched for by the bus");
        r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Access denied: cannot determine the caller's user: %s", strerror(-r));
        *ret = uid;
        return 0;
}

bool authz_may_profile(uid_t caller, const ProcInfo *target)
{
        if (caller == 0)
                return true;
        return target->uid[0] == caller && target->uid[1] == caller && target->uid[2] == caller &&
               target->dumpable;
}
