/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "manager-attach.h"

/* What callers ask of single targets: above the manager's targets (manager.h), which know nothing of them. */

const char *manager_caller_text(AuthzCaller caller, char buf[static 64])
{
        snprintf(buf, 64, "for UID %u%s", (unsigned)caller.uid, caller.polkit_allowed ? ", allowed by polkit" : "");
        return buf;
}

int manager_attach(Manager *m, pid_t pid, AuthzCaller caller, uint64_t flags, Target **ret, pid_t *ret_tgid)
{
        return manager_attach_started(m, pid, UINT64_MAX, caller, flags, ret, ret_tgid);
}

int manager_attach_in_group(Manager *m, pid_t pid, uint64_t start_time, AuthzCaller caller, uint64_t flags,
                            TargetGroup *g, Target **ret, pid_t *ret_tgid)
{
        _cleanup_(target_freep) Target *t = NULL;
        TargetContext context = manager_target_context(m);
        char who[64];
        int r;

        /* The bus name is going: the target would be lost with the daemon. */
        if (m->exiting)
                return -ESHUTDOWN;
        /* Before anything is opened; exited targets give way only once the new one is sure to come. */
        r = manager_slots_check(&m->slots, caller.uid);
        if (r < 0)
                return r;
        /* Polkit allowed what the local rules refused: attach as root would. */
        r = target_new(&context, pid, caller.polkit_allowed ? 0 : caller.uid, flags, &t, ret_tgid);
        if (r < 0)
                return r;
        t->owner_uid = caller.uid;
        /* Checked on the pinned process, before anything samples it. */
        if (start_time != UINT64_MAX && t->info.start_time != start_time)
                return -ESTALE;
        r = manager_add_target(m, t, g);
        if (r < 0)
                return r;
        log_info("Attached to %d (%s) %s%s%s.", (int)pid, t->info.comm, manager_caller_text(caller, who),
                 flags & VPROF_TARGET_OFF_CPU ? ", off-CPU time included" : "",
                 flags & VPROF_TARGET_CHILDREN ? ", with the processes it forks" : "");
        *ret = TAKE_PTR(t);
        /* A group's first member is saved as its others are, with the next snapshot: a save now would come in the
         * middle of the forks it may be about to make. */
        if (g)
                manager_members_changed(m);
        else
                manager_targets_changed(m);
        return 0;
}

int manager_attach_started(Manager *m, pid_t pid, uint64_t start_time, AuthzCaller caller, uint64_t flags,
                           Target **ret, pid_t *ret_tgid)
{
        /* A process alone: its children are followed only in a group (manager-groups.h), which a restore of
         * saved tables does not bring back. */
        return manager_attach_in_group(m, pid, start_time, caller, flags & ~(uint64_t)VPROF_TARGET_CHILDREN, NULL,
                                       ret, ret_tgid);
}

int manager_detach(Manager *m, pid_t pid, AuthzCaller caller)
{
        char comm[sizeof(((Target *)NULL)->info.comm)], who[64];
        Target *t;
        int r;

        t = hashmap_get(m->targets, UINT64_TO_PTR((uint64_t)pid));
        if (!t)
                return -ENOENT;
        memcpy(comm, t->info.comm, sizeof(comm));
        r = manager_remove_target(m, t);
        if (r < 0)
                return r;
        log_info("Detached from %d (%s) %s.", (int)pid, comm, manager_caller_text(caller, who));
        manager_targets_changed(m);
        return 0;
}

int manager_reset(Manager *m, Target *t, AuthzCaller caller)
{
        TargetContext context = manager_target_context(m);
        char who[64];
        int r;

        r = target_reset(t, &context);
        if (r < 0)
                return r;
        if (m->observer.target_reset)
                m->observer.target_reset(m->observer.userdata, t);
        log_info("Reset the tables of %d (%s) %s.", (int)t->pid, t->info.comm, manager_caller_text(caller, who));
        return 0;
}
