/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "profile.h"

/* The ids of the tables' functions that are inlined frames (profile_intern_frame()), as an array "au": the
 * argument "inlined" of GetStacks and GetProfile, after the others so that a client reading only those reads the
 * reply as before. */
static inline int bus_append_inlined(sd_bus_message *reply, const Profile *p)
{
        int r = sd_bus_message_open_container(reply, 'a', "u");

        if (r < 0)
                return r;
        for (size_t id = 0; id < profile_n_functions(p); id++) {
                if (!profile_function_inlined(p, (uint32_t)id))
                        continue;
                r = sd_bus_message_append_basic(reply, 'u', &(uint32_t){ (uint32_t)id });
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* The end of every reply that ends with an array: the array closed, the reply sent. */
static inline int bus_reply_close_and_send(sd_bus_message *reply)
{
        int r = sd_bus_message_close_container(reply);

        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
