/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "authz-polkit.h"
#include "authz.h"
#include "bus-names.h"
#include "log.h"
#include "macros.h"
#include "target-group.h"
#include "target.h"

/* No kernel hands out a larger PID (PID_MAX_LIMIT). */
#define PID_MAX UINT32_C(4194304)

/* The most getgrnam_r() gets for a group's entry: its member list grows with the users in it. */
#define GROUP_BUFFER_MAX ((size_t)1 << 20)
/* The most groups getgrouplist() may give a user: the kernel's NGROUPS_MAX. */
#define USER_GROUPS_MAX 65536

int authz_delegated_uid(const char *path, uid_t *ret)
{
        const size_t prefix = strlen(VPROF_BUS_USER_PATH);
        uint64_t uid = 0;
        const char *p;

        if (!path || strncmp(path, VPROF_BUS_USER_PATH, prefix) != 0)
                return 0;
        if (path[prefix] == '\0')
                return -EINVAL;
        if (path[prefix] != '/')
                return 0;
        p = path + prefix + 1;
        /* Decimal, one spelling per UID (no leading zero), never (uid_t)-1, which names nobody. */
        if (p[0] < '0' || p[0] > '9' || (p[0] == '0' && p[1] != '\0'))
                return -EINVAL;
        for (; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                uid = uid * 10 + (uint64_t)(*p - '0');
                if (uid >= UINT32_MAX)
                        return -EINVAL;
        }
        *ret = (uid_t)uid;
        return 1;
}

void authz_init(Authz *a)
{
        *a = (Authz){ .readers_gid = -2 };
}

void authz_done(Authz *a)
{
        a->polkit_registry = polkit_registry_free(a->polkit_registry);
}

bool authz_pending(const Authz *a)
{
        return hashmap_size(a->polkit_registry) > 0;
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

/* The GID of the readers' group: 0 with *ret set, -ENOENT when there is no such group, another negative errno
 * when the user database could not say. */
static int readers_gid(gid_t *ret)
{
        size_t size = 4096;

        for (;;) {
                _cleanup_free_ char *buf = malloc(size);
                struct group entry, *found = NULL;
                int r;

                if (!buf)
                        return -ENOMEM;
                r = getgrnam_r(AUTHZ_READERS_GROUP, &entry, buf, size, &found);
                if (r == ERANGE && size < GROUP_BUFFER_MAX) {
                        size *= 2;
                        continue;
                }
                if (r != 0)
                        return -r;
                if (!found)
                        return -ENOENT;
                *ret = found->gr_gid;
                return 0;
        }
}

void authz_readers_refresh(Authz *a)
{
        int64_t now = -1;
        gid_t gid = 0;
        int r;

        r = readers_gid(&gid);
        if (r >= 0)
                now = gid;
        else if (r != -ENOENT) {
                /* The user database did not answer: nobody is let in by the group this time, and the next call
                 * asks again. */
                log_debug_errno(r, "Cannot look the group %s up: %m", AUTHZ_READERS_GROUP);
                return;
        }
        if (now == a->readers_gid)
                return;
        if (now >= 0)
                log_info("Group %s (GID %" PRId64 "): its members may read every target's tables, and change none.",
                         AUTHZ_READERS_GROUP, now);
        else
                log_info("No group %s: reading other users' targets by group membership is off.",
                         AUTHZ_READERS_GROUP);
        a->readers_gid = now;
}

/* The caller's groups, as the bus vouches for them: dbus-daemon reads them from the kernel when the caller
 * connects (SO_PEERCRED's GID and SO_PEERGROUPS, the opener's primary and supplementary groups) and hands them
 * out as UnixGroupIDs in GetConnectionCredentials. They are asked for here rather than through
 * sd_bus_query_sender_creds(): libsystemd 252 does not read UnixGroupIDs and would fill the groups from
 * /proc/PID/status (augmented), which the caller could race by exec()ing something else under its PID, the
 * reason authz_caller_uid() refuses an augmented UID. 1 when the readers' group is among them; 0 when it is
 * not, or the bus does not say (a bus without UnixGroupIDs grants nobody by group); negative errno when the bus
 * did not answer. */
static int caller_in_readers(Authz *a, sd_bus_message *msg, uid_t uid)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        bool uid_matches = false, in_group = false;
        unsigned n_entries = 0;
        int r;

        r = sd_bus_call_method(sd_bus_message_get_bus(msg), "org.freedesktop.DBus", "/org/freedesktop/DBus",
                               "org.freedesktop.DBus", "GetConnectionCredentials", NULL, &reply, "s",
                               sd_bus_message_get_sender(msg));
        if (r < 0)
                return r;
        /* Looked up per call, which is cheap: a group made after the daemon started counts at once. */
        authz_readers_refresh(a);
        if (a->readers_gid < 0)
                return 0;
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        /* The spec defines a handful of keys; anything past a few dozen is no dbus-daemon's answer. */
        while (n_entries++ < 64 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *key;

                r = sd_bus_message_read(reply, "s", &key);
                if (r < 0)
                        return r;
                if (strcmp(key, "UnixUserID") == 0) {
                        uint32_t u;

                        r = sd_bus_message_read(reply, "v", "u", &u);
                        if (r < 0)
                                return r;
                        uid_matches = u == uid;
                } else if (strcmp(key, "UnixGroupIDs") == 0) {
                        const uint32_t *gids;
                        size_t size;

                        r = sd_bus_message_enter_container(reply, 'v', "au");
                        if (r < 0)
                                return r;
                        r = sd_bus_message_read_array(reply, 'u', (const void **)&gids, &size);
                        if (r < 0)
                                return r;
                        for (size_t i = 0; i < size / sizeof(uint32_t); i++)
                                if ((int64_t)gids[i] == a->readers_gid)
                                        in_group = true;
                        r = sd_bus_message_exit_container(reply);
                } else
                        r = sd_bus_message_skip(reply, "v");
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        /* The answer must be about the user authz_caller_uid() found for this connection, or it grants nothing. */
        return uid_matches && in_group;
}

/* Whether the user database puts uid in the readers' group, as its primary or a supplementary group: what the
 * bus would vouch for were uid's own process to connect. 1 or 0; negative errno when the database could not
 * say. */
static int uid_in_readers(Authz *a, uid_t uid)
{
        _cleanup_free_ gid_t *groups = NULL;
        _cleanup_free_ char *buf = NULL;
        struct passwd entry, *found = NULL;
        size_t size = 4096;
        int n = 64, r;

        authz_readers_refresh(a);
        if (a->readers_gid < 0)
                return 0;
        for (;;) {
                buf = malloc(size);
                if (!buf)
                        return -ENOMEM;
                r = getpwuid_r(uid, &entry, buf, size, &found);
                if (r == ERANGE && size < GROUP_BUFFER_MAX) {
                        free(buf);
                        buf = NULL;
                        size *= 2;
                        continue;
                }
                if (r != 0)
                        return -r;
                if (!found)
                        return 0; /* a UID of no user has no groups */
                break;
        }
        if ((int64_t)found->pw_gid == a->readers_gid)
                return 1;
        for (;;) {
                int want = n;

                groups = malloc(sizeof(gid_t) * (size_t)n);
                if (!groups)
                        return -ENOMEM;
                if (getgrouplist(found->pw_name, found->pw_gid, groups, &want) >= 0) {
                        n = want;
                        break;
                }
                if (want <= n || want > USER_GROUPS_MAX)
                        return -E2BIG;
                free(groups);
                groups = NULL;
                n = want;
        }
        for (int i = 0; i < n; i++)
                if ((int64_t)groups[i] == a->readers_gid)
                        return 1;
        return 0;
}

/* A call on VPROF_BUS_USER_PATH/uid (authz_delegated_uid()) from sender: reading only, for root or a reader,
 * and then as uid. */
static int delegated_caller(Authz *a, sd_bus_message *msg, uid_t sender, uid_t uid, AuthzAccess access,
                            AuthzCaller *ret, sd_bus_error *error)
{
        AuthzCaller caller = { .uid = uid, .delegated = true };
        int r;

        if (access != AUTHZ_READ)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Access denied: a call on behalf of another user only reads");
        if (sender != 0) {
                r = caller_in_readers(a, msg, sender);
                if (r < 0)
                        log_debug_errno(r, "Cannot read the groups of %s from the bus: %m",
                                        sd_bus_message_get_sender(msg) ?: "?");
                if (r <= 0)
                        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                                 "Access denied: only root and the group %s read on behalf of "
                                                 "another user", AUTHZ_READERS_GROUP);
        }
        if (uid != 0) {
                r = uid_in_readers(a, uid);
                if (r < 0)
                        /* Judged as a user outside the group, the next call asks again. */
                        log_debug_errno(r, "Cannot read the groups of UID %u: %m", (unsigned)uid);
                caller.reader = r > 0;
        }
        *ret = caller;
        return 0;
}

int authz_caller(Authz *a, sd_bus_message *msg, AuthzAccess access, AuthzCaller *ret, sd_bus_error *error)
{
        AuthzCaller caller = {};
        uid_t delegate;
        int r;

        r = authz_caller_uid(msg, &caller.uid, error);
        if (r < 0)
                return r;
        r = authz_delegated_uid(sd_bus_message_get_path(msg), &delegate);
        if (r < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Access denied: the path names no user");
        if (r > 0)
                return delegated_caller(a, msg, caller.uid, delegate, access, ret, error);
        if (access == AUTHZ_READ && caller.uid != 0) {
                r = caller_in_readers(a, msg, caller.uid);
                if (r < 0)
                        /* Refused as a caller outside the group would be, the next call asks again. */
                        log_debug_errno(r, "Cannot read the groups of %s from the bus: %m",
                                        sd_bus_message_get_sender(msg) ?: "?");
                caller.reader = r > 0;
        }
        *ret = caller;
        return 0;
}

bool authz_may_see(Target *t, const AuthzCaller *caller)
{
        /* A running target's credentials are read again: a process that exec()ed a set-ID program since the
         * attach is no longer its former owner's to read. */
        target_refresh_credentials(t);
        return caller->reader || authz_may_profile(caller->uid, &t->info);
}

int authz_verify_polkit(Authz *a, sd_bus_message *msg, uint32_t pid, sd_bus_error *error)
{
        char pid_text[16];
        const char *details[] = { "pid", pid_text, NULL, NULL };
        uid_t delegate;

        /* polkit would judge the sender's process, not the user the call is made for: a delegated call that the
         * local rules refuse is refused. */
        if (authz_delegated_uid(sd_bus_message_get_path(msg), &delegate) != 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Access denied: not a process that user could trace");
        snprintf(pid_text, sizeof(pid_text), "%u", pid);
        return polkit_verify_async(&a->polkit_registry, msg, VPROF_POLKIT_ACTION_PROFILE, details,
                                   "not a process you could trace (another user's, set-ID or not dumpable)", error);
}

int authz_attach_group(Authz *a, sd_bus_message *msg, const char *spec, AuthzCaller *ret_caller,
                       sd_bus_error *error)
{
        const char *details[] = { "target", spec, NULL, NULL };
        AuthzCaller caller = {};
        uid_t delegate;
        int r;

        if (authz_delegated_uid(sd_bus_message_get_path(msg), &delegate) != 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Access denied: a call on behalf of another user only reads");
        r = authz_caller_uid(msg, &caller.uid, error);
        if (r < 0)
                return r;
        if (caller.uid != 0) {
                /* No local rule: the processes of a unit or a cgroup are anyone's, and those to come unknown. */
                r = polkit_verify_async(&a->polkit_registry, msg, VPROF_POLKIT_ACTION_ATTACH_SERVICE, details,
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
 *  - root may act on every PID, and a reader (authz_caller()) read every PID, without polkit;
 *  - another caller sees an attached PID when the local rules allow it on the target's process (its
 *    credentials read afresh; an exited target's as they were last);
 *  - a live process it may not trace goes to polkit, attached or not: the same AccessDenied (or, when polkit
 *    allows it, the caller acts as root would) whether root profiles it or nobody does;
 *  - a PID of no process is answered as if nothing were attached there (NoSuchProcess, NotAttached): another
 *    user's exited target with that PID stays invisible, and a mistyped PID gets no polkit dialog. */
int authz_pid(Authz *a, sd_bus_message *msg, uint32_t pid, Target *t, AuthzAccess access,
              AuthzCaller *ret_caller, Target **ret_target, sd_bus_error *error)
{
        AuthzCaller caller;
        int r;

        if (pid == 0 || pid > PID_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid PID %u: expected 1..%u", pid,
                                         PID_MAX);
        r = authz_caller(a, msg, access, &caller, error);
        if (r < 0)
                return r;
        /* A reader, reading, is told what root would be: the target, or that nothing is attached there. */
        if (!caller.reader && (!t || !authz_may_see(t, &caller))) {
                bool traceable;

                if (!pid_is_live(pid, caller.uid, &traceable))
                        t = NULL;
                /* A foreign target on a process the caller may trace: only its exited predecessor's, the PID
                 * reused; polkit decides, as for any foreign target. */
                else if (!traceable || t) {
                        r = authz_verify_polkit(a, msg, pid, error);
                        if (r <= 0)
                                return r;
                        caller.polkit_allowed = true;
                }
        }
        *ret_caller = caller;
        *ret_target = t;
        return 1;
}

int authz_target(Authz *a, sd_bus_message *msg, uint32_t pid, Target *t, AuthzAccess access,
                 AuthzCaller *ret_caller, Target **ret, sd_bus_error *error)
{
        AuthzCaller caller;
        int r;

        r = authz_pid(a, msg, pid, t, access, &caller, &t, error);
        if (r <= 0)
                return r;
        if (!t)
                return sd_bus_error_setf(error, VPROF_ERROR_NOT_ATTACHED, "PID %u is not attached", pid);
        if (ret_caller)
                *ret_caller = caller;
        *ret = t;
        return 1;
}

bool authz_may_see_group(const TargetGroup *g, const AuthzCaller *caller)
{
        return caller->uid == 0 || caller->uid == g->owner_uid || caller->reader;
}

int authz_group(Authz *a, sd_bus_message *msg, const TargetGroup *g, AuthzAccess access, AuthzCaller *ret_caller,
                sd_bus_error *error)
{
        AuthzCaller caller;
        int r;

        r = authz_caller(a, msg, access, &caller, error);
        if (r < 0)
                return r;
        if (!authz_may_see_group(g, &caller))
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Access denied: %s is profiled by another user", g->spec);
        if (ret_caller)
                *ret_caller = caller;
        return 1;
}
