/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* The end of every reply that ends with an array: the array closed, the reply sent. */
static inline int bus_reply_close_and_send(sd_bus_message *reply)
{
        int r = sd_bus_message_close_container(reply);

        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
