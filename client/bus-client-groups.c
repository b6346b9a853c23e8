/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-client-groups.h"
#include "bus-client.h"
#include "bus-object.h"

GroupList *group_list_free(GroupList *l)
{
        if (!l)
                return NULL;
        for (size_t i = 0; i < l->n_groups; i++) {
                free(l->groups[i].spec);
                free(l->groups[i].kind);
                free(l->groups[i].cgroup);
        }
        free(l->groups);
        free(l);
        return NULL;
}

static int read_group_entry(sd_bus_message *m, const char *key, void *userdata)
{
        GroupInfo *g = userdata;

        if (strcmp(key, "kind") == 0)
                return bus_read_variant_string(m, &g->kind);
        if (strcmp(key, "cgroup") == 0)
                return bus_read_variant_string(m, &g->cgroup);
        if (strcmp(key, "cgroup_id") == 0)
                return sd_bus_message_read(m, "v", "t", &g->cgroup_id);
        if (strcmp(key, "pid") == 0)
                return sd_bus_message_read(m, "v", "u", &g->pid);
        if (strcmp(key, "processes") == 0)
                return sd_bus_message_read(m, "v", "u", &g->processes);
        if (strcmp(key, "exited") == 0)
                return sd_bus_message_read(m, "v", "u", &g->exited);
        if (strcmp(key, "members") == 0)
                return sd_bus_message_read(m, "v", "t", &g->members);
        if (strcmp(key, "refused") == 0)
                return sd_bus_message_read(m, "v", "t", &g->refused);
        if (strcmp(key, "evicted") == 0)
                return sd_bus_message_read(m, "v", "t", &g->evicted);
        if (strcmp(key, "expired") == 0)
                return sd_bus_message_read(m, "v", "t", &g->expired);
        if (strcmp(key, "attached_usec") == 0)
                return sd_bus_message_read(m, "v", "t", &g->attached_usec);
        if (strcmp(key, "flags") == 0)
                return sd_bus_message_read(m, "v", "t", &g->flags);
        if (strcmp(key, "uid") == 0)
                return sd_bus_message_read(m, "v", "u", &g->uid);
        return sd_bus_message_skip(m, "v");
}

static int read_group(sd_bus_message *m, GroupInfo *g)
{
        const char *spec;
        int r;

        r = sd_bus_message_read(m, "s", &spec);
        if (r < 0)
                return r;
        g->spec = strdup(spec);
        if (!g->spec)
                return -ENOMEM;
        r = bus_read_dict(m, read_group_entry, g);
        if (r < 0)
                return r;
        /* The strings every row shows. */
        if (!g->kind)
                g->kind = strdup("");
        if (!g->cgroup)
                g->cgroup = strdup("");
        return g->kind && g->cgroup ? 0 : -ENOMEM;
}

int bus_list_groups(sd_bus *bus, sd_bus_error *error, GroupList **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(group_list_freep) GroupList *l = NULL;
        size_t allocated = 0;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, "ListGroups", error,
                               &reply, NULL);
        if (r < 0)
                return r;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        r = sd_bus_message_enter_container(reply, 'a', "(sa{sv})");
        if (r < 0)
                return bus_bad_reply(error, "ListGroups", r);
        while ((r = sd_bus_message_enter_container(reply, 'r', "sa{sv}")) > 0) {
                if (l->n_groups == allocated) {
                        size_t a = MAX(allocated * 2, (size_t)8);
                        GroupInfo *g = reallocarray(l->groups, a, sizeof(*g));

                        if (!g)
                                return -ENOMEM;
                        l->groups = g;
                        allocated = a;
                }
                l->groups[l->n_groups] = (GroupInfo){};
                r = read_group(reply, &l->groups[l->n_groups++]);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return bus_bad_reply(error, "ListGroups", r);
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return bus_bad_reply(error, "ListGroups", r);
        }
        if (r < 0)
                return bus_bad_reply(error, "ListGroups", r);
        *ret = TAKE_PTR(l);
        return 0;
}
