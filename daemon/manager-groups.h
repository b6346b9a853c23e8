/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "manager.h"
#include "systemd-unit.h"

/* The manager's groups (target-group.h): attaching a unit's or a cgroup's processes, or a process with its
 * children, and taking each of their processes in as a target of its own, a member.
 *
 * A cgroup (a unit's is its cgroup) goes into the BPF program's cgroup_targets with the group's id: the program
 * keeps the samples of every process in it or below it, targets or not, from their first, and each record carries
 * the group; once a read of the ring buffer has returned, the drain has a member made of each process it found
 * without a target (manager_groups_setup()), and the records that waited for it count in its tables. A process that the group takes in follows its children in the kernel, so a worker it
 * forks is a member from its fork on, named from a copy of its parent's maps even when it exits before the daemon
 * sees it. A process attached with its children (Attach flag 0x2) is the one member a children group starts with.
 *
 * Members take slots as any target does, the group owner's (manager-slots.h): a process refused one for a limit
 * (MaxTargets=, MaxTargetsPerUser=, the BPF targets map) is counted in its group's refused and in
 * Manager.members_refused, and its records count as unclaimed; a child refused leaves the BPF maps again. A
 * cgroup's process refused is not tried again until a slot frees. Members that exit stay with their tables, as
 * exited targets do. */

/* Attach the cgroup at path (cgroup-util.h; a unit's, resolved by the caller) as the group spec of kind
 * (TARGET_GROUP_UNIT or TARGET_GROUP_CGROUP), for caller; flags: VPROF_TARGET_OFF_CPU or 0. -EEXIST when spec is
 * attached; -EADDRINUSE when its cgroup is, as another group (*ret_other set); -EINVAL for the root cgroup, which
 * holds every process; -ENOMEDIUM without a cgroup2 hierarchy; -ENOENT, -ENOTDIR, -ELOOP when there is no such
 * cgroup; -E2BIG when VPROF_MAX_CGROUPS are attached; -EOPNOTSUPP when the daemon's cgroup namespace hides the
 * levels; -ESHUTDOWN when the daemon is exiting. */
int manager_attach_cgroup(Manager *m, const char *spec, TargetGroupKind kind, const char *path, AuthzCaller caller,
                          uint64_t flags, TargetGroup **ret, TargetGroup **ret_other);

/* Attach process pid and every process it forks from now on (and they fork), as the group named by pid in
 * decimal. Errors as manager_attach(). */
int manager_attach_children(Manager *m, pid_t pid, AuthzCaller caller, uint64_t flags, TargetGroup **ret,
                            pid_t *ret_tgid);

/* Detach g and all its members, for caller (named in the log line); frees g. */
int manager_detach_group(Manager *m, TargetGroup *g, AuthzCaller caller);

/* Reset the tables of every member of g. */
int manager_reset_group(Manager *m, TargetGroup *g, AuthzCaller caller);

/* The groups take in the processes whose records the drain finds without a target (drain.h's on_member, after
 * each read of the ring buffer): before the first attach. */
void manager_groups_setup(Manager *m);

/* A unit's group follows its unit (unit_lookup_follow()): stopped, the cgroup that went is dropped; started again,
 * the new cgroup at the same path is followed, its processes taken in. userdata: the Manager. */
void manager_unit_changed(UnitLookup *l, UnitLookupResult result, const char *cgroup, const char *message,
                          void *userdata);

/* A group's running and exited members, counted. */
void manager_group_count(Manager *m, const TargetGroup *g, unsigned *ret_running, unsigned *ret_exited);
