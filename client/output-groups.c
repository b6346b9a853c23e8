/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "bus-names.h"
#include "output-util.h"

/* The groups as vprofctl list shows them after the targets: what each one is, and how many processes it has,
 * had and could not take in. */
static const ColumnSpec group_columns[] = {
        {"GROUP", 0.3, SCOLS_FL_TRUNC},
        {"KIND", 1, 0},
        {"CGROUP", 0.3, SCOLS_FL_TRUNC},
        {"RUNNING", 1, SCOLS_FL_RIGHT},
        {"EXITED", 1, SCOLS_FL_RIGHT},
        {"REFUSED", 1, SCOLS_FL_RIGHT},
        {"OFF-CPU", 1, 0},
        {"ATTACHED", 1, 0},
};

json_object *groups_to_json(const GroupList *l)
{
        _cleanup_json_ json_object *array = json_object_new_array();

        if (!array)
                return NULL;
        for (size_t i = 0; l && i < l->n_groups; i++) {
                const GroupInfo *g = &l->groups[i];
                _cleanup_json_ json_object *e = json_object_new_object();
                int r;

                if (!e)
                        return NULL;
                r = json_add_string(e, "group", g->spec);
                if (r >= 0)
                        r = json_add_string(e, "kind", g->kind);
                if (r >= 0)
                        r = json_add_string(e, "cgroup", g->cgroup[0] ? g->cgroup : NULL);
                if (r >= 0)
                        r = json_add_u64(e, "cgroup_id", g->cgroup_id);
                if (r >= 0 && g->pid > 0)
                        r = json_add_u64(e, "pid", g->pid);
                if (r >= 0)
                        r = json_add_u64(e, "running", g->processes);
                if (r >= 0)
                        r = json_add_u64(e, "exited", g->exited);
                if (r >= 0)
                        r = json_add_u64(e, "members", g->members);
                if (r >= 0)
                        r = json_add_u64(e, "refused", g->refused);
                if (r >= 0)
                        r = json_add_u64(e, "evicted", g->evicted);
                if (r >= 0)
                        r = json_add_u64(e, "expired", g->expired);
                if (r >= 0)
                        r = json_add_bool(e, "off_cpu", g->flags & VPROF_ATTACH_OFF_CPU);
                if (r >= 0)
                        r = json_add_u64(e, "attached_usec", g->attached_usec);
                if (r >= 0)
                        r = json_add_u64(e, "uid", g->uid);
                if (r < 0 || json_append(array, TAKE_PTR(e)) < 0)
                        return NULL;
        }
        return TAKE_PTR(array);
}

int output_groups(const GroupList *l, OutputFlags flags)
{
        _cleanup_(scols_unref_tablep) struct libscols_table *tb = NULL;
        int r;

        r = table_new(group_columns, ELEMENTSOF(group_columns), flags, &tb);
        if (r < 0)
                return r;
        for (size_t i = 0; i < l->n_groups; i++) {
                const GroupInfo *g = &l->groups[i];
                char running[16], exited[16], refused[32], attached[64];

                snprintf(running, sizeof(running), "%" PRIu32, g->processes);
                snprintf(exited, sizeof(exited), "%" PRIu32, g->exited);
                snprintf(refused, sizeof(refused), "%" PRIu64, g->refused);
                format_timestamp(attached, sizeof(attached), g->attached_usec);
                r = table_add_line(tb, 8,
                                   (const char *const[]){g->spec, g->kind, g->cgroup[0] ? g->cgroup : "-", running,
                                                         exited, refused,
                                                         g->flags & VPROF_ATTACH_OFF_CPU ? "yes" : "no", attached});
                if (r < 0)
                        return r;
        }
        return scols_print_table(tb);
}
