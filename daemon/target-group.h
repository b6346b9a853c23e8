/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "macros.h"
#include "target-spec.h"

/* A set of processes profiled as one: the processes of a systemd unit or a cgroup (and its descendants), or a
 * process with the children it forks after the attach. Each member is an ordinary Target (target.h) with its
 * own tables, pointing at its group; a query on the group's spec merges the members' tables (query.h), and
 * the members that exited stay in it with their tables, as exited targets do. The manager keeps the groups by
 * spec (Manager.groups). */

typedef enum TargetGroupKind {
        TARGET_GROUP_UNIT,     /* spec "NAME.service": its cgroup, resolved through systemd at the attach */
        TARGET_GROUP_CGROUP,   /* spec "/path" */
        TARGET_GROUP_CHILDREN, /* spec "PID": the process and what it forks */
        _TARGET_GROUP_KIND_MAX,
} TargetGroupKind;

typedef struct TargetGroup {
        char *spec;          /* as queries name it: the unit, the cgroup path, the root PID in decimal */
        TargetGroupKind kind;
        uint32_t id;         /* nonzero, never reused while the daemon runs: the BPF program's records carry it */
        char *cgroup_path;   /* units and cgroups: from the cgroup2 root; NULL for children */
        uint64_t cgroup_id;  /* units and cgroups: the cgroup's id (its directory's inode) */
        unsigned cgroup_level; /* units and cgroups: the cgroup's level below the root of cgroup_path */
        pid_t root_pid;      /* children: the process followed */
        uint64_t flags;      /* VPROF_TARGET_*: what every member is attached with */
        uid_t attach_uid;    /* as Target.attach_uid: 0 for root or a caller polkit allowed */
        uid_t owner_uid;     /* whose slots the members take (manager-slots.h) */
        uint64_t attach_usec; /* CLOCK_REALTIME */
        uint64_t refused;    /* processes not taken in: limits (MaxTargets=, MaxTargetsPerUser=) or gone */
        uint64_t members;    /* processes taken in since the attach, running or exited, detached since or not */
        uint64_t evicted;    /* exited targets detached to make room for its members (manager-slots.h) */
        uint64_t expired;    /* its exited members detached after ExitedTargetRetentionSec= */
        struct UnitLookup *unit; /* units: systemd's changes of the unit followed (systemd-unit.h); NULL else */
} TargetGroup;

/* Whether g is a unit's or a cgroup's: the BPF program keeps its processes' samples by their cgroup. */
static inline bool target_group_has_cgroup(const TargetGroup *g)
{
        return g->kind == TARGET_GROUP_UNIT || g->kind == TARGET_GROUP_CGROUP;
}

int target_group_new(const char *spec, TargetGroupKind kind, TargetGroup **ret);
TargetGroup *target_group_free(TargetGroup *g);
DEFINE_TRIVIAL_CLEANUP_FUNC(TargetGroup *, target_group_free);

const char *target_group_kind_to_string(TargetGroupKind k);
