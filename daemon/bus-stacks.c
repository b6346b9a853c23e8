/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "bus-stacks.h"
#include "bus-target.h"
#include "macros.h"
#include "profile.h"

static int append_functions(sd_bus_message *reply, const Profile *p)
{
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ss)");
        if (r < 0)
                return r;
        for (size_t id = 0; id < profile_n_functions(p); id++) {
                const char *module, *function;

                r = profile_function_name(p, (uint32_t)id, &module, &function);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(ss)", module, function);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int append_stack(sd_bus_message *reply, const ProfileStackRow *row)
{
        int r;

        r = sd_bus_message_open_container(reply, 'r', "auut");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "u");
        if (r < 0)
                return r;
        for (size_t i = row->n_frames; i-- > 0;) {
                r = sd_bus_message_append_basic(reply, 'u', &row->frames[i]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "ut", (uint32_t)row->n_kernel_frames, row->samples);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

int bus_method_get_stacks(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ ProfileStackRow *rows = NULL;
        Manager *m = userdata;
        uint32_t pid, limit;
        size_t n, bytes = 0;
        Target *t;
        int r;

        r = sd_bus_message_read(msg, "uu", &pid, &limit);
        if (r < 0)
                return r;
        r = bus_get_target_for_caller(m, msg, pid, NULL, &t, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        manager_sync(m);
        r = profile_stacks(t->profile, limit, &rows, &n);
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "tt", profile_total(t->profile), profile_other_stack_samples(t->profile));
        if (r < 0)
                return r;
        r = append_functions(reply, t->profile);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(auut)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                /* 4 bytes a frame, 24 of array length, counts and padding a stack. */
                bytes += rows[i].n_frames * 4 + 24;
                if (bytes > BUS_STACKS_MAX_BYTES)
                        break;
                r = append_stack(reply, &rows[i]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
