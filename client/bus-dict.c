/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bus-dict.h"

int bus_read_dict(sd_bus_message *m, bus_dict_entry_fn fn, void *userdata)
{
        const char *key;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                r = fn(m, key, userdata);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}
