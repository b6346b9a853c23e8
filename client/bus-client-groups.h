/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "macros.h"

/* ListGroups: the units, cgroups and processes followed with their children that the caller owns
 * (org.vprof.Profiler1.xml). */

typedef struct GroupInfo {
        char *spec;    /* as Attach names it: NAME.service, /cgroup/path, or the PID */
        char *kind;    /* "unit", "cgroup" or "children" */
        char *cgroup;  /* "" for children */
        uint64_t cgroup_id;
        uint32_t pid;  /* children: the process followed */
        uint32_t processes, exited;
        uint64_t members, refused;
        uint64_t evicted, expired; /* exited members detached for newer ones, and after their retention */
        uint64_t attached_usec;
        uint64_t flags;
        uint32_t uid;
} GroupInfo;

typedef struct GroupList {
        GroupInfo *groups;
        size_t n_groups;
} GroupList;

GroupList *group_list_free(GroupList *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(GroupList *, group_list_free);

/* Keys this client does not know are skipped; known keys of another type are refused as a bad reply. */
int bus_list_groups(sd_bus *bus, sd_bus_error *error, GroupList **ret);
