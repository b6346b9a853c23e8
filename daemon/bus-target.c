/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "authz-polkit.h"
#include "authz.h"
#include "bus-names.h"
#include "bus-target.h"
#include "quote.h"

int bus_check_pid_argument(uint32_t pid, sd_bus_error *error)
{
        if (pid == 0 || pid > PID_MAX_LIMIT)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid PID %u: expected 1..%u", pid, PID_MAX_LIMIT);
        return 0;
}

bool bus_caller_may_see(Target *t, uid_t caller)
{
        /* A running target's credentials are read again: a process that exec()ed a set-ID program since the
         * attach is no longer its former owner's to read. */
        target_refresh_credentials(t);
        return authz_may_profile(caller, &t->info);
}

int bus_verify_profile_access(Manager *m, sd_bus_message *msg, uint32_t pid, sd_bus_error *error)
{
        char pid_text[16];
        const char *details[] = { "pid", pid_text, NULL, NULL };

        snprintf(pid_text, sizeof(pid_text), "%u", pid);
        return polkit_verify_async(&m->polkit_registry, msg, VPROF_POLKIT_ACTION_PROFILE, details, error);
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
 *  - another caller sees an attached PID when the local rules (authz.h) allow it on the target's process (its
 *    credentials read afresh; an exited target's as they were last);
 *  - a live process it may not trace goes to polkit, attached or not: the same AccessDenied (or, when polkit
 *    allows it, the caller acts as root would) whether root profiles it or nobody does;
 *  - a PID of no process is answered as if nothing were attached there (NoSuchProcess, NotAttached): another
 *    user's exited target with that PID stays invisible, and a mistyped PID gets no polkit dialog. */
int bus_authorize_pid(Manager *m, sd_bus_message *msg, uint32_t pid, AuthzCaller *ret_caller, Target **ret_target,
                      sd_bus_error *error)
{
        AuthzCaller caller = {};
        Target *t;
        int r;

        r = bus_check_pid_argument(pid, error);
        if (r < 0)
                return r;
        r = bus_caller_uid(msg, &caller.uid, error);
        if (r < 0)
                return r;
        t = manager_get_target(m, (pid_t)pid);
        if (!t || !bus_caller_may_see(t, caller.uid)) {
                bool traceable;

                if (!pid_is_live(pid, caller.uid, &traceable))
                        t = NULL;
                /* A foreign target on a process the caller may trace: only its exited predecessor's, the PID
                 * reused; polkit decides, as for any foreign target. */
                else if (!traceable || t) {
                        r = bus_verify_profile_access(m, msg, pid, error);
                        if (r <= 0)
                                return r;
                        caller.polkit_allowed = true;
                }
        }
        *ret_caller = caller;
        *ret_target = t;
        return 1;
}

int bus_get_target_for_caller(Manager *m, sd_bus_message *msg, uint32_t pid, AuthzCaller *ret_caller, Target **ret,
                              sd_bus_error *error)
{
        AuthzCaller caller;
        Target *t;
        int r;

        r = bus_authorize_pid(m, msg, pid, &caller, &t, error);
        if (r <= 0)
                return r;
        if (!t)
                return sd_bus_error_setf(error, VPROF_ERROR_NOT_ATTACHED, "PID %u is not attached", pid);
        if (ret_caller)
                *ret_caller = caller;
        *ret = t;
        return 1;
}

int bus_read_target(Manager *m, sd_bus_message *msg, AuthzCaller *ret_caller, Target **ret, sd_bus_error *error)
{
        uint32_t pid;
        int r;

        r = sd_bus_message_read(msg, "u", &pid);
        if (r < 0)
                return r;
        return bus_get_target_for_caller(m, msg, pid, ret_caller, ret, error);
}

int bus_read_target_table(Manager *m, sd_bus_message *msg, profile_table_fn table, ProfileSort sort,
                          Target **ret_target, ProfileRow **ret_rows, size_t *ret_n, sd_bus_error *error)
{
        Target *t = NULL;
        int r;

        r = bus_read_target(m, msg, NULL, &t, error);
        if (r <= 0)
                return r;
        manager_sync(m);
        r = table(t->profile, sort, ret_rows, ret_n);
        if (r < 0)
                return r;
        *ret_target = t;
        return 1;
}

int bus_read_function_table(Manager *m, sd_bus_message *msg, bool values, Target **ret_target,
                            ProfileRow **ret_rows, size_t *ret_n, sd_bus_error *error)
{
        char quoted[QUOTE_SIZE];
        const char *sort_name;
        uint32_t pid, limit;
        ProfileSort sort;
        Target *t = NULL;
        int r;

        r = sd_bus_message_read(msg, "usu", &pid, &sort_name, &limit);
        if (r < 0)
                return r;
        sort = profile_sort_from_string(sort_name);
        if (values && !profile_sort_is_values(sort))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown sort key '%s': expected elapsed-inclusive, elapsed-exclusive, "
                                         "application-inclusive or application-exclusive",
                                         quote_prefix(sort_name, quoted));
        if (!values && (sort < 0 || profile_sort_is_values(sort)))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown sort key '%s': expected inclusive or exclusive",
                                         quote_prefix(sort_name, quoted));
        r = bus_get_target_for_caller(m, msg, pid, NULL, &t, error);
        if (r <= 0)
                return r;
        manager_sync(m);
        r = profile_functions(t->profile, sort, limit, ret_rows, ret_n);
        if (r < 0)
                return r;
        *ret_target = t;
        return 1;
}

int bus_reply_visible_targets(sd_bus_message *msg, Manager *m, const char *element_signature,
                              bus_target_append_fn append, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Target *t;
        uid_t caller;
        int r;

        r = bus_caller_uid(msg, &caller, error);
        if (r < 0)
                return r;
        manager_sync(m);
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', element_signature);
        if (r < 0)
                return r;
        HASHMAP_FOREACH(t, m->targets) {
                if (!bus_caller_may_see(t, caller))
                        continue;
                r = append(reply, t);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
