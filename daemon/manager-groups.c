/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "log.h"
#include "manager-attach.h"
#include "manager-groups.h"
#include "systemd-unit.h"
#include "time-util.h"

/* Processes of cgroups refused a slot that are remembered, so that their records do not try again each time:
 * past this many, the set starts over (and those forgotten are tried, and counted, again). */
#define REFUSED_MAX 4096

static Target *member_from_cgroup(Manager *m, TargetGroup *g, uint32_t tgid);

static int cgroup_mount(Manager *m, const char **ret)
{
        int r;

        if (!m->cgroup_mount) {
                r = cgroup2_mount_find(&m->cgroup_mount);
                if (r < 0)
                        return r == -ENOMEM ? r : -ENOMEDIUM;
        }
        *ret = m->cgroup_mount;
        return 0;
}

static int add_group(Manager *m, TargetGroup *g)
{
        int r;

        /* Never 0 (no group), never one a record in the ring may still carry. */
        g->id = ++m->last_group_id ?: ++m->last_group_id;
        g->attach_usec = now_usec(CLOCK_REALTIME);
        r = hashmap_put(m->groups, g->spec, g);
        if (r < 0)
                return r;
        r = hashmap_put(m->groups_by_id, UINT64_TO_PTR((uint64_t)g->id), g);
        if (r < 0)
                hashmap_remove(m->groups, g->spec);
        return r;
}

static void remove_group(Manager *m, TargetGroup *g)
{
        hashmap_remove(m->groups_by_id, UINT64_TO_PTR((uint64_t)g->id));
        hashmap_remove(m->groups, g->spec);
}

static void set_owner(TargetGroup *g, AuthzCaller caller)
{
        /* As a target's (target.h): polkit's yes makes the caller act as root, in the caller's slots. */
        g->attach_uid = caller.polkit_allowed ? 0 : caller.uid;
        g->owner_uid = caller.uid;
}

/* The processes in g's cgroup (open at fd) and below it as members, as far as slots go; returns how many were
 * found. */
static size_t take_in_processes(Manager *m, TargetGroup *g, int fd)
{
        size_t max = MIN((size_t)m->config.max_targets, (size_t)65536), n = 0;
        _cleanup_free_ pid_t *pids = calloc(max, sizeof(pid_t));
        int r;

        if (!pids)
                return 0;
        r = cgroup_read_procs(fd, pids, max, &n);
        if (r < 0) {
                log_warning_errno(r, "Failed to list the processes of cgroup %s: they join as they run: %m",
                                  g->cgroup_path);
                return 0;
        }
        for (size_t i = 0; i < MIN(n, max); i++)
                if (!manager_get_target(m, pids[i]))
                        (void)member_from_cgroup(m, g, (uint32_t)pids[i]);
        return n;
}

int manager_attach_cgroup(Manager *m, const char *spec, TargetGroupKind kind, const char *path, AuthzCaller caller,
                          uint64_t flags, TargetGroup **ret, TargetGroup **ret_other)
{
        _cleanup_(target_group_freep) TargetGroup *g = NULL;
        _cleanup_close_ int fd = -1;
        const char *mount;
        TargetGroup *other;
        uint64_t id;
        char who[64];
        size_t n;
        int r;

        if (m->exiting)
                return -ESHUTDOWN;
        if (manager_get_group(m, spec))
                return -EEXIST;
        if (cgroup_path_check(path) < 0 || strcmp(path, "/") == 0)
                return -EINVAL;
        r = cgroup_mount(m, &mount);
        if (r < 0)
                return r;
        fd = cgroup_open(mount, path);
        if (fd < 0)
                return fd == -EMEDIUMTYPE ? -ENOMEDIUM : fd;
        r = cgroup_fd_id(fd, &id);
        if (r < 0)
                return r;
        /* A unit and its cgroup's path are one cgroup: one group. */
        HASHMAP_FOREACH(other, m->groups)
                if (target_group_has_cgroup(other) && other->cgroup_id == id) {
                        *ret_other = other;
                        return -EADDRINUSE;
                }

        r = target_group_new(spec, kind, &g);
        if (r < 0)
                return r;
        g->cgroup_path = strdup(path);
        if (!g->cgroup_path)
                return -ENOMEM;
        g->cgroup_id = id;
        g->cgroup_level = cgroup_path_level(path);
        /* Its processes follow their children, so that a worker is a member from its fork on. */
        g->flags = (flags & VPROF_TARGET_OFF_CPU) | VPROF_TARGET_CHILDREN;
        set_owner(g, caller);
        r = add_group(m, g);
        if (r < 0)
                return r;
        r = m->sampler ? sampler_add_cgroup(m->sampler, id, g->cgroup_level, g->id) : 0;
        if (r < 0) {
                remove_group(m, g);
                return r == -EEXIST ? -EADDRINUSE : r;
        }
        /* Its processes now, members at once: one that sleeps, and forks a worker before it is ever sampled,
         * has its children followed from the start. Those to come join by their samples. */
        n = take_in_processes(m, g, fd);
        log_info("Attached to %s %s (cgroup %s, id %" PRIu64 ", %zu processes) %s%s.",
                 target_group_kind_to_string(kind), spec, path, id, n, manager_caller_text(caller, who),
                 flags & VPROF_TARGET_OFF_CPU ? ", off-CPU time included" : "");
        *ret = TAKE_PTR(g);
        /* Its members are saved with the next snapshot (groups are not): see manager_members_changed(). */
        manager_members_changed(m);
        return 0;
}

int manager_attach_children(Manager *m, pid_t pid, AuthzCaller caller, uint64_t flags, TargetGroup **ret,
                            pid_t *ret_tgid)
{
        _cleanup_(target_group_freep) TargetGroup *g = NULL;
        char spec[16];
        Target *t;
        int r;

        if (m->exiting)
                return -ESHUTDOWN;
        snprintf(spec, sizeof(spec), "%d", (int)pid);
        if (manager_get_group(m, spec))
                return -EEXIST;
        r = target_group_new(spec, TARGET_GROUP_CHILDREN, &g);
        if (r < 0)
                return r;
        g->root_pid = pid;
        g->flags = (flags & VPROF_TARGET_OFF_CPU) | VPROF_TARGET_CHILDREN;
        set_owner(g, caller);
        r = add_group(m, g);
        if (r < 0)
                return r;
        r = manager_attach_in_group(m, pid, UINT64_MAX, caller, g->flags, g, &t, ret_tgid);
        if (r < 0) {
                remove_group(m, g);
                return r;
        }
        g->members = 1;
        *ret = TAKE_PTR(g);
        return 0;
}

/* Refused processes of g forgotten: they may be another group's next time. */
static void forget_refused(Manager *m, uint32_t group)
{
        void *key, *value;
        size_t i = 0;

        while (hashmap_iterate(m->refused, &i, &key, &value))
                if ((uint32_t)(PTR_TO_UINT64(value) >> 32) == group)
                        hashmap_remove(m->refused, key);
}

void manager_group_count(Manager *m, const TargetGroup *g, unsigned *ret_running, unsigned *ret_exited)
{
        unsigned running = 0, exited = 0;
        Target *t;

        HASHMAP_FOREACH(t, m->targets)
                if (t->group == g) {
                        if (t->exited)
                                exited++;
                        else
                                running++;
                }
        *ret_running = running;
        *ret_exited = exited;
}

int manager_detach_group(Manager *m, TargetGroup *g, AuthzCaller caller)
{
        _cleanup_free_ Target **members = NULL;
        unsigned running, exited;
        size_t n;
        char who[64];
        int r;

        /* No new member from the kernel's side first; records still in the ring count as unclaimed. */
        if (target_group_has_cgroup(g) && m->sampler) {
                r = sampler_remove_cgroup(m->sampler, g->cgroup_id, g->cgroup_level);
                if (r < 0)
                        return r;
        }
        manager_group_count(m, g, &running, &exited);
        r = manager_group_members(m, g, &members, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = manager_remove_target(m, members[i]);
                if (r < 0)
                        log_warning_errno(r, "Failed to remove PID %d of %s from the BPF targets: %m",
                                          (int)members[i]->pid, g->spec);
        }
        forget_refused(m, g->id);
        remove_group(m, g);
        log_info("Detached from %s %s %s: %u processes running, %u exited, %" PRIu64 " refused, %" PRIu64
                 " evicted for newer members, %" PRIu64 " expired.",
                 target_group_kind_to_string(g->kind), g->spec, manager_caller_text(caller, who), running, exited,
                 g->refused, g->evicted, g->expired);
        target_group_free(g);
        manager_targets_changed(m);
        return 0;
}

int manager_reset_group(Manager *m, TargetGroup *g, AuthzCaller caller)
{
        _cleanup_free_ Target **members = NULL;
        TargetContext context = manager_target_context(m);
        char who[64];
        size_t n;
        int r;

        r = manager_group_members(m, g, &members, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = target_reset(members[i], &context);
                if (r < 0)
                        return r;
                if (m->observer.target_reset)
                        m->observer.target_reset(m->observer.userdata, members[i]);
        }
        log_info("Reset the tables of %s %s (%zu processes) %s.", target_group_kind_to_string(g->kind), g->spec, n,
                 manager_caller_text(caller, who));
        return 0;
}

/* A process that g could not take in: counted, and said once per group. */
static void count_refusal(Manager *m, TargetGroup *g, pid_t pid, int error)
{
        m->members_refused++;
        if (!g)
                return;
        g->refused++;
        if (g->refused == 1 && IN_SET(error, -EDQUOT, -E2BIG))
                log_notice("%s %s: PID %d not profiled, %s; further refusals are counted (ListGroups).",
                           target_group_kind_to_string(g->kind), g->spec, (int)pid,
                           error == -EDQUOT ? "its user has no target slot left (MaxTargetsPerUser=)"
                                            : "no target slot is left (MaxTargets=)");
        else
                log_debug_errno(error, "%s: PID %d not profiled: %m", g->spec, (int)pid);
}

/* /proc/PID/stat counts start times in clock ticks, the BPF program in nanoseconds. */
static uint64_t ticks_of_ns(uint64_t ns)
{
        long hz = sysconf(_SC_CLK_TCK);

        return ns / (NSEC_PER_SEC / (uint64_t)(hz > 0 ? hz : 100));
}

/* A fork of a member (or of a process attached with its children): the child is made a member before any of its
 * records comes. */
static Target *member_from_fork(Manager *m, TargetGroup *g, const struct vprof_fork *f)
{
        _cleanup_(target_freep) Target *t = NULL;
        TargetContext context = manager_target_context(m);
        bool followed = !(f->flags & VPROF_FORK_NOT_FOLLOWED);
        pid_t pid = (pid_t)f->tgid;
        Target *old;
        int r;

        if (!g || m->exiting) { /* detached meanwhile, or a child of a restored target (no group any more) */
                r = -ENOENT;
                goto refuse;
        }
        old = manager_get_target(m, pid);
        if (old && !old->exited) {
                /* Its PID is the child's already, its process gone: its exit is yet to be seen, and takes the
                 * BPF entry (the child's now) with it. Rare: the PIDs wrapped within a drain. */
                followed = false;
                r = -EBUSY;
                goto refuse;
        }
        if (!followed) { /* the BPF targets map was full */
                r = -E2BIG;
                goto refuse;
        }
        r = manager_slots_check(&m->slots, g->owner_uid);
        if (r < 0)
                goto refuse;
        r = target_new_child(&context, pid, ticks_of_ns(f->start_ns), manager_get_target(m, (pid_t)f->parent_tgid),
                             g->flags, &t);
        if (r < 0)
                goto refuse;
        t->owner_uid = g->owner_uid;
        t->attach_uid = g->attach_uid;
        /* An exited one of that PID gives way: a PID is one target. */
        if (old) {
                log_debug("Detached the exited target %d (%s): its PID is a new child's of %s.", (int)pid,
                          old->info.comm, g->spec);
                (void)manager_remove_target(m, old);
        }
        r = manager_add_target(m, t, g);
        if (r < 0)
                goto refuse;
        /* Gone already: its records, in the ring, count; the BPF program keeps no more. */
        if (t->exited && m->sampler)
                (void)sampler_remove_target(m->sampler, f->tgid);
        g->members++;
        log_debug("PID %d (%s) joined %s as a child of %u%s.", (int)pid, t->info.comm, g->spec, f->parent_tgid,
                  t->exited ? ", exited already" : "");
        manager_members_changed(m);
        return TAKE_PTR(t);

refuse:
        count_refusal(m, g, pid, r);
        /* The child leaves the BPF maps, which the fork program put it in. */
        if (followed && m->sampler && !manager_get_target(m, pid))
                (void)sampler_remove_target(m->sampler, f->tgid);
        return NULL;
}

/* Whether the process is in g's cgroup or below it now: it was at its sample, but the PID may be another's. */
static int check_in_cgroup(const TargetGroup *g, pid_t pid)
{
        _cleanup_free_ char *path = NULL;
        int r;

        r = proc_cgroup_read(pid, &path);
        if (r < 0)
                return r;
        return cgroup_path_under(path, g->cgroup_path) ? 0 : -EXDEV;
}

static void remember_refused(Manager *m, uint32_t tgid, uint32_t group)
{
        void *value = UINT64_TO_PTR((uint64_t)group << 32 | m->slots_generation);

        if (hashmap_contains(m->refused, UINT64_TO_PTR(tgid))) {
                hashmap_remove(m->refused, UINT64_TO_PTR(tgid));
        } else if (hashmap_size(m->refused) >= REFUSED_MAX)
                hashmap_clear(m->refused);
        (void)hashmap_put(m->refused, UINT64_TO_PTR(tgid), value);
}

/* A record of a process in a cgroup of g, no target: made a member, unless refused already since the last slot
 * freed. */
static Target *member_from_cgroup(Manager *m, TargetGroup *g, uint32_t tgid)
{
        _cleanup_(target_freep) Target *t = NULL;
        TargetContext context = manager_target_context(m);
        void *seen = hashmap_get(m->refused, UINT64_TO_PTR(tgid));
        pid_t ignored;
        int r;

        if (seen && (uint32_t)PTR_TO_UINT64(seen) == m->slots_generation)
                return NULL;
        /* vprofd in the cgroup does not profile itself: its samples count as unclaimed, not as a refusal. */
        if (tgid == (uint32_t)getpid()) {
                remember_refused(m, tgid, g->id);
                return NULL;
        }
        r = manager_slots_check(&m->slots, g->owner_uid);
        if (r >= 0)
                r = target_new(&context, (pid_t)tgid, 0, g->flags, &t, &ignored);
        if (r >= 0)
                r = check_in_cgroup(g, (pid_t)tgid);
        if (r >= 0) {
                t->owner_uid = g->owner_uid;
                t->attach_uid = g->attach_uid;
                r = manager_add_target(m, t, g);
        }
        if (r < 0) {
                /* Once per process, however often it is tried; one that left the cgroup is no refusal. */
                if (!seen && r != -EXDEV)
                        count_refusal(m, g, (pid_t)tgid, r);
                remember_refused(m, tgid, g->id);
                return NULL;
        }
        if (seen)
                hashmap_remove(m->refused, UINT64_TO_PTR(tgid));
        g->members++;
        log_debug("PID %d (%s) joined %s.", (int)tgid, t->info.comm, g->spec);
        manager_members_changed(m);
        return TAKE_PTR(t);
}

/* The drain's on_member (drain.h): the member that process tgid of group (a record's) is now, made if need be;
 * NULL when it is none. */
static Target *member_of_record(void *userdata, uint32_t group, uint32_t tgid, const struct vprof_fork *fork)
{
        Manager *m = userdata;
        TargetGroup *g = hashmap_get(m->groups_by_id, UINT64_TO_PTR((uint64_t)group));

        /* An exec() in a cgroup: as a first sample would, a little sooner. */
        if (fork && (fork->flags & VPROF_FORK_EXEC)) {
                if (!g || !target_group_has_cgroup(g) || m->exiting || manager_get_target(m, (pid_t)tgid))
                        return NULL;
                return member_from_cgroup(m, g, tgid);
        }
        if (fork)
                return member_from_fork(m, g, fork);
        /* A child's records follow its fork's, which decided. */
        if (!g || g->kind == TARGET_GROUP_CHILDREN || m->exiting)
                return NULL;
        return member_from_cgroup(m, g, tgid);
}

/* A unit started again: its cgroup, new at the same path, followed instead of the one that went; its processes
 * taken in. */
static void follow_new_cgroup(Manager *m, TargetGroup *g, const char *path)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *copy = NULL;
        const char *mount;
        TargetGroup *other;
        uint64_t id;
        size_t n;
        int r;

        r = cgroup_path_check(path) < 0 || strcmp(path, "/") == 0 ? -EINVAL : cgroup_mount(m, &mount);
        if (r >= 0)
                r = fd = cgroup_open(mount, path);
        if (r >= 0)
                r = cgroup_fd_id(fd, &id);
        if (r < 0) {
                log_warning_errno(r, "Unit %s has the cgroup %s now, which cannot be followed: %m", g->spec, path);
                return;
        }
        if (id == g->cgroup_id)
                return; /* another of its properties changed */
        HASHMAP_FOREACH(other, m->groups)
                if (other != g && target_group_has_cgroup(other) && other->cgroup_id == id) {
                        log_warning("Unit %s has the cgroup %s now, attached as %s already: not followed.", g->spec,
                                    path, other->spec);
                        return;
                }
        copy = strdup(path);
        if (!copy) {
                log_warning_errno(-ENOMEM, "Out of memory: unit %s not followed: %m", g->spec);
                return;
        }
        if (g->cgroup_id && m->sampler)
                (void)sampler_remove_cgroup(m->sampler, g->cgroup_id, g->cgroup_level);
        g->cgroup_id = 0;
        r = m->sampler ? sampler_add_cgroup(m->sampler, id, cgroup_path_level(path), g->id) : 0;
        if (r < 0) {
                log_warning_errno(r, "Failed to follow the new cgroup of unit %s: %m", g->spec);
                return;
        }
        free(g->cgroup_path);
        g->cgroup_path = TAKE_PTR(copy);
        g->cgroup_id = id;
        g->cgroup_level = cgroup_path_level(path);
        n = take_in_processes(m, g, fd);
        log_info("Unit %s started: following its cgroup %s (id %" PRIu64 ", %zu processes).", g->spec, path, id, n);
        manager_members_changed(m);
}

void manager_unit_changed(UnitLookup *l, UnitLookupResult result, const char *cgroup, const char *message,
                          void *userdata)
{
        Manager *m = userdata;
        TargetGroup *g = manager_get_group(m, unit_lookup_unit(l));

        if (!g || g->unit != l || m->exiting)
                return;
        switch (result) {
        case UNIT_LOOKUP_OK:
                follow_new_cgroup(m, g, cgroup);
                break;
        case UNIT_LOOKUP_NO_CGROUP:
                /* Stopped: its cgroup goes, its members stay (exited). */
                if (g->cgroup_id == 0)
                        break;
                if (m->sampler)
                        (void)sampler_remove_cgroup(m->sampler, g->cgroup_id, g->cgroup_level);
                g->cgroup_id = 0;
                log_info("Unit %s stopped: its processes' tables stay; it is followed again when it starts.",
                         g->spec);
                manager_members_changed(m);
                break;
        default:
                log_debug("Unit %s: %s", g->spec, message ?: "no answer from systemd");
                break;
        }
}

void manager_groups_setup(Manager *m)
{
        m->drain.on_member = member_of_record;
        m->drain.member_userdata = m;
}
