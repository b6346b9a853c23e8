/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "authz.h"
#include "bus-groups.h"
#include "bus-names.h"
#include "bus-reply.h"
#include "log.h"
#include "manager.h"
#include "manager-groups.h"
#include "quote.h"
#include "systemd-unit.h"

/* An Attach of a unit, waiting for systemd to name its cgroup. */
typedef struct PendingAttach {
        Manager *manager;
        sd_bus_message *call;
        UnitLookup *lookup;
        AuthzCaller caller;
        uint64_t flags;
        char *unit;
} PendingAttach;

static PendingAttach *pending_attach_free(PendingAttach *p)
{
        if (!p)
                return NULL;
        unit_lookup_free(p->lookup);
        sd_bus_message_unref(p->call);
        free(p->unit);
        free(p);
        return NULL;
}

void bus_groups_done(Manager *m)
{
        PendingAttach *p;

        HASHMAP_FOREACH(p, m->pending_attaches)
                pending_attach_free(p);
        m->pending_attaches = hashmap_free(m->pending_attaches);
}

/* manager_attach_cgroup()'s errors as the call's. spec: as the caller named it; path: the cgroup. */
static int attach_error(Manager *m, int r, const char *spec, const char *path, const TargetGroup *other,
                        sd_bus_error *error)
{
        char quoted[QUOTE_SIZE], quoted_path[QUOTE_SIZE];

        quote_prefix(spec, quoted);
        quote_prefix(path, quoted_path);
        switch (r) {
        case -EEXIST:
                return sd_bus_error_setf(error, VPROF_ERROR_ALREADY_ATTACHED, "%s is already attached", quoted);
        case -EADDRINUSE:
                return sd_bus_error_setf(error, VPROF_ERROR_ALREADY_ATTACHED,
                                         "The cgroup of %s is already attached, as %s", quoted,
                                         other ? quote_prefix(other->spec, quoted_path) : "another group");
        case -EINVAL:
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Cannot attach %s: the root cgroup holds every process; attach the cgroups "
                                         "below it", quoted);
        case -ENOMEDIUM:
                return sd_bus_error_setf(error, VPROF_ERROR_NO_SUCH_CGROUP,
                                         "Cannot attach %s: no cgroup2 file system is mounted", quoted);
        case -ENOENT:
        case -ENOTDIR:
        case -ELOOP:
                return sd_bus_error_setf(error, VPROF_ERROR_NO_SUCH_CGROUP, "Cannot attach %s: no cgroup %s", quoted,
                                         quoted_path);
        case -E2BIG:
                return sd_bus_error_setf(error, VPROF_ERROR_LIMIT_EXCEEDED,
                                         "Cannot attach %s: %u cgroups are attached, the most vprofd takes", quoted,
                                         (unsigned)VPROF_MAX_CGROUPS);
        case -ERANGE:
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Cannot attach %s: the cgroup is nested deeper than %u levels", quoted,
                                         (unsigned)VPROF_MAX_CGROUP_LEVEL);
        case -EOPNOTSUPP:
                return sd_bus_error_setf(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                         "Cannot attach %s: vprofd could not find the level of its cgroup "
                                         "namespace in the hierarchy (see its log)", quoted);
        case -ESHUTDOWN:
                return sd_bus_error_setf(error, SD_BUS_ERROR_NO_SERVER,
                                         "vprofd is exiting after being idle; call again to start it anew");
        default:
                (void)m;
                return sd_bus_error_set_errnof(error, r, "Cannot attach %s: %s", quoted, strerror(-r));
        }
}

static void on_unit_cgroup(UnitLookup *l _unused_, UnitLookupResult result, const char *cgroup, const char *message,
                           void *userdata)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        PendingAttach *p = userdata;
        Manager *m = p->manager;
        TargetGroup *g, *other = NULL;
        char quoted[QUOTE_SIZE], quoted_message[QUOTE_SIZE * 2];
        int r;

        quote_prefix(p->unit, quoted);
        /* systemd's messages are its own, but they quote the name sent: keep them short too. */
        snprintf(quoted_message, sizeof(quoted_message), "%s", message ?: "");
        switch (result) {
        case UNIT_LOOKUP_OK:
                r = manager_attach_cgroup(m, p->unit, TARGET_GROUP_UNIT, cgroup, p->caller, p->flags, &g, &other);
                if (r < 0) {
                        (void)attach_error(m, r, p->unit, cgroup, other, &error);
                        break;
                }
                /* From now on the unit is followed: restarted, it has a new cgroup. */
                g->unit = TAKE_PTR(p->lookup);
                r = unit_lookup_follow(g->unit, manager_unit_changed, m);
                if (r < 0)
                        log_warning_errno(r, "Failed to follow unit %s: a restart of it will not be followed: %m",
                                          quoted);
                break;
        case UNIT_LOOKUP_NO_SYSTEMD:
                sd_bus_error_setf(&error, VPROF_ERROR_NO_SYSTEMD,
                                  "Cannot attach %s: systemd is not running (nothing owns org.freedesktop.systemd1 "
                                  "on the system bus)", quoted);
                break;
        case UNIT_LOOKUP_NO_SUCH_UNIT:
                sd_bus_error_setf(&error, VPROF_ERROR_NO_SUCH_UNIT,
                                  "Cannot attach %s: systemd has no such unit loaded", quoted);
                break;
        case UNIT_LOOKUP_NO_CGROUP:
                sd_bus_error_setf(&error, VPROF_ERROR_NO_SUCH_UNIT,
                                  "Cannot attach %s: the unit is not running (it has no cgroup)", quoted);
                break;
        default:
                sd_bus_error_setf(&error, SD_BUS_ERROR_FAILED, "Cannot attach %s: systemd: %s", quoted,
                                  quoted_message);
                break;
        }
        if (sd_bus_error_is_set(&error))
                r = sd_bus_reply_method_error(p->call, &error);
        else
                r = sd_bus_reply_method_return(p->call, NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to answer the Attach of %s: %m", quoted);
        hashmap_remove(m->pending_attaches, p);
        pending_attach_free(p);
}

int bus_attach_group(Manager *m, sd_bus_message *msg, const TargetSpec *spec, const char *spec_text,
                     uint64_t flags, sd_bus_error *error)
{
        PendingAttach *p;
        TargetGroup *g, *other = NULL;
        char quoted[QUOTE_SIZE];
        AuthzCaller caller;
        int r;

        r = authz_attach_group(&m->authz, msg, spec_text, &caller, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        if (manager_get_group(m, spec_text))
                return sd_bus_error_setf(error, VPROF_ERROR_ALREADY_ATTACHED, "%s is already attached",
                                         quote_prefix(spec_text, quoted));
        if (spec->kind == TARGET_SPEC_CGROUP) {
                r = manager_attach_cgroup(m, spec_text, TARGET_GROUP_CGROUP, spec->name, caller, flags, &g, &other);
                if (r < 0)
                        return attach_error(m, r, spec_text, spec->name, other, error);
                return sd_bus_reply_method_return(msg, NULL);
        }

        /* A unit: its cgroup from systemd, without blocking; answered then. */
        if (!m->bus)
                return sd_bus_error_setf(error, VPROF_ERROR_NO_SYSTEMD, "Cannot attach %s: no system bus to ask "
                                         "systemd on", quote_prefix(spec_text, quoted));
        if (!m->pending_attaches) {
                m->pending_attaches = hashmap_new(&uint64_hash_ops);
                if (!m->pending_attaches)
                        return -ENOMEM;
        }
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        *p = (PendingAttach){ .manager = m, .call = sd_bus_message_ref(msg), .caller = caller, .flags = flags };
        p->unit = strdup(spec_text);
        if (!p->unit) {
                pending_attach_free(p);
                return -ENOMEM;
        }
        r = hashmap_put(m->pending_attaches, p, p);
        if (r >= 0)
                r = unit_lookup_start(m->bus, spec_text, on_unit_cgroup, p, &p->lookup);
        if (r < 0) {
                hashmap_remove(m->pending_attaches, p);
                pending_attach_free(p);
                return sd_bus_error_set_errnof(error, r, "Cannot ask systemd for %s: %s",
                                               quote_prefix(spec_text, quoted), strerror(-r));
        }
        return 1;
}

static int append_group(Manager *m, sd_bus_message *reply, const TargetGroup *g)
{
        unsigned running, exited;
        int r;

        manager_group_count(m, g, &running, &exited);
        r = sd_bus_message_open_container(reply, 'r', "sa{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "s", g->spec);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "a{sv}", 13,
                                  "kind", "s", target_group_kind_to_string(g->kind),
                                  "cgroup", "s", g->cgroup_path ?: "",
                                  "cgroup_id", "t", g->cgroup_id,
                                  "pid", "u", (uint32_t)g->root_pid,
                                  "processes", "u", running,
                                  "exited", "u", exited,
                                  "members", "t", g->members,
                                  "refused", "t", g->refused,
                                  "evicted", "t", g->evicted,
                                  "expired", "t", g->expired,
                                  "attached_usec", "t", g->attach_usec,
                                  /* As attached: a cgroup's members follow their children, as a matter of
                                   * course. */
                                  "flags", "t",
                                  g->flags & (target_group_has_cgroup(g) ? VPROF_ATTACH_OFF_CPU
                                                                         : VPROF_ATTACH_FLAGS_ALL),
                                  "uid", "u", (uint32_t)g->owner_uid);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

int method_list_groups(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        TargetGroup *g;
        AuthzCaller caller;
        int r;

        r = authz_caller(&m->authz, msg, AUTHZ_READ, &caller, error);
        if (r < 0)
                return r;
        /* The members that the records waiting in the ring would make, counted. */
        manager_sync(m);
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(sa{sv})");
        if (r < 0)
                return r;
        HASHMAP_FOREACH(g, m->groups) {
                if (!authz_may_see_group(g, &caller))
                        continue;
                r = append_group(m, reply, g);
                if (r < 0)
                        return r;
        }
        return bus_reply_close_and_send(reply);
}
