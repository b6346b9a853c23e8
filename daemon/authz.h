/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>

#include "authz-ptrace.h"
#include "hashmap.h"

/* The one place that decides who may do what. Root may do everything; any other caller may attach to, query,
 * reset and detach a process only if it could ptrace it: the process's real, effective and saved UIDs are all
 * the caller's and it is dumpable (not set-ID, not marked non-dumpable). A member of the readers' group
 * (AUTHZ_READERS_GROUP) may read every target, as root would, and change none. Anything else is put to polkit
 * (authz-polkit.h). The method handlers ask through authz_pid() and authz_target(), which apply these rules to
 * the PID a call names; their errors are the standard org.freedesktop.DBus.Error.InvalidArgs and AccessDenied
 * and the domain's NotAttached. */

/* The system group whose members may read every target's tables and change none, as systemd-journal's members
 * read every journal: what a scraper such as vprof-exporter joins, without being root or polkit's question. */
#define AUTHZ_READERS_GROUP "vprof"

/* What a call does to the targets it names: reads them (every Get* and List* method), or changes them (Attach,
 * Detach, Reset). The readers' group is granted reading only. */
typedef enum AuthzAccess {
        AUTHZ_READ,
        AUTHZ_CHANGE,
} AuthzAccess;

typedef struct Target Target;
typedef struct TargetGroup TargetGroup;

/* What the rules keep between calls; one in the Manager. authz_init() before the first call, authz_done() before
 * the bus goes. */
typedef struct Authz {
        Hashmap *polkit_registry; /* calls waiting for polkit's answer */
        /* The readers' group as last looked up: its GID, -1 when there is none, -2 before the first look-up. */
        int64_t readers_gid;
} Authz;

void authz_init(Authz *a);
/* Drops the calls still waiting for polkit, unanswered (the daemon is going). */
void authz_done(Authz *a);
/* Whether some call waits for polkit's answer. */
bool authz_pending(const Authz *a);

/* Who asks for a target: the caller's effective UID, and whether polkit allowed what the local rules refused.
 * Such a caller acts as root would (the target's attach_uid is 0), but the target still counts as the
 * caller's (manager-slots.h). */
typedef struct AuthzCaller {
        uid_t uid;
        bool polkit_allowed;
        bool reader; /* in the readers' group, on a call that reads: sees every target, as root */
        bool delegated; /* a call on VPROF_BUS_USER_PATH/UID: uid is UID's, never polkit's question */
} AuthzCaller;

/* A call on VPROF_BUS_USER_PATH "/UID" reads on behalf of UID: its sender must be root or a reader, and is then
 * judged as UID would be (root and the readers' group's members by the user database read every target, anyone
 * else the processes it could trace), reading only, never asking polkit, which would see the sender's process
 * and not UID's. So a reader that serves other users (vprof-exporter) hands each only what vprofd would hand
 * them, and never more than the sender itself may read. 1 with *ret set on such a path; 0 on any other;
 * -EINVAL on a path under VPROF_BUS_USER_PATH that names no UID. */
int authz_delegated_uid(const char *path, uid_t *ret);

/* The caller's effective UID from the bus credentials; refuses credentials that sd-bus only guessed from
 * /proc (augmented), which a caller could race. AccessDenied in error on failure. */
int authz_caller_uid(sd_bus_message *msg, uid_t *ret, sd_bus_error *error);

/* Looks the readers' group up again (a group made after the start counts from the next call), logging when it
 * appears, goes or changes its GID. vprofd calls it at the start; authz_caller() on every read by a non-root
 * caller. */
void authz_readers_refresh(Authz *a);

/* The caller of msg: its effective UID (authz_caller_uid()) and, for access AUTHZ_READ by a caller other than
 * root, whether the readers' group is among its supplementary groups. 0 with *ret set; negative with
 * AccessDenied in error. */
int authz_caller(Authz *a, sd_bus_message *msg, AuthzAccess access, AuthzCaller *ret, sd_bus_error *error);

/* Whether caller may see and act on t by the local rules, with t's credentials read afresh. */
bool authz_may_see(Target *t, const AuthzCaller *caller);

/* For a caller the local rules refuse: polkit_verify_async() on profiling pid. Only authz_pid() and a process
 * that changed under an attach call it. Returns as polkit_verify_async(). */
int authz_verify_polkit(Authz *a, sd_bus_message *msg, uint32_t pid, sd_bus_error *error);

/* Whether the caller may know about pid and act on it: the one rule, written out at its definition. t: the
 * target attached at pid (manager_get_target()) or NULL; the caller looks it up, authz only judges it. 1 with
 * *ret_caller set, and *ret_target t, or NULL when pid is not attached or the caller may not learn that it is;
 * 0 when polkit was asked, and the method handler must return 1 and leave the call unanswered until it runs
 * again; negative with InvalidArgs or AccessDenied in error. */
int authz_pid(Authz *a, sd_bus_message *msg, uint32_t pid, Target *t, AuthzAccess access,
              AuthzCaller *ret_caller, Target **ret_target, sd_bus_error *error);

/* The attached target t at pid (NULL: none attached), if the caller may see it (authz_pid()). 1 with *ret set
 * (and *ret_caller, unless NULL); 0 when polkit was asked, as authz_pid(); negative with InvalidArgs,
 * NotAttached or AccessDenied in error. */
int authz_target(Authz *a, sd_bus_message *msg, uint32_t pid, Target *t, AuthzAccess access,
                 AuthzCaller *ret_caller, Target **ret, sd_bus_error *error);

/* Whether the caller may attach the unit or cgroup spec: root, or a caller polkit allows the action
 * org.vprof.Profiler1.attach-service (authz-polkit.h). A process attached with its children needs what attaching
 * the process needs (authz_pid()): its children are its own. Returns as authz_pid(). */
int authz_attach_group(Authz *a, sd_bus_message *msg, const char *spec, AuthzCaller *ret_caller,
                       sd_bus_error *error);

/* Whether caller may see and act on the group g (target-group.h): root, the user whose slots its members take,
 * or a reader (to read). A group is attached only by root or by a caller polkit allowed, so no other local rule
 * lets anyone else in. ListGroups filters by it. */
bool authz_may_see_group(const TargetGroup *g, const AuthzCaller *caller);
/* The same rule for a call: 1 with *ret_caller set (unless NULL); negative with AccessDenied in error. */
int authz_group(Authz *a, sd_bus_message *msg, const TargetGroup *g, AuthzAccess access, AuthzCaller *ret_caller,
                sd_bus_error *error);
