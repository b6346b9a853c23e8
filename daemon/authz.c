/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "authz-polkit.h"
#include "authz.h"
#include "bus-names.h"
#include "macros.h"
#include "manager.h"

/* No kernel hands out a larger PID (PID_MAX_LIMIT). */
#define PID_MAX UINT32_C(4194304)

bool authz_may_profile(uid_t caller, const ProcInfo *target)
{
        if (caller == 0)
                return true;
        return target->uid[0] == caller && target->uid[1] == caller && target->uid[2] == caller &&
               target->dumpable;
}

int authz_caller_uid(sd_bus_message *msg, uid_t *ret, sd_bus_error *error)
{
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t uid;
        int r;

        r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID, &creds);
        if (r < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Access denied: cannot determine the caller's user: %s", strerror(-r));
        if (sd_bus_creds_get_augmented_mask(creds) & SD_BUS_CREDS_EUID)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Access denied: the caller's user is not vouched for by the bus");
        r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Access denied: cannot determine the caller's user: %s", strerror(-r));
        *ret = uid;
        return 0;
}

bool authz_may_see(Target *t, uid_t caller)
{
        /* A running target's credentials are read again: a process that exec()ed a set-ID program since the
         * attach is no longer its former owner's to read. */
        target_refresh_credentials(t);
        return authz_may_profile(caller, &t->info);
}

int authz_verify_polkit(Manager *m, sd_bus_message *msg, uint32_t pid, sd_bus_error *error)
{
        char pid_text[16];
        const char *details[] = { "pid", pid_text, NULL, NULL };

        snprintf(pid_text, sizeof(pid_text), "%u", pid);
        return polkit_verify_async(&m->polkit_registry, msg, VPROF_POLKIT_ACTION_PROFILE, details,
                                   "not a process you could trace (another user's, set-ID or not dumpable)", error);
}

int authz_attach_group(Manager *m, sd_bus_message *msg, const char *spec, AuthzCaller *ret_caller,
                       sd_bus_error *error)
{
        const char *details[] = { "target", spec, NULL, NULL };
        AuthzCaller caller = {};
        int r;

        r = authz_caller_uid(msg, &caller.uid, error);
        if (r < 0)
                return r;
        if (caller.uid != 0) {
                /* No local rule: the processes of a unit or a cgroup are anyone's, and those to come unknown. */
                r = polkit_verify_async(&m->polkit_registry, msg, VPROF_POLKIT_ACTION_ATTACH_SERVICE, details,
                                        "attaching a unit or a cgroup is for root", error);
                if (r <= 0)
                        return r;
                caller.polkit_allowed = true;
        }
        *ret_caller = caller;
        return 1;
}

/* Whether a process has pid now, and whether caller may trace it by the local rules (never one vprofd cannot
 * read). */
static bool pid_is_live(uint32_t pid, uid_t caller, bool *ret_traceable)
{
        ProcInfo info;

        if (proc_info_read((pid_t)pid, &info) < 0) {
                *ret_traceable = false;
                return false;
        }
        *ret_traceable = caller == 0 || authz_may_profile(caller, &info);
        return true;
}

/* The one rule for a PID that a caller names, in Attach and in every method that reads, resets or detaches a
 * target. Whether a PID is attached is told only to a caller that may see the target; for anyone else the
 * answer depends only on what /proc tells every user anyway, whether a process has that PID:
 *  - root may act on every PID;
 *  - another caller sees an attached PID when the local rules allow it on the target's process (its
 *    credentials read afresh; an exited target's as they were last);
 *  - a live process it may not trace goes to polkit, attached or not: the same AccessDenied (or, when polkit
 *    allows it, the caller acts as root would) whether root profiles it or nobody does;
 *  - a PID of no process is answered as if nothing were attached there (NoSuchProcess, NotAttached): another
 *    user's exited target with that PID stays invisible, and a mistyped PID gets no polkit dialog. */
int authz_pid(Manager *m, sd_bus_message *msg, uint32_t pid, AuthzCaller *ret_caller, Target **ret_target,
              sd_bus_error *error)
{
        AuthzCaller caller = {};
        Target *t;
        int r;

        if (pid == 0 || pid > PID_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid PID %u: expected 1..%u", pid,
                                         PID_MAX);
        r = authz_caller_uid(msg, &caller.uid, error);
        if (r < 0)
                return r;
        t = manager_get_target(m, (pid_t)pid);
        if (!t || !authz_may_see(t, caller.uid)) {
                bool traceable;

                if (!pid_is_live(pid, caller.uid, &traceable))
                        t = NULL;
                /* A foreign target on a process the caller may trace: only its exited predecessor's, the PID
                 * reused; polkit decides, as for any foreign target. */
                else if (!traceable || t) {
                        r = authz_verify_polkit(m, msg, pid, error);
                        if (r <= 0)
                                return r;
                        caller.polkit_allowed = true;
                }
        }
        *ret_caller = caller;
        *ret_target = t;
        return 1;
}

int authz_target(Manager *m, sd_bus_message *msg, uint32_t pid, AuthzCaller *ret_caller, Target **ret,
                 sd_bus_error *error)
{
        AuthzCaller caller;
        Target *t;
        int r;

        r = authz_pid(m, msg, pid, &caller, &t, error);
        if (r <= 0)
                return r;
        if (!t)
                return sd_bus_error_setf(error, VPROF_ERROR_NOT_ATTACHED, "PID %u is not attached", pid);
        if (ret_caller)
                *ret_caller = caller;
        *ret = t;
        return 1;
}

bool authz_may_see_group(const TargetGroup *g, uid_t caller)
{
        return caller == 0 || caller == g->owner_uid;
}

int authz_group(sd_bus_message *msg, const TargetGroup *g, AuthzCaller *ret_caller, sd_bus_error *error)
{
        AuthzCaller caller = {};
        int r;

        r = authz_caller_uid(msg, &caller.uid, error);
        if (r < 0)
                return r;
        if (!authz_may_see_group(g, caller.uid))
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Access denied: %s is profiled by another user", g->spec);
        if (ret_caller)
                *ret_caller = caller;
        return 1;
}
