/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "bus-symbol-names.h"
#include "bus-target.h"
#include "macros.h"
#include "profile.h"

int bus_method_get_symbol_names(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        uint32_t pid;
        Target *t;
        int r;

        r = sd_bus_message_read(msg, "u", &pid);
        if (r < 0)
                return r;
        r = bus_get_target_for_caller(m, msg, pid, NULL, &t, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        manager_sync(m);

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(sss)");
        if (r < 0)
                return r;
        for (size_t id = 0; id < profile_n_functions(t->profile); id++) {
                const char *module, *function, *mangled = profile_function_mangled(t->profile, (uint32_t)id);

                if (!mangled)
                        continue;
                r = profile_function_name(t->profile, (uint32_t)id, &module, &function);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(sss)", module, function, mangled);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
