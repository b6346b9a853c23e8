/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-client-details.h"
#include "bus-dict.h"
#include "bus-names.h"

static int read_string(sd_bus_message *m, char **ret)
{
        const char *v;
        int r;

        r = sd_bus_message_read(m, "v", "s", &v);
        if (r < 0)
                return r;
        free(*ret);
        *ret = strdup(v);
        return *ret ? 0 : -ENOMEM;
}

/* One dictionary entry into t. */
static int read_entry(sd_bus_message *m, const char *key, void *userdata)
{
        TargetInfo *t = userdata;

        if (strcmp(key, "command") == 0)
                return read_string(m, &t->command);
        if (strcmp(key, "state") == 0)
                return read_string(m, &t->state);
        if (strcmp(key, "samples") == 0)
                return sd_bus_message_read(m, "v", "t", &t->samples);
        if (strcmp(key, "attached_usec") == 0)
                return sd_bus_message_read(m, "v", "t", &t->attached_usec);
        if (strcmp(key, "flags") == 0)
                return sd_bus_message_read(m, "v", "t", &t->flags);
        if (strcmp(key, "ns_pid") == 0)
                return sd_bus_message_read(m, "v", "u", &t->ns_pid);
        if (strcmp(key, "frequency") == 0)
                return sd_bus_message_read(m, "v", "u", &t->frequency);
        return sd_bus_message_skip(m, "v");
}

static int read_target(sd_bus_message *m, TargetInfo *t)
{
        int r;

        r = sd_bus_message_read(m, "u", &t->pid);
        if (r < 0)
                return r;
        r = bus_read_dict(m, read_entry, t);
        if (r < 0)
                return r;
        /* The two strings every row shows. */
        if (!t->command)
                t->command = strdup("");
        if (!t->state)
                t->state = strdup("");
        return t->command && t->state ? 0 : -ENOMEM;
}

int bus_list_target_details(sd_bus *bus, sd_bus_error *error, TargetList **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(target_list_freep) TargetList *l = NULL;
        size_t allocated = 0;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, "ListTargets",
                               error, &reply, NULL);
        if (r < 0)
                return r;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        r = sd_bus_message_enter_container(reply, 'a', "(ua{sv})");
        if (r < 0)
                return bus_bad_reply(error, "ListTargets", r);
        while ((r = sd_bus_message_enter_container(reply, 'r', "ua{sv}")) > 0) {
                TargetInfo *t = target_list_append(l, &allocated);

                if (!t)
                        return -ENOMEM;
                r = read_target(reply, t);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return bus_bad_reply(error, "ListTargets", r);
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return bus_bad_reply(error, "ListTargets", r);
        }
        if (r < 0)
                return bus_bad_reply(error, "ListTargets", r);
        *ret = TAKE_PTR(l);
        return 0;
}
