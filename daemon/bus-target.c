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
                return sd_bus_error_setf(error, VPROF_ERROR_INVALID_ARGUMENT,
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

/* Whether caller may trace the process that has pid now, by the local rules: not when there is none, or when
 * vprofd cannot read it. */
static bool caller_may_trace_pid(uid_t caller, uint32_t pid)
{
        ProcInfo info;

        if (caller == 0)
                return true;
        return proc_info_read((pid_t)pid, &info) >= 0 && authz_may_profile(caller, &info);
}

/* The one rule for a PID that a caller names, in Attach and in every method that reads, resets or detaches a
 * target. The caller learns whether the PID is attached, and anything about it, only if it may trace it:
 *  - root may trace every PID;
 *  - another caller may trace an attached PID when the local rules (authz.h) allow it on the target's
 *    process (its credentials read afresh; an exited target's as they were last), and a PID that is not
 *    attached when they allow it on the process that has that PID now; a PID of no process, or of one vprofd
 *    cannot read, is no process the caller may trace;
 *  - any other PID goes to polkit, attached or not: when polkit allows it, the caller acts as root would.
 * So a caller gets, for a PID it may not trace, the same AccessDenied after the same question to polkit
 * whether it names a target, a process that is not one, or no process at all: the answers never tell which
 * processes of others are profiled. */
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
        if (t ? !bus_caller_may_see(t, caller.uid) : !caller_may_trace_pid(caller.uid, pid)) {
                r = bus_verify_profile_access(m, msg, pid, error);
                if (r <= 0)
                        return r;
                caller.polkit_allowed = true;
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
                return sd_bus_error_setf(error, VPROF_ERROR_INVALID_ARGUMENT,
                                         "Unknown sort key '%s': expected elapsed-inclusive, elapsed-exclusive, "
                                         "application-inclusive or application-exclusive",
                                         quote_prefix(sort_name, quoted));
        if (!values && (sort < 0 || profile_sort_is_values(sort)))
                return sd_bus_error_setf(error, VPROF_ERROR_INVALID_ARGUMENT,
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
