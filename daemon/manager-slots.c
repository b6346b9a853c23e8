/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>

#include "log.h"
#include "manager-slots.h"
#include "time-util.h"

#define ANY_OWNER ((uid_t)-1)

/* Root has no limit but MaxTargets=. */
static bool has_user_limit(Manager *m, uid_t owner)
{
        return owner != 0 && m->max_targets_per_user > 0;
}

int manager_slots_check(Manager *m, uid_t owner)
{
        unsigned running = 0, owner_running = 0;
        Target *t;

        HASHMAP_FOREACH(t, m->targets) {
                if (t->exited)
                        continue;
                running++;
                if (t->owner_uid == owner)
                        owner_running++;
        }
        /* The user's own limit first: when both are full, that is the one the user can do something about. */
        if (has_user_limit(m, owner) && owner_running >= m->max_targets_per_user)
                return -EDQUOT;
        if (running >= m->config.max_targets)
                return -E2BIG;
        return 0;
}

static unsigned count_owned(Manager *m, uid_t owner)
{
        unsigned n = 0;
        Target *t;

        HASHMAP_FOREACH(t, m->targets)
                if (t->owner_uid == owner)
                        n++;
        return n;
}

/* The exited target of owner (ANY_OWNER: of anyone) that exited longest ago, the PID deciding between equal
 * times; NULL when there is none. */
static Target *oldest_exited(Manager *m, uid_t owner)
{
        Target *t, *oldest = NULL;

        HASHMAP_FOREACH(t, m->targets) {
                if (!t->exited || (owner != ANY_OWNER && t->owner_uid != owner))
                        continue;
                if (!oldest || t->exit_usec < oldest->exit_usec ||
                    (t->exit_usec == oldest->exit_usec && t->pid < oldest->pid))
                        oldest = t;
        }
        return oldest;
}

static uint64_t now_realtime(Manager *m)
{
        uint64_t now = 0;

        /* Before the loop runs (a restore), the current time. */
        (void)sd_event_now(m->event, CLOCK_REALTIME, &now);
        return now;
}

static uint64_t seconds_since(uint64_t now, uint64_t then)
{
        return now > then ? (now - then) / USEC_PER_SEC : 0;
}

static void evict(Manager *m, Target *victim, const Target *newcomer, TargetGroup *group, const char *setting,
                  uint32_t limit)
{
        /* Logged once per cause: a target attached by a call (which the log says too), or a group's first. */
        if (!group || ++group->evicted == 1)
                log_info("Detached the exited target %d (%s) of UID %u, which exited %" PRIu64 " s ago, to make "
                         "room for PID %d of UID %u (%s=%" PRIu32 ")%s%s%s.", (int)victim->pid, victim->info.comm,
                         (unsigned)victim->owner_uid, seconds_since(now_realtime(m), victim->exit_usec),
                         (int)newcomer->pid, (unsigned)newcomer->owner_uid, setting, limit,
                         group ? "; further evictions for the members of " : "", group ? group->spec : "",
                         group ? " are counted (ListGroups)" : "");
        else
                log_debug("Detached the exited target %d (%s) to make room for PID %d of %s (%s=%" PRIu32 ").",
                          (int)victim->pid, victim->info.comm, (int)newcomer->pid, group->spec, setting, limit);
        (void)manager_remove_target(m, victim); /* exited: out of the sampler already, nothing can fail */
}

void manager_slots_make_room(Manager *m, const Target *newcomer, TargetGroup *group)
{
        uid_t owner = newcomer->owner_uid;
        bool evicted = false;
        Target *victim;

        /* While, not if: a limit lowered across a restart can leave a user above it. */
        while (has_user_limit(m, owner) && count_owned(m, owner) >= m->max_targets_per_user &&
               (victim = oldest_exited(m, owner))) {
                evict(m, victim, newcomer, group, "MaxTargetsPerUser", m->max_targets_per_user);
                evicted = true;
        }
        while (hashmap_size(m->targets) >= m->config.max_targets && (victim = oldest_exited(m, ANY_OWNER))) {
                evict(m, victim, newcomer, group, "MaxTargets", m->config.max_targets);
                evicted = true;
        }
        if (evicted)
                manager_slots_update_retention(m);
}

bool manager_slots_expired(Manager *m, const Target *t)
{
        return t->exited && m->exited_retention_usec > 0 &&
               t->exit_usec + m->exited_retention_usec <= now_realtime(m);
}

static int on_retention_timer(sd_event_source *s _unused_, uint64_t usec _unused_, void *userdata)
{
        Manager *m = userdata;
        _cleanup_free_ Target **expired = calloc(MAX(hashmap_size(m->targets), (size_t)1), sizeof(Target *));
        uint64_t now = now_realtime(m);
        size_t n = 0;
        Target *t;

        if (!expired) {
                log_warning_errno(-ENOMEM, "Out of memory: exited targets stay past their retention time for now.");
                return 0;
        }
        /* Collected first: the map changes as they go. */
        HASHMAP_FOREACH(t, m->targets)
                if (manager_slots_expired(m, t))
                        expired[n++] = t;
        for (size_t i = 0; i < n; i++) {
                TargetGroup *g = expired[i]->group;

                /* A group's members at debug level, counted in the group: their exits were, too, and thousands
                 * of them would fill the log; the group's detach sums them up. */
                if (g)
                        g->expired++;
                log_full_errno(g ? LOG_DEBUG : LOG_INFO, 0,
                               "Detached the exited target %d (%s) of UID %u: it exited %" PRIu64
                               " s ago (ExitedTargetRetentionSec=%" PRIu64 ").", (int)expired[i]->pid,
                               expired[i]->info.comm, (unsigned)expired[i]->owner_uid,
                               seconds_since(now, expired[i]->exit_usec), m->exited_retention_usec / USEC_PER_SEC);
                (void)manager_remove_target(m, expired[i]);
        }
        manager_targets_changed(m);
        return 0;
}

void manager_slots_update_retention(Manager *m)
{
        Target *oldest;
        int r;

        if (!m->retention_timer)
                return;
        oldest = oldest_exited(m, ANY_OWNER);
        if (!oldest)
                r = sd_event_source_set_enabled(m->retention_timer, SD_EVENT_OFF);
        else {
                r = sd_event_source_set_time(m->retention_timer, oldest->exit_usec + m->exited_retention_usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->retention_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to set the retention timer of exited targets: %m");
}

int manager_slots_enable_retention(Manager *m, uint64_t usec)
{
        int r;

        if (usec == 0)
                return -EINVAL;
        m->exited_retention_usec = usec;
        /* The wall clock, as the exit times outlive the daemon; to the second is close enough. */
        r = sd_event_add_time(m->event, &m->retention_timer, CLOCK_REALTIME, 0, USEC_PER_SEC, on_retention_timer, m);
        if (r < 0)
                return r;
        manager_slots_update_retention(m);
        return 0;
}
