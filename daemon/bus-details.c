/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-details.h"
#include "bus-target.h"
#include "macros.h"

static int append_target(sd_bus_message *reply, const Target *t)
{
        int r;

        r = sd_bus_message_open_container(reply, 'r', "ua{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "u", (uint32_t)t->pid);
        if (r < 0)
                return r;
        /* frequency: of the tables' sample counts, which an exited target restored by a daemon that now samples at
         * another frequency keeps (state-store.h). */
        r = sd_bus_message_append(reply, "a{sv}", 9,
                                  "command", "s", t->info.comm,
                                  "state", "s", target_status(t),
                                  "samples", "t", profile_total(t->profile),
                                  "attached_usec", "t", t->attach_usec,
                                  "flags", "t", t->flags,
                                  "ns_pid", "u", (uint32_t)(t->info.ns_tgid ?: t->pid),
                                  "uid", "u", (uint32_t)t->info.uid[0],
                                  "start_time", "t", t->info.start_time,
                                  "frequency", "u", profile_frequency(t->profile));
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

int bus_method_list_targets(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return bus_reply_visible_targets(msg, userdata, "(ua{sv})", append_target, error);
}
